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
