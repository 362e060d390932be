//! What the store asks the caller's fetcher for, and what it makes of the answers.
//! Sequencing the calls is a fetch run's ([`crate::fetch_run`]) and awaiting them the
//! JS layer's; every decision about a single call is here: which fetches a request
//! needs and whether the caller can make them, what the rate limiter allows, what a
//! failure or a Retry-After does, what a fetched page may hold and how it is ingested,
//! and which counters move.

use super::message::StoredMessage;
use super::request::ContextRequest;
use super::{FileLocation, Store};
use crate::coord::SharedGrant;
use crate::input;
use crate::ratelimit::{Grant, Overflow, RateLimitConfig, Refusal, Refused, MAX_RETRY_AFTER_MS};
use crate::slack;
use serde_json::{json, Value};

/// Rate-limit bucket of media downloads.
pub const MEDIA_METHOD: &str = "files.download";

/// The key of one fetch (its kind, then the ids), as a JSON array: no id, whatever
/// characters it holds, can make two different fetches share a key.
pub fn fetch_key(parts: &[&str]) -> String {
    serde_json::to_string(parts).unwrap_or_default()
}

/// A fetch the store needs before it can build.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Need {
    /// The newest page of the channel's history (`conversations.history`).
    History { channel: String },
    /// A whole thread (`conversations.replies`, following pages).
    Thread { channel: String, thread: String },
    /// Specific messages by id.
    Messages { channel: String, ids: Vec<String> },
}

impl Need {
    /// The platform API method the fetch counts against.
    pub fn method(&self) -> &'static str {
        match self {
            Need::History { .. } | Need::Messages { .. } => "conversations.history",
            Need::Thread { .. } => "conversations.replies",
        }
    }

    pub fn channel(&self) -> &str {
        match self {
            Need::History { channel }
            | Need::Thread { channel, .. }
            | Need::Messages { channel, .. } => channel,
        }
    }

    /// Identifies the fetch, so concurrent requests for the same data share one call
    /// (see [`fetch_key`]).
    pub fn key(&self) -> String {
        match self {
            Need::History { channel } => fetch_key(&["history", channel]),
            Need::Thread { channel, thread } => fetch_key(&["thread", channel, thread]),
            Need::Messages { channel, ids } => {
                let mut v = vec!["messages", channel.as_str()];
                v.extend(ids.iter().map(String::as_str));
                fetch_key(&v)
            }
        }
    }

    pub fn what(&self) -> String {
        match self {
            Need::History { .. } => "channel history".to_string(),
            Need::Thread { thread, .. } => format!("thread {thread}"),
            Need::Messages { ids, .. } => format!("messages {}", ids.join(", ")),
        }
    }
}

/// A fetch that did not happen or failed, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    pub need: Need,
    pub reason: String,
}

/// The functions a caller's fetcher may supply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FetcherFn {
    Thread,
    History,
    Messages,
    Media,
}

impl FetcherFn {
    /// Every fetcher function, in the order [`Fetchers`] keeps them.
    pub const ALL: [FetcherFn; 4] = [
        FetcherFn::Thread,
        FetcherFn::History,
        FetcherFn::Messages,
        FetcherFn::Media,
    ];

    /// The function's name on the fetcher object.
    pub fn name(self) -> &'static str {
        match self {
            FetcherFn::Thread => "fetchThread",
            FetcherFn::History => "fetchHistory",
            FetcherFn::Messages => "fetchMessages",
            FetcherFn::Media => "fetchMedia",
        }
    }

    /// The function that carries out `need`.
    pub fn for_need(need: &Need) -> Self {
        match need {
            Need::History { .. } => FetcherFn::History,
            Need::Thread { .. } => FetcherFn::Thread,
            Need::Messages { .. } => FetcherFn::Messages,
        }
    }

    fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

/// Which fetcher functions the caller supplied.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Fetchers(u8);

impl Fetchers {
    /// These fetchers and `f`.
    #[must_use]
    pub fn with(self, f: FetcherFn) -> Self {
        Fetchers(self.0 | f.bit())
    }

