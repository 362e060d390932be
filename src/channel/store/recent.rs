//! Events that are newer than a fetch in flight.
//!
//! A fetch returns the platform's state as of when it ran; an event that arrives while
//! the fetch is in flight is newer than anything the fetch can return. So while fetches
//! are in flight the store numbers every event and remembers, per message, the last
//! event that touched it and the edits and reactions it carried. When a fetched copy
//! arrives for a fetch that began at sequence number `since`, a message touched after
//! `since` keeps the store's copy (or, when the store held none, gets those edits and
//! reactions applied on top of the fetched one). With no fetch in flight nothing is
//! recorded, so plain ingest pays one counter increment.
//!
//! Memory is bounded: at most [`RECENT_EVENTS_REMEMBERED`] messages are tracked, the
//! oldest forgotten first, and all of it is dropped when the last fetch ends.

use crate::channel::message::{Event, StoredMessage};
use std::collections::{HashMap, VecDeque};

/// Messages tracked while fetches are in flight. A fetch lasts at most the fetch
/// timeout (5 s by default), so this covers over 3,000 events per second.
pub const RECENT_EVENTS_REMEMBERED: usize = 16_384;

/// A change an event made to a message, kept so it can be applied to a fetched copy.
#[derive(Debug, Clone, PartialEq)]
pub enum Patch {
    Edit {
        text: String,
        edited: bool,
    },
    Reaction {
        name: String,
        user: Option<String>,
        added: bool,
    },
}

impl Patch {
    /// Applies the change to a copy of the message. Returns whether the message's text
    /// changed (its search entry is then stale).
    pub fn apply(&self, m: &mut StoredMessage) -> bool {
        match self {
            Patch::Edit { text, edited } => {
                let changed = m.text != **text;
                if changed {
                    m.text = text.as_str().into();
                    m.invalidate();
                }
                m.edited |= *edited;
                changed
            }
            Patch::Reaction { name, user, added } => {
                m.react(name, user.as_deref(), *added);
                false
            }
        }
    }
}

/// The message an event touches, and the change to keep for fetched copies.
pub fn touched_by(event: &Event) -> Option<(&str, &str, Option<Patch>)> {
    match event {
        Event::Message {
            channel, message, ..
        } => Some((channel, message.id(), None)),
        Event::Delete {
            channel,
            message_id,
        } => Some((channel, message_id, None)),
        Event::Edit {
            channel,
            message_id,
            text,
            edited,
        } => Some((
            channel,
            message_id,
            Some(Patch::Edit {
                text: text.clone(),
                edited: *edited,
            }),
        )),
        Event::Reaction {
            channel,
            message_id,
            name,
            user,
            added,
        } => Some((
            channel,
            message_id,
            Some(Patch::Reaction {
                name: name.clone(),
                user: user.clone(),
                added: *added,
            }),
        )),
        Event::Ignored { .. } => None,
    }
}

#[derive(Debug, Default)]
struct Touch {
    /// Sequence number of the last event that touched the message.
    seq: u64,
    patches: Vec<(u64, Patch)>,
}

/// Event numbering and the messages touched while fetches are in flight.
#[derive(Debug, Default)]
pub struct Recent {
    seq: u64,
    in_flight: u32,
    touched: HashMap<(String, String), Touch>,
    order: VecDeque<(String, String)>,
    /// While a fetched page is ingested: the event number its fetch began at. Messages
    /// touched by later events keep what those events made of them.
    page_since: Option<u64>,
}

impl Recent {
    /// The number of the newest event.
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// Numbers the next event.
    pub fn next_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    /// A fetch begins: returns the number it is newer than none after.
    pub fn begin_fetch(&mut self) -> u64 {
        self.in_flight = self.in_flight.saturating_add(1);
        self.seq
    }

    /// A fetch ended (its result ingested, or it failed).
    pub fn end_fetch(&mut self) {
        self.in_flight = self.in_flight.saturating_sub(1);
        if self.in_flight == 0 {
            self.touched.clear();
            self.order.clear();
        }
    }

    /// A fetched page whose fetch began at event number `since` is being ingested
    /// (`None`: no longer). Returns what was set before, to put back after.
    pub fn ingesting(&mut self, since: Option<u64>) -> Option<u64> {
        std::mem::replace(&mut self.page_since, since)
    }

    /// While a fetched page is ingested: the event number its fetch began at.
    pub fn page_since(&self) -> Option<u64> {
        self.page_since
    }

    /// Fetches in flight.
    pub fn in_flight(&self) -> u32 {
        self.in_flight
    }

    /// Records that event `seq` touched message `id` of `channel` (with the change it
    /// made, if any). Does nothing while no fetch is in flight.
    pub fn touch(&mut self, channel: &str, id: &str, seq: u64, patch: Option<Patch>) {
        if self.in_flight == 0 {
            return;
        }
        let key = (channel.to_string(), id.to_string());
        let t = match self.touched.get_mut(&key) {
            Some(t) => t,
            None => {
                self.order.push_back(key.clone());
                while self.order.len() > RECENT_EVENTS_REMEMBERED {
                    if let Some(old) = self.order.pop_front() {
                        self.touched.remove(&old);
                    }
                }
                self.touched.entry(key).or_default()
            }
        };
        t.seq = seq;
        if let Some(p) = patch {
            t.patches.push((seq, p));
        }
    }

    /// Whether an event after `since` touched message `id` of `channel`.
    pub fn touched_after(&self, channel: &str, id: &str, since: u64) -> bool {
        // Most pages arrive with nothing tracked: no key is built then.
        !self.touched.is_empty()
            && self
                .touched
                .get(&(channel.to_string(), id.to_string()))
                .is_some_and(|t| t.seq > since)
    }

    /// The changes events after `since` made to message `id` of `channel`, oldest first.
    pub fn patches_after(&self, channel: &str, id: &str, since: u64) -> Vec<Patch> {
        self.touched
            .get(&(channel.to_string(), id.to_string()))
            .map(|t| {
                t.patches
                    .iter()
                    .filter(|(s, _)| *s > since)
                    .map(|(_, p)| p.clone())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Messages tracked now.
    pub fn len(&self) -> usize {
        self.touched.len()
    }

    pub fn is_empty(&self) -> bool {
        self.touched.is_empty()
    }
}

#[cfg(test)]
mod tests;
