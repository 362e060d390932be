//! Conversations: one session's turns in a chat, stored whole for the history, and
//! read back by chat and time.

use super::*;
use crate::memory::history::{
    conversation_context, stored_turns, thread_status, turns_json, window, HistoryRequest,
};

impl MemoryStore {
    /// Stores a conversation (its summary redacted of anything that looks like a
    /// credential), replacing the one of the same chat and session.
    pub fn put_conversation(&mut self, c: &Conversation) -> Result<(), MemoryError> {
        let conn = match &self.db {
            Backend::Lite(conn) => conn,
            Backend::Pg(link) => {
                return on_pg!(link, "storing a conversation", |db| {
                    crate::memory::pg::conversations::put_conversation(db, c)
                })
            }
        };
        conn.prepare_cached(
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
                turns_json(&c.turns)
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
        let conn = match &self.db {
            Backend::Lite(conn) => conn,
            Backend::Pg(link) => {
                return on_pg!(link, "reading conversations", |c| {
                    crate::memory::pg::conversations::conversations(
                        c,
                        chat,
                        since_ms,
                        until_ms,
                        turns_since_ms,
                    )
                })
            }
        };
        let mut stmt = conn.prepare_cached(
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
        let conn = match &self.db {
            Backend::Lite(conn) => conn,
            Backend::Pg(link) => {
                return on_pg!(link, "reading conversations", |c| {
                    crate::memory::pg::conversations::last_conversation_end(c, chat, until_ms)
                })
            }
        };
        Ok(conn
            .prepare_cached(
                "SELECT max(ended_at_ms) FROM conversations WHERE chat_id = ?1 AND ended_at_ms <= ?2",
            )?
            .query_row(params![chat, until_ms], |r| r.get(0))?)
    }
}

impl MemoryStore {
    /// Whether a message at its moment continues the chat's last conversation, and the
    /// `<thread-status>` block that says so.
    pub fn history_status(&self, req: &HistoryRequest<'_>) -> Result<(bool, String), MemoryError> {
        let last = self.last_conversation_end(req.chat_id, req.now_ms)?;
        Ok(thread_status(
            last,
            req.now_ms,
            req.opts.continuation_window_ms,
        ))
    }

    /// The chat's earlier conversations by calendar tiers, the excluded session left out;
    /// the empty string when there is nothing to show.
    pub fn history_context(&self, req: &HistoryRequest<'_>) -> Result<String, MemoryError> {
        let (since, turns_since) = window(req.now_ms, &req.zone, &req.opts);
        let mut convs = self.conversations(req.chat_id, since, req.now_ms, turns_since)?;
        if let Some(skip) = req.exclude_session {
            convs.retain(|c| c.session_id != skip);
        }
        Ok(conversation_context(
            &convs, req.now_ms, &req.zone, &req.opts,
        ))
    }

    /// The blocks of a chat's history: the `<thread-status>` block (when asked for), then
    /// its earlier conversations by calendar tiers in `<conversation_history>` (when its
    /// budget is not 0 and there are any).
    pub fn history_blocks(&self, req: &HistoryRequest<'_>) -> Result<Vec<String>, MemoryError> {
        let mut out = Vec::new();
        if req.status {
            out.push(self.history_status(req)?.1);
        }
        if req.opts.max_tokens > 0 {
            let text = self.history_context(req)?;
            if !text.is_empty() {
                out.push(format!(
                    "<conversation_history>\n{text}\n</conversation_history>"
                ));
            }
        }
        Ok(out)
    }
}
