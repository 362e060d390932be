//! What changed in a store since it was last saved, for a persistence layer that writes
//! the store's state behind it (see `crate::channel::persist`).
//!
//! While tracking is on, every operation notes the keys of what it wrote, changed or
//! removed: a channel's settings, a window message, a thread entry, a starter, an orphan
//! reply, a deletion, a file location, a user, cached media. [`ChannelStore::take_changes`]
//! resolves those keys to what the store holds now (a key no longer held becomes a
//! removal), so many changes to one message between two saves are written once. The
//! same shapes carry a saved state back in: [`ChannelStore::restore`].
//!
//! Nothing here touches a file: rows are plain values, cloned so that they can be
//! encoded and written on another thread.

use super::{CachedMedia, ChannelStore, FileKey, FileLocation, ThreadEntry, ThreadKey};
use crate::channel::message::StoredMessage;
use crate::core::time::TsKey;
use std::collections::{HashMap, HashSet};

/// A message's key in its channel: `(channel id, message id)`.
pub type MessageKey = (String, String);

/// One changed key and what the store holds under it now (`None`: nothing, remove it).
pub type Row<K, V> = (K, Option<V>);

/// A channel's own settings and the state that is not a message.
#[derive(Debug, Clone, PartialEq)]
pub struct ChannelMeta {
    pub id: String,
    pub name: Option<String>,
    pub platform: Option<String>,
    pub workspace: Option<String>,
    pub history_loaded: bool,
    /// The newest time at which a forgotten deletion may lie.
    pub deleted_horizon: Option<TsKey>,
}

/// A remembered deletion came or went (in the order they happened).
#[derive(Debug, Clone, PartialEq)]
pub enum DeletedChange {
    Remembered {
        channel: String,
        id: String,
        /// The deleted message's time, or an upper bound of it.
        key: TsKey,
    },
    Forgotten {
        channel: String,
        id: String,
    },
}

/// A held thread: its replies oldest first, whether they are all of them, and when the
/// entry was written (its TTL runs from there).
#[derive(Debug, Clone, PartialEq)]
pub struct SavedThread {
    pub written_at: u64,
    pub complete: bool,
    pub rootless: bool,
    pub replies: Vec<StoredMessage>,
}

/// A thread root in the starter cache, with the time it was written.
#[derive(Debug, Clone, PartialEq)]
pub struct SavedStarter {
    pub written_at: u64,
    pub message: StoredMessage,
}

/// The store's changes (or, for [`ChannelStore::restore`], a whole saved state: every value
/// present, in the order it was first written).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Changes {
    pub channels: Vec<ChannelMeta>,
    pub window: Vec<Row<MessageKey, StoredMessage>>,
    pub orphans: Vec<Row<MessageKey, StoredMessage>>,
    pub deleted: Vec<DeletedChange>,
    pub threads: Vec<Row<ThreadKey, SavedThread>>,
    pub starters: Vec<Row<ThreadKey, SavedStarter>>,
    pub files: Vec<Row<FileKey, FileLocation>>,
    pub users: Vec<Row<String, (String, bool)>>,
    pub media: Vec<Row<FileKey, CachedMedia>>,
}

impl Changes {
    /// Rows to write (the queue of a write-behind is bounded by them).
    pub fn rows(&self) -> usize {
        self.channels.len()
            + self.window.len()
            + self.orphans.len()
            + self.deleted.len()
            + self.threads.len()
            + self.starters.len()
            + self.files.len()
            + self.users.len()
            + self.media.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows() == 0
    }
}

/// The keys noted since the last save (thread entries and starters are noted by their
/// caches, users by the directory).
#[derive(Debug, Default)]
pub struct Journal {
    channels: HashSet<String>,
    window: Noted,
    orphans: Noted,
    deleted: Vec<DeletedChange>,
    files: HashSet<FileKey>,
    media: HashSet<FileKey>,
}

/// Message ids noted, by channel.
type Noted = HashMap<String, HashSet<String>>;

fn note(noted: &mut Noted, channel: &str, id: &str) {
    // Most notes repeat a key already noted (a root bumped by each of its replies): look
    // before allocating.
    let ids = match noted.get_mut(channel) {
        Some(ids) => ids,
        None => noted.entry(channel.to_string()).or_default(),
    };
    if !ids.contains(id) {
        ids.insert(id.to_string());
    }
}

fn keys(noted: Noted) -> impl Iterator<Item = MessageKey> {
    noted
        .into_iter()
        .flat_map(|(c, ids)| ids.into_iter().map(move |id| (c.clone(), id)))
}

impl Journal {
    fn is_empty(&self) -> bool {
        self.channels.is_empty()
            && self.window.is_empty()
            && self.orphans.is_empty()
            && self.deleted.is_empty()
            && self.files.is_empty()
            && self.media.is_empty()
    }
}

