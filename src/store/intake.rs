//! Intake: neutral events, Slack Events API payloads and Web API response bodies into
//! the store, and the user directory that names their authors.

use super::message::Event;
use super::Store;
use crate::input::InputError;
use crate::slack::users::UserDirectory;
use crate::slack::{self, Names, ResponseError};
use serde_json::Value;

impl Store {
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
pub struct StoreNames<'a>(&'a Store);

impl Names for StoreNames<'_> {
    fn user(&self, id: &str) -> Option<(String, bool)> {
        self.0.users.lookup(id)
    }
    fn channel(&self, id: &str) -> Option<String> {
        self.0.channels.get(id).and_then(|c| c.name.clone())
    }
}
