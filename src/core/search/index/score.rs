//! Scoring a query against the index: BM25 per term, weighted by how much of the
//! query a message covers, with the cut that keeps only matches able to reach the top.

use super::{Doc, Match, Query, SearchIndex, B, COVERAGE_EXPONENT, DEAD, K1};
use crate::core::search::bm25;
use crate::core::search::postings::PostingList;
use crate::core::time::TsKey;

/// What each query word weighs in [`coverage`]: the IDF of its rarest term
/// (a word the index has never seen, the highest IDF there is), so covering a rare word
/// counts and covering "how" or "will" hardly does.
#[derive(Debug, Clone)]
pub struct WordWeights {
    idf: Vec<f64>,
    /// The IDF of a term no document holds.
    unseen: f64,
}

impl WordWeights {
    pub fn new(words: usize, docs: usize) -> Self {
        WordWeights {
            idf: vec![f64::NAN; words],
            unseen: (1.0 + (docs as f64 + 0.5) / 0.5).ln(),
        }
    }

    /// A term of the words in `mask` has this IDF.
    pub fn note(&mut self, mask: u32, idf: f64) {
        for (i, w) in self.idf.iter_mut().enumerate() {
            if mask & (1 << i) != 0 && (w.is_nan() || *w < idf) {
                *w = idf;
            }
        }
    }

    /// Each word's share of the query's IDF (words never seen weigh the most).
    pub fn shares(&self) -> Vec<f64> {
        let weights: Vec<f64> = self
            .idf
            .iter()
            .map(|w| if w.is_nan() { self.unseen } else { *w })
            .collect();
        let total: f64 = weights.iter().sum();
        weights
            .iter()
            .map(|w| if total > 0.0 { w / total } else { 0.0 })
            .collect()
    }
}

/// The coverage factor of a match of the query words in `mask`, each word weighing its
/// share (see [`WordWeights::shares`]): the share covered to the power
/// [`COVERAGE_EXPONENT`]; 1 for a query without words.
pub fn coverage(mask: u32, shares: &[f64]) -> f64 {
    if shares.is_empty() {
        return 1.0;
    }
    let covered: f64 = shares
        .iter()
        .enumerate()
        .filter(|(i, _)| mask & (1 << i) != 0)
        .map(|(_, s)| s)
        .sum();
    covered.min(1.0).powi(COVERAGE_EXPONENT)
}

/// [`coverage`] of every mask of a query's words, worked out once per query (a query
/// scores it for each match) when the query has at most [`CoverageTable::MAX_WORDS`]
/// words; a longer one has it computed each time.
pub(super) struct CoverageTable {
    shares: Vec<f64>,
    pub(super) table: Vec<f64>,
}

impl CoverageTable {
    pub(super) const MAX_WORDS: usize = 8;

    pub(super) fn new(shares: Vec<f64>) -> Self {
        let table = if shares.len() <= Self::MAX_WORDS {
            (0..1u32 << shares.len())
                .map(|mask| coverage(mask, &shares))
                .collect()
        } else {
            Vec::new()
        };
        CoverageTable { shares, table }
    }

    #[inline]
    pub(super) fn get(&self, mask: u32) -> f64 {
        match self.table.get(mask as usize) {
            Some(&c) => c,
            None => coverage(mask, &self.shares),
        }
    }
}

/// One query term's share of the BM25 sum, its constants hoisted out of the loop over
/// its postings: `tf · (K1 + 1) · idf / (tf + K1 · (1 - B + B · |d| / avgdl))`.
struct TermScore {
    term: u32,
    /// Postings in the term's list, dead ones included.
    postings: usize,
    /// Live documents holding the term.
    df: usize,
    /// `idf · (K1 + 1)`: more than the term can add to any document's BM25.
    lift: f64,
    /// `K1 · (1 - B)`.
    base: f64,
    /// `K1 · B / avgdl`.
    per_len: f64,
    /// The query words the term came from.
    mask: u32,
    /// Whether the term finds messages, or only ranks those others found (a stop word).
    finds: bool,
}

impl TermScore {
    #[inline]
    fn add(&self, a: &mut (f32, u32), tf: u16, len: u32) {
        let tf = f64::from(tf);
        let s = self.lift * tf / (tf + self.base + self.per_len * f64::from(len));
        a.0 += s as f32;
        a.1 |= self.mask;
    }

    /// Adds the term's score to the accumulator of each live document in `list` (with a
    /// key at or after `since`, when given). With `finds`, a document no term found yet
    /// is noted in `touched`; without, it is passed over. Everything is passed as
    /// slices, so the loop keeps them in registers.
    #[inline]
    fn accumulate(
        &self,
        list: &PostingList,
        lens: &[u32],
        since: Option<(TsKey, &[Doc])>,
        acc: &mut [(f32, u32)],
        touched: &mut Vec<u32>,
        finds: bool,
    ) {
        for (slot, tf) in list.iter() {
            let i = slot as usize;
            let (Some(&len), Some(a)) = (lens.get(i), acc.get_mut(i)) else {
                continue;
            };
            if len == DEAD
                || since.is_some_and(|(s, docs)| docs.get(i).is_some_and(|d| d.key() < s))
            {
                continue;
            }
            if a.1 == 0 {
                if !finds {
                    continue;
                }
                touched.push(slot);
            }
            self.add(a, tf, len);
        }
    }

