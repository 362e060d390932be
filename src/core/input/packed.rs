//! The packed path's packed batches: fields read straight from UTF-16 units (what the JS
//! side sends instead of JSON for plain batches), and the conversion of units to a
//! `String` without a second pass over the bytes.

use super::{has_lone_surrogate, lone_surrogate_error, InputError};
use crate::core::short_str::{self, ShortStr};

/// The fields of a packed batch: the UTF-16 text of every field back to back, and each
/// field's length in units (what the JS side sends instead of JSON for plain batches).
/// `root` names the batch in errors (`events`, `messages`).
pub struct PackedFields<'a> {
    units: &'a [u16],
    lens: &'a [u32],
    at: usize,
    field: usize,
    root: &'static str,
}

impl<'a> PackedFields<'a> {
    pub fn new(units: &'a [u16], lens: &'a [u32], root: &'static str) -> Self {
        PackedFields {
            units,
            lens,
            at: 0,
            field: 0,
            root,
        }
    }

    /// The next field's units.
    pub fn take(&mut self) -> Result<&'a [u16], InputError> {
        let len = self
            .lens
            .get(self.field)
            .map(|&l| l as usize)
            .ok_or_else(|| {
                InputError::type_error(self.root, "packed batch has fewer lengths than it declares")
            })?;
        self.field += 1;
        let s = self.units.get(self.at..self.at + len).ok_or_else(|| {
            InputError::type_error(self.root, "packed batch is shorter than its lengths")
        })?;
        self.at += len;
        Ok(s)
    }

    /// The next field as text (lone surrogates become U+FFFD).
    pub fn text(&mut self) -> Result<String, InputError> {
        self.take().map(string_of_units)
    }

    /// The next field as an id, kept exactly or refused: a lone surrogate folded to U+FFFD
    /// would merge it with another id. `path` names it in the error.
    pub fn id(&mut self, path: impl FnOnce() -> String) -> Result<String, InputError> {
        Self::id_of(self.take()?, path)
    }

    /// The next field as [`PackedFields::id`] does, as a [`ShortStr`]: a timestamp or
    /// short ASCII id is copied straight into it, with no allocation.
    pub fn short_id(&mut self, path: impl FnOnce() -> String) -> Result<ShortStr, InputError> {
        let units = self.take()?;
        if units.len() <= short_str::INLINE_BYTES && units.iter().all(|&u| u < 0x80) {
            let mut bytes = [0u8; short_str::INLINE_BYTES];
            for (b, &u) in bytes.iter_mut().zip(units) {
                *b = u as u8;
            }
            // ASCII, hence UTF-8.
            let text = std::str::from_utf8(&bytes[..units.len()]).unwrap_or_default();
            return Ok(ShortStr::new(text));
        }
        Self::id_of(units, path).map(ShortStr::from)
    }

    /// A field's units (from [`PackedFields::take`]) as an id, as [`PackedFields::id`].
    pub fn id_of(units: &[u16], path: impl FnOnce() -> String) -> Result<String, InputError> {
        if has_lone_surrogate(units) {
            return Err(lone_surrogate_error(path()));
        }
        Ok(string_of_units(units))
    }
}

/// UTF-16 to a String (lone surrogates become U+FFFD), allocated at its exact UTF-8
/// size: the store keeps these strings for as long as it holds the message, so the
/// slack a growing buffer leaves (up to half of a non-ASCII text) would be held too.
/// ASCII, most of chat text, is found eight units at a time and narrowed a run at a
/// time; only the other characters are decoded one by one.
pub fn string_of_units(units: &[u16]) -> String {
    // One byte more: a message's text becomes a store's text by gaining one, in place
    // (see `PackedText::from_string`).
    let mut out: Vec<u8> = Vec::with_capacity(utf8_len_of_units(units) + 1);
    let mut i = 0;
    while i < units.len() {
        let run = ascii_units(&units[i..]);
        out.extend(units[i..i + run].iter().map(|&u| u as u8));
        i += run;
        if i < units.len() {
            let (c, used) = char_at(units, i);
            out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
            i += used;
        }
    }
    debug_assert!(std::str::from_utf8(&out).is_ok());
    // SAFETY: `out` holds ASCII bytes and whole characters `char::encode_utf8` wrote,
    // nothing else, so it is UTF-8 (checking it again was a tenth of a packed ingest).
    unsafe { String::from_utf8_unchecked(out) }
}

/// How many units `units` starts with that are ASCII.
#[inline]
fn ascii_units(units: &[u16]) -> usize {
    let mut n = 0;
    for block in units.chunks_exact(8) {
        if block.iter().fold(0u16, |acc, &u| acc | u) >= 0x80 {
            break;
        }
        n += 8;
    }
    n + units[n..].iter().take_while(|&&u| u < 0x80).count()
}

const HIGH_SURROGATES: std::ops::Range<u16> = 0xD800..0xDC00;
const LOW_SURROGATES: std::ops::Range<u16> = 0xDC00..0xE000;

/// The character starting at `units[i]` and how many units it takes (a lone surrogate
/// is U+FFFD, one unit).
#[inline]
fn char_at(units: &[u16], i: usize) -> (char, usize) {
    let u = units[i];
    if HIGH_SURROGATES.contains(&u) {
        if let Some(&low) = units.get(i + 1).filter(|l| LOW_SURROGATES.contains(l)) {
            let c = 0x10000 + ((u32::from(u) - 0xD800) << 10) + (u32::from(low) - 0xDC00);
            return (char::from_u32(c).unwrap_or(char::REPLACEMENT_CHARACTER), 2);
        }
    }
    (
        char::from_u32(u32::from(u)).unwrap_or(char::REPLACEMENT_CHARACTER),
        1,
    )
}

/// The UTF-8 length of `units` decoded as [`string_of_units`] decodes them: one to three
/// bytes per unit by its value (a surrogate counts three, as a lone one becomes U+FFFD),
/// less two for each high surrogate followed by a low one (one four-byte character).
fn utf8_len_of_units(units: &[u16]) -> usize {
    // Counted in 32-bit lanes (four to a 128-bit register, not two), a block at a time
    // so the counts cannot overflow.
    let mut len = 0;
    let mut surrogates = 0;
    for block in units.chunks(1 << 20) {
        len += block
            .iter()
            .map(|&u| 1 + u32::from(u >= 0x80) + u32::from(u >= 0x800))
            .sum::<u32>() as usize;
        surrogates += block
            .iter()
            .map(|&u| u32::from(u & 0xF800 == 0xD800))
            .sum::<u32>();
    }
    if surrogates == 0 {
        return len;
    }
    // Branch-free, so this loop is vectorized too.
    let pairs: usize = units
        .iter()
        .zip(units.get(1..).unwrap_or_default())
        .map(|(&a, &b)| usize::from((a & 0xFC00 == 0xD800) & (b & 0xFC00 == 0xDC00)))
        .sum();
    len - 2 * pairs
}
