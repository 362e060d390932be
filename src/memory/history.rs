//! Conversation history by calendar tiers: what was said in a chat, when, and whether the
//! new message continues a conversation, as XML-like blocks within a hard token budget.
//!
//! A conversation is one session's transcript (its user and assistant text turns, with
//! start and end times and a summary). For a chat and a moment `now`, in a configured time
//! zone:
//! - tier 1: conversations that ended less than [`ACTIVE_WINDOW_MS`] (30 minutes) ago, in
//!   full;
//! - tier 2: today's other conversations (the same calendar day in the zone), in full when
//!   the budget allows, else their summaries;
//! - tier 3: yesterday's, as summaries;
//! - tier 4: those of 2 to [`OLDEST_DAY`] (7) days ago, as summaries.
//!
//! Within a tier the newest comes first. A block that does not fit the budget is left out
//! (tier 3 and 4 stop at the first), and the budget counts everything returned, the blank
//! lines between blocks included. Message text is escaped, so a message holding
//! `</conversation>` cannot close its block.

use super::assemble::escape;
use super::db::MemoryError;
use super::store::MemoryStore;
use crate::time::civil_from_days;
use crate::tokens::{estimate, Meter};

/// A conversation is the active one while it ended less than this long ago (30 minutes).
pub const ACTIVE_WINDOW_MS: i64 = 30 * 60_000;
/// A new message within this long of the last conversation's end continues it (30 minutes).
pub const CONTINUATION_WINDOW_MS: i64 = 30 * 60_000;
/// The default budget of the history, in estimated tokens.
pub const DEFAULT_MAX_TOKENS: u64 = 30_000;
/// The oldest calendar day (days before today) whose conversations are summarized.
pub const OLDEST_DAY: i64 = 7;

/// What the status block says of a continued conversation.
pub const CONTINUATION_TEXT: &str = "CONTINUATION — You are in an ongoing conversation. The human just sent another message. Your recent conversation history is below. Do NOT greet them or reintroduce yourself.";
/// What the status block says of a new one.
pub const NEW_TEXT: &str = "NEW CONVERSATION — This is a new conversation or a return after a break. Recent history is provided for context but treat this as a fresh interaction.";

/// One text turn of a transcript.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Turn {
    /// Written by the human (else by the assistant).
    pub human: bool,
    pub text: String,
    /// Epoch ms, when the transcript has it.
    pub ts_ms: Option<i64>,
}

/// One session's conversation in a chat.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conversation {
    pub chat_id: String,
    pub session_id: String,
    pub started_at_ms: i64,
    pub ended_at_ms: i64,
    pub summary: String,
    pub turns: Vec<Turn>,
}

/// A time zone as UTC offsets over time: `(from epoch ms, offset minutes)` spans, sorted.
/// Built by the caller for the window it asks about (the JavaScript side reads them from
/// `Intl`); [`Zone::utc`] by default. Never the machine's zone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Zone {
    spans: Vec<(i64, i32)>,
}

impl Default for Zone {
    fn default() -> Self {
        Zone::utc()
    }
}

impl Zone {
    pub fn utc() -> Self {
        Zone {
            spans: vec![(i64::MIN, 0)],
        }
    }

    /// A zone from its offset spans (sorted here; the earliest span reaches back to the
    /// beginning of time). `None` for no spans or an offset beyond ±18 hours.
    pub fn from_spans(mut spans: Vec<(i64, i32)>) -> Option<Self> {
        if spans.is_empty() || spans.iter().any(|&(_, o)| o.abs() > 18 * 60) {
            return None;
        }
        spans.sort_by_key(|&(from, _)| from);
        spans[0].0 = i64::MIN;
        Some(Zone { spans })
    }

    fn offset_ms(&self, ts: i64) -> i64 {
        let i = self.spans.partition_point(|&(from, _)| from <= ts);
        let offset = self.spans[i.saturating_sub(1)].1;
        i64::from(offset) * 60_000
    }

    /// The calendar day (days since 1970-01-01) of `ts` in this zone.
    pub fn day(&self, ts: i64) -> i64 {
        (ts + self.offset_ms(ts)).div_euclid(86_400_000)
    }

    /// The first instant of calendar day `day` in this zone (to the offset in force then).
    pub fn day_start(&self, day: i64) -> i64 {
        let utc_midnight = day.saturating_mul(86_400_000);
        utc_midnight - self.offset_ms(utc_midnight)
    }

