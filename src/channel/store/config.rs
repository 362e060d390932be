//! What a store is configured with: the caller's options as JavaScript passes them
//! (`new ChannelStore(options)`), the checked configuration the store runs on, and the
//! one conversion between them, where every option is validated.

use crate::channel::coord::{RedisConfig, DEFAULT_KEY_PREFIX, DEFAULT_TIMEOUT_MS};
use crate::channel::ratelimit::{Overflow, RateLimitConfig};
use crate::core::input::{whole_number, InputError};
use napi_derive::napi;
use serde::de::IgnoredAny;
use serde::Deserialize;
use std::collections::HashMap;

/// Rows that may wait for the writer before new changes are held back in the store.
pub const DEFAULT_QUEUE_MAX_ROWS: usize = 100_000;
/// How long `flush()` and `close()` wait for the writer: 30 seconds.
pub const DEFAULT_FLUSH_TIMEOUT_MS: u64 = 30_000;
/// How a store is saved.
#[derive(Debug, Clone, PartialEq)]
pub struct PersistConfig {
    /// The SQLite file (created when missing).
    pub path: String,
    /// Bytes of downloaded media saved with the state (0: none, the default).
    pub media_max_bytes: u64,
    pub queue_max_rows: usize,
    pub flush_timeout_ms: u64,
}

/// Messages kept per channel.
pub const DEFAULT_WINDOW_SIZE: usize = 1_000;
/// Threads in the replies cache.
pub const DEFAULT_REPLIES_MAX: usize = 500;
/// Replies cache TTL: 5 minutes (replies change more than starters).
pub const DEFAULT_REPLIES_TTL_MS: u64 = 5 * 60_000;
/// Entries in the thread starter cache.
pub const DEFAULT_STARTERS_MAX: usize = 2_000;
/// Thread starter cache TTL: 6 hours.
pub const DEFAULT_STARTERS_TTL_MS: u64 = 6 * 3_600_000;
/// Media cache bound: ~50 MB of content bytes.
pub const DEFAULT_MEDIA_MAX_SIZE: u64 = 50 * 1024 * 1024;
/// Workspace of channels nobody assigned one.
pub const DEFAULT_WORKSPACE: &str = "default";
/// How long one fetcher call may take before it counts as failed: 5 seconds.
pub const DEFAULT_FETCH_TIMEOUT_MS: u64 = 5_000;
/// Replies held per thread (the newest are kept): 2,000, the most the default paging
/// (10 pages of 200) fetches.
pub const DEFAULT_MAX_THREAD_REPLIES: usize = 2_000;

/// The checked configuration a [`super::ChannelStore`] runs on.
#[derive(Debug, Clone, PartialEq)]
pub struct StoreConfig {
    pub window_size: usize,
    pub replies_max: usize,
    pub replies_ttl_ms: u64,
    pub starters_max: usize,
    pub starters_ttl_ms: u64,
    pub media_max_size: u64,
    pub rate_limit: RateLimitConfig,
    /// Workspace of channels nobody assigned one.
    pub default_workspace: String,
    /// Milliseconds one fetcher call may take before it counts as failed.
    pub fetch_timeout_ms: u64,
    /// Replies held per thread; older ones are dropped first.
    pub max_thread_replies: usize,
    /// Where and how the store's state is saved; `None`: in memory only.
    pub persist: Option<PersistConfig>,
    /// The Redis that workers share rate limits through; `None`: this worker alone.
    pub redis: Option<RedisConfig>,
    /// Whether held texts are packed (see [`crate::core::packed_text`]).
    pub pack_text: bool,
}

impl Default for StoreConfig {
    fn default() -> Self {
        StoreConfig {
            window_size: DEFAULT_WINDOW_SIZE,
            replies_max: DEFAULT_REPLIES_MAX,
            replies_ttl_ms: DEFAULT_REPLIES_TTL_MS,
            starters_max: DEFAULT_STARTERS_MAX,
            starters_ttl_ms: DEFAULT_STARTERS_TTL_MS,
            media_max_size: DEFAULT_MEDIA_MAX_SIZE,
            rate_limit: RateLimitConfig::default(),
            default_workspace: DEFAULT_WORKSPACE.to_string(),
            fetch_timeout_ms: DEFAULT_FETCH_TIMEOUT_MS,
            max_thread_replies: DEFAULT_MAX_THREAD_REPLIES,
            persist: None,
            redis: None,
            pack_text: false,
        }
    }
}

