//! A channel's window: its held channel messages in ts order, a [`SortedDeque`] of boxed
//! messages, so each costs the window one pointer.

use super::message::StoredMessage;
use crate::sorted_deque::{Keyed, SortedDeque};
use crate::time::TsKey;

pub type Window = SortedDeque<Box<StoredMessage>>;

impl Keyed for Box<StoredMessage> {
    #[inline]
    fn key(&self) -> TsKey {
        self.key
    }
}
