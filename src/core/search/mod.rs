//! Ranked search over one channel's held messages: the tokenizer, the BM25 index and
//! the ranking that combines keyword relevance with recency, thread activity and named
//! authors.
//!
//! ```text
//! final = bm25 · coverage^3 · (1 + RECENCY_WEIGHT · recency + ACTIVITY_WEIGHT · activity) · (AUTHOR_BOOST if by a named author)
//! coverage = Σ idf of the query words the message holds / Σ idf of all the query's words
//! recency  = 0.5 ^ (age / RECENCY_HALF_LIFE_MS), age measured from the channel's newest message
//! activity = 0.6 · min(1, ln(1 + replies) / ln(51)) + 0.2 · [reply within RECENT_ACTIVITY_MS]
//!          + 0.2 · min(1, ln(1 + reactions) / ln(21))
//! ```
//!
//! A reply counts half of its thread's reply terms. When no query term occurs in the
//! channel (or the intent has none), the newest messages are ranked by
//! `RECENCY_WEIGHT · recency + ACTIVITY_WEIGHT · activity` instead (`recent_activity`).
//! Ties go to the newer message. Everything is computed from the store's data and its
//! clock-free timestamps, so the same store and query give the same results.

pub mod bm25;
pub mod hasher;
pub mod index;
pub mod postings;
pub mod terms;
pub mod threads;
pub mod tokenize;

use crate::core::time::{key_millis, TsKey};
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Half-life of the recency factor: a week-old message weighs half a new one.
pub const RECENCY_HALF_LIFE_MS: u64 = 7 * 24 * 3_600_000;
/// Weight of recency in the boost.
pub const RECENCY_WEIGHT: f64 = 0.3;
/// Weight of thread activity in the boost.
pub const ACTIVITY_WEIGHT: f64 = 0.3;
/// Factor for messages by an author the query names.
pub const AUTHOR_BOOST: f64 = 1.5;
/// "Recent" activity: within a day of the channel's newest message.
pub const RECENT_ACTIVITY_MS: u64 = 24 * 3_600_000;
/// Reply count at which the reply term of activity saturates.
const REPLY_SATURATION: f64 = 50.0;
/// Reaction count at which the reaction term saturates.
const REACTION_SATURATION: f64 = 20.0;

/// What the store knows about a candidate's activity.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Signals {
    /// Replies of the thread the message starts (or, for a reply, is in).
    pub replies: u64,
    /// Newest activity of the message or its thread (ms since the epoch).
    pub last_activity_ms: u64,
    /// Reactions on the message.
    pub reactions: u64,
    pub is_reply: bool,
}

/// The recency factor of a message posted at `at` when the newest is `reference`.
pub fn recency(at: TsKey, reference: TsKey) -> f64 {
    let age = key_millis(reference).saturating_sub(key_millis(at)) as f64;
    0.5f64.powf(age / RECENCY_HALF_LIFE_MS as f64)
}

/// Whether `s` shows activity within [`RECENT_ACTIVITY_MS`] of `reference`.
pub fn is_recent(s: &Signals, reference: TsKey) -> bool {
    s.last_activity_ms + RECENT_ACTIVITY_MS >= key_millis(reference)
}

/// The activity factor in `[0, 1]`.
pub fn activity(s: &Signals, reference: TsKey) -> f64 {
    let sat = |n: u64, cap: f64| ((1.0 + n as f64).ln() / (1.0 + cap).ln()).min(1.0);
    let replies = sat(s.replies, REPLY_SATURATION) * if s.is_reply { 0.5 } else { 1.0 };
    let recent = if s.replies > 0 && is_recent(s, reference) {
        1.0
    } else {
        0.0
    };
    0.6 * replies + 0.2 * recent + 0.2 * sat(s.reactions, REACTION_SATURATION)
}

/// A candidate for ranking.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Candidate {
    pub slot: u32,
    pub key: TsKey,
    /// Keyword relevance; for the no-keyword fallback, 0.
    pub bm25: f64,
    /// Bitmask of query words matched.
    pub words: u32,
    pub by_named_author: bool,
}

/// A ranked result.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ranked {
    pub candidate: Candidate,
    pub score: f64,
    pub signals: Signals,
    /// Activity or recency made a real difference (at least a tenth of the score).
    pub recent_activity: bool,
}

