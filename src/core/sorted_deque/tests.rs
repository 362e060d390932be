use super::*;
use proptest::prelude::*;
use std::collections::BTreeMap;

/// A key (seconds from the test's epoch) and a value that can change in place.
#[derive(Debug, Clone, PartialEq)]
struct Item {
    key: TsKey,
    value: String,
}

impl Keyed for Item {
    fn key(&self) -> TsKey {
        self.key
    }
}

fn key(sec: i64) -> TsKey {
    (1_775_835_600 + sec, 100_000)
}

#[derive(Debug, Clone)]
enum Op {
    Insert(i64, u8),
    Remove(i64),
    PopFirst,
    Touch(i64),
    TouchAll,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0i64..40, any::<u8>()).prop_map(|(k, t)| Op::Insert(k, t)),
        1 => (0i64..40).prop_map(Op::Remove),
        1 => Just(Op::PopFirst),
        1 => (0i64..40).prop_map(Op::Touch),
        1 => Just(Op::TouchAll),
    ]
}

proptest! {
    /// Any sequence of insertions (at either end or in the middle), replacements,
    /// removals, evictions and changes in place leaves the deque holding what a B-tree
    /// would, in order.
    #[test]
    fn behaves_as_an_ordered_map(ops in prop::collection::vec(op(), 0..120), probe in 0i64..40) {
        let mut d = SortedDeque::default();
        let mut model: BTreeMap<TsKey, String> = BTreeMap::new();
        for o in ops {
            match o {
                Op::Insert(k, t) => {
                    let item = Item { key: key(k), value: t.to_string() };
                    let old = d.insert(item.clone()).map(|i| i.value);
                    prop_assert_eq!(old, model.insert(item.key, item.value));
                }
                Op::Remove(k) => {
                    prop_assert_eq!(d.remove(&key(k)).map(|i| i.value), model.remove(&key(k)));
                }
                Op::PopFirst => {
                    let got = d.pop_first().map(|i| (i.key, i.value));
                    prop_assert_eq!(got, model.pop_first());
                }
                Op::Touch(k) => {
                    if let Some(i) = d.get_mut(&key(k)) {
                        i.value.push('!');
                    }
                    if let Some(t) = model.get_mut(&key(k)) {
                        t.push('!');
                    }
                }
                Op::TouchAll => {
                    d.iter_mut().for_each(|i| i.value.push('+'));
                    model.values_mut().for_each(|t| t.push('+'));
                }
            }
        }
        let held: Vec<(TsKey, String)> = d.iter().map(|i| (i.key, i.value.clone())).collect();
        let want: Vec<(TsKey, String)> = model.iter().map(|(k, t)| (*k, t.clone())).collect();
        prop_assert_eq!(held, want);
        let probe = key(probe);
        prop_assert_eq!(d.count_before(probe), model.range(..probe).count());
        let before: Vec<TsKey> = d.before(probe).rev().map(|i| i.key).collect();
        prop_assert_eq!(before, model.range(..probe).rev().map(|(k, _)| *k).collect::<Vec<_>>());
        let from: Vec<TsKey> = d.from(probe).map(|i| i.key).collect();
        prop_assert_eq!(from, model.range(probe..).map(|(k, _)| *k).collect::<Vec<_>>());
        prop_assert_eq!(d.get(&probe).map(|i| i.value.clone()), model.get(&probe).cloned());
        prop_assert_eq!(d.len(), model.len());
        prop_assert_eq!(d.is_empty(), model.is_empty());
    }
}
