//! The file index: where each file a message references can be downloaded, per channel,
//! for the newest [`FILES_REMEMBERED`] files. A request for a file's bytes looks here
//! first (see [`super::media`]).

use super::FileKey;
use crate::core::model::MediaRef;
use std::collections::{HashMap, VecDeque};

/// File locations remembered (artifact id -> where to download it).
pub const FILES_REMEMBERED: usize = 50_000;

/// Where a file can be downloaded from.
#[derive(Debug, Clone, PartialEq)]
pub struct FileLocation {
    pub channel: String,
    pub message_id: String,
    pub media: MediaRef,
    pub url: Option<String>,
}

/// File locations by `(channel, artifact id)`, oldest first in the order they were
/// first seen.
#[derive(Debug)]
pub struct FileIndex {
    by_key: HashMap<FileKey, FileLocation>,
    order: VecDeque<FileKey>,
    cap: usize,
}

impl Default for FileIndex {
    fn default() -> Self {
        FileIndex::with_cap(FILES_REMEMBERED)
    }
}

impl FileIndex {
    /// An index that keeps at most `cap` files once [`FileIndex::trim`]med.
    pub fn with_cap(cap: usize) -> Self {
        FileIndex {
            by_key: HashMap::new(),
            order: VecDeque::new(),
            cap,
        }
    }

    /// Remembers where file `key` is; a file seen before keeps its place in the order.
    pub fn remember(&mut self, key: FileKey, loc: FileLocation) {
        if !self.by_key.contains_key(&key) {
            self.order.push_back(key.clone());
        }
        self.by_key.insert(key, loc);
    }

    /// Forgets the oldest files past the cap; returns their keys.
    pub fn trim(&mut self) -> Vec<FileKey> {
        let mut gone = Vec::new();
        while self.order.len() > self.cap {
            if let Some(old) = self.order.pop_front() {
                self.by_key.remove(&old);
                gone.push(old);
            }
        }
        gone
    }

    pub fn get(&self, key: &FileKey) -> Option<&FileLocation> {
        self.by_key.get(key)
    }

    /// Where file `artifact_id` can be downloaded for `channel`: only a file that a
    /// message of that channel references.
    pub fn in_channel(&self, channel: &str, artifact_id: &str) -> Option<&FileLocation> {
        self.by_key
            .get(&(channel.to_string(), artifact_id.to_string()))
    }

    /// The newest remembered location of `artifact_id` in any channel.
    pub fn newest(&self, artifact_id: &str) -> Option<&FileLocation> {
        self.order
            .iter()
            .rev()
            .find(|(_, a)| a == artifact_id)
            .and_then(|k| self.by_key.get(k))
    }

    pub fn iter(&self) -> impl Iterator<Item = (&FileKey, &FileLocation)> {
        self.by_key.iter()
    }

    pub fn len(&self) -> usize {
        self.by_key.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_key.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::model::MediaRef;

    fn loc(channel: &str, id: &str, message: &str) -> FileLocation {
        FileLocation {
            channel: channel.into(),
            message_id: message.into(),
            media: MediaRef {
                artifact_id: id.into(),
                media_type: "image/png".into(),
                filename: None,
                byte_length: 1,
            },
            url: None,
        }
    }

    fn key(channel: &str, id: &str) -> FileKey {
        (channel.into(), id.into())
    }

    #[test]
    fn remembers_fifty_thousand_files_by_default() {
        assert_eq!(FILES_REMEMBERED, 50_000);
        assert_eq!(FileIndex::default().cap, FILES_REMEMBERED);
    }

    #[test]
    fn a_file_is_served_to_its_own_channel_and_the_newest_wins_without_one() {
        let mut files = FileIndex::default();
        files.remember(key("C1", "F1"), loc("C1", "F1", "m1"));
        files.remember(key("C2", "F1"), loc("C2", "F1", "m2"));
        assert_eq!(
            files.in_channel("C1", "F1").map(|l| l.message_id.as_str()),
            Some("m1")
        );
        assert!(files.in_channel("C3", "F1").is_none());
        assert_eq!(files.newest("F1").map(|l| l.channel.as_str()), Some("C2"));
        // Seen again, a file keeps its place: the newest is still the other channel's.
        files.remember(key("C1", "F1"), loc("C1", "F1", "m3"));
        assert_eq!(files.newest("F1").map(|l| l.channel.as_str()), Some("C2"));
        assert_eq!(
            files.in_channel("C1", "F1").map(|l| l.message_id.as_str()),
            Some("m3")
        );
    }

    #[test]
    fn trimming_forgets_the_oldest_past_the_cap_and_says_which() {
        let mut files = FileIndex::with_cap(2);
        for (i, id) in ["F1", "F2", "F3"].iter().enumerate() {
            files.remember(key("C1", id), loc("C1", id, &format!("m{i}")));
        }
        assert_eq!(files.len(), 3);
        assert_eq!(files.trim(), vec![key("C1", "F1")]);
        assert_eq!(files.len(), 2);
        assert!(files.in_channel("C1", "F1").is_none());
        assert!(files.trim().is_empty());
    }
}