    pub fn has(self, f: FetcherFn) -> bool {
        self.0 & f.bit() != 0
    }

    /// Keeps the needs the caller can fetch; each of the others becomes a failure
    /// saying which fetcher function is missing.
    pub fn fetchable(self, needs: Vec<Need>, failures: &mut Vec<Failure>) -> Vec<Need> {
        let mut out = Vec::with_capacity(needs.len());
        for need in needs {
            let f = FetcherFn::for_need(&need);
            if self.has(f) {
                out.push(need);
            } else {
                failures.push(Failure {
                    need,
                    reason: missing_fetcher(f),
                });
            }
        }
        out
    }
}

/// The note for a fetch the caller gave no function for.
pub fn missing_fetcher(f: FetcherFn) -> String {
    format!("no {} in the fetcher", f.name())
}

/// What a fetch is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FetchKind {
    History,
    Thread,
    Messages,
    Media,
}

/// One fetch as a run ([`crate::fetch_run`]) carries it out: the key that lets
/// concurrent requests share it, the rate-limit bucket, the fetcher function and the
/// request to pass it, and how many pages to follow.
#[derive(Debug, Clone, PartialEq)]
pub struct FetchJob {
    pub key: String,
    pub kind: FetchKind,
    pub method: String,
    /// The fetcher function to call.
    pub fetch: String,
    pub channel_id: String,
    pub thread_id: Option<String>,
    pub message_ids: Option<Vec<String>>,
    pub artifact_id: Option<String>,
    pub page_size: u32,
    pub max_pages: u32,
    /// The argument passed to the fetcher (without `cursor` and `limit`, which the
    /// runtime adds per page).
    pub request: Value,
}

impl FetchJob {
    /// The job that carries out `need`.
    pub fn for_need(need: &Need, rate: &RateLimitConfig) -> Self {
        let (kind, thread_id, message_ids) = match need {
            Need::History { .. } => (FetchKind::History, None, None),
            Need::Thread { thread, .. } => (FetchKind::Thread, Some(thread.clone()), None),
            Need::Messages { ids, .. } => (FetchKind::Messages, None, Some(ids.clone())),
        };
        let mut request = json!({ "channelId": need.channel() });
        if let Some(t) = &thread_id {
            request["threadId"] = json!(t);
        }
        if let Some(ids) = &message_ids {
            request["messageIds"] = json!(ids);
        }
        FetchJob {
            key: need.key(),
            kind,
            method: need.method().to_string(),
            fetch: FetcherFn::for_need(need).name().to_string(),
            channel_id: need.channel().to_string(),
            thread_id,
            message_ids,
            artifact_id: None,
            page_size: rate.page_size,
            // Only a thread is followed past its first page.
            max_pages: if kind == FetchKind::Thread {
                rate.max_pages
            } else {
                1
            },
            request,
        }
    }

    /// The download of file `id` from where `loc` says it is.
    pub fn for_media(id: &str, loc: &FileLocation, rate: &RateLimitConfig) -> Self {
        FetchJob {
            key: fetch_key(&["media", &loc.channel, id]),
            kind: FetchKind::Media,
            method: MEDIA_METHOD.to_string(),
            fetch: FetcherFn::Media.name().to_string(),
            channel_id: loc.channel.clone(),
            thread_id: None,
            message_ids: None,
            artifact_id: Some(id.to_string()),
            page_size: rate.page_size,
            max_pages: 1,
            request: json!({
                "artifactId": id,
                "url": loc.url,
                "mediaType": loc.media.media_type,
                "filename": loc.media.filename,
                "byteLength": loc.media.byte_length,
                "channelId": loc.channel,
                "messageId": loc.message_id,
            }),
        }
    }

    /// The need this job carries out (none for a media download).
    pub fn need(&self) -> Option<Need> {
        let channel = self.channel_id.clone();
        match self.kind {
            FetchKind::History => Some(Need::History { channel }),
            FetchKind::Thread => self
                .thread_id
                .clone()
                .map(|thread| Need::Thread { channel, thread }),
            FetchKind::Messages => self
                .message_ids
                .clone()
                .map(|ids| Need::Messages { channel, ids }),
            FetchKind::Media => None,
        }
    }
}

