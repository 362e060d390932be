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
//! - the recent messages, the newest of the lane, up to [`RECENT_SHARE`] (a newest one
//!   longer than that waits for what retrieval leaves), and never more than the caller's
//!   `recent` cap;
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
//! The budget counts the context as rendered: one token bound (see [`crate::core::tokens`]) for
//! the whole text, checked on the text itself. When the policy and the user message alone
//! exceed it, the quoted reply and then the personality give way, and the result says so
//! (`over_budget`) rather than cutting either. An empty policy or user message has no
//! section (the caller sends it apart).
//!
//! Shaped for a prompt cache ([`AssembleRequest::verbatim_share`]): with a caller's own
//! messages, the context is what they are while they fit the share (all kept, verbatim, the
//! summary of what they show left out, nothing retrieved from a lane whole in view); past
//! it, the messages after the summary are kept whole before anything is retrieved, the
//! summary has a fixed share, and a fold point is named once they pass [`FOLD_AT_SHARE`]
//! of the budget, so what a cache reuses changes in large steps, not every turn.
//!
//! Every layer is an XML-like section whose text is escaped, so chat text cannot close a
//! section or open another. Message text is kept as written except for `<` before a
//! letter, `/`, `!` or `?` and `&` before what reads as an entity; a line break inside
//! a message continues indented, so no text can pose as a heading or another message.

mod fill;
mod host;
mod ladder;
mod plan;
mod render;
mod retrieve;
mod tail;

use fill::Assembly;

use super::db::MemoryError;
use super::history::HistoryRequest;
use super::message::Role;
use super::passages::query_terms;
use super::store::{MemoryStore, Record};
use crate::core::tokens::{by_class, Meter};

/// The thread summary's share of the rest of the budget.
pub const SUMMARY_SHARE: f64 = 0.20;
/// The memories' share of the rest of the budget.
pub const MEMORIES_SHARE: f64 = 0.10;
/// The recent messages' share of the rest of the budget.
pub const RECENT_SHARE: f64 = 0.30;
/// Shaped for a prompt cache (`verbatim_share`), the retrieved messages are sent anew every
/// turn: a match or neighbour weighing less than this share of the best one is not offered,
/// so the retrieved part is sized by how many weigh near the best, not by the room left.
pub const RETRIEVED_MIN_SHARE: f64 = 0.25;
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
/// Past the verbatim share, the fold mark is this share of what the verbatim share of the
/// budget's allowance (less the current turn) leaves after the policy and the personality:
/// the kept window (the caller's messages from
/// a step line on) never holds more of the messages before the current turn than the mark,
/// so the summary, the memories and the retrieved messages keep the rest of the share.
pub const FOLD_AT_SHARE: f64 = 0.5;
/// The window's step, this part of the fold mark: the window opens at a step line (a whole
/// number of steps into the caller's messages, at a user turn) and grows append-only until
/// the messages pass the next line, holding between one and two steps; a fold takes what
/// lies before the line. The same messages at the same budget give the same window, however
/// the lane's folds happened.
pub const FOLD_KEEPS: f64 = 0.5;
/// The window's step is a whole number of these estimated tokens: a step that moved with
/// each turn's size would move the step lines, and the window's start, with it.
pub const STEP_GRAIN: f64 = 64.0;
/// A fold takes at least this many user turns into the lane's summary: the summary, in the
/// cached system part, is rewritten in large, rare steps. Where a step holds fewer turns
/// than that (long turns, a small window), the window moves on at its step lines meanwhile,
/// what it no longer holds is retrieved when a question needs it, and the summary catches
/// up once this many turns wait outside it.
pub const FOLD_MIN_TURNS: usize = 10;

