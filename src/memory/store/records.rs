//! Memory records: summaries, a lane's state, and the facts, preferences and outcomes
//! a chat states; written redacted, read by kind and lane, and searched by their words.

use super::*;
use crate::memory::pg::records as pg_records;
use crate::memory::record::best_within;

pub(super) fn record_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Record> {
    let kind: String = r.get(2)?;
    let from: Option<String> = r.get(7)?;
    let to: Option<String> = r.get(8)?;
    Ok(Record {
        id: r.get(0)?,
        session_id: r.get(1)?,
        kind: RecordKind::parse(&kind).unwrap_or(RecordKind::Fact),
        thread_key: r.get(3)?,
        body: r.get(4)?,
        summary_version: r.get(5)?,
        updated_at_ms: r.get(6)?,
        message_range: from.zip(to),
        superseded_by: r.get(9)?,
    })
}

/// Whether session `?1` holds a statement an assembly for lane `?2` shows: another
/// lane's, or one of the lane's own not written from a message; three seeks of
/// `records_statements`, no row read.
const ANY_SHOWN: &str = concat!(
    "SELECT EXISTS (SELECT 1 FROM records INDEXED BY records_statements WHERE session_id = ?1 ",
    "AND kind IN ('fact', 'preference', 'outcome') AND thread_key < ?2) ",
    "OR EXISTS (SELECT 1 FROM records INDEXED BY records_statements WHERE session_id = ?1 ",
    "AND kind IN ('fact', 'preference', 'outcome') AND thread_key > ?2) ",
    "OR EXISTS (SELECT 1 FROM records INDEXED BY records_statements WHERE session_id = ?1 ",
    "AND kind IN ('fact', 'preference', 'outcome') AND thread_key = ?2 AND (range_from IS NULL) = 1)"
);

impl MemoryStore {
    /// Writes a record, its body redacted of anything that looks like a credential.
    /// Summaries and thread state replace the lane's previous one; facts, preferences and
    /// outcomes are added. Returns the record's id.
    pub fn put_record(&mut self, r: &NewRecord<'_>) -> Result<i64, MemoryError> {
        let conn = match &self.db {
            Backend::Lite(conn) => conn,
            // In a transaction (a compaction's), through it; else in one of its own.
            Backend::Pg(link) if link.transaction().is_some() => {
                return on_pg!(link, "writing a record", |c| pg_records::put_record_in(
                    c,
                    &link.record_terms,
                    r
                ))
            }
            Backend::Pg(link) => {
                return link.call(
                    "writing a record",
                    pg_records::put_record(link.pool(), &link.record_terms, r),
                )
            }
        };
        let body = redact(r.body);
        let (from, to) = r.message_range.unzip();
        let lane = r.kind.lane_key(r.thread_key);
        if r.kind.single() {
            conn.execute(
                "INSERT INTO records (session_id, kind, thread_key, body, summary_version, updated_at_ms, range_from, range_to)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
                 ON CONFLICT (session_id, kind, thread_key)
                     WHERE kind IN ('thread_summary', 'session_summary', 'thread_state')
                 DO UPDATE SET body = excluded.body, summary_version = excluded.summary_version,
                     updated_at_ms = excluded.updated_at_ms, range_from = excluded.range_from,
                     range_to = excluded.range_to",
                params![r.session_id, r.kind.as_str(), lane, body, r.summary_version, r.updated_at_ms, from, to],
            )?;
            let id = self
                .record(r.session_id, r.kind, lane)?
                .map_or(0, |rec| rec.id);
            return Ok(id);
        }
        conn.execute(
            "INSERT INTO records (session_id, kind, thread_key, body, summary_version, updated_at_ms, range_from, range_to)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![r.session_id, r.kind.as_str(), lane, body, r.summary_version, r.updated_at_ms, from, to],
        )?;
        Ok(conn.last_insert_rowid())
    }

