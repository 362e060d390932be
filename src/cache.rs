//! The store's two cache shapes, both least-recently-used over the `lru` crate:
//!
//! - [`TtlCache`]: at most `max` entries, each valid for `ttl` milliseconds after it was
//!   written (the thread replies and thread starter caches).
//! - [`ByteCache`]: bounded by the total byte size of its values (`max_size`), for media.
//!
//! Time is always passed in (`now`, milliseconds): the caches never read a clock, so
//! TTL boundaries are tested exactly. An entry written at `t` with TTL `d` is fresh for
//! `now < t + d` and expired from `t + d` on.

use lru::LruCache;
use std::borrow::Borrow;
use std::hash::Hash;

/// Hit / miss / eviction counters, as `stats()` reports them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheCounters {
    pub hits: u64,
    pub misses: u64,
    /// Entries removed to make room (least recently used first).
    pub evictions: u64,
    /// Entries found past their TTL (counted once, when found or pruned).
    pub expirations: u64,
}

/// A value with the time it was written.
#[derive(Debug, Clone)]
pub struct Stamped<V> {
    pub value: V,
    pub written_at: u64,
}

/// What a lookup found.
#[derive(Debug)]
pub enum Lookup<'a, V> {
    Fresh(&'a mut V),
    /// Past its TTL; still held so it can be served stale (it is `age` ms old).
    Expired {
        value: &'a mut V,
        age: u64,
    },
    Missing,
}

/// Entry-bounded LRU cache whose entries expire `ttl` ms after they were written.
#[derive(Debug)]
pub struct TtlCache<K: Hash + Eq, V> {
    entries: LruCache<K, Stamped<V>>,
    max: usize,
    ttl: u64,
    pub counters: CacheCounters,
}

impl<K: Hash + Eq + Clone, V> TtlCache<K, V> {
    /// `max` of 0 means the cache holds nothing.
    pub fn new(max: usize, ttl: u64) -> Self {
        TtlCache {
            entries: LruCache::unbounded(),
            max,
            ttl,
            counters: CacheCounters::default(),
        }
    }

    pub fn max(&self) -> usize {
        self.max
    }

    pub fn ttl(&self) -> u64 {
        self.ttl
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn is_fresh(&self, written_at: u64, now: u64) -> bool {
        now < written_at.saturating_add(self.ttl)
    }

    /// Looks `key` up, marks it recently used, and counts a hit (fresh) or a miss
    /// (absent or expired; an expired entry is also counted as an expiration).
    pub fn lookup<Q>(&mut self, key: &Q, now: u64) -> Lookup<'_, V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let ttl = self.ttl;
        match self.entries.get_mut(key) {
            None => {
                self.counters.misses += 1;
                Lookup::Missing
            }
            Some(e) if now < e.written_at.saturating_add(ttl) => {
                self.counters.hits += 1;
                Lookup::Fresh(&mut e.value)
            }
            Some(e) => {
                self.counters.misses += 1;
                self.counters.expirations += 1;
                Lookup::Expired {
                    age: now.saturating_sub(e.written_at),
                    value: &mut e.value,
                }
            }
        }
    }

