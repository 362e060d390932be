//! An inverted index over one channel's held messages, scored with BM25.
//!
//! Documents are messages, keyed by their ts (unique within a channel). Each term has a
//! posting list of `(slot, term frequency)` in slot order (see [`super::postings`]).
//! Removing a message (deleted, edited, evicted) marks its slot dead: its postings stay
//! in the lists, are skipped by every query and are dropped by the next sweep, which
//! runs once dead postings outnumber live ones. An edit is a removal plus an addition, so
//! a word edited away is never found again.
//!
//! Scoring is Okapi BM25 with the usual constants [`K1`] = 1.2 and [`B`] = 0.75:
//!
//! ```text
//! score(d, q) = Σ_t idf(t) · tf(t,d) · (K1 + 1) / (tf(t,d) + K1 · (1 - B + B · |d| / avgdl))
//! idf(t)      = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))
//! ```
//!
//! with N the live documents, df(t) the live documents containing t, |d| the document's
//! term count and avgdl the mean over live documents.

use super::hasher::WordHash;
use super::postings::{PostingList, MAX_TF};
use super::terms::TermTable;
use super::threads::ThreadTable;
use super::tokenize::{is_stop_word, Tokenizer};
use crate::core::sorted_deque::{Keyed, SortedDeque};
use crate::core::time::TsKey;
use std::collections::HashMap;

pub use super::bm25::{B, K1};
/// Query words that count (the rest of a long intent is ignored).
pub const MAX_QUERY_WORDS: usize = 32;
/// How much covering more of the query counts: a match's BM25 is multiplied by the share
/// of the query's words it holds (each word weighted by its IDF) to this power, so a
/// message holding all four words of a query beats a short one that matches one of them
/// (BM25 alone, length-normalized per term, often ranks the short match first).
pub const COVERAGE_EXPONENT: i32 = 3;

/// A sweep runs once this many postings are dead and they outnumber live ones.
const SWEEP_MIN_DEAD: usize = 4_096;
/// The length of a removed slot in [`SearchIndex::lens`].
const DEAD: u32 = u32::MAX;

/// One indexed message: 24 bytes.
#[derive(Debug, Clone)]
pub struct Doc {
    /// The key, flattened (a `TsKey` field would be padded to 16 bytes).
    secs: i64,
    nanos: u32,
    /// Index into the author table.
    pub author: u32,
    /// Distinct terms (postings).
    unique: u32,
    /// The thread of a reply, by its number in the index's thread table
    /// ([`super::threads::NO_THREAD`] for channel messages).
    thread: u32,
}

impl Doc {
    pub fn key(&self) -> TsKey {
        (self.secs, self.nanos)
    }
}

/// A live document's key and slot: 16 bytes, where a `(TsKey, u32)` takes 24.
#[derive(Debug, Clone, Copy)]
struct KeySlot {
    secs: i64,
    nanos: u32,
    slot: u32,
}

impl Keyed for KeySlot {
    #[inline]
    fn key(&self) -> TsKey {
        (self.secs, self.nanos)
    }
}

/// A query word and the terms it gave.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryWord {
    /// The folded word as the query had it (`"deploying"`, `"デプロイ"`).
    pub word: String,
}

/// A parsed query: its words and, per distinct known term, the words it came from.
#[derive(Debug, Clone, Default)]
pub struct Query {
    pub words: Vec<QueryWord>,
    /// (term id, bitmask of `words` that produced it), distinct terms only.
    terms: Vec<(u32, u32)>,
    /// The same for stop words: they rank the messages the other terms find.
    stop_terms: Vec<(u32, u32)>,
    /// Query terms the index has never seen.
    pub unknown_terms: usize,
}

impl Query {
    /// Whether any query term occurs in the index.
    pub fn has_terms(&self) -> bool {
        !self.terms.is_empty() || !self.stop_terms.is_empty()
    }
}

/// A document that matched at least one query term.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Match {
    pub slot: u32,
    pub bm25: f64,
    /// Bitmask over [`Query::words`].
    pub words: u32,
}

/// Sizes, for `stats()` and the memory report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IndexStats {
    pub documents: u64,
    pub terms: u64,
    pub postings: u64,
    pub dead_postings: u64,
    pub heap_bytes: u64,
}

