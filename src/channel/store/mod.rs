//! The channel store: Rust-owned channel state fed by events and fetch results.
//!
//! Per channel it holds a window of recent channel messages (default 1,000). Thread
//! replies live in the replies cache (5-minute TTL, 500 threads, LRU), thread roots in
//! the starter cache (6-hour TTL, 2,000 entries), downloaded media in a byte-bounded LRU
//! (50 MB). Events write through: a reply for a held thread is appended, an edit or a
//! reaction changes every copy of the message, a deletion removes every copy and is
//! remembered so a late fetch result cannot bring the message back.
//!
//! Nothing here reads a clock or calls anything: time is passed in (`now`, epoch ms) and
//! fetching is planned by [`context`] and carried out by the caller.

mod activity;
pub mod build;
mod channel;
pub mod config;
mod documents;
pub mod fetch;
pub mod files;
mod gate;
mod intake;
pub mod journal;
pub mod media;
mod plan;
mod platforms;
pub mod quoted;
pub mod recent;
pub mod render;
pub mod request;
pub mod stats;
mod thread_cache;
mod threads;
pub mod views;
pub mod window;

use files::FileIndex;
pub use files::{FileLocation, FILES_REMEMBERED};
use gate::FetchGate;
pub use media::CachedMedia;
pub use platforms::platform_id;

use crate::channel::message::StoredMessage;
use crate::channel::slack::users::UserDirectory;
use crate::core::cache::ByteCache;
use crate::core::model::Author;
use crate::core::packed_text::{PackedText, TextPacker};
use crate::core::search::hasher::WordHash;
use crate::core::search::index::SearchIndex;
use crate::core::time::TsKey;
pub use channel::ChannelState;
pub use config::{
    StoreConfig, DEFAULT_FETCH_TIMEOUT_MS, DEFAULT_MAX_THREAD_REPLIES, DEFAULT_MEDIA_MAX_SIZE,
    DEFAULT_REPLIES_MAX, DEFAULT_REPLIES_TTL_MS, DEFAULT_STARTERS_MAX, DEFAULT_STARTERS_TTL_MS,
    DEFAULT_WINDOW_SIZE, DEFAULT_WORKSPACE,
};
use recent::Recent;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
pub use thread_cache::{thread_key, ThreadCache, ThreadEntry, ThreadKey};

/// Deleted message ids remembered per channel. Past that, the oldest deletion is
/// forgotten and the channel's deletion horizon moves up to its message's time: a
/// fetched copy of a message at or before the horizon that the store does not hold is
/// dropped, since it may be one of the forgotten deletions.
pub const DELETED_REMEMBERED: usize = 10_000;
/// Replies remembered per channel that arrived by event for a thread the store does not
/// hold: each may be the anchor of the next build, even when its thread cannot be
/// fetched.
pub const ORPHAN_REPLIES_REMEMBERED: usize = 1_000;
/// Distinct authors shared between held messages. Past it, a new author's messages
/// carry their own copy.
pub const AUTHORS_SHARED: usize = 100_000;

/// Counters reported by `stats()` that are not cache counters.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StoreCounters {
    /// Fetcher calls made, by API method.
    pub calls: BTreeMap<String, u64>,
    pub failed_fetches: u64,
    pub stale_serves: u64,
    pub ignored_events: u64,
    pub ingested_events: u64,
    /// Requests refused by the rate limiter (queue full, wait too long, degrade).
    pub rate_limited: u64,
    /// Fetcher calls that did not settle within the fetch timeout.
    pub timed_out_fetches: u64,
    /// Retry-After values cut to [`crate::channel::ratelimit::MAX_RETRY_AFTER_MS`].
    pub retry_after_capped: u64,
    /// Replies dropped because a thread held its maximum, or a page held more than asked.
    pub replies_dropped: u64,
}

/// Key of a file in the file locations and the media cache: `(channel id, artifact id)`.
pub type FileKey = (String, String);

/// Everything the store holds. Its fields are private: state changes through the
/// methods here and in the submodules, which keep the caches, the search index and the
/// counters in step.
#[derive(Debug)]
pub struct ChannelStore {
    config: StoreConfig,
    channels: HashMap<String, ChannelState, WordHash>,
    threads: ThreadCache,
    media: ByteCache<FileKey, CachedMedia>,
    gate: FetchGate,
    files: FileIndex,
    counters: StoreCounters,
    /// Display names by user id, for payloads that carry only ids.
    users: UserDirectory,
    /// Event numbering and what events changed while fetches are in flight.
    recent: Recent,
    /// What changed since the last save, while the store is saved (see [`journal`]).
    journal: Option<journal::Journal>,
    /// One copy of each author, shared by the messages held of them (a channel has a few
    /// dozen authors and thousands of messages).
    authors: HashSet<Arc<Author>, WordHash>,
    /// Packs the text of each message the store takes in.
    texts: TextPacker,
    /// Which Discord channels are threads, and of which channel.
    discord_threads: crate::channel::discord::ThreadDirectory,
    /// Discord role names, learnt from `GUILD_CREATE` and the role dispatches.
    discord_roles: crate::channel::discord::RoleNames,
}

