//! Layered assembly: the context for one user message, from the store, in the seed's
//! order (policy, personality, thread summary, retrieved memories, retrieved messages,
//! recent messages of the same lane, quoted reply context, user message) within a hard
//! token budget that it uses. A caller's system blocks come after the summary, its turn
//! blocks after the memories; everything from the memories on (retrieved for this
//! message) is the turn part, what comes before it the stable part.
//!
//! How the budget is shared. The policy, the personality, the quoted reply and the user
//! message come first; what the budget leaves after them (the rest) goes to the other
//! layers, each up to its share of it, in this order:
//! - the thread summary, up to [`SUMMARY_SHARE`]: a longer one is cut to fit, its oldest
//!   items first;
//! - the memories (the summaries of other lanes the message names, then the records
//!   retrieved for it), up to [`MEMORIES_SHARE`];
//! - the recent messages, the newest of the lane, up to [`RECENT_SHARE`] (the newest
//!   one even past it, when it fits the rest), and never more than the caller's `recent`
//!   cap;
//! - the retrieved messages: everything left, filled with the lane's older messages that
//!   match the query (see [`super::passages`]), best first, each followed by the turns
//!   around it as room allows (a neighbour weighs [`NEIGHBOUR_WEIGHT`] of its hit per step
//!   away, up to [`NEIGHBOURS`] steps);
//! - then, while room is left, the recent messages reach further back (the cap still
//!   holds), and the summary and memories cut before get their room back.
//!
//! So a layer larger than its share is cut, never the reason another disappears, and the
//! context grows with the budget until the material runs out. Retrieved and recent
//! messages are shown in time order under day headings with the date and how long ago it
//! was, each line with its time and who wrote it; no message appears twice.
//!
//! The budget counts the context as rendered: one token bound (see [`crate::tokens`]) for
//! the whole text, checked on the text itself. When the policy and the user message alone
//! exceed it, the quoted reply and then the personality give way, and the result says so
//! (`over_budget`) rather than cutting either. An empty policy or user message has no
//! section (the caller sends it apart).
//!
//! Every layer is an XML-like section whose text is escaped, so chat text cannot close a
//! section or open another. Message text is kept as written except for `<` before a
//! letter, `/`, `!` or `?` and `&` before what reads as an entity; a line break inside
//! a message continues indented, so no text can pose as a heading or another message.

mod host;
mod render;

use host::HostWindow;
use render::{day_heading, message_line, section, Block, Line};
pub use render::{escape, escape_message, push_indented};

use super::db::MemoryError;
use super::history::{history_blocks, HistoryRequest, Zone};
use super::passages::{fallback_terms, query_terms, Hit, Signals};
use super::store::{ChatMessage, MemoryStore, Record, RecordKind};
use super::summary::Summary;
use crate::tokens::{counted, estimate, Meter};
use std::collections::hash_map::Entry;
use std::collections::HashMap;

/// The thread summary's share of the rest of the budget.
pub const SUMMARY_SHARE: f64 = 0.20;
/// The memories' share of the rest of the budget.
pub const MEMORIES_SHARE: f64 = 0.10;
/// The recent messages' share of the rest of the budget.
pub const RECENT_SHARE: f64 = 0.30;
/// Matches of the query considered at most.
pub const HIT_LIMIT: usize = 200;
/// Matches from the session's other lanes considered at most.
pub const STRONG_LIMIT: usize = 20;
/// Turns before and after a match that may come with it.
pub const NEIGHBOURS: usize = 2;
/// The most turns a caller may ask to come with a match on each side.
pub const MAX_NEIGHBOURS: usize = 16;
/// What a neighbour weighs, per step away, against its match.
pub const NEIGHBOUR_WEIGHT: f64 = 0.5;
/// Messages read at a time when the recent messages reach back.
const TAIL_CHUNK: usize = 32;

