//! The fetch gate: whether a call to the platform may be made now, later or not at all.
//! It owns this worker's rate limiter (per workspace and method, with the Retry-After
//! pauses the platform asked for) and what the workers' shared limiter last said, and
//! turns both into a [`Slot`] and the note a refused call reports.

use crate::channel::coord::SharedGrant;
use crate::channel::ratelimit::{
    Grant, Overflow, RateLimitConfig, RateLimiter, Refusal, Refused, MAX_RETRY_AFTER_MS,
};

/// What the rate limiter says about one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Slot {
    /// Call after waiting this many milliseconds (0: now).
    Wait(u64),
    /// Do not call; the note says why.
    Refused(String),
}

/// A Retry-After the gate put in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pause {
    /// Milliseconds the method is paused for.
    pub ms: u64,
    /// The platform asked for longer than [`MAX_RETRY_AFTER_MS`] (or for no end).
    pub capped: bool,
}

impl Pause {
    /// The part of a failure's note that says what the pause does.
    pub fn note(&self) -> String {
        format!(
            "; paused for {}s (Retry-After{})",
            self.ms.div_ceil(1000),
            if self.capped {
                ", capped at 1 hour"
            } else {
                ""
            }
        )
    }
}

/// This worker's rate limiter and the shared limiter's last word.
#[derive(Debug)]
pub struct FetchGate {
    limiter: RateLimiter,
    /// While the workers' shared coordination (Redis) is unreachable: the note every
    /// build carries.
    shared_note: Option<String>,
}

impl FetchGate {
    /// A gate on `rate`'s limits, with nothing booked.
    pub fn new(rate: RateLimitConfig) -> Self {
        FetchGate {
            limiter: RateLimiter::new(rate),
            shared_note: None,
        }
    }

    /// A slot for one call of `method` in `workspace` at `now`, booked when granted.
    pub fn acquire(&mut self, workspace: &str, method: &str, now: u64) -> Slot {
        match self.limiter.acquire(workspace, method, now) {
            Grant::Now => Slot::Wait(0),
            Grant::At(t) => Slot::Wait(t.saturating_sub(now)),
            Grant::Refused(refusal) => Slot::Refused(
                Refused {
                    method,
                    refusal,
                    now,
                }
                .to_string(),
            ),
        }
    }

    /// The verdict on what the shared limiter said about a call this gate already
    /// allowed, after `waited_ms` of waiting for it: call now, wait, or not at all (by
    /// the overflow strategy and the queue timeout, as for the local limiter). Without
    /// an answer from the shared limiter the call goes ahead on the local limit, and
    /// `unavailable_note` is kept for builds to carry until it answers again.
    pub fn shared_verdict(
        &mut self,
        method: &str,
        grant: SharedGrant,
        waited_ms: u64,
        unavailable_note: Option<String>,
        now: u64,
    ) -> Slot {
        let (ms, paused) = match grant {
            SharedGrant::Granted => {
                self.shared_note = None;
                return Slot::Wait(0);
            }
            SharedGrant::Unavailable { .. } => {
                self.shared_note = unavailable_note;
                return Slot::Wait(0);
            }
            SharedGrant::Wait { ms, paused } => (ms, paused),
        };
        self.shared_note = None;
        let rate = &self.limiter.config;
        let refusal = match rate.overflow {
            Overflow::Degrade if paused => Some(Refusal::Paused { until: now + ms }),
            Overflow::Degrade => Some(Refusal::Limited {
                next_slot: now + ms,
            }),
            Overflow::Queue if waited_ms.saturating_add(ms) > rate.queue_timeout_ms => {
                Some(Refusal::WaitTooLong { wait_ms: ms })
            }
            Overflow::Queue => None,
        };
        match refusal {
            None => Slot::Wait(ms),
            Some(refusal) => {
                let why = Refused {
                    method,
                    refusal,
                    now,
                };
                Slot::Refused(format!("{why} (the limit is shared by every worker)"))
            }
        }
    }

    /// When the Retry-After pause on `method` in `workspace` ends, if one is in force.
    pub fn paused_until(&self, workspace: &str, method: &str, now: u64) -> Option<u64> {
        self.limiter.paused_until(workspace, method, now)
    }

    /// The note refusing a call a Retry-After pause forbids at `now`, if one does.
    pub fn paused_reason(&self, workspace: &str, method: &str, now: u64) -> Option<String> {
        let until = self.paused_until(workspace, method, now)?;
        let refusal = Refusal::Paused { until };
        Some(
            Refused {
                method,
                refusal,
                now,
            }
            .to_string(),
        )
    }