impl ChannelStore {
    pub fn new(config: StoreConfig) -> Self {
        ChannelStore {
            threads: ThreadCache::new(
                config.replies_max,
                config.replies_ttl_ms,
                config.starters_max,
                config.starters_ttl_ms,
            ),
            media: ByteCache::new(config.media_max_size),
            gate: FetchGate::new(config.rate_limit.clone()),
            channels: HashMap::default(),
            files: FileIndex::default(),
            counters: StoreCounters::default(),
            users: UserDirectory::default(),
            recent: Recent::default(),
            journal: None,
            authors: HashSet::default(),
            texts: if config.pack_text {
                TextPacker::default()
            } else {
                TextPacker::off()
            },
            discord_threads: Default::default(),
            discord_roles: Default::default(),
            config,
        }
    }

    /// The configuration the store runs on.
    pub fn config(&self) -> &StoreConfig {
        &self.config
    }

    /// One channel's state, when the store holds anything of it.
    pub fn channel(&self, id: &str) -> Option<&ChannelState> {
        self.channels.get(id)
    }

    /// One channel's search index, to run a query (scoring keeps its scratch space there).
    pub fn search_index_mut(&mut self, channel: &str) -> Option<&mut SearchIndex> {
        self.channels.get_mut(channel).map(|c| &mut c.index)
    }

    /// The held replies of `thread` in `channel`, fresh or not (not counted as a cache
    /// hit or miss).
    pub fn held_replies(&self, channel: &str, thread: &str) -> Option<&ThreadEntry> {
        self.threads.replies(channel, thread).map(|e| &e.value)
    }

    /// The replies cache holds `thread` within its TTL at `now` (counted as a hit or miss).
    pub fn replies_fresh(&mut self, channel: &str, thread: &str, now: u64) -> bool {
        self.threads.replies_fresh(channel, thread, now)
    }

    /// The starter cache holds the root of `thread` within its TTL at `now` (counted as a
    /// hit or miss).
    pub fn starter_fresh(&mut self, channel: &str, thread: &str, now: u64) -> bool {
        self.threads.starter_fresh(channel, thread, now)
    }

    /// Counts an answer that served data past its TTL because a fetch failed.
    pub fn count_stale_serve(&mut self) {
        self.counters.stale_serves += 1;
    }

    fn channel_mut(&mut self, id: &str) -> &mut ChannelState {
        if !self.channels.contains_key(id) {
            self.channels
                .insert(id.to_string(), ChannelState::default());
        }
        // Inserted just above when missing.
        self.channels
            .get_mut(id)
            .unwrap_or_else(|| unreachable!("channel inserted above"))
    }

    /// Sets a channel's name, platform and workspace (unset fields keep their value).
    pub fn set_channel(
        &mut self,
        id: &str,
        name: Option<String>,
        platform: Option<String>,
        workspace: Option<String>,
    ) {
        self.note_channel(id);
        let ch = self.channel_mut(id);
        if name.is_some() {
            ch.name = name;
        }
        if platform.is_some() {
            ch.platform = platform;
        }
        if workspace.is_some() {
            ch.workspace = workspace;
        }
    }

    /// The workspace rate limits of `channel` are counted against.
    pub fn workspace_of(&self, channel: &str) -> String {
        self.channels
            .get(channel)
            .and_then(|c| c.workspace.clone())
            .unwrap_or_else(|| self.config.default_workspace.clone())
    }

    fn remember_files(&mut self, channel: &str, m: &StoredMessage) {
        for f in m.files() {
            let key = (channel.to_string(), f.media.artifact_id.clone());
            self.note_file(&key);
            self.files.remember(
                key,
                FileLocation {
                    channel: channel.to_string(),
                    message_id: m.id().to_string(),
                    media: f.media.clone(),
                    url: f.url.clone(),
                },
            );
        }
        for old in self.files.trim() {
            self.note_file(&old);
        }
    }

    /// `m` ready to be held (see [`ChannelStore::prepare`]).
    pub(super) fn prepared(&mut self, mut m: StoredMessage) -> StoredMessage {
        self.prepare(&mut m);
        m
    }

    /// Readies `m` to be held: packs its text, and gives it the author shared with the
    /// other messages held of that author. Returns the text as it came when it was
    /// packed.
    fn prepare(&mut self, m: &mut StoredMessage) -> Option<PackedText> {
        let plain = self.texts.pack(&mut m.text);
        self.share_author(m);
        plain
    }

