//! A double-ended queue kept sorted by ts key: the store's channel windows and the
//! search index's key map.
//!
//! Both grow at their new end, are evicted from their old end and are reached back
//! into from the old end by history pages, so nearly every insertion and removal is at
//! one end or the other (constant time), and one in the middle moves the nearer side
//! only. Lookups are binary searches, and a key newer or older than everything held is
//! placed by comparing with the last or first item alone. An item costs its own size and
//! nothing else, where a B-tree filled in key order leaves its nodes about half full and
//! nearly doubles that.

use crate::core::time::TsKey;
use std::collections::VecDeque;

/// What a [`SortedDeque`] holds: an item with a ts key, unique within the deque.
pub trait Keyed {
    fn key(&self) -> TsKey;
}

#[derive(Debug)]
pub struct SortedDeque<T>(VecDeque<T>);

impl<T> Default for SortedDeque<T> {
    fn default() -> Self {
        SortedDeque(VecDeque::new())
    }
}

impl<T: Keyed> SortedDeque<T> {
    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Where `key` is, or would go.
    fn position(&self, key: TsKey) -> Result<usize, usize> {
        match (self.0.front(), self.0.back()) {
            (_, Some(last)) if key > last.key() => Err(self.0.len()),
            (Some(first), _) if key < first.key() => Err(0),
            (None, _) => Err(0),
            _ => self.0.binary_search_by(|m| m.key().cmp(&key)),
        }
    }

    pub fn get(&self, key: &TsKey) -> Option<&T> {
        self.position(*key).ok().map(|i| &self.0[i])
    }

    /// The item under `key`, to change in place. Its key must stay as it is (a new key
    /// is a removal and an insertion).
    pub fn get_mut(&mut self, key: &TsKey) -> Option<&mut T> {
        let i = self.position(*key).ok()?;
        Some(&mut self.0[i])
    }

    /// Holds `item` under its key; returns the item it replaced.
    pub fn insert(&mut self, item: T) -> Option<T> {
        match self.position(item.key()) {
            Ok(i) => Some(std::mem::replace(&mut self.0[i], item)),
            Err(i) if i == self.0.len() => {
                self.0.push_back(item);
                None
            }
            Err(0) => {
                self.0.push_front(item);
                None
            }
            Err(i) => {
                self.0.insert(i, item);
                None
            }
        }
    }

    pub fn remove(&mut self, key: &TsKey) -> Option<T> {
        let i = self.position(*key).ok()?;
        self.0.remove(i)
    }

    /// Removes the oldest item.
    pub fn pop_first(&mut self) -> Option<T> {
        self.0.pop_front()
    }

    /// Items, oldest first.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &T> {
        self.0.iter()
    }

    /// Items, oldest first, to change in place (keys must stay as they are).
    pub fn iter_mut(&mut self) -> impl DoubleEndedIterator<Item = &mut T> {
        self.0.iter_mut()
    }

    /// Items before `key`, oldest first.
    pub fn before(&self, key: TsKey) -> impl DoubleEndedIterator<Item = &T> {
        let end = self.count_before(key);
        self.0.range(..end)
    }

    /// Items at or after `key`, oldest first.
    pub fn from(&self, key: TsKey) -> impl DoubleEndedIterator<Item = &T> {
        let start = self.count_before(key);
        self.0.range(start..)
    }

    /// How many items are before `key`.
    pub fn count_before(&self, key: TsKey) -> usize {
        match self.position(key) {
            Ok(i) | Err(i) => i,
        }
    }

    /// Heap bytes of the queue itself (what the items point to is counted apart).
    pub fn heap_bytes(&self) -> usize {
        self.0.capacity() * std::mem::size_of::<T>()
    }
}

#[cfg(test)]
mod tests;
