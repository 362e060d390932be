//! `stats()`: the store's counters and sizes, in the shape JavaScript reads them.

use super::ChannelStore;
use crate::channel::message::StoredMessage;
use crate::core::cache::CacheCounters;
use crate::core::model::Author;
use napi_derive::napi;
use serde::Serialize;
use std::collections::BTreeMap;

/// Hit / miss / eviction / expiration counters of a TTL cache.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TtlCacheStats {
    #[napi(ts_type = "number")]
    pub hits: u64,
    #[napi(ts_type = "number")]
    pub misses: u64,
    #[napi(ts_type = "number")]
    pub evictions: u64,
    #[napi(ts_type = "number")]
    pub expirations: u64,
    /// Entries held.
    #[napi(ts_type = "number")]
    pub size: usize,
    #[napi(ts_type = "number")]
    pub max: usize,
}

impl TtlCacheStats {
    pub(super) fn of(c: &CacheCounters, size: usize, max: usize) -> Self {
        TtlCacheStats {
            hits: c.hits,
            misses: c.misses,
            evictions: c.evictions,
            expirations: c.expirations,
            size,
            max,
        }
    }
}

/// Counters of the media cache.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MediaCacheStats {
    #[napi(ts_type = "number")]
    pub hits: u64,
    #[napi(ts_type = "number")]
    pub misses: u64,
    #[napi(ts_type = "number")]
    pub evictions: u64,
    /// Items held.
    #[napi(ts_type = "number")]
    pub size: usize,
    /// Bytes held.
    #[napi(ts_type = "number")]
    pub bytes: u64,
    #[napi(ts_type = "number")]
    pub max_size: u64,
}

/// The store's caches.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StoreCacheStats {
    pub thread_replies: TtlCacheStats,
    pub thread_starters: TtlCacheStats,
    pub media: MediaCacheStats,
}

/// Sizes of the search indexes.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchIndexStats {
    /// Messages indexed (held in windows and threads).
    #[napi(ts_type = "number")]
    pub documents: u64,
    /// Distinct terms.
    #[napi(ts_type = "number")]
    pub terms: u64,
    /// Posting entries, dead ones (of removed messages, until compaction) included.
    #[napi(ts_type = "number")]
    pub postings: u64,
    #[napi(ts_type = "number")]
    pub dead_postings: u64,
    /// Approximate heap bytes of the indexes.
    #[napi(ts_type = "number")]
    pub index_bytes: u64,
}

/// `stats()`.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StoreStats {
    /// Fetcher calls made, by API method.
    #[napi(ts_type = "Record<string, number>")]
    pub calls: BTreeMap<String, u64>,
    pub caches: StoreCacheStats,
    #[napi(ts_type = "number")]
    pub channels: usize,
    /// Messages held in channel windows.
    #[napi(ts_type = "number")]
    pub messages: usize,
    /// Approximate heap bytes of held messages (windows and threads).
    #[napi(ts_type = "number")]
    pub message_bytes: usize,
    /// Calls waiting for a rate-limit slot.
    #[napi(ts_type = "number")]
    pub queued_calls: u64,
    /// Builds that served a thread past its TTL because a fetch failed.
    #[napi(ts_type = "number")]
    pub stale_serves: u64,
    #[napi(ts_type = "number")]
    pub failed_fetches: u64,
    /// Fetches refused by the rate limiter (queue full, wait too long, degrade, paused).
    #[napi(ts_type = "number")]
    pub rate_limited: u64,
    /// Fetcher calls that did not settle within `fetchTimeout` (also in `failedFetches`).
    #[napi(ts_type = "number")]
    pub timed_out_fetches: u64,
    /// Retry-After values longer than one hour, cut to one hour.
    #[napi(ts_type = "number")]
    pub retry_after_capped: u64,
    /// Replies dropped: a thread past `maxRepliesPerThread`, or a fetched page holding
    /// more than was asked for.
    #[napi(ts_type = "number")]
    pub replies_dropped: u64,
    #[napi(ts_type = "number")]
    pub ingested_events: u64,
    #[napi(ts_type = "number")]
    pub ignored_events: u64,
    /// The channels' search indexes, summed.
    pub search: SearchIndexStats,
    /// Saving to a file (`options.persist`); null when the store is in memory only.
    #[napi(ts_type = "PersistStats | null")]
    pub persist: Option<PersistStats>,
    /// The shared Redis (`options.redis`); null when the worker is alone.
    #[napi(ts_type = "RedisStats | null")]
    pub redis: Option<crate::channel::coord::RedisStats>,
}

