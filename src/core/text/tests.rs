use super::*;
use proptest::prelude::*;

#[test]
fn constants_match_the_seed() {
    assert_eq!(THREAD_BUDGET_TOKENS, 8000);
    assert_eq!(SNIPPET_MAX_CHARS, 150);
    assert_eq!(REPLY_MAX_TOKENS, 300);
}

#[test]
fn to_utf16_decodes_every_width_at_every_offset_of_a_block() {
    // Each width of character, at each offset of a 16-byte block, before and after a
    // block boundary, alone and in runs.
    for c in ['é', 'デ', '🚀'] {
        for offset in 0..40 {
            for run in 1..4 {
                let s = format!(
                    "{}{}tail of ascii",
                    "a".repeat(offset),
                    c.to_string().repeat(run)
                );
                assert_eq!(
                    to_utf16(&s),
                    s.encode_utf16().collect::<Vec<u16>>(),
                    "{s:?}"
                );
            }
        }
    }
}

#[test]
fn utf16_len_counts_like_js_length() {
    assert_eq!(utf16_len(""), 0);
    assert_eq!(utf16_len("abc"), 3);
    assert_eq!(utf16_len("é"), 1);
    assert_eq!(utf16_len("デプロイ"), 4);
    assert_eq!(utf16_len("😀"), 2);
    assert_eq!(utf16_len("a😀b"), 4);
}

#[test]
fn estimate_tokens_is_ceil_of_quarter_units() {
    assert_eq!(estimate_tokens(""), 0);
    assert_eq!(estimate_tokens("a"), 1);
    assert_eq!(estimate_tokens("abcd"), 1);
    assert_eq!(estimate_tokens("abcde"), 2);
    assert_eq!(estimate_tokens("😀"), 1);
    assert_eq!(estimate_tokens("😀😀😀"), 2);
}

#[test]
fn snippet_collapses_whitespace_and_trims() {
    assert_eq!(truncate_snippet("  hello \n\t world  "), "hello world");
    assert_eq!(truncate_snippet("a\u{00A0}\u{3000}b"), "a b");
    assert_eq!(truncate_snippet("   "), "");
}

#[test]
fn snippet_of_exactly_150_units_is_untouched() {
    let s = "x".repeat(150);
    assert_eq!(truncate_snippet(&s), s);
}

#[test]
fn snippet_over_150_units_is_149_plus_ellipsis() {
    let s = "x".repeat(151);
    let out = truncate_snippet(&s);
    assert_eq!(utf16_len(&out), 150);
    assert!(out.ends_with('…'));
    assert_eq!(&out[..149], &s[..149]);
}

#[test]
fn snippet_never_splits_an_emoji() {
    // 148 ASCII units, then an emoji occupying units 148..150.
    let s = format!("{}😀{}", "x".repeat(148), "y".repeat(10));
    let out = truncate_snippet(&s);
    assert_eq!(out, format!("{}…", "x".repeat(148)));
    // 147 ASCII units: the emoji fits in 147..149.
    let s = format!("{}😀{}", "x".repeat(147), "y".repeat(10));
    assert_eq!(truncate_snippet(&s), format!("{}😀…", "x".repeat(147)));
}

#[test]
fn snippet_reads_only_a_prefix() {
    let s = "word ".repeat(2_000_000);
    let out = truncate_snippet(&s);
    assert_eq!(utf16_len(&out), 150);
}

#[test]
fn reply_truncation_cuts_to_1199_units_and_ellipsis() {
    assert_eq!(truncate_reply(&"a".repeat(1200)), None);
    let out = truncate_reply(&"a".repeat(1201)).unwrap_or_default();
    assert_eq!(utf16_len(&out), 1200);
    assert_eq!(estimate_tokens(&out), 300);
    let s = format!("{}😀tail", "a".repeat(1198));
    let out = truncate_reply(&s).unwrap_or_default();
    assert_eq!(out, format!("{}…", "a".repeat(1198)));
}

/// A cut as its rule says it: chars kept while they fit in `max_units - 1` units.
fn cut_by_chars(s: &str, max_units: usize) -> Option<String> {
    if utf16_len(s) <= max_units {
        return None;
    }
    let mut used = 0;
    let mut out = String::new();
    for c in s.chars() {
        if used + c.len_utf16() > max_units - 1 {
            break;
        }
        used += c.len_utf16();
        out.push(c);
    }
    out.push('…');
    Some(out)
}

