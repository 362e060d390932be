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
//! - tier 4: those of 2 calendar days ago up to [`OLDEST_DAY`] (7) days ago, as summaries.
//!   The 7 days are rolling: a conversation is in while it ended at most 7 × 24 hours
//!   before `now`, not for the whole seventh calendar day.
//!
//! Within a tier the newest comes first. An active conversation too big for the budget is
//! cut to its newest turns, after a line saying how many earlier ones were left out; any
//! other block that does not fit the budget is left out (tier 3 and 4 stop at the first).
//! The budget counts everything returned, the blank lines between blocks included. A
//! conversation with no text turns (all tool calls) shows no block. Message text is
//! escaped, so a message holding `</conversation>` cannot close its block, and a message's
//! continuation lines are indented, so no line of text can pose as a turn.

use crate::core::text::escape::{data_text, escape, push_indented};
use crate::core::time::civil_from_days;
use crate::core::tokens::{by_class, estimate, Meter};

/// A conversation is the active one while it ended less than this long ago (30 minutes).
pub const ACTIVE_WINDOW_MS: i64 = 30 * 60_000;
/// A new message within this long of the last conversation's end continues it (30 minutes).
pub const CONTINUATION_WINDOW_MS: i64 = 30 * 60_000;
/// The default budget of the history, in estimated tokens.
pub const DEFAULT_MAX_TOKENS: u64 = 30_000;
/// The oldest calendar day (days before today) whose conversations are summarized; within
/// it, only those that ended at most [`OLDEST_MS`] before now.
pub const OLDEST_DAY: i64 = 7;
/// The rolling limit of the history: conversations that ended longer ago than this (7 days)
/// are not shown.
pub const OLDEST_MS: i64 = OLDEST_DAY * 86_400_000;

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

    /// The offset from UTC in force at `ts`, in milliseconds.
    pub fn offset_ms(&self, ts: i64) -> i64 {
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

/// The opening tag of a conversation's block.
fn block_open(c: &Conversation, now: i64, zone: &Zone, opts: &HistoryOptions) -> String {
    format!(
        "<conversation timestamp=\"{}\" relative=\"{}\">\n",
        zone.iso(c.started_at_ms),
        relative_label(c.ended_at_ms, now, zone, opts.active_window_ms)
    )
}

const BLOCK_CLOSE: &str = "</conversation>";

/// One turn as its line: `[who HH:MM] text`, escaped, each further line of the text
/// indented (any line break: `\n`, `\r\n`, `\r`, U+2028, U+2029), ending in a newline.
fn turn_line(t: &Turn, zone: &Zone) -> String {
    let who = if t.human { "human" } else { "you" };
    let mut out = match t.ts_ms {
        Some(ts) => format!("[{who} {}] ", zone.clock(ts)),
        None => format!("[{who}] "),
    };
    push_indented(&mut out, &escape(t.text.trim_end()));
    out.push('\n');
    out
}

/// The line standing for `n` earlier turns left out of a cut conversation.
fn omitted_line(n: usize) -> String {
    let s = if n == 1 { "" } else { "s" };
    format!("[{n} earlier turn{s} of this conversation left out for space]\n")
}

/// A conversation in full; `None` when it has no text turns.
fn full_block(c: &Conversation, now: i64, zone: &Zone, opts: &HistoryOptions) -> Option<String> {
    if c.turns.is_empty() {
        return None;
    }
    let mut out = block_open(c, now, zone, opts);
    for t in &c.turns {
        out.push_str(&turn_line(t, zone));
    }
    out.push_str(BLOCK_CLOSE);
    Some(out)
}

/// A conversation cut to the newest turns whose block `fits` (given the block's text),
/// after a line counting the earlier ones. When not even the newest turn fits whole, its
/// text is cut at the end, marked ` […]`. `None` when nothing of it fits.
fn cut_block(
    c: &Conversation,
    now: i64,
    zone: &Zone,
    opts: &HistoryOptions,
    fits: impl Fn(&str) -> bool,
) -> Option<String> {
    let newest = c.turns.last()?;
    let open = block_open(c, now, zone, opts);
    let lines: Vec<String> = c.turns.iter().map(|t| turn_line(t, zone)).collect();
    // The block showing `shown`, after the line counting the `omitted` turns before them.
    let block = |omitted: usize, shown: &[String]| {
        let mut out = open.clone();
        if omitted > 0 {
            out.push_str(&omitted_line(omitted));
        }
        shown.iter().for_each(|l| out.push_str(l));
        out.push_str(BLOCK_CLOSE);
        out
    };
    // Fewer turns never cost more: the smallest start that fits, by bisection.
    let last = lines.len() - 1;
    if fits(&block(last, &lines[last..])) {
        let (mut lo, mut hi) = (0, last);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if fits(&block(mid, &lines[mid..])) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        return Some(block(lo, &lines[lo..]));
    }
    // The newest turn alone is too big: its text cut to the longest prefix that fits.
    let chars: Vec<char> = newest.text.chars().collect();
    let with_prefix = |n: usize| {
        let mut t = newest.clone();
        t.text = chars[..n].iter().collect::<String>() + " […]";
        block(last, &[turn_line(&t, zone)])
    };
    if !fits(&with_prefix(0)) {
        return None;
    }
    let (mut lo, mut hi) = (0, chars.len());
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if fits(&with_prefix(mid)) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    Some(with_prefix(lo))
}

fn summary_block(c: &Conversation, now: i64, zone: &Zone, opts: &HistoryOptions) -> String {
    format!(
        "<conversation-summary timestamp=\"{}\" relative=\"{}\">\n{}\n</conversation-summary>",
        zone.iso(c.started_at_ms),
        relative_label(c.ended_at_ms, now, zone, opts.active_window_ms),
        data_text(c.summary.trim())
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
    let built = by_class(
        None,
        |meter| {
            Ok::<_, std::convert::Infallible>(context_with(conversations, now, zone, opts, meter))
        },
        String::as_str,
    );
    match built {
        Ok(text) => text,
        Err(never) => match never {},
    }
}

/// [`conversation_context`] counted by `meter`.
fn context_with(
    conversations: &[Conversation],
    now: i64,
    zone: &Zone,
    opts: &HistoryOptions,
    meter: Meter,
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

    let mut blocks = Blocks::new(opts.max_tokens, meter);
    // Tier 1: the active conversations, in full; the first too big for what is left is cut
    // to its newest turns, and ends the tier.
    for c in newest_first.iter().filter(|c| active(c)) {
        let Some(full) = full_block(c, now, zone, opts) else {
            continue;
        };
        if !blocks.add(full) {
            if let Some(cut) = cut_block(c, now, zone, opts, |b| blocks.would_fit(b)) {
                blocks.add(cut);
            }
            break;
        }
    }
    // Tier 2: today's others, in full when they fit, else their summaries.
    for c in newest_first.iter().filter(|c| !active(c) && age(c) <= 0) {
        let shown = full_block(c, now, zone, opts).is_some_and(|b| blocks.add(b));
        if !shown && !c.summary.trim().is_empty() {
            blocks.add(summary_block(c, now, zone, opts));
        }
    }
    // Tiers 3 and 4: yesterday's, then 2 to 7 days ago (rolling), as summaries.
    let recent_enough = |c: &Conversation| c.ended_at_ms >= now.saturating_sub(OLDEST_MS);
    for days in [1..=1, 2..=OLDEST_DAY] {
        for c in newest_first.iter().filter(|c| {
            !active(c) && days.contains(&age(c)) && recent_enough(c) && !c.summary.trim().is_empty()
        }) {
            if !blocks.add(summary_block(c, now, zone, opts)) {
                break;
            }
        }
    }
    blocks.text.join("\n\n")
}

/// Blocks within one budget: their estimates add up (they meet at blank lines), under one
/// bound for the whole.
struct Blocks {
    text: Vec<String>,
    used: f64,
    meter: Meter,
    max_tokens: u64,
}

impl Blocks {
    fn new(max_tokens: u64, meter: Meter) -> Self {
        Blocks {
            text: Vec::new(),
            used: 0.0,
            meter,
            max_tokens,
        }
    }

    /// The estimate of everything with `block` added, the blank line before it counted.
    fn with(&self, block: &str) -> f64 {
        let gap = if self.text.is_empty() {
            0.0
        } else {
            estimate("\n\n")
        };
        self.used + estimate(block) + gap
    }

    fn would_fit(&self, block: &str) -> bool {
        self.meter.fits(self.with(block), self.max_tokens)
    }

    /// Adds `block` when it fits; whether it did.
    fn add(&mut self, block: String) -> bool {
        if !self.would_fit(&block) {
            return false;
        }
        self.used = self.with(&block);
        self.text.push(block);
        true
    }
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

/// Turns as a conversation stores them: JSON, `h` (a person's), `t` (the text), `ts`.
pub fn turns_json(turns: &[Turn]) -> String {
    let turns: Vec<serde_json::Value> = turns
        .iter()
        .map(|t| serde_json::json!({ "h": t.human, "t": t.text, "ts": t.ts_ms }))
        .collect();
    serde_json::Value::Array(turns).to_string()
}

/// Turns as [`turns_json`] stored them.
pub fn stored_turns(json: &str) -> Vec<Turn> {
    let v: serde_json::Value = serde_json::from_str(json).unwrap_or_default();
    v.as_array()
        .map(|turns| {
            turns
                .iter()
                .map(|t| Turn {
                    human: t["h"].as_bool().unwrap_or(false),
                    text: t["t"].as_str().unwrap_or_default().to_string(),
                    ts_ms: t["ts"].as_i64(),
                })
                .collect()
        })
        .unwrap_or_default()
}