/// What to assemble for.
#[derive(Debug, Clone, PartialEq)]
pub struct AssembleRequest<'a> {
    pub session_id: &'a str,
    /// The lane of the user's message (see [`super::keys`]).
    pub thread_key: &'a str,
    pub policy: &'a str,
    pub personality: &'a str,
    pub user_message: &'a str,
    /// The text retrieval and lane naming go by, when not the user message (a gateway
    /// that sends the user message itself assembles the other layers around it).
    pub query: Option<&'a str>,
    /// The text of the message the user replied to, when it replied to one.
    pub quoted_reply: Option<&'a str>,
    /// Recent messages of the lane to include at most (`None`: as many as the budget
    /// gives them).
    pub recent: Option<usize>,
    /// Retrieved memory records to include at most.
    pub memories: usize,
    /// The hard budget of the whole context, in tokens as [`counted`] counts them.
    pub budget_tokens: u64,
    /// The moment the relative dates are told from (ms since 1970).
    pub now_ms: i64,
    /// The messages of the conversation the caller sends the model itself, oldest first
    /// (a host's transcript): they are the recent messages, kept from the newest as the
    /// budget allows ([`Assembled::keep_from`]), and the store's own are not read for
    /// that layer. `None`: the recent messages come from the store.
    pub host: Option<&'a [HostMessage<'a>]>,
    /// The most the retrieved messages may take, in tokens (`None`: what the budget
    /// leaves them). A caller whose turn part is sent anew every turn (uncached) keeps
    /// it small.
    pub passages_max_tokens: Option<u64>,
    /// A match is retrieved only when it holds at least this many of the question's
    /// search terms; a question of fewer search terms, or none of whose words is in the
    /// lane, brings nothing back. 0 or 1: any match, the question's common words
    /// standing in when none of its other words is in the lane.
    pub passages_min_terms: usize,
    /// The turns brought with a match on each side, at most (the default is
    /// [`NEIGHBOURS`], the most [`MAX_NEIGHBOURS`]; a caller that sends them anew every
    /// turn may want fewer).
    pub passages_neighbours: usize,
    /// Text that changes every turn (a platform's thread block): placed in the turn part,
    /// before the retrieved messages; a block that does not fit is left out.
    pub turn_blocks: &'a [&'a str],
    /// A chat's history (the thread status, earlier conversations by calendar tiers):
    /// placed in the system part first, before `system_blocks`, and budgeted like them.
    pub history: Option<&'a HistoryRequest<'a>>,
    /// Text that changes seldom (the history of earlier conversations): placed in the
    /// stable part, after the memories; a block that does not fit is left out.
    pub system_blocks: &'a [&'a str],
}

/// A message the caller sends the model itself.
#[derive(Debug, Clone, PartialEq)]
pub struct HostMessage<'a> {
    /// The id it is stored under (empty when it is not stored: no text).
    pub id: &'a str,
    /// Written by the user (a kept window opens on one).
    pub user: bool,
    /// Its central token estimate, as the model receives it.
    pub est: f64,
}

/// Tokens per layer of an assembled context (0 for a layer left out), each counted on its
/// own; `total` is the count of the whole text, the one the budget holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LayerTokens {
    pub policy: u64,
    pub personality: u64,
    pub summary: u64,
    pub memories: u64,
    pub passages: u64,
    pub recent: u64,
    pub quoted: u64,
    pub user: u64,
    /// The turn and system blocks kept.
    pub blocks: u64,
    /// The caller's messages kept (by their estimates).
    pub host: u64,
    pub total: u64,
}

/// An assembled context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assembled {
    pub text: String,
    pub tokens: LayerTokens,
    /// Memories, retrieved messages and recent messages included.
    pub memories_included: usize,
    pub passages_included: usize,
    pub recent_included: usize,
    /// The policy and the user message alone exceed the budget.
    pub over_budget: bool,
    /// The part that changes seldom (policy, personality, summary, system blocks), for a
    /// cached prefix.
    pub system: String,
    /// The part that changes every turn (memories, turn blocks, retrieved and recent
    /// messages, quoted reply, user message). `text` is `system` then `turn`.
    pub turn: String,
    /// With caller's messages: the first one kept (all before it are left out).
    pub keep_from: usize,
    /// With caller's messages: how many of the first ones the lane's summary stands for
    /// (never kept); `keep_from` past this means the budget left some out.
    pub summary_covers: usize,
    /// Turn and system blocks left out for the budget.
    pub turn_blocks_left_out: usize,
    pub system_blocks_left_out: usize,
}

/// The estimate allowance of a budget: the most a text's [`estimate`] may be for
/// [`counted`] to stay within `budget`.
fn allowance(budget: u64) -> f64 {
    Meter::of_model(None).allowance(budget)
}

