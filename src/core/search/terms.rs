//! The index's dictionary: each distinct term and its id.
//!
//! Nearly every term of chat text is short, so a term of up to [`INLINE_BYTES`] bytes is
//! kept as a 128-bit key (its bytes and its length, in two words) instead of a heap
//! string: a lookup hashes and compares two machine words and never follows a pointer,
//! and an entry costs no allocation. Longer terms keep a string key.

use super::hasher::WordHash;
use std::collections::HashMap;

/// Longest term kept inline: fifteen bytes, the sixteenth holds the length.
pub const INLINE_BYTES: usize = 15;

/// A short term as a number: its bytes, then its length in the top byte, so two terms
/// share a number only when they are the same bytes. Kept as two 64-bit words rather
/// than a `u128`, whose 16-byte alignment would pad each table entry (key and id) from
/// 24 bytes to 32.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct InlineKey([u64; 2]);

impl std::hash::Hash for InlineKey {
    #[inline]
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write_u64(self.0[0]);
        state.write_u64(self.0[1]);
    }
}

#[inline]
fn inline_key(term: &[u8]) -> InlineKey {
    let mut b = [0u8; 16];
    b[..term.len()].copy_from_slice(term);
    b[15] = term.len() as u8;
    let word = |at: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&b[at..at + 8]);
        u64::from_le_bytes(w)
    };
    InlineKey([word(0), word(8)])
}

/// Term -> id.
#[derive(Debug, Default)]
pub struct TermTable {
    inline: HashMap<InlineKey, u32, WordHash>,
    long: HashMap<Box<str>, u32, WordHash>,
}

impl TermTable {
    /// The id of `term`, if it is known.
    #[inline]
    pub fn get(&self, term: &str) -> Option<u32> {
        if term.len() <= INLINE_BYTES {
            self.inline.get(&inline_key(term.as_bytes())).copied()
        } else {
            self.long.get(term).copied()
        }
    }

    /// The id of `term`; an unknown term is given `next()`.
    #[inline]
    pub fn get_or_insert(&mut self, term: &str, next: impl FnOnce() -> u32) -> u32 {
        if term.len() <= INLINE_BYTES {
            *self
                .inline
                .entry(inline_key(term.as_bytes()))
                .or_insert_with(next)
        } else if let Some(&id) = self.long.get(term) {
            id
        } else {
            let id = next();
            self.long.insert(term.into(), id);
            id
        }
    }

    /// Distinct terms.
    pub fn len(&self) -> usize {
        self.inline.len() + self.long.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Keeps the terms for which `f` returns true; `f` may change their ids.
    pub fn retain(&mut self, mut f: impl FnMut(&mut u32) -> bool) {
        self.inline.retain(|_, id| f(id));
        self.long.retain(|_, id| f(id));
    }

    /// Approximate heap bytes: each entry, its share of the tables' control bytes and,
    /// for a long term, its string.
    pub fn heap_bytes(&self) -> usize {
        self.inline.capacity() * (std::mem::size_of::<(InlineKey, u32)>() + 1)
            + self.long.capacity() * (24 + 1)
            + self.long.keys().map(|k| k.len()).sum::<usize>()
    }
}

#[cfg(test)]
mod tests;
