//! The user directory: display names and bot flags by user id. Slack events carry only a
//! user id; names come from `setUsers` or from the `user_profile` objects that payloads
//! and Web API responses carry, remembered here for the messages that follow.

use crate::core::cache::Changed;
use serde_json::Value;
use std::collections::HashMap;

/// Users remembered. Past it, known users are still updated but new ones are not added.
pub const USERS_REMEMBERED: usize = 100_000;

/// Display name and bot flag by user id, bounded by [`USERS_REMEMBERED`].
#[derive(Debug, Default)]
pub struct UserDirectory {
    users: HashMap<String, (String, bool)>,
    /// Users set since [`UserDirectory::take_changed`], while tracking is on.
    changed: Changed<String>,
}

impl UserDirectory {
    /// The display name and bot flag of `id`, when known.
    pub fn lookup(&self, id: &str) -> Option<(String, bool)> {
        self.users.get(id).cloned()
    }

    /// Sets (or updates) a user; a new user past the bound is not remembered.
    pub fn set(&mut self, id: &str, display_name: &str, is_bot: bool) {
        if let Some(entry) = self.users.get_mut(id) {
            if entry.0 == display_name && entry.1 == is_bot {
                return;
            }
            *entry = (display_name.to_string(), is_bot);
        } else if self.users.len() < USERS_REMEMBERED {
            self.users
                .insert(id.to_string(), (display_name.to_string(), is_bot));
        } else {
            return;
        }
        self.changed.mark(id);
    }

    /// Starts recording which users are set (for persistence).
    pub fn track_changes(&mut self) {
        self.changed.track();
    }

    /// A user was set since the last [`UserDirectory::take_changed`].
    pub fn has_changes(&self) -> bool {
        self.changed.any()
    }

    /// The ids of the users set since the last call.
    pub fn take_changed(&mut self) -> Vec<String> {
        self.changed.take()
    }

    /// Every known user: `(id, display name, bot)`.
    pub fn all(&self) -> Vec<(String, String, bool)> {
        self.users
            .iter()
            .map(|(id, (name, bot))| (id.clone(), name.clone(), *bot))
            .collect()
    }

    /// Users known.
    pub fn len(&self) -> usize {
        self.users.len()
    }

    /// No user is known.
    pub fn is_empty(&self) -> bool {
        self.users.is_empty()
    }

    /// Learns the names that a payload or response body carries: the `user_profile` of
    /// an event, of the message an edit wraps, of the body itself and of each message of
    /// a Web API response.
    pub fn learn(&mut self, body: &Value) {
        if let Some(e) = body.get("event") {
            self.learn_message(e);
            if let Some(m) = e.get("message") {
                self.learn_message(m);
            }
        }
        self.learn_message(body);
        if let Some(Value::Array(messages)) = body.get("messages") {
            for m in messages {
                self.learn_message(m);
            }
        }
    }

    fn learn_message(&mut self, m: &Value) {
        let (Some(id), Some(profile)) =
            (m.get("user").and_then(Value::as_str), m.get("user_profile"))
        else {
            return;
        };
        let named = |key: &str| {
            profile
                .get(key)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
        };
        if let Some(name) = named("display_name").or_else(|| named("real_name")) {
            let is_bot = profile
                .get("is_bot")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            self.set(id, name, is_bot);
        }
    }
}

#[cfg(test)]
mod tests;
