//! Building context from what the store holds: which fetches a request needs (`plan`),
//! and the ChannelSnapshot, ThreadContext and prompt section once they are done
//! (`build`), degrading to stale data or nothing, with notes, when a fetch failed.

use super::documents::*;
use super::fetch::{Failure, Need};
use super::message::StoredMessage;
use super::render::{render_thread, ThreadLimits};
use super::request::ContextRequest;
use super::{thread_key, Store, ThreadEntry};
use crate::cache::Lookup;
use crate::compact::compact_snapshot;
use crate::model::Truncation;
use crate::model::{
    Anchor, Author, Channel, ChannelSnapshot, MediaRef, MessageView, ThreadContext,
    ThreadTelemetry, SCHEMA_VERSION,
};
use crate::prompt::{
    guidance_estimate, guidance_text, section_json, section_tags, SNAPSHOT_CLOSE, SNAPSHOT_OPEN,
    THREAD_CLOSE, THREAD_OPEN,
};
use crate::spare;
use crate::time::{key_millis, TsKey};
use crate::tokens;
use std::borrow::Cow;

/// "Recent" for `replies_last_1h`.
pub const RECENT_REPLY_WINDOW_MS: u64 = 3_600_000;
/// Platform of channels nobody described.
pub const DEFAULT_PLATFORM: &str = "slack";

impl MessageView for StoredMessage {
    fn id(&self) -> &str {
        self.id()
    }
    fn ts(&self) -> &str {
        &self.ts
    }
    fn author(&self) -> Author {
        Author::clone(&self.author)
    }
    fn text(&self) -> Cow<'_, str> {
        self.text.as_str()
    }
    fn media_refs(&self) -> Vec<MediaRef> {
        self.files().iter().map(|f| f.media.clone()).collect()
    }
}

/// Token estimates of the prompt section's parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Tokens {
    pub guidance: u64,
    pub snapshot: u64,
    pub thread: u64,
    pub total: u64,
}

/// Everything `buildContext` returns.
#[derive(Debug, Clone, PartialEq)]
pub struct Built {
    /// The prompt section; the two JSON documents are ranges of it.
    pub prompt: String,
    /// Where the ChannelSnapshot JSON sits in `prompt`.
    pub snapshot_range: std::ops::Range<usize>,
    /// Where the ThreadContext JSON sits in `prompt`.
    pub thread_range: Option<std::ops::Range<usize>>,
    /// The two documents as JSON when the prompt shows them in another form.
    pub documents: Option<Documents>,
    pub truncation: Option<Truncation>,
    pub telemetry: Option<ThreadTelemetry>,
    pub tokens: Tokens,
    /// Part of the context is older than its cache TTL (a fetch failed).
    pub stale: bool,
    /// Why something is missing or stale, one sentence each.
    pub notes: Vec<String>,
}

impl Built {
    /// The ChannelSnapshot's JSON (as the prompt carries it, unless in another form).
    pub fn snapshot_json(&self) -> &str {
        if let Some(d) = &self.documents {
            return &d.snapshot;
        }
        self.prompt
            .get(self.snapshot_range.clone())
            .unwrap_or("null")
    }

    /// The ThreadContext's JSON (as the prompt carries it, unless in another form).
    pub fn thread_json(&self) -> Option<&str> {
        if let Some(d) = &self.documents {
            return d.thread.as_deref();
        }
        self.thread_range.clone().and_then(|r| self.prompt.get(r))
    }

    /// The ChannelSnapshot, read back from its JSON.
    pub fn snapshot(&self) -> Option<ChannelSnapshot> {
        serde_json::from_str(self.snapshot_json()).ok()
    }

    /// The ThreadContext, read back from its JSON.
    pub fn thread(&self) -> Option<ThreadContext> {
        self.thread_json()
            .and_then(|j| serde_json::from_str(j).ok())
    }

    /// Heap bytes held (reported to V8 as external memory).
    pub fn heap_bytes(&self) -> usize {
        self.prompt.capacity()
            + self.notes.iter().map(String::capacity).sum::<usize>()
            + self.documents.as_ref().map_or(0, |d| {
                d.snapshot.capacity() + d.thread.as_ref().map_or(0, String::capacity)
            })
    }
}

