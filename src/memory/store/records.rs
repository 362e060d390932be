//! Memory records: summaries, a lane's state, and the facts, preferences and outcomes
//! a chat states; written redacted, read by kind and lane, and searched by their words.

use super::*;
use crate::core::search::tokenize::is_question_stop_word;

/// The kinds of memory record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordKind {
    /// The rolling summary of one thread key (one per session and thread key).
    ThreadSummary,
    /// The rolling summary of a whole session (one per session).
    SessionSummary,
    /// A thread's state: a pending slot request, last anchors (one per thread key).
    ThreadState,
    Fact,
    Preference,
    Outcome,
}

impl RecordKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RecordKind::ThreadSummary => "thread_summary",
            RecordKind::SessionSummary => "session_summary",
            RecordKind::ThreadState => "thread_state",
            RecordKind::Fact => "fact",
            RecordKind::Preference => "preference",
            RecordKind::Outcome => "outcome",
        }
    }

    pub fn parse(s: &str) -> Option<RecordKind> {
        Some(match s {
            "thread_summary" => RecordKind::ThreadSummary,
            "session_summary" => RecordKind::SessionSummary,
            "thread_state" => RecordKind::ThreadState,
            "fact" => RecordKind::Fact,
            "preference" => RecordKind::Preference,
            "outcome" => RecordKind::Outcome,
            _ => return None,
        })
    }

    /// At most one record of this kind per session and thread key (written by upsert).
    fn single(self) -> bool {
        matches!(
            self,
            RecordKind::ThreadSummary | RecordKind::SessionSummary | RecordKind::ThreadState
        )
    }
}

/// A memory record as stored. Its body never holds what looks like a credential.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub id: i64,
    pub session_id: String,
    pub kind: RecordKind,
    /// Empty for records that belong to the session, not to one lane.
    pub thread_key: String,
    pub body: String,
    pub summary_version: i64,
    pub updated_at_ms: i64,
    /// The first and last message ids a summary covers.
    pub message_range: Option<(String, String)>,
}

/// A record to write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewRecord<'a> {
    pub session_id: &'a str,
    pub kind: RecordKind,
    pub thread_key: &'a str,
    pub body: &'a str,
    pub summary_version: i64,
    pub updated_at_ms: i64,
    pub message_range: Option<(&'a str, &'a str)>,
}

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
    })
}

pub(super) const RECORD_COLUMNS: &str =
    "id, session_id, kind, thread_key, body, summary_version, updated_at_ms, range_from, range_to";