    /// `HH:MM` of `ts` in this zone.
    pub fn clock(&self, ts: i64) -> String {
        let local = (ts + self.offset_ms(ts)).rem_euclid(86_400_000) / 60_000;
        format!("{:02}:{:02}", local / 60, local % 60)
    }

    /// `ts` in ISO 8601 with this zone's offset (`Z` for UTC), to the second.
    pub fn iso(&self, ts: i64) -> String {
        let offset = self.offset_ms(ts);
        let local = ts + offset;
        let (y, mo, d) = civil_from_days(local.div_euclid(86_400_000));
        let secs = local.rem_euclid(86_400_000) / 1000;
        let zone = if offset == 0 {
            "Z".to_string()
        } else {
            let m = offset.abs() / 60_000;
            let sign = if offset < 0 { '-' } else { '+' };
            format!("{sign}{:02}:{:02}", m / 60, m % 60)
        };
        format!(
            "{y:04}-{mo:02}-{d:02}T{:02}:{:02}:{:02}{zone}",
            secs / 3600,
            (secs % 3600) / 60,
            secs % 60
        )
    }
}

/// How the history is cut: its budget and windows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HistoryOptions {
    pub max_tokens: u64,
    pub active_window_ms: i64,
    pub continuation_window_ms: i64,
}

impl Default for HistoryOptions {
    fn default() -> Self {
        HistoryOptions {
            max_tokens: DEFAULT_MAX_TOKENS,
            active_window_ms: ACTIVE_WINDOW_MS,
            continuation_window_ms: CONTINUATION_WINDOW_MS,
        }
    }
}

/// The window of conversations the history of `now` can show: those that ended from
/// `since` on, with their turns only from `turns_since` on (today's and the active ones;
/// older ones are shown by their summaries).
pub fn window(now: i64, zone: &Zone, opts: &HistoryOptions) -> (i64, i64) {
    let today = zone.day(now);
    // A day before the oldest calendar day, so an offset change cannot cut it short.
    let since = zone.day_start(today - OLDEST_DAY - 1);
    // Three hours of margin: an offset change during the day moves its start by one.
    let turns_since = zone
        .day_start(today)
        .saturating_sub(3 * 3_600_000)
        .min(now.saturating_sub(opts.active_window_ms));
    (since, turns_since)
}

/// The relative label of a conversation that ended at `ended`: `just now` (less than 30
/// minutes ago), `earlier today`, `yesterday`, `N days ago` (calendar days in the zone).
pub fn relative_label(ended: i64, now: i64, zone: &Zone, active_window_ms: i64) -> String {
    if now - ended < active_window_ms {
        return "just now".to_string();
    }
    match zone.day(now) - zone.day(ended) {
        i64::MIN..=0 => "earlier today".to_string(),
        1 => "yesterday".to_string(),
        n => format!("{n} days ago"),
    }
}

fn full_block(c: &Conversation, now: i64, zone: &Zone, opts: &HistoryOptions) -> String {
    let mut out = format!(
        "<conversation timestamp=\"{}\" relative=\"{}\">\n",
        zone.iso(c.started_at_ms),
        relative_label(c.ended_at_ms, now, zone, opts.active_window_ms)
    );
    for t in &c.turns {
        let who = if t.human { "human" } else { "you" };
        match t.ts_ms {
            Some(ts) => out.push_str(&format!("[{who} {}] ", zone.clock(ts))),
            None => out.push_str(&format!("[{who}] ")),
        }
        out.push_str(&escape(&t.text));
        out.push('\n');
    }
    out.push_str("</conversation>");
    out
}

fn summary_block(c: &Conversation, now: i64, zone: &Zone, opts: &HistoryOptions) -> String {
    format!(
        "<conversation-summary timestamp=\"{}\" relative=\"{}\">\n{}\n</conversation-summary>",
        zone.iso(c.started_at_ms),
        relative_label(c.ended_at_ms, now, zone, opts.active_window_ms),
        escape(c.summary.trim())
    )
}