/// The documents' JSON kept beside a prompt that shows them in the compact form.
#[derive(Debug, Clone, PartialEq)]
pub struct Documents {
    pub snapshot: String,
    pub thread: Option<String>,
}

/// Why nothing could be built.
#[derive(Debug, Clone, PartialEq)]
pub enum BuildError {
    AnchorNotFound {
        channel: String,
        anchor: String,
        notes: Vec<String>,
    },
}

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BuildError::AnchorNotFound {
                channel,
                anchor,
                notes,
            } => {
                write!(
                    f,
                    "anchor message {anchor} is not held for channel {channel}"
                )?;
                if notes.is_empty() {
                    write!(f, " and no fetcher could find it")
                } else {
                    write!(f, ": {}", notes.join(" "))
                }
            }
        }
    }
}

/// A thread as the store can show it.
#[derive(Debug, Clone)]
pub struct HeldThread<'a> {
    pub root: &'a StoredMessage,
    /// Oldest first.
    pub replies: Vec<&'a StoredMessage>,
    /// Replies the thread has (at least `replies.len()`).
    pub total: u64,
}

/// Activity of a thread, computed from what the store holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Activity {
    pub reply_count: u64,
    pub replies_last_1h: u64,
    pub last_reply_ts: Option<String>,
    /// Display names of repliers, in order of their first reply.
    pub participant_names: Vec<String>,
}

/// The counts behind a thread's [`Activity`], borrowed from the store.
#[derive(Debug, Clone, Copy)]
pub struct ThreadStats<'a> {
    pub reply_count: u64,
    /// Replies held in the replies cache.
    pub held: u64,
    /// The newest reply known (held, or the platform's `latest_reply`): key and ts.
    pub latest: Option<(TsKey, &'a str)>,
    pub entry: Option<&'a ThreadEntry>,
}

