//! Intake: neutral events, Slack Events API payloads and Web API response bodies into
//! the store (each event applied: a message held, an edit or reaction patched, a
//! deletion), and the user directory that names their authors.

use super::recent::{self, Patch};
use super::{journal, ChannelStore};
use crate::channel::message::{Event, StoredMessage};
use crate::channel::slack::users::UserDirectory;
use crate::channel::slack::{self, Names, ResponseError};
use crate::core::input::InputError;
use serde_json::Value;

impl ChannelStore {
    /// Applies `events` in order at `now`; returns how many were applied (not ignored).
    pub fn apply_all(&mut self, events: Vec<Event>, now: u64) -> u32 {
        let mut applied = 0u32;
        for e in events {
            if !matches!(e, Event::Ignored { .. }) {
                applied += 1;
            }
            self.apply(e, now);
        }
        applied
    }

    /// The user directory (display names by user id).
    pub fn users(&self) -> &UserDirectory {
        &self.users
    }

    /// The names the store knows (users' and channels'), for Slack text to read by.
    pub fn names(&self) -> StoreNames<'_> {
        StoreNames(self)
    }

    /// The user directory, to set names a caller knows.
    pub fn users_mut(&mut self) -> &mut UserDirectory {
        &mut self.users
    }

    /// Applies an Events API payload as Slack sends it, after learning the names it
    /// carries. Returns 1 when applied, 0 when ignored.
    pub fn ingest_slack_event(&mut self, payload: &Value, now: u64) -> Result<u32, InputError> {
        self.users.learn(payload);
        let event = slack::event_payload(payload, &self.names())?;
        Ok(self.apply_all(vec![event], now))
    }

    /// Ingests a `conversations.history` body (no `thread`) or one page of a
    /// `conversations.replies` body. Returns the next page's cursor.
    pub fn ingest_slack_response(
        &mut self,
        channel: &str,
        body: &Value,
        thread: Option<&str>,
        first_page: bool,
        now: u64,
    ) -> Result<Option<String>, ResponseError> {
        self.users.learn(body);
        let page = slack::response_page(body, "response", &self.names())?;
        let next = page.next_cursor;
        match thread {
            Some(t) => {
                self.put_thread_page(channel, t, page.messages, first_page, next.is_none(), now);
            }
            None => self.put_history(channel, page.messages, now),
        }
        Ok(next)
    }
}

/// Users' and channels' names as the store knows them.
pub struct StoreNames<'a>(&'a ChannelStore);

impl Names for StoreNames<'_> {
    fn user(&self, id: &str) -> Option<(String, bool)> {
        self.0.users.lookup(id)
    }
    fn channel(&self, id: &str) -> Option<String> {
        self.0.channels.get(id).and_then(|c| c.name.clone())
    }
    fn role(&self, id: &str) -> Option<String> {
        self.0.discord_roles.name(id).map(str::to_string)
    }
}

impl ChannelStore {
    /// Applies one validated event at `now`.
    pub fn apply(&mut self, event: Event, now: u64) {
        self.counters.ingested_events += 1;
        let seq = self.recent.next_seq();
        if self.recent.in_flight() > 0 {
            if let Some((channel, id, patch)) = recent::touched_by(&event) {
                self.recent.touch(channel, id, seq, patch);
            }
        }
        match event {
            Event::Message {
                channel,
                workspace,
                message,
            } => {
                if workspace.is_some() {
                    self.set_channel(&channel, None, None, workspace);
                }
                self.put_message(&channel, message, true, now);
            }
            Event::Delete {
                channel,
                message_id,
            } => self.delete(&channel, &message_id, now),
            event @ (Event::Edit { .. } | Event::Reaction { .. }) => {
                if let Some((channel, id, Some(patch))) = recent::touched_by(&event) {
                    self.patch(channel, id, &patch);
                }
            }
            Event::Ignored { .. } => {
                self.counters.ingested_events -= 1;
                self.counters.ignored_events += 1;
            }
        }
    }

    /// Applies an edit or a reaction to every held copy of message `id`; an edit that
    /// changes the text re-indexes it.
    pub(super) fn patch(&mut self, channel: &str, id: &str, patch: &Patch) {
        let mut changed = false;
        let mut texts = std::mem::take(&mut self.texts);
        self.for_each_copy(channel, id, |m| {
            changed |= patch.apply(m);
            texts.pack(&mut m.text);
        });
        self.texts = texts;
        if changed {
            self.reindex(channel, id);
        }
    }

    /// Removes message `id` everywhere it is held and remembers the deletion (at `now`,
    /// epoch ms, for a message never seen: it was posted before its deletion).
    pub fn delete(&mut self, channel: &str, id: &str, now: u64) {
        let key = self
            .find(channel, id)
            .map(|m| m.key)
            .or_else(|| crate::core::time::ts_key(id))
            // A Discord id tells when its message was posted.
            .or_else(|| {
                (self.platform(channel) == Some(crate::channel::discord::PLATFORM))
                    .then(|| crate::channel::discord::snowflake_ts(id).and_then(|t| crate::core::time::ts_key(&t)))
                    .flatten()
            })
            .unwrap_or((i64::try_from(now / 1000).unwrap_or(i64::MAX), u32::MAX));
        let ch = self.channel_mut(channel);
        let (new, forgotten) = ch.remember_deleted(id, key);
        let was_orphan = ch.orphans.remove(id).is_some();
        let in_window = match ch.remove_from_window(id) {
            Some(m) => {
                ch.index.remove(m.key);
                true
            }
            None => false,
        };
        let thread = ch.reply_threads.remove(id);
        if new {
            self.note_deleted(journal::DeletedChange::Remembered {
                channel: channel.to_string(),
                id: id.to_string(),
                key,
            });
        }
        if let Some(old) = forgotten {
            self.note_channel(channel);
            self.note_deleted(journal::DeletedChange::Forgotten {
                channel: channel.to_string(),
                id: old,
            });
        }
        if was_orphan {
            self.note_orphan(channel, id);
        }
        if in_window {
            self.note_window(channel, id);
        }
        if let Some(t) = &thread {
            let reply_key = self
                .threads
                .replies(channel, t)
                .and_then(|e| e.value.replies.values().find(|m| m.id() == id))
                .map(|m| m.key);
            if let Some(k) = reply_key {
                self.channel_mut(channel).index.remove(k);
            }
        }
        // A reply is in one thread; should a platform ever report it in another, no
        // held thread may keep it.
        self.threads.remove_reply(channel, id);
        if let Some(thread) = thread {
            let left = self
                .threads
                .replies(channel, &thread)
                .map(|e| (e.value.replies.len() as u64, e.value.complete));
            let dec = |root: &mut StoredMessage| match left {
                Some((n, true)) => root.set_reply_count(n),
                _ => root.set_reply_count(root.reply_count().saturating_sub(1)),
            };
            let ch = self.channel_mut(channel);
            let mut root_in_window = false;
            if let Some(k) = ch.key_of(&thread) {
                if let Some(root) = ch.window.get_mut(&k) {
                    dec(root);
                    root_in_window = true;
                }
            }
            if root_in_window {
                self.note_window(channel, &thread);
            }
            if let Some(root) = self.threads.starter_mut(channel, &thread) {
                dec(&mut root.value);
            }
        }
        // A deleted root leaves its thread: the replies stay (Discord keeps the thread,
        // Slack keeps the replies under a tombstone) and the first of them roots it.
        self.threads.forget_starter(channel, id);
        if let Some(entry) = self.threads.replies_mut(channel, id) {
            entry.value.rootless = true;
        }
    }
}
