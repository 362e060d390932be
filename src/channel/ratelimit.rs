//! Rolling-window rate limiting per workspace and per API method, as Slack applies its
//! limits.
//!
//! Each (workspace, method) pair has a limit of `limit` calls per `window` ms. Calls are
//! granted *slots*: a time at which the call may start. A slot is the earliest time `t`
//! with `t >= now`, `t >=` any pause (Retry-After), `t >=` the last granted slot, and
//! `t >= slots[n - limit] + window`. Keeping slots sorted and `limit` apart by at least a
//! window guarantees that any window `[x, x + window)` holds at most `limit` calls.
//!
//! A slot in the future is a queued call. Whether the caller may wait for it is the
//! overflow strategy's business: `Queue` allows it when the queue has room and the wait
//! is within the timeout; `Degrade` never waits.

use std::collections::{HashMap, VecDeque};

/// Slack's window: limits are per minute.
pub const WINDOW_MS: u64 = 60_000;
/// The default: 40 calls per minute per workspace (Slack's Tier 3 is 50+; this leaves
/// headroom for the gateway's own calls).
pub const DEFAULT_CALLS_PER_MIN: u32 = 40;
/// Slack's limit for `conversations.history` / `conversations.replies` for apps outside
/// the Marketplace (since 2025): 1 call per minute.
pub const NON_MARKETPLACE_CALLS_PER_MIN: u32 = 1;
/// ...and at most 15 objects per page.
pub const NON_MARKETPLACE_PAGE_SIZE: u32 = 15;
/// Queued calls per (workspace, method) before new ones are refused.
pub const DEFAULT_MAX_QUEUE: u32 = 100;
/// Longest a queued call may wait for its slot.
pub const DEFAULT_QUEUE_TIMEOUT_MS: u64 = 30_000;
/// How old cached data may be and still be served when a fetch is impossible.
pub const DEFAULT_STALE_SERVE_TTL_MS: u64 = 3_600_000;

/// The longest pause a Retry-After may impose: one hour. A larger value (a server bug,
/// a hostile proxy, seconds mistaken for milliseconds) is cut to this, and counted.
pub const MAX_RETRY_AFTER_MS: u64 = 3_600_000;

/// Objects per page requested from `conversations.history` / `.replies` (Slack's
/// recommended maximum).
pub const DEFAULT_PAGE_SIZE: u32 = 200;
/// Pages followed for one thread.
pub const DEFAULT_MAX_PAGES: u32 = 10;

/// What to do when no slot is free now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overflow {
    /// Wait for a slot (bounded queue, bounded wait).
    Queue,
    /// Do not wait: serve stale cache or nothing.
    Degrade,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RateLimitConfig {
    /// Calls per minute for any method without its own entry.
    pub calls_per_min: u32,
    /// Per-method overrides (`"conversations.replies" -> 1`).
    pub per_method: HashMap<String, u32>,
    pub overflow: Overflow,
    pub max_queue: u32,
    pub queue_timeout_ms: u64,
    pub stale_serve_ttl_ms: u64,
    /// Objects requested per page from paginated methods.
    pub page_size: u32,
    /// Pages followed for one thread before settling for a partial thread.
    pub max_pages: u32,
}

impl Default for RateLimitConfig {
    fn default() -> Self {
        RateLimitConfig {
            calls_per_min: DEFAULT_CALLS_PER_MIN,
            per_method: HashMap::new(),
            overflow: Overflow::Queue,
            max_queue: DEFAULT_MAX_QUEUE,
            queue_timeout_ms: DEFAULT_QUEUE_TIMEOUT_MS,
            stale_serve_ttl_ms: DEFAULT_STALE_SERVE_TTL_MS,
            page_size: DEFAULT_PAGE_SIZE,
            max_pages: DEFAULT_MAX_PAGES,
        }
    }
}

impl RateLimitConfig {
    /// Slack's limit for apps outside its Marketplace: `conversations.history` and
    /// `conversations.replies` at 1 call per minute and 15 objects per page; other
    /// methods keep the default.
    pub fn slack_non_marketplace() -> Self {
        let mut c = RateLimitConfig::default();
        for m in ["conversations.history", "conversations.replies"] {
            c.per_method
                .insert(m.to_string(), NON_MARKETPLACE_CALLS_PER_MIN);
        }
        c.page_size = NON_MARKETPLACE_PAGE_SIZE;
        c
    }

    pub fn limit_for(&self, method: &str) -> u32 {
        self.per_method
            .get(method)
            .copied()
            .unwrap_or(self.calls_per_min)
    }
}

/// The limiter's answer to a request for a slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grant {
    /// Call now.
    Now,
    /// Call at this time (a queued call).
    At(u64),
    /// No slot the strategy accepts.
    Refused(Refusal),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The limit is reached and the strategy is `Degrade`.
    Limited { next_slot: u64 },
    /// The queue for this method is full.
    QueueFull,
    /// The wait would exceed the queue timeout.
    WaitTooLong { wait_ms: u64 },
    /// The method is paused by a Retry-After and the strategy is `Degrade`.
    Paused { until: u64 },
    /// A limit of 0 calls per minute: this method is never called.
    Disabled,
}

