//! One channel's state: its window of messages, the ids that are not their ts, the
//! replies whose thread is not held, the deletions remembered, and its search index.

use super::{window, DELETED_REMEMBERED, ORPHAN_REPLIES_REMEMBERED};
use crate::channel::message::StoredMessage;
use crate::core::packed_text::PackedText;
use crate::core::search::hasher::WordHash;
use crate::core::search::index::SearchIndex;
use crate::core::time::TsKey;
use std::collections::{HashMap, HashSet, VecDeque};

/// One channel's state.
#[derive(Debug, Default)]
pub struct ChannelState {
    pub name: Option<String>,
    pub platform: Option<String>,
    pub workspace: Option<String>,
    /// Channel messages (top-level and broadcast replies) in ts order, each boxed.
    pub window: window::Window,
    /// Message id -> ts key, for the window's messages whose id is not their ts (a
    /// Slack message's id is its ts: its key is read from the id, so most messages need
    /// no entry here). Hashed with the index's fast hasher: the keys are the platform's
    /// ids, and a collision flood would slow only this channel. See
    /// [`ChannelState::key_of`].
    pub(super) other_ids: HashMap<String, TsKey, WordHash>,
    /// Reply id -> thread id, for replies held in the replies cache.
    pub reply_threads: HashMap<String, String, WordHash>,
    /// A history page was ingested: the window reaches back as far as the platform gave.
    pub history_loaded: bool,
    /// Search index over every message held for the channel (window and held threads).
    pub index: SearchIndex,
    /// Replies delivered by event for threads not held (newest
    /// [`ORPHAN_REPLIES_REMEMBERED`]), by id.
    pub(super) orphans: HashMap<String, StoredMessage>,
    pub(super) orphans_order: VecDeque<String>,
    pub(super) deleted: HashSet<String>,
    /// Deletions in the order they came, with their message's time (its ts, or an
    /// upper bound of it when the message was never seen).
    pub(super) deleted_order: VecDeque<(String, TsKey)>,
    /// The time of the newest forgotten deletion: fetched copies at or before it that
    /// the store does not hold are dropped.
    pub(super) deleted_horizon: Option<TsKey>,
}

impl ChannelState {
    pub fn was_deleted(&self, id: &str) -> bool {
        self.deleted.contains(id)
    }

    /// Remembers a deletion; returns whether it is new, and the deletion forgotten to
    /// make room for it.
    pub(super) fn remember_deleted(&mut self, id: &str, key: TsKey) -> (bool, Option<String>) {
        if !self.deleted.insert(id.to_string()) {
            return (false, None);
        }
        self.deleted_order.push_back((id.to_string(), key));
        if self.deleted_order.len() > DELETED_REMEMBERED {
            if let Some((old, key)) = self.deleted_order.pop_front() {
                self.deleted.remove(&old);
                self.deleted_horizon = self.deleted_horizon.max(Some(key));
                return (true, Some(old));
            }
        }
        (true, None)
    }

    /// The newest time at which a forgotten deletion may lie (see [`DELETED_REMEMBERED`]).
    pub fn deleted_horizon(&self) -> Option<TsKey> {
        self.deleted_horizon
    }

    pub fn get(&self, id: &str) -> Option<&StoredMessage> {
        self.key_of(id)
            .and_then(|k| self.window.get(&k))
            .map(|m| &**m)
    }

    /// The window key of message `id`, when the window holds it.
    pub fn key_of(&self, id: &str) -> Option<TsKey> {
        if let Some(k) = self.other_ids.get(id) {
            return Some(*k);
        }
        let k = crate::core::time::ts_key(id)?;
        self.window.get(&k).filter(|m| m.id() == id).map(|m| m.key)
    }

    /// Records that the window holds message `id` under `key` (nothing to record when
    /// the id is the ts the key was read from).
    pub(super) fn hold_id(&mut self, id: &str, key: TsKey) {
        if crate::core::time::ts_key(id) != Some(key) {
            self.other_ids.insert(id.to_string(), key);
        }
    }

    /// Removes message `id` from the window; returns its key when it was held.
    pub(super) fn remove_from_window(&mut self, id: &str) -> Option<Box<StoredMessage>> {
        let k = self.key_of(id)?;
        self.other_ids.remove(id);
        self.window.remove(&k)
    }

    /// A reply delivered by event whose thread is not held.
    pub fn orphan(&self, id: &str) -> Option<&StoredMessage> {
        self.orphans.get(id)
    }

    /// Remembers a reply whose thread is not held; returns the one forgotten to make
    /// room for it.
    pub(super) fn remember_orphan(&mut self, m: &StoredMessage) -> Option<String> {
        if self.orphans.insert(m.id().to_string(), m.clone()).is_none() {
            self.orphans_order.push_back(m.id().to_string());
            if self.orphans_order.len() > ORPHAN_REPLIES_REMEMBERED {
                if let Some(old) = self.orphans_order.pop_front() {
                    self.orphans.remove(&old);
                    return Some(old);
                }
            }
        }
        None
    }

    /// Indexes (or re-indexes) a held message: its text and file names.
    pub(super) fn index_message(&mut self, m: &StoredMessage) {
        index_into(&mut self.index, m, &m.text);
    }

    /// [`ChannelState::index_message`], reading `text` (the text `m` came with, before
    /// it was packed: indexing it costs no decoding).
    pub(super) fn index_message_as(&mut self, m: &StoredMessage, text: &PackedText) {
        index_into(&mut self.index, m, text);
    }

    /// Indexes every message the window holds (a channel just restored).
    pub(super) fn index_window(&mut self) {
        for m in self.window.iter() {
            index_into(&mut self.index, m, &m.text);
        }
    }
}

/// Indexes `m`: its text (`text`, which reads as `m`'s) and file names.
fn index_into(index: &mut SearchIndex, m: &StoredMessage, text: &PackedText) {
    text.with_str(|text| {
        let mut texts: Vec<&str> = Vec::with_capacity(1 + m.files().len());
        texts.push(text);
        texts.extend(m.files().iter().filter_map(|f| f.media.filename.as_deref()));
        index.add(
            m.key,
            m.thread_id.as_deref(),
            &m.author.user_id,
            &m.author.display_name,
            &texts,
        );
    });
}