/// What to assemble for.
#[derive(Debug, Clone, PartialEq)]
pub struct AssembleRequest<'a> {
    pub session_id: &'a str,
    /// The lane of the user's message (see [`crate::core::keys`]).
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
    /// A match is retrieved only when the question's search terms it holds weigh at least
    /// this much together, each its idf in the lane (see
    /// [`idf`](crate::core::search::bm25::idf)): a bar a lone common word ("today",
    /// "good") does not clear and a lone rare one does. 0: no bar.
    pub passages_min_weight: f64,
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
    /// With the caller's messages (`host`), a context shaped for a prompt cache:
    /// - while all of them and the fixed layers fit this share of the budget, all are
    ///   kept, verbatim, and the lane's summary is left out when it stands only for
    ///   messages among them (nothing older of the lane is left to retrieve either);
    /// - past it, the messages after the lane's summary are kept whole while the budget
    ///   holds them (before anything is retrieved), the summary gets a fixed share, and
    ///   once they take more than [`FOLD_AT_SHARE`] of the budget,
    ///   [`Assembled::fold_through`] names the message a fold should end at, so the
    ///   window changes in large steps and the summary only with them.
    ///
    /// `None`: the caller's messages are kept from the newest as the budget shares it.
    pub verbatim_share: Option<f64>,
    /// The words of the names the user and the assistant go by, lower-cased, each with
    /// its role: a question naming one ranks that role's turns first (see
    /// [`MemoryStore::recall`]). Empty: the names the conversation makes clear.
    pub speakers: &'a [(String, Role)],
    /// The question's vector by the host's embedder, when it has one and gave the
    /// messages theirs ([`MemoryStore::set_vectors`]): the messages nearest it are
    /// retrieved with those its words find, the two rankings fused by reciprocal rank
    /// ([`fuse`](crate::memory::passages::fuse)), by `nearest_weight`. `None`: the
    /// words alone.
    pub query_vector: Option<&'a [f32]>,
    /// What the nearest by the question's vector weigh against the words' matches in the
    /// fusion ([`fuse`](crate::memory::passages::fuse)): 1, equal (the default); 0, the
    /// words' matches first and the nearest in the room they leave.
    pub nearest_weight: f64,
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
    /// With `verbatim_share`: every caller's message was kept, verbatim.
    pub verbatim: bool,
    /// With `verbatim_share`, past it: the stored id of the last caller's message a fold
    /// should take into the summary, when the kept window passed its fold mark or the
    /// budget left some of it out (`None`: nothing to fold).
    pub fold_through: Option<String>,
}

/// Assembles the context for `req` from `store`, counted by the calibration's meter;
/// where the calibration knows the class of the text assembled, assembled again with that
/// class's own meter, kept when its text is still of that class (see
/// [`crate::core::tokens::Meter::of_text`]).
pub fn assemble(store: &MemoryStore, req: &AssembleRequest<'_>) -> Result<Assembled, MemoryError> {
    by_class(None, |meter| assemble_with(store, req, meter), |a| &a.text)
}

/// Assembles the context for `req` from `store`, counted by `meter`.
fn assemble_with(
    store: &MemoryStore,
    req: &AssembleRequest<'_>,
    meter: Meter,
) -> Result<Assembled, MemoryError> {
    let query = req.query.unwrap_or(req.user_message);
    let terms = query_terms(query);
    let mut a = Assembly::start(store, req, meter)?;
    let named = store.named_lanes(req.session_id, query, req.thread_key)?;
    a.summary_and_memories(query, &terms, &named)?;
    a.recent()?;
    a.retrieved(query, &terms, &named)?;
    a.reach_back()?;
    a.finish()
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

/// Whether a record found for the message ([`MemoryStore::search_memories`]) is one of
/// its memories: only a record the question reaches for, one holding a third of its
/// search terms (one at least), and at least `min_terms`. A match on a word the search
/// leaves out (a stop word) brings no record in.
fn shows_as_memory(r: &Record, terms: &[String], min_terms: usize) -> bool {
    let needed = min_terms.max(terms.len() / 3).max(1);
    let body = r.body.to_lowercase();
    terms.iter().filter(|t| body.contains(t.as_str())).count() >= needed
}

#[cfg(test)]
mod tests;
