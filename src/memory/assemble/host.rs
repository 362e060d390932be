//! The caller's own messages as the recent layer: which of them are kept, whole turns
//! from the newest, never before what the lane's summary stands for.

use super::HostMessage;
use std::collections::HashSet;

/// The caller's messages kept: `messages[from..]`, whole turns, from the newest.
pub(super) struct HostWindow<'a> {
    pub(super) messages: &'a [HostMessage<'a>],
    pub(super) from: usize,
    /// The window never opens before this: the lane's summary stands for the messages
    /// before it (and retrieval brings back what a question needs of them).
    pub(super) floor: usize,
    /// The current turn (from the last user message on): always kept.
    pub(super) mandatory: usize,
    pub(super) est: f64,
    /// The last message the lane's summary stands for is among these.
    pub(super) summary_in_view: bool,
}

impl<'a> HostWindow<'a> {
    pub(super) fn new(messages: &'a [HostMessage<'a>], covered_to: Option<&str>) -> Self {
        let mandatory = messages
            .iter()
            .rposition(|m| m.user)
            .unwrap_or(messages.len());
        // After the last message the summary covers, from the next user message on.
        let covered_at = covered_to.and_then(|to| {
            messages
                .iter()
                .rposition(|m| !m.id.is_empty() && m.id == to)
        });
        let floor = covered_at
            .map_or(0, |i| {
                messages[i + 1..]
                    .iter()
                    .position(|m| m.user)
                    .map_or(messages.len(), |j| i + 1 + j)
            })
            .min(mandatory);
        HostWindow {
            messages,
            from: mandatory,
            floor,
            mandatory,
            est: messages[mandatory..].iter().map(|m| m.est).sum(),
            summary_in_view: covered_at.is_some(),
        }
    }

    /// What all the messages cost together.
    pub(super) fn all_est(&self) -> f64 {
        self.messages.iter().map(|m| m.est).sum()
    }

    /// What the messages after the summary cost together.
    pub(super) fn window_est(&self) -> f64 {
        self.messages[self.floor..].iter().map(|m| m.est).sum()
    }

    /// Keeps every message, the summary's ones included.
    pub(super) fn keep_all(&mut self) {
        self.floor = 0;
        self.from = 0;
        self.est = self.all_est();
    }

    /// Where a fold should end so that the newest whole turns within `keep` stay: the
    /// stored id of the last message before them (`None` when no stored message of the
    /// window would be folded).
    pub(super) fn fold_through(&self, keep: f64) -> Option<&'a str> {
        let mut at = self.mandatory;
        let mut kept = self.messages[at..].iter().map(|m| m.est).sum::<f64>();
        // Whole turns, from the newest, while they fit.
        while at > self.floor {
            let Some(start) = self.messages[self.floor..at].iter().rposition(|m| m.user) else {
                break;
            };
            let start = self.floor + start;
            let est: f64 = self.messages[start..at].iter().map(|m| m.est).sum();
            if kept + est > keep {
                break;
            }
            kept += est;
            at = start;
        }
        self.messages[self.floor..at]
            .iter()
            .rev()
            .find(|m| !m.id.is_empty())
            .map(|m| m.id)
    }

    /// The turn just before the window (`[start, from)`) and its estimate.
    pub(super) fn previous_turn(&self) -> Option<(usize, f64)> {
        if self.from <= self.floor {
            return None;
        }
        let start = self.floor
            + self.messages[self.floor..self.from]
                .iter()
                .rposition(|m| m.user)?;
        Some((
            start,
            self.messages[start..self.from].iter().map(|m| m.est).sum(),
        ))
    }

    /// Takes the previous turn in when it costs at most `room`; what it cost.
    pub(super) fn extend(&mut self, room: f64) -> Option<f64> {
        let (start, est) = self.previous_turn()?;
        if est > room {
            return None;
        }
        self.from = start;
        self.est += est;
        Some(est)
    }

    /// Leaves the oldest kept turn out (never the current one); false when none is left.
    pub(super) fn shrink(&mut self) -> bool {
        if self.from >= self.mandatory {
            return false;
        }
        let next = self.messages[self.from + 1..self.mandatory]
            .iter()
            .position(|m| m.user)
            .map_or(self.mandatory, |j| self.from + 1 + j);
        self.est -= self.messages[self.from..next]
            .iter()
            .map(|m| m.est)
            .sum::<f64>();
        self.from = next;
        true
    }

    /// The stored ids of all the messages, kept or not.
    pub(super) fn all_ids(&self) -> Vec<&'a str> {
        self.messages
            .iter()
            .filter(|m| !m.id.is_empty())
            .map(|m| m.id)
            .collect()
    }

    /// The stored ids of the kept messages.
    pub(super) fn ids(&self) -> HashSet<&'a str> {
        self.messages[self.from..]
            .iter()
            .filter(|m| !m.id.is_empty())
            .map(|m| m.id)
            .collect()
    }
}