impl ChannelStore {
    /// Counters and sizes at `now` (queued calls are counted as of then).
    pub fn stats(&self, now: u64) -> StoreStats {
        let mut search = SearchIndexStats::default();
        for ch in self.channels.values() {
            let s = ch.index.stats();
            search.documents += s.documents;
            search.terms += s.terms;
            search.postings += s.postings;
            search.dead_postings += s.dead_postings;
            search.index_bytes += s.heap_bytes;
        }
        let m = &self.media.counters;
        let c = &self.counters;
        let (thread_replies, thread_starters) = self.threads.stats();
        StoreStats {
            calls: c.calls.clone(),
            caches: StoreCacheStats {
                thread_replies,
                thread_starters,
                media: MediaCacheStats {
                    hits: m.hits,
                    misses: m.misses,
                    evictions: m.evictions,
                    size: self.media.len(),
                    bytes: self.media.size(),
                    max_size: self.media.max_size(),
                },
            },
            channels: self.channels.len(),
            messages: self.window_messages(),
            message_bytes: self.message_heap_bytes(),
            queued_calls: self.gate.queued(now),
            stale_serves: c.stale_serves,
            failed_fetches: c.failed_fetches,
            rate_limited: c.rate_limited,
            timed_out_fetches: c.timed_out_fetches,
            retry_after_capped: c.retry_after_capped,
            replies_dropped: c.replies_dropped,
            ingested_events: c.ingested_events,
            ignored_events: c.ignored_events,
            search,
            persist: None,
            redis: None,
        }
    }
}

impl ChannelStore {
    /// Approximate heap bytes held by messages (window and caches), for the memory
    /// report.
    pub fn message_heap_bytes(&self) -> usize {
        let window: usize = self
            .channels
            .values()
            .map(|c| {
                c.window.heap_bytes()
                    + c.window
                        .iter()
                        .map(|m| m.heap_bytes() + std::mem::size_of::<StoredMessage>())
                        .sum::<usize>()
            })
            .sum();
        let replies: usize = self
            .threads
            .held()
            .flat_map(|(_, e)| e.value.replies.values())
            .map(|m| m.heap_bytes() + std::mem::size_of::<StoredMessage>())
            .sum();
        let authors: usize = self
            .authors
            .iter()
            .map(|a| {
                a.user_id.capacity() + a.display_name.capacity() + std::mem::size_of::<Author>()
            })
            .sum();
        window + replies + authors
    }

    /// Messages held in channel windows.
    pub fn window_messages(&self) -> usize {
        self.channels.values().map(|c| c.window.len()).sum()
    }
}

/// The `persist` part of `stats()`, and what `flush()` and `close()` resolve to.
#[napi(object, object_from_js = false, use_nullable = true)]
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PersistStats {
    pub path: String,
    /// Rows loaded when the store opened, and how long loading took.
    pub loaded_rows: i64,
    pub load_ms: f64,
    /// Saved rows that could not be read back (skipped; see `lastError`).
    pub corrupt_rows: i64,
    /// Rows waiting for the writer.
    pub queued_rows: i64,
    pub written_rows: i64,
    /// Transactions committed.
    pub commits: i64,
    /// Batches that could not be written (their changes are not in the file).
    pub failed_batches: i64,
    /// Calls whose changes were held back because the queue was full.
    pub deferred: i64,
    pub last_error: Option<String>,
    pub closed: bool,
}
