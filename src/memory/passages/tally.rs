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
use crate::memory::pg::terms;
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

    /// Tallies the messages of `m`'s scope holding each of `terms` (a term, the factor
    /// its idf is scored at, whether it is one of the question's own), in order: each
    /// scores its idf times its factor; a question's own term also counts in the hits'
    /// `terms` and `weight`, and its weight is kept. A term searched before (in `m`, or
    /// earlier in `terms`) is not searched again. The terms' rows are read together.
    pub(in crate::memory) fn add_terms(
        &self,
        m: &mut Matches<'_>,
        terms: &[(&str, f64, bool)],
    ) -> Result<(), MemoryError> {
        let mut new: Vec<(&str, f64, bool)> = Vec::with_capacity(terms.len());
        for &(term, factor, own) in terms {
            if !m.searched.iter().any(|t| t == term) && new.iter().all(|n| n.0 != term) {
                new.push((term, factor, own));
            }
        }
        let names: Vec<&str> = new.iter().map(|n| n.0).collect();
        let read = self.term_rows(&m.scope, &m.token, m.n, &names)?;
        for ((term, factor, own), rows) in new.into_iter().zip(read) {
            m.searched.push(term.to_string());
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
        }
        Ok(())
    }

    /// For each of `terms`, the rows of `scope` (its token `token`, holding `count`
    /// messages) that hold it, oldest first: those kept from an earlier read, and only the
    /// rows after them read when the scope has grown since (see
    /// [`crate::memory::postings::KeptPostings`]); on PostgreSQL every term's in one call.
    fn term_rows(
        &self,
        scope: &HitScope<'_>,
        token: &str,
        count: usize,
        terms: &[&str],
    ) -> Result<Vec<Vec<i64>>, MemoryError> {
        let mut out: Vec<Option<Vec<i64>>> = Vec::with_capacity(terms.len());
        let mut unread: Vec<(usize, i64)> = Vec::new();
        {
            let mut kept = self.postings.borrow_mut();
            for (i, term) in terms.iter().enumerate() {
                match kept.get(token, term, count) {
                    Kept::Current(rows) => out.push(Some(rows.to_vec())),
                    Kept::After(last) => {
                        out.push(None);
                        unread.push((i, last));
                    }
                }
            }
        }
        let read: Vec<Vec<i64>> = match &self.db {
            Backend::Lite(_) => unread
                .iter()
                .map(|&(i, after)| {
                    self.matching_after(
                        &format!(
                            "scope : \"{token}\" AND {}",
                            body_expression(&[terms[i].to_string()], "OR")
                        ),
                        after,
                    )
                })
                .collect::<Result<_, _>>()?,
            Backend::Pg(_) if unread.is_empty() => Vec::new(),
            Backend::Pg(link) => {
                let names: Vec<&str> = unread.iter().map(|&(i, _)| terms[i]).collect();
                let words: Vec<(Vec<String>, i64)> = link
                    .terms
                    .of_query_terms(&names)?
                    .into_iter()
                    .zip(unread.iter().map(|u| u.1))
                    .collect();
                let at = terms::Scope {
                    session: scope.session,
                    lane: scope.lane,
                    token,
                    rows: count,
                };
                on_pg!(link, "searching", |c| terms::rows_holding(c, &at, &words))?
            }
        };
        let mut kept = self.postings.borrow_mut();
        for ((i, _), rows) in unread.into_iter().zip(read) {
            out[i] = Some(kept.extend(token, terms[i], count, &rows));
        }
        Ok(out.into_iter().map(Option::unwrap_or_default).collect())
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

/// A search's first round of terms for [`MemoryStore::add_terms`]: the question's own
/// `terms`, then the words `added` for them at their factors.
pub(super) fn first_round<'t>(
    terms: &'t [String],
    added: &'t [(String, f64)],
) -> Vec<(&'t str, f64, bool)> {
    terms
        .iter()
        .map(|t| (t.as_str(), 1.0, true))
        .chain(added.iter().map(|(t, f)| (t.as_str(), *f, false)))
        .collect()
}
