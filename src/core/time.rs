//! Timestamps: Slack's `"seconds.micros"` message ts to ISO 8601.
//!
//! Slack identifies a message by its `ts` (`"1775853170.228819"`: epoch seconds and
//! microseconds). The context schema wants ISO 8601 in `ts` fields, so a platform ts is
//! converted to `"2026-04-10T20:32:50.228819Z"` (UTC, the fraction digits kept as given).
//! Any other string is taken to be ISO 8601 already and passed through unchanged.

/// The time since 1970 by the system clock (zero if the clock is set before 1970): the one
/// place the package reads it. Whatever can take a caller's clock does (`ChannelStore`'s
/// `clock`, the `now` options); this is the default.
pub fn system_now() -> std::time::Duration {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
}

/// [`system_now`] in epoch milliseconds.
pub fn system_now_ms() -> u64 {
    u64::try_from(system_now().as_millis()).unwrap_or(u64::MAX)
}

/// Days since 1970-01-01 to a proleptic Gregorian (year, month, day).
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
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

/// Days since 1970-01-01 of a proleptic Gregorian date.
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = i64::from(if m > 2 { m - 3 } else { m + 9 });
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn digits(s: &str, n: usize) -> Option<i64> {
    (s.len() == n && s.bytes().all(|b| b.is_ascii_digit()))
        .then(|| s.parse().ok())
        .flatten()
}

/// Parses an ISO 8601 date or date-time in UTC or with an offset: `2026-04-10`,
/// `2026-04-10T16:32`, `2026-04-10T16:32:50.5Z`, `2026-04-10T16:32:50-04:00` (no zone
/// means UTC). Returns the ts key of that instant.
pub fn parse_iso(s: &str) -> Option<TsKey> {
    let (date, rest) = match s.find(['T', 't', ' ']) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    let mut parts = date.split('-');
    let y = digits(parts.next()?, 4)?;
    let mo = u32::try_from(digits(parts.next()?, 2)?).ok()?;
    let d = u32::try_from(digits(parts.next()?, 2)?).ok()?;
    if parts.next().is_some() || !(1..=12).contains(&mo) || d == 0 {
        return None;
    }
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let month_days = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    if d > month_days[(mo - 1) as usize] {
        return None;
    }
    let mut secs = days_from_civil(y, mo, d) * 86_400;
    let mut nanos = 0u32;
    if let Some(rest) = rest {
        let (clock, offset) = if let Some(t) = rest.strip_suffix(['Z', 'z']) {
            (t, 0i64)
        } else if let Some(i) = rest.rfind(['+', '-']) {
            let (t, z) = rest.split_at(i);
            let sign = if z.starts_with('-') { -1 } else { 1 };
            let z = &z[1..];
            let (zh, zm) = match z.split_once(':') {
                Some((h, m)) => (digits(h, 2)?, digits(m, 2)?),
                None if z.len() == 4 => (digits(&z[..2], 2)?, digits(&z[2..], 2)?),
                None => (digits(z, 2)?, 0),
            };
            if zh > 23 || zm > 59 {
                return None;
            }
            (t, sign * (zh * 3600 + zm * 60))
        } else {
            (rest, 0)
        };
        let (hms, frac) = match clock.split_once(['.', ',']) {
            Some((a, f)) => (a, f),
            None => (clock, ""),
        };
        let mut f = hms.split(':');
        let h = digits(f.next()?, 2)?;
        let mi = digits(f.next()?, 2)?;
        let sec = match f.next() {
            Some(x) => digits(x, 2)?,
            None => 0,
        };
        if f.next().is_some() || h > 23 || mi > 59 || sec > 60 {
            return None;
        }
        if !frac.is_empty() {
            if frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            for i in 0..9 {
                nanos = nanos * 10 + frac.as_bytes().get(i).map_or(0, |b| u32::from(b - b'0'));
            }
        }
        secs += h * 3600 + mi * 60 + sec - offset;
    }
    Some((secs, nanos))
}

/// Parses an ISO 8601 duration of weeks, days, hours, minutes and seconds
/// (`P7D`, `PT24H`, `P1W`, `P1DT12H`) to milliseconds.
pub fn parse_duration_ms(s: &str) -> Option<u64> {
    let body = s.strip_prefix(['P', 'p'])?;
    if body.is_empty() {
        return None;
    }
    let mut ms: u64 = 0;
    let mut time = false;
    let mut num = String::new();
    let mut any = false;
    for c in body.chars() {
        match c.to_ascii_uppercase() {
            'T' if !time && num.is_empty() => time = true,
            d if d.is_ascii_digit() => num.push(d),
            unit => {
                let n: u64 = num.parse().ok()?;
                num.clear();
                let scale: u64 = match (unit, time) {
                    ('W', false) => 7 * 86_400_000,
                    ('D', false) => 86_400_000,
                    ('H', true) => 3_600_000,
                    ('M', true) => 60_000,
                    ('S', true) => 1_000,
                    _ => return None,
                };
                ms = ms.checked_add(n.checked_mul(scale)?)?;
                any = true;
            }
        }
    }
    (num.is_empty() && any).then_some(ms)
}

/// A `since` bound as a tool gets it: a platform ts (`"1775853170.228819"`), an ISO
/// 8601 date or date-time, or an ISO 8601 duration back from `now_ms` (`"P7D"`).
pub fn parse_since(s: &str, now_ms: u64) -> Option<TsKey> {
    let s = s.trim();
    if let Some(k) = ts_key(s) {
        return Some(k);
    }
    if let Some(ms) = parse_duration_ms(s) {
        let at = now_ms.saturating_sub(ms);
        return Some(((at / 1000) as i64, ((at % 1000) * 1_000_000) as u32));
    }
    parse_iso(s)
}

#[cfg(test)]
mod tests;