/// A size- and time-bounded cache (names as in `lru-cache`).
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TtlCacheOptions {
    /// Most entries held; least recently used are evicted.
    pub max: Option<f64>,
    /// Milliseconds an entry stays fresh after it was written.
    pub ttl: Option<f64>,
}

/// The media cache's bound.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MediaCacheOptions {
    /// Most bytes held (default 52,428,800 = 50 MB); a larger item is never cached.
    pub max_size: Option<f64>,
}

/// Rate limiting per workspace and per API method, over a rolling 60-second window.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RateLimitOptions {
    /// `"default"` (40 calls/min per method, 200 objects per page) or
    /// `"slack-non-marketplace"`: Slack's limit since 2025 for apps outside its
    /// Marketplace, 1 call/min for `conversations.history` and `conversations.replies`
    /// and 15 objects per page. Other fields override the preset.
    #[napi(ts_type = "'default' | 'slack-non-marketplace'")]
    pub preset: Option<String>,
    /// Calls per minute per method without its own entry (default 40).
    pub max_calls_per_min: Option<f64>,
    /// Calls per minute by method (`conversations.replies`, `conversations.history`,
    /// `files.download`).
    #[napi(ts_type = "Record<string, number>")]
    pub per_method: Option<HashMap<String, f64>>,
    /// `"queue"` (default): wait for a slot, within `maxQueue` and `queueTimeout`.
    /// `"degrade"`: never wait; serve stale cache (within `staleServeTtl`) or nothing,
    /// with a note.
    #[napi(ts_type = "'queue' | 'degrade'")]
    pub overflow_strategy: Option<String>,
    /// Calls that may wait per method (default 100).
    pub max_queue: Option<f64>,
    /// Longest wait for a slot in ms (default 30,000).
    pub queue_timeout: Option<f64>,
    /// How old cached data may be and still be served when a fetch fails, in ms
    /// (default 3,600,000).
    pub stale_serve_ttl: Option<f64>,
    /// Objects per page asked of paginated methods.
    pub page_size: Option<f64>,
    /// Pages followed for one thread (default 10).
    pub max_pages: Option<f64>,
}

/// Saving the store's state to a SQLite file, so that a restarted process starts from it.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PersistOptions {
    /// The SQLite file (created when missing). It may be the `MemoryStore`'s file: the
    /// channel state has tables of its own. Several processes on one host may share it.
    pub path: String,
    /// Bytes of downloaded media saved with the state (default 0: file locations are
    /// saved, the bytes are downloaded again). The oldest saved items go first past it.
    pub media_max_bytes: Option<f64>,
    /// Rows that may wait for the writer thread (default 100,000). Past it, a call's
    /// changes stay noted in the store and are written with a later call.
    pub queue_max_rows: Option<f64>,
    /// Milliseconds `flush()` and `close()` wait for the writer (default 30,000).
    pub flush_timeout_ms: Option<f64>,
}

impl TryFrom<PersistOptions> for PersistConfig {
    type Error = InputError;

    fn try_from(o: PersistOptions) -> Result<Self, InputError> {
        if o.path.is_empty() || o.path.contains('\0') {
            return Err(InputError::type_error(
                "options.persist.path",
                "expected the path of a SQLite file (a non-empty string without NUL)",
            ));
        }
        let media_max_bytes = at_least(
            o.media_max_bytes,
            0,
            "options.persist.mediaMaxBytes",
            "bytes",
        )?;
        let queue = at_least(o.queue_max_rows, 1, "options.persist.queueMaxRows", "rows")?;
        let timeout = at_least(
            o.flush_timeout_ms,
            1,
            "options.persist.flushTimeoutMs",
            "milliseconds",
        )?;
        Ok(PersistConfig {
            path: o.path,
            media_max_bytes: media_max_bytes.unwrap_or(0),
            queue_max_rows: queue.map_or(DEFAULT_QUEUE_MAX_ROWS, usize_of),
            flush_timeout_ms: timeout.unwrap_or(DEFAULT_FLUSH_TIMEOUT_MS),
        })
    }
}

/// A Redis shared by the gateway's workers (processes or hosts).
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RedisOptions {
    /// `redis://[:password@]host:port[/db]` (also `rediss://`, `unix://`).
    pub url: String,
    /// Prefix of every key written (default `"context-engine"`); workers that share
    /// limits use the same one.
    pub key_prefix: Option<String>,
    /// Milliseconds one Redis call may take before the worker goes on without it
    /// (default 250).
    pub timeout_ms: Option<f64>,
}

impl TryFrom<RedisOptions> for RedisConfig {
    type Error = InputError;

