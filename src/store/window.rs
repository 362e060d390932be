//! A channel's window: its held channel messages in ts order.
//!
//! Kept as a double-ended queue of boxed messages sorted by key, not a B-tree: a window
//! grows at its new end and is evicted from its old end, and a history page reaches back
//! from the old end, so nearly every insertion and removal is at one end or the other
//! (constant time), and one in the middle moves the nearer side only. Lookups are binary
//! searches. Each message costs the window one pointer (a B-tree filled in ts order
//! leaves its nodes about half full: some 45 bytes a message).

use super::message::StoredMessage;
use crate::time::TsKey;
use std::collections::VecDeque;

#[derive(Debug, Default)]
pub struct Window(VecDeque<Box<StoredMessage>>);

impl Window {
    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Where `key` is, or would go. A key newer or older than all the window holds (a
    /// new message, an evicted one) is answered from the last or first one alone.
    fn position(&self, key: TsKey) -> Result<usize, usize> {
        match (self.0.front(), self.0.back()) {
            (_, Some(last)) if key > last.key => Err(self.0.len()),
            (Some(first), _) if key < first.key => Err(0),
            (None, _) => Err(0),
            _ => self.0.binary_search_by(|m| m.key.cmp(&key)),
        }
    }

    pub fn get(&self, key: &TsKey) -> Option<&StoredMessage> {
        self.position(*key).ok().map(|i| &*self.0[i])
    }

    /// The message under `key`, to change in place. Its key must stay as it is (a new
    /// key is a removal and an insertion).
    pub fn get_mut(&mut self, key: &TsKey) -> Option<&mut StoredMessage> {
        let i = self.position(*key).ok()?;
        Some(&mut *self.0[i])
    }

    /// Holds `m` under its key; returns the message it replaced.
    pub fn insert(&mut self, m: Box<StoredMessage>) -> Option<Box<StoredMessage>> {
        match self.position(m.key) {
            Ok(i) => Some(std::mem::replace(&mut self.0[i], m)),
            Err(i) if i == self.0.len() => {
                self.0.push_back(m);
                None
            }
            Err(0) => {
                self.0.push_front(m);
                None
            }
            Err(i) => {
                self.0.insert(i, m);
                None
            }
        }
    }

    pub fn remove(&mut self, key: &TsKey) -> Option<Box<StoredMessage>> {
        let i = self.position(*key).ok()?;
        self.0.remove(i)
    }

    /// Removes the oldest message.
    pub fn pop_first(&mut self) -> Option<Box<StoredMessage>> {
        self.0.pop_front()
    }

    /// Messages, oldest first.
    pub fn values(&self) -> impl DoubleEndedIterator<Item = &StoredMessage> {
        self.0.iter().map(|m| &**m)
    }

    /// Messages before `key`, oldest first.
    pub fn before(&self, key: TsKey) -> impl DoubleEndedIterator<Item = &StoredMessage> {
        let end = self.count_before(key);
        self.0.range(..end).map(|m| &**m)
    }

    /// Messages at or after `key`, oldest first.
    pub fn from(&self, key: TsKey) -> impl DoubleEndedIterator<Item = &StoredMessage> {
        let start = self.count_before(key);
        self.0.range(start..).map(|m| &**m)
    }

    /// How many messages are before `key`.
    pub fn count_before(&self, key: TsKey) -> usize {
        self.0.partition_point(|m| m.key < key)
    }

    /// Heap bytes of the queue itself (the messages are counted apart).
    pub fn heap_bytes(&self) -> usize {
        self.0.capacity() * std::mem::size_of::<Box<StoredMessage>>()
    }
}

#[cfg(test)]
mod tests;
