use super::*;
use proptest::prelude::*;

fn limiter(calls: u32, overflow: Overflow) -> RateLimiter {
    RateLimiter::new(RateLimitConfig {
        calls_per_min: calls,
        overflow,
        ..RateLimitConfig::default()
    })
}

#[test]
fn defaults_are_the_seeds_numbers() {
    let c = RateLimitConfig::default();
    assert_eq!(c.calls_per_min, 40);
    assert_eq!(c.overflow, Overflow::Queue);
    let s = RateLimitConfig::slack_non_marketplace();
    assert_eq!(s.limit_for("conversations.replies"), 1);
    assert_eq!(s.limit_for("conversations.history"), 1);
    assert_eq!(s.limit_for("files.download"), 40);
    assert_eq!(s.page_size, 15);
}

#[test]
fn forty_calls_then_the_41st_waits_for_the_first_to_leave_the_window() {
    let mut l = RateLimiter::new(RateLimitConfig {
        queue_timeout_ms: 120_000,
        ..RateLimitConfig::default()
    });
    for i in 0..40 {
        assert_eq!(l.acquire("T", "m", 1_000 + i), Grant::Now);
    }
    assert_eq!(l.acquire("T", "m", 2_000), Grant::At(1_000 + WINDOW_MS));
    assert_eq!(l.queued(2_000), 1);
    // At exactly the slot time the first call has left the window.
    let mut l = limiter(40, Overflow::Degrade);
    for _ in 0..40 {
        assert_eq!(l.acquire("T", "m", 0), Grant::Now);
    }
    assert_eq!(
        l.acquire("T", "m", WINDOW_MS - 1),
        Grant::Refused(Refusal::Limited {
            next_slot: WINDOW_MS
        })
    );
    assert_eq!(l.acquire("T", "m", WINDOW_MS), Grant::Now);
}

#[test]
fn limits_are_per_workspace_and_per_method() {
    let mut l = limiter(1, Overflow::Degrade);
    assert_eq!(l.acquire("T1", "conversations.replies", 0), Grant::Now);
    assert_eq!(l.acquire("T2", "conversations.replies", 0), Grant::Now);
    assert_eq!(l.acquire("T1", "conversations.history", 0), Grant::Now);
    assert!(matches!(
        l.acquire("T1", "conversations.replies", 0),
        Grant::Refused(_)
    ));
}

#[test]
fn queue_is_bounded_in_length_and_wait() {
    let mut l = RateLimiter::new(RateLimitConfig {
        calls_per_min: 1,
        max_queue: 2,
        queue_timeout_ms: 130_000,
        ..RateLimitConfig::default()
    });
    assert_eq!(l.acquire("T", "m", 0), Grant::Now);
    assert_eq!(l.acquire("T", "m", 0), Grant::At(60_000));
    assert_eq!(l.acquire("T", "m", 0), Grant::At(120_000));
    assert_eq!(l.acquire("T", "m", 0), Grant::Refused(Refusal::QueueFull));
    let mut l = RateLimiter::new(RateLimitConfig {
        calls_per_min: 1,
        queue_timeout_ms: 59_999,
        ..RateLimitConfig::default()
    });
    assert_eq!(l.acquire("T", "m", 0), Grant::Now);
    assert_eq!(
        l.acquire("T", "m", 0),
        Grant::Refused(Refusal::WaitTooLong { wait_ms: 60_000 })
    );
}

#[test]
fn retry_after_pauses_the_method_until_its_end() {
    let mut l = limiter(40, Overflow::Degrade);
    l.pause("T", "m", 30_000, 0);
    assert_eq!(l.paused_until("T", "m", 29_999), Some(30_000));
    assert_eq!(
        l.acquire("T", "m", 29_999),
        Grant::Refused(Refusal::Paused { until: 30_000 })
    );
    assert_eq!(l.acquire("T", "other", 29_999), Grant::Now);
    assert_eq!(l.acquire("T", "m", 30_000), Grant::Now);
    let mut q = limiter(40, Overflow::Queue);
    q.pause("T", "m", 5_000, 0);
    assert_eq!(q.acquire("T", "m", 0), Grant::At(5_000));
}

#[test]
fn a_zero_limit_disables_the_method() {
    let mut l = limiter(0, Overflow::Queue);
    assert_eq!(l.acquire("T", "m", 0), Grant::Refused(Refusal::Disabled));
}

proptest! {
    /// Whatever the pattern of requests, pauses and strategy, the calls that were
    /// granted never put more than `limit` calls in any 60-second window.
    #[test]
    fn no_window_ever_holds_more_than_the_limit(
        limit in 1u32..6,
        queue in any::<bool>(),
        ops in proptest::collection::vec((0u64..40_000, 0u8..10), 1..200),
    ) {
        let mut l = RateLimiter::new(RateLimitConfig {
            calls_per_min: limit,
            overflow: if queue { Overflow::Queue } else { Overflow::Degrade },
            max_queue: 5,
            queue_timeout_ms: 200_000,
            ..RateLimitConfig::default()
        });
        let mut now = 0;
        let mut calls = Vec::new();
        for (dt, op) in ops {
            now += dt;
            if op == 0 {
                l.pause("T", "m", now + dt, now);
                continue;
            }
            match l.acquire("T", "m", now) {
                Grant::Now => calls.push(now),
                Grant::At(t) => { prop_assert!(t > now); calls.push(t) }
                Grant::Refused(_) => {}
            }
        }
        calls.sort_unstable();
        for (i, &t) in calls.iter().enumerate() {
            let in_window = calls[i..].iter().take_while(|&&u| u < t + WINDOW_MS).count();
            prop_assert!(in_window <= limit as usize, "{} calls in the window from {}", in_window, t);
        }
    }
}
