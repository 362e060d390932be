//! The thread cache: the replies held per thread and the thread roots held apart from
//! the channel window, each under its own bound and TTL, keyed by `(channel, thread)`.
//!
//! It owns what is held and how it is looked up, counted, evicted and saved; the
//! store's thread methods (`threads.rs`) keep it in step with the channel's search
//! index and reply locations.

use super::journal::{SavedStarter, SavedThread};
use super::stats::TtlCacheStats;
use crate::channel::message::StoredMessage;
use crate::core::cache::{Lookup, Stamped, TtlCache};
use crate::core::time::TsKey;
use std::collections::BTreeMap;

/// Key of a thread in the replies and starter caches: `(channel id, thread id)`. A pair,
/// never a joined string, so no id (whatever characters it holds) reaches into another
/// channel's entries.
pub type ThreadKey = (String, String);

/// The [`ThreadKey`] of `thread` in `channel`.
pub fn thread_key(channel: &str, thread: &str) -> ThreadKey {
    (channel.to_string(), thread.to_string())
}

/// Runs `f` with the [`ThreadKey`] of `thread` in `channel`, built in a buffer this
/// thread reuses, so a cache lookup allocates nothing (building a context looks up the
/// thread of every adjacent message).
fn with_thread_key<R>(channel: &str, thread: &str, f: impl FnOnce(&ThreadKey) -> R) -> R {
    thread_local! {
        static SCRATCH: std::cell::RefCell<ThreadKey> = const {
            std::cell::RefCell::new((String::new(), String::new()))
        };
    }
    SCRATCH.with(|scratch| match scratch.try_borrow_mut() {
        Ok(mut key) => {
            key.0.clear();
            key.0.push_str(channel);
            key.1.clear();
            key.1.push_str(thread);
            f(&key)
        }
        // Only if `f` itself looked a key up this way.
        Err(_) => f(&thread_key(channel, thread)),
    })
}

/// The replies of one thread, as held.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ThreadEntry {
    pub replies: BTreeMap<TsKey, StoredMessage>,
    /// Every reply of the thread is held (it was fetched to the last page, or seen from
    /// its first reply on through events).
    pub complete: bool,
    /// The thread has no root message to show: it was started without one (a Discord
    /// private thread, a thread made without a message), its root was deleted, or a
    /// complete fetch found none. Its first reply roots it.
    pub rootless: bool,
}

impl ThreadEntry {
    /// Keeps the newest `max` replies and returns the others, oldest first; a thread
    /// that lost replies is no longer complete.
    pub fn keep_newest(&mut self, max: usize) -> Vec<StoredMessage> {
        let mut dropped = Vec::new();
        while self.replies.len() > max {
            match self.replies.pop_first() {
                Some((_, m)) => dropped.push(m),
                None => break,
            }
        }
        if !dropped.is_empty() {
            self.complete = false;
        }
        dropped
    }
}

/// Threads' replies and roots held for a while.
#[derive(Debug)]
pub struct ThreadCache {
    replies: TtlCache<ThreadKey, ThreadEntry>,
    starters: TtlCache<ThreadKey, StoredMessage>,
}

impl ThreadCache {
    /// A cache of at most `replies_max` threads' replies and `starters_max` roots, each
    /// fresh for its TTL (milliseconds) after it was written.
    pub fn new(
        replies_max: usize,
        replies_ttl: u64,
        starters_max: usize,
        starters_ttl: u64,
    ) -> Self {
        ThreadCache {
            replies: TtlCache::new(replies_max, replies_ttl),
            starters: TtlCache::new(starters_max, starters_ttl),
        }
    }

    /// The replies held for `thread` in `channel`, whatever their age (not counted as a
    /// hit or miss).
    pub fn replies(&self, channel: &str, thread: &str) -> Option<&Stamped<ThreadEntry>> {
        with_thread_key(channel, thread, |k| self.replies.peek(k))
    }

    /// The replies held for `thread` in `channel`, to change in place.
    pub fn replies_mut(
        &mut self,
        channel: &str,
        thread: &str,
    ) -> Option<&mut Stamped<ThreadEntry>> {
        with_thread_key(channel, thread, |k| self.replies.peek_mut(k))
    }

