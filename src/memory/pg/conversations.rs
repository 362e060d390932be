//! Conversations on PostgreSQL, as the SQLite store keeps them (`crate::memory::store`'s
//! conversations): one session's turns in a chat, stored whole (the summary redacted),
//! replaced by the same chat and session, and read back by chat and time, newest first.

use crate::core::pg::PgError;
use crate::memory::history::{stored_turns, turns_json, Conversation};
use crate::memory::secrets::redact;
use deadpool_postgres::GenericClient;

/// Stores `conv`, replacing the one of the same chat and session.
pub async fn put_conversation<C: GenericClient>(c: &C, conv: &Conversation) -> Result<(), PgError> {
    let summary = redact(&conv.summary).replace('\0', "\u{FFFD}");
    let turns = turns_json(&conv.turns);
    c.execute(
        "INSERT INTO memory_conversations
             (chat_id, session_id, started_at_ms, ended_at_ms, summary, turns)
         VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (chat_id, session_id) DO UPDATE SET started_at_ms = excluded.started_at_ms,
             ended_at_ms = excluded.ended_at_ms, summary = excluded.summary, turns = excluded.turns",
        &[
            &conv.chat_id,
            &conv.session_id,
            &conv.started_at_ms,
            &conv.ended_at_ms,
            &summary,
            &turns,
        ],
    )
    .await?;
    Ok(())
}

/// The conversations of `chat` that ended from `since_ms` to `until_ms`, newest first
/// (then by session, bytewise); those that ended at or after `turns_since_ms` with their
/// turns.
pub async fn conversations<C: GenericClient>(
    c: &C,
    chat: &str,
    since_ms: i64,
    until_ms: i64,
    turns_since_ms: i64,
) -> Result<Vec<Conversation>, PgError> {
    let rows = super::rows(
        c,
        "SELECT chat_id, session_id, started_at_ms, ended_at_ms, summary,
                CASE WHEN ended_at_ms >= $4 THEN turns ELSE '[]' END
         FROM memory_conversations
         WHERE chat_id = $1 AND ended_at_ms >= $2 AND ended_at_ms <= $3
         ORDER BY ended_at_ms DESC, session_id COLLATE \"C\"",
        &[&chat, &since_ms, &until_ms, &turns_since_ms],
    )
    .await?;
    Ok(rows
        .iter()
        .map(|r| Conversation {
            chat_id: r.get(0),
            session_id: r.get(1),
            started_at_ms: r.get(2),
            ended_at_ms: r.get(3),
            summary: r.get(4),
            turns: stored_turns(r.get(5)),
        })
        .collect())
}

/// When the last conversation of `chat` that ended by `until_ms` ended.
pub async fn last_conversation_end<C: GenericClient>(
    c: &C,
    chat: &str,
    until_ms: i64,
) -> Result<Option<i64>, PgError> {
    let rows = super::rows(
        c,
        "SELECT max(ended_at_ms) FROM memory_conversations WHERE chat_id = $1 AND ended_at_ms <= $2",
        &[&chat, &until_ms],
    )
    .await?;
    Ok(rows.first().and_then(|r| r.get(0)))
}
