//! What an assembly has chosen so far, layer by layer, and how it renders: the text of
//! each section, the token count of each layer, the order things give way in when the
//! rendered text is over the budget, and how a thread summary is cut to fit.

use super::host::{window_step, HostWindow};
use super::render::{day_heading, message_line, section, Block, Line};
use super::{AssembleRequest, LayerTokens};
use crate::core::tokens::{counted, estimate, Meter};
use crate::memory::history::Zone;
use crate::memory::store::{ChatMessage, KeptLines};
use crate::memory::summary::Summary;
use std::cell::RefCell;
use std::collections::HashMap;

/// The frame of the memories section.
const MEMORIES_FRAME: &str = "<memories>\n</memories>\n";

/// A memory item: a named lane's summary or a retrieved record, rendered.
pub(super) struct Item {
    pub(super) text: String,
    pub(super) est: f64,
}

/// Everything an assembly chose, and how it renders.
pub(super) struct Plan<'r> {
    pub(super) req: &'r AssembleRequest<'r>,
    /// What the context is counted by.
    pub(super) meter: Meter,
    pub(super) zone: Zone,
    pub(super) now_day: i64,
    pub(super) policy: String,
    pub(super) personality: Option<String>,
    pub(super) quoted: Option<String>,
    pub(super) user: String,
    pub(super) summary_body: Option<String>,
    /// The summary section as cut, and how many items it keeps.
    pub(super) summary: Option<(String, usize)>,
    pub(super) memories: Vec<Item>,
    pub(super) memories_kept: usize,
    pub(super) passages: Block,
    /// Passage seqs in the order they were chosen (the last is the first to go).
    pub(super) passage_order: Vec<i64>,
    pub(super) recent: Block,
    pub(super) host: Option<HostWindow<'r>>,
    pub(super) turn_blocks: Vec<String>,
    pub(super) system_blocks: Vec<String>,
    /// What each day's heading (in a lane) takes, once worked out.
    pub(super) headings: RefCell<HashMap<(i64, Option<String>), f64>>,
}

