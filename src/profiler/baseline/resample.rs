//! The resampling behind a baseline verdict: a bootstrap of the change in
//! the median between two sets of samples (its confidence interval) and a
//! bootstrap test of "both sets come from one distribution" (its p-value),
//! on a small deterministic generator so a comparison gives the same answer
//! every time it is made.

/// Resamples drawn for the interval and again for the test. Criterion
/// draws 100,000 for one benchmark; a full sweep compares some 700
/// figures of 100 samples each (a few seconds at this count), and 2,000
/// already puts the p-value's resolution (1/2,001) far below the 0.05 it
/// is compared with.
pub const RESAMPLES: usize = 2_000;

/// The confidence level of [`Resampled::interval`].
pub const CONFIDENCE: f64 = 0.95;

/// The seed of every comparison: the same samples always give the same
/// interval and p-value, whatever else is compared in the same run.
const SEED: u64 = 0x5eed_ba5e_11fe_2026;

/// SplitMix64 (Steele, Lea and Flood 2014; the generator Java's
/// `SplittableRandom` and xoshiro's seeding use): a 64-bit counter passed
/// through a mixing function. Plenty for drawing sample indices.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator starting from `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A uniform index below `n` (> 0), by Lemire's multiply-shift: the
    /// bias, at most n / 2^64, is nothing next to the test's resolution.
    pub fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }
}

/// What resampling says about the change from `old` to `new`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Resampled {
    /// The [`CONFIDENCE`] percentile interval of the relative change in the
    /// median, `median(new) / median(old) - 1` over bootstrap resamples of
    /// each side (0.05 = 5 % slower).
    pub interval: (f64, f64),
    /// The probability of a difference of medians at least as large as the
    /// one observed if both sides had the same median: each side shifted to
    /// the pooled median and resampled on its own (the bootstrap test of
    /// equal location without equal distributions, Efron and Tibshirani,
    /// An Introduction to the Bootstrap, 16.4).
    pub p_value: f64,
}

/// Resamples `old` and `new` (each non-empty, finite): `None` when a
/// resampled old median is not above 0 in so many draws that no relative
/// interval can be given (the figure is lost in the noise).
pub fn resample(old: &[f64], new: &[f64]) -> Option<Resampled> {
    if old.is_empty() || new.is_empty() {
        return None;
    }
    let mut rng = SplitMix64::new(SEED);
    let (mut a, mut b) = (vec![0.0; old.len()], vec![0.0; new.len()]);
    let mut changes = Vec::with_capacity(RESAMPLES);
    for _ in 0..RESAMPLES {
        let was = resampled_median(&mut rng, old, &mut a);
        let now = resampled_median(&mut rng, new, &mut b);
        if was > 0.0 {
            changes.push(now / was - 1.0);
        }
    }
    // A relative change needs an old median above 0 in (nearly) every draw.
    if changes.len() < RESAMPLES * 99 / 100 {
        return None;
    }
    changes.sort_unstable_by(f64::total_cmp);
    let tail = (1.0 - CONFIDENCE) / 2.0;
    let interval = (percentile(&changes, tail), percentile(&changes, 1.0 - tail));

    // The test: each side shifted to the pooled median (so that the null
    // hypothesis, equal medians, holds while each keeps its own spread),
    // then resampled on its own. Resampling the two sides pooled instead
    // would have no power for medians: from a pool of two clusters, half
    // the resampled medians land in each, however far apart they are.
    let (old_median, new_median) = (median(&mut old.to_vec()), median(&mut new.to_vec()));
    let observed = (new_median - old_median).abs();
    let pooled_median = median(&mut [old, new].concat());
    let shifted = |side: &[f64], m: f64| side.iter().map(|x| x - m + pooled_median).collect::<Vec<f64>>();
    let (old_null, new_null) = (shifted(old, old_median), shifted(new, new_median));
    let mut as_large = 0usize;
    for _ in 0..RESAMPLES {
        let d = resampled_median(&mut rng, &new_null, &mut b) - resampled_median(&mut rng, &old_null, &mut a);
        // A hair of tolerance: identical sides must count every draw as
        // "as large", whatever the rounding of the shift.
        if d.abs() >= observed - 1e-12 * pooled_median.abs() {
            as_large += 1;
        }
    }
    // (k + 1) / (B + 1): the resampled test's p-value is never 0.
    let p_value = (as_large + 1) as f64 / (RESAMPLES + 1) as f64;
    Some(Resampled { interval, p_value })
}

