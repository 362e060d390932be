//! Vectors a host's embedder gives the messages, and the search by them: one vector per
//! stored message (`message_vectors`, little-endian `f32`, scaled to length 1), the
//! messages of a scope nearest a question's vector by cosine similarity, and the fusion of
//! that list with the words' ranking by reciprocal rank ([`fuse`]).
//!
//! Nothing here embeds: the host's model does, when the host has one. A message without a
//! vector is found by its words only; vectors of another length than the question's
//! (another model's) are passed over.

use super::fuse::{followed, rank_fusion};
use super::{Hit, HitScope};
use crate::memory::db::MemoryError;
use crate::memory::pg::vectors as pg_vectors;
use crate::memory::store::{on_pg, Backend, MemoryStore};
use rusqlite::{params, OptionalExtension};

/// The longest vector kept (a larger model's are 3,072 numbers long).
pub const MAX_VECTOR_DIMS: usize = 4_096;

pub use super::fuse::RRF_K;

/// The nearest messages a caller asking for clear matches gets (a message's words clear
/// a bar; its vector's nearness is only a rank).
pub const CLEAR_NEAREST: usize = 8;

/// The share of the question's term weight a words' match holds to be clear: such a
/// match keeps ahead of the messages only near the question ([`fuse`]). Half: a match on
/// the question's rarer words, not on one common word of it.
pub const CLEAR_SHARE: f64 = 0.5;

/// Why a vector cannot be kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VectorError {
    Empty,
    TooLong(usize),
    NotFinite(usize),
}

impl std::fmt::Display for VectorError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            VectorError::Empty => write!(f, "must hold at least one number"),
            VectorError::TooLong(n) => {
                write!(f, "must hold at most {MAX_VECTOR_DIMS} numbers, got {n}")
            }
            VectorError::NotFinite(i) => write!(f, "[{i}] is not a finite number"),
        }
    }
}

/// `v` scaled to length 1 (a vector of zeros stays zeros: near nothing).
pub fn unit(v: &[f32]) -> Result<Vec<f32>, VectorError> {
    if v.is_empty() {
        return Err(VectorError::Empty);
    }
    if v.len() > MAX_VECTOR_DIMS {
        return Err(VectorError::TooLong(v.len()));
    }
    if let Some(i) = v.iter().position(|x| !x.is_finite()) {
        return Err(VectorError::NotFinite(i));
    }
    let norm = v
        .iter()
        .map(|&x| f64::from(x) * f64::from(x))
        .sum::<f64>()
        .sqrt();
    if norm == 0.0 || !norm.is_finite() {
        return Ok(vec![0.0; v.len()]);
    }
    #[allow(clippy::cast_possible_truncation)] // back to the vector's own precision
    Ok(v.iter().map(|&x| (f64::from(x) / norm) as f32).collect())
}

pub(in crate::memory) fn to_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// The dot product of `query` and the vector stored as `blob` (`None` for another length).
fn dot(query: &[f32], blob: &[u8]) -> Option<f64> {
    if blob.len() != query.len() * 4 {
        return None;
    }
    let mut sum = 0.0f32;
    for (q, c) in query.iter().zip(blob.chunks_exact(4)) {
        sum += q * f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
    }
    Some(f64::from(sum))
}

/// A message near a question's vector.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Near {
    pub seq: i64,
    /// Cosine similarity, -1 to 1.
    pub similarity: f64,
    /// The message asks something (see [`Hit::asks`]).
    pub asks: bool,
}

impl MemoryStore {
    /// Keeps `vector` (any length up to [`MAX_VECTOR_DIMS`], scaled to length 1) for each
    /// message of `session` named by its id, replacing one kept before, in one
    /// transaction. Returns the ids no message of the session has (nothing is kept for
    /// them).
    pub fn set_vectors(
        &mut self,
        session: &str,
        entries: &[(&str, &[f32])],
    ) -> Result<Vec<String>, VectorsError> {
        let units = entries
            .iter()
            .enumerate()
            .map(|(i, (_, v))| unit(v).map_err(|e| VectorsError::Invalid(i, e)))
            .collect::<Result<Vec<_>, _>>()?;
        let conn = match &self.db {
            Backend::Lite(conn) => conn,
            Backend::Pg(link) => {
                let blobs: Vec<(&str, Vec<u8>)> = entries
                    .iter()
                    .zip(&units)
                    .map(|((id, _), u)| (*id, to_blob(u)))
                    .collect();
                let pool = link.pool();
                return Ok(link.call("keeping vectors", async {
                    let mut client = pool.client().await?;
                    let tx = client.transaction().await?;
                    crate::memory::pg::lock_session(&tx, session).await?;
                    let unknown = pg_vectors::put_vectors(&tx, session, &blobs).await?;
                    tx.commit().await?;
                    Ok(unknown)
                })?);
            }
        };
        let tx = conn.unchecked_transaction().map_err(MemoryError::from)?;
        let unknown = self.put_vectors(conn, session, entries, &units)?;
        tx.commit().map_err(MemoryError::from)?;
        Ok(unknown)
    }

