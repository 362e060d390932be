//! One term's posting list: the slots of the documents holding the term, in increasing
//! order, each with the term's frequency there, packed into bytes.
//!
//! Each posting is one LEB128 varint: the gap from the previous slot (from 0 for the
//! first) shifted left by two, with the frequency in the low two bits when it is 1 to 3;
//! a 0 there means the frequency follows as a second varint. A term held by many
//! messages has small gaps, so most postings take one byte where a fixed-width
//! `(u32, u16)` took six; a rare term's gaps take two or three.

/// The low bits of a posting's first varint that hold its frequency.
const TF_BITS: u32 = 2;
/// The largest frequency kept in those bits.
const TF_INLINE_MAX: u16 = (1 << TF_BITS) - 1;

#[derive(Debug, Clone, Default)]
pub struct PostingList {
    bytes: Vec<u8>,
    /// The slot of the last posting (meaningless while the list is empty).
    last: u32,
    /// Postings in the list.
    len: u32,
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The varint at `*pos`, advancing past it; `None` at the end of `bytes`.
#[inline]
fn get_varint(bytes: &[u8], pos: &mut usize) -> Option<u64> {
    let first = *bytes.get(*pos)?;
    *pos += 1;
    if first < 0x80 {
        return Some(u64::from(first));
    }
    let mut v = u64::from(first & 0x7f);
    let mut shift = 7;
    loop {
        let b = *bytes.get(*pos)?;
        *pos += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b < 0x80 || shift >= 63 {
            return Some(v);
        }
        shift += 7;
    }
}

impl PostingList {
    /// Postings in the list.
    pub fn len(&self) -> usize {
        self.len as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends a posting. `slot` must be greater than every slot already in the list;
    /// one that is not is dropped (and reported by a debug assertion), so the list stays
    /// in order.
    pub fn push(&mut self, slot: u32, tf: u16) {
        debug_assert!(
            self.len == 0 || slot > self.last,
            "posting slots must increase: {slot} after {}",
            self.last
        );
        let gap = match (self.len, slot.checked_sub(self.last)) {
            (0, _) => slot,
            (_, Some(gap)) if gap > 0 => gap,
            _ => return,
        };
        let tf = tf.max(1);
        let low = if tf <= TF_INLINE_MAX { tf } else { 0 };
        put_varint(
            &mut self.bytes,
            (u64::from(gap) << TF_BITS) | u64::from(low),
        );
        if low == 0 {
            put_varint(&mut self.bytes, u64::from(tf));
        }
        self.last = slot;
        self.len += 1;
    }

    /// The postings, `(slot, frequency)` in slot order.
    #[inline]
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            bytes: &self.bytes,
            pos: 0,
            slot: 0,
        }
    }

    /// Rewrites the list through `remap`: a posting's slot becomes `remap(slot)`, or the
    /// posting goes when that is `None`. The new slots must keep the order.
    pub fn remap(&mut self, mut remap: impl FnMut(u32) -> Option<u32>) {
        let mut out = PostingList::default();
        for (slot, tf) in self.iter() {
            if let Some(s) = remap(slot) {
                out.push(s, tf);
            }
        }
        out.bytes.shrink_to_fit();
        *self = out;
    }

    /// Heap bytes the list holds.
    pub fn heap_bytes(&self) -> usize {
        self.bytes.capacity()
    }
}

/// Reads a [`PostingList`] in order.
pub struct Iter<'a> {
    bytes: &'a [u8],
    pos: usize,
    slot: u32,
}

impl Iterator for Iter<'_> {
    type Item = (u32, u16);

    #[inline]
    fn next(&mut self) -> Option<(u32, u16)> {
        let v = get_varint(self.bytes, &mut self.pos)?;
        self.slot = self.slot.wrapping_add((v >> TF_BITS) as u32);
        let low = (v & u64::from(TF_INLINE_MAX)) as u16;
        let tf = if low != 0 {
            low
        } else {
            get_varint(self.bytes, &mut self.pos).map_or(1, |t| t.min(u64::from(u16::MAX)) as u16)
        };
        Some((self.slot, tf))
    }
}

#[cfg(test)]
mod tests;
