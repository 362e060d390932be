//! A string buffer kept between context builds. A prompt section is tens of kilobytes,
//! written and handed to JavaScript on every build: taking the last one's buffer back,
//! rather than allocating anew, keeps its pages resident (a fresh allocation of that size
//! is often new memory the kernel must fault in and zero, page by page).

use std::sync::Mutex;

/// The largest buffer kept: a larger one goes back to the allocator.
pub const SPARE_MAX_BYTES: usize = 1024 * 1024;

/// At most one spare buffer, and the bound on what it keeps.
#[derive(Debug)]
pub struct Spare {
    buffer: Option<String>,
    max_bytes: usize,
}

impl Spare {
    pub const fn new(max_bytes: usize) -> Self {
        Spare {
            buffer: None,
            max_bytes,
        }
    }

    /// An empty string with room for at least `capacity` bytes: the kept buffer when
    /// there is one, else a new one.
    pub fn take(&mut self, capacity: usize) -> String {
        let mut s = self.buffer.take().unwrap_or_default();
        s.clear();
        s.reserve(capacity);
        s
    }

    /// Keeps `s` for the next `take`, unless it is larger than the bound or smaller than
    /// the buffer already kept.
    pub fn give(&mut self, s: String) {
        let cap = s.capacity();
        let kept = self.buffer.as_ref().map_or(0, String::capacity);
        if cap <= self.max_bytes && cap > kept {
            self.buffer = Some(s);
        }
    }
}

static SPARE: Mutex<Spare> = Mutex::new(Spare::new(SPARE_MAX_BYTES));

/// [`Spare::take`] on the process's spare buffer (a new string if it is in use).
pub fn take(capacity: usize) -> String {
    match SPARE.try_lock() {
        Ok(mut spare) => spare.take(capacity),
        Err(_) => String::with_capacity(capacity),
    }
}

/// [`Spare::give`] on the process's spare buffer (dropped if it is in use).
pub fn give(s: String) {
    if let Ok(mut spare) = SPARE.try_lock() {
        spare.give(s);
    }
}

#[cfg(test)]
mod tests;
