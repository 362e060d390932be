//! What the Gateway teaches the store besides messages: which channels are threads (and
//! of which channel), and the names of roles.

use std::collections::HashMap;

/// Which channels are threads, and of which channel: learnt from the Gateway.
#[derive(Debug, Clone, Default)]
pub struct ThreadDirectory {
    parents: HashMap<String, String>,
}

/// Threads remembered at most (the oldest learnt are forgotten past it).
pub const THREADS_REMEMBERED: usize = 50_000;

impl ThreadDirectory {
    /// The channel `thread` hangs off, when it is a known thread.
    pub fn parent_of(&self, thread: &str) -> Option<&str> {
        self.parents.get(thread).map(String::as_str)
    }

    /// Remembers that `thread` is a thread of `parent`.
    pub fn open(&mut self, thread: &str, parent: &str) {
        if self.parents.len() >= THREADS_REMEMBERED && !self.parents.contains_key(thread) {
            // Snowflakes grow with time: the smallest id is the oldest thread.
            let oldest = self
                .parents
                .keys()
                .min_by_key(|k| (k.len(), k.as_str()))
                .cloned();
            if let Some(k) = oldest {
                self.parents.remove(&k);
            }
        }
        self.parents.insert(thread.to_string(), parent.to_string());
    }

    /// Forgets a deleted thread.
    pub fn close(&mut self, thread: &str) {
        self.parents.remove(thread);
    }

    pub fn len(&self) -> usize {
        self.parents.len()
    }

    pub fn is_empty(&self) -> bool {
        self.parents.is_empty()
    }
}

/// Roles remembered at most (a guild has at most 250; past this bound the smallest ids,
/// the oldest roles, are forgotten).
pub const ROLES_REMEMBERED: usize = 50_000;

/// The names of Discord roles, by role id (a snowflake, unique across guilds): what a
/// role mention `<@&id>` reads as.
#[derive(Debug, Clone, Default)]
pub struct RoleNames {
    names: HashMap<String, String>,
}

impl RoleNames {
    pub fn name(&self, id: &str) -> Option<&str> {
        self.names.get(id).map(String::as_str)
    }

    /// Names role `id` (`Some`) or forgets a deleted one (`None`).
    pub fn set(&mut self, id: &str, name: Option<&str>) {
        let Some(name) = name else {
            self.names.remove(id);
            return;
        };
        if self.names.len() >= ROLES_REMEMBERED && !self.names.contains_key(id) {
            let oldest = self
                .names
                .keys()
                .min_by_key(|k| (k.len(), k.as_str()))
                .cloned();
            if let Some(k) = oldest {
                self.names.remove(&k);
            }
        }
        self.names.insert(id.to_string(), name.to_string());
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}
