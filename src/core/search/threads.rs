//! The thread ids of indexed replies, each held once however many replies it has: a
//! document names its thread by a 4-byte number instead of carrying a copy of the id.

use super::hasher::WordHash;
use std::collections::HashMap;

/// The number of "no thread" (a channel message).
pub const NO_THREAD: u32 = u32::MAX;

#[derive(Debug, Default)]
pub struct ThreadTable {
    ids: Vec<Box<str>>,
    numbers: HashMap<Box<str>, u32, WordHash>,
}

impl ThreadTable {
    /// The number of thread `id`, added if new; [`NO_THREAD`] for `None`.
    pub fn intern(&mut self, id: Option<&str>) -> u32 {
        let Some(id) = id else {
            return NO_THREAD;
        };
        if let Some(&n) = self.numbers.get(id) {
            return n;
        }
        let n = self.ids.len() as u32;
        self.ids.push(id.into());
        self.numbers.insert(id.into(), n);
        n
    }

    /// The thread id numbered `n`; `None` for [`NO_THREAD`].
    pub fn get(&self, n: u32) -> Option<&str> {
        self.ids.get(n as usize).map(|id| &**id)
    }

    /// Distinct thread ids held.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Heap bytes held: both copies of each id and the table's slots.
    pub fn heap_bytes(&self) -> usize {
        let strings: usize = self.ids.iter().map(|id| id.len()).sum();
        self.ids.capacity() * std::mem::size_of::<Box<str>>()
            + self.numbers.capacity() * (std::mem::size_of::<(Box<str>, u32)>() + 1)
            + 2 * strings
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_id_is_numbered_once_and_read_back() {
        let mut t = ThreadTable::default();
        let a = t.intern(Some("1775835600.000100"));
        let b = t.intern(Some("1775835601.000100"));
        assert_ne!(a, b);
        assert_eq!(t.intern(Some("1775835600.000100")), a);
        assert_eq!(t.len(), 2);
        assert_eq!(t.get(a), Some("1775835600.000100"));
        assert_eq!(t.get(b), Some("1775835601.000100"));
        assert_eq!(t.intern(None), NO_THREAD);
        assert_eq!(t.get(NO_THREAD), None);
        assert_eq!(t.len(), 2);
    }
}
