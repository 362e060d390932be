//! The thread replies cache: held threads, their replies bounded per thread, pages
//! fetched from the platform, and the replies that move between threads or are dropped.

use super::*;

impl ChannelStore {
    /// Forgets the replies of a thread entry that left the replies cache (a reply
    /// also held in another thread keeps its place there).
    pub(super) fn drop_thread_replies(&mut self, channel: &str, thread: &str, entry: &ThreadEntry) {
        for m in entry.replies.values() {
            if let Some(ch) = self.channels.get_mut(channel) {
                if ch.reply_threads.get(m.id()).is_some_and(|t| t == thread) {
                    ch.reply_threads.remove(m.id());
                }
            }
            self.refresh_index(channel, m.id(), m.key);
        }
    }

    /// Writes a thread's entry to the replies cache and drops what the store keeps
    /// about the threads that leave it (their replies' index entries and locations).
    pub(super) fn put_thread_entry(&mut self, key: ThreadKey, entry: ThreadEntry, now: u64) {
        for ((channel, thread), gone) in self.threads.put_replies(key, entry, now) {
            self.drop_thread_replies(&channel, &thread, &gone);
        }
    }

    /// Adds a reply to its thread's entry when the thread is held (or is new enough to
    /// be held complete), and updates the root's counters. `plain` is the reply's text
    /// as it came, when packing replaced it (the index reads it).
    pub(super) fn put_reply(
        &mut self,
        channel: &str,
        thread: &str,
        m: &StoredMessage,
        plain: Option<&PackedText>,
        live: bool,
        now: u64,
    ) {
        // A root known to have no replies starts a thread that is held complete from
        // its first reply on.
        let root_count = self
            .channel_mut(channel)
            .get(thread)
            .map(StoredMessage::reply_count);
        let mut is_new = true;
        let mut held_count = None;
        match self.threads.replies_mut(channel, thread) {
            Some(entry) => {
                is_new = entry.value.replies.insert(m.key, m.clone()).is_none();
                held_count = entry
                    .value
                    .complete
                    .then_some(entry.value.replies.len() as u64);
                // A live reply to a thread held whole shows the events are flowing for
                // it: the thread stays as fresh as the newest reply, and steady traffic
                // costs no refetch every TTL.
                if live && entry.value.complete {
                    entry.written_at = entry.written_at.max(now);
                }
            }
            None if live && root_count == Some(0) => {
                let mut entry = ThreadEntry {
                    complete: true,
                    ..ThreadEntry::default()
                };
                entry.replies.insert(m.key, m.clone());
                held_count = Some(1);
                self.put_thread_entry(thread_key(channel, thread), entry, now);
            }
            None => {}
        }
        let held = self.threads.replies(channel, thread).is_some();
        let ch = self.channel_mut(channel);
        if held {
            let other = ch
                .reply_threads
                .insert(m.id().to_string(), thread.to_string());
            ch.index_message_as(m, plain.unwrap_or(&m.text));
            if let Some(other) = other {
                self.leave_other_threads(channel, thread, vec![(other, m.id().to_string())]);
            }
            self.bound_thread(channel, thread);
        }
        let ch = self.channel_mut(channel);
        let bump = |root: &mut StoredMessage| {
            match held_count {
                Some(n) => root.set_reply_count(n),
                None if is_new && live => root.set_reply_count(root.reply_count() + 1),
                None => {}
            }
            let newer = root
                .latest_reply()
                .and_then(crate::core::time::ts_key)
                .is_none_or(|k| k < m.key);
            if newer {
                root.extras_mut().latest_reply = Some(m.ts.to_string());
            }
        };
        let mut bumped = false;
        if let Some(k) = ch.key_of(thread) {
            if let Some(root) = ch.window.get_mut(&k) {
                bump(root);
                bumped = true;
            }
        }
        if bumped {
            self.note_window(channel, thread);
        }
        if let Some(root) = self.threads.starter_mut(channel, thread) {
            bump(&mut root.value);
        }
    }

    /// Holds a thread the platform just created as complete with no reply, so each reply
    /// from now on is held. A thread created `starterless` (a Discord private thread)
    /// is rooted by its first reply.
    pub(super) fn open_new_thread(
        &mut self,
        channel: &str,
        thread: &str,
        starterless: bool,
        now: u64,
    ) {
        if self.threads.replies(channel, thread).is_some() {
            return;
        }
        let entry = ThreadEntry {
            complete: true,
            rootless: starterless && self.find(channel, thread).is_none(),
            ..ThreadEntry::default()
        };
        self.put_thread_entry(thread_key(channel, thread), entry, now);
    }