    /// What [`TermScore::accumulate`] without `finds` does, for a list much longer than
    /// `touched` (in slot order): each found document is looked up in the list instead
    /// of the list being read through.
    fn accumulate_touched(
        &self,
        list: &PostingList,
        lens: &[u32],
        touched: &[u32],
        acc: &mut [(f32, u32)],
    ) {
        let mut at = 0;
        for &slot in touched {
            let Some(tf) = list.seek(&mut at, slot) else {
                continue;
            };
            let i = slot as usize;
            if let (Some(&len), Some(a)) = (lens.get(i), acc.get_mut(i)) {
                self.add(a, tf, len);
            }
        }
    }
}

/// A term that can no longer find documents looks up the found ones in its list when
/// the list is more than this many times longer than they are many (a lookup gallops
/// and bisects, a handful of steps that each wait on memory; reading a posting is one).
const SEEK_RATIO: usize = 16;

/// A cut keeps the matches whose BM25 times the headroom reaches the k-th best BM25
/// times this: the scores are f32 sums, and the k-th is rounded to f32, so a little room
/// keeps a match that ties with the k-th.
pub const CUT_ROUNDING: f64 = 1.0 - 1e-6;

/// Room left for the rounding of f32 sums when a bound decides that no document the
/// remaining terms could find can reach the top.
const BOUND_SLACK: f64 = 1.001;

/// The `k`-th largest of `scores` (`k` >= 1, at most their number), rounded to f32 as
/// the accumulators hold them.
fn kth_largest(scores: impl Iterator<Item = f64>, k: usize) -> f64 {
    let mut best: Vec<f32> = scores.map(|s| s as f32).collect();
    let Some(at) = best.len().checked_sub(k) else {
        return f64::NEG_INFINITY;
    };
    let (_, kth, _) = best.select_nth_unstable_by(at, f32::total_cmp);
    f64::from(*kth)
}

impl SearchIndex {
    /// BM25 scores of the live documents with `key >= since` matching any query term,
    /// in slot order.
    ///
    /// With `cut = Some((k, headroom))`, only matches that can still reach the top `k`
    /// once the caller multiplies scores by a factor in `[1, headroom]` are returned:
    /// those with `bm25 · headroom` at least the `k`-th largest bm25. A query matching
    /// half the channel then hands back a few hundred matches, not tens of thousands.
    pub fn score(
        &mut self,
        q: &Query,
        since: Option<TsKey>,
        cut: Option<(usize, f64)>,
    ) -> Vec<Match> {
        self.score_with_cut(q, since, cut).0
    }