/// A match of the query, and its message once read.
struct Found {
    hit: Hit,
    lane: String,
    message: Option<ChatMessage>,
}

/// A memory item: a named lane's summary or a retrieved record, rendered.
struct Item {
    text: String,
    est: f64,
}

/// Everything an assembly chose, and how it renders.
struct Plan<'r> {
    req: &'r AssembleRequest<'r>,
    zone: Zone,
    now_day: i64,
    policy: String,
    personality: Option<String>,
    quoted: Option<String>,
    user: String,
    summary_body: Option<String>,
    /// The summary section as cut, and how many items it keeps.
    summary: Option<(String, usize)>,
    memories: Vec<Item>,
    memories_kept: usize,
    passages: Block,
    /// Passage seqs in the order they were chosen (the last is the first to go).
    passage_order: Vec<i64>,
    recent: Block,
    host: Option<HostWindow<'r>>,
    turn_blocks: Vec<String>,
    system_blocks: Vec<String>,
}

impl Plan<'_> {
    fn line(&self, m: ChatMessage) -> Line {
        let text = message_line(&m, &self.zone);
        let est = estimate(&text);
        let day = self.zone.day(m.ts_ms);
        Line {
            message: m,
            text,
            est,
            day,
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

    /// The stable part, the turn part, and their tokens (with the caller's messages).
    fn render(&self) -> (String, String, LayerTokens) {
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
        let meter = Meter::of_model(None);
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
    fn give_way(&mut self, heading_est: f64, frame_est: f64) -> bool {
        if let Some(seq) = self.passage_order.pop() {
            self.passages.remove(seq, heading_est, frame_est);
            return true;
        }
        if self.memories_kept > 0 {
            self.memories_kept -= 1;
            return true;
        }
        if let Some(&oldest) = self.recent.lines.keys().next() {
            self.recent.remove(oldest, heading_est, frame_est);
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
    Summary::parse(body).map_or_else(|| body.lines().count(), |s| s.items())
}

/// The section of a summary body cut to at most `items` items (oldest first out; for
/// text of another structure, its last lines), with the items it keeps; `None` when
/// nothing is left.
fn cut_summary(body: &str, items: usize) -> Option<(String, usize)> {
    if items == 0 {
        return None;
    }
    if items >= summary_items(body) {
        // Whole: the summary as written.
        return Some((section("thread_summary", body), summary_items(body)));
    }
    match Summary::parse(body) {
        Some(mut s) => {
            while s.items() > items {
                s.drop_oldest();
            }
            let kept = s.items();
            Some((section("thread_summary", &s.render()), kept))
        }
        None => {
            let lines: Vec<&str> = body.lines().collect();
            let from = lines.len().saturating_sub(items);
            Some((
                section("thread_summary", &lines[from..].join("\n")),
                lines.len() - from,
            ))
        }
    }
}

/// The largest cut of the summary (the most items) within `max_est`.
fn fit_summary(body: &str, max_est: f64) -> Option<(String, usize)> {
    let all = summary_items(body);
    if let Some(full) = cut_summary(body, all) {
        if estimate(&full.0) <= max_est {
            return Some(full);
        }
    }
    // Binary search on the number of items kept.
    let (mut lo, mut hi) = (0usize, all);
    let mut best = None;
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        match cut_summary(body, mid) {
            Some(s) if estimate(&s.0) <= max_est => {
                best = Some(s);
                lo = mid;
            }
            _ => hi = mid - 1,
        }
    }
    best
}

/// Assembles the context for `req` from `store`.
pub fn assemble(store: &MemoryStore, req: &AssembleRequest<'_>) -> Result<Assembled, MemoryError> {
    let optional = |tag: &str, body: &str| {
        if body.is_empty() {
            String::new()
        } else {
            section(tag, body)
        }
    };
    let zone = Zone::utc();
    let query = req.query.unwrap_or(req.user_message);
    // The chat's history first, then the caller's blocks.
    let mut system_given = match req.history {
        Some(h) => blocks(&history_blocks(store, h)?),
        None => Vec::new(),
    };
    system_given.extend(blocks(req.system_blocks));
    let turn_given = blocks(req.turn_blocks);
    let (turn_count, system_count) = (turn_given.len(), system_given.len());
    let mut plan = Plan {
        req,
        now_day: zone.day(req.now_ms),
        zone,
        policy: optional("policy", req.policy),
        personality: (!req.personality.is_empty()).then(|| section("personality", req.personality)),
        quoted: req.quoted_reply.map(|q| section("quoted_reply_context", q)),
        user: optional("user_message", req.user_message),
        summary_body: None,
        summary: None,
        memories: Vec::new(),
        memories_kept: 0,
        passages: Block::default(),
        passage_order: Vec::new(),
        recent: Block::default(),
        host: None,
        turn_blocks: turn_given,
        system_blocks: system_given,
    };
    let summary_record = store.record(req.session_id, RecordKind::ThreadSummary, req.thread_key)?;
    if let Some(messages) = req.host {
        let covered_to = summary_record
            .as_ref()
            .and_then(|r| r.message_range.as_ref())
            .map(|(_, to)| to.as_str());
        plan.host = Some(HostWindow::new(messages, covered_to));
    }
    let cap = allowance(req.budget_tokens);
    let heading_est = estimate(&day_heading(plan.now_day, plan.now_day, None));
    let frame_est = estimate("<retrieved_messages>\n</retrieved_messages>\n");

    // The fixed layers; the blocks (the last first), the quoted reply, then the
    // personality give way when they alone do not fit.
    let fixed = |p: &Plan<'_>| {
        estimate(&p.policy)
            + estimate(&p.user)
            + p.quoted.as_deref().map_or(0.0, estimate)
            + p.personality.as_deref().map_or(0.0, estimate)
            + p.turn_blocks.iter().map(|b| estimate(b)).sum::<f64>()
            + p.system_blocks.iter().map(|b| estimate(b)).sum::<f64>()
            + p.host.as_ref().map_or(0.0, |h| h.est)
    };
    while fixed(&plan) > cap
        && (plan.turn_blocks.pop().is_some() || plan.system_blocks.pop().is_some())
    {}
    if fixed(&plan) > cap {
        plan.quoted = None;
    }
    if fixed(&plan) > cap {
        plan.personality = None;
    }
    let rest = (cap - fixed(&plan)).max(0.0);
    let passages_cap = req.passages_max_tokens.map_or(f64::INFINITY, allowance);
    let mut used = 0.0;

    // The thread summary, cut to its share.
    plan.summary_body = summary_record.map(|r| r.body);
    if let Some(body) = &plan.summary_body {
        plan.summary = fit_summary(body, rest * SUMMARY_SHARE);
        used += plan.summary.as_ref().map_or(0.0, |s| estimate(&s.0));
    }

    // Memories: the summaries of other lanes the message names, then the records.
    let named = store.named_lanes(req.session_id, query, req.thread_key)?;
    for lane in &named {
        if let Some(r) = store.record(req.session_id, RecordKind::ThreadSummary, lane)? {
            let text = format!(
                "- summary of {}:\n{}\n",
                escape(lane),
                escape(r.body.trim_end())
            );
            let est = estimate(&text);
            plan.memories.push(Item { text, est });
        }
    }
    let records = store.search(
        req.session_id,
        query,
        req.thread_key,
        req.memories,
        req.budget_tokens,
    )?;
    let record_terms = query_terms(query);
    for r in records
        .into_iter()
        .filter(|r| shows_as_memory(r, req.thread_key, &record_terms, req.passages_min_terms))
    {
        let text = format!("- {}\n", escape(&r.body));
        let est = estimate(&text);
        plan.memories.push(Item { text, est });
    }
    let memories_frame = estimate("<memories>\n</memories>\n");
    let fill_memories = |plan: &mut Plan<'_>, room: f64| -> f64 {
        let start = memories_taken(plan, memories_frame);
        let mut spent = start;
        while plan.memories_kept < plan.memories.len() {
            let mut add = plan.memories[plan.memories_kept].est;
            if plan.memories_kept == 0 {
                add += memories_frame;
            }
            if spent + add > room {
                break;
            }
            spent += add;
            plan.memories_kept += 1;
        }
        spent - start
    };
    used += fill_memories(&mut plan, rest * MEMORIES_SHARE);

    // The recent messages: the newest of the lane, up to their share and the cap.
    let recent_cap = req.recent.unwrap_or(usize::MAX);
    let mut tail_from = i64::MAX; // the oldest seq read for the tail
    let mut tail_done = false;
    let mut pending: Vec<ChatMessage> = Vec::new(); // read, not yet placed (newest first)
    let read_older = |store: &MemoryStore,
                      pending: &mut Vec<ChatMessage>,
                      from: &mut i64,
                      done: &mut bool|
     -> Result<(), MemoryError> {
        if *done || !pending.is_empty() {
            return Ok(());
        }
        let chunk =
            store.lane_neighbours(req.session_id, req.thread_key, *from, false, TAIL_CHUNK)?;
        if chunk.len() < TAIL_CHUNK {
            *done = true;
        }
        if let Some(last) = chunk.last() {
            *from = last.seq;
        }
        pending.extend(chunk.into_iter().rev());
        Ok(())
    };
    let recent_room = rest * RECENT_SHARE;
    if let Some(host) = plan.host.as_mut() {
        // The caller's messages: whole turns, from the newest, up to the share (the
        // current turn is counted with the fixed layers).
        let mut extended = 0.0;
        while let Some(est) = host.extend(recent_room - extended) {
            extended += est;
        }
        used += extended;
        tail_done = true;
    }
    while plan.host.is_none() && plan.recent.lines.len() < recent_cap {
        read_older(store, &mut pending, &mut tail_from, &mut tail_done)?;
        let Some(m) = pending.pop() else { break };
        let line = plan.line(m);
        let cost = plan.recent.cost(&line, heading_est, frame_est);
        let first = plan.recent.lines.is_empty();
        if plan.recent.est + cost > recent_room && !(first && used + cost <= rest) {
            pending.push(line.message);
            break;
        }
        plan.recent.add(line, cost);
    }
    used += plan.recent.est;
    // Passages stay older than the oldest recent message.
    let passages_below = match &plan.host {
        Some(host) => {
            let ids: Vec<&str> = host.ids().into_iter().collect();
            store
                .oldest_seq_of(req.session_id, &ids)?
                .unwrap_or(i64::MAX)
        }
        None => plan.recent.lines.keys().next().copied().unwrap_or(i64::MAX),
    };

    // Retrieved messages: matches and their neighbours, best first, in what is left.
    let terms = query_terms(query);
    let signals = Signals::of(query, req.now_ms);
    let mut found: Vec<Found> = Vec::new();
    // A caller that asked for clear matches gets none for a question of fewer words
    // than that ("hello", "thanks"): any message holding them would do.
    let clear_enough = req.passages_min_terms <= 1 || terms.len() >= req.passages_min_terms;
    if !terms.is_empty() && clear_enough {
        // When the recent messages hold the whole lane, nothing older is left to match.
        let lane_shown = plan.host.is_none() && tail_done && pending.is_empty();
        let (mut own, weights) = if lane_shown {
            (Vec::new(), vec![0.0; terms.len()])
        } else {
            store.ranked_lane_hits(
                req.session_id,
                req.thread_key,
                &terms,
                passages_below,
                HIT_LIMIT,
                &signals,
            )?
        };
        if !lane_shown && req.passages_min_terms <= 1 && weights.iter().all(|&w| w == 0.0) {
            // None of its words is in the lane: the question's common words are all
            // there is to go by (unless only clear matches were asked for).
            let stops = fallback_terms(query);
            own = store
                .ranked_lane_hits(
                    req.session_id,
                    req.thread_key,
                    &stops,
                    passages_below,
                    HIT_LIMIT,
                    &signals,
                )?
                .0;
        }
        // A strong match elsewhere holds every term: it ranks as one here would.
        #[allow(clippy::cast_precision_loss)] // a handful of terms
        let strong: f64 = weights.iter().sum::<f64>().max(terms.len() as f64);
        for m in
            store.strong_hits_elsewhere(req.session_id, req.thread_key, &terms, STRONG_LIMIT)?
        {
            if named.contains(&m.thread_key) {
                continue; // searched below as a named lane
            }
            found.push(Found {
                hit: Hit {
                    seq: m.seq,
                    score: strong,
                    terms: terms.len(),
                },
                lane: m.thread_key.clone(),
                message: Some(m),
            });
        }
        let min_terms = req.passages_min_terms;
        own.retain(|h| h.terms >= min_terms);
        found.extend(own.into_iter().map(|hit| Found {
            hit,
            lane: req.thread_key.to_string(),
            message: None,
        }));
        for lane in &named {
            let (hits, _) = store.ranked_lane_hits(
                req.session_id,
                lane,
                &terms,
                i64::MAX,
                HIT_LIMIT,
                &signals,
            )?;
            found.extend(
                hits.into_iter()
                    .filter(|h| h.terms >= min_terms)
                    .map(|hit| Found {
                        hit,
                        lane: lane.clone(),
                        message: None,
                    }),
            );
        }
    }
    // Candidates: (priority, rank, step); step 0 is the match, -n / +n its neighbours.
    let mut candidates: Vec<(f64, usize, i32)> =
        Vec::with_capacity(found.len() * (2 * req.passages_neighbours.min(MAX_NEIGHBOURS) + 1));
    let steps = i32::try_from(req.passages_neighbours.min(MAX_NEIGHBOURS)).unwrap_or(0);
    for (rank, f) in found.iter().enumerate() {
        let mut w = 1.0;
        for step in 0..=steps {
            if step == 0 {
                candidates.push((f.hit.score, rank, 0));
            } else {
                candidates.push((f.hit.score * w, rank, -step));
                candidates.push((f.hit.score * w, rank, step));
            }
            w *= NEIGHBOUR_WEIGHT;
        }
    }
    candidates.sort_by(|a, b| {
        b.0.total_cmp(&a.0)
            .then(a.1.cmp(&b.1))
            .then(a.2.abs().cmp(&b.2.abs()))
            .then(a.2.cmp(&b.2))
    });
    let mut around: HashMap<usize, (Vec<ChatMessage>, Vec<ChatMessage>)> = HashMap::new();
    let min_line = estimate("00:00 user: ok\n");
    for (_, rank, step) in candidates {
        if rest - used < min_line {
            break;
        }
        let f = &mut found[rank];
        if f.message.is_none() {
            f.message = store
                .message_in(req.session_id, f.hit.seq)?
                .filter(|m| m.thread_key == f.lane);
        }
        let Some(hit) = f.message.as_ref() else {
            continue;
        };
        let m = if step == 0 {
            hit.clone()
        } else {
            let (before, after) = match around.entry(rank) {
                Entry::Occupied(e) => e.into_mut(),
                Entry::Vacant(v) => v.insert(neighbours(store, req, hit, passages_below)?),
            };
            let side = if step < 0 { before } else { after };
            match side.get(usize::try_from(step.unsigned_abs()).unwrap_or(usize::MAX) - 1) {
                Some(m) => m.clone(),
                None => continue,
            }
        };
        if plan.recent.lines.contains_key(&m.seq) || plan.passages.lines.contains_key(&m.seq) {
            continue;
        }
        let line = plan.line(m);
        let cost = plan.passages.cost(&line, heading_est, frame_est);
        if used + cost > rest || plan.passages.est + cost > passages_cap {
            continue;
        }
        used += cost;
        plan.passage_order.push(line.message.seq);
        plan.passages.add(line, cost);
    }

    // Room left: the caller's messages reach further back, whole turns (a retrieved
    // message they reach is not shown twice: it gives its room back).
    if let Some(host) = plan.host.as_mut() {
        loop {
            let mut grew = false;
            while let Some(est) = host.extend(rest - used) {
                used += est;
                grew = true;
            }
            if !grew {
                break;
            }
            let kept = host.ids();
            let twice: Vec<i64> = plan
                .passages
                .lines
                .values()
                .filter(|l| kept.contains(l.message.message_id.as_str()))
                .map(|l| l.message.seq)
                .collect();
            if twice.is_empty() {
                break;
            }
            for seq in twice {
                let before = plan.passages.est;
                plan.passages.remove(seq, heading_est, frame_est);
                plan.passage_order.retain(|&s| s != seq);
                used -= before - plan.passages.est;
            }
        }
    }
    // Room left: the recent messages reach further back (a retrieved message they reach
    // moves into them), then the summary and the memories get back what was cut.
    while plan.host.is_none() && plan.recent.lines.len() < recent_cap {
        read_older(store, &mut pending, &mut tail_from, &mut tail_done)?;
        let Some(m) = pending.pop() else { break };
        if let Some(line) = plan.passages.remove(m.seq, heading_est, frame_est) {
            plan.passage_order.retain(|&s| s != m.seq);
            used -= line.est;
        }
        let line = plan.line(m);
        let cost = plan.recent.cost(&line, heading_est, frame_est);
        if used + cost > rest {
            break;
        }
        used += cost;
        plan.recent.add(line, cost);
    }
    if let Some(body) = plan.summary_body.clone() {
        let now = plan.summary.as_ref().map_or(0.0, |s| estimate(&s.0));
        if let Some(s) = fit_summary(&body, now + (rest - used).max(0.0)) {
            used += estimate(&s.0) - now;
            plan.summary = Some(s);
        }
    }
    let room = (rest - used).max(0.0) + memories_taken(&plan, memories_frame);
    fill_memories(&mut plan, room);

    // The budget holds on the text itself.
    let (mut system, mut turn, mut tokens) = plan.render();
    while tokens.total > req.budget_tokens && plan.give_way(heading_est, frame_est) {
        (system, turn, tokens) = plan.render();
    }
    Ok(Assembled {
        over_budget: tokens.total > req.budget_tokens,
        text: format!("{system}{turn}"),
        system,
        turn,
        keep_from: plan.host.as_ref().map_or(0, |h| h.from),
        summary_covers: plan.host.as_ref().map_or(0, |h| h.floor),
        turn_blocks_left_out: turn_count - plan.turn_blocks.len(),
        system_blocks_left_out: system_count - plan.system_blocks.len(),
        tokens,
        memories_included: plan.memories_kept,
        passages_included: plan.passages.lines.len(),
        recent_included: plan.recent.lines.len(),
    })
}

/// The caller's blocks that are not empty, each ending in one line break.
fn blocks(given: &[impl AsRef<str>]) -> Vec<String> {
    given
        .iter()
        .map(AsRef::as_ref)
        .filter(|b| !b.trim().is_empty())
        .map(|b| format!("{}\n", b.trim_end()))
        .collect()
}

/// The turns before and after `hit` in its lane, nearest first ([`NEIGHBOURS`] each
/// side), the message it replies to first of those before; in the message's own lane,
/// only those older than the recent messages.
fn neighbours(
    store: &MemoryStore,
    req: &AssembleRequest<'_>,
    hit: &ChatMessage,
    passages_below: i64,
) -> Result<(Vec<ChatMessage>, Vec<ChatMessage>), MemoryError> {
    let lane = &hit.thread_key;
    let n = req.passages_neighbours.min(MAX_NEIGHBOURS);
    let mut before = store.lane_neighbours(req.session_id, lane, hit.seq, false, n)?;
    let mut after = store.lane_neighbours(req.session_id, lane, hit.seq, true, n)?;
    if lane == req.thread_key {
        after.retain(|m| m.seq < passages_below);
    }
    // A reply comes with the message it answers, however long before (or in whichever
    // lane) that was written: it is the nearest turn before it.
    if let Some(parent) = hit.reply_to.as_deref() {
        if let Some(p) = store.message_by_id(req.session_id, parent)? {
            if p.seq < hit.seq && before.iter().all(|m| m.seq != p.seq) {
                before.insert(0, p);
                before.truncate(n.max(1));
            }
        }
    }
    Ok((before, after))
}

/// Whether a record found for the message is one of its memories: not the lane's own
/// summary (a layer of its own); not what a message of this lane stated (a compaction
/// writes those: the message itself is retrieved word for word, with its turns); and, for
/// a caller asking for clear matches (`min_terms` 2 or more), only a record holding that
/// many of the question's search terms.
fn shows_as_memory(r: &Record, lane: &str, terms: &[String], min_terms: usize) -> bool {
    if r.kind == RecordKind::ThreadSummary {
        return false;
    }
    if r.thread_key == lane && r.message_range.is_some() {
        return false;
    }
    if min_terms <= 1 {
        return true;
    }
    let body = r.body.to_lowercase();
    terms.iter().filter(|t| body.contains(t.as_str())).count() >= min_terms
}

/// The estimate the kept memories take, their frame included.
fn memories_taken(plan: &Plan<'_>, frame: f64) -> f64 {
    if plan.memories_kept == 0 {
        return 0.0;
    }
    frame
        + plan.memories[..plan.memories_kept]
            .iter()
            .map(|m| m.est)
            .sum::<f64>()
}

#[cfg(test)]
mod tests;
