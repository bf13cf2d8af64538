//! Times as clinv reads and writes them, on jiff (already in the tree through
//! k8s-openapi).
//!
//! jiff formats, checks the fields and does the calendar and the instant; in front of it stands the strict RFC 3339 grammar clinv has always accepted
//! ([`strict`]), so a `date-time` the CRD check lets through is one the API server
//! accepts too.

use jiff::Timestamp;
use jiff::civil::{Date, DateTime, Time};
use jiff::fmt::temporal::DateTimePrinter;
use jiff::tz::Offset;

/// `…:SSZ` and `…:SS.mmmZ` (a fraction cut, not rounded, as clinv always wrote it).
static SECONDS: DateTimePrinter = DateTimePrinter::new().precision(Some(0));
static MILLIS: DateTimePrinter = DateTimePrinter::new().precision(Some(3));

/// The UTC calendar date and time of `t`.
pub fn utc(t: Timestamp) -> DateTime {
    Offset::UTC.to_datetime(t)
}

/// `YYYY-MM-DDTHH:MM:SSZ`, UTC, no fraction.
pub fn format_seconds(t: Timestamp) -> String {
    SECONDS.timestamp_to_string(&t)
}

/// `YYYY-MM-DDTHH:MM:SS.mmmZ`, UTC.
pub fn format_millis(t: Timestamp) -> String {
    MILLIS.timestamp_to_string(&t)
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
    // Two units at most, each number written by itoa: `write!` cost a listing of a
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
    let mut digits = itoa::Buffer::new();
    for (n, unit) in std::iter::once(first).chain(second.filter(|&(n, _)| n != 0)) {
        out.push_str(digits.format(n));
        out.push(unit);
    }
}

/// What an AGE cell says when the time cannot be read (kubectl's word).
pub const UNKNOWN_AGE: &str = "<unknown>";

/// An RFC 3339 date-time, strictly.
///
/// `YYYY-MM-DD`, `T`, `t` or a space, `HH:MM:SS`, an optional fraction (digits past the
/// ninth ignored), then `Z`, `z` or `±HH:MM` (at most 23:59; U+2212 is a minus too). A leap second `:60` reads as `:59`. The grammar is
/// [`strict`]'s; the ranges, the calendar (leap years, month lengths) and the instant
/// are jiff's.
pub fn parse_rfc3339(text: &str) -> Option<Timestamp> {
    let f = strict(text)?;
    let second = if f.second == 60 { 59 } else { f.second };
    let date = Date::new(f.year, f.month, f.day).ok()?;
    let time = Time::new(f.hour, f.minute, second, f.nanos).ok()?;
    let offset = Offset::from_seconds(f.offset).ok()?;
    offset.to_timestamp(date.to_datetime(time)).ok()
}

/// The fields of a date-time as written, before any range check.
struct Fields {
    year: i16,
    month: i8,
    day: i8,
    hour: i8,
    minute: i8,
    second: i8,
    nanos: i32,
    offset: i32,
}

/// Checks `text` against the RFC 3339 grammar clinv accepts — digits where digits go,
/// the separators, a fraction of at least one digit, the offset's form and range — and
/// splits it into its fields. Only the grammar: jiff checks the values. jiff's own
/// parser reads much more (`20231114T221320Z`, `+05`, `,5`, `[UTC]`, six-digit years)
/// and took three times as long a time (58 against 24 ns, issue #41), which `status`
/// and `import` pay per record.
fn strict(text: &str) -> Option<Fields> {
    let b = text.as_bytes();
    let head = b.get(..19)?;
    let shape_ok = head.iter().enumerate().all(|(i, c)| match i {
        4 | 7 => *c == b'-',
        10 => matches!(c, b'T' | b't' | b' '),
        13 | 16 => *c == b':',
        _ => c.is_ascii_digit(),
    });
    if !shape_ok {
        return None;
    }
    // Only ASCII digits from here on: each value fits its type.
    let num = |at: usize, len: usize| {
        head[at..at + len]
            .iter()
            .fold(0i32, |n, c| n * 10 + i32::from(c - b'0'))
    };
    let two = |at: usize| num(at, 2) as i8;
    let mut rest = &b[19..];
    let mut nanos = 0i32;
    if let Some(fraction) = rest.strip_prefix(b".") {
        let digits = fraction.iter().take_while(|c| c.is_ascii_digit()).count();
        if digits == 0 {
            return None;
        }
        for c in &fraction[..digits.min(9)] {
            nanos = nanos * 10 + i32::from(c - b'0');
        }
        nanos *= 10i32.pow(9u32.saturating_sub(digits as u32));
        rest = &fraction[digits..];
    }
    let offset = match rest {
        b"Z" | b"z" => 0,
        _ => {
            let (sign, hhmm) = match rest {
                [b'+', t @ ..] => (1, t),
                [b'-', t @ ..] | [0xE2, 0x88, 0x92, t @ ..] => (-1, t),
                _ => return None,
            };
            let [h1, h2, b':', m1, m2] = *hhmm else {
                return None;
            };
            let pair = |a: u8, b: u8| {
                (a.is_ascii_digit() && b.is_ascii_digit())
                    .then(|| i32::from(a - b'0') * 10 + i32::from(b - b'0'))
            };
            let (hh, mm) = (pair(h1, h2)?, pair(m1, m2)?);
            if hh > 23 || mm > 59 {
                return None;
            }
            sign * (hh * 3600 + mm * 60)
        }
    };
    Some(Fields {
        year: num(0, 4) as i16,
        month: two(5),
        day: two(8),
        hour: two(11),
        minute: two(14),
        second: two(17),
        nanos,
        offset,
    })
}