/// What the rate limiter says about one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Slot {
    /// Call after waiting this many milliseconds (0: now).
    Wait(u64),
    /// Do not call; the note says why.
    Refused(String),
}

/// A fetched page could not be used; the reason is the note to report.
pub type PageResult = Result<Option<String>, String>;

impl Store {
    /// The fetches `req` still needs at `now` that the caller's `fetchers` can make;
    /// those it cannot make are added to `failures` (and planning goes on without them).
    pub fn plan_fetches(
        &mut self,
        req: &ContextRequest,
        failures: &mut Vec<Failure>,
        fetchers: Fetchers,
        now: u64,
    ) -> Vec<FetchJob> {
        loop {
            let before = failures.len();
            let needs = self.plan(req, failures, now);
            let fetchable = fetchers.fetchable(needs, failures);
            if failures.len() == before {
                return fetchable
                    .iter()
                    .map(|n| FetchJob::for_need(n, &self.config.rate_limit))
                    .collect();
            }
        }
    }

    /// Asks the rate limiter for a slot for one call of `method` on behalf of `channel`.
    pub fn acquire_slot(&mut self, method: &str, channel: &str, now: u64) -> Slot {
        let ws = self.workspace_of(channel);
        match self.limiter.acquire(&ws, method, now) {
            Grant::Now => Slot::Wait(0),
            Grant::At(t) => Slot::Wait(t.saturating_sub(now)),
            Grant::Refused(refusal) => {
                self.counters.rate_limited += 1;
                Slot::Refused(
                    Refused {
                        method,
                        refusal,
                        now,
                    }
                    .to_string(),
                )
            }
        }
    }