/// The tiered history of `conversations` (one chat's, any order) at `now`; the empty
/// string when there is nothing to show.
pub fn conversation_context(
    conversations: &[Conversation],
    now: i64,
    zone: &Zone,
    opts: &HistoryOptions,
) -> String {
    let mut newest_first: Vec<&Conversation> = conversations
        .iter()
        .filter(|c| c.ended_at_ms <= now)
        .collect();
    newest_first.sort_by(|a, b| {
        b.ended_at_ms
            .cmp(&a.ended_at_ms)
            .then_with(|| a.session_id.cmp(&b.session_id))
    });
    let today = zone.day(now);
    let age = |c: &Conversation| today - zone.day(c.ended_at_ms);
    let active = |c: &Conversation| now - c.ended_at_ms < opts.active_window_ms;

    let mut blocks: Vec<String> = Vec::new();
    // The blocks' estimates add up (they meet at blank lines); one bound for the whole.
    let meter = Meter::of_model(None);
    let gap = estimate("\n\n");
    let mut used = 0.0;
    // Adds a block when it fits, counting the blank line before it.
    let mut fits = |block: String, blocks: &mut Vec<String>| -> bool {
        let next = used + estimate(&block) + if blocks.is_empty() { 0.0 } else { gap };
        if !meter.fits(next, opts.max_tokens) {
            return false;
        }
        used = next;
        blocks.push(block);
        true
    };
    // Tier 1: the active conversations, in full.
    for c in newest_first.iter().filter(|c| active(c)) {
        if !fits(full_block(c, now, zone, opts), &mut blocks) {
            break;
        }
    }
    // Tier 2: today's others, in full when they fit, else their summaries.
    for c in newest_first.iter().filter(|c| !active(c) && age(c) <= 0) {
        if !fits(full_block(c, now, zone, opts), &mut blocks) && !c.summary.trim().is_empty() {
            fits(summary_block(c, now, zone, opts), &mut blocks);
        }
    }
    // Tiers 3 and 4: yesterday's, then 2 to 7 days ago, as summaries.
    for days in [1..=1, 2..=OLDEST_DAY] {
        for c in newest_first
            .iter()
            .filter(|c| !active(c) && days.contains(&age(c)) && !c.summary.trim().is_empty())
        {
            if !fits(summary_block(c, now, zone, opts), &mut blocks) {
                break;
            }
        }
    }
    blocks.join("\n\n")
}

/// A chat's history as a context shows it: which chat, at which moment, in which zone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistoryRequest<'a> {
    pub chat_id: &'a str,
    pub now_ms: i64,
    pub zone: Zone,
    pub opts: HistoryOptions,
    /// A session left out (the one whose messages the model gets anyway).
    pub exclude_session: Option<&'a str>,
    /// Whether the `<thread-status>` block comes first.
    pub status: bool,
}

impl HistoryRequest<'_> {
    /// Whether a message at its moment continues the chat's last conversation, and the
    /// `<thread-status>` block that says so.
    pub fn status_of(&self, store: &MemoryStore) -> Result<(bool, String), MemoryError> {
        let last = store.last_conversation_end(self.chat_id, self.now_ms)?;
        Ok(thread_status(
            last,
            self.now_ms,
            self.opts.continuation_window_ms,
        ))
    }

    /// The chat's earlier conversations by calendar tiers, the excluded session left out;
    /// the empty string when there is nothing to show.
    pub fn context_of(&self, store: &MemoryStore) -> Result<String, MemoryError> {
        let (since, turns_since) = window(self.now_ms, &self.zone, &self.opts);
        let mut convs = store.conversations(self.chat_id, since, self.now_ms, turns_since)?;
        if let Some(skip) = self.exclude_session {
            convs.retain(|c| c.session_id != skip);
        }
        Ok(conversation_context(
            &convs,
            self.now_ms,
            &self.zone,
            &self.opts,
        ))
    }
}

/// The blocks of a chat's history: the `<thread-status>` block (when asked for), then its
/// earlier conversations by calendar tiers in `<conversation_history>` (when its budget is
/// not 0 and there are any).
pub fn history_blocks(
    store: &MemoryStore,
    req: &HistoryRequest<'_>,
) -> Result<Vec<String>, MemoryError> {
    let mut out = Vec::new();
    if req.status {
        out.push(req.status_of(store)?.1);
    }
    if req.opts.max_tokens > 0 {
        let text = req.context_of(store)?;
        if !text.is_empty() {
            out.push(format!(
                "<conversation_history>\n{text}\n</conversation_history>"
            ));
        }
    }
    Ok(out)
}

/// Whether a message at `now` continues the last conversation (`last_ended`: when the
/// chat's newest conversation ended), and the status block saying so.
pub fn thread_status(last_ended: Option<i64>, now: i64, window_ms: i64) -> (bool, String) {
    let continuation = last_ended.is_some_and(|t| t <= now && now - t < window_ms);
    let text = if continuation {
        CONTINUATION_TEXT
    } else {
        NEW_TEXT
    };
    (
        continuation,
        format!("<thread-status>{text}</thread-status>"),
    )
}

#[cfg(test)]
mod tests;
