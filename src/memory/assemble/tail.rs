//! The lane's own messages read from the newest back, a chunk of [`TAIL_CHUNK`] at a time:
//! the recent messages of an assembly that has no host's messages, and how far back they
//! reach.

use super::{AssembleRequest, TAIL_CHUNK};
use crate::memory::db::MemoryError;
use crate::memory::store::{ChatMessage, MemoryStore};

/// The lane's messages read from the newest back, a chunk at a time, for the recent
/// messages.
pub(super) struct Tail {
    /// The oldest seq read so far.
    pub(super) from: i64,
    /// No older message is left to read.
    pub(super) done: bool,
    /// Read and not yet placed, newest last.
    pub(super) pending: Vec<ChatMessage>,
}

impl Tail {
    pub(super) fn new() -> Self {
        Tail {
            from: i64::MAX,
            done: false,
            pending: Vec::new(),
        }
    }

    /// The next older message of the lane, reading a chunk when none is pending.
    pub(super) fn next(
        &mut self,
        store: &MemoryStore,
        req: &AssembleRequest<'_>,
    ) -> Result<Option<ChatMessage>, MemoryError> {
        if !self.done && self.pending.is_empty() {
            let chunk = store.lane_neighbours(
                req.session_id,
                req.thread_key,
                self.from,
                false,
                TAIL_CHUNK,
            )?;
            if chunk.len() < TAIL_CHUNK {
                self.done = true;
            }
            if let Some(last) = chunk.last() {
                self.from = last.seq;
            }
            self.pending.extend(chunk.into_iter().rev());
        }
        Ok(self.pending.pop())
    }

    /// Every message of the lane has been placed.
    pub(super) fn exhausted(&self) -> bool {
        self.done && self.pending.is_empty()
    }
}