    /// Gives `m` the author shared with the other messages held of that author.
    fn share_author(&mut self, m: &mut StoredMessage) {
        match self.authors.get(&*m.author) {
            Some(a) => m.author = Arc::clone(a),
            None if self.authors.len() < AUTHORS_SHARED => {
                self.authors.insert(Arc::clone(&m.author));
            }
            None => {}
        }
    }

    /// Stores a message. `live` is true for events (the message is new now) and false
    /// for fetch results (a copy of the platform's state).
    pub fn put_message(
        &mut self,
        channel: &str,
        m: impl Into<Box<StoredMessage>>,
        live: bool,
        now: u64,
    ) {
        let mut m: Box<StoredMessage> = m.into();
        // The index reads the text as it came while it is at hand, rather than decode it.
        let plain = self.prepare(&mut m);
        let window_size = self.config.window_size;
        if live {
            if self.channel_mut(channel).was_deleted(m.id()) {
                return;
            }
        } else if self.refuses_fetched(channel, &m) {
            return;
        }
        if let Some(thread) = m.thread_id.clone() {
            self.put_reply(channel, &thread, &m, plain.as_ref(), live, now);
            if live && !m.in_channel() && self.threads.replies(channel, &thread).is_none() {
                self.note_orphan(channel, m.id());
                if let Some(old) = self.channel_mut(channel).remember_orphan(&m) {
                    self.note_orphan(channel, &old);
                }
            }
        }
        self.remember_files(channel, &m);
        if !m.in_channel() {
            return;
        }
        self.note_window(channel, m.id());
        let ch = self.channel_mut(channel);
        if ch.key_of(m.id()).is_some() {
            if let Some(old) = ch.remove_from_window(m.id()) {
                // A fetched copy may lag behind what events already told us.
                let mut m = m;
                if !live {
                    m.set_reply_count(m.reply_count().max(old.reply_count()));
                    if old.latest_reply().map(crate::core::time::ts_key)
                        > m.latest_reply().map(crate::core::time::ts_key)
                    {
                        m.extras_mut().latest_reply = old.latest_reply().map(str::to_string);
                    }
                }
                if old.text != m.text || old.files() != m.files() || old.key != m.key {
                    if old.key != m.key {
                        ch.index.remove(old.key);
                    }
                    ch.index_message_as(&m, plain.as_ref().unwrap_or(&m.text));
                }
                ch.hold_id(m.id(), m.key);
                ch.window.insert(m);
                return;
            }
        }
        ch.index_message_as(&m, plain.as_ref().unwrap_or(&m.text));
        ch.hold_id(m.id(), m.key);
        ch.window.insert(m);
        let mut evicted = Vec::new();
        while ch.window.len() > window_size {
            match ch.window.pop_first() {
                Some(old) => {
                    ch.other_ids.remove(old.id());
                    evicted.push((old.id().to_string(), old.key));
                }
                None => break,
            }
        }
        for (id, key) in evicted {
            self.note_window(channel, &id);
            self.refresh_index(channel, &id, key);
        }
    }

    /// A reply is in one thread: `(previous thread, reply id)` pairs for replies now
    /// held in `thread` leave the previous thread's entry.
    fn leave_other_threads(&mut self, channel: &str, thread: &str, moved: Vec<(String, String)>) {
        for (other, id) in moved {
            if other != thread {
                if let Some(e) = self.threads.replies_mut(channel, &other) {
                    e.value.replies.retain(|_, m| m.id() != id);
                }
            }
        }
    }

    /// Brings the index entry under `key` (message `id`) in line with the copy the
    /// store holds: the window's, else the held thread's, else none.
    fn refresh_index(&mut self, channel: &str, id: &str, key: TsKey) {
        let Some(ch) = self.channels.get_mut(channel) else {
            return;
        };
        if let Some(w) = ch.get(id) {
            let w = w.clone();
            if w.key != key {
                ch.index.remove(key);
            }
            ch.index_message(&w);
            return;
        }
        let copy = ch
            .reply_threads
            .get(id)
            .and_then(|t| self.threads.replies(channel, t))
            .and_then(|e| e.value.replies.values().find(|m| m.id() == id));
        match copy {
            Some(m) => {
                if m.key != key {
                    ch.index.remove(key);
                }
                ch.index_message(m);
            }
            None => {
                ch.index.remove(key);
            }
        }
    }

    /// Re-indexes message `id` after its text changed.
    fn reindex(&mut self, channel: &str, id: &str) {
        let Some(ch) = self.channels.get_mut(channel) else {
            return;
        };
        if let Some(m) = ch.get(id) {
            let m = m.clone();
            ch.index_message(&m);
            return;
        }
        let Some(thread) = ch.reply_threads.get(id) else {
            return;
        };
        if let Some(e) = self.threads.replies(channel, thread) {
            if let Some(m) = e.value.replies.values().find(|m| m.id() == id) {
                ch.index_message(m);
            }
        }
    }
}

#[cfg(test)]
mod tests;