    /// The root held for `thread` in `channel`, whatever its age (not counted).
    pub fn starter(&self, channel: &str, thread: &str) -> Option<&Stamped<StoredMessage>> {
        with_thread_key(channel, thread, |k| self.starters.peek(k))
    }

    /// The root held for `thread` in `channel`, to change in place.
    pub fn starter_mut(
        &mut self,
        channel: &str,
        thread: &str,
    ) -> Option<&mut Stamped<StoredMessage>> {
        with_thread_key(channel, thread, |k| self.starters.peek_mut(k))
    }

    /// The replies of `thread` are held within their TTL at `now` (counted as a hit or
    /// a miss; an entry past its TTL stays held for a stale answer).
    pub fn replies_fresh(&mut self, channel: &str, thread: &str, now: u64) -> bool {
        with_thread_key(channel, thread, |k| {
            matches!(self.replies.lookup(k, now), Lookup::Fresh(_))
        })
    }

    /// The root of `thread` is held within its TTL at `now` (counted).
    pub fn starter_fresh(&mut self, channel: &str, thread: &str, now: u64) -> bool {
        with_thread_key(channel, thread, |k| {
            matches!(self.starters.lookup(k, now), Lookup::Fresh(_))
        })
    }

    /// How long a thread's replies stay fresh, in milliseconds.
    pub fn replies_ttl(&self) -> u64 {
        self.replies.ttl()
    }

    /// Holds `entry` as the replies of `key`'s thread, written at `now`; returns the
    /// threads evicted to make room (the caller forgets their replies elsewhere).
    pub fn put_replies(
        &mut self,
        key: ThreadKey,
        entry: ThreadEntry,
        now: u64,
    ) -> Vec<(ThreadKey, ThreadEntry)> {
        self.replies.insert(key, entry, now)
    }

    /// Holds `root` as the starter of `key`'s thread, written at `now`; returns the keys
    /// of the roots evicted to make room.
    pub fn put_starter(&mut self, key: ThreadKey, root: StoredMessage, now: u64) -> Vec<ThreadKey> {
        self.starters
            .insert(key, root, now)
            .into_iter()
            .map(|(k, _)| k)
            .collect()
    }

    /// Forgets the root of `thread` in `channel` (it was deleted); its replies stay.
    pub fn forget_starter(&mut self, channel: &str, thread: &str) {
        let key = thread_key(channel, thread);
        self.starters.remove(&key);
    }

    /// Takes the reply `id` out of every thread of `channel` that holds it.
    pub fn remove_reply(&mut self, channel: &str, id: &str) {
        let holding: Vec<ThreadKey> = self
            .replies
            .iter()
            .filter(|(k, e)| k.0 == channel && e.value.replies.values().any(|m| m.id() == id))
            .map(|(k, _)| k.clone())
            .collect();
        for k in holding {
            if let Some(e) = self.replies.peek_mut(&k) {
                e.value.replies.retain(|_, m| m.id() != id);
            }
        }
    }

    /// Every thread whose replies are held, least recently written first.
    pub fn held(&self) -> impl Iterator<Item = (&ThreadKey, &Stamped<ThreadEntry>)> {
        self.replies.iter()
    }

    /// Roots held.
    pub fn starters_len(&self) -> usize {
        self.starters.len()
    }

    /// Counters and sizes of the replies cache and of the starter cache.
    pub fn stats(&self) -> (TtlCacheStats, TtlCacheStats) {
        let of = |counters, len, max| TtlCacheStats::of(counters, len, max);
        (
            of(
                &self.replies.counters,
                self.replies.len(),
                self.replies.max(),
            ),
            of(
                &self.starters.counters,
                self.starters.len(),
                self.starters.max(),
            ),
        )
    }

    /// Starts noting which threads and roots change, for saving.
    pub fn track_changes(&mut self) {
        self.replies.track_changes();
        self.starters.track_changes();
    }

    /// A thread or root changed since the last [`ThreadCache::take_changes`].
    pub fn has_changes(&self) -> bool {
        self.replies.has_changes() || self.starters.has_changes()
    }