/// A calendar date `YYYY-MM-DD`.
pub fn parse_date(text: &str) -> Option<Date> {
    Date::strptime("%Y-%m-%d", text).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_append() {
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

    /// Where a hand-written parser and jiff's could differ (issue #41): pinned against
    /// the hand-written one before jiff took over, so a change here is a decision.
    #[test]
    fn rfc3339_edge_cases() {
        let at = |s: &str| parse_rfc3339(s).map(|t| (t.as_second(), t.subsec_nanosecond()));
        // `text = seconds.nanoseconds` since the epoch.
        let read = [
            // Leap years: Feb 29 of 2024 and 2000 (1900 and 2023 are below).
            "2024-02-29T00:00:00Z = 1709164800.000000000",
            "2000-02-29T12:00:00Z = 951825600.000000000",
            // A leap second reads as :59, in any minute (the grammar has no table).
            "2016-12-31T23:59:60Z = 1483228799.000000000",
            "2016-12-31T23:59:60.5Z = 1483228799.500000000",
            "2023-11-14T12:30:60Z = 1699965059.000000000",
            // Offsets other than Z, to the minute; -00:00 is UTC.
            "2023-11-15T03:43:20+05:30 = 1700000000.000000000",
            "2023-11-14T22:13:20-00:00 = 1700000000.000000000",
            "2023-11-14T22:13:20+00:00 = 1700000000.000000000",
            "2023-11-15T22:12:20+23:59 = 1700000000.000000000",
            "2023-11-13T22:14:20-23:59 = 1700000000.000000000",
            // Fractions: 1 to 9 digits exact, further digits dropped (not rounded).
            "2023-11-14T22:13:20.1Z = 1700000000.100000000",
            "2023-11-14T22:13:20.000000001Z = 1700000000.000000001",
            "2023-11-14T22:13:20.9999999999Z = 1700000000.999999999",
            "2023-11-14T22:13:20.5+01:00 = 1699996400.500000000",
            // Year 0000, also east of UTC (year -1 then); jiff's last instant is
            // 9999-12-30T22:00:00.999999999Z (its civil range less the largest offset).
            "0000-01-01T00:00:00Z = -62167219200.000000000",
            "0000-01-01T00:00:00+01:00 = -62167222800.000000000",
            "9999-12-30T22:00:00Z = 253402207200.000000000",
        ];
        for row in read {
            let (text, want) = row.split_once(" = ").unwrap();
            let (secs, nanos) = want.split_once('.').unwrap();
            let want = (secs.parse::<i64>().unwrap(), nanos.parse::<i32>().unwrap());
            assert_eq!(at(text), Some(want), "{text}");
            // Written back (from year 0000 on: before it, see `format_edge_cases`).
            let whole = Timestamp::from_second(want.0).map(format_seconds).unwrap();
            let readable = want.0 >= -62_167_219_200;
            assert_eq!(parse_rfc3339(&whole).is_some(), readable, "{whole}");
        }
        assert_eq!(
            format_seconds(parse_rfc3339("0000-01-01T00:00:00Z").unwrap()),
            "0000-01-01T00:00:00Z"
        );
        // Out-of-range fields, impossible dates, past jiff's last instant, and the forms
        // jiff's own parser reads that RFC 3339 does not have.
        for bad in [
            "2023-02-29T00:00:00Z",
            "1900-02-29T00:00:00Z",
            "2023-11-14T12:30:61Z",
            "9999-12-31T00:59:59+02:00",
            "9999-12-30T22:00:01Z",
            "9999-12-31T23:59:59Z",
            "2023-00-14T22:13:20Z",
            "2023-13-14T22:13:20Z",
            "2023-11-00T22:13:20Z",
            "2023-11-31T22:13:20Z",
            "2023-11-14T22:60:20Z",
            "2023-11-14T22:13:20-24:00",
            "2023-11-14T22:13:20+05:3",
            "2023-11-14T22:13:20,5Z",
            "2023-11-14T22:13:20.5",
            "2023-11-14T22:13:20+05:30:00",
            "20231114T221320Z",
            "2023-11-14T22:13:20-05",
            "-2023-11-14T22:13:20Z",
            "2023-1-14T22:13:20Z",
            "２０２３-11-14T22:13:20Z",
        ] {
            assert_eq!(at(bad), None, "{bad}");
        }
    }

    /// Formats at the edges: truncation to the millisecond, the first and last years.
    #[test]
    fn format_edge_cases() {
        let t = Timestamp::new(1_700_000_000, 999_999_999).unwrap();
        assert_eq!(format_millis(t), "2023-11-14T22:13:20.999Z");
        assert_eq!(format_seconds(t), "2023-11-14T22:13:20Z");
        let leap = parse_rfc3339("2024-02-29T23:59:59.0015Z").unwrap();
        assert_eq!(format_millis(leap), "2024-02-29T23:59:59.001Z");
        let first = parse_rfc3339("0000-01-01T00:00:00Z").unwrap();
        assert_eq!(format_millis(first), "0000-01-01T00:00:00.000Z");
        assert_eq!(format_seconds(Timestamp::MAX), "9999-12-30T22:00:00Z");
        assert_eq!(format_millis(Timestamp::MAX), "9999-12-30T22:00:00.999Z");
        let before_year_zero = Timestamp::from_second(-62_167_219_201).unwrap();
        // Before year 0 (a SOURCE_DATE_EPOCH far in the past): jiff's ISO 8601 extended
        // year (sign and six digits) where the hand-written format gave `-001`, which
        // no reader took; neither is RFC 3339, and the strict parse refuses both.
        assert_eq!(format_seconds(before_year_zero), "-000001-12-31T23:59:59Z");
        assert_eq!(parse_rfc3339(&format_seconds(before_year_zero)), None);
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
