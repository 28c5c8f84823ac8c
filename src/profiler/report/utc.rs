//! UTC timestamps in ISO 8601 (`2026-11-30T18:28:45Z`) for the results'
//! header, without a date-time crate: the calendar date of a day count is
//! Howard Hinnant's `civil_from_days` (proleptic Gregorian calendar,
//! <https://howardhinnant.github.io/date_algorithms.html>).

use std::time::{SystemTime, UNIX_EPOCH};

/// `time` as UTC ISO 8601 to the second, e.g. `2000-02-29T23:59:59Z`
/// (times before 1970 included; fractions of a second dropped, toward the past).
pub fn iso8601_utc(time: SystemTime) -> String {
    let seconds: i64 = match time.duration_since(UNIX_EPOCH) {
        Ok(after) => after.as_secs() as i64,
        // Before the epoch: round toward the past, as after it.
        Err(before) => {
            let d = before.duration();
            -(d.as_secs() as i64) - i64::from(d.subsec_nanos() > 0)
        }
    };
    let days = seconds.div_euclid(86_400);
    let of_day = seconds.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        of_day / 3600,
        of_day % 3600 / 60,
        of_day % 60
    )
}

/// The (year, month 1-12, day 1-31) of the day `days` after 1970-01-01.
///
/// Counts in 400-year eras (146,097 days each) that begin on 1 March, so
/// the leap day falls at the end of an era-year and months have a fixed
/// day-of-year formula: `(153 * m + 2) / 5` days before month m (March = 0).
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468; // days since 0000-03-01
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097); // [0, 146096]
    let year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365; // [0, 399]
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100); // [0, 365]
    let mp = (5 * day_of_year + 2) / 153; // month from March, [0, 11]
    let day = (day_of_year - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn at(seconds: i64) -> String {
        let time = if seconds >= 0 {
            UNIX_EPOCH + Duration::from_secs(seconds as u64)
        } else {
            UNIX_EPOCH - Duration::from_secs(seconds.unsigned_abs())
        };
        iso8601_utc(time)
    }

    #[test]
    fn known_instants_match_gnu_date() {
        // Each expected value is `date -u -d @SECONDS +%Y-%m-%dT%H:%M:%SZ`.
        assert_eq!(at(0), "1970-01-01T00:00:00Z");
        assert_eq!(at(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(at(951_868_799), "2000-02-29T23:59:59Z");
        assert_eq!(at(1_709_164_800), "2024-02-29T00:00:00Z");
        assert_eq!(at(1_796_056_125), "2026-11-30T16:28:45Z");
        assert_eq!(at(253_402_300_799), "9999-12-31T23:59:59Z");
        assert_eq!(at(-86_400), "1969-12-31T00:00:00Z");
    }

    #[test]
    fn a_fraction_of_a_second_is_dropped_toward_the_past() {
        assert_eq!(iso8601_utc(UNIX_EPOCH + Duration::from_millis(1_999)), "1970-01-01T00:00:01Z");
        assert_eq!(iso8601_utc(UNIX_EPOCH - Duration::from_millis(1)), "1969-12-31T23:59:59Z");
    }

    /// Days in a Gregorian month, written from the rule, not from the algorithm.
    fn month_length(year: i64, month: u32) -> u32 {
        let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
        [31, if leap { 29 } else { 28 }, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month as usize - 1]
    }

    #[test]
    fn consecutive_days_walk_the_calendar_from_1600_to_2400() {
        // 1600-01-01 is day -135,140 (`date -u -d 1600-01-01 +%s` / 86400).
        let mut expected = (1600, 1, 1);
        for days in -135_140..157_000 {
            assert_eq!(civil_from_days(days), expected, "day {days}");
            let (year, month, day) = expected;
            expected = if day < month_length(year, month) {
                (year, month, day + 1)
            } else if month < 12 {
                (year, month + 1, 1)
            } else {
                (year + 1, 1, 1)
            };
        }
        assert_eq!(expected.0, 2399);
    }
}