impl MemoryStore {
    /// Writes a record, its body redacted of anything that looks like a credential.
    /// Summaries and thread state replace the lane's previous one; facts, preferences and
    /// outcomes are added. Returns the record's id.
    pub fn put_record(&mut self, r: &NewRecord<'_>) -> Result<i64, MemoryError> {
        let body = redact(r.body);
        let (from, to) = r.message_range.unzip();
        let lane = if r.kind == RecordKind::SessionSummary {
            ""
        } else {
            r.thread_key
        };
        if r.kind.single() {
            self.conn.execute(
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
        self.conn.execute(
            "INSERT INTO records (session_id, kind, thread_key, body, summary_version, updated_at_ms, range_from, range_to)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![r.session_id, r.kind.as_str(), lane, body, r.summary_version, r.updated_at_ms, from, to],
        )?;
        Ok(self.conn.last_insert_rowid())
    }

    /// The one record of a single kind (summary, thread state) for a session and lane.
    pub fn record(
        &self,
        session: &str,
        kind: RecordKind,
        lane: &str,
    ) -> Result<Option<Record>, MemoryError> {
        let lane = if kind == RecordKind::SessionSummary {
            ""
        } else {
            lane
        };
        let sql = format!(
            "SELECT {RECORD_COLUMNS} FROM records WHERE session_id = ?1 AND kind = ?2 AND thread_key = ?3
             ORDER BY id DESC LIMIT 1"
        );
        Ok(self
            .conn
            .query_row(&sql, params![session, kind.as_str(), lane], record_row)
            .optional()?)
    }

    /// The record of `session` whose id is `id` (`None` for another session's).
    pub fn record_by_id(&self, session: &str, id: i64) -> Result<Option<Record>, MemoryError> {
        let sql = format!("SELECT {RECORD_COLUMNS} FROM records WHERE id = ?1 AND session_id = ?2");
        Ok(self
            .conn
            .prepare_cached(&sql)?
            .query_row(params![id, session], record_row)
            .optional()?)
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
        let (words, grams) = fts_queries(query);
        let mut hits: Vec<(f64, Record)> = Vec::new();
        for (table, q) in [("records_words", words), ("records_trigrams", grams)] {
            let Some(q) = q else { continue };
            let sql = format!(
                "SELECT {cols}, bm25({table}) AS score FROM {table} JOIN records r ON r.id = {table}.rowid
                 WHERE {table} MATCH ?1 AND r.session_id = ?2
                   AND (r.kind IN ('fact', 'preference', 'outcome')
                        OR (r.kind = 'thread_summary' AND r.thread_key = ?3))
                 ORDER BY score LIMIT {limit}",
                // Written in, not bound: SQLite plans a bound LIMIT again for every value.
                limit = i64::try_from(k).unwrap_or(i64::MAX),
                cols = RECORD_COLUMNS
                    .split(", ")
                    .map(|c| format!("r.{c}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            let mut stmt = self.conn.prepare_cached(&sql)?;
            // The score comes after the record's columns, so `record_row` reads the rest.
            let rows = stmt.query_map(params![q, session, lane], |r| {
                Ok((r.get::<_, f64>(9)?, record_row(r)?))
            })?;
            for row in rows {
                let (score, rec) = row?;
                if !hits.iter().any(|(_, h)| h.id == rec.id) {
                    hits.push((score, rec));
                }
            }
        }
        // BM25 in FTS5 is negative, lower is better; ties go to the newer record.
        hits.sort_by(|a, b| a.0.total_cmp(&b.0).then(b.1.id.cmp(&a.1.id)));
        let mut out = Vec::new();
        let meter = Meter::of_model(None);
        let mut used = 0.0;
        for (_, rec) in hits.into_iter().take(k) {
            let next = used + estimate(&rec.body);
            if !meter.fits(next, max_tokens) {
                break;
            }
            used = next;
            out.push(rec);
        }
        Ok(out)
    }
}

/// FTS5 queries for the words of `text`: word terms (two characters or more) for the
/// word index, and the three-character windows of runs of unsegmented scripts for the
/// trigram index, each term quoted so no query syntax gets through.
fn fts_queries(text: &str) -> (Option<String>, Option<String>) {
    let mut words: Vec<String> = Vec::new();
    let mut grams: Vec<String> = Vec::new();
    for token in text.split(|c: char| !c.is_alphanumeric()) {
        if token.chars().count() < 2 {
            continue;
        }
        let unsegmented = token.chars().any(is_unsegmented);
        if unsegmented {
            // No word boundaries to go by: every three-character window is a term, and
            // BM25 ranks the records that share the most of them first.
            let chars: Vec<char> = token.chars().collect();
            for w in chars.windows(3) {
                let gram = fts_quote(&w.iter().collect::<String>());
                if !grams.contains(&gram) {
                    grams.push(gram);
                }
            }
        } else {
            let lower = token.to_lowercase();
            if !words.contains(&lower) {
                words.push(lower);
            }
        }
    }
    // The question's own words ("what", "did", "the" are in nearly every record: each
    // would have BM25 score every record of the store); all of them when that is all it has.
    if words.iter().any(|w| !is_question_stop_word(w)) {
        words.retain(|w| !is_question_stop_word(w));
    }
    let join = |v: Vec<String>| (!v.is_empty()).then(|| v.join(" OR "));
    (
        join(words.iter().map(|w| fts_quote(w)).collect()),
        join(grams),
    )
}
