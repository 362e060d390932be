//! The caller's own messages as the recent layer: which of them are kept, whole turns
//! from the newest, never before what the lane's summary stands for.

use super::{HostMessage, FOLD_AT_SHARE, FOLD_KEEPS, STEP_GRAIN};
use crate::core::tokens::Meter;
use std::collections::HashSet;

/// The caller's messages kept: `messages[from..]`, whole turns, from the newest.
pub(super) struct HostWindow<'a> {
    pub(super) messages: &'a [HostMessage<'a>],
    pub(super) from: usize,
    /// The lane's summary stands for the messages before this (and retrieval brings back
    /// what a question needs of them).
    pub(super) floor: usize,
    /// The window opens no earlier than this: the floor, or a step line
    /// ([`HostWindow::step_from`]) for a window shaped for a prompt cache.
    pub(super) start: usize,
    /// Where the next turn's window opens at the earliest (the floor when the window has
    /// no step line): a fold ends before it.
    pub(super) step_at: usize,
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
            start: floor,
            step_at: floor,
            mandatory,
            est: messages[mandatory..].iter().map(|m| m.est).sum(),
            summary_in_view: covered_at.is_some(),
        }
    }

    /// What all the messages cost together.
    pub(super) fn all_est(&self) -> f64 {
        self.messages.iter().map(|m| m.est).sum()
    }

    /// Opens the window at the first turn at or past the step line before the last two
    /// (`k·step`, `k = ⌊t / step⌋ − 1`, `t` what the messages before the current turn
    /// weigh), wherever the lane's summary ends: it holds at most two steps of them (none,
    /// where a turn is longer than that), one at least but for the turn the line cuts; it
    /// grows append-only until the messages pass the next line, and is the same for the
    /// same messages whatever the lane's folds were. A fold ends before the turn the next
    /// window opens at, at the earliest (`t` counting the current turn), so the summary
    /// changes with the window's start, not a turn after it.
    pub(super) fn step_from(&mut self, step: f64) {
        let before: f64 = self.messages[..self.mandatory].iter().map(|m| m.est).sum();
        self.start = self.line_start(before, step);
        self.step_at = self.line_start(before + self.est, step);
    }

    /// The first user message at or past the step line before the last two of `weight`.
    fn line_start(&self, weight: f64, step: f64) -> usize {
        let line = if step > 0.0 {
            ((weight / step).floor() - 1.0).max(0.0) * step
        } else {
            weight
        };
        if line <= 0.0 {
            return 0;
        }
        let mut at = 0.0;
        self.messages[..self.mandatory]
            .iter()
            .position(|m| {
                let past = m.user && at >= line;
                at += m.est;
                past
            })
            .unwrap_or(self.mandatory)
    }

    /// Keeps every message, the summary's ones included.
    pub(super) fn keep_all(&mut self) {
        self.floor = 0;
        self.start = 0;
        self.step_at = 0;
        self.from = 0;
        self.est = self.all_est();
    }

    /// Where a fold should end so that the window from its start on stays: the stored id
    /// of the last unsummarized message before it (`None` when there is none).
    pub(super) fn fold_before_start(&self) -> Option<&'a str> {
        self.messages[self.floor.min(self.step_at)..self.step_at]
            .iter()
            .rev()
            .find(|m| !m.id.is_empty())
            .map(|m| m.id)
    }

    /// The turn just before the window (`[start, from)`, no earlier than where the window
    /// may open) and its estimate.
    pub(super) fn previous_turn(&self) -> Option<(usize, f64)> {
        if self.from <= self.start {
            return None;
        }
        let start = self.start
            + self.messages[self.start..self.from]
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

/// The window's step (`HostWindow::step_from`): [`FOLD_KEEPS`] of the fold mark, that is of
/// [`FOLD_AT_SHARE`] of what the verbatim share of the budget's allowance leaves after the
/// layers that never change (`steady`: the policy and the personality), the budget less the
/// current turn (a host that adds the turn's prompt to the budget, as the OpenClaw engine
/// does, gets the same step every turn), in whole [`STEP_GRAIN`]s, so the step lines stay
/// where they were from turn to turn.
pub(super) fn window_step(
    meter: Meter,
    budget: u64,
    turn_est: f64,
    share: f64,
    steady: f64,
) -> f64 {
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    // a turn's estimate, far below 2^53
    let basis = budget.saturating_sub(turn_est.ceil() as u64);
    let step = FOLD_AT_SHARE * FOLD_KEEPS * (share * meter.allowance(basis) - steady).max(0.0);
    (step / STEP_GRAIN).floor() * STEP_GRAIN
}

/// `share` of `budget` in real tokens: what a context past the verbatim share is held to.
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss, clippy::cast_precision_loss)]
// a share of a u64 budget, at most the budget
pub(super) fn share_of(budget: u64, share: f64) -> u64 {
    (share * budget as f64).floor() as u64
}