    fn try_from(o: RedisOptions) -> Result<Self, InputError> {
        let scheme_ok = ["redis://", "rediss://", "unix://", "redis+unix://"]
            .iter()
            .any(|s| o.url.starts_with(s));
        if !scheme_ok {
            return Err(InputError::type_error(
                "options.redis.url",
                format!(
                    "expected a redis:// (or rediss://, unix://) URL, got {:?}",
                    crate::channel::coord::redacted(&o.url)
                ),
            ));
        }
        let key_prefix = o
            .key_prefix
            .unwrap_or_else(|| DEFAULT_KEY_PREFIX.to_string());
        if key_prefix.is_empty() {
            return Err(InputError::type_error(
                "options.redis.keyPrefix",
                "expected a non-empty string",
            ));
        }
        let timeout = at_least(o.timeout_ms, 1, "options.redis.timeoutMs", "milliseconds")?;
        Ok(RedisConfig {
            url: o.url,
            key_prefix,
            timeout_ms: timeout.unwrap_or(DEFAULT_TIMEOUT_MS),
        })
    }
}

/// `new ChannelStore(options)`. Each default is documented with its option.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ChannelStoreOptions {
    /// Channel messages kept per channel (default 1,000; oldest dropped first).
    pub window_size: Option<f64>,
    /// Thread replies cache: `max` 500 threads, `ttl` 300,000 ms (5 minutes).
    pub thread_replies: Option<TtlCacheOptions>,
    /// Thread starter cache: `max` 2,000 entries, `ttl` 21,600,000 ms (6 hours).
    pub thread_starters: Option<TtlCacheOptions>,
    /// Media content cache: `maxSize` 52,428,800 bytes.
    pub media: Option<MediaCacheOptions>,
    pub rate_limit: Option<RateLimitOptions>,
    /// Workspace of channels that `setChannel` or a payload's `team_id` did not assign
    /// (default `"default"`); rate limits are per workspace.
    pub workspace_id: Option<String>,
    /// Milliseconds one fetcher call may take (default 5,000). A call that has not
    /// settled by then counts as a failed fetch: the turn goes on with what the store
    /// holds and a note, and later calls for the same data are no longer held up by it.
    pub fetch_timeout: Option<f64>,
    /// Replies held per thread, newest kept (default 2,000, what 10 pages of 200 fetch).
    /// A thread past it is no longer complete; `stats().repliesDropped` counts the rest.
    pub max_replies_per_thread: Option<f64>,
    /// Save the state to a SQLite file, written behind the store off the JS thread, and
    /// start from what it holds (default: in memory only). See `flush()` and `close()`.
    pub persist: Option<PersistOptions>,
    /// Share rate limits (and Retry-After pauses) with the other workers of the gateway
    /// through Redis (default: this worker's own limits). Without Redis the store goes on
    /// with its own limiter and says so in `stats().redis` and in build notes.
    pub redis: Option<RedisOptions>,
    /// Keep the text of held messages compressed (default false). The store learns
    /// which byte sequences its chat repeats from its first 16 KB of text and packs every
    /// later text with them: real chat text takes about half its bytes, repetitive text
    /// (bots, alerts, logs) far fewer. It costs ingest some 10-20% of its speed and
    /// reading a text back a fraction of a microsecond; with real chat, whose search
    /// index outweighs its text, a held message shrinks by some 8%.
    pub pack_text: Option<bool>,
    // Functions do not survive JSON: the binding reads the fetcher and the clock from
    // the object itself; here they are only accepted as known fields.
    #[napi(ts_type = "ChannelFetcher")]
    pub fetcher: Option<IgnoredAny>,
    /// Epoch milliseconds now (default: the system clock). Inject one to test TTLs and
    /// rate-limit windows exactly.
    #[napi(ts_type = "() => number")]
    pub clock: Option<IgnoredAny>,
}

/// A whole number of at least `min`, or a RangeError naming `path`.
fn at_least(v: Option<f64>, min: u64, path: &str, what: &str) -> Result<Option<u64>, InputError> {
    let Some(n) = v else { return Ok(None) };
    let n = whole_number(n, path, what)?;
    if n < min {
        return Err(InputError::range_error(
            path,
            format!("must be at least {min}"),
        ));
    }
    Ok(Some(n))
}

