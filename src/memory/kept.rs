//! What a store keeps of what it read, least recently used out first once the kept
//! values weigh more than a bound (their bytes, or their rows): for reads of what never
//! changes once stored (see [`crate::memory::postings`] and the messages a store keeps).

use lru::LruCache;
use std::hash::Hash;

/// Values by key, each with its weight, the total kept within `limit`; a value weighing
/// more than an eighth of the limit is not kept (it would push out most of the rest).
#[derive(Debug)]
pub struct Weighed<K: Hash + Eq, V> {
    values: LruCache<K, (V, usize)>,
    total: usize,
    limit: usize,
}

impl<K: Hash + Eq, V> Weighed<K, V> {
    /// Nothing kept, at most `limit` in all.
    pub fn new(limit: usize) -> Self {
        Weighed {
            values: LruCache::unbounded(),
            total: 0,
            limit,
        }
    }

    /// The value kept for `key`, now the most recently used.
    pub fn get(&mut self, key: &K) -> Option<&V> {
        self.values.get(key).map(|(v, _)| v)
    }

    /// Takes the value kept for `key` out.
    pub fn take(&mut self, key: &K) -> Option<V> {
        let (v, w) = self.values.pop(key)?;
        self.total -= w;
        Some(v)
    }

    /// Keeps `value` for `key` (in place of one kept before) unless it weighs more than an
    /// eighth of the limit; the least recently used go until the total is within it.
    pub fn put(&mut self, key: K, value: V, weight: usize) {
        if let Some((_, w)) = self.values.pop(&key) {
            self.total -= w;
        }
        if weight > self.limit / 8 {
            return;
        }
        self.values.put(key, (value, weight));
        self.total += weight;
        while self.total > self.limit {
            match self.values.pop_lru() {
                Some((_, (_, w))) => self.total -= w,
                None => break,
            }
        }
    }

    /// What the kept values weigh.
    pub fn total(&self) -> usize {
        self.total
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_least_recently_used_go_first_and_a_heavy_value_is_not_kept() {
        let mut kept = Weighed::new(80);
        kept.put(1, "a", 10);
        kept.put(2, "b", 10);
        assert_eq!(kept.get(&1), Some(&"a"));
        for k in 3..=9 {
            kept.put(k, "c", 10);
        }
        // 90 over 80: the least recently used (2, since 1 was read) went.
        assert_eq!(kept.get(&2), None);
        assert_eq!(kept.get(&1), Some(&"a"));
        assert_eq!(kept.total(), 80);
        kept.put(10, "heavy", 11);
        assert_eq!(kept.get(&10), None);
        assert_eq!(kept.take(&1), Some("a"));
        assert_eq!(kept.total(), 70);
    }

    proptest! {
        /// Whatever is put and taken, the total is what the kept values weigh, within
        /// the limit.
        #[test]
        fn the_total_is_the_kept_weight_within_the_limit(
            ops in proptest::collection::vec((0u8..20, 0usize..40, proptest::bool::ANY), 1..200)
        ) {
            let mut kept = Weighed::new(100);
            for (key, weight, take) in ops {
                if take {
                    kept.take(&key);
                } else {
                    kept.put(key, (), weight);
                }
                let sum: usize = kept.values.iter().map(|(_, (_, w))| *w).sum();
                prop_assert_eq!(sum, kept.total());
                prop_assert!(kept.total() <= 100);
            }
        }
    }
}
