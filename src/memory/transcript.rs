//! Transcripts as gateways keep them, read down to their user and assistant text turns.
//!
//! A JSONL transcript holds one entry per line, in either form:
//! - Claude Code: `{"type":"user"|"assistant","message":{"role":...,"content":...},
//!   "timestamp":"<ISO 8601>"}`;
//! - Pi / OpenClaw: `{"type":"message","message":{"role":"user"|"assistant"|"toolResult",
//!   "content":...,"timestamp":<epoch ms>}}`.
//!
//! `content` is a string or a list of blocks; only `text` blocks are kept. Tool calls
//! (`tool_use`, `toolCall`), tool results (`tool_result`, `toolResult` entries), thinking,
//! images and system or custom entries carry no conversation and are dropped, so a turn
//! that only called tools leaves nothing. Lines that are not JSON are skipped.
//!
//! OpenClaw keeps the same entries in its agent database (`openclaw-agent.sqlite`): a
//! `session_windows` table (session id, session key, times) and a `transcript_events`
//! table of `(session_id, seq, event_json)`. [`read_openclaw`] reads it read-only, one
//! conversation per session. Events stored compressed (`event_zstd`, for large ones) are
//! counted and skipped: this package carries no zstd decoder.

use super::history::Turn;
use crate::core::time::{key_millis, parse_iso};
use serde_json::Value;

/// The text of a message's `content`: a string, or its `text` blocks joined by a newline.
fn content_text(content: &Value) -> Option<String> {
    match content {
        Value::String(s) => Some(s.clone()),
        Value::Array(blocks) => {
            let texts: Vec<&str> = blocks
                .iter()
                .filter(|b| b["type"] == "text")
                .filter_map(|b| b["text"].as_str())
                .collect();
            (!texts.is_empty()).then(|| texts.join("\n"))
        }
        _ => None,
    }
}

/// Epoch ms of an entry: the message's numeric `timestamp`, else the entry's (a number or
/// an ISO 8601 string).
fn entry_ms(entry: &Value, message: &Value) -> Option<i64> {
    let read = |v: &Value| -> Option<i64> {
        if let Some(n) = v.as_f64().filter(|n| n.is_finite()) {
            #[allow(clippy::cast_possible_truncation)] // finite; saturates
            return Some(n as i64);
        }
        v.as_str()
            .and_then(parse_iso)
            .and_then(|k| i64::try_from(key_millis(k)).ok())
    };
    read(&message["timestamp"]).or_else(|| read(&entry["timestamp"]))
}

/// One transcript entry as a turn, or `None` when it is not a user or assistant text turn.
pub fn entry_turn(entry: &Value) -> Option<Turn> {
    let message = if entry["message"].is_object() {
        &entry["message"]
    } else {
        entry
    };
    let role = message["role"]
        .as_str()
        .or_else(|| entry["type"].as_str())?;
    let human = match role {
        "user" | "human" => true,
        "assistant" => false,
        _ => return None,
    };
    let text = content_text(&message["content"])?;
    if text.trim().is_empty() {
        return None;
    }
    Some(Turn {
        human,
        text,
        ts_ms: entry_ms(entry, message),
    })
}

/// The text turns of a JSONL transcript, in order.
pub fn parse_jsonl(text: &str) -> Vec<Turn> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|e| entry_turn(&e))
        .collect()
}

/// One session read from an OpenClaw agent database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenClawSession {
    pub session_id: String,
    pub session_key: String,
    pub started_at_ms: i64,
    pub ended_at_ms: i64,
    pub turns: Vec<Turn>,
    /// Events stored compressed, skipped.
    pub compressed_skipped: u64,
}

/// Why an OpenClaw database could not be read.
#[derive(Debug)]
pub enum ReadError {
    Sqlite(rusqlite::Error),
    /// The file lacks a table or column the reader needs (another program's database, or
    /// a layout this version does not know).
    NotATranscriptStore(String),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Sqlite(e) => write!(f, "SQLite: {e}"),
            ReadError::NotATranscriptStore(what) => {
                write!(f, "not an OpenClaw transcript database: {what}")
            }
        }
    }
}

impl From<rusqlite::Error> for ReadError {
    fn from(e: rusqlite::Error) -> Self {
        ReadError::Sqlite(e)
    }
}

fn columns(conn: &rusqlite::Connection, table: &str) -> Result<Vec<String>, ReadError> {
    let mut stmt = conn.prepare(&format!("PRAGMA table_info({table})"))?;
    let names = stmt
        .query_map([], |r| r.get::<_, String>(1))?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(names)
}

/// The sessions of an OpenClaw agent database at `path`, opened read-only (sessions
/// updated since `since_ms` only), each with its text turns in order. Columns a newer
/// layout adds are ignored; a missing table or column is [`ReadError::NotATranscriptStore`].
pub fn read_openclaw(path: &str, since_ms: i64) -> Result<Vec<OpenClawSession>, ReadError> {
    use rusqlite::{params, Connection, OpenFlags};
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(crate::core::db::BUSY_TIMEOUT)?;
    for (table, needed) in [
        (
            "session_windows",
            &["session_id", "session_key", "created_at", "updated_at"][..],
        ),
        (
            "transcript_events",
            &["session_id", "seq", "event_json", "created_at"][..],
        ),
    ] {
        let have = columns(&conn, table)?;
        if have.is_empty() {
            return Err(ReadError::NotATranscriptStore(format!("no table {table}")));
        }
        if let Some(missing) = needed.iter().find(|c| !have.iter().any(|h| h == *c)) {
            return Err(ReadError::NotATranscriptStore(format!(
                "no column {table}.{missing}"
            )));
        }
    }
    let compressed = columns(&conn, "transcript_events")?
        .iter()
        .any(|c| c == "event_zstd");
    let mut sessions = conn.prepare(
        "SELECT session_id, session_key, created_at, updated_at FROM session_windows
         WHERE updated_at >= ?1 ORDER BY created_at, session_id",
    )?;
    let rows = sessions
        .query_map(params![since_ms], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, i64>(2)?,
                r.get::<_, i64>(3)?,
            ))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    let events_sql = if compressed {
        "SELECT event_json, created_at, event_zstd IS NOT NULL FROM transcript_events WHERE session_id = ?1 ORDER BY seq"
    } else {
        "SELECT event_json, created_at, 0 FROM transcript_events WHERE session_id = ?1 ORDER BY seq"
    };
    let mut events = conn.prepare(events_sql)?;
    let mut out = Vec::with_capacity(rows.len());
    for (session_id, session_key, created, _updated) in rows {
        let mut turns = Vec::new();
        let mut skipped = 0u64;
        let mut last_event = created;
        let mut q = events.query(params![session_id])?;
        while let Some(r) = q.next()? {
            let json: Option<String> = r.get(0)?;
            last_event = last_event.max(r.get::<_, i64>(1)?);
            if r.get::<_, bool>(2)? {
                skipped += 1;
                continue;
            }
            let Some(entry) = json.and_then(|j| serde_json::from_str::<Value>(&j).ok()) else {
                continue;
            };
            if let Some(turn) = entry_turn(&entry) {
                turns.push(turn);
            }
        }
        let started = turns.iter().find_map(|t| t.ts_ms).unwrap_or(created);
        let ended = turns
            .iter()
            .rev()
            .find_map(|t| t.ts_ms)
            .unwrap_or(last_event);
        out.push(OpenClawSession {
            session_id,
            session_key,
            started_at_ms: started.min(ended),
            ended_at_ms: ended,
            turns,
            compressed_skipped: skipped,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
