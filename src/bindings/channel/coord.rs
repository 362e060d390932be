//! `RedisCoordinator`: locks with fencing tokens for single-writer work shared by a
//! gateway's workers (compaction), over the same Redis as `ChannelStore`'s shared rate
//! limiter. Every call resolves (never rejects for a Redis fault): without Redis a lock
//! is process-local and `stats()` says the worker is degraded.

use crate::bindings::errors::throw;
use crate::bindings::js::{from_js, to_js};
use crate::channel::coord::{Coordinator, Held, Locked, RedisConfig};
use crate::channel::store::config::RedisOptions;
use crate::core::input::{whole_number, InputError};
use napi::bindgen_prelude::*;
use napi::Env;
use napi_derive::napi;
use std::sync::Arc;

/// A lock held: pass `fence` to the single-writer call it guards
/// (`MemoryStore.applyCompaction(plan, { fence })`), and the whole object back to
/// `extend` and `release`.
#[napi(object, use_nullable = true)]
#[derive(Debug, Clone)]
pub struct RedisLock {
    pub name: String,
    /// Proves the holder to `extend` and `release`.
    pub token: String,
    /// The fencing token: larger for each new holder of the name, even after Redis lost
    /// its counter (it is also past Redis's clock in milliseconds and every token this
    /// process was given). `null` for a process-local lock taken while Redis was
    /// unreachable; a write guarded by the lane's fence then refuses it.
    pub fence: Option<f64>,
}

impl From<Held> for RedisLock {
    fn from(h: Held) -> Self {
        // Fencing tokens count acquisitions: far below 2^53.
        #[allow(clippy::cast_precision_loss)]
        let fence = h.fence.map(|f| f as f64);
        RedisLock {
            name: h.name,
            token: h.token,
            fence,
        }
    }
}

impl From<RedisLock> for Held {
    fn from(l: RedisLock) -> Self {
        // A token from `lock` is a whole, non-negative number below 2^53.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let fence = l.fence.map(|f| f as u64);
        Held {
            name: l.name,
            token: l.token,
            fence,
        }
    }
}

fn ttl(env: &Env, func: &str, ttl_ms: f64) -> Result<u64> {
    let n = whole_number(ttl_ms, "ttlMs", "milliseconds").map_err(|e| throw(env, func, &e))?;
    if n == 0 {
        let e = InputError::range_error("ttlMs", "must be at least 1");
        return Err(throw(env, func, &e));
    }
    Ok(n)
}

/// Locks shared by a gateway's workers through Redis, each with a fencing token.
///
/// ```ts
/// const coord = new RedisCoordinator({ url: 'redis://127.0.0.1:6379' })
/// const lock = await coord.lock(`compact:${sessionId}:${threadKey}`, 30_000)
/// if (lock) {
///   try {
///     const plan = memory.planCompaction(sessionId, threadKey)
///     if (plan) memory.applyCompaction(plan, { summary, fence: lock.fence })
///   } finally {
///     await coord.release(lock)
///   }
/// }
/// ```
#[napi]
pub struct RedisCoordinator {
    inner: Arc<Coordinator>,
}

#[napi]
impl RedisCoordinator {
    /// Checks the options (a malformed URL throws); connecting happens in the
    /// background, and an unreachable server is not an error.
    #[napi(constructor, catch_unwind, ts_args_type = "options: RedisOptions")]
    pub fn new(env: Env, options: Unknown) -> Result<Self> {
        const F: &str = "RedisCoordinator";
        let o: RedisOptions = from_js(&env, F, "options", options)?;
        let config = RedisConfig::try_from(o).map_err(|mut e| {
            e.path = e.path.replacen("options.redis", "options", 1);
            throw(&env, F, &e)
        })?;
        let url = crate::channel::coord::redacted(&config.url);
        let inner = Coordinator::new(config)
            .map_err(|e| Error::from_reason(format!("{F}: options.url {url:?}: {e}")))?;
        let inner = Arc::new(inner);
        let probe = Arc::clone(&inner);
        env.spawn_future(async move {
            probe.probe().await;
            Ok(())
        })?;
        Ok(RedisCoordinator { inner })
    }

    /// Takes lock `name` for `ttlMs` milliseconds: resolves to the lock, or null when
    /// another holder has it. With Redis unreachable, a process-local lock (`fence`
    /// null).
    #[napi(catch_unwind, ts_return_type = "Promise<RedisLock | null>")]
    pub fn lock<'e>(
        &self,
        env: &'e Env,
        name: String,
        ttl_ms: f64,
    ) -> Result<PromiseRaw<'e, Option<RedisLock>>> {
        let ttl = ttl(env, "RedisCoordinator.lock", ttl_ms)?;
        let c = Arc::clone(&self.inner);
        env.spawn_future(async move {
            Ok(match c.lock(&name, ttl).await {
                Locked::Acquired(h) => Some(RedisLock::from(h)),
                Locked::Busy => None,
            })
        })
    }

    /// Extends a lock its holder still holds to `ttlMs` from now; false when it was lost
    /// (it expired and may have another holder), or Redis cannot say.
    #[napi(catch_unwind, ts_return_type = "Promise<boolean>")]
    pub fn extend<'e>(
        &self,
        env: &'e Env,
        lock: RedisLock,
        ttl_ms: f64,
    ) -> Result<PromiseRaw<'e, bool>> {
        let ttl = ttl(env, "RedisCoordinator.extend", ttl_ms)?;
        let c = Arc::clone(&self.inner);
        let held = Held::from(lock);
        env.spawn_future(async move { Ok(c.extend(&held, ttl).await) })
    }

    /// Releases a lock its holder still holds; false when it no longer held it.
    #[napi(catch_unwind, ts_return_type = "Promise<boolean>")]
    pub fn release<'e>(&self, env: &'e Env, lock: RedisLock) -> Result<PromiseRaw<'e, bool>> {
        let c = Arc::clone(&self.inner);
        let held = Held::from(lock);
        env.spawn_future(async move { Ok(c.release(&held).await) })
    }

    /// Whether Redis answers, calls and failures, and since when the worker has gone on
    /// without it.
    #[napi(catch_unwind, ts_return_type = "RedisStats")]
    pub fn stats<'e>(&self, env: &'e Env) -> Result<Unknown<'e>> {
        to_js(env, &self.inner.stats())
    }
}
