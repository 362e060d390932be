//! Timestamps: Slack's `"seconds.micros"` message ts to ISO 8601.
//!
//! Slack identifies a message by its `ts` (`"1775853170.228819"`: epoch seconds and
//! microseconds). The seed's schema wants ISO 8601 in `ts` fields, so a platform ts is
//! converted to `"2026-04-10T20:32:50.228819Z"` (UTC, the fraction digits kept as given).
//! Any other string is taken to be ISO 8601 already and passed through unchanged.

/// Days since 1970-01-01 to a proleptic Gregorian (year, month, day).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Splits a Slack-style ts (`digits` or `digits.digits`) into seconds and fraction digits.
pub fn parse_platform_ts(ts: &str) -> Option<(i64, &str)> {
    let (secs, frac) = match ts.split_once('.') {
        Some((s, f)) => (s, f),
        None => (ts, ""),
    };
    if secs.is_empty() || secs.len() > 12 || !secs.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if ts.ends_with('.') {
        return None;
    }
    secs.parse::<i64>().ok().map(|s| (s, frac))
}

/// Sort key of a platform ts: whole seconds and nanoseconds (`"1775853170.228819"` ->
/// `(1775853170, 228819000)`), so `"5.1"` and `"5.100000"` compare equal and order is
/// numeric, not lexical.
pub type TsKey = (i64, u32);

/// The sort key of a platform ts, or `None` when `ts` is not one.
pub fn ts_key(ts: &str) -> Option<TsKey> {
    let (secs, frac) = parse_platform_ts(ts)?;
    let mut nanos: u32 = 0;
    for i in 0..9 {
        nanos = nanos * 10 + frac.as_bytes().get(i).map_or(0, |b| u32::from(b - b'0'));
    }
    Some((secs, nanos))
}

/// Milliseconds since the epoch of a ts key (negative times clamp to 0).
pub fn key_millis(k: TsKey) -> u64 {
    let ms =
        k.0.saturating_mul(1000)
            .saturating_add(i64::from(k.1 / 1_000_000));
    u64::try_from(ms).unwrap_or(0)
}

/// True when `ts` looks like a platform epoch ts (`"1775853170.228819"`).
pub fn is_platform_ts(ts: &str) -> bool {
    parse_platform_ts(ts).is_some()
}

/// Epoch seconds to `YYYY-MM-DDTHH:MM:SS[.fraction]Z`.
pub fn iso_from_epoch(secs: i64, frac: &str) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, mo, d) = civil_from_days(days);
    let (h, mi, s) = (rem / 3600, (rem % 3600) / 60, rem % 60);
    if !(0..=9999).contains(&y) {
        let dot = if frac.is_empty() { "" } else { "." };
        return format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}{dot}{frac}Z");
    }
    // Hand-written digits: this runs once per message and `format!` dominated it.
    let mut out = String::with_capacity(21 + frac.len());
    push_digits(&mut out, y, 4);
    out.push('-');
    push_digits(&mut out, i64::from(mo), 2);
    out.push('-');
    push_digits(&mut out, i64::from(d), 2);
    out.push('T');
    push_digits(&mut out, h, 2);
    out.push(':');
    push_digits(&mut out, mi, 2);
    out.push(':');
    push_digits(&mut out, s, 2);
    if !frac.is_empty() {
        out.push('.');
        out.push_str(frac);
    }
    out.push('Z');
    out
}

/// Appends `value` (0 <= value < 10^width) zero-padded to `width` digits.
fn push_digits(out: &mut String, value: i64, width: u32) {
    let mut div = 10i64.pow(width - 1);
    while div > 0 {
        let digit = (value / div) % 10;
        out.push(char::from(b'0' + digit as u8));
        div /= 10;
    }
}

/// The ISO 8601 form of a message ts: platform ts converted, anything else unchanged.
pub fn to_iso(ts: &str) -> String {
    match parse_platform_ts(ts) {
        Some((secs, frac)) => iso_from_epoch(secs, frac),
        None => ts.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slack_ts_converts_to_iso_utc_keeping_micros() {
        assert_eq!(to_iso("1775853170.228819"), "2026-04-10T20:32:50.228819Z");
        assert_eq!(to_iso("0"), "1970-01-01T00:00:00Z");
        assert_eq!(to_iso("951782400.000100"), "2000-02-29T00:00:00.000100Z");
    }

    #[test]
    fn non_platform_ts_passes_through() {
        assert_eq!(to_iso("2026-04-10T20:32:50Z"), "2026-04-10T20:32:50Z");
        assert_eq!(to_iso("1234."), "1234.");
        assert_eq!(to_iso("12a.5"), "12a.5");
        assert_eq!(to_iso(""), "");
    }

    proptest::proptest! {
        #[test]
        fn hand_written_digits_match_format(secs in 0i64..253_402_300_799, frac in "[0-9]{0,6}") {
            let days = secs.div_euclid(86_400);
            let rem = secs.rem_euclid(86_400);
            let (y, mo, d) = civil_from_days(days);
            let (h, mi, s) = (rem / 3600, (rem % 3600) / 60, rem % 60);
            let dot = if frac.is_empty() { "" } else { "." };
            let expected = format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}{dot}{frac}Z");
            proptest::prop_assert_eq!(iso_from_epoch(secs, &frac), expected);
        }
    }
}