impl Store {
    fn find_anchor(&self, req: &ContextRequest) -> Option<AnchorAt<'_>> {
        let ch = self.channels.get(&req.channel)?;
        if let Some(m) = ch.get(&req.anchor_id) {
            if !m.is_reply() {
                return Some(AnchorAt::Window(m));
            }
        }
        let thread = ch
            .reply_threads
            .get(&req.anchor_id)
            .cloned()
            .or_else(|| req.thread_hint.clone())
            .filter(|t| *t != req.anchor_id);
        if let Some(thread) = thread {
            if let Some(e) = self.replies_entry(&req.channel, &thread) {
                // Replies are keyed by ts, which is the id on Slack: look there first,
                // then (ids that are not a ts) through the thread.
                let is_anchor = |m: &&StoredMessage| m.id() == req.anchor_id;
                let found = crate::time::ts_key(&req.anchor_id)
                    .and_then(|k| e.value.replies.get(&k))
                    .filter(is_anchor)
                    .or_else(|| e.value.replies.values().find(is_anchor));
                if let Some(m) = found {
                    return Some(AnchorAt::Reply { message: m, thread });
                }
            }
        }
        if let Some(m) = ch.get(&req.anchor_id) {
            // A broadcast reply whose thread is not held.
            if let Some(thread) = m.thread_id.as_deref().map(str::to_string) {
                return Some(AnchorAt::Reply { message: m, thread });
            }
        }
        if let Some(e) = self.starter_entry(&req.channel, &req.anchor_id) {
            return Some(AnchorAt::Starter(&e.value));
        }
        // A reply the platform delivered by event, in a thread the store does not hold
        // (and may be unable to fetch): the anchor is still known.
        ch.orphan(&req.anchor_id).and_then(|m| {
            let thread = m.thread_id.as_deref()?.to_string();
            Some(AnchorAt::Reply { message: m, thread })
        })
    }

    /// The thread an anchor belongs to or starts, if any.
    fn anchor_thread(&self, req: &ContextRequest, at: &AnchorAt<'_>) -> Option<String> {
        match at {
            AnchorAt::Reply { thread, .. } => Some(thread.clone()),
            AnchorAt::Window(m) | AnchorAt::Starter(m) => {
                let held = self.replies_entry(&req.channel, m.id()).is_some();
                (m.reply_count() > 0 || held).then(|| m.id().to_string())
            }
        }
    }

    /// Messages in the window before `key`.
    fn held_before(&self, channel: &str, key: TsKey) -> usize {
        self.channels
            .get(channel)
            .map_or(0, |c| c.window.count_before(key))
    }

    /// The fetches a request needs at `now`, leaving out those that already failed.
    /// Counts cache hits and misses for the lookups it makes.
    pub fn plan(&mut self, req: &ContextRequest, failed: &[Failure], now: u64) -> Vec<Need> {
        let has_failed = |n: &Need| failed.iter().any(|f| f.need == *n);
        let history = Need::History {
            channel: req.channel.clone(),
        };
        let history_loaded = self
            .channels
            .get(&req.channel)
            .is_some_and(|c| c.history_loaded);
        let mut needs = Vec::new();
        let Some(at) = self.find_anchor(req) else {
            if let Some(t) = req.thread_hint.as_deref() {
                // Counted: the thread the anchor is in is not held (or not with it).
                let _ = self.replies.lookup(&thread_key(&req.channel, t), now);
            }
            // The channel's history also brings the adjacent messages; without any to
            // show, the anchor's thread is the one fetch that finds it (a thread's
            // replies page starts with its root, so a root anchor too).
            let history_first = req.adjacent > 0;
            let thread = req.thread_hint.clone().map(|thread| Need::Thread {
                channel: req.channel.clone(),
                thread,
            });
            let candidates = [
                (history_first && !history_loaded).then(|| history.clone()),
                thread,
                (!history_first && !history_loaded).then(|| history.clone()),
                Some(Need::Messages {
                    channel: req.channel.clone(),
                    ids: vec![req.anchor_id.clone()],
                }),
            ];
            return candidates
                .into_iter()
                .flatten()
                .find(|n| !has_failed(n))
                .into_iter()
                .collect();
        };
        let anchor_key = at.message().key;
        let position = match &at {
            AnchorAt::Reply { thread, .. } => self
                .channels
                .get(&req.channel)
                .and_then(|c| c.key_of(thread))
                .unwrap_or(anchor_key),
            _ => anchor_key,
        };
        let thread = self.anchor_thread(req, &at);
        if !history_loaded
            && self.held_before(&req.channel, position) < req.adjacent
            && !has_failed(&history)
        {
            needs.push(history);
        }
        if let Some(thread) = thread {
            let key = thread_key(&req.channel, &thread);
            let need = Need::Thread {
                channel: req.channel.clone(),
                thread: thread.clone(),
            };
            let replies_fresh = matches!(self.replies.lookup(&key, now), Lookup::Fresh(_));
            let root_in_window = self
                .channels
                .get(&req.channel)
                .is_some_and(|c| c.get(&thread).is_some());
            let root_fresh =
                root_in_window || matches!(self.starters.lookup(&key, now), Lookup::Fresh(_));
            if (!replies_fresh || !root_fresh) && !has_failed(&need) {
                needs.push(need);
            }
        }
        needs
    }

    /// Reply count and newest reply of the thread `m` starts, from what is held, or
    /// `None` when it has no replies. The cheap part of [`Store::activity`], which the
    /// search ranking asks for hundreds of messages per query.
    pub fn thread_stats<'a>(
        &'a self,
        channel: &str,
        m: &'a StoredMessage,
    ) -> Option<ThreadStats<'a>> {
        let entry = self.replies_entry(channel, m.id()).map(|e| &e.value);
        let held = entry.map_or(0, |e| e.replies.len() as u64);
        let reply_count = if entry.is_some_and(|e| e.complete) {
            held
        } else {
            held.max(m.reply_count())
        };
        if reply_count == 0 {
            return None;
        }
        let held_latest = entry
            .and_then(|e| e.replies.values().next_back())
            .map(|r| (r.key, r.ts.as_str()));
        let platform_latest = m
            .latest_reply()
            .and_then(|t| crate::time::ts_key(t).map(|k| (k, t)));
        let latest = match (held_latest, platform_latest) {
            (Some(a), Some(b)) => Some(if b.0 > a.0 { b } else { a }),
            (a, b) => a.or(b),
        };
        Some(ThreadStats {
            reply_count,
            held,
            latest,
            entry,
        })
    }

    /// Thread activity of a channel message from what is held, or `None` when it has
    /// no replies.
    pub fn activity(&self, channel: &str, m: &StoredMessage, now: u64) -> Option<Activity> {
        self.thread_activity(channel, m, now, true)
    }

    /// [`Store::activity`], with the participants' names only when `names` (the snapshot
    /// shows counts alone, and a long thread's names cost a pass over its replies).
    fn thread_activity(
        &self,
        channel: &str,
        m: &StoredMessage,
        now: u64,
        names: bool,
    ) -> Option<Activity> {
        let ThreadStats {
            reply_count,
            held,
            latest,
            entry,
        } = self.thread_stats(channel, m)?;
        let empty = ThreadEntry::default();
        let entry = entry.unwrap_or(&empty);
        let since = now.saturating_sub(RECENT_REPLY_WINDOW_MS);
        let recent = entry
            .replies
            .keys()
            .rev()
            .take_while(|k| key_millis(**k) >= since)
            .count() as u64;
        let replies_last_1h = if held == 0 {
            u64::from(latest.is_some_and(|(k, _)| key_millis(k) >= since))
        } else {
            recent
        };
        let mut participant_names: Vec<String> = Vec::new();
        if names {
            for r in entry.replies.values() {
                if !participant_names.contains(&r.author.display_name) {
                    participant_names.push(r.author.display_name.clone());
                }
            }
        }
        Some(Activity {
            reply_count,
            replies_last_1h,
            last_reply_ts: latest.map(|(_, t)| t.to_string()),
            participant_names,
        })
    }

    fn adjacent_view<'a>(&self, channel: &str, m: &'a StoredMessage, now: u64) -> AdjacentView<'a> {
        adjacent_view(m, self.thread_activity(channel, m, now, false))
    }

    /// The `n` channel messages nearest to `center` (excluding `skip`), in channel
    /// order: the message at `center` first (a reply's root), then alternately before
    /// and after, the earlier message winning at equal distance.
    fn nearest(&self, channel: &str, center: TsKey, skip: &str, n: usize) -> Vec<&StoredMessage> {
        let Some(ch) = self.channels.get(channel) else {
            return Vec::new();
        };
        let mut before = ch
            .window
            .before(center)
            .rev()
            .map(|m| &**m)
            .filter(|m| m.id() != skip)
            .peekable();
        let mut after = ch
            .window
            .from(center)
            .map(|m| &**m)
            .filter(|m| m.id() != skip)
            .peekable();
        // The message at the centre (a reply's root) is nearest of all.
        let mid = match after.peek() {
            Some(m) if m.key == center && n > 0 => after.next(),
            _ => None,
        };
        let taken = usize::from(mid.is_some());
        let (mut b, mut a) = (Vec::new(), Vec::new());
        while taken + b.len() + a.len() < n {
            let take_before = b.len() <= a.len() || after.peek().is_none();
            let next = if take_before { before.next() } else { None };
            match next {
                Some(m) => b.push(m),
                None => match after.next() {
                    Some(m) => a.push(m),
                    None => match before.next() {
                        Some(m) => b.push(m),
                        None => break,
                    },
                },
            }
        }
        b.reverse();
        b.extend(mid);
        b.extend(a);
        b
    }

    /// A thread as held at `now` for building: its root, replies (oldest first) and
    /// total reply count, served stale within the stale limit or left out, with a note
    /// saying which. Returns whether it is served stale.
    pub fn held_thread(
        &self,
        channel: &str,
        tid: &str,
        now: u64,
        notes: &mut Vec<String>,
    ) -> (Option<HeldThread<'_>>, bool) {
        let stale_ms = self.config.rate_limit.stale_serve_ttl_ms;
        let mut stale = false;
        let key = thread_key(channel, tid);
        let entry = self.replies.peek(&key);
        let age = entry.map(|e| now.saturating_sub(e.written_at));
        let fresh = age.is_some_and(|a| a < self.replies.ttl());
        let root = self
            .channels
            .get(channel)
            .and_then(|c| c.get(tid))
            .or_else(|| self.starters.peek(&key).map(|e| &e.value));
        let usable = match (entry, age) {
            (Some(_), Some(_)) if fresh => true,
            (Some(_), Some(a)) if a <= stale_ms => {
                stale = true;
                notes.push(format!(
                    "Thread {tid} is served from cache, {}s old.",
                    a / 1000
                ));
                true
            }
            (Some(_), Some(a)) => {
                notes.push(format!(
                    "Thread {tid} is left out: the cached copy is {}s old, older than the stale limit of {}s.",
                    a / 1000,
                    stale_ms / 1000
                ));
                false
            }
            _ => {
                if root.is_some_and(|r| r.reply_count() > 0) {
                    notes.push(format!(
                        "Thread {tid} replies are not held; only the root is shown."
                    ));
                }
                root.is_some_and(|r| r.reply_count() > 0)
            }
        };
        match (usable, root) {
            (true, Some(root)) => {
                let held = entry.map(|e| &e.value);
                let replies: Vec<&StoredMessage> = held
                    .map(|e| e.replies.values().collect())
                    .unwrap_or_default();
                let total = match held {
                    Some(e) if e.complete => replies.len() as u64,
                    _ => root.reply_count().max(replies.len() as u64),
                };
                (
                    Some(HeldThread {
                        root,
                        replies,
                        total,
                    }),
                    stale,
                )
            }
            (true, None) => {
                notes.push(format!(
                    "Thread {tid} is left out: its root message is not held."
                ));
                (None, stale)
            }
            (false, _) => (None, stale),
        }
    }

    /// Builds the context from what is held at `now`. `failed` are the fetches that did
    /// not happen; what they would have refreshed is served stale (within
    /// `stale_ms`) or left out, with a note each.
    pub fn build(
        &mut self,
        req: &ContextRequest,
        failed: &[Failure],
        now: u64,
    ) -> Result<Built, BuildError> {
        let mut notes: Vec<String> = failed
            .iter()
            .map(|f| format!("Could not fetch {} ({}).", f.need.what(), f.reason))
            .collect();
        notes.extend(self.coordination_note.clone());
        let Some(at) = self.find_anchor(req) else {
            return Err(BuildError::AnchorNotFound {
                channel: req.channel.clone(),
                anchor: req.anchor_id.clone(),
                notes,
            });
        };
        let anchor = at.message();
        let thread_id = self.anchor_thread(req, &at);
        let center = match &at {
            AnchorAt::Reply { thread, .. } => self
                .channels
                .get(&req.channel)
                .and_then(|c| c.key_of(thread))
                .unwrap_or(anchor.key),
            _ => anchor.key,
        };
        let ch = self.channels.get(&req.channel);
        let channel = Channel {
            id: req.channel.clone(),
            name: ch
                .and_then(|c| c.name.clone())
                .unwrap_or_else(|| req.channel.clone()),
            platform: ch
                .and_then(|c| c.platform.clone())
                .unwrap_or_else(|| DEFAULT_PLATFORM.to_string()),
        };
        let near = self.nearest(&req.channel, center, anchor.id(), req.adjacent);
        let anchor_text = anchor.text.as_str();
        let anchor_view = AnchorView {
            message_id: anchor.id(),
            ts: anchor.iso_ts(),
            author: &anchor.author,
            text: &anchor_text,
            media: anchor.media_refs(),
            thread_id: anchor.thread_id.as_deref(),
        };
        // The adjacent messages as JSON objects (cached on messages without thread
        // activity), then the ones that fit the snapshot budget: those with thread
        // activity or reactions first, then the nearest in time, each while it fits.
        let anchor_secs = anchor.key.0;
        let compact_entry = |m: &StoredMessage, activity: Option<&Activity>| -> f64 {
            if req.prompt.compact {
                compact_entry_estimate(m, activity, anchor_secs)
            } else {
                0.0
            }
        };
        let picks: Vec<AdjacentPick> = near
            .iter()
            .map(|m| {
                let distance = micros(m.key).abs_diff(micros(center));
                match self.thread_activity(&req.channel, m, now, false) {
                    None => {
                        let f =
                            m.adjacent_fragment(|m| section_json(&adjacent_view(m, None), false));
                        AdjacentPick {
                            json: Cow::Borrowed(f.json.as_str()),
                            estimate: f.estimate,
                            compact: compact_entry(m, None),
                            author: &m.author,
                            signal: !m.reactions().is_empty(),
                            distance,
                        }
                    }
                    some => {
                        let compact = compact_entry(m, some.as_ref());
                        let json = section_json(&adjacent_view(m, some), false);
                        AdjacentPick {
                            estimate: tokens::estimate(&json),
                            json: Cow::Owned(json),
                            compact,
                            author: &m.author,
                            signal: true,
                            distance,
                        }
                    }
                }
            })
            .collect();
        let head = section_json(
            &SnapshotHead {
                schema_version: SCHEMA_VERSION,
                channel: channel.clone(),
                anchor: anchor_view.clone(),
            },
            false,
        );
        let form = if req.prompt.compact {
            // The compact text without adjacent messages, its note at its widest.
            let bare = ChannelSnapshot {
                schema_version: SCHEMA_VERSION.to_string(),
                channel: channel.clone(),
                anchor: Anchor {
                    message_id: anchor.id().to_string(),
                    ts: anchor.iso_ts().to_string(),
                    author: (*anchor.author).clone(),
                    text: anchor_text.to_string(),
                    media: anchor.media_refs(),
                    thread_id: anchor.thread_id.as_deref().map(str::to_string),
                },
                adjacent: Vec::new(),
                adjacent_omitted: Some(99_999),
            };
            SnapshotForm::Compact {
                head: tokens::estimate(&compact_snapshot(&bare)),
                anchor_author: &anchor.author,
            }
        } else {
            SnapshotForm::Json
        };
        let (keep, json_estimate) = within_snapshot_budget(&form, &head, &picks, req, usize::MAX);
        let omitted_of = |keep: &[bool]| {
            let omitted = keep.iter().filter(|k| !**k).count();
            (omitted > 0).then(|| u32::try_from(omitted).unwrap_or(u32::MAX))
        };
        let adjacent_omitted = omitted_of(&keep);
        let mut stale = false;
        let mut rendered = None;
        if let Some(tid) = thread_id {
            let (held, was_stale) = self.held_thread(&req.channel, &tid, now, &mut notes);
            stale = was_stale;
            rendered = held.map(|h| (tid, h.root, h.replies, h.total));
        }
        // The thread's JSON, budgeted unindented, appended to a buffer.
        let mut truncation = None;
        let mut telemetry = None;
        let render = |out: &mut String, max_replies: usize| {
            rendered.as_ref().map(|(tid, root, replies, total)| {
                render_thread(
                    tid,
                    root,
                    replies,
                    *total,
                    ThreadLimits {
                        budget_tokens: req.budget_tokens,
                        meter: req.meter,
                        max_replies,
                        compact_anchor: req.prompt.compact.then_some(anchor_secs),
                    },
                    out,
                )
            })
        };
        let guidance = guidance_text(req.prompt);
        let g_est = guidance_estimate(req.prompt);
        let snapshot_parts = SnapshotParts {
            head: &head,
            picks: &picks,
            keep: &keep,
            adjacent_omitted,
        };
        let assembled = if req.prompt.pretty || req.prompt.compact {
            // The form shown is written, then counted: while a document is over its
            // budget (the choice was made on estimates of its parts), it keeps fewer.
            let mut keep = keep;
            let mut max_replies = usize::MAX;
            loop {
                let adjacent_omitted = omitted_of(&keep);
                let snapshot_json = if req.prompt.pretty {
                    let adjacent = near
                        .iter()
                        .zip(&keep)
                        .filter(|(_, k)| **k)
                        .map(|(m, _)| self.adjacent_view(&req.channel, m, now))
                        .collect();
                    section_json(
                        &SnapshotView {
                            schema_version: SCHEMA_VERSION,
                            channel: channel.clone(),
                            anchor: anchor_view.clone(),
                            adjacent,
                            adjacent_omitted,
                        },
                        true,
                    )
                } else {
                    let mut json = String::new();
                    SnapshotParts {
                        head: &head,
                        picks: &picks,
                        keep: &keep,
                        adjacent_omitted,
                    }
                    .write(&mut json);
                    json
                };
                let mut thread_json = String::new();
                let r = render(&mut thread_json, max_replies);
                let included = r
                    .as_ref()
                    .map_or(0, |r| r.truncation.included_replies as usize);
                if let Some(r) = r {
                    truncation = Some(r.truncation);
                    telemetry = Some(r.telemetry);
                }
                let thread_json = truncation.is_some().then_some(thread_json);
                let a =
                    assemble_documents(guidance, snapshot_json, thread_json, req.prompt.compact);
                let kept = keep.iter().filter(|k| **k).count();
                let (s_est, t_est) = a.estimates;
                let snapshot_over = kept > 0 && !req.meter.fits(s_est, req.snapshot_budget_tokens);
                let thread_over = included > 1 && !req.meter.fits(t_est, req.budget_tokens);
                if !snapshot_over && !thread_over {
                    break a;
                }
                if snapshot_over {
                    let n = fewer(kept, s_est, req.meter.allowance(req.snapshot_budget_tokens));
                    keep = within_snapshot_budget(&form, &head, &picks, req, n).0;
                }
                if thread_over {
                    max_replies =
                        fewer(included, t_est, req.meter.allowance(req.budget_tokens)).max(1);
                }
            }
        } else {
            // The default form writes both documents straight into the prompt, whose
            // estimates are known from their parts.
            let mut prompt = spare::take(guidance.len() + snapshot_parts.len() + 128);
            prompt.push_str(guidance);
            let snapshot_range =
                write_document(&mut prompt, "\n", (SNAPSHOT_OPEN, SNAPSHOT_CLOSE), |p| {
                    snapshot_parts.write(p);
                });
            let mut t_est = 0.0;
            let thread_range = rendered.is_some().then(|| {
                write_document(&mut prompt, "\n\n", (THREAD_OPEN, THREAD_CLOSE), |p| {
                    if let Some(r) = render(p, usize::MAX) {
                        t_est = r.estimate;
                        truncation = Some(r.truncation);
                        telemetry = Some(r.telemetry);
                    }
                })
            });
            Assembled {
                prompt,
                snapshot_range,
                thread_range,
                documents: None,
                estimates: (json_estimate, t_est),
            }
        };
        let Assembled {
            prompt,
            snapshot_range,
            thread_range,
            documents,
            estimates: (s_est, t_est),
        } = assembled;
        let (snapshot_open, thread_open) = section_tags(documents.is_some());
        if stale {
            self.counters.stale_serves += 1;
        }
        // Upper bounds, as budgets count them; the parts meet at tags and line breaks,
        // so the whole is bounded from the sum of their estimates and the frame's.
        let mut frame = format!("\n{snapshot_open}\n\n{SNAPSHOT_CLOSE}");
        if thread_range.is_some() {
            frame.push_str(&format!("\n\n{thread_open}\n\n{THREAD_CLOSE}"));
        }
        let frame_est = tokens::estimate(&frame);
        let bound = |e: f64| req.meter.bound(e);
        // What the thread shown counts (the compact or indented form's own text).
        if let Some(t) = telemetry.as_mut() {
            t.actual_tokens = bound(t_est);
        }
        let tokens = Tokens {
            guidance: bound(g_est),
            snapshot: bound(s_est),
            thread: bound(t_est),
            total: bound(g_est + s_est + t_est + frame_est),
        };
        Ok(Built {
            prompt,
            snapshot_range,
            thread_range,
            documents,
            truncation,
            telemetry,
            tokens,
            stale,
            notes,
        })
    }
}