impl ChannelStore {
    /// Starts noting changes for [`ChannelStore::take_changes`] (off by default: a store that
    /// is not saved pays nothing).
    pub fn track_changes(&mut self) {
        self.journal.get_or_insert_with(Journal::default);
        self.threads.track_changes();
        self.users.track_changes();
    }

    /// Something changed since the last [`ChannelStore::take_changes`].
    pub fn has_changes(&self) -> bool {
        self.journal.as_ref().is_some_and(|j| !j.is_empty())
            || self.threads.has_changes()
            || self.users.has_changes()
    }

    pub(super) fn note_channel(&mut self, channel: &str) {
        if let Some(j) = &mut self.journal {
            if !j.channels.contains(channel) {
                j.channels.insert(channel.to_string());
            }
        }
    }

    pub(super) fn note_window(&mut self, channel: &str, id: &str) {
        if let Some(j) = &mut self.journal {
            note(&mut j.window, channel, id);
        }
    }

    pub(super) fn note_orphan(&mut self, channel: &str, id: &str) {
        if let Some(j) = &mut self.journal {
            note(&mut j.orphans, channel, id);
        }
    }

    pub(super) fn note_deleted(&mut self, change: DeletedChange) {
        if let Some(j) = &mut self.journal {
            j.deleted.push(change);
        }
    }

    pub(super) fn note_file(&mut self, key: &FileKey) {
        if let Some(j) = &mut self.journal {
            j.files.insert(key.clone());
        }
    }

    pub(super) fn note_media(&mut self, key: &FileKey) {
        if let Some(j) = &mut self.journal {
            j.media.insert(key.clone());
        }
    }

    /// What changed since the last call, resolved to what the store holds now; the
    /// journal starts empty again. Empty when tracking is off.
    pub fn take_changes(&mut self) -> Changes {
        let Some(j) = self.journal.take() else {
            return Changes::default();
        };
        self.journal = Some(Journal::default());
        let channels = j
            .channels
            .into_iter()
            .filter_map(|id| {
                let c = self.channels.get(&id)?;
                Some(ChannelMeta {
                    name: c.name.clone(),
                    platform: c.platform.clone(),
                    workspace: c.workspace.clone(),
                    history_loaded: c.history_loaded,
                    deleted_horizon: c.deleted_horizon,
                    id,
                })
            })
            .collect();
        let window = keys(j.window)
            .map(|(c, id)| {
                let m = self.channels.get(&c).and_then(|ch| ch.get(&id)).cloned();
                ((c, id), m)
            })
            .collect();
        let orphans = keys(j.orphans)
            .map(|(c, id)| {
                let m = self.channels.get(&c).and_then(|ch| ch.orphan(&id)).cloned();
                ((c, id), m)
            })
            .collect();
        let (threads, starters) = self.threads.take_changes();
        let files = j
            .files
            .into_iter()
            .map(|k| {
                let f = self.files.get(&k).cloned();
                (k, f)
            })
            .collect();
        let users = self
            .users
            .take_changed()
            .into_iter()
            .map(|id| {
                let u = self.users.lookup(&id);
                (id, u)
            })
            .collect();
        let media = j
            .media
            .into_iter()
            .map(|k| {
                let m = self.media.peek(&k).cloned();
                (k, m)
            })
            .collect();
        Changes {
            channels,
            window,
            orphans,
            deleted: j.deleted,
            threads,
            starters,
            files,
            users,
            media,
        }
    }

    /// Everything the store holds that a save keeps, as rows: channels, windows, orphan
    /// replies and file locations in key order, remembered deletions in the order they
    /// came, threads and starters by write time. What a restored store is compared by.
    /// (Orphan replies and file locations are saved in the order they came, but which
    /// of them is forgotten first past their bounds may differ after a restart.)
    pub fn dump(&self) -> Changes {
        let mut out = Changes::default();
        let mut channels: Vec<(&String, &super::ChannelState)> = self.channels.iter().collect();
        channels.sort_by(|a, b| a.0.cmp(b.0));
        for (id, c) in channels {
            out.channels.push(ChannelMeta {
                id: id.clone(),
                name: c.name.clone(),
                platform: c.platform.clone(),
                workspace: c.workspace.clone(),
                history_loaded: c.history_loaded,
                deleted_horizon: c.deleted_horizon,
            });
            for m in c.window.iter() {
                out.window.push((
                    (id.clone(), m.id().to_string()),
                    Some(StoredMessage::clone(m)),
                ));
            }
            let mut orphans: Vec<&StoredMessage> = c.orphans.values().collect();
            orphans.sort_by(|a, b| a.id().cmp(b.id()));
            for m in orphans {
                out.orphans
                    .push(((id.clone(), m.id().to_string()), Some(m.clone())));
            }
            for (did, key) in &c.deleted_order {
                out.deleted.push(DeletedChange::Remembered {
                    channel: id.clone(),
                    id: did.clone(),
                    key: *key,
                });
            }
        }
        (out.threads, out.starters) = self.threads.save_all();
        let mut files: Vec<(&FileKey, &FileLocation)> = self.files.iter().collect();
        files.sort_by(|a, b| a.0.cmp(b.0));
        out.files = files
            .into_iter()
            .map(|(k, f)| (k.clone(), Some(f.clone())))
            .collect();
        let mut users = self.users.all();
        users.sort();
        out.users = users
            .into_iter()
            .map(|(id, name, bot)| (id, Some((name, bot))))
            .collect();
        out
    }

