//! Which fetches a request needs: where its anchor is held (the window, a thread's
//! replies, a thread's starter), the thread it is in, and what is missing or stale.

use super::documents::*;
use super::fetch::{Failure, Need};
use super::request::ContextRequest;
use super::ChannelStore;
use crate::channel::message::StoredMessage;
use crate::core::time::TsKey;

impl ChannelStore {
    pub(super) fn find_anchor(&self, req: &ContextRequest) -> Option<AnchorAt<'_>> {
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
            if let Some(e) = self.threads.replies(&req.channel, &thread) {
                // Replies are keyed by ts, which is the id on Slack: look there first,
                // then (ids that are not a ts) through the thread.
                let is_anchor = |m: &&StoredMessage| m.id() == req.anchor_id;
                let found = crate::core::time::ts_key(&req.anchor_id)
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
        if let Some(e) = self.threads.starter(&req.channel, &req.anchor_id) {
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
    pub(super) fn anchor_thread(&self, req: &ContextRequest, at: &AnchorAt<'_>) -> Option<String> {
        match at {
            AnchorAt::Reply { thread, .. } => Some(thread.clone()),
            AnchorAt::Window(m) | AnchorAt::Starter(m) => {
                let held = self.threads.replies(&req.channel, m.id()).is_some();
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
        if self.events_only(&req.channel) {
            // Nothing can be fetched: the build says what that leaves out.
            return needs;
        }
        let Some(at) = self.find_anchor(req) else {
            if let Some(t) = req.thread_hint.as_deref() {
                // Counted: the thread the anchor is in is not held (or not with it).
                let _ = self.threads.replies_fresh(&req.channel, t, now);
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
        // The message the anchor replies to, when the event did not bring it.
        if let Some(id) = self.reply_target_missing(&req.channel, at.message()) {
            let need = Need::Messages {
                channel: req.channel.clone(),
                ids: vec![id],
            };
            if !has_failed(&need) {
                needs.push(need);
            }
        }
        if !history_loaded
            && self.held_before(&req.channel, position) < req.adjacent
            && !has_failed(&history)
        {
            needs.push(history);
        }
        if let Some(thread) = thread {
            let need = Need::Thread {
                channel: req.channel.clone(),
                thread: thread.clone(),
            };
            let replies_fresh = self.threads.replies_fresh(&req.channel, &thread, now);
            let root_in_window = self
                .channels
                .get(&req.channel)
                .is_some_and(|c| c.get(&thread).is_some());
            // A thread without a root message has none to fetch.
            let rootless = self
                .threads
                .replies(&req.channel, &thread)
                .is_some_and(|e| e.value.rootless);
            let root_fresh = root_in_window
                || rootless
                || self.threads.starter_fresh(&req.channel, &thread, now);
            if (!replies_fresh || !root_fresh) && !has_failed(&need) {
                needs.push(need);
            }
        }
        needs
    }
}
