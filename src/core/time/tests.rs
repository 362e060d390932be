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

#[test]
fn iso_dates_and_times_parse_to_ts_keys() {
    assert_eq!(
        parse_iso("2026-04-10T20:32:50.228819Z"),
        ts_key("1775853170.228819")
    );
    assert_eq!(
        parse_iso("2026-04-10T16:32:50.228819-04:00"),
        ts_key("1775853170.228819")
    );
    assert_eq!(
        parse_iso("2026-04-10T22:32:50.228819+0200"),
        ts_key("1775853170.228819")
    );
    assert_eq!(parse_iso("2026-04-10"), Some((1_775_779_200, 0)));
    assert_eq!(parse_iso("2026-04-10T20:32"), Some((1_775_853_120, 0)));
    assert_eq!(parse_iso("2000-02-29"), Some((951_782_400, 0)));
    for bad in [
        "2026-02-30",
        "2026-13-01",
        "2026-4-10",
        "yesterday",
        "",
        "2026-04-10T25:00",
        "2026-04-10T10:00+5",
    ] {
        assert_eq!(parse_iso(bad), None, "{bad}");
    }
}

#[test]
fn durations_and_since_forms() {
    assert_eq!(parse_duration_ms("P7D"), Some(7 * 86_400_000));
    assert_eq!(parse_duration_ms("PT24H"), Some(86_400_000));
    assert_eq!(parse_duration_ms("P1W"), Some(7 * 86_400_000));
    assert_eq!(
        parse_duration_ms("P1DT12H30M"),
        Some(86_400_000 + 12 * 3_600_000 + 30 * 60_000)
    );
    for bad in ["P", "PT", "P1H", "7d", "P1Y", "PD"] {
        assert_eq!(parse_duration_ms(bad), None, "{bad}");
    }
    let now = 1_775_853_170_000;
    assert_eq!(parse_since("P1D", now), Some((1_775_766_770, 0)));
    assert_eq!(
        parse_since(" 1775853170.228819 ", now),
        ts_key("1775853170.228819")
    );
    assert_eq!(parse_since("2026-04-10", now), Some((1_775_779_200, 0)));
    assert_eq!(parse_since("last week", now), None);
}

proptest::proptest! {
    #[test]
    fn iso_round_trips_through_to_iso(secs in 0i64..253_402_300_799, frac in "[0-9]{0,6}") {
        let iso = iso_from_epoch(secs, &frac);
        let key = parse_iso(&iso);
        let ts = if frac.is_empty() { secs.to_string() } else { format!("{secs}.{frac}") };
        proptest::prop_assert_eq!(key, ts_key(&ts));
    }
}
