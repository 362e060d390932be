use super::*;
use crate::core::model::ChannelSnapshotInput;

fn err(json: &str) -> InputError {
    match parse::<ChannelSnapshotInput>(json, "") {
        Ok(_) => panic!("expected an error for {json}"),
        Err(e) => e,
    }
}

const OK_MSG: &str = r#"{"ts":"1.1","author":{"userId":"U","displayName":"S"},"text":"t"}"#;

#[test]
fn wrong_type_names_the_path() {
    let bad = r#"{"ts":3,"author":{"userId":"U","displayName":"S"},"text":"t"}"#;
    let json = format!(
        r#"{{"channel":{{"id":"C","name":"n","platform":"slack"}},"anchor":{OK_MSG},"adjacentMessages":[{OK_MSG},{OK_MSG},{OK_MSG},{bad}]}}"#
    );
    let e = err(&json);
    assert_eq!(e.kind, ErrorKind::Type);
    assert_eq!(e.path, "adjacentMessages[3].ts");
    assert_eq!(e.message, "expected a string, got integer `3`");
}

#[test]
fn missing_field_names_the_field() {
    let e = err(r#"{"channel":{"id":"C","name":"n"},"anchor":{}}"#);
    assert_eq!(e.kind, ErrorKind::Type);
    assert_eq!(e.path, "channel.platform");
    assert_eq!(e.message, "is required");
    let e = err(r#"{"channel":{"id":"C","name":"n","platform":"p"}}"#);
    assert_eq!(e.path, "anchor");
}

#[test]
fn negative_count_is_a_range_error() {
    let bad = r#"{"ts":"1","author":{"userId":"U","displayName":"S"},"text":"t","replyCount":-2}"#;
    let json =
        format!(r#"{{"channel":{{"id":"C","name":"n","platform":"slack"}},"anchor":{bad}}}"#);
    let e = err(&json);
    assert_eq!(e.kind, ErrorKind::Range);
    assert_eq!(e.path, "anchor.replyCount");
}

#[test]
fn root_prefixes_paths() {
    let e = parse::<ChannelSnapshotInput>("[]", "input").err();
    assert_eq!(
        e.map(|e| (e.path, e.kind)),
        Some(("input".to_string(), ErrorKind::Type))
    );
}

#[test]
fn lone_surrogates_are_repaired_pairs_kept() {
    let mut s = r#"["a\ud800b","\udc00","\ud83d\ude00","\\ud800"]"#.to_string();
    assert_eq!(repair_lone_surrogates(&mut s), vec![3, 13]);
    assert_eq!(s, r#"["a\uFFFDb","\uFFFD","\ud83d\ude00","\\ud800"]"#);
    let v: Vec<String> = serde_json::from_str(&s).unwrap_or_default();
    assert_eq!(v, vec!["a\u{FFFD}b", "\u{FFFD}", "😀", "\\ud800"]);
}

#[test]
fn lone_surrogates_are_traced_to_their_id_field() {
    let find = |json: &str| {
        let mut s = json.to_string();
        let fixes = repair_lone_surrogates(&mut s);
        id_with_lone_surrogate(&s, &fixes).map(|(_, k)| k.to_string())
    };
    assert_eq!(
        find(r#"{"channelId":"C\ud800","text":"x"}"#).as_deref(),
        Some("channelId")
    );
    assert_eq!(find(r#"{"channelId":"C","text":"x\ud800"}"#), None);
    assert_eq!(
        find(r#"{"a":{"text":"ok","ts":"1.2\udc00"}}"#).as_deref(),
        Some("ts")
    );
    assert_eq!(
        find(r#"{"message_ids":["1.1","2\\\"\ud800"]}"#).as_deref(),
        Some("message_ids")
    );
    assert_eq!(find(r#"{"tags":["\ud800"]}"#), None);
    assert_eq!(find(r#"{"k\ud800":"v"}"#), None);
    assert_eq!(find(r#"{"text":"\"channelId\":\"\ud800"}"#), None);
    assert!(has_lone_surrogate(&[0x43, 0xD800]));
    assert!(has_lone_surrogate(&[0xDC00, 0x43]));
    assert!(!has_lone_surrogate(&[0xD83D, 0xDE00]));
}

#[test]
fn nulls_that_may_hide_a_nan_are_told_from_ordinary_ones() {
    assert!(!may_hide_non_finite(
        r#"{"threadId":null,"media":null,"text":"null"}"#
    ));
    assert!(may_hide_non_finite(
        r#"{"threadId":null,"windowSize":null}"#
    ));
    assert!(may_hide_non_finite(r#"{"a":[1,null]}"#));
    assert!(!may_hide_non_finite(r#"{"text":"[1,null]"}"#));
    assert!(!may_hide_non_finite(r#"{"a":1}"#));
}

#[test]
fn paths_are_found_by_position() {
    let j = r#"{"a":1,"events":[{"x":"1"},{"message":{"ts":"TARGET","k":[1,2]}}]}"#;
    let at = j.find("TARGET").unwrap_or(0);
    assert_eq!(path_at(j, at, ""), "events[1].message.ts");
    assert_eq!(path_at(j, at, "input"), "input.events[1].message.ts");
    let j = r#"{"ids":["a","b\"c","TARGET"]}"#;
    assert_eq!(path_at(j, j.find("TARGET").unwrap_or(0), "x"), "x.ids[2]");
    let j = r#"{"options":{"windowSize":"\u0000non-finite:NaN"}}"#;
    let e = non_finite_error(j, "");
    assert_eq!(
        e.map(|e| (e.kind, e.path, e.message)),
        Some((
            ErrorKind::Range,
            "options.windowSize".to_string(),
            "expected a finite number, got NaN".to_string()
        ))
    );
}

#[test]
fn budgets_reject_nan_infinity_and_negatives() {
    assert_eq!(budget_tokens(8000.0, "b"), Ok(8000));
    assert_eq!(budget_tokens(10.9, "b"), Ok(10));
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -1.0] {
        assert_eq!(
            budget_tokens(bad, "b").map_err(|e| e.kind),
            Err(ErrorKind::Range)
        );
    }
}

mod utf16 {
    use super::super::string_of_units;
    use proptest::prelude::*;

    /// Units drawn so that surrogates (paired, lone, reversed) are common.
    fn unit() -> impl Strategy<Value = u16> {
        prop_oneof![
            0u16..0x80,
            0x80u16..0x800,
            0x800u16..0xD800,
            0xD800u16..0xDC00,
            0xDC00u16..0xE000,
            0xE000u16..=0xFFFF,
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        #[test]
        fn decodes_as_std_lossy_with_one_byte_to_spare(units in prop::collection::vec(unit(), 0..64)) {
            let s = string_of_units(&units);
            prop_assert_eq!(&s, &String::from_utf16_lossy(&units));
            // One byte to spare: the byte a store adds to a text it takes in.
            prop_assert_eq!(s.capacity(), s.len() + 1);
        }

        /// ASCII runs of every length between other units: the eight-unit blocks and
        /// the run's ragged end are decoded like the rest.
        #[test]
        fn ascii_runs_decode_as_std_lossy(
            parts in prop::collection::vec((prop::collection::vec(0u16..0x80, 0..40), unit()), 0..8)
        ) {
            let units: Vec<u16> = parts
                .iter()
                .flat_map(|(run, u)| run.iter().copied().chain(std::iter::once(*u)))
                .collect();
            let s = string_of_units(&units);
            prop_assert_eq!(&s, &String::from_utf16_lossy(&units));
            prop_assert_eq!(s.capacity(), s.len() + 1);
        }
    }

    #[test]
    fn every_width_at_every_offset_of_a_block() {
        // Each width of character and a lone surrogate, at each offset of a 16-unit
        // block, before and after a block boundary, alone and in runs.
        for c in ["é", "デ", "🚀", "\u{FFFD}"] {
            for offset in 0..40 {
                for run in 1..4 {
                    let s = format!("{}{}tail of ascii", "a".repeat(offset), c.repeat(run));
                    let units: Vec<u16> = s.encode_utf16().collect();
                    assert_eq!(string_of_units(&units), s, "{s:?}");
                    let mut lone = units.clone();
                    lone.insert(offset, 0xD83D);
                    assert_eq!(string_of_units(&lone), String::from_utf16_lossy(&lone));
                }
            }
        }
    }

    #[test]
    fn pairs_lone_and_reversed_surrogates() {
        let rocket = [0xD83D, 0xDE80];
        assert_eq!(string_of_units(&rocket), "🚀");
        assert_eq!(string_of_units(&[0xD83D, 0x41]), "\u{FFFD}A");
        assert_eq!(string_of_units(&[0xDE80, 0xD83D]), "\u{FFFD}\u{FFFD}");
        let mixed: Vec<u16> = "Überprüfung デプロイ 🚀".encode_utf16().collect();
        let s = string_of_units(&mixed);
        assert_eq!(s, "Überprüfung デプロイ 🚀");
        assert_eq!(s.capacity(), s.len() + 1);
    }
}

mod packed_short_ids {
    use super::super::PackedFields;

    #[test]
    fn ids_are_kept_exactly_inline_or_not_and_lone_surrogates_refused() {
        let long = "D".repeat(40);
        let fields = ["1775835600.000100", long.as_str(), "Überprüfung", ""];
        let mut units: Vec<u16> = Vec::new();
        let mut lens = Vec::new();
        for f in fields {
            let u: Vec<u16> = f.encode_utf16().collect();
            lens.push(u.len() as u32);
            units.extend(u);
        }
        units.push(0xD83D);
        lens.push(1);
        let mut p = PackedFields::new(&units, &lens, "events");
        for f in fields {
            let got = p.short_id(|| "x".into()).unwrap_or_default();
            assert_eq!(got, f);
            assert_eq!(got.heap_bytes(), if f.len() > 23 { f.len() } else { 0 });
        }
        let err = p.short_id(|| "events[4].message.ts".into());
        assert!(err.is_err_and(|e| e.to_string().contains("events[4].message.ts")));
    }
}
