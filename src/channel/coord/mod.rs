//! Coordination between gateway workers through Redis: a rate limiter shared by every
//! worker of a workspace, Retry-After pauses shared the same way, and locks with fencing
//! tokens for single-writer work (compaction).
//!
//! Redis is optional and never trusted to be there: every call has a timeout, and when
//! Redis is unreachable (at start or later) each worker falls back to what it has alone
//! (its own rate limiter, process-local locks), reports the degradation, and reconnects
//! on its own. A fault costs coordination, never a turn.

mod locks;
pub mod scripts;

use locks::{LocalLocks, FENCES_REMEMBERED};

use napi_derive::napi;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::Script;
use serde::Serialize;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long one Redis call may take before the worker goes on without it: 250 ms.
pub const DEFAULT_TIMEOUT_MS: u64 = 250;
/// Prefix of every key the package writes.
pub const DEFAULT_KEY_PREFIX: &str = "context-engine";
/// After a failed connection attempt, how long calls go on without Redis before the
/// next attempt (so an unreachable server costs one timeout per second, not per call).
pub const RECONNECT_PAUSE: Duration = Duration::from_secs(1);

/// Where Redis is and how the package's keys are named.
#[derive(Debug, Clone, PartialEq)]
pub struct RedisConfig {
    /// `redis://host:port/db` (or `rediss://`, `unix://`).
    pub url: String,
    pub key_prefix: String,
    pub timeout_ms: u64,
}

/// The shared limiter's answer.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum SharedGrant {
    /// A slot was taken: call now.
    Granted,
    /// The window is full (or the method paused, `paused`) for `ms` more.
    Wait { ms: u64, paused: bool },
    /// Redis could not be asked: the worker's own limiter is all there is.
    Unavailable { reason: String },
}

/// A lock held: the token that proves it, and the fencing token to write with (`None`
/// for a process-local lock taken while Redis was unreachable).
#[derive(Debug, Clone, PartialEq)]
pub struct Held {
    pub name: String,
    pub token: String,
    pub fence: Option<u64>,
}

/// What a lock request found.
#[derive(Debug, Clone, PartialEq)]
pub enum Locked {
    Acquired(Held),
    /// Another holder has it.
    Busy,
}

/// The coordinator's state, as `stats()` reports it.
#[napi(object, object_from_js = false, use_nullable = true)]
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RedisStats {
    /// The URL without its password.
    pub url: String,
    /// Redis answered the last call or connection attempt (the first is made when the
    /// store or coordinator is created).
    pub connected: bool,
    /// `"connecting"` until the first connection attempt ends, then `"connected"` or
    /// `"unreachable"`.
    #[napi(ts_type = "'connecting' | 'connected' | 'unreachable'")]
    pub state: String,
    /// Calls answered by Redis, and calls that failed or timed out (each then went on
    /// without it).
    pub calls: i64,
    pub failures: i64,
    /// When the worker fell back to its own limiter and locks (epoch ms), null while
    /// Redis answers.
    pub degraded_since: Option<f64>,
    pub last_error: Option<String>,
}

#[derive(Debug, Default)]
struct Health {
    connected: bool,
    /// A connection attempt or a call has ended (either way).
    tried: bool,
    calls: i64,
    failures: i64,
    degraded_since: Option<f64>,
    /// Why the last attempt or call failed, as one sentence; calls answered locally while
    /// the worker waits to reconnect leave it as it is.
    last_error: Option<String>,
    /// No connection attempt before this.
    retry_at: Option<Instant>,
}

/// A token unique to one lock acquisition or rate-limit slot (not a secret: it only
/// tells holders apart).
fn token() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let nanos = crate::core::time::system_now().as_nanos();
    format!("{}-{nanos:x}-{n}", std::process::id())
}

/// The connection to Redis and the scripts run there.
pub struct Coordinator {
    config: RedisConfig,
    client: redis::Client,
    conn: tokio::sync::Mutex<Option<ConnectionManager>>,
    health: Mutex<Health>,
    local: Mutex<LocalLocks>,
    /// The highest fencing token handed out here, by lock name.
    fences: Mutex<lru::LruCache<String, u64>>,
    acquire: Script,
    pause: Script,
    lock: Script,
    extend: Script,
    release: Script,
}