    /// Keeps a held thread within `max_thread_replies`: the oldest replies leave it (and
    /// the index), and the thread is no longer complete.
    pub(super) fn bound_thread(&mut self, channel: &str, thread: &str) {
        let max = self.config.max_thread_replies;
        let dropped = match self.threads.replies_mut(channel, thread) {
            Some(e) => e.value.keep_newest(max),
            None => Vec::new(),
        };
        self.forget_dropped_replies(channel, thread, &dropped);
    }

    pub(super) fn forget_dropped_replies(
        &mut self,
        channel: &str,
        thread: &str,
        dropped: &[StoredMessage],
    ) {
        self.counters.replies_dropped += dropped.len() as u64;
        for m in dropped {
            if let Some(ch) = self.channels.get_mut(channel) {
                if ch.reply_threads.get(m.id()).is_some_and(|t| t == thread) {
                    ch.reply_threads.remove(m.id());
                }
            }
            self.refresh_index(channel, m.id(), m.key);
        }
    }

    /// Ingests one page of a thread (`conversations.replies`): the root (when present)
    /// and replies. The first page replaces what was held; replies that arrived by
    /// event and are newer than the page are kept. `last_page` marks the thread complete.
    pub fn put_thread_page(
        &mut self,
        channel: &str,
        thread: &str,
        messages: Vec<StoredMessage>,
        first_page: bool,
        last_page: bool,
        now: u64,
    ) {
        let key = thread_key(channel, thread);
        let mut entry = if first_page {
            ThreadEntry::default()
        } else {
            self.threads
                .replies(channel, thread)
                .map(|e| e.value.clone())
                .unwrap_or_default()
        };
        let previous = if first_page {
            self.threads
                .replies(channel, thread)
                .map(|e| e.value.clone())
        } else {
            None
        };
        let previous_replies = previous.as_ref().map(|p| p.replies.clone());
        let mut messages: Vec<StoredMessage> = messages
            .into_iter()
            .map(|m| {
                let m = self.prepared(m);
                self.merge_fetched(channel, m)
            })
            .collect();
        self.add_newer_than_page(channel, thread, previous.as_ref(), &mut messages);
        for m in &messages {
            self.remember_files(channel, m);
        }
        let messages: Vec<StoredMessage> = messages
            .into_iter()
            .filter(|m| !self.refuses_fetched(channel, m))
            .collect();
        let ch = self.channel_mut(channel);
        let mut root = None;
        let mut moved = Vec::new();
        for m in messages {
            if m.id() == thread {
                root = Some(m);
            } else if m.thread_id.as_deref() == Some(thread) {
                if let Some(other) = ch
                    .reply_threads
                    .insert(m.id().to_string(), thread.to_string())
                {
                    moved.push((other, m.id().to_string()));
                }
                entry.replies.insert(m.key, m);
            }
        }
        self.leave_other_threads(channel, thread, moved);
        let ch = self.channel_mut(channel);
        if let Some(prev) = previous {
            let newest = entry.replies.keys().next_back().copied();
            for (k, m) in prev.replies {
                if newest.is_none_or(|n| k > n) && !ch.was_deleted(m.id()) {
                    entry.replies.insert(k, m);
                }
            }
        }
        entry.complete = last_page;
        // A thread read to its beginning without a root (none was started with it, or it
        // was deleted) is rooted by its first reply from now on.
        let root_held = root.is_some()
            || self.threads.starter(channel, thread).is_some()
            || self
                .channels
                .get(channel)
                .is_some_and(|c| c.key_of(thread).is_some());
        entry.rootless = self.was_deleted(channel, thread) || (last_page && !root_held);
        let dropped = entry.keep_newest(self.config.max_thread_replies);
        if let Some(r) = root {
            self.put_fetched_root(channel, &key, r, &entry, now);
        }
        let gone: Vec<StoredMessage> = match &previous_replies {
            Some(prev) => prev
                .values()
                .filter(|m| !entry.replies.contains_key(&m.key))
                .cloned()
                .collect(),
            None => Vec::new(),
        };
        self.put_thread_entry(key.clone(), entry, now);
        let dropped: Vec<StoredMessage> = dropped
            .into_iter()
            .filter(|m| {
                previous_replies
                    .as_ref()
                    .is_none_or(|p| !p.contains_key(&m.key))
            })
            .collect();
        self.forget_dropped_replies(channel, thread, &dropped);
        for m in &gone {
            if let Some(ch) = self.channels.get_mut(channel) {
                if ch.reply_threads.get(m.id()).is_some_and(|t| t == thread) {
                    ch.reply_threads.remove(m.id());
                }
            }
            self.refresh_index(channel, m.id(), m.key);
        }
        self.index_thread_replies(channel, thread);
    }
}