    /// What changed since the last call, as it is saved: each changed thread and root
    /// with what is held of it now (`None`: no longer held).
    #[allow(clippy::type_complexity)]
    pub fn take_changes(
        &mut self,
    ) -> (
        Vec<(ThreadKey, Option<SavedThread>)>,
        Vec<(ThreadKey, Option<SavedStarter>)>,
    ) {
        let threads = self.replies.take_changed().into_iter().map(|k| {
            let t = self.replies.peek(&k).map(saved_thread);
            (k, t)
        });
        let threads = threads.collect();
        let starters = self.starters.take_changed().into_iter().map(|k| {
            let s = self.starters.peek(&k).map(saved_starter);
            (k, s)
        });
        (threads, starters.collect())
    }

    /// Everything held, as it is saved: oldest written first (ties by key), so a restore
    /// that writes them in this order evicts what the bounds would have evicted.
    #[allow(clippy::type_complexity)]
    pub fn save_all(
        &self,
    ) -> (
        Vec<(ThreadKey, Option<SavedThread>)>,
        Vec<(ThreadKey, Option<SavedStarter>)>,
    ) {
        let mut threads: Vec<(ThreadKey, SavedThread)> = self
            .replies
            .iter()
            .map(|(k, e)| (k.clone(), saved_thread(e)))
            .collect();
        threads.sort_by(|a, b| (a.1.written_at, &a.0).cmp(&(b.1.written_at, &b.0)));
        let mut starters: Vec<(ThreadKey, SavedStarter)> = self
            .starters
            .iter()
            .map(|(k, e)| (k.clone(), saved_starter(e)))
            .collect();
        starters.sort_by(|a, b| (a.1.written_at, &a.0).cmp(&(b.1.written_at, &b.0)));
        (
            threads.into_iter().map(|(k, t)| (k, Some(t))).collect(),
            starters.into_iter().map(|(k, s)| (k, Some(s))).collect(),
        )
    }

    /// After a restore: what was loaded is what the file holds, so only `threads` and
    /// `starters` (which the bounds changed while loading) are changes to save.
    pub fn changed_since_load(&mut self, threads: &[ThreadKey], starters: &[ThreadKey]) {
        self.replies.take_changed();
        self.starters.take_changed();
        for k in threads {
            self.replies.mark_changed(k);
        }
        for k in starters {
            self.starters.mark_changed(k);
        }
    }
}

fn saved_thread(e: &Stamped<ThreadEntry>) -> SavedThread {
    SavedThread {
        written_at: e.written_at,
        complete: e.value.complete,
        rootless: e.value.rootless,
        replies: e.value.replies.values().cloned().collect(),
    }
}

