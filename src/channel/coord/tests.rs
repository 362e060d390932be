use super::*;

#[test]
fn a_password_never_reaches_a_report() {
    assert_eq!(
        redacted("redis://:s3cret@host:6379/0"),
        "redis://:***@host:6379/0"
    );
    assert_eq!(
        redacted("redis://user:s3cret@host:6379"),
        "redis://user:***@host:6379"
    );
    assert_eq!(redacted("redis://127.0.0.1:6379"), "redis://127.0.0.1:6379");
}

#[test]
fn a_malformed_url_is_refused_at_once() {
    let c = Coordinator::new(RedisConfig {
        url: "http://nope".into(),
        key_prefix: DEFAULT_KEY_PREFIX.into(),
        timeout_ms: DEFAULT_TIMEOUT_MS,
    });
    assert!(c.is_err());
}

#[test]
fn without_redis_locks_are_local_and_exclusive() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    // A port nothing listens on: every call fails fast, locks fall back.
    let c = Coordinator::new(RedisConfig {
        url: "redis://127.0.0.1:1".into(),
        key_prefix: "t".into(),
        timeout_ms: 100,
    })
    .unwrap_or_else(|e| panic!("{e}"));
    rt.block_on(async {
        let Locked::Acquired(a) = c.lock("compact:s1", 10_000).await else {
            panic!("first lock")
        };
        assert_eq!(a.fence, None);
        assert_eq!(c.lock("compact:s1", 10_000).await, Locked::Busy);
        assert!(c.extend(&a, 10_000).await);
        assert!(c.release(&a).await);
        assert!(!c.release(&a).await, "released once");
        assert!(matches!(
            c.lock("compact:s1", 10_000).await,
            Locked::Acquired(_)
        ));
        assert!(matches!(
            c.acquire("T1", "conversations.replies", 40, 60_000, 1)
                .await,
            SharedGrant::Unavailable { .. }
        ));
    });
    let s = c.stats();
    assert!(!s.connected);
    assert!(s.failures >= 1);
    assert!(s.degraded_since.is_some());
    assert!(c
        .degraded_note()
        .is_some_and(|n| n.starts_with("Redis is unreachable (")));
}
