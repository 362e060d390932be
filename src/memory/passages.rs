//! Retrieval over the verbatim messages: every stored message is in a full-text index
//! (`messages_index`, SQLite FTS5), scoped to its session and lane, and a question finds
//! the messages that share its words, best first by BM25, each with the turns around it.
//!
//! What is indexed: the message's words, lower-cased, diacritics removed and stemmed
//! (Porter), so "researching" finds "research"; runs of scripts written without spaces
//! (Chinese, Japanese, Korean, Thai) as overlapping character pairs, so a two-character
//! word is found inside a longer run. A scope column holds two opaque tokens, one for the
//! session and one for the session's lane, so a search reads only the postings of its
//! own scope's messages (FTS5 seeks through the rest).
//!
//! What a question searches for: its distinct words that are not stop words ([`crate::core::search::tokenize::is_question_stop_word`]) (all of
//! them when every word is one), and the character pairs of its unsegmented runs.
//!
//! Scope: the message's own lane, any match ([`MemoryStore::lane_hits`]); another lane of
//! the same session only with a strong match, one that holds every searched term of a
//! question of two terms or more ([`MemoryStore::strong_hits_elsewhere`]), or when the
//! message names that lane (the assembly then searches it as its own).
//!
//! Ranking: BM25 on the lane's own statistics, then a chat's signals ([`Signals`]): a
//! newer message ranks a little higher, and a message by the speaker the question is
//! about ("what did I say", "what did you suggest") higher still.
//!
//! Meaning, when the host has an embedding model ([`vectors`]): the messages nearest the
//! question's vector join the words' matches by reciprocal rank fusion.

pub mod expand;
mod fuse;
pub mod index_terms;
mod messages;
mod rank;
mod recall;
mod stated;
mod tally;
pub mod terms;
pub mod vectors;

pub use rank::{
    speaker_of, Signals, RECENCY_HALF_LIFE_MS, RECENCY_WEIGHT, SPEAKER_WEIGHT, WINDOW_WEIGHT,
};
pub use recall::Recall;
pub use stated::STATED_WEIGHT;
use terms::{body_expression, lane_token, session_token};
pub use terms::{fallback_terms, index_text, is_unsegmented, query_terms, scope_tokens};
pub use vectors::{clear_weight, fuse, then_nearest, Near, VectorError, VectorsError};

use super::db::MemoryError;
use super::message::{count_and_mean, ChatMessage, RankingRow, Role};
use super::pg::reads;
use super::store::{on_pg, Backend, MemoryStore};
use rusqlite::{params, OptionalExtension};

/// Where a search looks: a session's messages, or one lane's; those stored before
/// `below_seq`; written within a time window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HitScope<'a> {
    pub session: &'a str,
    /// `None`: every lane of the session.
    pub lane: Option<&'a str>,
    /// Only messages stored before this row (`i64::MAX`: all).
    pub below_seq: i64,
    /// Only messages written at or after this moment (ms since 1970).
    pub from_ms: Option<i64>,
    /// Only messages written at or before this moment (ms since 1970).
    pub until_ms: Option<i64>,
}

impl<'a> HitScope<'a> {
    /// Every message of `session`'s `lane`.
    pub fn lane(session: &'a str, lane: &'a str) -> Self {
        HitScope {
            session,
            lane: Some(lane),
            below_seq: i64::MAX,
            from_ms: None,
            until_ms: None,
        }
    }

    /// Whether a message written at `ts_ms` is in the time window.
    fn holds_time(&self, ts_ms: i64) -> bool {
        self.from_ms.is_none_or(|f| ts_ms >= f) && self.until_ms.is_none_or(|u| ts_ms <= u)
    }
}

/// A message found by a search: its row in `messages` and how well it matched (higher is
/// better).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    pub seq: i64,
    pub score: f64,
    /// How many of the searched terms it holds.
    pub terms: usize,
    /// What the searched terms it holds weigh together: the sum of their idf in the
    /// scope searched (see [`crate::core::search::bm25::idf`]), before its length and the chat's signals count.
    pub weight: f64,
    /// The message asks something ([`crate::memory::message::asks`]): the turn after it is its
    /// answer.
    pub asks: bool,
}

