use super::*;
use crate::model::Author;
use proptest::prelude::*;
use std::collections::BTreeMap;

fn msg(sec: i64, text: &str) -> Box<StoredMessage> {
    let author = Author {
        user_id: "U1".into(),
        display_name: "sam".into(),
        is_bot: false,
    };
    let ts = format!("{}.000100", 1_775_835_600 + sec);
    Box::new(StoredMessage::new(&ts, author, text).unwrap_or_else(|| panic!("ts")))
}

#[derive(Debug, Clone)]
enum Op {
    Insert(i64, u8),
    Remove(i64),
    PopFirst,
    Touch(i64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0i64..40, any::<u8>()).prop_map(|(k, t)| Op::Insert(k, t)),
        1 => (0i64..40).prop_map(Op::Remove),
        1 => Just(Op::PopFirst),
        1 => (0i64..40).prop_map(Op::Touch),
    ]
}

proptest! {
    /// Any sequence of insertions (at either end or in the middle), replacements,
    /// removals and evictions leaves the window holding what a B-tree would, in order.
    #[test]
    fn behaves_as_an_ordered_map(ops in prop::collection::vec(op(), 0..120), probe in 0i64..40) {
        let mut w = Window::default();
        let mut model: BTreeMap<TsKey, String> = BTreeMap::new();
        for o in ops {
            match o {
                Op::Insert(k, t) => {
                    let m = msg(k, &t.to_string());
                    let old = w.insert(m.clone()).map(|m| m.text.clone());
                    prop_assert_eq!(old, model.insert(m.key, m.text.clone()));
                }
                Op::Remove(k) => {
                    let key = msg(k, "").key;
                    prop_assert_eq!(w.remove(&key).map(|m| m.text.clone()), model.remove(&key));
                }
                Op::PopFirst => {
                    let got = w.pop_first().map(|m| (m.key, m.text.clone()));
                    prop_assert_eq!(got, model.pop_first());
                }
                Op::Touch(k) => {
                    let key = msg(k, "").key;
                    if let Some(m) = w.get_mut(&key) {
                        m.text.push('!');
                    }
                    if let Some(t) = model.get_mut(&key) {
                        t.push('!');
                    }
                }
            }
        }
        let held: Vec<(TsKey, String)> = w.values().map(|m| (m.key, m.text.clone())).collect();
        let want: Vec<(TsKey, String)> = model.iter().map(|(k, t)| (*k, t.clone())).collect();
        prop_assert_eq!(held, want);
        let key = msg(probe, "").key;
        prop_assert_eq!(w.count_before(key), model.range(..key).count());
        let before: Vec<TsKey> = w.before(key).rev().map(|m| m.key).collect();
        prop_assert_eq!(before, model.range(..key).rev().map(|(k, _)| *k).collect::<Vec<_>>());
        let from: Vec<TsKey> = w.from(key).map(|m| m.key).collect();
        prop_assert_eq!(from, model.range(key..).map(|(k, _)| *k).collect::<Vec<_>>());
        prop_assert_eq!(w.get(&key).map(|m| m.text.clone()), model.get(&key).cloned());
        prop_assert_eq!(w.len(), model.len());
    }
}