    /// The value if fresh, without touching recency or counters (for reads that are
    /// not cache lookups, such as computing thread activity).
    pub fn peek_fresh<Q>(&self, key: &Q, now: u64) -> Option<&V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.entries
            .peek(key)
            .filter(|e| self.is_fresh(e.written_at, now))
            .map(|e| &e.value)
    }

    /// The value whatever its age, without touching recency or counters.
    pub fn peek<Q>(&self, key: &Q) -> Option<&Stamped<V>>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.entries.peek(key)
    }

    /// Mutable access whatever the age, without touching recency or counters (for
    /// applying events to what is held).
    pub fn peek_mut<Q>(&mut self, key: &Q) -> Option<&mut Stamped<V>>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.entries.peek_mut(key)
    }

    /// Writes `value` at `now` (a rewrite restarts the TTL) and evicts the least
    /// recently used entries beyond `max`. Expired entries go first: they are pruned
    /// (counted as expirations) before anything fresh is evicted. Returns what left the
    /// cache (so an owner can drop what it keeps about those entries); with `max` 0
    /// nothing is stored and `value` itself comes back.
    pub fn insert(&mut self, key: K, value: V, now: u64) -> Vec<(K, V)> {
        if self.max == 0 {
            return vec![(key, value)];
        }
        let mut gone = Vec::new();
        self.entries.put(
            key,
            Stamped {
                value,
                written_at: now,
            },
        );
        if self.entries.len() > self.max {
            gone = self.prune_expired(now);
        }
        while self.entries.len() > self.max {
            match self.entries.pop_lru() {
                Some((k, e)) => gone.push((k, e.value)),
                None => break,
            }
            self.counters.evictions += 1;
        }
        gone
    }

    /// Removes every expired entry and returns them.
    pub fn prune_expired(&mut self, now: u64) -> Vec<(K, V)> {
        let ttl = self.ttl;
        let expired: Vec<K> = self
            .entries
            .iter()
            .filter(|(_, e)| now >= e.written_at.saturating_add(ttl))
            .map(|(k, _)| k.clone())
            .collect();
        let mut gone = Vec::with_capacity(expired.len());
        for k in expired {
            if let Some(e) = self.entries.pop(&k) {
                gone.push((k, e.value));
            }
            self.counters.expirations += 1;
        }
        gone
    }

    pub fn remove<Q>(&mut self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.entries.pop(key).map(|e| e.value)
    }

    /// Removes every entry for which `f` is true.
    pub fn retain(&mut self, mut f: impl FnMut(&K, &V) -> bool) {
        let gone: Vec<K> = self
            .entries
            .iter()
            .filter(|(k, e)| !f(k, &e.value))
            .map(|(k, _)| k.clone())
            .collect();
        for k in gone {
            self.entries.pop(&k);
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = (&K, &Stamped<V>)> {
        self.entries.iter()
    }

    pub fn iter_mut(&mut self) -> impl Iterator<Item = (&K, &mut Stamped<V>)> {
        self.entries.iter_mut()
    }
}

/// Something whose size a [`ByteCache`] counts.
pub trait ByteSized {
    fn byte_size(&self) -> u64;
}

/// LRU cache bounded by the total size of its values. A value larger than the bound is
/// never stored.
#[derive(Debug)]
pub struct ByteCache<K: Hash + Eq, V> {
    entries: LruCache<K, V>,
    max_size: u64,
    held: u64,
    pub counters: CacheCounters,
}

impl<K: Hash + Eq + Clone, V: ByteSized> ByteCache<K, V> {
    pub fn new(max_size: u64) -> Self {
        ByteCache {
            entries: LruCache::unbounded(),
            max_size,
            held: 0,
            counters: CacheCounters::default(),
        }
    }

    pub fn max_size(&self) -> u64 {
        self.max_size
    }

    /// Bytes currently held.
    pub fn size(&self) -> u64 {
        self.held
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Looks `key` up, counting a hit or a miss, and marks it recently used.
    pub fn get<Q>(&mut self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        match self.entries.get(key) {
            Some(v) => {
                self.counters.hits += 1;
                Some(v)
            }
            None => {
                self.counters.misses += 1;
                None
            }
        }
    }

    pub fn contains<Q>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.entries.contains(key)
    }

    /// Stores `value` unless it alone exceeds the bound (returns false then), evicting
    /// least recently used values until it fits.
    pub fn insert(&mut self, key: K, value: V) -> bool {
        let size = value.byte_size();
        if size > self.max_size {
            return false;
        }
        if let Some(old) = self.entries.pop(&key) {
            self.held -= old.byte_size();
        }
        while self.held + size > self.max_size {
            match self.entries.pop_lru() {
                Some((_, v)) => {
                    self.held -= v.byte_size();
                    self.counters.evictions += 1;
                }
                None => break,
            }
        }
        self.held += size;
        self.entries.put(key, value);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    impl ByteSized for Vec<u8> {
        fn byte_size(&self) -> u64 {
            self.len() as u64
        }
    }

    #[test]
    fn ttl_entry_is_fresh_until_exactly_ttl_then_expired() {
        let mut c: TtlCache<String, u32> = TtlCache::new(10, 300_000);
        c.insert("t".into(), 1, 1_000);
        assert!(matches!(c.lookup("t", 1_000 + 299_999), Lookup::Fresh(_)));
        assert!(matches!(
            c.lookup("t", 1_000 + 300_000),
            Lookup::Expired { age: 300_000, .. }
        ));
        assert_eq!(
            c.counters,
            CacheCounters {
                hits: 1,
                misses: 1,
                evictions: 0,
                expirations: 1
            }
        );
    }

    #[test]
    fn ttl_rewrite_restarts_the_clock() {
        let mut c: TtlCache<String, u32> = TtlCache::new(10, 100);
        c.insert("t".into(), 1, 0);
        c.insert("t".into(), 2, 90);
        assert!(matches!(c.lookup("t", 150), Lookup::Fresh(&mut 2)));
    }

    #[test]
    fn ttl_cache_evicts_least_recently_used_beyond_max() {
        let mut c: TtlCache<String, u32> = TtlCache::new(2, 1_000);
        c.insert("a".into(), 1, 0);
        c.insert("b".into(), 2, 0);
        let _ = c.lookup("a", 1); // a is now more recent than b
        c.insert("c".into(), 3, 2);
        assert!(c.peek("b").is_none());
        assert!(c.peek("a").is_some() && c.peek("c").is_some());
        assert_eq!(c.counters.evictions, 1);
    }

    #[test]
    fn ttl_cache_drops_expired_entries_before_evicting_fresh_ones() {
        let mut c: TtlCache<String, u32> = TtlCache::new(2, 100);
        c.insert("old".into(), 1, 0);
        c.insert("fresh".into(), 2, 50);
        let _ = c.lookup("old", 60); // most recent, but will be expired at 120
        c.insert("new".into(), 3, 120);
        assert!(c.peek("old").is_none());
        assert!(c.peek("fresh").is_some());
        assert_eq!(c.counters.evictions, 0);
        assert_eq!(c.counters.expirations, 1);
    }

    #[test]
    fn byte_cache_never_stores_an_item_larger_than_the_bound() {
        let mut c: ByteCache<String, Vec<u8>> = ByteCache::new(10);
        assert!(!c.insert("big".into(), vec![0; 11]));
        assert!(c.is_empty());
        assert!(c.insert("exact".into(), vec![0; 10]));
        assert_eq!(c.size(), 10);
    }

    #[test]
    fn byte_cache_evicts_lru_until_the_new_item_fits() {
        let mut c: ByteCache<String, Vec<u8>> = ByteCache::new(10);
        c.insert("a".into(), vec![0; 4]);
        c.insert("b".into(), vec![0; 4]);
        let _ = c.get("a");
        c.insert("c".into(), vec![0; 4]);
        assert!(c.contains("a") && c.contains("c") && !c.contains("b"));
        assert_eq!(c.size(), 8);
        assert_eq!(c.counters.evictions, 1);
    }

    proptest! {
        #[test]
        fn ttl_cache_never_exceeds_max(ops in proptest::collection::vec((0u8..20, 0u64..50), 0..300), max in 0usize..8) {
            let mut c: TtlCache<u8, u64> = TtlCache::new(max, 200);
            let mut now = 0;
            for (k, dt) in ops {
                now += dt;
                if k % 3 == 0 { let _ = c.lookup(&k, now); } else { c.insert(k, now, now); }
                prop_assert!(c.len() <= max);
                if let Some(e) = c.peek(&k) { prop_assert!(e.written_at <= now); }
            }
        }

        #[test]
        fn byte_cache_never_exceeds_max_size(sizes in proptest::collection::vec((0u8..30, 0usize..40), 0..300), max in 0u64..100) {
            let mut c: ByteCache<u8, Vec<u8>> = ByteCache::new(max);
            for (k, n) in sizes {
                let stored = c.insert(k, vec![0; n]);
                prop_assert_eq!(stored, n as u64 <= max);
                prop_assert!(c.size() <= max);
                let total: u64 = (0u8..30).filter_map(|k| c.entries.peek(&k)).map(|v| v.len() as u64).sum();
                prop_assert_eq!(total, c.size());
            }
        }
    }
}
