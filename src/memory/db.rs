//! The memory's side of the SQLite file ([`crate::core::db`]): what can go wrong in it,
//! and opening it, with the migration step that needs more than SQL (indexing the
//! messages stored before the message index existed).

use super::passages::terms::{index_text, scope_tokens};
use crate::core::db::{DbError, INDEX_STEP};
use rusqlite::functions::FunctionFlags;
use rusqlite::{params, Connection, OptionalExtension};

/// Why the store could not do what was asked.
#[derive(Debug)]
pub enum MemoryError {
    /// The file is not a database, is corrupt, or SQLite failed otherwise.
    Sqlite(rusqlite::Error),
    /// The file was written by a newer version of this package.
    NewerSchema { found: i64, supported: i64 },
    /// A lane's summary changed between planning a compaction and writing it.
    Stale { expected: i64, found: i64 },
    /// A compaction under a lock whose fencing token is older than the one the lane's
    /// summary was last written under, or without a token (`None`) over a summary that
    /// was written under one.
    Fenced { fence: Option<i64>, found: i64 },
    /// PostgreSQL failed, or could not be reached in time.
    Pg(crate::core::pg::PgError),
}

impl std::fmt::Display for MemoryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MemoryError::Sqlite(e) => write!(f, "SQLite: {e}"),
            MemoryError::Pg(e) => e.fmt(f),
            MemoryError::NewerSchema { found, supported } => DbError::NewerSchema {
                found: *found,
                supported: *supported,
            }
            .fmt(f),
            MemoryError::Fenced {
                fence: Some(fence),
                found,
            } => write!(
                f,
                "the lock's fencing token {fence} is older than {found}, the token the summary was last written under: the lock expired and another holder wrote"
            ),
            MemoryError::Fenced { fence: None, found } => write!(
                f,
                "no fencing token was given, but the summary was last written under token {found}: write under a lock taken through Redis (a process-local lock cannot exclude other workers)"
            ),
            MemoryError::Stale { expected, found } => write!(
                f,
                "the thread summary is at version {found}, not {expected} as planned: another compaction wrote it first"
            ),
        }
    }
}

impl std::error::Error for MemoryError {}

impl From<rusqlite::Error> for MemoryError {
    fn from(e: rusqlite::Error) -> Self {
        MemoryError::Sqlite(e)
    }
}

impl From<crate::core::pg::PgError> for MemoryError {
    fn from(e: crate::core::pg::PgError) -> Self {
        MemoryError::Pg(e)
    }
}

impl From<tokio_postgres::Error> for MemoryError {
    fn from(e: tokio_postgres::Error) -> Self {
        MemoryError::Pg(e.into())
    }
}

impl From<DbError> for MemoryError {
    fn from(e: DbError) -> Self {
        match e {
            DbError::Sqlite(e) => MemoryError::Sqlite(e),
            DbError::NewerSchema { found, supported } => {
                MemoryError::NewerSchema { found, supported }
            }
        }
    }
}

/// Indexes the messages stored before the index existed (a file from an older version),
/// in the transaction that creates the index.
fn backfill(tx: &rusqlite::Transaction<'_>) -> Result<(), MemoryError> {
    let mut read =
        tx.prepare("SELECT seq, session_id, thread_key, text FROM messages ORDER BY seq")?;
    let mut write =
        tx.prepare("INSERT INTO messages_index (rowid, scope, body) VALUES (?1, ?2, ?3)")?;
    let mut rows = read.query([])?;
    while let Some(r) = rows.next()? {
        let seq: i64 = r.get(0)?;
        let session: String = r.get(1)?;
        let lane: String = r.get(2)?;
        let text: String = r.get(3)?;
        write.execute(params![
            seq,
            scope_tokens(&session, &lane),
            index_text(&text)
        ])?;
    }
    Ok(())
}

/// Opens the file as [`crate::core::db::open`] does, then indexes the messages stored before the
/// message index existed, when a migration left that to the memory (once, whichever
/// process gets the write lock first).
pub(super) fn open(path: &str) -> Result<Connection, MemoryError> {
    let mut conn = crate::core::db::open(path)?;
    // Ranking reads of each matched message whether it asks something, by the one rule
    // (`message::asks`), without reading its text out of SQLite.
    conn.create_scalar_function(
        "asks",
        1,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        |ctx| Ok(ctx.get_raw(0).as_str().is_ok_and(super::message::asks)),
    )?;
    // Read first: a file with nothing pending (the usual case) takes no write lock here.
    let pending = |c: &Connection| -> Result<bool, MemoryError> {
        let table: Option<String> = c
            .query_row(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'pending_steps'",
                [],
                |r| r.get(0),
            )
            .optional()?;
        if table.is_none() {
            return Ok(false);
        }
        let step: Option<i64> = c
            .query_row(
                "SELECT 1 FROM pending_steps WHERE step = ?1",
                [INDEX_STEP],
                |r| r.get(0),
            )
            .optional()?;
        Ok(step.is_some())
    };
    if pending(&conn)? {
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        // Another process may have done it while this one waited for the lock.
        if pending(&tx)? {
            backfill(&tx)?;
            tx.execute("DELETE FROM pending_steps WHERE step = ?1", [INDEX_STEP])?;
        }
        tx.commit()?;
    }
    Ok(conn)
}
