use super::*;
use proptest::prelude::*;

#[test]
fn is_as_small_as_a_string_and_keeps_a_slack_ts_inline() {
    assert_eq!(std::mem::size_of::<ShortStr>(), 24);
    let ts = ShortStr::new("1775835600.000100");
    assert_eq!(ts.heap_bytes(), 0);
    assert_eq!(ts, "1775835600.000100");
}

#[test]
fn the_inline_limit_is_twenty_three_bytes() {
    let at = "x".repeat(INLINE_BYTES);
    let past = "x".repeat(INLINE_BYTES + 1);
    assert_eq!(ShortStr::new(&at).heap_bytes(), 0);
    assert_eq!(ShortStr::new(&past).heap_bytes(), INLINE_BYTES + 1);
    assert_eq!(ShortStr::default(), "");
}

proptest! {
    /// Any text reads back as it was given, compares and hashes as that text.
    #[test]
    fn reads_back_what_it_was_given(s in "\\PC{0,30}") {
        let short = ShortStr::from(s.as_str());
        prop_assert_eq!(short.as_str(), s.as_str());
        prop_assert_eq!(&short, &s);
        prop_assert_eq!(short.clone(), ShortStr::from(s.clone()));
        let h = |x: &dyn Fn(&mut std::collections::hash_map::DefaultHasher)| {
            use std::hash::Hasher;
            let mut st = std::collections::hash_map::DefaultHasher::new();
            x(&mut st);
            st.finish()
        };
        use std::hash::Hash;
        prop_assert_eq!(h(&|st| short.hash(st)), h(&|st| s.as_str().hash(st)));
    }
}
