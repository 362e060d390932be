//! What the store asks the caller's fetcher for, and what it makes of the answers.
//! Sequencing the calls is a fetch run's ([`crate::channel::fetch_run`]) and awaiting them the
//! JS layer's; every decision about a single call is here: which fetches a request
//! needs and whether the caller can make them, what the rate limiter allows, what a
//! failure or a Retry-After does, what a fetched page may hold and how it is ingested,
//! and which counters move.

use super::request::ContextRequest;
use super::{thread_key, ChannelStore};
use crate::channel::coord::SharedGrant;
use crate::channel::message::StoredMessage;
use crate::channel::slack;
use crate::core::input;
use serde_json::Value;

/// Fetched pages meeting what the store holds: newer events win over an older fetched
/// copy, and a deleted message does not come back.
impl ChannelStore {
    /// Runs `f` (which ingests a fetched page) with the rule that events are newer than
    /// a fetch that began at event number `since`.
    pub fn with_fetch_since<R>(&mut self, since: u64, f: impl FnOnce(&mut Self) -> R) -> R {
        let before = self.recent.ingesting(Some(since));
        let out = f(self);
        self.recent.ingesting(before);
        out
    }

    /// A fetched copy of a message merged with what events after the fetch began told
    /// the store: the held copy when an event touched it since (with the platform's
    /// reply counters when those are ahead), else the fetched copy with the edits and
    /// reactions of those events applied.
    pub fn merge_fetched(&self, channel: &str, m: StoredMessage) -> StoredMessage {
        let Some(since) = self.recent.page_since() else {
            return m;
        };
        if !self.recent.touched_after(channel, m.id(), since) {
            return m;
        }
        if let Some(held) = self.find(channel, m.id()) {
            let mut h = held.clone();
            h.set_reply_count(h.reply_count().max(m.reply_count()));
            if m.latest_reply().and_then(crate::core::time::ts_key)
                > h.latest_reply().and_then(crate::core::time::ts_key)
            {
                h.extras_mut().latest_reply = m.latest_reply().map(str::to_string);
            }
            return h;
        }
        let mut m = m;
        for p in self.recent.patches_after(channel, m.id(), since) {
            let _ = p.apply(&mut m);
        }
        m
    }

    /// Whether a fetched copy of `m` must not be stored: it was deleted, or it lies at or
    /// before the channel's deletion horizon and the store does not hold it.
    pub fn refuses_fetched(&self, channel: &str, m: &StoredMessage) -> bool {
        let Some(ch) = self.channels.get(channel) else {
            return false;
        };
        ch.was_deleted(m.id())
            || (ch.deleted_horizon.is_some_and(|h| m.key <= h)
                && self.find(channel, m.id()).is_none())
    }

    /// Ingests one page of a channel's history (newest first or oldest first).
    pub fn put_history(&mut self, channel: &str, messages: Vec<StoredMessage>, now: u64) {
        for m in messages {
            let m = self.prepared(m);
            let m = self.merge_fetched(channel, m);
            if !m.is_reply() && m.reply_count() > 0 && !self.refuses_fetched(channel, &m) {
                let key = thread_key(channel, m.id());
                self.threads.put_starter(key, m.clone(), now);
            }
            self.put_message(channel, m, false, now);
        }
        self.note_channel(channel);
        self.channel_mut(channel).history_loaded = true;
    }
}

mod job;
pub use job::*;

pub use super::gate::Slot;

/// Why a need planned again in the build that fetched it is not fetched twice.
pub const FETCHED_ONCE: &str =
    "fetched once in this build already; it did not hold what was needed";

/// A fetched page could not be used; the reason is the note to report.
pub type PageResult = Result<Option<String>, String>;