#[derive(Debug, Default)]
pub struct SearchIndex {
    terms: TermTable,
    postings: Vec<PostingList>,
    docs: Vec<Doc>,
    /// The thread ids of indexed replies, each held once.
    threads: ThreadTable,
    /// Each slot's term count, [`DEAD`] once removed: the one per-posting lookup a query
    /// makes, kept dense so it stays in cache.
    lens: Vec<u32>,
    /// Live documents by key.
    by_key: SortedDeque<KeySlot>,
    authors: HashMap<Box<str>, u32, WordHash>,
    /// (user id, display name last seen) by author index.
    author_table: Vec<(Box<str>, String)>,
    live_len: u64,
    live_postings: usize,
    dead_postings: usize,
    dead_docs: usize,
    tokenizer: Tokenizer,
    scratch_terms: Vec<u32>,
    /// Per-slot accumulators of a query: (bm25 so far, bitmask of query words), side
    /// by side so a posting touches one cache line; all zero between queries.
    acc: Vec<(f32, u32)>,
    /// Slots touched by the current query.
    touched: Vec<u32>,
    /// Queries whose last terms only ranked what the first ones found.
    #[cfg(test)]
    closed_queries: usize,
    /// Queries scored (a ranking that is not sure of its cut scores its query again).
    #[cfg(test)]
    pub(crate) scored_queries: usize,
}

impl SearchIndex {
    pub fn new() -> Self {
        SearchIndex::default()
    }

    /// Live documents.
    pub fn len(&self) -> usize {
        self.by_key.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_key.is_empty()
    }

    pub fn contains(&self, key: TsKey) -> bool {
        self.by_key.get(&key).is_some()
    }

    pub fn doc(&self, slot: u32) -> Option<&Doc> {
        let live = self.lens.get(slot as usize).is_some_and(|&l| l != DEAD);
        self.docs.get(slot as usize).filter(|_| live)
    }

    /// The thread of a reply (its root's id); `None` for a channel message.
    pub fn thread_of(&self, d: &Doc) -> Option<&str> {
        self.threads.get(d.thread)
    }

    /// The (user id, display name) of an author index.
    pub fn author(&self, author: u32) -> Option<(&str, &str)> {
        self.author_table
            .get(author as usize)
            .map(|(id, name)| (&**id, name.as_str()))
    }

    /// Author indexes whose user id or display name satisfy `f`.
    pub fn authors_where(&self, mut f: impl FnMut(&str, &str) -> bool) -> Vec<u32> {
        self.author_table
            .iter()
            .enumerate()
            .filter(|(_, (id, name))| f(id, name))
            .map(|(i, _)| i as u32)
            .collect()
    }

