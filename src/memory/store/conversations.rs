//! Conversations: one session's turns in a chat, stored whole for the history, and
//! read back by chat and time.

use super::*;

impl MemoryStore {
    /// Stores a conversation (its summary redacted of anything that looks like a
    /// credential), replacing the one of the same chat and session.
    pub fn put_conversation(&mut self, c: &Conversation) -> Result<(), MemoryError> {
        let turns: Vec<serde_json::Value> = c
            .turns
            .iter()
            .map(|t| serde_json::json!({ "h": t.human, "t": t.text, "ts": t.ts_ms }))
            .collect();
        self.conn
            .prepare_cached(
                "INSERT INTO conversations (chat_id, session_id, started_at_ms, ended_at_ms, summary, turns)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                 ON CONFLICT (chat_id, session_id) DO UPDATE SET started_at_ms = excluded.started_at_ms,
                     ended_at_ms = excluded.ended_at_ms, summary = excluded.summary, turns = excluded.turns",
            )?
            .execute(params![
                c.chat_id,
                c.session_id,
                c.started_at_ms,
                c.ended_at_ms,
                redact(&c.summary),
                serde_json::Value::Array(turns).to_string()
            ])?;
        Ok(())
    }

    /// The conversations of `chat` that ended at or after `since_ms` and at or before
    /// `until_ms`, newest first; only those that ended at or after `turns_since_ms` come
    /// with their turns (the older ones are shown by their summaries).
    pub fn conversations(
        &self,
        chat: &str,
        since_ms: i64,
        until_ms: i64,
        turns_since_ms: i64,
    ) -> Result<Vec<Conversation>, MemoryError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT chat_id, session_id, started_at_ms, ended_at_ms, summary,
                    CASE WHEN ended_at_ms >= ?4 THEN turns ELSE '[]' END FROM conversations
             WHERE chat_id = ?1 AND ended_at_ms >= ?2 AND ended_at_ms <= ?3
             ORDER BY ended_at_ms DESC, session_id",
        )?;
        let rows = stmt.query_map(params![chat, since_ms, until_ms, turns_since_ms], |r| {
            let turns: String = r.get(5)?;
            Ok(Conversation {
                chat_id: r.get(0)?,
                session_id: r.get(1)?,
                started_at_ms: r.get(2)?,
                ended_at_ms: r.get(3)?,
                summary: r.get(4)?,
                turns: stored_turns(&turns),
            })
        })?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }

    /// When the newest conversation of `chat` that ended by `until_ms` ended.
    pub fn last_conversation_end(
        &self,
        chat: &str,
        until_ms: i64,
    ) -> Result<Option<i64>, MemoryError> {
        Ok(self
            .conn
            .prepare_cached(
                "SELECT max(ended_at_ms) FROM conversations WHERE chat_id = ?1 AND ended_at_ms <= ?2",
            )?
            .query_row(params![chat, until_ms], |r| r.get(0))?)
    }
}

/// Turns as [`MemoryStore::put_conversation`] stored them.
fn stored_turns(json: &str) -> Vec<Turn> {
    let v: serde_json::Value = serde_json::from_str(json).unwrap_or_default();
    v.as_array()
        .map(|turns| {
            turns
                .iter()
                .map(|t| Turn {
                    human: t["h"].as_bool().unwrap_or(false),
                    text: t["t"].as_str().unwrap_or_default().to_string(),
                    ts_ms: t["ts"].as_i64(),
                })
                .collect()
        })
        .unwrap_or_default()
}
