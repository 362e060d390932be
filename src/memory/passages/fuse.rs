//! Two rankings of a scope's messages as one: by reciprocal rank ([`rank_fusion`]), or
//! the second only filling the room the first leaves ([`followed`]). The words' matches
//! are fused so with the vectors' nearest ([`super::vectors::fuse`]) and with what the
//! person asked about said they like ([`super::stated`]).

use super::Hit;
use std::collections::{HashMap, HashSet};

/// Reciprocal rank fusion's constant: a message at rank `r` (from 1) of a list scores
/// `1 / (RRF_K + r)` from it (60, the value of Cormack, Clarke and Büttcher's paper).
pub const RRF_K: f64 = 60.0;

/// `first` and `other` as one ranking: each message scores `1 / (RRF_K + r)` from
/// `first` and `weight / (RRF_K + r)` from `other` when it is at rank `r` (from 1) of
/// them, scaled so a message first in both at weight 1 scores what `first`'s best scores
/// (1 without one). A message of both keeps what `first` says of it (its terms and their
/// weight). Best first (ties: the newer first), at most `limit`.
pub fn rank_fusion(
    first: &[Hit],
    other: impl IntoIterator<Item = Hit>,
    weight: f64,
    limit: usize,
) -> Vec<Hit> {
    let top = first.iter().map(|h| h.score).fold(0.0f64, f64::max);
    let scale = if top > 0.0 { top } else { 1.0 } / (2.0 / (RRF_K + 1.0));
    #[allow(clippy::cast_precision_loss)] // ranks are small
    let rrf = |rank: usize| scale / (RRF_K + (rank + 1) as f64);
    let mut out: Vec<Hit> = first
        .iter()
        .enumerate()
        .map(|(rank, h)| Hit {
            score: rrf(rank),
            ..*h
        })
        .collect();
    let mut at: HashMap<i64, usize> = out.iter().enumerate().map(|(i, h)| (h.seq, i)).collect();
    for (rank, h) in other.into_iter().enumerate() {
        let score = weight * rrf(rank);
        match at.get(&h.seq) {
            Some(&i) => out[i].score += score,
            None => {
                at.insert(h.seq, out.len());
                out.push(Hit { score, ..h });
            }
        }
    }
    out.sort_by(|a, b| b.score.total_cmp(&a.score).then(b.seq.cmp(&a.seq)));
    out.truncate(limit);
    out
}

/// `first` in its order, then the hits of `rest` it does not hold, in theirs, each
/// scoring below the last of `first` (below 1 without any), so they are offered the room
/// `first` leaves. At most `limit`.
pub fn followed(first: Vec<Hit>, rest: impl Iterator<Item = Hit>, limit: usize) -> Vec<Hit> {
    let floor = first
        .iter()
        .map(|h| h.score)
        .fold(f64::INFINITY, f64::min)
        .min(1.0);
    let held: HashSet<i64> = first.iter().map(|h| h.seq).collect();
    let mut out = first;
    #[allow(clippy::cast_precision_loss)] // ranks are small
    out.extend(
        rest.filter(|h| !held.contains(&h.seq))
            .enumerate()
            .map(|(rank, h)| Hit {
                score: floor * RRF_K / (RRF_K + (rank + 1) as f64),
                ..h
            }),
    );
    out.truncate(limit);
    out
}