impl ChannelStore {
    /// Adds to a fetched page the replies that events delivered after the fetch began and
    /// the page lacks: held in the previous entry, or remembered while the thread was not
    /// held.
    fn add_newer_than_page(
        &self,
        channel: &str,
        thread: &str,
        previous: Option<&ThreadEntry>,
        messages: &mut Vec<StoredMessage>,
    ) {
        if let Some(since) = self.recent.page_since().filter(|_| !self.recent.is_empty()) {
            // Replies that events delivered after the fetch began and the page lacks:
            // held in the previous entry, or remembered while the thread was not held.
            let in_page: HashSet<&str> = messages.iter().map(StoredMessage::id).collect();
            let mut newer: Vec<StoredMessage> = Vec::new();
            let held = previous.into_iter().flat_map(|p| p.replies.values());
            let orphans = self
                .channels
                .get(channel)
                .into_iter()
                .flat_map(|c| c.orphans.values())
                .filter(|m| m.thread_id.as_deref() == Some(thread));
            for m in held.chain(orphans) {
                if !in_page.contains(m.id())
                    && !newer.iter().any(|n| n.id() == m.id())
                    && self.recent.touched_after(channel, m.id(), since)
                {
                    newer.push(m.clone());
                }
            }
            messages.extend(newer);
        }
    }

    /// Holds a fetched thread's root as its starter (and in the window, when it is there),
    /// with the reply count and newest reply the thread shows.
    fn put_fetched_root(
        &mut self,
        channel: &str,
        key: &ThreadKey,
        mut r: StoredMessage,
        entry: &ThreadEntry,
        now: u64,
    ) {
        let held = entry.replies.len() as u64;
        let newest_ts = entry.replies.values().next_back().map(|m| m.ts.to_string());
        if entry.complete {
            r.set_reply_count(held);
        } else {
            r.set_reply_count(r.reply_count().max(held));
        }
        if newest_ts.is_some() {
            r.extras_mut().latest_reply = newest_ts;
        }
        self.threads.put_starter(key.clone(), r.clone(), now);
        let ch = self.channel_mut(channel);
        if ch.key_of(r.id()).is_some() {
            self.put_message(channel, r, false, now);
        }
    }

    /// Indexes a held thread's replies in its channel; a reply held as an orphan until now
    /// is the thread's from here on.
    fn index_thread_replies(&mut self, channel: &str, thread: &str) {
        let Some(ch) = self.channels.get_mut(channel) else {
            return;
        };
        if let Some(e) = self.threads.replies(channel, thread) {
            let mut adopted = Vec::new();
            for m in e.value.replies.values() {
                ch.index_message(m);
                // The thread holds it now.
                if ch.orphans.remove(m.id()).is_some() {
                    adopted.push(m.id().to_string());
                }
            }
            for id in adopted {
                self.note_orphan(channel, &id);
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

impl ChannelStore {
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
        let entry = self.threads.replies(channel, tid);
        let age = entry.map(|e| now.saturating_sub(e.written_at));
        let fresh = age.is_some_and(|a| a < self.threads.replies_ttl());
        let root = self
            .channels
            .get(channel)
            .and_then(|c| c.get(tid))
            .or_else(|| self.threads.starter(channel, tid).map(|e| &e.value));
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
        // A thread without a root message to show is rooted by its first reply.
        let held = entry.map(|e| &e.value);
        let first_reply = held
            .filter(|e| e.rootless)
            .and_then(|e| e.replies.values().next());
        let (root, skip) = match (root, first_reply) {
            (Some(root), _) => (Some(root), 0),
            (None, Some(first)) => {
                if self.was_deleted(channel, tid) {
                    notes.push(format!(
                        "Thread {tid}'s root message was deleted; its first reply is shown as the root."
                    ));
                }
                (Some(first), 1)
            }
            (None, None) => (None, 0),
        };
        match (usable, root) {
            (true, Some(root)) => {
                let replies: Vec<&StoredMessage> = held
                    .map(|e| e.replies.values().skip(skip).collect())
                    .unwrap_or_default();
                let total = match held {
                    Some(e) if e.complete => replies.len() as u64,
                    _ if skip == 1 => replies.len() as u64,
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
}