    /// Live documents with `key >= since`, oldest first.
    pub fn keys_since(
        &self,
        since: Option<TsKey>,
    ) -> impl DoubleEndedIterator<Item = (TsKey, u32)> + '_ {
        let from = since.unwrap_or((i64::MIN, 0));
        self.by_key.from(from).map(|e| (e.key(), e.slot))
    }

    /// Indexes a message (replacing what was indexed under its key): the terms of
    /// `texts` (its text and file names).
    pub fn add(
        &mut self,
        key: TsKey,
        thread: Option<&str>,
        author_id: &str,
        author_name: &str,
        texts: &[&str],
    ) {
        self.remove(key);
        let author = match self.authors.get(author_id) {
            Some(&a) => {
                let entry = &mut self.author_table[a as usize].1;
                if entry != author_name {
                    author_name.clone_into(entry);
                }
                a
            }
            None => {
                let a = self.author_table.len() as u32;
                self.authors.insert(author_id.into(), a);
                self.author_table
                    .push((author_id.into(), author_name.to_string()));
                a
            }
        };
        let slot = self.docs.len() as u32;
        self.scratch_terms.clear();
        {
            let terms = &mut self.terms;
            let postings = &mut self.postings;
            let scratch = &mut self.scratch_terms;
            for text in texts {
                self.tokenizer.terms(text, |t, _| {
                    let id = terms.get_or_insert(t, || {
                        postings.push(PostingList::default());
                        postings.len() as u32 - 1
                    });
                    scratch.push(id);
                });
            }
        }
        let len = self.scratch_terms.len() as u32;
        self.scratch_terms.sort_unstable();
        let mut unique = 0u32;
        let mut i = 0;
        while i < self.scratch_terms.len() {
            let id = self.scratch_terms[i];
            let mut j = i + 1;
            while j < self.scratch_terms.len() && self.scratch_terms[j] == id {
                j += 1;
            }
            self.postings[id as usize].push(slot, u16::try_from(j - i).unwrap_or(MAX_TF));
            unique += 1;
            i = j;
        }
        self.lens.push(len);
        let thread = self.threads.intern(thread);
        self.docs.push(Doc {
            secs: key.0,
            nanos: key.1,
            author,
            unique,
            thread,
        });
        self.by_key.insert(KeySlot {
            secs: key.0,
            nanos: key.1,
            slot,
        });
        self.live_len += u64::from(len);
        self.live_postings += unique as usize;
    }

    /// Removes the message indexed under `key`; returns whether there was one.
    pub fn remove(&mut self, key: TsKey) -> bool {
        let Some(KeySlot { slot, .. }) = self.by_key.remove(&key) else {
            return false;
        };
        if let (Some(d), Some(len)) = (
            self.docs.get(slot as usize),
            self.lens.get_mut(slot as usize),
        ) {
            self.live_len -= u64::from(*len);
            *len = DEAD;
            self.live_postings -= d.unique as usize;
            self.dead_postings += d.unique as usize;
            self.dead_docs += 1;
        }
        if (self.dead_postings >= SWEEP_MIN_DEAD && self.dead_postings > self.live_postings)
            || (self.dead_docs >= SWEEP_MIN_DEAD && self.dead_docs > self.by_key.len())
        {
            self.sweep();
        }
        true
    }

    /// Drops dead documents and postings, renumbering slots (order kept).
    pub fn sweep(&mut self) {
        let mut remap = vec![u32::MAX; self.docs.len()];
        let mut docs = Vec::with_capacity(self.by_key.len());
        let mut lens = Vec::with_capacity(self.by_key.len());
        for (i, (d, len)) in std::mem::take(&mut self.docs)
            .into_iter()
            .zip(std::mem::take(&mut self.lens))
            .enumerate()
        {
            if len != DEAD {
                remap[i] = docs.len() as u32;
                docs.push(d);
                lens.push(len);
            }
        }
        // Threads whose replies all left are dropped too.
        let old_threads = std::mem::take(&mut self.threads);
        for d in &mut docs {
            d.thread = self.threads.intern(old_threads.get(d.thread));
        }
        self.lens = lens;
        self.docs = docs;
        let mut term_ids = vec![u32::MAX; self.postings.len()];
        let mut postings = Vec::new();
        for (i, mut list) in std::mem::take(&mut self.postings).into_iter().enumerate() {
            list.remap(|slot| Some(remap[slot as usize]).filter(|&r| r != u32::MAX));
            if !list.is_empty() {
                term_ids[i] = postings.len() as u32;
                postings.push(list);
            }
        }
        self.postings = postings;
        self.terms.retain(|id| {
            *id = term_ids[*id as usize];
            *id != u32::MAX
        });
        for e in self.by_key.iter_mut() {
            e.slot = remap[e.slot as usize];
        }
        self.dead_postings = 0;
        self.dead_docs = 0;
        self.acc = Vec::new();
    }

    /// Parses a query: its words (at most [`MAX_QUERY_WORDS`]) and the known terms.
    pub fn query(&mut self, text: &str) -> Query {
        let mut q = Query::default();
        let mut pending: Vec<(String, String)> = Vec::new();
        self.tokenizer
            .terms(text, |t, w| pending.push((t.to_string(), w.to_string())));
        for (term, word) in pending {
            let stop = is_stop_word(&word);
            let w = match q.words.iter().position(|x| x.word == word) {
                Some(w) => w,
                None if q.words.len() < MAX_QUERY_WORDS => {
                    q.words.push(QueryWord { word });
                    q.words.len() - 1
                }
                None => continue,
            };
            let list = if stop {
                &mut q.stop_terms
            } else {
                &mut q.terms
            };
            match self.terms.get(&term) {
                Some(id) => match list.iter_mut().find(|(t, _)| *t == id) {
                    Some((_, mask)) => *mask |= 1 << w,
                    None => list.push((id, 1 << w)),
                },
                None => q.unknown_terms += 1,
            }
        }
        // A query of stop words alone finds messages by them.
        if q.terms.is_empty() {
            q.terms = std::mem::take(&mut q.stop_terms);
        }
        q
    }

    pub fn stats(&self) -> IndexStats {
        let postings: usize = self.postings.iter().map(PostingList::len).sum();
        let term_bytes = self.terms.heap_bytes();
        let posting_bytes: usize = self
            .postings
            .iter()
            .map(|l| l.heap_bytes() + std::mem::size_of::<PostingList>())
            .sum();
        let doc_bytes = self.docs.capacity() * std::mem::size_of::<Doc>()
            + self.lens.capacity() * 4
            + self.threads.heap_bytes();
        let key_bytes = self.by_key.heap_bytes();
        let scratch = self.acc.capacity() * 8 + self.touched.capacity() * 4;
        IndexStats {
            documents: self.by_key.len() as u64,
            terms: self.terms.len() as u64,
            postings: postings as u64,
            dead_postings: self.dead_postings as u64,
            heap_bytes: (term_bytes + posting_bytes + doc_bytes + key_bytes + scratch) as u64,
        }
    }
}

mod score;
pub use score::CUT_ROUNDING;

#[cfg(test)]
mod tests;
