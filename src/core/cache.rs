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
use std::collections::HashSet;
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

/// The keys of a collection that changed since they were last taken, recorded only once
/// tracking is on (a collection nobody saves pays one branch per change).
#[derive(Debug)]
pub struct Changed<K>(Option<HashSet<K>>);

impl<K> Default for Changed<K> {
    fn default() -> Self {
        Changed(None)
    }
}

impl<K: Hash + Eq + Clone> Changed<K> {
    /// Starts recording.
    pub fn track(&mut self) {
        self.0.get_or_insert_with(HashSet::new);
    }

    /// Records `key` (while tracking).
    pub fn mark<Q>(&mut self, key: &Q)
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        if let Some(c) = &mut self.0 {
            if !c.contains(key) {
                c.insert(key.to_owned());
            }
        }
    }

    /// Something was recorded since the last [`Changed::take`].
    pub fn any(&self) -> bool {
        self.0.as_ref().is_some_and(|c| !c.is_empty())
    }

    /// What was recorded since the last call; tracking stays on.
    pub fn take(&mut self) -> Vec<K> {
        match &mut self.0 {
            Some(c) => c.drain().collect(),
            None => Vec::new(),
        }
    }
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
    /// Keys written, changed or removed since [`TtlCache::take_changed`] (for
    /// persistence).
    changed: Changed<K>,
}

impl<K: Hash + Eq + Clone, V> TtlCache<K, V> {
    /// `max` of 0 means the cache holds nothing.
    pub fn new(max: usize, ttl: u64) -> Self {
        TtlCache {
            entries: LruCache::unbounded(),
            max,
            ttl,
            counters: CacheCounters::default(),
            changed: Changed::default(),
        }
    }

    /// Starts recording which keys change (see [`TtlCache::take_changed`]).
    pub fn track_changes(&mut self) {
        self.changed.track();
    }

    /// Records that `key` changed (while tracking is on).
    pub fn mark_changed(&mut self, key: &K) {
        self.changed.mark(key);
    }

    /// Whether a key changed since the last [`TtlCache::take_changed`].
    pub fn has_changes(&self) -> bool {
        self.changed.any()
    }

    /// The keys written, changed through [`TtlCache::peek_mut`], evicted, pruned or
    /// removed since the last call; tracking stays on.
    pub fn take_changed(&mut self) -> Vec<K> {
        self.changed.take()
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
    pub fn peek_mut(&mut self, key: &K) -> Option<&mut Stamped<V>> {
        if self.entries.contains(key) {
            self.mark_changed(key);
        }
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
        self.mark_changed(&key);
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
                Some((k, e)) => {
                    self.mark_changed(&k);
                    gone.push((k, e.value));
                }
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
                self.mark_changed(&k);
                gone.push((k, e.value));
            }
            self.counters.expirations += 1;
        }
        gone
    }

    pub fn remove(&mut self, key: &K) -> Option<V> {
        let e = self.entries.pop(key)?;
        self.mark_changed(key);
        Some(e.value)
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
            self.mark_changed(&k);
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = (&K, &Stamped<V>)> {
        self.entries.iter()
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

    /// The value under `key`, without counting or touching recency.
    pub fn peek(&self, key: &K) -> Option<&V> {
        self.entries.peek(key)
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
mod tests;