impl Plan<'_> {
    /// The estimate of the fixed layers: the policy, the message, the quoted reply, the
    /// personality, the caller's blocks and the host's messages in view.
    pub(super) fn fixed_est(&self) -> f64 {
        estimate(&self.policy)
            + estimate(&self.user)
            + self.quoted.as_deref().map_or(0.0, estimate)
            + self.personality.as_deref().map_or(0.0, estimate)
            + self.turn_blocks.iter().map(|b| estimate(b)).sum::<f64>()
            + self.system_blocks.iter().map(|b| estimate(b)).sum::<f64>()
            + self.host.as_ref().map_or(0.0, |h| h.est)
    }

    /// Opens the caller's window at its step line ([`HostWindow::step_from`]) for `share`
    /// of `budget`, what the policy and the personality take left out of the step.
    pub(super) fn step_window(&mut self, meter: Meter, budget: u64, share: f64) {
        let steady = estimate(&self.policy) + self.personality.as_deref().map_or(0.0, estimate);
        if let Some(host) = self.host.as_mut() {
            host.step_from(window_step(meter, budget, host.est, share, steady));
        }
    }

    /// When the fixed layers alone are over `cap`: the caller's blocks give way (the last
    /// first), then the quoted reply, then the personality.
    pub(super) fn give_way_to(&mut self, cap: f64) {
        while self.fixed_est() > cap
            && (self.turn_blocks.pop().is_some() || self.system_blocks.pop().is_some())
        {}
        if self.fixed_est() > cap {
            self.quoted = None;
        }
        if self.fixed_est() > cap {
            self.personality = None;
        }
    }

    /// `m` rendered, with its estimate and its heading's: the line as an earlier assembly
    /// rendered it, when `kept` has it.
    pub(super) fn line(&self, kept: &RefCell<KeptLines>, m: ChatMessage) -> Line {
        let key = (m.seq, self.zone.offset_ms(m.ts_ms));
        let found = kept.borrow_mut().get(&key).cloned();
        let (text, est) = found.unwrap_or_else(|| {
            let text = message_line(&m, &self.zone);
            let est = estimate(&text);
            kept.borrow_mut()
                .put(key, (text.clone(), est), text.len() + 32);
            (text, est)
        });
        let day = self.zone.day(m.ts_ms);
        // As `Block::render` heads it: the lane is named when it is not the request's.
        let lane = (m.thread_key != self.req.thread_key).then_some(m.thread_key.as_str());
        let heading_est = *self
            .headings
            .borrow_mut()
            .entry((day, lane.map(str::to_string)))
            .or_insert_with(|| estimate(&day_heading(day, self.now_day, lane)));
        Line {
            message: m,
            text,
            est,
            day,
            heading_est,
        }
    }

    fn memories_text(&self) -> String {
        if self.memories_kept == 0 {
            return String::new();
        }
        let mut out = String::from("<memories>\n");
        for m in &self.memories[..self.memories_kept] {
            out.push_str(&m.text);
        }
        out.push_str("</memories>\n");
        out
    }

    /// The estimate the kept memories take, their frame included.
    pub(super) fn memories_taken(&self) -> f64 {
        if self.memories_kept == 0 {
            return 0.0;
        }
        estimate(MEMORIES_FRAME)
            + self.memories[..self.memories_kept]
                .iter()
                .map(|m| m.est)
                .sum::<f64>()
    }

    /// Keeps memories, in order, while their total (frame included) stays within
    /// `room`; returns the estimate added.
    pub(super) fn fill_memories(&mut self, room: f64) -> f64 {
        let frame = estimate(MEMORIES_FRAME);
        let start = self.memories_taken();
        let mut spent = start;
        while self.memories_kept < self.memories.len() {
            let mut add = self.memories[self.memories_kept].est;
            if self.memories_kept == 0 {
                add += frame;
            }
            if spent + add > room {
                break;
            }
            spent += add;
            self.memories_kept += 1;
        }
        spent - start
    }

    /// Lets the summary grow into `room` more, unless it is whole already; returns the
    /// estimate added.
    pub(super) fn grow_summary(&mut self, room: f64) -> f64 {
        let Some(body) = self.summary_body.as_deref() else {
            return 0.0;
        };
        let now = self.summary.as_ref();
        if now.is_some_and(|s| s.1 >= summary_items(body)) {
            return 0.0;
        }
        let now = now.map_or(0.0, |s| estimate(&s.0));
        match fit_summary(body, now + room) {
            Some(s) => {
                let added = estimate(&s.0) - now;
                self.summary = Some(s);
                added
            }
            None => 0.0,
        }
    }

    /// The stable part, the turn part, and their tokens (with the caller's messages).
    pub(super) fn render(&self) -> (String, String, LayerTokens) {
        let memories = self.memories_text();
        let passages =
            self.passages
                .render("retrieved_messages", self.req.thread_key, self.now_day);
        let recent = self
            .recent
            .render("recent_messages", self.req.thread_key, self.now_day);
        let system_blocks = self.system_blocks.concat();
        let turn_blocks = self.turn_blocks.concat();
        let system = [
            self.policy.as_str(),
            self.personality.as_deref().unwrap_or_default(),
            self.summary.as_ref().map_or("", |s| s.0.as_str()),
            &system_blocks,
        ]
        .concat();
        // The memories are retrieved for this message: they change with it.
        let turn = [
            memories.as_str(),
            turn_blocks.as_str(),
            &passages,
            &recent,
            self.quoted.as_deref().unwrap_or_default(),
            &self.user,
        ]
        .concat();
        let host_est = self.host.as_ref().map_or(0.0, |h| h.est);
        let text_est = estimate(&system) + estimate(&turn) + host_est;
        let meter = self.meter;
        let total = meter.bound(text_est);
        let tokens = LayerTokens {
            policy: counted(&self.policy),
            personality: counted(self.personality.as_deref().unwrap_or_default()),
            summary: counted(self.summary.as_ref().map_or("", |s| s.0.as_str())),
            memories: counted(&memories),
            passages: counted(&passages),
            recent: counted(&recent),
            quoted: counted(self.quoted.as_deref().unwrap_or_default()),
            user: counted(&self.user),
            blocks: counted(&system_blocks) + counted(&turn_blocks),
            host: meter.bound(host_est),
            total,
        };
        (system, turn, tokens)
    }

    /// Takes one thing out, in the give-way order (the lowest retrieved message, the
    /// last memory, the oldest recent message, the oldest kept turn of the caller's
    /// messages, the last block, the oldest summary item, the quoted reply, the
    /// personality); false when nothing but the policy, the user message and the
    /// caller's current turn is left.
    pub(super) fn give_way(&mut self, frame_est: f64) -> bool {
        if let Some(seq) = self.passage_order.pop() {
            self.passages.remove(seq, frame_est);
            return true;
        }
        if self.memories_kept > 0 {
            self.memories_kept -= 1;
            return true;
        }
        if let Some(&oldest) = self.recent.lines.keys().next() {
            self.recent.remove(oldest, frame_est);
            return true;
        }
        if self.host.as_mut().is_some_and(HostWindow::shrink) {
            return true;
        }
        if self.turn_blocks.pop().is_some() || self.system_blocks.pop().is_some() {
            return true;
        }
        if let Some((_, items)) = self.summary.take() {
            self.summary = self
                .summary_body
                .as_deref()
                .and_then(|b| cut_summary(b, items.saturating_sub(1)));
            return true;
        }
        if self.quoted.take().is_some() {
            return true;
        }
        self.personality.take().is_some()
    }
}

