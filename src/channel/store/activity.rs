//! A thread's activity from what the store holds: its reply count, replies in the last
//! hour, newest reply and who took part (`threadActivity`, and the snapshot's adjacent
//! messages).

use super::{ChannelStore, ThreadEntry};
use crate::channel::message::StoredMessage;
use crate::core::time::{key_millis, TsKey};

/// "Recent" for `replies_last_1h`.
pub const RECENT_REPLY_WINDOW_MS: u64 = 3_600_000;

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

impl ChannelStore {
    /// Reply count and newest reply of the thread `m` starts, from what is held, or
    /// `None` when it has no replies. The cheap part of [`ChannelStore::activity`], which the
    /// search ranking asks for hundreds of messages per query.
    pub fn thread_stats<'a>(
        &'a self,
        channel: &str,
        m: &'a StoredMessage,
    ) -> Option<ThreadStats<'a>> {
        let entry = self.threads.replies(channel, m.id()).map(|e| &e.value);
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
            .and_then(|t| crate::core::time::ts_key(t).map(|k| (k, t)));
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

    /// [`ChannelStore::activity`], with the participants' names only when `names` (the snapshot
    /// shows counts alone, and a long thread's names cost a pass over its replies).
    pub(super) fn thread_activity(
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
}
