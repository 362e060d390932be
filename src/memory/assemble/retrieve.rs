//! The retrieved messages' candidates: the lane's older messages that match the
//! question, strong matches in other lanes, matches in the lanes it names, and the
//! turns around each, in the order they are offered the room left. With the question's
//! vector, the lane's messages nearest it join its own matches, by reciprocal rank.

use super::{AssembleRequest, HIT_LIMIT, MAX_NEIGHBOURS, NEIGHBOUR_WEIGHT, STRONG_LIMIT};
use crate::memory::db::MemoryError;
use crate::memory::message::asks;
use crate::memory::passages::vectors::CLEAR_NEAREST;
use crate::memory::passages::{clear_weight, fallback_terms, fuse, Hit, HitScope};
use crate::memory::store::{ChatMessage, MemoryStore};
use std::collections::HashMap;

/// A match of the query, and its message once read.
pub(super) struct Found {
    pub(super) hit: Hit,
    pub(super) lane: String,
    pub(super) message: Option<ChatMessage>,
}

/// The matches of `terms` for `req`, best first: in its own lane below
/// `passages_below` (none when `lane_shown`: the recent messages hold the whole lane),
/// strong ones elsewhere, then in each of the `named` lanes.
pub(super) fn matches(
    store: &MemoryStore,
    req: &AssembleRequest<'_>,
    query: &str,
    terms: &[String],
    named: &[String],
    passages_below: i64,
    lane_shown: bool,
) -> Result<Vec<Found>, MemoryError> {
    // Who and when the question is about, and the words its best matches lend.
    let recall = store.recall(req.session_id, query, req.now_ms, req.speakers)?;
    let signals = recall.signals;
    let mut found: Vec<Found> = Vec::new();
    // The lane's messages older than the recent ones.
    let scope = HitScope {
        below_seq: passages_below,
        ..HitScope::lane(req.session_id, req.thread_key)
    };
    let (mut own, weights) = if lane_shown {
        (Vec::new(), vec![0.0; terms.len()])
    } else {
        store.recall_hits(&scope, &recall, HIT_LIMIT)?
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
    for m in store.strong_hits_elsewhere(req.session_id, req.thread_key, terms, STRONG_LIMIT)? {
        if named.contains(&m.thread_key) {
            continue; // searched below as a named lane
        }
        found.push(Found {
            hit: Hit {
                seq: m.seq,
                score: strong,
                terms: terms.len(),
                weight: strong,
                asks: asks(&m.text),
            },
            lane: m.thread_key.clone(),
            message: Some(m),
        });
    }
    // Any match, at the default; a caller asking for clear matches gets only those
    // holding enough of the question's own words (not a word its best matches lent).
    let min_terms = if req.passages_min_terms <= 1 {
        0
    } else {
        req.passages_min_terms
    };
    let clears = |h: &Hit| h.terms >= min_terms && h.weight >= req.passages_min_weight;
    own.retain(clears);
    if let (Some(query), false) = (req.query_vector, lane_shown) {
        // The messages nearest the question's meaning, fused with those its words find;
        // a caller asking for clear matches gets only the nearest few.
        let clear_only = req.passages_min_terms > 1 || req.passages_min_weight > 0.0;
        let take = if clear_only { CLEAR_NEAREST } else { HIT_LIMIT };
        let near = store.nearest(&scope, query, take)?;
        own = fuse(
            &own,
            &near,
            req.nearest_weight,
            clear_weight(&weights),
            HIT_LIMIT,
        );
    }
    if !lane_shown {
        // A question about what someone likes: what they said they like, whatever the
        // words; both lists whole, as room allows.
        own = store.with_stated(&scope, &recall, own, 2 * HIT_LIMIT)?;
    }
    found.extend(own.into_iter().map(|hit| Found {
        hit,
        lane: req.thread_key.to_string(),
        message: None,
    }));
    for lane in named {
        let (hits, _) =
            store.recall_hits(&HitScope::lane(req.session_id, lane), &recall, HIT_LIMIT)?;
        found.extend(hits.into_iter().filter(clears).map(|hit| Found {
            hit,
            lane: lane.clone(),
            message: None,
        }));
    }
    Ok(found)
}

/// What is offered room, in order: `(priority, rank, step)` for each match (step 0) and
/// each of its `neighbours` turns on either side (step -n / +n), a neighbour weighing
/// [`NEIGHBOUR_WEIGHT`] of its match per step away; but the turn after a match that asks
/// something is its answer, and weighs what the match weighs (the turns past it one
/// step less).
pub(super) fn candidates(found: &[Found], neighbours: usize) -> Vec<(f64, usize, i32)> {
    let mut out: Vec<(f64, usize, i32)> =
        Vec::with_capacity(found.len() * (2 * neighbours.min(MAX_NEIGHBOURS) + 1));
    let steps = i32::try_from(neighbours.min(MAX_NEIGHBOURS)).unwrap_or(0);
    for (rank, f) in found.iter().enumerate() {
        let mut w = 1.0;
        for step in 0..=steps {
            if step == 0 {
                out.push((f.hit.score, rank, 0));
            } else {
                out.push((f.hit.score * w, rank, -step));
                let after = if f.hit.asks { w / NEIGHBOUR_WEIGHT } else { w };
                out.push((f.hit.score * after, rank, step));
            }
            w *= NEIGHBOUR_WEIGHT;
        }
    }
    out.sort_by(|a, b| {
        b.0.total_cmp(&a.0)
            .then(a.1.cmp(&b.1))
            .then(a.2.abs().cmp(&b.2.abs()))
            .then(a.2.cmp(&b.2))
    });
    out
}

/// The turns before and after a match, nearest first.
pub(super) type Around = (Vec<ChatMessage>, Vec<ChatMessage>);

/// The turns before and after `hit` in its lane, nearest first ([`NEIGHBOURS`] each
/// side), the message it replies to first of those before; in the message's own lane,
/// only those older than the recent messages.
pub(super) fn neighbours(
    store: &MemoryStore,
    req: &AssembleRequest<'_>,
    hit: &ChatMessage,
    passages_below: i64,
) -> Result<Around, MemoryError> {
    let lane = &hit.thread_key;
    let n = req.passages_neighbours.min(MAX_NEIGHBOURS);
    let before = store.lane_neighbours(req.session_id, lane, hit.seq, false, n)?;
    let after = store.lane_neighbours(req.session_id, lane, hit.seq, true, n)?;
    with_parent(store, req, hit, passages_below, (before, after))
}

/// [`neighbours`] of every match of `found` that has its message, by its place in
/// `found`, read at once where each statement is a round trip (PostgreSQL); none on
/// SQLite, where each is read when it is offered, for less than reading them all costs.
/// The matches' messages are read first, in one call, where they are missing.
pub(super) fn all_neighbours(
    store: &MemoryStore,
    req: &AssembleRequest<'_>,
    found: &mut [Found],
    passages_below: i64,
) -> Result<HashMap<usize, Around>, MemoryError> {
    let mut out = HashMap::new();
    if !store.is_shared() || found.is_empty() {
        return Ok(out);
    }
    let unread: Vec<i64> = found
        .iter()
        .filter(|f| f.message.is_none())
        .map(|f| f.hit.seq)
        .collect();
    let read: HashMap<i64, ChatMessage> = store
        .messages_at(req.session_id, &unread)?
        .into_iter()
        .map(|m| (m.seq, m))
        .collect();
    for f in found.iter_mut().filter(|f| f.message.is_none()) {
        f.message = read
            .get(&f.hit.seq)
            .filter(|m| m.thread_key == f.lane)
            .cloned();
    }
    let hits: Vec<(usize, &ChatMessage)> = found
        .iter()
        .enumerate()
        .filter_map(|(rank, f)| Some((rank, f.message.as_ref()?)))
        .collect();
    let n = req.passages_neighbours.min(MAX_NEIGHBOURS);
    let at: Vec<(&str, i64)> = hits
        .iter()
        .map(|(_, m)| (m.thread_key.as_str(), m.seq))
        .collect();
    let around = store.lanes_around(req.session_id, &at, n)?;
    let seqs: Vec<i64> = around
        .iter()
        .flat_map(|(b, a)| b.iter().chain(a))
        .copied()
        .collect();
    let messages: HashMap<i64, ChatMessage> = store
        .messages_at(req.session_id, &seqs)?
        .into_iter()
        .map(|m| (m.seq, m))
        .collect();
    let of = |seqs: &[i64]| -> Vec<ChatMessage> {
        seqs.iter()
            .filter_map(|s| messages.get(s).cloned())
            .collect()
    };
    for ((rank, hit), (before, after)) in hits.into_iter().zip(around) {
        let sides = (of(&before), of(&after));
        out.insert(rank, with_parent(store, req, hit, passages_below, sides)?);
    }
    Ok(out)
}

/// A match's neighbours `(before, after)` as [`neighbours`] gives them: in the message's
/// own lane, only those older than the recent messages; the message it replies to first.
fn with_parent(
    store: &MemoryStore,
    req: &AssembleRequest<'_>,
    hit: &ChatMessage,
    passages_below: i64,
    (mut before, mut after): Around,
) -> Result<Around, MemoryError> {
    let lane = &hit.thread_key;
    let n = req.passages_neighbours.min(MAX_NEIGHBOURS);
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
