//! A fast hasher for keys the engine keeps per channel (index terms, user ids, message ids).
//!
//! The standard library's SipHash resists hash flooding, which matters for keys an
//! attacker picks and a server keeps forever. Here it was a tenth of the indexing time.
//! The words of a channel are chosen by its members, and a flood of colliding words
//! would cost only that channel's speed, so one folded multiply per 8 bytes
//! (the 128-bit product of the state and an odd constant, its halves XORed, so every
//! input bit reaches every output bit) is enough. Each table takes a random seed from the
//! standard library's `RandomState`, so collisions cannot be precomputed.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};

const K: u64 = 0xf135_7aea_2e62_a9c5;

/// Builds [`WordHasher`]s, seeded once per table.
#[derive(Debug, Clone, Copy)]
pub struct WordHash {
    seed: u64,
}

impl Default for WordHash {
    fn default() -> Self {
        WordHash {
            seed: RandomState::new().hash_one(0x5eed_u64),
        }
    }
}

impl BuildHasher for WordHash {
    type Hasher = WordHasher;
    fn build_hasher(&self) -> WordHasher {
        WordHasher { h: self.seed }
    }
}

/// Folded multiply over 8-byte words.
#[derive(Debug, Clone, Copy)]
pub struct WordHasher {
    h: u64,
}

impl WordHasher {
    #[inline]
    fn mix(&mut self, w: u64) {
        let p = u128::from(self.h ^ w) * u128::from(K);
        self.h = (p as u64) ^ ((p >> 64) as u64);
    }
}

impl Hasher for WordHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.mix(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.mix(u64::from_le_bytes(w));
        }
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.mix(u64::from(i));
    }

    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.mix(u64::from(i));
    }

    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.mix(i);
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.mix(i as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.h
    }
}

#[cfg(test)]
mod tests;