/// A refusal as a note says it: the method refused and, as seconds from `now`, when it
/// may be called again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refused<'a> {
    pub method: &'a str,
    pub refusal: Refusal,
    pub now: u64,
}

impl std::fmt::Display for Refused<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let method = self.method;
        let secs_until = |t: u64| t.saturating_sub(self.now).div_ceil(1000);
        match self.refusal {
            Refusal::Limited { next_slot } => write!(
                f,
                "{method} is rate limited; next slot in {}s",
                secs_until(next_slot)
            ),
            Refusal::QueueFull => write!(f, "{method} is rate limited and its queue is full"),
            Refusal::WaitTooLong { wait_ms } => write!(
                f,
                "{method} is rate limited; the wait of {}s exceeds the queue timeout",
                wait_ms.div_ceil(1000)
            ),
            Refusal::Paused { until } => write!(
                f,
                "{method} is paused by Retry-After for {}s more",
                secs_until(until)
            ),
            Refusal::Disabled => {
                write!(f, "{method} is disabled (a limit of 0 calls per minute)")
            }
        }
    }
}

#[derive(Debug, Default, Clone)]
struct Bucket {
    /// Granted slots, sorted, within the last window (and queued ones ahead).
    slots: VecDeque<u64>,
    paused_until: u64,
}

/// Per-(workspace, method) rolling windows.
#[derive(Debug)]
pub struct RateLimiter {
    pub config: RateLimitConfig,
    buckets: HashMap<(String, String), Bucket>,
}

impl RateLimiter {
    pub fn new(config: RateLimitConfig) -> Self {
        RateLimiter {
            config,
            buckets: HashMap::new(),
        }
    }

    fn bucket(&mut self, workspace: &str, method: &str, now: u64) -> &mut Bucket {
        let b = self
            .buckets
            .entry((workspace.to_string(), method.to_string()))
            .or_default();
        while b.slots.front().is_some_and(|&t| t + WINDOW_MS <= now) {
            b.slots.pop_front();
        }
        b
    }

    /// Asks for a slot for one call of `method` in `workspace` at `now`, and books it
    /// unless refused.
    pub fn acquire(&mut self, workspace: &str, method: &str, now: u64) -> Grant {
        let limit = self.config.limit_for(method) as usize;
        let overflow = self.config.overflow;
        let max_queue = self.config.max_queue as usize;
        let timeout = self.config.queue_timeout_ms;
        if limit == 0 {
            return Grant::Refused(Refusal::Disabled);
        }
        let b = self.bucket(workspace, method, now);
        let mut slot = now.max(b.paused_until);
        if let Some(&last) = b.slots.back() {
            slot = slot.max(last);
        }
        if b.slots.len() >= limit {
            slot = slot.max(b.slots[b.slots.len() - limit] + WINDOW_MS);
        }
        if slot > now {
            let queued = b.slots.iter().filter(|&&t| t > now).count();
            let refusal = match overflow {
                Overflow::Degrade if b.paused_until > now => Some(Refusal::Paused {
                    until: b.paused_until,
                }),
                Overflow::Degrade => Some(Refusal::Limited { next_slot: slot }),
                Overflow::Queue if queued >= max_queue => Some(Refusal::QueueFull),
                Overflow::Queue if slot - now > timeout => Some(Refusal::WaitTooLong {
                    wait_ms: slot - now,
                }),
                Overflow::Queue => None,
            };
            if let Some(r) = refusal {
                return Grant::Refused(r);
            }
            b.slots.push_back(slot);
            return Grant::At(slot);
        }
        b.slots.push_back(slot);
        Grant::Now
    }

    /// Pauses `method` until `until` (a Retry-After). Calls already queued keep their
    /// slots; the caller checks [`RateLimiter::paused_until`] when the slot arrives.
    pub fn pause(&mut self, workspace: &str, method: &str, until: u64, now: u64) {
        let b = self.bucket(workspace, method, now);
        b.paused_until = b.paused_until.max(until);
    }

    /// The end of a pause on `method`, if one is in force at `now`.
    pub fn paused_until(&self, workspace: &str, method: &str, now: u64) -> Option<u64> {
        self.buckets
            .get(&(workspace.to_string(), method.to_string()))
            .map(|b| b.paused_until)
            .filter(|&t| t > now)
    }

    /// Calls booked in the future (waiting for their slot), over all methods.
    pub fn queued(&self, now: u64) -> u64 {
        self.buckets
            .values()
            .map(|b| b.slots.iter().filter(|&&t| t > now).count() as u64)
            .sum()
    }

    /// Slots booked for `method` in the window ending at `now` (inclusive of queued).
    pub fn booked(&self, workspace: &str, method: &str) -> Vec<u64> {
        self.buckets
            .get(&(workspace.to_string(), method.to_string()))
            .map(|b| b.slots.iter().copied().collect())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests;