impl std::fmt::Debug for Coordinator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Coordinator")
            .field("url", &redacted(&self.config.url))
            .finish_non_exhaustive()
    }
}

pub use crate::core::url::redacted;

fn now_ms() -> f64 {
    crate::core::time::system_now().as_secs_f64() * 1e3
}

/// Why a call went on without Redis.
enum Failure {
    /// Redis failed now (this sentence says how).
    Error(String),
    /// The worker is waiting to reconnect: answered locally, without trying.
    Waiting,
}

/// An error as one line (a Redis error can carry the server's multi-line detail).
fn one_line(e: &impl std::fmt::Display) -> String {
    e.to_string()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

impl Coordinator {
    /// Checks the URL (a malformed one is an error now, an unreachable server is not).
    pub fn new(config: RedisConfig) -> Result<Coordinator, String> {
        let client = redis::Client::open(config.url.as_str()).map_err(|e| e.to_string())?;
        Ok(Coordinator {
            client,
            conn: tokio::sync::Mutex::new(None),
            health: Mutex::new(Health::default()),
            local: Mutex::new(LocalLocks::default()),
            fences: Mutex::new(lru::LruCache::new(
                std::num::NonZeroUsize::new(FENCES_REMEMBERED)
                    .unwrap_or(std::num::NonZeroUsize::MIN),
            )),
            acquire: Script::new(scripts::ACQUIRE),
            pause: Script::new(scripts::PAUSE),
            lock: Script::new(scripts::LOCK),
            extend: Script::new(scripts::EXTEND),
            release: Script::new(scripts::RELEASE),
            config,
        })
    }

    fn timeout(&self) -> Duration {
        Duration::from_millis(self.config.timeout_ms)
    }

    fn key(&self, parts: &[&str]) -> String {
        let mut k = self.config.key_prefix.clone();
        for p in parts {
            k.push(':');
            k.push_str(p);
        }
        k
    }

    fn health(&self) -> std::sync::MutexGuard<'_, Health> {
        self.health
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Records a failed call or attempt; `why` is kept as the last error unless the call
    /// was only answered locally while waiting to reconnect.
    fn failed(&self, why: Failure) -> String {
        let mut h = self.health();
        h.connected = false;
        h.tried = true;
        h.failures += 1;
        h.degraded_since.get_or_insert_with(now_ms);
        match why {
            Failure::Waiting => h
                .last_error
                .clone()
                .unwrap_or_else(|| "no connection yet".to_string()),
            Failure::Error(why) => {
                h.last_error = Some(why.clone());
                why
            }
        }
    }

    fn answered(&self) {
        let mut h = self.health();
        h.connected = true;
        h.tried = true;
        h.calls += 1;
        h.degraded_since = None;
    }

    /// The connection is gone (or Redis stopped answering): the next attempt waits
    /// [`RECONNECT_PAUSE`], and calls until then are answered locally at once.
    async fn lost(&self) {
        *self.conn.lock().await = None;
        self.health().retry_at = Some(Instant::now() + RECONNECT_PAUSE);
    }

    /// The connection, made on first use (and again after a failed attempt or a lost
    /// connection, at most once per [`RECONNECT_PAUSE`]).
    async fn connection(&self) -> Result<ConnectionManager, Failure> {
        if self.health().retry_at.is_some_and(|at| Instant::now() < at) {
            return Err(Failure::Waiting);
        }
        let mut slot = self.conn.lock().await;
        if let Some(c) = slot.as_ref() {
            return Ok(c.clone());
        }
        // Another call may have failed an attempt while this one waited for the slot.
        if self.health().retry_at.is_some_and(|at| Instant::now() < at) {
            return Err(Failure::Waiting);
        }
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(self.timeout()))
            .set_response_timeout(Some(self.timeout()))
            .set_number_of_retries(0)
            .set_max_delay(self.timeout());
        let made = tokio::time::timeout(
            self.timeout() * 2,
            ConnectionManager::new_with_config(self.client.clone(), config),
        )
        .await;
        match made {
            Ok(Ok(c)) => {
                *slot = Some(c.clone());
                let mut h = self.health();
                h.retry_at = None;
                h.connected = true;
                h.tried = true;
                h.degraded_since = None;
                Ok(c)
            }
            Ok(Err(e)) => {
                self.health().retry_at = Some(Instant::now() + RECONNECT_PAUSE);
                Err(Failure::Error(format!(
                    "could not connect: {}",
                    one_line(&e)
                )))
            }
            Err(_) => {
                self.health().retry_at = Some(Instant::now() + RECONNECT_PAUSE);
                Err(Failure::Error(format!(
                    "could not connect within {} ms",
                    self.config.timeout_ms * 2
                )))
            }
        }
    }

    /// Runs one script with the call timeout, recording the outcome in the health.
    async fn run<T: redis::FromRedisValue>(
        &self,
        script: &Script,
        keys: &[&str],
        args: &[String],
    ) -> Result<T, String> {
        let mut conn = match self.connection().await {
            Ok(c) => c,
            Err(why) => return Err(self.failed(why)),
        };
        let mut inv = script.prepare_invoke();
        for k in keys {
            inv.key(*k);
        }
        for a in args {
            inv.arg(a.as_str());
        }
        match tokio::time::timeout(self.timeout(), inv.invoke_async::<T>(&mut conn)).await {
            Ok(Ok(v)) => {
                self.answered();
                Ok(v)
            }
            Ok(Err(e)) => {
                if e.is_io_error()
                    || e.is_timeout()
                    || e.is_connection_dropped()
                    || e.is_connection_refusal()
                    || e.is_unrecoverable_error()
                {
                    self.lost().await;
                }
                Err(self.failed(Failure::Error(format!("Redis: {}", one_line(&e)))))
            }
            Err(_) => {
                self.lost().await;
                Err(self.failed(Failure::Error(format!(
                    "Redis did not answer within {} ms",
                    self.config.timeout_ms
                ))))
            }
        }
    }

    /// Asks for a call slot of `method` in `workspace`: at most `limit` calls in any
    /// `window_ms` across every worker sharing this Redis and key prefix.
    pub async fn acquire(
        &self,
        workspace: &str,
        method: &str,
        limit: u32,
        window_ms: u64,
        now: u64,
    ) -> SharedGrant {
        let window = self.key(&["rate", workspace, method]);
        let pause = self.key(&["pause", workspace, method]);
        let member = format!("{now}-{}", token());
        let args = [
            now.to_string(),
            window_ms.to_string(),
            limit.to_string(),
            member,
        ];
        match self
            .run::<(u64, u64, u64)>(&self.acquire, &[&window, &pause], &args)
            .await
        {
            Ok((1, _, _)) => SharedGrant::Granted,
            Ok((_, ms, paused)) => SharedGrant::Wait {
                ms: ms.max(1),
                paused: paused == 1,
            },
            Err(reason) => SharedGrant::Unavailable { reason },
        }
    }

    /// Pauses `method` in `workspace` for every worker until `until` (a Retry-After).
    pub async fn pause(
        &self,
        workspace: &str,
        method: &str,
        until: u64,
        now: u64,
    ) -> Result<(), String> {
        let key = self.key(&["pause", workspace, method]);
        let ttl = until.saturating_sub(now).max(1);
        self.run::<i64>(&self.pause, &[&key], &[until.to_string(), ttl.to_string()])
            .await
            .map(drop)
    }

    /// Connects now (in the background of the caller), so that `stats()` tells early
    /// whether Redis is there.
    pub async fn probe(&self) {
        if let Err(why) = self.connection().await {
            self.failed(why);
        }
    }

    pub fn stats(&self) -> RedisStats {
        let h = self.health();
        RedisStats {
            url: redacted(&self.config.url),
            connected: h.connected,
            state: match (h.tried, h.connected) {
                (false, _) => "connecting",
                (true, true) => "connected",
                (true, false) => "unreachable",
            }
            .to_string(),
            calls: h.calls,
            failures: h.failures,
            degraded_since: h.degraded_since,
            last_error: h.last_error.clone(),
        }
    }

    /// The note a build carries while the worker goes on without Redis.
    pub fn degraded_note(&self) -> Option<String> {
        let h = self.health();
        h.degraded_since?;
        Some(format!(
            "Redis is unreachable ({}): rate limits and locks are this worker's own until it reconnects.",
            h.last_error.as_deref().unwrap_or("no answer")
        ))
    }
}

#[cfg(test)]
mod tests;