    /// The one record of a single kind (summary, thread state) for a session and lane.
    pub fn record(
        &self,
        session: &str,
        kind: RecordKind,
        lane: &str,
    ) -> Result<Option<Record>, MemoryError> {
        let conn = match &self.db {
            Backend::Lite(conn) => conn,
            Backend::Pg(link) => {
                return on_pg!(link, "reading a record", |c| pg_records::record(
                    c, session, kind, lane
                ))
            }
        };
        let lane = kind.lane_key(lane);
        let sql = format!(
            "SELECT {RECORD_COLUMNS} FROM records WHERE session_id = ?1 AND kind = ?2 AND thread_key = ?3
             ORDER BY id DESC LIMIT 1"
        );
        Ok(conn
            .prepare_cached(&sql)?
            .query_row(params![session, kind.as_str(), lane], record_row)
            .optional()?)
    }

    /// The record of `session` whose id is `id` (`None` for another session's).
    pub fn record_by_id(&self, session: &str, id: i64) -> Result<Option<Record>, MemoryError> {
        let conn = match &self.db {
            Backend::Lite(conn) => conn,
            Backend::Pg(link) => {
                return on_pg!(link, "reading a record", |c| pg_records::record_by_id(
                    c, session, id
                ))
            }
        };
        let sql = format!("SELECT {RECORD_COLUMNS} FROM records WHERE id = ?1 AND session_id = ?2");
        Ok(conn
            .prepare_cached(&sql)?
            .query_row(params![id, session], record_row)
            .optional()?)
    }