impl MemoryStore {
    /// Adds a stored message to the index (`seq` is its row in `messages`).
    pub(super) fn index_message(
        &self,
        seq: i64,
        session: &str,
        lane: &str,
        text: &str,
    ) -> Result<(), MemoryError> {
        self.db
            .lite()?
            .prepare_cached("INSERT INTO messages_index (rowid, scope, body) VALUES (?1, ?2, ?3)")?
            .execute(params![seq, scope_tokens(session, lane), index_text(text)])?;
        Ok(())
    }

    /// The rows of the index that match `expression`, oldest first (FTS5 reads a doclist
    /// forward page by page; backward it loads it whole).
    fn matching(&self, expression: &str) -> Result<Vec<i64>, MemoryError> {
        let mut stmt = self
            .db
            .lite()?
            .prepare_cached("SELECT rowid FROM messages_index WHERE messages_index MATCH ?1")?;
        let rows = stmt.query_map(params![expression], |r| r.get::<_, i64>(0))?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }

    /// The rows of the index after `after` that match `expression`, oldest first.
    fn matching_after(&self, expression: &str, after: i64) -> Result<Vec<i64>, MemoryError> {
        let mut stmt = self.db.lite()?.prepare_cached(
            "SELECT rowid FROM messages_index WHERE messages_index MATCH ?1 AND rowid > ?2
             ORDER BY rowid",
        )?;
        let rows = stmt.query_map(params![expression, after], |r| r.get::<_, i64>(0))?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }

    /// The first `limit` rows of the index that match `expression`, oldest first.
    fn matching_first(&self, expression: &str, limit: usize) -> Result<Vec<i64>, MemoryError> {
        let mut stmt = self.db.lite()?.prepare_cached(&format!(
            "SELECT rowid FROM messages_index WHERE messages_index MATCH ?1 LIMIT {limit}"
        ))?;
        let rows = stmt.query_map(params![expression], |r| r.get::<_, i64>(0))?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }

    /// How many messages `lane` of `session` holds, and their mean length in characters.
    pub fn lane_stats(&self, session: &str, lane: &str) -> Result<(usize, f64), MemoryError> {
        let conn = match &self.db {
            Backend::Lite(conn) => conn,
            Backend::Pg(link) => {
                return on_pg!(link, "reading a lane's counts", |c| reads::lane_stats(
                    c, session, lane
                ))
            }
        };
        let (n, chars): (i64, i64) = conn
            .prepare_cached(
                "SELECT messages, chars FROM lane_stats WHERE session_id = ?1 AND thread_key = ?2",
            )?
            .query_row(params![session, lane], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?
            .unwrap_or((0, 0));
        Ok(count_and_mean((n, chars)))
    }

    /// Whether `session` holds a message in a lane other than `lane`.
    fn has_other_lanes(&self, session: &str, lane: &str) -> Result<bool, MemoryError> {
        let conn = match &self.db {
            Backend::Lite(conn) => conn,
            Backend::Pg(link) => {
                return on_pg!(link, "reading a session's lanes", |c| {
                    reads::has_other_lanes(c, session, lane)
                })
            }
        };
        Ok(conn
            .prepare_cached(
                "SELECT EXISTS (SELECT 1 FROM lane_stats
                 WHERE session_id = ?1 AND thread_key <> ?2 AND messages > 0)",
            )?
            .query_row(params![session, lane], |r| r.get(0))?)
    }

