//! What the store shows of one held message: the message as held (`getMessage`) and
//! its thread's activity (`threadActivity`).

use super::ChannelStore;
use crate::channel::message::StoredMessage;
use crate::core::model::{Author, MediaRef};
use napi_derive::napi;
use serde::Serialize;

/// A reaction on a held message.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReactionView {
    pub name: String,
    pub count: u64,
    pub users: Vec<String>,
}

/// A message as the store holds it (`getMessage`).
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StoredMessageView {
    #[napi(js_name = "message_id")]
    pub message_id: String,
    /// Platform ts.
    pub ts: String,
    pub author: Author,
    pub text: String,
    #[napi(js_name = "thread_id", ts_type = "string | null")]
    pub thread_id: Option<String>,
    #[napi(js_name = "reply_count", ts_type = "number")]
    pub reply_count: u64,
    #[napi(js_name = "latest_reply", ts_type = "string | null")]
    pub latest_reply: Option<String>,
    #[napi(ts_type = "Array<{ name: string; count: number; users: string[] }>")]
    pub reactions: Vec<ReactionView>,
    pub media: Vec<MediaRef>,
    pub edited: bool,
    pub broadcast: bool,
}

impl From<&StoredMessage> for StoredMessageView {
    fn from(m: &StoredMessage) -> Self {
        StoredMessageView {
            message_id: m.id().to_string(),
            ts: m.ts.to_string(),
            author: Author::clone(&m.author),
            text: m.text.as_str().into_owned(),
            thread_id: m.thread_id.as_deref().map(str::to_string),
            reply_count: m.reply_count(),
            latest_reply: m.latest_reply().map(str::to_string),
            reactions: m
                .reactions()
                .iter()
                .map(|r| ReactionView {
                    name: r.name.clone(),
                    count: r.count,
                    users: r.users.clone(),
                })
                .collect(),
            media: m.files().iter().map(|f| f.media.clone()).collect(),
            edited: m.edited,
            broadcast: m.broadcast,
        }
    }
}

/// Thread activity computed from what the store holds.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ThreadSummary {
    #[napi(js_name = "reply_count", ts_type = "number")]
    pub reply_count: u64,
    #[napi(js_name = "replies_last_1h", ts_type = "number")]
    pub replies_last_1h: u64,
    #[napi(js_name = "last_reply_ts", ts_type = "string | null")]
    pub last_reply_ts: Option<String>,
    #[napi(js_name = "participant_names")]
    pub participant_names: Vec<String>,
}

impl ChannelStore {
    /// The first held copy of message `id` in `channel` (window, held thread or starter
    /// cache); deleted messages are never shown.
    pub fn message_view(&mut self, channel: &str, id: &str) -> Option<StoredMessageView> {
        let mut found = None;
        self.for_each_copy(channel, id, |m| {
            if found.is_none() {
                found = Some(StoredMessageView::from(&*m));
            }
        });
        found
    }

    /// The activity of the thread that held message `id` starts, at `now`; `None` when
    /// it has no replies or is not held.
    pub fn thread_summary(&self, channel: &str, id: &str, now: u64) -> Option<ThreadSummary> {
        let held = self.channels.get(channel).and_then(|c| c.get(id));
        let msg = held.or_else(|| self.threads.starter(channel, id).map(|e| &e.value))?;
        let a = self.activity(channel, msg, now)?;
        Some(ThreadSummary {
            reply_count: a.reply_count,
            replies_last_1h: a.replies_last_1h,
            last_reply_ts: a.last_reply_ts.as_deref().map(crate::core::time::to_iso),
            participant_names: a.participant_names,
        })
    }
}

/// Held messages by id, and every copy of one.
impl ChannelStore {
    /// Calls `f` on every held copy of message `id` in `channel` (window, thread entry,
    /// starter cache).
    pub fn for_each_copy(
        &mut self,
        channel: &str,
        id: &str,
        mut f: impl FnMut(&mut StoredMessage),
    ) {
        let Some(ch) = self.channels.get_mut(channel) else {
            return;
        };
        let mut in_window = false;
        if let Some(k) = ch.key_of(id) {
            if let Some(m) = ch.window.get_mut(&k) {
                f(m);
                in_window = true;
            }
        }
        if in_window {
            self.note_window(channel, id);
        }
        let Some(ch) = self.channels.get(channel) else {
            return;
        };
        if let Some(thread) = ch.reply_threads.get(id) {
            if let Some(entry) = self.threads.replies_mut(channel, thread) {
                if let Some(m) = entry.value.replies.values_mut().find(|m| m.id() == id) {
                    f(m);
                }
            }
        }
        if let Some(root) = self.threads.starter_mut(channel, id) {
            f(&mut root.value);
        }
        if let Some(m) = self
            .channels
            .get_mut(channel)
            .and_then(|ch| ch.orphans.get_mut(id))
        {
            f(m);
            self.note_orphan(channel, id);
        }
    }

    /// Whether the store saw message `id` of `channel` deleted (an event said so, or a
    /// reply's event said the message it answers is gone).
    pub fn was_deleted(&self, channel: &str, id: &str) -> bool {
        self.channels
            .get(channel)
            .is_some_and(|c| c.was_deleted(id))
    }

    /// A held copy of message `id` in `channel`: the window's, a held thread's or the
    /// starter cache's.
    pub fn find(&self, channel: &str, id: &str) -> Option<&StoredMessage> {
        let ch = self.channels.get(channel)?;
        if let Some(m) = ch.get(id) {
            return Some(m);
        }
        if let Some(thread) = ch.reply_threads.get(id) {
            let reply = self
                .threads
                .replies(channel, thread)
                .and_then(|e| e.value.replies.values().find(|m| m.id() == id));
            if reply.is_some() {
                return reply;
            }
        }
        self.threads
            .starter(channel, id)
            .map(|e| &e.value)
            .or_else(|| ch.orphan(id))
    }
}