/// The median of `buffer.len()` draws with replacement from `from`
/// (non-empty), drawn into `buffer`.
fn resampled_median(rng: &mut SplitMix64, from: &[f64], buffer: &mut [f64]) -> f64 {
    for slot in buffer.iter_mut() {
        *slot = from[rng.below(from.len())];
    }
    median(buffer)
}

/// The median of non-empty `values` (the mean of the middle two for an
/// even count, as `Stat` defines it), reordering them.
pub fn median(values: &mut [f64]) -> f64 {
    let n = values.len();
    let (below, &mut middle, _) = values.select_nth_unstable_by(n / 2, f64::total_cmp);
    if n % 2 == 1 {
        middle
    } else {
        let lower = below.iter().copied().max_by(f64::total_cmp).expect("n >= 2");
        (lower + middle) / 2.0
    }
}

/// The q-quantile of sorted, non-empty `sorted`, interpolated between
/// ranks as `Stat` does (type 7).
fn percentile(sorted: &[f64], q: f64) -> f64 {
    let rank = (sorted.len() - 1) as f64 * q;
    let below = rank.floor() as usize;
    let above = (below + 1).min(sorted.len() - 1);
    sorted[below] + (rank - below as f64) * (sorted[above] - sorted[below])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix64_matches_the_reference_sequence() {
        // The reference C implementation (prng.di.unimi.it/splitmix64.c)
        // from state 0.
        let mut rng = SplitMix64::new(0);
        assert_eq!(rng.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(rng.next_u64(), 0x6e78_9e6a_a1b9_65f4);
        assert_eq!(rng.next_u64(), 0x06c4_5d18_8009_454f);
    }

    #[test]
    fn indices_cover_the_range_evenly() {
        let mut rng = SplitMix64::new(7);
        let mut counts = [0u32; 5];
        for _ in 0..50_000 {
            counts[rng.below(5)] += 1;
        }
        // 10,000 expected each; 5 standard deviations is about 450.
        assert!(counts.iter().all(|&c| (9_550..=10_450).contains(&c)), "{counts:?}");
    }

    #[test]
    fn medians_are_stats_medians() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(&mut [7.0]), 7.0);
    }

    #[test]
    fn identical_sides_are_not_significant() {
        let samples: Vec<f64> = (0..20).map(|i| 100.0 + f64::from(i % 7)).collect();
        let r = resample(&samples, &samples).unwrap();
        assert_eq!(r.p_value, 1.0);
        assert!(r.interval.0 < 0.0 && r.interval.1 > 0.0, "{r:?}");
    }

    #[test]
    fn separated_sides_are_significant_and_the_interval_holds_the_change() {
        let old: Vec<f64> = (0..20).map(|i| 100.0 + f64::from(i % 5)).collect();
        let new: Vec<f64> = old.iter().map(|x| x * 1.3).collect();
        let r = resample(&old, &new).unwrap();
        assert!(r.p_value < 0.001, "{r:?}");
        assert!(r.interval.0 > 0.25 && r.interval.1 < 0.35, "{r:?}");
    }

    #[test]
    fn eight_samples_far_apart_are_significant() {
        // What a quick bench keeps: 8 frames. Two clusters this far apart
        // must be significant (a pooled resampling test could not say so).
        let old = [100.0, 103.0, 98.0, 101.0, 99.0, 104.0, 100.5, 97.0];
        let new: Vec<f64> = old.iter().map(|x| x * 4.0).collect();
        let r = resample(&old, &new).unwrap();
        assert!(r.p_value < 0.01, "{r:?}");
        assert!(r.interval.0 > 2.5, "{r:?}");
    }

    #[test]
    fn the_same_samples_give_the_same_answer() {
        let old = [10.0, 11.0, 12.0, 10.5];
        let new = [10.2, 12.5, 11.0, 11.5];
        assert_eq!(resample(&old, &new), resample(&old, &new));
    }

    #[test]
    fn an_old_median_at_zero_gives_no_relative_interval() {
        assert_eq!(resample(&[0.0, 0.0, 0.0], &[1.0, 2.0, 3.0]), None);
        assert_eq!(resample(&[], &[1.0]), None);
    }
}
