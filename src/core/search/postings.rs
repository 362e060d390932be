//! One term's posting list: the slots of the documents holding the term, in increasing
//! order, each with the term's frequency there.
//!
//! A posting is five bytes: its slot and its frequency, counted up to [`MAX_TF`]. Lists
//! hold some fifteen postings per message, so each byte saved here is worth fifteen per
//! message. (Gap-coding the slots into varints took postings to one or two bytes but
//! made every query 15-30% slower: each slot then waits on decoding the one before.)

/// The most occurrences of one term a posting counts. BM25 has saturated long before:
/// with the usual K1 of 1.2, 255 occurrences score 99.5% of what unlimited ones would.
pub const MAX_TF: u16 = u8::MAX as u16;

/// A posting: packed to one-byte alignment so it takes 5 bytes, not 8; fields are read
/// and written by value.
#[derive(Debug, Clone, Copy)]
#[repr(C, packed)]
struct Posting {
    slot: u32,
    tf: u8,
}

/// A term's postings. Most terms of real chat are in one document of a channel (names,
/// typos, links, numbers), so a list of one posting keeps it inline, in the 24 bytes a
/// list takes anyway, rather than in an allocation of its own (32 bytes with the
/// allocator's header).
#[derive(Debug, Clone)]
pub struct PostingList(Repr);

#[derive(Debug, Clone)]
enum Repr {
    One(Posting),
    Many(Vec<Posting>),
}

impl Default for PostingList {
    fn default() -> Self {
        PostingList(Repr::Many(Vec::new()))
    }
}

impl PostingList {
    #[inline]
    fn as_slice(&self) -> &[Posting] {
        match &self.0 {
            Repr::One(p) => std::slice::from_ref(p),
            Repr::Many(v) => v,
        }
    }

    /// Postings in the list.
    pub fn len(&self) -> usize {
        self.as_slice().len()
    }

    pub fn is_empty(&self) -> bool {
        self.as_slice().is_empty()
    }

    /// Appends a posting, its frequency counted up to [`MAX_TF`] (and at least 1).
    /// `slot` must be greater than every slot already in the list; one that is not is
    /// dropped (and stops a debug build), so the list stays in order.
    pub fn push(&mut self, slot: u32, tf: u16) {
        let last = self.as_slice().last().map(|p| p.slot);
        debug_assert!(
            last.is_none_or(|l| slot > l),
            "posting slots must increase: {slot} after {last:?}"
        );
        if last.is_some_and(|l| slot <= l) {
            return;
        }
        let p = Posting {
            slot,
            tf: tf.clamp(1, MAX_TF) as u8,
        };
        match &mut self.0 {
            Repr::Many(v) if v.is_empty() => self.0 = Repr::One(p),
            Repr::Many(v) => v.push(p),
            Repr::One(first) => {
                let mut v = Vec::with_capacity(4);
                v.push(*first);
                v.push(p);
                self.0 = Repr::Many(v);
            }
        }
    }

    /// The postings, `(slot, frequency)` in slot order.
    #[inline]
    pub fn iter(&self) -> impl Iterator<Item = (u32, u16)> + '_ {
        self.as_slice().iter().map(|p| (p.slot, u16::from(p.tf)))
    }

    /// The frequency of `slot` in the list, looked for from position `*from` on, which
    /// then moves to the first posting at or after `slot`. Slots looked up in increasing
    /// order walk the list once: each step gallops (1, 2, 4, ... postings ahead) and
    /// then bisects, so a few lookups in a long list touch a few cache lines each
    /// instead of every posting.
    pub fn seek(&self, from: &mut usize, slot: u32) -> Option<u16> {
        let list = self.as_slice();
        let start = (*from).min(list.len());
        let rest = list.get(start..).unwrap_or_default();
        // Gallop to a window [lo, hi) that holds the first posting >= slot.
        let (mut lo, mut step) = (0, 1);
        while rest.get(lo + step - 1).is_some_and(|p| p.slot < slot) {
            lo += step;
            step *= 2;
        }
        let hi = (lo + step).min(rest.len());
        let window = rest.get(lo..hi).unwrap_or_default();
        let at = lo + window.partition_point(|p| p.slot < slot);
        *from = start + at;
        rest.get(at)
            .filter(|p| p.slot == slot)
            .map(|p| u16::from(p.tf))
    }

    /// Rewrites the list through `remap`: a posting's slot becomes `remap(slot)`, or the
    /// posting goes when that is `None`. The new slots must keep the order.
    pub fn remap(&mut self, mut remap: impl FnMut(u32) -> Option<u32>) {
        let mut v = match std::mem::take(self).0 {
            Repr::One(p) => vec![p],
            Repr::Many(v) => v,
        };
        v.retain_mut(|p| match remap(p.slot) {
            Some(s) => {
                p.slot = s;
                true
            }
            None => false,
        });
        self.0 = match v.as_slice() {
            [one] => Repr::One(*one),
            _ => {
                v.shrink_to_fit();
                Repr::Many(v)
            }
        };
    }

    /// Heap bytes the list holds.
    pub fn heap_bytes(&self) -> usize {
        match &self.0 {
            Repr::One(_) => 0,
            Repr::Many(v) => v.capacity() * std::mem::size_of::<Posting>(),
        }
    }
}

#[cfg(test)]
mod tests;
