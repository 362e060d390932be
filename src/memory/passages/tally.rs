//! A search's tally: the messages of a scope holding each term searched, what the terms
//! they hold score (BM25's idf, times the term's weight), and the ranking of the tally by
//! length and the chat's signals. Terms are added one at a time, so a second round adds
//! only its new words to the first round's tally.

use super::rank::LENGTH_CHUNK;
use super::terms::{body_expression, lane_token, session_token};
use super::{Hit, HitScope, Signals};
use crate::core::search::bm25::{idf, length_norm, saturation, MAX_LIFT};
use crate::memory::db::MemoryError;
use crate::memory::message::RankingRow;
use crate::memory::pg::reads;
use crate::memory::postings::Kept;
use crate::memory::store::{on_pg, Backend, MemoryStore};

/// The messages of a scope holding the terms searched so far: per message, what its terms
/// score, how many of the question's own it holds and what those weigh.
pub struct Matches<'s> {
    scope: HitScope<'s>,
    token: String,
    n: usize,
    mean: f64,
    per: std::collections::HashMap<i64, (f64, usize, f64)>,
    /// The weight of each of the question's own terms, in the order added.
    pub(super) weights: Vec<f64>,
    searched: Vec<String>,
}

impl MemoryStore {
    /// An empty tally of the matches in `scope`, with the scope's statistics.
    pub(in crate::memory) fn matches_in<'s>(
        &self,
        scope: &HitScope<'s>,
    ) -> Result<Matches<'s>, MemoryError> {
        let (n, mean, token) = match scope.lane {
            Some(lane) => {
                let (n, mean) = self.lane_stats(scope.session, lane)?;
                (n, mean, lane_token(scope.session, lane))
            }
            None => {
                let (n, mean) = self.session_stats(scope.session)?;
                (n, mean, session_token(scope.session))
            }
        };
        Ok(Matches {
            scope: *scope,
            token,
            n,
            mean,
            per: std::collections::HashMap::new(),
            weights: Vec::new(),
            searched: Vec::new(),
        })
    }

    /// Tallies the messages of `m`'s scope holding `term`, each scoring the term's idf times
    /// `factor`; a question's own term (`own`) also counts in the hits' `terms` and
    /// `weight`, and its weight is kept. A term searched before is not searched again.
    pub(in crate::memory) fn add_term(
        &self,
        m: &mut Matches<'_>,
        term: &str,
        factor: f64,
        own: bool,
    ) -> Result<(), MemoryError> {
        if m.searched.iter().any(|t| t == term) {
            return Ok(());
        }
        m.searched.push(term.to_string());
        let rows = self.term_rows(&m.token, m.n, term)?;
        // A term the lane never holds weighs nothing (and says so to the caller).
        let w = if rows.is_empty() {
            0.0
        } else {
            idf(m.n.max(rows.len()), rows.len())
        };
        if own {
            m.weights.push(w);
        }
        for seq in rows.into_iter().filter(|&s| s < m.scope.below_seq) {
            let e = m.per.entry(seq).or_insert((0.0, 0, 0.0));
            e.0 += w * factor;
            if own {
                e.1 += 1;
                e.2 += w;
            }
        }
        Ok(())
    }

    /// The rows of the scope `token` (holding `count` messages) that hold `term`, oldest
    /// first: those kept from an earlier read, and only the rows after them read when the
    /// scope has grown since (see [`crate::memory::postings::KeptPostings`]).
    fn term_rows(&self, token: &str, count: usize, term: &str) -> Result<Vec<i64>, MemoryError> {
        let after = match self.postings.borrow_mut().get(token, term, count) {
            Kept::Current(rows) => return Ok(rows.to_vec()),
            Kept::After(last) => last,
        };
        let read = match &self.db {
            Backend::Lite(_) => self.matching_after(
                &format!(
                    "scope : \"{token}\" AND {}",
                    body_expression(&[term.to_string()], "OR")
                ),
                after,
            )?,
            Backend::Pg(link) => {
                let tokens = link.terms.of_query_term(term)?;
                on_pg!(link, "searching", |c| reads::term_rows_after(
                    c, token, &tokens, after
                ))?
            }
        };
        Ok(self.postings.borrow_mut().extend(token, term, count, &read))
    }

    /// The best `limit` messages of a tally, best first: the terms' score saturated by the
    /// message's length, times the chat's `signals`.
    pub(in crate::memory) fn rank(
        &self,
        m: &Matches<'_>,
        limit: usize,
        signals: &Signals,
    ) -> Result<Vec<Hit>, MemoryError> {
        if m.per.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        // Best first by terms alone; lengths are read a chunk at a time, and no more once
        // the next chunk's best could not reach the `limit`-th score even at the shortest
        // length and with every signal for it (the most they can lift a score).
        let mut candidates: Vec<(i64, f64, usize, f64)> = m
            .per
            .iter()
            .map(|(&seq, &(sum, terms, weight))| (seq, sum, terms, weight))
            .collect();
        candidates.sort_by(|a, b| b.1.total_cmp(&a.1).then(b.0.cmp(&a.0)));
        let max_lift = MAX_LIFT * signals.max_factor();
        let mut hits: Vec<Hit> = Vec::with_capacity(limit + LENGTH_CHUNK);
        for chunk in candidates.chunks(LENGTH_CHUNK) {
            if hits.len() >= limit && chunk[0].1 * max_lift < hits[limit - 1].score {
                break;
            }
            let rows = self.ranking_rows(chunk.iter().map(|c| c.0))?;
            // Each match's row is read once: for the time window and for its score.
            hits.extend(chunk.iter().filter_map(|&(seq, sum, terms, weight)| {
                let row = rows.get(&seq).copied().unwrap_or(RankingRow {
                    chars: 0,
                    ts_ms: 0,
                    role: None,
                    asks: false,
                });
                if !m.scope.holds_time(row.ts_ms) {
                    return None;
                }
                #[allow(clippy::cast_precision_loss)]
                let dl = row.chars as f64;
                let norm = length_norm(dl, m.mean.max(1.0));
                Some(Hit {
                    seq,
                    score: sum * saturation(1.0, norm) * signals.factor(row.ts_ms, row.role),
                    terms,
                    weight,
                    asks: row.asks,
                })
            }));
            hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(b.seq.cmp(&a.seq)));
            hits.truncate(limit);
        }
        Ok(hits)
    }
}