fn saved_starter(e: &Stamped<StoredMessage>) -> SavedStarter {
    SavedStarter {
        written_at: e.written_at,
        message: e.value.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::channel::message::StoredMessage;

    fn msg(ts: &str) -> StoredMessage {
        let author = crate::core::model::Author {
            user_id: "U1".into(),
            display_name: "ann".into(),
            is_bot: false,
        };
        StoredMessage::new(ts, author, "text").unwrap_or_else(|| panic!("bad ts {ts}"))
    }

    fn entry(msgs: &[StoredMessage], complete: bool) -> ThreadEntry {
        ThreadEntry {
            replies: msgs.iter().map(|m| (m.key, m.clone())).collect(),
            complete,
            rootless: false,
        }
    }

    #[test]
    fn keep_newest_drops_the_oldest_and_the_thread_is_no_longer_complete() {
        let mut e = entry(&[msg("1.0"), msg("2.0"), msg("3.0")], true);
        let dropped = e.keep_newest(2);
        assert_eq!(
            dropped.iter().map(StoredMessage::id).collect::<Vec<_>>(),
            ["1.0"]
        );
        assert!(!e.complete);
        assert!(e.keep_newest(2).is_empty());
    }

    #[test]
    fn freshness_follows_the_ttl_and_counts_lookups() {
        let mut c = ThreadCache::new(4, 1_000, 4, 2_000);
        c.put_replies(thread_key("C", "1.0"), entry(&[msg("1.1")], true), 0);
        c.put_starter(thread_key("C", "1.0"), msg("1.0"), 0);
        assert!(c.replies_fresh("C", "1.0", 999));
        assert!(!c.replies_fresh("C", "1.0", 1_000));
        assert!(c.starter_fresh("C", "1.0", 1_500));
        // Past its TTL the entry is still held, for a stale answer.
        assert!(c.replies("C", "1.0").is_some());
        let (replies, starters) = c.stats();
        assert_eq!((replies.hits, replies.size, replies.max), (1, 1, 4));
        assert_eq!((starters.hits, starters.size), (1, 1));
        // Peeking is not counted.
        let _ = c.replies("C", "1.0");
        assert_eq!(c.stats().0.hits + c.stats().0.misses, 2);
    }

    #[test]
    fn keys_are_pairs_so_no_id_reaches_another_channel() {
        let mut c = ThreadCache::new(4, 1_000, 4, 1_000);
        c.put_replies(thread_key("C:1", "2"), ThreadEntry::default(), 0);
        assert!(c.replies("C", "1:2").is_none());
        assert!(c.replies("C:1", "2").is_some());
    }

    #[test]
    fn the_bound_evicts_the_least_recently_written_thread() {
        let mut c = ThreadCache::new(2, 1_000, 1, 1_000);
        c.put_replies(thread_key("C", "1"), ThreadEntry::default(), 0);
        c.put_replies(thread_key("C", "2"), ThreadEntry::default(), 1);
        let gone = c.put_replies(thread_key("C", "3"), ThreadEntry::default(), 2);
        assert_eq!(gone.len(), 1);
        assert_eq!(gone[0].0, thread_key("C", "1"));
        assert_eq!(c.put_starter(thread_key("C", "1"), msg("1.0"), 0), vec![]);
        assert_eq!(
            c.put_starter(thread_key("C", "2"), msg("2.0"), 1),
            vec![thread_key("C", "1")]
        );
        assert_eq!(c.starters_len(), 1);
    }

    #[test]
    fn a_deleted_reply_leaves_every_thread_of_its_channel_only() {
        let mut c = ThreadCache::new(4, 1_000, 4, 1_000);
        let r = msg("1.5");
        c.put_replies(
            thread_key("C", "1"),
            entry(std::slice::from_ref(&r), true),
            0,
        );
        c.put_replies(
            thread_key("C", "2"),
            entry(std::slice::from_ref(&r), true),
            0,
        );
        c.put_replies(thread_key("D", "1"), entry(&[r], true), 0);
        c.remove_reply("C", "1.5");
        assert!(c
            .replies("C", "1")
            .is_some_and(|e| e.value.replies.is_empty()));
        assert!(c
            .replies("C", "2")
            .is_some_and(|e| e.value.replies.is_empty()));
        assert_eq!(c.replies("D", "1").map(|e| e.value.replies.len()), Some(1));
    }

    #[test]
    fn forgetting_a_deleted_root_keeps_its_replies() {
        let mut c = ThreadCache::new(4, 1_000, 4, 1_000);
        c.put_replies(thread_key("C", "1"), entry(&[msg("1.5")], true), 0);
        c.put_starter(thread_key("C", "1"), msg("1.0"), 0);
        c.forget_starter("C", "1");
        assert!(c.starter("C", "1").is_none());
        assert_eq!(c.replies("C", "1").map(|e| e.value.replies.len()), Some(1));
    }

    #[test]
    fn changes_are_noted_only_while_tracked_and_saved_with_what_is_held() {
        let mut c = ThreadCache::new(4, 1_000, 4, 1_000);
        c.put_replies(thread_key("C", "1"), ThreadEntry::default(), 0);
        assert!(!c.has_changes());
        c.track_changes();
        c.put_replies(thread_key("C", "2"), entry(&[msg("2.5")], true), 7);
        c.put_starter(thread_key("C", "2"), msg("2.0"), 7);
        assert!(c.has_changes());
        let (threads, starters) = c.take_changes();
        assert_eq!(threads.len(), 1);
        let saved = threads[0]
            .1
            .as_ref()
            .map(|t| (t.written_at, t.complete, t.replies.len()));
        assert_eq!(saved, Some((7, true, 1)));
        assert_eq!(starters[0].1.as_ref().map(|s| s.message.id()), Some("2.0"));
        assert!(!c.has_changes());
        c.forget_starter("C", "2");
        let (threads, starters) = c.take_changes();
        assert!(threads.is_empty() && starters[0].1.is_none());
        c.put_replies(thread_key("C", "3"), ThreadEntry::default(), 8);
        c.changed_since_load(&[thread_key("C", "1")], &[]);
        let (threads, starters) = c.take_changes();
        assert_eq!(threads.len(), 1);
        assert_eq!(threads[0].0, thread_key("C", "1"));
        assert!(starters.is_empty());
    }
}
