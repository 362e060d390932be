//! A channel's window: its held channel messages in ts order, a [`SortedDeque`] of boxed
//! messages, so each costs the window one pointer.

use crate::channel::message::StoredMessage;
use crate::core::sorted_deque::{Keyed, SortedDeque};
use crate::core::time::TsKey;

pub type Window = SortedDeque<Box<StoredMessage>>;

impl Keyed for Box<StoredMessage> {
    #[inline]
    fn key(&self) -> TsKey {
        self.key
    }
}
