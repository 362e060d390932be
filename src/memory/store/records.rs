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
    pub(in crate::memory) fn single(self) -> bool {
        matches!(
            self,
            RecordKind::ThreadSummary | RecordKind::SessionSummary | RecordKind::ThreadState
        )
    }

    /// The thread key a record of this kind is kept under for `lane`: none for the
    /// session's summary, which belongs to no lane.
    pub(in crate::memory) fn lane_key(self, lane: &str) -> &str {
        if self == RecordKind::SessionSummary {
            ""
        } else {
            lane
        }
    }
}

/// The record columns ([`RECORD_COLUMNS`]) of the table named `alias` in a query.
pub(in crate::memory) fn record_columns_of(alias: &str) -> String {
    RECORD_COLUMNS
        .split(", ")
        .map(|c| format!("{alias}.{c}"))
        .collect::<Vec<_>>()
        .join(", ")
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
    /// The newer record of the session that changes what this one said.
    pub superseded_by: Option<i64>,
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
        superseded_by: r.get(9)?,
    })
}

pub(in crate::memory) const RECORD_COLUMNS: &str =
    "id, session_id, kind, thread_key, body, summary_version, updated_at_ms, range_from, range_to, superseded_by";

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

/// Words two statements must share, besides stop words, for the newer to change the older.
pub const SUPERSEDE_MIN_SHARED: usize = 2;
/// The most words of the older statement the newer may lack (the value that changed).
pub const SUPERSEDE_MAX_CHANGED: usize = 1;
/// The most words the newer statement may add (the new value, a word saying it changed).
pub const SUPERSEDE_MAX_ADDED: usize = 2;
/// Earlier statements of the same kind weighed as what a new one may change.
pub const SUPERSEDE_CANDIDATES: usize = 8;

impl MemoryStore {
    /// Writes a record, its body redacted of anything that looks like a credential.
    /// Summaries and thread state replace the lane's previous one; facts, preferences and
    /// outcomes are added. Returns the record's id.
    pub fn put_record(&mut self, r: &NewRecord<'_>) -> Result<i64, MemoryError> {
        let body = redact(r.body);
        let (from, to) = r.message_range.unzip();
        let lane = r.kind.lane_key(r.thread_key);
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
        let lane = kind.lane_key(lane);
        let sql = format!(
            "SELECT {RECORD_COLUMNS} FROM records WHERE session_id = ?1 AND kind = ?2 AND thread_key = ?3
             ORDER BY id DESC LIMIT 1"
        );
        Ok(self
            .conn
            .prepare_cached(&sql)?
            .query_row(params![session, kind.as_str(), lane], record_row)
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
        let new = subject_words(body);
        if new.len() < SUPERSEDE_MIN_SHARED {
            return Ok(0);
        }
        let query = new
            .iter()
            .map(|w| fts_quote(w))
            .collect::<Vec<_>>()
            .join(" OR ");
        let older: Vec<(i64, String)> = self
            .conn
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
                self.conn
                    .prepare_cached("UPDATE records SET superseded_by = ?1 WHERE id = ?2")?
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
        // Told by the index alone, without a search: most lanes have none to show.
        let any: bool = self
            .conn
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
            let mut stmt = self.conn.prepare_cached(&sql)?;
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

/// What a search gives of its scored `hits` (FTS5's BM25: lower is better): a record a
/// newer hit changes is not what the session says now and is left out; best first, ties
/// to the newer; at most `k`, within `max_tokens` of bodies.
pub(in crate::memory) fn best_within(
    mut hits: Vec<(f64, Record)>,
    k: usize,
    max_tokens: u64,
) -> Vec<Record> {
    let ids: Vec<i64> = hits.iter().map(|(_, r)| r.id).collect();
    hits.retain(|(_, r)| r.superseded_by.is_none_or(|by| !ids.contains(&by)));
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
    out
}

/// Whether a statement of the subject words `new` changes one of `old` (see
/// [`MemoryStore::supersede`]).
pub(in crate::memory) fn changes(new: &[String], old: &[String]) -> bool {
    let shared = old.iter().filter(|w| new.contains(w)).count();
    let changed = old.len() - shared;
    let added = new.len() - shared;
    shared >= SUPERSEDE_MIN_SHARED
        && (1..=SUPERSEDE_MAX_CHANGED).contains(&changed)
        && (1..=SUPERSEDE_MAX_ADDED).contains(&added)
}

/// The distinct words of a statement that say what it is about: lower-cased, two
/// characters or more, stop words left out.
pub(in crate::memory) fn subject_words(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for token in text.split(|c: char| !c.is_alphanumeric()) {
        let w = token.to_lowercase();
        if w.chars().count() >= 2 && !is_question_stop_word(&w) && !out.contains(&w) {
            out.push(w);
        }
    }
    out
}

/// FTS5 queries for the words of `text` (see [`query_words`]), each term quoted so no
/// query syntax gets through, joined by OR.
fn fts_queries(text: &str) -> (Option<String>, Option<String>) {
    let (words, grams) = query_words(text);
    let join = |v: Vec<String>| {
        (!v.is_empty()).then(|| {
            v.iter()
                .map(|w| fts_quote(w))
                .collect::<Vec<_>>()
                .join(" OR ")
        })
    };
    (join(words), join(grams))
}

/// What a record search looks for in `text`: word terms (two characters or more) for the
/// word index, and the three-character windows of runs of unsegmented scripts for the
/// trigram index.
pub(in crate::memory) fn query_words(text: &str) -> (Vec<String>, Vec<String>) {
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
                let gram: String = w.iter().collect();
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
    (words, grams)
}
