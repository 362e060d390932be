//! What the Gateway teaches the store besides messages: which channels are threads (and
//! of which channel), and the names of roles.

use std::collections::HashMap;

/// Inserts `key` into `map`, which holds at most `max` entries keyed by snowflake: past
/// it the oldest (snowflakes grow with time: the smallest id) is forgotten.
fn insert_bounded(map: &mut HashMap<String, String>, max: usize, key: &str, value: &str) {
    if map.len() >= max && !map.contains_key(key) {
        let oldest = map.keys().min_by_key(|k| (k.len(), k.as_str())).cloned();
        if let Some(k) = oldest {
            map.remove(&k);
        }
    }
    map.insert(key.to_string(), value.to_string());
}

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
        insert_bounded(&mut self.parents, THREADS_REMEMBERED, thread, parent);
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
        insert_bounded(&mut self.names, ROLES_REMEMBERED, id, name);
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}
