//! Times as clinv reads and writes them, on jiff (already in the tree through k8s-openapi).
//!
//! Parsing keeps the strict RFC 3339 grammar clinv has always accepted, so a `date-time`
//! the CRD check lets through is one the API server accepts too.

use jiff::Timestamp;
use jiff::civil::{Date, DateTime};
use jiff::tz::Offset;

/// The UTC calendar date and time of `t`.
pub fn utc(t: Timestamp) -> DateTime {
    Offset::UTC.to_datetime(t)
}

/// `YYYY-MM-DDTHH:MM:SSZ`, UTC, no fraction.
pub fn format_seconds(t: Timestamp) -> String {
    let d = utc(t);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
        d.year(),
        d.month(),
        d.day(),
        d.hour(),
        d.minute(),
        d.second()
    )
}

/// `YYYY-MM-DDTHH:MM:SS.mmmZ`, UTC.
pub fn format_millis(t: Timestamp) -> String {
    let d = utc(t);
    let seconds = format_seconds(t);
    format!(
        "{}.{:03}Z",
        &seconds[..seconds.len() - 1],
        d.subsec_nanosecond() / 1_000_000
    )
}

/// How long ago `then` was, as kubectl prints an AGE: the two largest units while they
/// say something (`45s`, `5m12s`, `3h20m`, `2d5h`, `45d`, `3y120d`). A time in the
/// future (a skewed clock) is `0s`.
pub fn age(then: Timestamp, now: Timestamp) -> String {
    let mut out = String::new();
    write_age(then.as_second(), now.as_second(), &mut out);
    out
}

/// [`age`] of two times in seconds since the epoch, appended to `out` (no allocation
/// of its own: a listing of a million rows writes one per row).
pub fn write_age(then: i64, now: i64, out: &mut String) {
    let secs = now.saturating_sub(then).max(0);
    let (m, h, d) = (secs / 60, secs / 3600, secs / 86_400);
    // Two units at most, each number written by hand: `write!` cost a listing of a
    // million rows a tenth of its time.
    let (first, second) = match secs {
        s if s < 120 => ((s, 's'), None),
        s if s < 600 => ((m, 'm'), Some((s % 60, 's'))),
        s if s < 3 * 3600 => ((m, 'm'), None),
        s if s < 8 * 3600 => ((h, 'h'), Some(((s % 3600) / 60, 'm'))),
        s if s < 2 * 86_400 => ((h, 'h'), None),
        s if s < 8 * 86_400 => ((d, 'd'), Some(((s % 86_400) / 3600, 'h'))),
        _ if d < 2 * 365 => ((d, 'd'), None),
        _ if d < 8 * 365 => ((d / 365, 'y'), Some((d % 365, 'd'))),
        _ => ((d / 365, 'y'), None),
    };
    for (n, unit) in std::iter::once(first).chain(second.filter(|&(n, _)| n != 0)) {
        push_number(out, n);
        out.push(unit);
    }
}