/// The number of items of a summary body (its lines, for text of another structure).
fn summary_items(body: &str) -> usize {
    Parsed::of(body).all
}

/// A summary body, read once for its cuts.
struct Parsed<'b> {
    body: &'b str,
    /// Its structure (`None`: text of another structure, cut by lines).
    summary: Option<Summary>,
    all: usize,
}

impl<'b> Parsed<'b> {
    fn of(body: &'b str) -> Self {
        let summary = Summary::parse(body);
        let all = summary
            .as_ref()
            .map_or_else(|| body.lines().count(), Summary::items);
        Parsed { body, summary, all }
    }

    /// The section cut to at most `items` items (oldest first out; for text of another
    /// structure, its last lines), with the items it keeps; `None` when nothing is left.
    fn cut(&self, items: usize) -> Option<(String, usize)> {
        if items == 0 {
            return None;
        }
        if items >= self.all {
            // Whole: the summary as written.
            return Some((section("thread_summary", self.body), self.all));
        }
        match &self.summary {
            Some(s) => {
                let mut s = s.clone();
                while s.items() > items {
                    s.drop_oldest();
                }
                let kept = s.items();
                Some((section("thread_summary", &s.render()), kept))
            }
            None => {
                let lines: Vec<&str> = self.body.lines().collect();
                let from = lines.len().saturating_sub(items);
                Some((
                    section("thread_summary", &lines[from..].join("\n")),
                    lines.len() - from,
                ))
            }
        }
    }
}

/// The section of a summary body cut to at most `items` items: see [`Parsed::cut`].
fn cut_summary(body: &str, items: usize) -> Option<(String, usize)> {
    Parsed::of(body).cut(items)
}

/// The largest cut of the summary (the most items) within `max_est`.
pub(super) fn fit_summary(body: &str, max_est: f64) -> Option<(String, usize)> {
    let parsed = Parsed::of(body);
    let all = parsed.all;
    if let Some(full) = parsed.cut(all) {
        if estimate(&full.0) <= max_est {
            return Some(full);
        }
    }
    // Binary search on the number of items kept.
    let (mut lo, mut hi) = (0usize, all);
    let mut best = None;
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        match parsed.cut(mid) {
            Some(s) if estimate(&s.0) <= max_est => {
                best = Some(s);
                lo = mid;
            }
            _ => hi = mid - 1,
        }
    }
    best
}