    /// The platform said to retry `method` after `retry_after_ms`: pauses it in
    /// `workspace` from `now`, cut to [`MAX_RETRY_AFTER_MS`]. Nothing for a value that is
    /// not a positive number of milliseconds.
    pub fn retry_after(
        &mut self,
        workspace: &str,
        method: &str,
        retry_after_ms: Option<f64>,
        now: u64,
    ) -> Option<Pause> {
        let ms = retry_after_ms.filter(|m| !m.is_nan() && *m > 0.0)?;
        // Infinity and absurd values are cut to the documented maximum.
        let capped = ms > MAX_RETRY_AFTER_MS as f64;
        let ms = if capped {
            MAX_RETRY_AFTER_MS
        } else {
            // Positive and at most an hour: the conversion is exact after `ceil`.
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let whole = ms.ceil() as u64;
            whole
        };
        self.limiter
            .pause(workspace, method, now.saturating_add(ms), now);
        Some(Pause { ms, capped })
    }

    /// Sets the note builds carry from the coordinator's own view (Redis failed a call
    /// of any kind since it last answered), so a build that asked nothing of the shared
    /// limiter says so too.
    pub fn set_shared_note(&mut self, note: Option<String>) {
        self.shared_note = note;
    }

    /// The note builds carry while the shared limiter is unreachable.
    pub fn shared_note(&self) -> Option<&str> {
        self.shared_note.as_deref()
    }

    /// Calls waiting for a slot at `now`.
    pub fn queued(&self, now: u64) -> u64 {
        self.limiter.queued(now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const M: &str = "conversations.history";

    fn gate(overflow: Overflow) -> FetchGate {
        FetchGate::new(RateLimitConfig {
            overflow,
            ..RateLimitConfig::slack_non_marketplace()
        })
    }

    #[test]
    fn a_shared_wait_is_queued_within_the_timeout_and_refused_past_it() {
        let mut g = gate(Overflow::Queue);
        let timeout = g.limiter.config.queue_timeout_ms;
        let wait = SharedGrant::Wait {
            ms: 1_000,
            paused: false,
        };
        assert_eq!(
            g.shared_verdict(M, wait.clone(), 0, None, 0),
            Slot::Wait(1_000)
        );
        let Slot::Refused(note) = g.shared_verdict(M, wait, timeout, None, 0) else {
            panic!("a wait past the queue timeout is refused");
        };
        assert!(
            note.ends_with("(the limit is shared by every worker)"),
            "{note}"
        );
    }

    #[test]
    fn degrade_refuses_any_shared_wait() {
        let mut g = gate(Overflow::Degrade);
        let wait = SharedGrant::Wait {
            ms: 10,
            paused: true,
        };
        assert!(matches!(
            g.shared_verdict(M, wait, 0, None, 0),
            Slot::Refused(_)
        ));
    }

    #[test]
    fn the_unreachable_note_lasts_until_the_shared_limiter_answers() {
        let mut g = gate(Overflow::Queue);
        let down = SharedGrant::Unavailable {
            reason: "connect refused".into(),
        };
        let note = Some("shared limiter unreachable".to_string());
        assert_eq!(g.shared_verdict(M, down, 0, note, 0), Slot::Wait(0));
        assert_eq!(g.shared_note(), Some("shared limiter unreachable"));
        assert_eq!(
            g.shared_verdict(M, SharedGrant::Granted, 0, None, 1),
            Slot::Wait(0)
        );
        assert_eq!(g.shared_note(), None);
    }

    #[test]
    fn retry_after_pauses_the_method_in_its_workspace_only_and_is_capped() {
        let mut g = gate(Overflow::Queue);
        let p = g.retry_after("T1", M, Some(1_500.2), 0);
        assert_eq!(
            p,
            Some(Pause {
                ms: 1_501,
                capped: false
            })
        );
        assert_eq!(g.paused_until("T1", M, 0), Some(1_501));
        assert_eq!(g.paused_until("T2", M, 0), None);
        assert_eq!(g.paused_until("T1", "conversations.replies", 0), None);
        assert!(g.paused_reason("T1", M, 1_000).is_some());
        assert!(g.paused_reason("T1", M, 1_501).is_none());
        let p = g.retry_after("T1", M, Some(f64::INFINITY), 0);
        assert_eq!(
            p.map(|p| (p.ms, p.capped)),
            Some((MAX_RETRY_AFTER_MS, true))
        );
        assert_eq!(
            p.map(|p| p.note()).as_deref(),
            Some("; paused for 3600s (Retry-After, capped at 1 hour)")
        );
        for bad in [None, Some(f64::NAN), Some(0.0), Some(-5.0)] {
            assert_eq!(g.retry_after("T3", M, bad, 0), None);
        }
        assert_eq!(g.paused_until("T3", M, 0), None);
    }

    #[test]
    fn the_local_limit_grants_then_queues_or_refuses() {
        let mut g = gate(Overflow::Degrade);
        let limit = g.limiter.config.limit_for(M);
        for i in 0..limit {
            assert_eq!(g.acquire("T1", M, u64::from(i)), Slot::Wait(0));
        }
        assert!(matches!(g.acquire("T1", M, 100), Slot::Refused(_)));
        // Another workspace has its own budget.
        assert_eq!(g.acquire("T2", M, 100), Slot::Wait(0));
    }
}