    /// [`MemoryStore::set_vectors`]' writes, and the session's count of messages with a
    /// vector.
    fn put_vectors(
        &self,
        conn: &rusqlite::Connection,
        session: &str,
        entries: &[(&str, &[f32])],
        units: &[Vec<f32>],
    ) -> Result<Vec<String>, MemoryError> {
        let mut find = conn
            .prepare_cached("SELECT seq FROM messages WHERE session_id = ?1 AND message_id = ?2")?;
        let mut had = conn.prepare_cached("SELECT 1 FROM message_vectors WHERE seq = ?1")?;
        let mut put = conn
            .prepare_cached("INSERT OR REPLACE INTO message_vectors (seq, vec) VALUES (?1, ?2)")?;
        let mut unknown = Vec::new();
        let mut added: i64 = 0;
        for ((id, _), v) in entries.iter().zip(units) {
            let seq: Option<i64> = find
                .query_row(params![session, id], |r| r.get(0))
                .optional()?;
            let Some(seq) = seq else {
                unknown.push((*id).to_string());
                continue;
            };
            if !had.exists([seq])? {
                added += 1;
            }
            put.execute(params![seq, to_blob(v)])?;
        }
        if added > 0 {
            conn.prepare_cached(
                "INSERT INTO vector_counts (session_id, vectors) VALUES (?1, ?2)
                     ON CONFLICT (session_id) DO UPDATE SET vectors = vectors + excluded.vectors",
            )?
            .execute(params![session, added])?;
        }
        Ok(unknown)
    }

    /// Up to `limit` messages of `session` without a vector, the newest first: `(id,
    /// text)`, what a host's embedder is given next. When every message has one (the
    /// session's count of vectors is its count of messages), nothing is read.
    pub fn unembedded(
        &self,
        session: &str,
        limit: usize,
    ) -> Result<Vec<(String, String)>, MemoryError> {
        let conn = match &self.db {
            Backend::Lite(conn) => conn,
            Backend::Pg(link) => {
                return on_pg!(link, "reading what to embed", |c| pg_vectors::unembedded(
                    c, session, limit
                ))
            }
        };
        let (messages, vectors): (i64, i64) = conn
            .prepare_cached(
                "SELECT (SELECT coalesce(sum(messages), 0) FROM lane_stats WHERE session_id = ?1),
                        (SELECT coalesce(max(vectors), 0) FROM vector_counts WHERE session_id = ?1)",
            )?
            .query_row([session], |r| Ok((r.get(0)?, r.get(1)?)))?;
        let pending = messages - vectors;
        if pending <= 0 || limit == 0 {
            return Ok(Vec::new());
        }
        // From the newest row back, stopping at the last one left: those left are the
        // newest of the session as a rule (stored since the host's last batch), and the
        // lane index would have every message of the session checked and sorted first.
        let mut stmt = conn.prepare_cached(
            "SELECT m.message_id, m.text FROM messages m NOT INDEXED
             WHERE m.session_id = ?1
               AND NOT EXISTS (SELECT 1 FROM message_vectors v WHERE v.seq = m.seq)
             ORDER BY m.seq DESC LIMIT ?2",
        )?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX).min(pending);
        let rows = stmt.query_map(params![session, limit], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }

