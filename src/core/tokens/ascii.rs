//! Counting a run of ASCII for [`Counts::of`] 64 bytes at a time, without a branch per
//! byte: each class of byte (letter, digit, space, line break, punctuation) becomes a
//! 64-bit mask, built 8 bytes at a time with word arithmetic, and the counts are popcounts
//! of those masks and of their shifts (a word starts where a letter follows a non-letter).
//! The runs that cross a block's edge (the current word, spaces, digits) are carried in
//! [`Runs`].

use super::Counts;

/// Each byte's lowest bit.
const LO: u64 = u64::from_ne_bytes([0x01; 8]);
/// Each byte's highest bit.
const HI: u64 = u64::from_ne_bytes([0x80; 8]);
/// Gathers the high bit of byte `i` into bit `56 + i` (no two partial products overlap).
const GATHER: u64 = 0x0102_0408_1020_4080;
/// Bytes counted per block: one bit of a mask each.
pub(super) const BLOCK: usize = 64;
/// A letter is part of a long word from the seventh of its run.
const LONG_WORD: u32 = 6;

/// The runs in progress where the last block (or character) ended.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Runs {
    /// ASCII letters in a row.
    pub letters: u32,
    /// Spaces in a row.
    pub spaces: u32,
    /// The last byte was a digit.
    pub digit: bool,
    /// The last byte was a tab.
    pub tab: bool,
}

/// The high bit of each byte of `w` (ASCII bytes only) set where the byte is `n` or more
/// (`n` from 1 to 128): adding `128 - n` carries into the high bit exactly then, and no
/// byte can carry into the next.
fn at_least(w: u64, n: u8) -> u64 {
    w.wrapping_add(LO * u64::from(0x80 - n)) & HI
}

/// The high bit of each byte set where the byte lies in `lo..=hi` (`hi` below 128).
fn within(w: u64, lo: u8, hi: u8) -> u64 {
    at_least(w, lo) & !at_least(w, hi + 1)
}

/// The high bit of each byte set where the byte is `b`.
fn equal(w: u64, b: u8) -> u64 {
    within(w, b, b)
}

/// The 8 high bits of `flags` as the low 8 bits of the result, byte `i` as bit `i`.
fn gather(flags: u64) -> u64 {
    ((flags >> 7).wrapping_mul(GATHER)) >> 56
}

/// The masks of one block, bit `i` for byte `i`.
#[derive(Default)]
struct Masks {
    letter: u64,
    digit: u64,
    space: u64,
    line_break: u64,
    tab: u64,
    punctuation: u64,
    backslash: u64,
}

impl Masks {
    /// The classes of the bytes of `block` (ASCII; bytes past its length count as NUL,
    /// which is in no class).
    fn of(block: &[u8]) -> Masks {
        let mut padded = [0u8; BLOCK];
        let bytes = match block.get(..BLOCK) {
            Some(whole) => whole,
            None => {
                padded[..block.len()].copy_from_slice(block);
                &padded[..]
            }
        };
        let mut m = Masks::default();
        for (k, word) in bytes.chunks_exact(8).enumerate() {
            let mut le = [0u8; 8];
            le.copy_from_slice(word);
            let w = u64::from_le_bytes(le);
            let letter = within(w | (LO * 0x20), b'a', b'z');
            let digit = within(w, b'0', b'9');
            let graphic = within(w, b'!', b'~');
            let shift = 8 * k;
            m.letter |= gather(letter) << shift;
            m.digit |= gather(digit) << shift;
            m.space |= gather(equal(w, b' ')) << shift;
            m.line_break |= gather(equal(w, b'\n') | equal(w, b'\r')) << shift;
            m.tab |= gather(equal(w, b'\t')) << shift;
            let backslash = equal(w, b'\\');
            m.punctuation |= gather(graphic & !letter & !digit & !backslash) << shift;
            m.backslash |= gather(backslash) << shift;
        }
        m
    }
}

/// How many of the `n` low bits of `mask`, counted down from bit `n - 1`, are set in a
/// row.
fn trailing_run(mask: u64, n: usize) -> u32 {
    if n == 0 {
        return 0;
    }
    let top = mask << (BLOCK - n);
    (!top).leading_zeros().min(n as u32)
}

/// The run carried into a block as the bits just below it: bit `LONG_WORD - j` set when
/// the run is at least `j` long (`j` from 1 to `LONG_WORD`).
fn carried(run: u32) -> u128 {
    let r = run.min(LONG_WORD);
    ((1u128 << r) - 1) << (LONG_WORD - r)
}

/// Adds the parts of `block` (at most [`BLOCK`] ASCII bytes) to `c`, continuing `runs`.
pub(super) fn count_block(block: &[u8], c: &mut Counts, runs: &mut Runs) {
    let n = block.len().min(BLOCK);
    if n == 0 {
        return;
    }
    let m = Masks::of(block);
    let ones = |x: u64| x.count_ones();
    // Words: letters whose previous byte is no letter.
    let before = (m.letter << 1) | u64::from(runs.letters > 0);
    c.words += ones(m.letter & !before);
    // Long letters: this letter and the six bytes before it are all letters.
    let extended = (u128::from(m.letter) << LONG_WORD) | carried(runs.letters);
    let mut all = extended;
    for j in 1..=LONG_WORD {
        all &= extended << j;
    }
    c.long_letters += ones((all >> LONG_WORD) as u64 & m.letter);
    // Extra spaces: a space after a space; a run of them starts at its second space.
    let before = (m.space << 1) | u64::from(runs.spaces > 0);
    let two_before =
        (m.space << 2) | (u64::from(runs.spaces > 0) << 1) | u64::from(runs.spaces > 1);
    c.extra_spaces += ones(m.space & before);
    c.space_runs += ones(m.space & before & !two_before);
    // Digits, and runs of them.
    let before = (m.digit << 1) | u64::from(runs.digit);
    c.digits += ones(m.digit);
    c.digit_runs += ones(m.digit & !before);
    c.line_breaks += ones(m.line_break);
    c.tabs += ones(m.tab);
    let before = (m.tab << 1) | u64::from(runs.tab);
    c.tab_runs += ones(m.tab & !before);
    c.punctuation += ones(m.punctuation);
    c.backslashes += ones(m.backslash);
    let run = |mask: u64, was: u32| {
        let t = trailing_run(mask, n);
        if t as usize == n {
            was.saturating_add(t)
        } else {
            t
        }
    };
    runs.letters = run(m.letter, runs.letters);
    runs.spaces = run(m.space, runs.spaces);
    runs.digit = (m.digit >> (n - 1)) & 1 == 1;
    runs.tab = (m.tab >> (n - 1)) & 1 == 1;
}