    /// Marks the statements of `session` of `kind` that the new record `id` (its `body`)
    /// changes: an earlier one on the same subject with another value, "my favourite
    /// colour is blue" then "my favourite colour is green now". The rule is the words
    /// alone, in any language: the two share [`SUPERSEDE_MIN_SHARED`] words or more
    /// besides stop words; the older has one word or more the newer lacks (at most
    /// [`SUPERSEDE_MAX_CHANGED`]: the old value), and the newer one or more the older
    /// lacks (at most [`SUPERSEDE_MAX_ADDED`]: the new value). A statement in the same
    /// words, or with a word added or left out, changes nothing. Returns how many it
    /// marked.
    pub(in crate::memory) fn supersede(
        &mut self,
        session: &str,
        kind: RecordKind,
        id: i64,
        body: &str,
    ) -> Result<usize, MemoryError> {
        let conn = match &self.db {
            Backend::Lite(conn) => conn,
            Backend::Pg(link) => {
                return on_pg!(link, "marking changed statements", |c| {
                    pg_records::supersede(c, &link.record_terms, session, kind, id, body)
                })
            }
        };
        let new = subject_words(body);
        if new.len() < SUPERSEDE_MIN_SHARED {
            return Ok(0);
        }
        let query = new
            .iter()
            .map(|w| fts_quote(w))
            .collect::<Vec<_>>()
            .join(" OR ");
        let older: Vec<(i64, String)> = conn
            .prepare_cached(&format!(
                // The word index leads (CROSS JOIN keeps it first): driven by the session's
                // records instead, SQLite would run the search once for each of them.
                "SELECT r.id, r.body FROM records_words CROSS JOIN records r ON r.id = records_words.rowid
                 WHERE records_words MATCH ?1 AND r.session_id = ?2 AND r.kind = ?3
                   AND r.id < ?4 AND r.superseded_by IS NULL
                 ORDER BY bm25(records_words), r.id DESC LIMIT {SUPERSEDE_CANDIDATES}"
            ))?
            .query_map(params![query, session, kind.as_str(), id], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })?
            .collect::<Result<_, _>>()?;
        let mut marked = 0;
        for (old_id, old_body) in older {
            if changes(&new, &subject_words(&old_body)) {
                conn.prepare_cached("UPDATE records SET superseded_by = ?1 WHERE id = ?2")?
                    .execute(params![id, old_id])?;
                marked += 1;
            }
        }
        Ok(marked)
    }

    /// The records of `session` that match the words of `query`, best first by BM25, for
    /// the message's lane `lane`: long-term facts, preferences and outcomes of the session
    /// and the lane's own summary (never other lanes' summaries or state). Unsegmented
    /// text (Chinese, Japanese, ...) is matched through a trigram index. At most `k`
    /// records, and no more than `max_tokens` estimated tokens of bodies in all.
    pub fn search(
        &self,
        session: &str,
        query: &str,
        lane: &str,
        k: usize,
        max_tokens: u64,
    ) -> Result<Vec<Record>, MemoryError> {
        if let Backend::Pg(link) = &self.db {
            return on_pg!(link, "searching records", |c| pg_records::search(
                c,
                &link.record_terms,
                session,
                query,
                lane,
                k,
                max_tokens
            ));
        }
        self.search_where(
            session,
            query,
            lane,
            k,
            max_tokens,
            "r.kind IN ('fact', 'preference', 'outcome')
             OR (r.kind = 'thread_summary' AND r.thread_key = ?3)",
        )
    }

    /// [`MemoryStore::search`] for what an assembly for `lane` shows as memories: the
    /// facts, preferences and outcomes of the session but those its own lane's
    /// compactions wrote (each has its message, which retrieval finds in the lane).
    pub fn search_memories(
        &self,
        session: &str,
        query: &str,
        lane: &str,
        k: usize,
        max_tokens: u64,
    ) -> Result<Vec<Record>, MemoryError> {
        let conn = match &self.db {
            Backend::Lite(conn) => conn,
            Backend::Pg(link) => {
                return on_pg!(link, "searching records", |c| {
                    pg_records::search_memories(
                        c,
                        &link.record_terms,
                        session,
                        query,
                        lane,
                        k,
                        max_tokens,
                    )
                })
            }
        };
        // Told by the index alone, without a search: most lanes have none to show.
        let any: bool = conn
            .prepare_cached(ANY_SHOWN)?
            .query_row(params![session, lane], |r| r.get(0))?;
        if !any {
            return Ok(Vec::new());
        }
        self.search_where(
            session,
            query,
            lane,
            k,
            max_tokens,
            "r.kind IN ('fact', 'preference', 'outcome')
             AND (r.thread_key <> ?3 OR r.range_from IS NULL)",
        )
    }

    /// The records of `session` matching `query` that `kept` (an SQL condition on the
    /// record `r`, `?3` the lane) keeps, best first, within `k` and `max_tokens`.
    fn search_where(
        &self,
        session: &str,
        query: &str,
        lane: &str,
        k: usize,
        max_tokens: u64,
        kept: &str,
    ) -> Result<Vec<Record>, MemoryError> {
        let (words, grams) = fts_queries(query);
        let mut hits: Vec<(f64, Record)> = Vec::new();
        for (table, q) in [("records_words", words), ("records_trigrams", grams)] {
            let Some(q) = q else { continue };
            let sql = format!(
                // The index leads (CROSS JOIN keeps it first), as in `supersede`.
                "SELECT {cols}, bm25({table}) AS score FROM {table} CROSS JOIN records r ON r.id = {table}.rowid
                 WHERE {table} MATCH ?1 AND r.session_id = ?2 AND ({kept})
                 ORDER BY score LIMIT {limit}",
                // Written in, not bound: SQLite plans a bound LIMIT again for every value.
                limit = i64::try_from(k).unwrap_or(i64::MAX),
                cols = record_columns_of("r")
            );
            let mut stmt = self.db.lite()?.prepare_cached(&sql)?;
            // The score comes after the record's columns, so `record_row` reads the rest.
            let rows = stmt.query_map(params![q, session, lane], |r| {
                Ok((r.get::<_, f64>(10)?, record_row(r)?))
            })?;
            for row in rows {
                let (score, rec) = row?;
                if !hits.iter().any(|(_, h)| h.id == rec.id) {
                    hits.push((score, rec));
                }
            }
        }
        Ok(best_within(hits, k, max_tokens))
    }
}