    /// The `limit` messages of `scope` whose vectors are nearest `query` (of its length,
    /// and at a positive cosine similarity), nearest first (ties: the newer first).
    pub fn nearest(
        &self,
        scope: &HitScope<'_>,
        query: &[f32],
        limit: usize,
    ) -> Result<Vec<Near>, MemoryError> {
        let Ok(query) = unit(query) else {
            return Ok(Vec::new());
        };
        if limit == 0 {
            return Ok(Vec::new());
        }
        // Only the lane index is read for the messages (its rows hold the seq), unless a
        // time window needs their times; the session's lanes when no lane is named (`?3`
        // is then bound to nothing used).
        let windowed = scope.from_ms.is_some() || scope.until_ms.is_some();
        let mut near: Vec<Near> = Vec::new();
        let mut consider = |seq: i64, blob: &[u8], ts: i64| {
            if windowed && !scope.holds_time(ts) {
                return;
            }
            // A message at a right angle or more to the question shares nothing with it.
            if let Some(similarity) = dot(&query, blob).filter(|&s| s > 0.0) {
                near.push(Near {
                    seq,
                    similarity,
                    asks: false,
                });
            }
        };
        match &self.db {
            Backend::Lite(conn) => {
                let lane_clause = if scope.lane.is_some() {
                    "AND m.thread_key = ?3"
                } else {
                    "AND ?3 IS NOT NULL"
                };
                let time = if windowed { "m.ts_ms" } else { "0" };
                let mut stmt = conn.prepare_cached(&format!(
                    "SELECT v.seq, v.vec, {time}
                     FROM messages m JOIN message_vectors v ON v.seq = m.seq
                     WHERE m.session_id = ?1 AND m.seq < ?2 {lane_clause}"
                ))?;
                let mut rows = stmt.query(params![
                    scope.session,
                    scope.below_seq,
                    scope.lane.unwrap_or_default()
                ])?;
                while let Some(r) = rows.next()? {
                    consider(
                        r.get(0)?,
                        r.get_ref(1)?.as_blob().unwrap_or_default(),
                        r.get(2)?,
                    );
                }
            }
            Backend::Pg(link) => {
                let rows = on_pg!(link, "reading vectors", |c| pg_vectors::scope_vectors(
                    c,
                    scope.session,
                    scope.below_seq,
                    scope.lane
                ))?;
                for (seq, blob, ts) in rows {
                    consider(seq, &blob, ts);
                }
            }
        }
        let order = |a: &Near, b: &Near| {
            b.similarity
                .total_cmp(&a.similarity)
                .then(b.seq.cmp(&a.seq))
        };
        // The best `limit` first, then only they are sorted.
        if near.len() > limit {
            near.select_nth_unstable_by(limit - 1, order);
            near.truncate(limit);
        }
        near.sort_by(order);
        // Whether each asks something, read for the few kept (with ranking's rows).
        let rows = self.ranking_rows(near.iter().map(|n| n.seq))?;
        for n in &mut near {
            n.asks = rows.get(&n.seq).is_some_and(|r| r.asks);
        }
        Ok(near)
    }
}

/// Why vectors were not kept.
#[derive(Debug)]
pub enum VectorsError {
    /// The entry at this index holds no vector that can be kept.
    Invalid(usize, VectorError),
    Storage(MemoryError),
}

impl From<MemoryError> for VectorsError {
    fn from(e: MemoryError) -> Self {
        VectorsError::Storage(e)
    }
}

impl Near {
    /// As a match that holds none of the question's words.
    fn hit(&self, score: f64) -> Hit {
        Hit {
            seq: self.seq,
            score,
            terms: 0,
            weight: 0.0,
            asks: self.asks,
        }
    }
}

/// The words' matches and the vectors' nearest as one ranking, by reciprocal rank fusion:
/// each message scores `1 / (RRF_K + r)` from the words' list and `weight / (RRF_K + r)`
/// from the nearest when it is at rank `r` (from 1) of them, scaled so a message first in
/// both at weight 1 scores what the words' best match scores (1 without one), and keeps
/// what the words' match says of it (its terms and their weight; none for a message only
/// near). Best first (ties: the newer first), at most `limit`; but the words' clear
/// matches, those whose terms weigh at least `clear_weight` (above 0), come before the
/// rest in their fused order: meaning adds to a clear match and ranks among the vague
/// ones, and never pushes a clear match out. At weight 0 (or below, or not a number), the
/// words' matches keep their order and scores and the nearest follow ([`then_nearest`]).
pub fn fuse(
    words: &[Hit],
    near: &[Near],
    weight: f64,
    clear_weight: f64,
    limit: usize,
) -> Vec<Hit> {
    if weight.is_nan() || weight <= 0.0 {
        return then_nearest(words, near, limit);
    }
    let mut out = rank_fusion(words, near.iter().map(|n| n.hit(0.0)), weight, usize::MAX);
    if clear_weight > 0.0 {
        let clear = |h: &Hit| h.weight >= clear_weight;
        let top = out.iter().map(|h| h.score).fold(0.0f64, f64::max);
        // Each clear match ahead of the best of the rest: its score raised by what the
        // best scores, so the order within each part is the fused one.
        for h in out.iter_mut().filter(|h| clear(h)) {
            h.score += top;
        }
        out.sort_by(|a, b| b.score.total_cmp(&a.score).then(b.seq.cmp(&a.seq)));
    }
    out.truncate(limit);
    out
}

/// The weight a match's terms need to be a clear one for [`fuse`]: [`CLEAR_SHARE`] of what
/// the question's terms weigh in the scope searched (`weights`, one per term).
pub fn clear_weight(weights: &[f64]) -> f64 {
    CLEAR_SHARE * weights.iter().sum::<f64>()
}

/// `first` in its order, then the nearest it does not hold, in theirs (see [`followed`]).
pub fn then_nearest(first: &[Hit], near: &[Near], limit: usize) -> Vec<Hit> {
    followed(
        first.to_vec(),
        near.iter().map(|n| n.hit(n.similarity)),
        limit,
    )
}

#[cfg(test)]
mod tests;