    /// The verdict on what the shared (Redis) limiter said about a call this worker's own
    /// limiter already allowed, after `waited_ms` of waiting for it: call now, wait, or
    /// not at all (by the overflow strategy and the queue timeout, as for the local
    /// limiter). Without an answer from Redis the call goes ahead on the local limit, and
    /// builds say so until Redis answers again.
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
                self.coordination_note = None;
                return Slot::Wait(0);
            }
            SharedGrant::Unavailable { .. } => {
                self.coordination_note = unavailable_note;
                return Slot::Wait(0);
            }
            SharedGrant::Wait { ms, paused } => (ms, paused),
        };
        self.coordination_note = None;
        let rate = &self.config.rate_limit;
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
                self.counters.rate_limited += 1;
                let why = Refused {
                    method,
                    refusal,
                    now,
                };
                Slot::Refused(format!("{why} (the limit is shared by every worker)"))
            }
        }
    }

    /// The workspace and end of the pause a Retry-After put on `method` for `channel`,
    /// when one is in force at `now` (to share it with the other workers).
    pub fn pause_of(&self, method: &str, channel: &str, now: u64) -> Option<(String, u64)> {
        let ws = self.workspace_of(channel);
        let until = self.limiter.paused_until(&ws, method, now)?;
        Some((ws, until))
    }

    /// After a queued wait: the note when a Retry-After pause now forbids the call.
    pub fn paused_reason(&mut self, method: &str, channel: &str, now: u64) -> Option<String> {
        let ws = self.workspace_of(channel);
        let until = self.limiter.paused_until(&ws, method, now)?;
        self.counters.rate_limited += 1;
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

    /// A fetcher call failed with `message` (it `timed_out`, or said to retry after
    /// `retry_after_ms`): counts it, pauses the method for the Retry-After (capped at
    /// [`MAX_RETRY_AFTER_MS`], counted when cut) and returns the note to report.
    pub fn fetch_failed(
        &mut self,
        method: &str,
        channel: &str,
        message: &str,
        retry_after_ms: Option<f64>,
        timed_out: bool,
        now: u64,
    ) -> String {
        self.counters.failed_fetches += 1;
        if timed_out {
            self.counters.timed_out_fetches += 1;
        }
        let mut reason = format!("{method} failed: {message}");
        if let Some(ms) = retry_after_ms.filter(|m| !m.is_nan() && *m > 0.0) {
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
            if capped {
                self.counters.retry_after_capped += 1;
            }
            let ws = self.workspace_of(channel);
            self.limiter.pause(&ws, method, now.saturating_add(ms), now);
            reason.push_str(&format!(
                "; paused for {}s (Retry-After{})",
                ms.div_ceil(1000),
                if capped { ", capped at 1 hour" } else { "" }
            ));
        }
        reason
    }

    /// Counts a fetcher call about to be made.
    pub fn count_call(&mut self, method: &str) {
        *self.counters.calls.entry(method.to_string()).or_insert(0) += 1;
    }

    /// A fetch begins: returns the event number it began at (see
    /// [`Store::ingest_fetched`]).
    pub fn begin_fetch(&mut self) -> u64 {
        self.recent.begin_fetch()
    }

    /// A fetch that [`Store::begin_fetch`] started has ended.
    pub fn end_fetch(&mut self) {
        self.recent.end_fetch();
    }

    /// Ingests one page that `job`'s fetcher resolved with, as `JSON.stringify` wrote it
    /// (`None` when it could not: `undefined`, a function, a cycle). Events numbered
    /// after `since` (the number the fetch began at) are newer than the page and win.
    /// Returns the next page's cursor, or the note saying why the page is unusable
    /// (counted as a failed fetch).
    pub fn ingest_fetched(
        &mut self,
        job: &FetchJob,
        json: Option<String>,
        first_page: bool,
        since: Option<u64>,
        now: u64,
    ) -> PageResult {
        let body = match json {
            Some(mut text) => {
                let fixes = input::repair_lone_surrogates(&mut text);
                // Ids the store cannot keep exactly make the page unusable.
                if let Some((_, key)) = input::id_with_lone_surrogate(&text, &fixes) {
                    return Err(self.unusable(job, input::lone_surrogate_error(key)));
                }
                serde_json::from_str(&text).unwrap_or(Value::Null)
            }
            None => Value::Null,
        };
        self.users.learn(&body);
        let page = slack::fetched_page(&body, &self.names());
        let mut page = match page {
            Ok(page) => page,
            Err(e) => return Err(self.unusable(job, e)),
        };
        let mut next = page.next_cursor.take();
        // A page holds at most what was asked (a thread's first page may add its root);
        // the rest is dropped and the thread stays incomplete.
        let is_thread = job.kind == FetchKind::Thread;
        let asked = job.page_size as usize + usize::from(is_thread);
        if page.messages.len() > asked {
            self.counters.replies_dropped += (page.messages.len() - asked) as u64;
            page.messages.truncate(asked);
            if next.is_none() && is_thread {
                next = Some(String::new());
            }
        }
        let since = since.unwrap_or_else(|| self.recent.seq());
        let last_page = next.is_none();
        let messages = page.messages;
        self.with_fetch_since(since, |store| match job.need() {
            Some(Need::History { channel }) => store.put_history(&channel, messages, now),
            Some(Need::Thread { channel, thread }) => {
                store.put_thread_page(&channel, &thread, messages, first_page, last_page, now);
            }
            Some(Need::Messages { channel, .. }) => {
                store.put_fetched_messages(&channel, messages, now);
            }
            None => {}
        });
        Ok(next)
    }

    /// Messages fetched by id: merged with newer events and held; a reply's thread is
    /// remembered so the next plan fetches it.
    fn put_fetched_messages(&mut self, channel: &str, messages: Vec<StoredMessage>, now: u64) {
        for m in messages {
            let m = self.merge_fetched(channel, m);
            if let Some(t) = m.thread_id.as_deref().map(str::to_string) {
                self.channel_mut(channel)
                    .reply_threads
                    .insert(m.id().to_string(), t);
            }
            self.put_message(channel, m, false, now);
        }
    }

    /// The note for a page of `job` that cannot be used, counted as a failed fetch.
    fn unusable(&mut self, job: &FetchJob, why: impl std::fmt::Display) -> String {
        self.counters.failed_fetches += 1;
        format!("{} returned an unusable result: {why}", job.fetch)
    }
}

#[cfg(test)]
mod tests;