fn usize_of(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

fn u32_of(n: u64) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

impl TryFrom<RateLimitOptions> for RateLimitConfig {
    type Error = InputError;

    fn try_from(o: RateLimitOptions) -> Result<Self, InputError> {
        let mut rate = match o.preset.as_deref() {
            None | Some("default") => RateLimitConfig::default(),
            Some("slack-non-marketplace") => RateLimitConfig::slack_non_marketplace(),
            Some(other) => {
                return Err(InputError::range_error(
                    "options.rateLimit.preset",
                    format!("expected \"default\" or \"slack-non-marketplace\", got {other:?}"),
                ))
            }
        };
        if let Some(n) = at_least(
            o.max_calls_per_min,
            0,
            "options.rateLimit.maxCallsPerMin",
            "calls",
        )? {
            rate.calls_per_min = u32_of(n);
        }
        for (method, v) in o.per_method.unwrap_or_default() {
            let path = format!("options.rateLimit.perMethod[{method:?}]");
            let n = whole_number(v, &path, "calls")?;
            rate.per_method.insert(method, u32_of(n));
        }
        match o.overflow_strategy.as_deref() {
            None => {}
            Some("queue") => rate.overflow = Overflow::Queue,
            Some("degrade") => rate.overflow = Overflow::Degrade,
            Some(other) => {
                return Err(InputError::range_error(
                    "options.rateLimit.overflowStrategy",
                    format!("expected \"queue\" or \"degrade\", got {other:?}"),
                ))
            }
        }
        if let Some(n) = at_least(o.max_queue, 0, "options.rateLimit.maxQueue", "calls")? {
            rate.max_queue = u32_of(n);
        }
        if let Some(n) = at_least(
            o.queue_timeout,
            0,
            "options.rateLimit.queueTimeout",
            "milliseconds",
        )? {
            rate.queue_timeout_ms = n;
        }
        if let Some(n) = at_least(
            o.stale_serve_ttl,
            0,
            "options.rateLimit.staleServeTtl",
            "milliseconds",
        )? {
            rate.stale_serve_ttl_ms = n;
        }
        if let Some(n) = at_least(o.page_size, 1, "options.rateLimit.pageSize", "objects")? {
            rate.page_size = u32_of(n);
        }
        if let Some(n) = at_least(o.max_pages, 1, "options.rateLimit.maxPages", "pages")? {
            rate.max_pages = u32_of(n);
        }
        Ok(rate)
    }
}

impl TryFrom<ChannelStoreOptions> for StoreConfig {
    type Error = InputError;

    fn try_from(o: ChannelStoreOptions) -> Result<Self, InputError> {
        let mut c = StoreConfig::default();
        if let Some(n) = at_least(o.window_size, 1, "options.windowSize", "messages")? {
            c.window_size = usize_of(n);
        }
        let r = o.thread_replies.unwrap_or_default();
        if let Some(n) = at_least(r.max, 0, "options.threadReplies.max", "threads")? {
            c.replies_max = usize_of(n);
        }
        if let Some(n) = at_least(r.ttl, 0, "options.threadReplies.ttl", "milliseconds")? {
            c.replies_ttl_ms = n;
        }
        let s = o.thread_starters.unwrap_or_default();
        if let Some(n) = at_least(s.max, 0, "options.threadStarters.max", "entries")? {
            c.starters_max = usize_of(n);
        }
        if let Some(n) = at_least(s.ttl, 0, "options.threadStarters.ttl", "milliseconds")? {
            c.starters_ttl_ms = n;
        }
        let media = o.media.unwrap_or_default();
        if let Some(n) = at_least(media.max_size, 0, "options.media.maxSize", "bytes")? {
            c.media_max_size = n;
        }
        if let Some(w) = o.workspace_id {
            if w.is_empty() {
                return Err(InputError::type_error(
                    "options.workspaceId",
                    "expected a non-empty string",
                ));
            }
            c.default_workspace = w;
        }
        if let Some(n) = at_least(o.fetch_timeout, 1, "options.fetchTimeout", "milliseconds")? {
            c.fetch_timeout_ms = n;
        }
        if let Some(n) = at_least(
            o.max_replies_per_thread,
            1,
            "options.maxRepliesPerThread",
            "replies",
        )? {
            c.max_thread_replies = usize_of(n);
        }
        c.rate_limit = RateLimitConfig::try_from(o.rate_limit.unwrap_or_default())?;
        c.persist = o.persist.map(PersistConfig::try_from).transpose()?;
        c.redis = o.redis.map(RedisConfig::try_from).transpose()?;
        c.pack_text = o.pack_text.unwrap_or(false);
        Ok(c)
    }
}

#[cfg(test)]
mod tests;