    /// [`SearchIndex::score`] (each match's `bm25` weighted by [`coverage`]), and the
    /// `k`-th largest of those the cut was made from
    /// (`-inf` when nothing was cut). A ranking over the matches is exact when its
    /// `k`-th score reaches that value times [`CUT_ROUNDING`]; below it, some of the `k`
    /// best matches did not make the ranking and the cut ones must be ranked too.
    pub fn score_with_cut(
        &mut self,
        q: &Query,
        since: Option<TsKey>,
        cut: Option<(usize, f64)>,
    ) -> (Vec<Match>, f64) {
        #[cfg(test)]
        {
            self.scored_queries += 1;
        }
        let n = self.by_key.len();
        if n == 0 || !q.has_terms() {
            return (Vec::new(), f64::NEG_INFINITY);
        }
        let avgdl = (self.live_len as f64 / n as f64).max(1.0);
        if self.acc.len() < self.docs.len() {
            self.acc.resize(self.docs.len(), (0.0, 0));
        }
        let mut weights = WordWeights::new(q.words.len(), n);
        // Stop words come last and only add to messages the other terms found.
        let mut plan = self.plan_terms(q, avgdl, &mut weights);
        // Rarest first (equal ones in the query's order): the documents they find are
        // the likely best, and the common terms after them may then only need to rank
        // those (below).
        let finders = plan.iter().take_while(|t| t.finds).count();
        plan[..finders].sort_by_key(|t| t.df);
        // Relevance: BM25 times the share of the query's words the message covers.
        let coverage = CoverageTable::new(weights.shares());
        let relevance = |a: (f32, u32)| f64::from(a.0) * coverage.get(a.1);
        let Bounds {
            ceiling,
            left,
            reach,
        } = Bounds::of(&plan, &coverage);
        let lens = &self.lens;
        let docs = &self.docs;
        let acc = &mut self.acc;
        let touched = &mut self.touched;
        touched.clear();
        // Whether terms may still find documents. With a cut, once the k-th best found
        // so far is out of reach (headroom included) of anything the remaining terms
        // could find, they only rank what is found: the matches and the cut's k-th come
        // out as they would have, and a common word's long list is looked up, not read.
        let mut open = true;
        let mut in_slot_order = false;
        for (j, t) in plan.iter().enumerate() {
            let list = &self.postings[t.term as usize];
            if let Some((k, headroom)) = cut.filter(|&(k, _)| k > 0) {
                // Looking for the k-th costs a pass over what was found: only when the
                // terms left hold far more postings, and when closing is not ruled out
                // by the bounds alone.
                if open
                    && t.finds
                    && touched.len() > 4 * k
                    && left[j] > 2 * touched.len()
                    && ceiling[j] * headroom * BOUND_SLACK < reach[j] * CUT_ROUNDING
                {
                    let kth = kth_largest(touched.iter().map(|&i| relevance(acc[i as usize])), k);
                    open = ceiling[j] * headroom * BOUND_SLACK >= kth * CUT_ROUNDING;
                    #[cfg(test)]
                    if !open {
                        self.closed_queries += 1;
                    }
                }
            }
            let finds = t.finds && open;
            if !finds && touched.len().saturating_mul(SEEK_RATIO) < list.len() {
                // Nothing is found from here on, so `touched` stays in this order.
                if !in_slot_order {
                    // A run in slot order per finding term: a merge, for the stable sort.
                    touched.sort();
                    in_slot_order = true;
                }
                t.accumulate_touched(list, lens, touched, acc);
            } else {
                t.accumulate(
                    list,
                    lens,
                    since.map(|s| (s, &docs[..])),
                    acc,
                    touched,
                    finds,
                );
            }
        }
        let (floor, kth) = match cut {
            Some((k, headroom)) if k > 0 && touched.len() > 4 * k => {
                let kth = kth_largest(touched.iter().map(|&i| relevance(acc[i as usize])), k);
                (kth / headroom * CUT_ROUNDING, kth)
            }
            _ => (f64::NEG_INFINITY, f64::NEG_INFINITY),
        };
        let mut out = Vec::new();
        for &slot in touched.iter() {
            let a = &mut acc[slot as usize];
            let bm25 = relevance(*a);
            if bm25 >= floor {
                out.push(Match {
                    slot,
                    bm25,
                    words: a.1,
                });
            }
            *a = (0.0, 0);
        }
        // In slot order per run of `touched` (see above): the stable sort merges them.
        out.sort_by_key(|m| m.slot);
        (out, kth)
    }

    /// Each query term's scoring constants, the terms that find documents first and the
    /// stop words last (they only add to messages the other terms found); each word's
    /// weight noted in `weights`.
    fn plan_terms(&self, q: &Query, avgdl: f64, weights: &mut WordWeights) -> Vec<TermScore> {
        let n = self.by_key.len();
        let finding = q.terms.iter().map(|&t| (t, true));
        let ranking = q.stop_terms.iter().map(|&t| (t, false));
        finding
            .chain(ranking)
            .map(|((term, mask), finds)| {
                let list = &self.postings[term as usize];
                // Document frequency over live documents; with none removed, the list's length.
                let df = if self.dead_docs == 0 {
                    list.len()
                } else {
                    list.iter()
                        .filter(|&(slot, _)| self.lens[slot as usize] != DEAD)
                        .count()
                };
                let idf = bm25::idf(n, df);
                weights.note(mask, idf);
                TermScore {
                    term,
                    postings: list.len(),
                    df,
                    lift: idf * (K1 + 1.0),
                    base: K1 * (1.0 - B),
                    per_len: K1 * B / avgdl,
                    mask,
                    finds,
                }
            })
            .collect()
    }
}

/// What the terms of a plan can still add, to decide when terms may stop finding
/// documents: `ceiling[j]`, the most a document that no term before j found can reach
/// (every term from j on adding its whole lift, covering all their words); `left[j]`, the
/// postings those terms hold; `reach[j]`, the most any document can have from the terms
/// before j, so the k-th best found so far is at most that.
struct Bounds {
    ceiling: Vec<f64>,
    left: Vec<usize>,
    reach: Vec<f64>,
}

impl Bounds {
    fn of(plan: &[TermScore], coverage: &CoverageTable) -> Bounds {
        let mut ceiling = vec![0.0; plan.len()];
        let mut left = vec![0; plan.len()];
        let (mut lift, mut mask, mut postings) = (0.0, 0, 0);
        for (j, t) in plan.iter().enumerate().rev() {
            lift += t.lift;
            mask |= t.mask;
            postings += t.postings;
            ceiling[j] = lift * coverage.get(mask);
            left[j] = postings;
        }
        let mut reach = vec![0.0; plan.len()];
        let (mut lift, mut mask) = (0.0, 0);
        for (j, t) in plan.iter().enumerate() {
            reach[j] = lift * coverage.get(mask);
            lift += t.lift;
            mask |= t.mask;
        }
        Bounds {
            ceiling,
            left,
            reach,
        }
    }
}