    /// Loads a saved state into an empty store, rebuilding what is derived from it (the
    /// search indexes, which thread holds each reply). The store's bounds apply as to
    /// anything else it is given (a smaller window, fewer threads, ...): what does not
    /// fit is noted as removed, so the next save drops it from the file. Values are in
    /// the order they were first written; threads and starters by their write time.
    pub fn restore(&mut self, saved: Changes) {
        for c in saved.channels {
            let ch = self.channel_mut(&c.id);
            ch.name = c.name;
            ch.platform = c.platform;
            ch.workspace = c.workspace;
            ch.history_loaded = c.history_loaded;
            ch.deleted_horizon = c.deleted_horizon;
        }
        for d in saved.deleted {
            if let DeletedChange::Remembered { channel, id, key } = d {
                let ch = self.channel_mut(&channel);
                let (_, forgotten) = ch.remember_deleted(&id, key);
                if let Some(old) = forgotten {
                    self.note_deleted(DeletedChange::Forgotten { channel, id: old });
                }
            }
        }
        let window_size = self.config.window_size;
        for ((channel, _), m) in saved.window {
            let Some(m) = m else { continue };
            let m = self.prepared(m);
            let ch = self.channel_mut(&channel);
            ch.hold_id(m.id(), m.key);
            ch.window.insert(Box::new(m));
        }
        let mut evicted = Vec::new();
        for (id, ch) in &mut self.channels {
            while ch.window.len() > window_size {
                if let Some(old) = ch.window.pop_first() {
                    ch.other_ids.remove(old.id());
                    evicted.push((id.clone(), old.id().to_string()));
                }
            }
            ch.index_window();
        }
        for (channel, id) in evicted {
            self.note_window(&channel, &id);
        }
        let mut threads: Vec<(ThreadKey, SavedThread)> = saved
            .threads
            .into_iter()
            .filter_map(|(k, t)| Some((k, t?)))
            .collect();
        threads.sort_by_key(|(_, t)| t.written_at);
        // Entries the bounds changed or dropped: the file must follow.
        let mut rewrite_threads: Vec<ThreadKey> = Vec::new();
        for (key, t) in threads {
            let replies: Vec<StoredMessage> =
                t.replies.into_iter().map(|m| self.prepared(m)).collect();
            let mut entry = ThreadEntry {
                replies: replies.into_iter().map(|m| (m.key, m)).collect(),
                complete: t.complete,
                rootless: t.rootless,
            };
            if !entry.keep_newest(self.config.max_thread_replies).is_empty() {
                rewrite_threads.push(key.clone());
            }
            for ((channel, thread), gone) in self.threads.put_replies(key, entry, t.written_at) {
                self.drop_thread_replies(&channel, &thread, &gone);
                rewrite_threads.push((channel, thread));
            }
        }
        for ((channel, thread), e) in self.threads.held() {
            let ch = self.channels.entry(channel.clone()).or_default();
            for m in e.value.replies.values() {
                ch.reply_threads.insert(m.id().to_string(), thread.clone());
                ch.index_message(m);
            }
        }
        let mut starters: Vec<(ThreadKey, SavedStarter)> = saved
            .starters
            .into_iter()
            .filter_map(|(k, s)| Some((k, s?)))
            .collect();
        starters.sort_by_key(|(_, s)| s.written_at);
        let mut rewrite_starters: Vec<ThreadKey> = Vec::new();
        for (key, s) in starters {
            let message = self.prepared(s.message);
            let gone = self.threads.put_starter(key, message, s.written_at);
            rewrite_starters.extend(gone);
        }
        for ((channel, _), m) in saved.orphans {
            let Some(m) = m else { continue };
            let m = self.prepared(m);
            if let Some(old) = self.channel_mut(&channel).remember_orphan(&m) {
                self.note_orphan(&channel, &old);
            }
        }
        for (key, f) in saved.files {
            let Some(f) = f else { continue };
            self.files.remember(key, f);
        }
        for old in self.files.trim() {
            self.note_file(&old);
        }
        for (id, u) in saved.users {
            if let Some((name, is_bot)) = u {
                self.users.set(&id, &name, is_bot);
            }
        }
        for (key, m) in saved.media {
            let Some(m) = m else { continue };
            self.media.insert(key, m);
        }
        // What was loaded is what the file holds: only what the bounds changed is a
        // change to save.
        self.threads
            .changed_since_load(&rewrite_threads, &rewrite_starters);
        self.users.take_changed();
    }
}
