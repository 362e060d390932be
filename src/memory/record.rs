//! Memory records as the stores keep them: their kinds, what is written and read, the
//! columns a record is read by, and what a search gives of its scored hits. Shared by the
//! SQLite store and the PostgreSQL one.

use crate::core::tokens::{estimate, Meter};

pub mod words;

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
    pub fn single(self) -> bool {
        matches!(
            self,
            RecordKind::ThreadSummary | RecordKind::SessionSummary | RecordKind::ThreadState
        )
    }

    /// The thread key a record of this kind is kept under for `lane`: none for the
    /// session's summary, which belongs to no lane.
    pub fn lane_key(self, lane: &str) -> &str {
        if self == RecordKind::SessionSummary {
            ""
        } else {
            lane
        }
    }
}

/// The record columns ([`RECORD_COLUMNS`]) of the table named `alias` in a query.
pub fn record_columns_of(alias: &str) -> String {
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

pub const RECORD_COLUMNS: &str =
    "id, session_id, kind, thread_key, body, summary_version, updated_at_ms, range_from, range_to, superseded_by";

/// Words two statements must share, besides stop words, for the newer to change the older.
pub const SUPERSEDE_MIN_SHARED: usize = 2;
/// The most words of the older statement the newer may lack (the value that changed).
pub const SUPERSEDE_MAX_CHANGED: usize = 1;
/// The most words the newer statement may add (the new value, a word saying it changed).
pub const SUPERSEDE_MAX_ADDED: usize = 2;
/// Earlier statements of the same kind weighed as what a new one may change.
pub const SUPERSEDE_CANDIDATES: usize = 8;

/// What a search gives of its scored `hits` (FTS5's BM25: lower is better): a record a
/// newer hit changes is not what the session says now and is left out; best first, ties
/// to the newer; at most `k`, within `max_tokens` of bodies.
pub fn best_within(mut hits: Vec<(f64, Record)>, k: usize, max_tokens: u64) -> Vec<Record> {
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