proptest! {
    /// A cut told only the unit it looks at ([`cut_end_units`], as the drop-in's JavaScript
    /// side cuts the caller's string) ends where the cut of the text does.
    #[test]
    fn a_cut_ends_where_its_probe_unit_says(
        chars in proptest::collection::vec(prop_oneof!["a", "é", "😀", "デ"], 0..80),
        max in 2usize..60,
    ) {
        let s = chars.concat();
        let units: Vec<u16> = s.encode_utf16().collect();
        let want = cut_by_chars(&s, max);
        prop_assert_eq!(truncate_units(&s, max), want.clone());
        if let Some(cut) = want {
            let probe = units.get(cut_probe_unit(max)).copied().unwrap_or(0);
            let end = cut_end_units(max, probe);
            let mut sliced = String::from_utf16_lossy(&units[..end]);
            sliced.push('…');
            prop_assert_eq!(sliced, cut);
        }
    }

    #[test]
    fn to_utf16_matches_encode_utf16(s in "\\PC*") {
        prop_assert_eq!(to_utf16(&s), s.encode_utf16().collect::<Vec<u16>>());
    }

    #[test]
    fn to_utf16_into_a_reused_buffer_writes_only_the_new_units(
        first in "\\PC{0,300}",
        second in "\\PC{0,300}",
    ) {
        let mut buf = Vec::new();
        prop_assert_eq!(to_utf16_into(&first, &mut buf).to_vec(), first.encode_utf16().collect::<Vec<u16>>());
        let kept = buf.len();
        prop_assert_eq!(to_utf16_into(&second, &mut buf).to_vec(), second.encode_utf16().collect::<Vec<u16>>());
        prop_assert_eq!(buf.len(), kept.max(second.len()));
    }

    #[test]
    fn ascii_prefix_stops_at_the_first_byte_beyond_ascii(s in "[ -~]{0,40}[\u{80}-\u{10ffff}]?\\PC{0,8}") {
        let expected = s.bytes().position(|b| b >= 0x80).unwrap_or(s.len());
        prop_assert_eq!(ascii_prefix(s.as_bytes()), expected);
    }

    #[test]
    fn to_utf16_matches_encode_utf16_across_ascii_blocks(
        s in "([ -~]{0,19}[\u{80}-\u{7ff}\u{800}-\u{ffff}\u{10000}-\u{10ffff}]{0,3}){0,12}"
    ) {
        prop_assert_eq!(to_utf16(&s), s.encode_utf16().collect::<Vec<u16>>());
    }

    #[test]
    fn snippet_is_bounded_and_a_clean_prefix(s in "\\PC{0,400}") {
        let out = truncate_snippet(&s);
        prop_assert!(utf16_len(&out) <= SNIPPET_MAX_CHARS);
        let replacement = char::REPLACEMENT_CHARACTER;
        prop_assert!(!out.contains(replacement) || s.contains(replacement));
        let collapsed: Vec<&str> = s.split(|c: char| c.len_utf16() == 1 && is_js_whitespace(c as u16)).filter(|w| !w.is_empty()).collect();
        let full = collapsed.join(" ");
        if utf16_len(&full) <= SNIPPET_MAX_CHARS {
            prop_assert_eq!(out, full);
        } else {
            let body = out.strip_suffix('…').unwrap_or("");
            prop_assert!(full.starts_with(body));
            prop_assert!(utf16_len(body) >= SNIPPET_MAX_CHARS - 2);
        }
    }

    #[test]
    fn str_and_utf16_snippets_agree(s in "(\\PC|\\s|😀){0,400}") {
        let via_units = String::from_utf16_lossy(&snippet_units(s.encode_utf16()));
        prop_assert_eq!(truncate_snippet(&s), via_units);
    }

    #[test]
    fn truncate_units_fits_and_is_a_prefix(s in "\\PC{0,300}", max in 1usize..200) {
        match truncate_units(&s, max) {
            None => prop_assert!(utf16_len(&s) <= max),
            Some(out) => {
                prop_assert!(utf16_len(&out) <= max);
                prop_assert!(utf16_len(&out) + 1 >= max);
                let body = out.strip_suffix('…').unwrap_or("");
                prop_assert!(s.starts_with(body));
            }
        }
    }
}
