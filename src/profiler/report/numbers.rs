//! How the table and the verdicts write numbers: three significant digits
//! for measurements, thousands grouped for counts, so both read alike.

/// Three significant digits or more: 1.23, 12.3, 123, 12345.
pub(crate) use crate::text::significant as number;

/// A count with its thousands grouped: 2,400; 1,472; 16.
pub(super) fn grouped(value: u64) -> String {
    let digits = value.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A measurement: grouped when it is 1,000 or more (rounded to a whole
/// number), else three significant digits.
pub(super) fn measure(value: f64) -> String {
    if value.is_finite() && value.abs() >= 1000.0 {
        let sign = if value < 0.0 { "-" } else { "" };
        format!("{sign}{}", grouped(value.abs().round() as u64))
    } else {
        number(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_keep_three_significant_digits() {
        assert_eq!(number(1.23456), "1.23");
        assert_eq!(number(12.3456), "12.3");
        assert_eq!(number(12345.6), "12346");
    }

    #[test]
    fn counts_group_their_thousands() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1_000), "1,000");
        assert_eq!(grouped(1_472), "1,472");
        assert_eq!(grouped(1_234_567), "1,234,567");
        assert_eq!(measure(812.34), "812");
        assert_eq!(measure(27_499.25), "27,499");
        assert_eq!(measure(6.91), "6.91");
    }
}