impl ChannelStore {
    /// The fetches `req` still needs at `now` that the caller's `fetchers` can make;
    /// those it cannot make are added to `failures` (and planning goes on without them).
    /// `tried`: what this build has already fetched; a need met once is not fetched
    /// again in the same build (it becomes a failure, and planning goes on without it).
    pub fn plan_fetches(
        &mut self,
        req: &ContextRequest,
        failures: &mut Vec<Failure>,
        tried: &[Need],
        fetchers: Fetchers,
        now: u64,
    ) -> Vec<FetchJob> {
        loop {
            let before = failures.len();
            let needs = self.plan(req, failures, now);
            let (again, needs): (Vec<Need>, Vec<Need>) =
                needs.into_iter().partition(|n| tried.contains(n));
            failures.extend(again.into_iter().map(|need| Failure {
                need,
                reason: FETCHED_ONCE.to_string(),
            }));
            let fetchable = fetchers.fetchable(needs, failures);
            if failures.len() == before {
                return fetchable
                    .iter()
                    .map(|n| {
                        let job = FetchJob::for_need(n, &self.config.rate_limit);
                        job.on_platform(self.platform(n.channel()))
                    })
                    .collect();
            }
        }
    }

    /// The note every build carries while the workers' coordination (Redis) is
    /// unreachable (`None` once it answers again).
    pub fn set_shared_note(&mut self, note: Option<String>) {
        self.gate.set_shared_note(note);
    }

    /// Asks the rate limiter for a slot for one call of `method` on behalf of `channel`.
    pub fn acquire_slot(&mut self, method: &str, channel: &str, now: u64) -> Slot {
        let ws = self.workspace_of(channel);
        let slot = self.gate.acquire(&ws, method, now);
        if matches!(slot, Slot::Refused(_)) {
            self.counters.rate_limited += 1;
        }
        slot
    }

    /// The verdict on what the shared (Redis) limiter said about a call this worker's own
    /// limiter already allowed, after `waited_ms` of waiting for it (see
    /// the fetch gate).
    pub fn shared_verdict(
        &mut self,
        method: &str,
        grant: SharedGrant,
        waited_ms: u64,
        unavailable_note: Option<String>,
        now: u64,
    ) -> Slot {
        let slot = self
            .gate
            .shared_verdict(method, grant, waited_ms, unavailable_note, now);
        if matches!(slot, Slot::Refused(_)) {
            self.counters.rate_limited += 1;
        }
        slot
    }

    /// The workspace and end of the pause a Retry-After put on `method` for `channel`,
    /// when one is in force at `now` (to share it with the other workers).
    pub fn pause_of(&self, method: &str, channel: &str, now: u64) -> Option<(String, u64)> {
        let ws = self.workspace_of(channel);
        let until = self.gate.paused_until(&ws, method, now)?;
        Some((ws, until))
    }

    /// After a queued wait: the note when a Retry-After pause now forbids the call.
    pub fn paused_reason(&mut self, method: &str, channel: &str, now: u64) -> Option<String> {
        let ws = self.workspace_of(channel);
        let reason = self.gate.paused_reason(&ws, method, now)?;
        self.counters.rate_limited += 1;
        Some(reason)
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
        let ws = self.workspace_of(channel);
        if let Some(pause) = self.gate.retry_after(&ws, method, retry_after_ms, now) {
            if pause.capped {
                self.counters.retry_after_capped += 1;
            }
            reason.push_str(&pause.note());
        }
        reason
    }

    /// Counts a fetcher call about to be made.
    pub fn count_call(&mut self, method: &str) {
        *self.counters.calls.entry(method.to_string()).or_insert(0) += 1;
    }

    /// A fetch begins: returns the event number it began at (see
    /// [`ChannelStore::ingest_fetched`]).
    pub fn begin_fetch(&mut self) -> u64 {
        self.recent.begin_fetch()
    }

    /// A fetch that [`ChannelStore::begin_fetch`] started has ended.
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
        let page = if crate::channel::discord::is_discord_page(&body) {
            let thread = match job.need() {
                Some(Need::Thread { thread, .. }) => Some(thread),
                _ => None,
            };
            let size = job.page_size as usize;
            let page = crate::channel::discord::fetched_page(
                &body,
                thread.as_deref(),
                size,
                &self.names(),
            );
            if page.is_ok() {
                if let Some(channel) = job.need().as_ref().map(Need::channel) {
                    self.tag_platform(channel, crate::channel::discord::PLATFORM);
                }
            }
            page
        } else {
            slack::fetched_page(&body, &self.names())
        };
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
