//! The summary of one timed quantity over a run's frames: median and 95th
//! percentile.

use super::ReportError;
use serde::{Deserialize, Serialize};

/// Median and 95th percentile of a set of samples (microseconds or bytes,
/// as the field holding it says).
///
/// Both are order statistics with linear interpolation between the two
/// nearest ranks (Hyndman and Fan's type 7, the default of numpy and R): the
/// q-quantile of n sorted samples x[0..n] sits at rank h = (n - 1) q, and is
/// x[⌊h⌋] + (h - ⌊h⌋) (x[⌊h⌋ + 1] - x[⌊h⌋]). So the median of an even count
/// is the mean of the two middle samples, and one sample is its own median
/// and p95.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Stat {
    /// 50th percentile.
    pub median: f64,
    /// 95th percentile.
    pub p95: f64,
}

impl Stat {
    /// A quantity that is exactly 0 in every frame (e.g. no copy recorded).
    pub const ZERO: Stat = Stat { median: 0.0, p95: 0.0 };

    /// Summarises `samples`, sorting them in place. Fails on no samples or
    /// on a NaN or infinite one (a broken timer must not turn into a number
    /// in the results).
    pub fn from_samples(samples: &mut [f64]) -> Result<Stat, ReportError> {
        if samples.is_empty() {
            return Err(ReportError::NoSamples);
        }
        if let Some((index, value)) = samples.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(ReportError::NotFinite { index, count: samples.len(), value: *value });
        }
        samples.sort_unstable_by(f64::total_cmp);
        Ok(Stat { median: quantile(samples, 0.5), p95: quantile(samples, 0.95) })
    }
}

/// The q-quantile of sorted, non-empty `sorted` (type 7, see [`Stat`]).
fn quantile(sorted: &[f64], q: f64) -> f64 {
    let rank = (sorted.len() - 1) as f64 * q;
    let below = rank.floor() as usize;
    let above = (below + 1).min(sorted.len() - 1);
    let fraction = rank - below as f64;
    sorted[below] + fraction * (sorted[above] - sorted[below])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stat(samples: &[f64]) -> Stat {
        Stat::from_samples(&mut samples.to_vec()).unwrap()
    }

    #[test]
    fn one_sample_is_its_own_median_and_p95() {
        assert_eq!(stat(&[42.5]), Stat { median: 42.5, p95: 42.5 });
    }

    #[test]
    fn median_of_an_odd_count_is_the_middle_sample_whatever_the_order() {
        assert_eq!(stat(&[9.0, 1.0, 5.0]).median, 5.0);
    }

    #[test]
    fn median_of_an_even_count_is_the_mean_of_the_middle_two() {
        assert_eq!(stat(&[4.0, 1.0, 3.0, 2.0]).median, 2.5);
    }

    #[test]
    fn p95_matches_numpy_on_known_samples() {
        // Python: statistics.quantiles(range(1, 101), n=20, method="inclusive")[-1]
        // == 95.05, and 9.55 for range(1, 11) (the same type 7 definition,
        // as numpy.percentile's default).
        let hundred: Vec<f64> = (1..=100).rev().map(f64::from).collect();
        let s = stat(&hundred);
        assert_eq!(s.median, 50.5);
        assert!((s.p95 - 95.05).abs() < 1e-9, "{}", s.p95);
        let ten: Vec<f64> = (1..=10).map(f64::from).collect();
        assert!((stat(&ten).p95 - 9.55).abs() < 1e-9);
    }

    #[test]
    fn an_outlier_moves_p95_but_not_the_median() {
        let mut samples = vec![10.0; 19];
        samples.push(1000.0);
        let s = stat(&samples);
        assert_eq!(s.median, 10.0);
        // rank 19 * 0.95 = 18.05: 5 % of the way from 10 to 1000 (Python's
        // statistics.quantiles(..., n=20, method="inclusive")[-1] == 59.5).
        assert!((s.p95 - 59.5).abs() < 1e-9, "{}", s.p95);
    }

    #[test]
    fn no_samples_is_an_error() {
        assert_eq!(Stat::from_samples(&mut []).unwrap_err().to_string(), "no samples to summarise");
    }

    #[test]
    fn nan_and_infinity_are_errors_naming_the_sample() {
        let nan = Stat::from_samples(&mut [1.0, f64::NAN, 3.0]).unwrap_err().to_string();
        assert_eq!(nan, "sample 1 of 3 is NaN, not a finite number");
        let inf = Stat::from_samples(&mut [f64::INFINITY]).unwrap_err().to_string();
        assert_eq!(inf, "sample 0 of 1 is inf, not a finite number");
    }
}