    /// How many messages `session` holds in all its lanes, and their mean length in
    /// characters.
    pub fn session_stats(&self, session: &str) -> Result<(usize, f64), MemoryError> {
        let conn = match &self.db {
            Backend::Lite(conn) => conn,
            Backend::Pg(link) => {
                return on_pg!(link, "reading a session's counts", |c| {
                    reads::session_stats(c, session)
                })
            }
        };
        let (n, chars): (i64, i64) = conn
            .prepare_cached(
                "SELECT coalesce(sum(messages), 0), coalesce(sum(chars), 0) FROM lane_stats
                 WHERE session_id = ?1",
            )?
            .query_row(params![session], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(count_and_mean((n, chars)))
    }

    /// The messages of `lane` older than `below_seq` that hold any of `terms`, best
    /// first, at most `limit`, with the weight of each term (its IDF in the lane; 0 for
    /// a term no message of the lane holds).
    ///
    /// BM25 over the lane: a message scores, for each term it holds, the term's IDF
    /// counted among the lane's messages, saturated by the message's length against the
    /// lane's mean length ([`crate::core::search::bm25`]; a term counts once per
    /// message: chat messages are short, and one said twice is rarely more relevant).
    /// Ties go to the newer message. The statistics are the lane's own, so a search
    /// costs what the lane's matching messages cost, whatever else the file holds.
    pub fn lane_hits(
        &self,
        session: &str,
        lane: &str,
        terms: &[String],
        below_seq: i64,
        limit: usize,
    ) -> Result<(Vec<Hit>, Vec<f64>), MemoryError> {
        self.ranked_lane_hits(session, lane, terms, below_seq, limit, &Signals::NONE)
    }

    /// [`MemoryStore::lane_hits`] with a chat's signals: each message's BM25 score is
    /// multiplied by [`Signals::factor`] (a little for a newer message, more for one by
    /// the speaker the question is about).
    pub fn ranked_lane_hits(
        &self,
        session: &str,
        lane: &str,
        terms: &[String],
        below_seq: i64,
        limit: usize,
        signals: &Signals,
    ) -> Result<(Vec<Hit>, Vec<f64>), MemoryError> {
        let scope = HitScope {
            below_seq,
            ..HitScope::lane(session, lane)
        };
        self.ranked_hits(&scope, terms, limit, signals)
    }

    /// The messages of `scope` that hold any of `terms`, best first, at most `limit`,
    /// ranked as [`MemoryStore::ranked_lane_hits`] ranks a lane's (with the statistics of
    /// the scope: the lane's, or the whole session's), and the weight of each term.
    pub fn ranked_hits(
        &self,
        scope: &HitScope<'_>,
        terms: &[String],
        limit: usize,
        signals: &Signals,
    ) -> Result<(Vec<Hit>, Vec<f64>), MemoryError> {
        self.weighted_hits(scope, terms, &[], limit, signals)
    }

    /// [`MemoryStore::ranked_hits`] with words added to the question's (`added`, each with
    /// what it weighs against a question's word: see [`expand`]): a message scores each
    /// added word it holds at the word's idf times its weight. A [`Hit`]'s `terms` and
    /// `weight` count the question's words only, and the weights returned are theirs.
    pub fn weighted_hits(
        &self,
        scope: &HitScope<'_>,
        terms: &[String],
        added: &[(String, f64)],
        limit: usize,
        signals: &Signals,
    ) -> Result<(Vec<Hit>, Vec<f64>), MemoryError> {
        if terms.is_empty() || limit == 0 {
            return Ok((Vec::new(), Vec::new()));
        }
        let mut m = self.matches_in(scope)?;
        self.add_terms(&mut m, &tally::first_round(terms, added))?;
        let hits = self.rank(&m, limit, signals)?;
        Ok((hits, m.weights))
    }

    /// What ranking reads of each stored message of `seqs` (its length in characters, when
    /// and by whom it was written): kept from an earlier read, the rest read in one
    /// statement and kept.
    pub(in crate::memory) fn ranking_rows(
        &self,
        seqs: impl Iterator<Item = i64>,
    ) -> Result<std::collections::HashMap<i64, RankingRow>, MemoryError> {
        let mut out = std::collections::HashMap::new();
        let mut unread = Vec::new();
        {
            let mut kept = self.ranking_rows.borrow_mut();
            for seq in seqs {
                match kept.get(&seq) {
                    Some(row) => {
                        out.insert(seq, *row);
                    }
                    None => unread.push(seq),
                }
            }
        }
        if unread.is_empty() {
            return Ok(out);
        }
        let read = match &self.db {
            Backend::Lite(conn) => {
                let mut stmt = conn.prepare_cached(
                    "SELECT m.seq, length(m.text), m.ts_ms, m.role, asks(m.text)
                     FROM json_each(?1) j JOIN messages m ON m.seq = j.value",
                )?;
                let rows = stmt.query_map(params![json_list(unread)], |r| {
                    let role = Some(Role::parse(r.get_ref(3)?.as_str().unwrap_or("")));
                    Ok((
                        r.get::<_, i64>(0)?,
                        RankingRow {
                            chars: usize::try_from(r.get::<_, i64>(1)?).unwrap_or(0),
                            ts_ms: r.get(2)?,
                            role,
                            asks: r.get::<_, Option<bool>>(4)?.unwrap_or(false),
                        },
                    ))
                })?;
                rows.collect::<Result<Vec<_>, _>>()?
            }
            // The whole messages, kept: the best of them are read next, for their text.
            Backend::Pg(link) => {
                let read = on_pg!(link, "reading messages", |c| reads::messages_at(c, &unread))?;
                let rows = read
                    .iter()
                    .map(|(_, m)| (m.seq, RankingRow::of(m)))
                    .collect();
                self.keep_messages(read);
                rows
            }
        };
        let mut kept = self.ranking_rows.borrow_mut();
        for (seq, row) in read {
            kept.put(seq, row);
            out.insert(seq, row);
        }
        Ok(out)
    }

    /// The messages of the session's other lanes that hold every one of `terms` (two or
    /// more), newest first, at most `limit`.
    pub fn strong_hits_elsewhere(
        &self,
        session: &str,
        lane: &str,
        terms: &[String],
        limit: usize,
    ) -> Result<Vec<ChatMessage>, MemoryError> {
        if terms.len() < 2 || limit == 0 || !self.has_other_lanes(session, lane)? {
            return Ok(Vec::new());
        }
        // The message's own lane is left out by the index, not read and dropped.
        let rows = match &self.db {
            Backend::Lite(_) => self.matching(&format!(
                "(scope : \"{}\" AND {}) NOT scope : \"{}\"",
                session_token(session),
                body_expression(terms, "AND"),
                lane_token(session, lane)
            ))?,
            Backend::Pg(link) => {
                let phrases = terms
                    .iter()
                    .map(|t| link.terms.of_query_term(t))
                    .collect::<Result<Vec<_>, _>>()?;
                let (session_token, lane_token) =
                    (session_token(session), lane_token(session, lane));
                on_pg!(link, "searching other lanes", |c| {
                    reads::rows_with_all_elsewhere(c, &session_token, &lane_token, &phrases)
                })?
            }
        };
        // Newest first, `limit` read at a time (one round trip on PostgreSQL).
        let newest: Vec<i64> = rows.into_iter().rev().collect();
        let mut out = Vec::new();
        for chunk in newest.chunks(limit) {
            out.extend(
                self.messages_at(session, chunk)?
                    .into_iter()
                    .filter(|m| m.thread_key != lane),
            );
            if out.len() >= limit {
                break;
            }
        }
        out.truncate(limit);
        Ok(out)
    }
}

/// `values` as a JSON array, for a statement to read with `json_each`.
fn json_list<T: Into<serde_json::Value>>(values: impl IntoIterator<Item = T>) -> String {
    serde_json::Value::Array(values.into_iter().map(Into::into).collect()).to_string()
}

/// The statement of [`MemoryStore::lane_neighbours`]. Its LIMIT is written in, not bound:
/// SQLite plans a statement with a bound LIMIT again for every new value.
pub(super) fn neighbours_sql(after: bool, n: usize) -> String {
    let (cmp, order) = if after { (">", "ASC") } else { ("<", "DESC") };
    format!(
        "SELECT seq FROM messages
         WHERE session_id = ?1 AND thread_key = ?2 AND seq {cmp} ?3 ORDER BY seq {order} LIMIT {n}"
    )
}

#[cfg(test)]
mod fixture;
#[cfg(test)]
mod tests;
