use super::*;
use proptest::prelude::*;

#[test]
fn short_and_long_terms_keep_their_ids() {
    let mut t = TermTable::default();
    let mut next = 0u32;
    let mut id = |t: &mut TermTable, s: &str| {
        t.get_or_insert(s, || {
            next += 1;
            next - 1
        })
    };
    let fifteen = "a".repeat(INLINE_BYTES);
    let sixteen = "a".repeat(INLINE_BYTES + 1);
    assert_eq!(id(&mut t, "deploy"), 0);
    assert_eq!(id(&mut t, &fifteen), 1);
    assert_eq!(id(&mut t, &sixteen), 2);
    assert_eq!(id(&mut t, "deploy"), 0);
    assert_eq!(id(&mut t, &sixteen), 2);
    assert_eq!(t.get(&fifteen), Some(1));
    assert_eq!(t.get(&sixteen), Some(2));
    assert_eq!(t.get("deplo"), None);
    assert_eq!(t.len(), 3);
    t.retain(|id| {
        *id *= 10;
        *id != 10
    });
    assert_eq!(t.get("deploy"), Some(0));
    assert_eq!(t.get(&fifteen), None);
    assert_eq!(t.get(&sixteen), Some(20));
    assert_eq!(t.len(), 2);
}

#[test]
fn a_short_term_entry_takes_24_bytes() {
    assert_eq!(std::mem::size_of::<(InlineKey, u32)>(), 24);
}

#[test]
fn a_trailing_nul_is_not_the_shorter_term() {
    let mut t = TermTable::default();
    t.get_or_insert("ab", || 7);
    assert_eq!(t.get("ab\0"), None);
    assert_eq!(t.get("ab"), Some(7));
}

proptest! {
    /// The table answers as a plain map of strings does, for terms on both sides of the
    /// inline length.
    #[test]
    fn answers_as_a_string_map(words in prop::collection::vec("[a-c\\x00é]{0,18}", 0..60)) {
        let mut t = TermTable::default();
        let mut reference: std::collections::HashMap<String, u32> = Default::default();
        for w in &words {
            let n = reference.len() as u32;
            let want = *reference.entry(w.clone()).or_insert(n);
            prop_assert_eq!(t.get_or_insert(w, || n), want);
        }
        prop_assert_eq!(t.len(), reference.len());
        for (w, id) in &reference {
            prop_assert_eq!(t.get(w), Some(*id));
        }
    }
}