/// `n` (not negative) in decimal, appended to `out`.
fn push_number(out: &mut String, n: i64) {
    let mut buf = [0u8; 20];
    let mut at = buf.len();
    let mut v = n.unsigned_abs();
    loop {
        at -= 1;
        buf[at] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    // Only ASCII digits were written.
    out.push_str(std::str::from_utf8(&buf[at..]).unwrap_or_default());
}

/// What an AGE cell says when the time cannot be read (kubectl's word).
pub const UNKNOWN_AGE: &str = "<unknown>";

/// Seconds since the epoch of a UTC calendar time, by integer arithmetic (days from the
/// civil date, proleptic Gregorian): for times already split into fields, without a parse.
///
/// Fields are taken as they are (no range check).
pub fn epoch_second(year: i64, month: i64, day: i64, hour: i64, minute: i64, second: i64) -> i64 {
    // Howard Hinnant's days_from_civil.
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    days * 86_400 + hour * 3600 + minute * 60 + second
}

/// An RFC 3339 date-time: `YYYY-MM-DD`, `T`, `t` or a space, `HH:MM:SS`, an optional
/// fraction (digits past the ninth ignored), then `Z`, `z` or `±HH:MM` (at most 23:59;
/// U+2212 is a minus too).
///
/// A leap second `:60` reads as `:59`.
pub fn parse_rfc3339(text: &str) -> Option<Timestamp> {
    let b = text.as_bytes();
    if b.len() < 19 {
        return None;
    }
    let num = |range: std::ops::Range<usize>| -> Option<i32> {
        b[range].iter().try_fold(0i32, |n, c| {
            c.is_ascii_digit().then(|| n * 10 + i32::from(c - b'0'))
        })
    };
    let separators = b[4] == b'-'
        && b[7] == b'-'
        && matches!(b[10], b'T' | b't' | b' ')
        && b[13] == b':'
        && b[16] == b':';
    if !separators {
        return None;
    }
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let mut rest = &text[19..];
    let mut nanos = 0i32;
    if let Some(fraction) = rest.strip_prefix('.') {
        let digits = fraction.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        for c in fraction.bytes().take(digits.min(9)) {
            nanos = nanos * 10 + i32::from(c - b'0');
        }
        nanos *= 10i32.pow(9u32.saturating_sub(digits as u32));
        rest = &fraction[digits..];
    }
    let offset = match rest {
        "Z" | "z" => 0,
        _ => {
            let (sign, hhmm) = if let Some(t) = rest.strip_prefix('+') {
                (1, t)
            } else if let Some(t) = rest.strip_prefix(['-', '\u{2212}']) {
                (-1, t)
            } else {
                return None;
            };
            let t = hhmm.as_bytes();
            if t.len() != 5 || t[2] != b':' {
                return None;
            }
            let digit = |i: usize| t[i].is_ascii_digit().then(|| i32::from(t[i] - b'0'));
            let (hh, mm) = (digit(0)? * 10 + digit(1)?, digit(3)? * 10 + digit(4)?);
            if hh > 23 || mm > 59 {
                return None;
            }
            sign * (hh * 3600 + mm * 60)
        }
    };
    let second = if second == 60 { 59 } else { second };
    let at = DateTime::new(
        i16::try_from(year).ok()?,
        i8::try_from(month).ok()?,
        i8::try_from(day).ok()?,
        i8::try_from(hour).ok()?,
        i8::try_from(minute).ok()?,
        i8::try_from(second).ok()?,
        nanos,
    )
    .ok()?;
    Offset::from_seconds(offset).ok()?.to_timestamp(at).ok()
}

/// A calendar date `YYYY-MM-DD`.
pub fn parse_date(text: &str) -> Option<Date> {
    Date::strptime("%Y-%m-%d", text).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epoch_second_agrees_with_jiff() {
        for text in [
            "1970-01-01T00:00:00Z",
            "1969-12-31T23:59:59Z",
            "2000-02-29T12:34:56Z",
            "2024-03-01T00:00:00Z",
            "2026-12-31T23:59:59Z",
            "1600-01-01T00:00:00Z",
            "9999-01-01T23:59:59Z",
        ] {
            let t = parse_rfc3339(text).unwrap();
            let d = utc(t);
            let f = |v: i8| i64::from(v);
            assert_eq!(
                epoch_second(
                    i64::from(d.year()),
                    f(d.month()),
                    f(d.day()),
                    f(d.hour()),
                    f(d.minute()),
                    f(d.second())
                ),
                t.as_second(),
                "{text}"
            );
        }
        let mut out = String::from("x");
        write_age(0, 3 * 3600 + 60, &mut out);
        assert_eq!(out, "x3h1m");
    }

    /// The AGE written by hand is the one `write!` gave (kubectl's units), at every
    /// boundary and between.
    #[test]
    fn ages_written_by_hand_are_the_formatted_ones() {
        fn formatted(secs: i64) -> String {
            let (m, h, d) = (secs / 60, secs / 3600, secs / 86_400);
            match secs {
                s if s < 120 => format!("{s}s"),
                s if s < 600 => match s % 60 {
                    0 => format!("{m}m"),
                    r => format!("{m}m{r}s"),
                },
                s if s < 3 * 3600 => format!("{m}m"),
                s if s < 8 * 3600 => match (s % 3600) / 60 {
                    0 => format!("{h}h"),
                    r => format!("{h}h{r}m"),
                },
                s if s < 2 * 86_400 => format!("{h}h"),
                s if s < 8 * 86_400 => match (s % 86_400) / 3600 {
                    0 => format!("{d}d"),
                    r => format!("{d}d{r}h"),
                },
                _ if d < 2 * 365 => format!("{d}d"),
                _ if d < 8 * 365 => match d % 365 {
                    0 => format!("{}y", d / 365),
                    r => format!("{}y{r}d", d / 365),
                },
                _ => format!("{}y", d / 365),
            }
        }
        let mut secs: i64 = 0;
        while secs < 40 * 365 * 86_400 {
            for s in [secs, (secs - 1).max(0), secs + 1] {
                let mut out = String::new();
                write_age(0, s, &mut out);
                assert_eq!(out, formatted(s), "{s}");
            }
            secs = secs * 21 / 20 + 1;
        }
        for day in 0..(9 * 365) {
            let mut out = String::new();
            write_age(0, day * 86_400, &mut out);
            assert_eq!(out, formatted(day * 86_400), "day {day}");
        }
        let mut out = String::new();
        write_age(10, 0, &mut out);
        assert_eq!(out, "0s");
    }

    #[test]
    fn formats_are_utc_with_z() {
        let t = Timestamp::new(1_700_000_000, 123_456_789).unwrap();
        assert_eq!(format_seconds(t), "2023-11-14T22:13:20Z");
        assert_eq!(format_millis(t), "2023-11-14T22:13:20.123Z");
        let before = Timestamp::new(-1, 0).unwrap();
        assert_eq!(format_seconds(before), "1969-12-31T23:59:59Z");
        assert_eq!(format_millis(before), "1969-12-31T23:59:59.000Z");
        let early = Timestamp::from_second(-62_135_596_800).unwrap();
        assert_eq!(format_seconds(early), "0001-01-01T00:00:00Z");
    }

    #[test]
    fn rfc3339_grammar() {
        let at = |s: &str| parse_rfc3339(s).map(|t| (t.as_second(), t.subsec_nanosecond()));
        assert_eq!(at("2023-11-14T22:13:20Z"), Some((1_700_000_000, 0)));
        assert_eq!(at("2023-11-14t22:13:20z"), Some((1_700_000_000, 0)));
        assert_eq!(at("2023-11-14 22:13:20Z"), Some((1_700_000_000, 0)));
        assert_eq!(at("2023-11-14T23:13:20+01:00"), Some((1_700_000_000, 0)));
        assert_eq!(
            at("2023-11-14T21:13:20\u{2212}01:00"),
            Some((1_700_000_000, 0))
        );
        assert_eq!(
            at("2023-11-14T22:13:20.5Z"),
            Some((1_700_000_000, 500_000_000))
        );
        assert_eq!(
            at("2023-11-14T22:13:20.1234567891234Z"),
            Some((1_700_000_000, 123_456_789))
        );
        assert_eq!(at("2016-12-31T23:59:60Z"), at("2016-12-31T23:59:59Z"));
        for bad in [
            "",
            "2023-11-14",
            "2023-11-14T22:13Z",
            "2023-11-14T22:13:20",
            "2023-11-14T22:13:20.Z",
            "2023-11-14T22:13:20+0100",
            "2023-11-14T22:13:20+01",
            "2023-11-14T22:13:20+24:00",
            "2023-11-14T22:13:20+01:60",
            "2023-02-30T22:13:20Z",
            "2023-11-14T24:00:00Z",
            "2023-11-14T22:13:20Z ",
            "2023-11-14T22:13:20Z[UTC]",
            "+2023-11-14T22:13:20Z",
            "2023-11-14X22:13:20Z",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
    }

    #[test]
    fn dates() {
        assert_eq!(parse_date("2026-01-05"), Date::new(2026, 1, 5).ok());
        assert_eq!(parse_date("2026-02-30"), None);
        assert_eq!(parse_date("yesterday"), None);
    }

    #[test]
    fn ages_read_like_kubectl() {
        let now = Timestamp::from_second(1_000_000_000).unwrap();
        let ago = |s: i64| age(Timestamp::from_second(1_000_000_000 - s).unwrap(), now);
        assert_eq!(ago(0), "0s");
        assert_eq!(ago(-30), "0s");
        assert_eq!(ago(45), "45s");
        assert_eq!(ago(119), "119s");
        assert_eq!(ago(312), "5m12s");
        assert_eq!(ago(300), "5m");
        assert_eq!(ago(3000), "50m");
        assert_eq!(ago(3 * 3600 + 20 * 60), "3h20m");
        assert_eq!(ago(30 * 3600), "30h");
        assert_eq!(ago(2 * 86_400 + 5 * 3600), "2d5h");
        assert_eq!(ago(45 * 86_400), "45d");
        assert_eq!(ago(3 * 365 * 86_400 + 120 * 86_400), "3y120d");
        assert_eq!(ago(10 * 365 * 86_400), "10y");
    }
}