fn score(c: &Candidate, s: &Signals, reference: TsKey) -> (f64, bool) {
    let rec = recency(c.key, reference);
    let act = activity(s, reference);
    let author = if c.by_named_author { AUTHOR_BOOST } else { 1.0 };
    let boost = RECENCY_WEIGHT * rec + ACTIVITY_WEIGHT * act;
    let recent = is_recent(s, reference) && act > 0.0;
    if c.bm25 > 0.0 {
        (c.bm25 * (1.0 + boost) * author, recent)
    } else {
        (boost * author, recent || rec > 0.5)
    }
}

/// The most the boosts can multiply a keyword score by: full recency and activity, and
/// the author boost when the query names authors.
pub fn max_boost(named_authors: bool) -> f64 {
    (1.0 + RECENCY_WEIGHT + ACTIVITY_WEIGHT) * if named_authors { AUTHOR_BOOST } else { 1.0 }
}

/// Upper bound of a candidate's score before its signals are looked up (activity at
/// its maximum of 1).
fn upper_bound(c: &Candidate, reference: TsKey) -> f64 {
    let rec = recency(c.key, reference);
    let author = if c.by_named_author { AUTHOR_BOOST } else { 1.0 };
    let boost = RECENCY_WEIGHT * rec + ACTIVITY_WEIGHT;
    if c.bm25 > 0.0 {
        c.bm25 * (1.0 + boost) * author
    } else {
        boost * author
    }
}

struct ByBound(f64, Candidate);

impl PartialEq for ByBound {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for ByBound {}
impl PartialOrd for ByBound {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for ByBound {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0
            .total_cmp(&other.0)
            .then(self.1.key.cmp(&other.1.key))
    }
}

/// Best first: higher score, then the newer message.
fn better(a: &Ranked, b: &Ranked) -> Ordering {
    b.score
        .total_cmp(&a.score)
        .then(b.candidate.key.cmp(&a.candidate.key))
}

/// The best `k` candidates. `signals` is asked only for candidates that can still
/// make the top `k` (their upper bound beats the `k`-th exact score), so a query
/// that matches thousands of messages looks up a few dozen.
pub fn rank(
    candidates: Vec<Candidate>,
    reference: TsKey,
    k: usize,
    mut signals: impl FnMut(&Candidate) -> Option<Signals>,
) -> Vec<Ranked> {
    if k == 0 {
        return Vec::new();
    }
    if candidates.len() > 4 * k {
        // A cheap first cut, before any recency is computed: a keyword match scores at
        // least bm25 · author (no recency, no activity) and at most
        // bm25 · (1 + RECENCY_WEIGHT + ACTIVITY_WEIGHT) · author. With T the k-th
        // largest lower bound, k candidates score at least T, so one whose upper bound
        // is below T cannot make the top k.
        let lower = |c: &Candidate| c.bm25 * if c.by_named_author { AUTHOR_BOOST } else { 1.0 };
        let mut lows: Vec<f64> = candidates.iter().map(lower).collect();
        let at = lows.len() - k;
        let (_, t, _) = lows.select_nth_unstable_by(at, f64::total_cmp);
        let full = *t;
        let t = full / max_boost(false);
        if t > 0.0 {
            let kept: Vec<Candidate> = candidates
                .iter()
                .copied()
                .filter(|c| lower(c) >= t)
                .collect();
            let top = rank_exact(kept, reference, k, &mut signals);
            // Exact when the k-th score reaches the k-th lower bound: every candidate cut
            // scores below it. It may not when some of those k had no signals (no longer
            // held); then rank them all.
            if top.len() == k && top.last().is_some_and(|w| w.score >= full) {
                return top;
            }
        }
    }
    rank_exact(candidates, reference, k, &mut signals)
}

fn rank_exact(
    candidates: Vec<Candidate>,
    reference: TsKey,
    k: usize,
    signals: &mut impl FnMut(&Candidate) -> Option<Signals>,
) -> Vec<Ranked> {
    let mut heap: BinaryHeap<ByBound> = candidates
        .into_iter()
        .map(|c| ByBound(upper_bound(&c, reference), c))
        .collect();
    let mut top: Vec<Ranked> = Vec::with_capacity(k + 1);
    while let Some(ByBound(bound, c)) = heap.pop() {
        if top.len() == k && top.last().is_some_and(|w| bound < w.score) {
            break;
        }
        let Some(s) = signals(&c) else {
            continue;
        };
        let (score, recent_activity) = score(&c, &s, reference);
        let r = Ranked {
            candidate: c,
            score,
            signals: s,
            recent_activity,
        };
        let at = top
            .binary_search_by(|x| better(x, &r))
            .unwrap_or_else(|i| i);
        top.insert(at, r);
        top.truncate(k);
    }
    top
}

#[cfg(test)]
mod tests;
