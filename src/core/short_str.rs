//! Short strings kept inside the value: a platform timestamp (`1775835600.000100`, 17
//! bytes) or a short id needs no heap allocation of its own. A store holding a million
//! messages saves a million allocations of 32 bytes each, and the allocator's work.

use std::fmt;
use std::ops::Deref;

/// The longest text kept inline, in bytes.
pub const INLINE_BYTES: usize = 23;

/// An inline length, 0 to [`INLINE_BYTES`]: a byte whose other values are free, so
/// [`ShortStr`] can tell its two forms apart without a tag of its own and stays 24 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
#[rustfmt::skip]
enum Len {
    L0, L1, L2, L3, L4, L5, L6, L7, L8, L9, L10, L11, L12, L13, L14, L15, L16, L17, L18,
    L19, L20, L21, L22, L23,
}

#[rustfmt::skip]
const LENS: [Len; INLINE_BYTES + 1] = [
    Len::L0, Len::L1, Len::L2, Len::L3, Len::L4, Len::L5, Len::L6, Len::L7, Len::L8,
    Len::L9, Len::L10, Len::L11, Len::L12, Len::L13, Len::L14, Len::L15, Len::L16,
    Len::L17, Len::L18, Len::L19, Len::L20, Len::L21, Len::L22, Len::L23,
];

/// An immutable string: up to [`INLINE_BYTES`] bytes inside the value, longer ones on
/// the heap. Reads as a `&str`.
#[derive(Clone)]
pub struct ShortStr(Repr);

#[derive(Clone)]
enum Repr {
    Inline { len: Len, bytes: [u8; INLINE_BYTES] },
    Heap(Box<str>),
}

impl ShortStr {
    pub fn new(s: &str) -> Self {
        match LENS.get(s.len()) {
            Some(&len) => {
                let mut bytes = [0u8; INLINE_BYTES];
                bytes[..s.len()].copy_from_slice(s.as_bytes());
                ShortStr(Repr::Inline { len, bytes })
            }
            None => ShortStr(Repr::Heap(s.into())),
        }
    }

    pub fn as_str(&self) -> &str {
        match &self.0 {
            Repr::Inline { len, bytes } => {
                let bytes = &bytes[..*len as usize];
                debug_assert!(std::str::from_utf8(bytes).is_ok());
                // SAFETY: `Repr::Inline` is only made by `ShortStr::new`, which copies a
                // whole `&str` into `bytes` and sets `len` to its length, and nothing
                // changes either afterwards: the first `len` bytes are valid UTF-8.
                // (Checking them again on every read cost buildContext some 8 µs: a
                // message's ts is read hundreds of times per build.)
                unsafe { std::str::from_utf8_unchecked(bytes) }
            }
            Repr::Heap(s) => s,
        }
    }

    /// Heap bytes held (none when inline).
    pub fn heap_bytes(&self) -> usize {
        match &self.0 {
            Repr::Inline { .. } => 0,
            Repr::Heap(s) => s.len(),
        }
    }
}

impl Default for ShortStr {
    fn default() -> Self {
        ShortStr::new("")
    }
}

impl Deref for ShortStr {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl From<&str> for ShortStr {
    fn from(s: &str) -> Self {
        ShortStr::new(s)
    }
}

impl From<String> for ShortStr {
    fn from(s: String) -> Self {
        ShortStr::new(&s)
    }
}

impl PartialEq for ShortStr {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for ShortStr {}

impl std::hash::Hash for ShortStr {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl PartialEq<&str> for ShortStr {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<String> for ShortStr {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other.as_str()
    }
}

impl PartialEq<ShortStr> for &str {
    fn eq(&self, other: &ShortStr) -> bool {
        *self == other.as_str()
    }
}

impl PartialEq<ShortStr> for String {
    fn eq(&self, other: &ShortStr) -> bool {
        self.as_str() == other.as_str()
    }
}

impl fmt::Debug for ShortStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

#[cfg(test)]
mod tests;
