//! What a search and an assembly read of stored messages on PostgreSQL, each the SQLite
//! store's read of the same name (`crate::memory::passages`) in one round trip: a lane's
//! or a session's counts, the rows of a scope holding a word (through the GIN index, read
//! on past a row), what ranking reads of rows, messages by row, and a lane's rows around one.
//! A message's text reads as stored: a NUL character, which PostgreSQL's text cannot hold,
//! was stored as U+FFFD.

use super::words::tsquery_literal;
use crate::core::pg::{Pg, PgError};
use crate::memory::message::{ChatMessage, RankingRow, Role};
use std::collections::HashMap;

/// How many messages `lane` of `session` holds, and their mean length in characters.
pub async fn lane_stats(pg: &Pg, session: &str, lane: &str) -> Result<(usize, f64), PgError> {
    let rows = pg
        .query(
            "reading a lane's counts",
            "SELECT messages, chars FROM memory_lane_stats WHERE session_id = $1 AND thread_key = $2",
            &[&session, &lane],
        )
        .await?;
    Ok(mean(rows.first().map_or((0, 0), |r| (r.get(0), r.get(1)))))
}

/// How many messages `session` holds, and their mean length in characters.
pub async fn session_stats(pg: &Pg, session: &str) -> Result<(usize, f64), PgError> {
    let rows = pg
        .query(
            "reading a session's counts",
            "SELECT coalesce(sum(messages), 0)::bigint, coalesce(sum(chars), 0)::bigint
             FROM memory_lane_stats WHERE session_id = $1",
            &[&session],
        )
        .await?;
    Ok(mean(rows.first().map_or((0, 0), |r| (r.get(0), r.get(1)))))
}

fn mean((n, chars): (i64, i64)) -> (usize, f64) {
    #[allow(clippy::cast_precision_loss)] // counts are far below 2^53
    let mean = if n > 0 { chars as f64 / n as f64 } else { 0.0 };
    (usize::try_from(n).unwrap_or(0), mean)
}

/// The rows after `after` in the scope `token` holding the word whose index terms are
/// `tokens` (in order: a phrase when more than one), oldest first.
pub async fn term_rows_after(
    pg: &Pg,
    token: &str,
    tokens: &[String],
    after: i64,
) -> Result<Vec<i64>, PgError> {
    let Some(query) = tsquery_literal(token, tokens) else {
        return Ok(Vec::new());
    };
    let rows = pg
        .query(
            "searching a word",
            "SELECT seq FROM memory_messages WHERE words @@ $1::text::tsquery AND seq > $2
             ORDER BY seq",
            &[&query, &after],
        )
        .await?;
    Ok(rows.iter().map(|r| r.get(0)).collect())
}

/// What ranking reads of each stored row of `seqs` (see [`RankingRow`]).
pub async fn ranking_rows(pg: &Pg, seqs: &[i64]) -> Result<HashMap<i64, RankingRow>, PgError> {
    let rows = pg
        .query(
            "reading messages to rank",
            "SELECT seq, char_length(text)::bigint, ts_ms, role, right(rtrim(text, ' '), 1) = '?'
             FROM memory_messages WHERE seq = ANY($1)",
            &[&seqs],
        )
        .await?;
    Ok(rows
        .iter()
        .map(|r| {
            (
                r.get::<_, i64>(0),
                RankingRow {
                    chars: usize::try_from(r.get::<_, i64>(1)).unwrap_or(0),
                    ts_ms: r.get(2),
                    role: Some(Role::parse(r.get::<_, &str>(3))),
                    asks: r.get(4),
                },
            )
        })
        .collect())
}

/// The stored messages at `seqs`, each with its session, in no order.
pub async fn messages_at(pg: &Pg, seqs: &[i64]) -> Result<Vec<(String, ChatMessage)>, PgError> {
    let rows = pg
        .query(
            "reading messages",
            "SELECT seq, message_id, thread_key, role, text, ts_ms, reply_to, session_id
             FROM memory_messages WHERE seq = ANY($1)",
            &[&seqs],
        )
        .await?;
    Ok(rows
        .iter()
        .map(|r| {
            (
                r.get(7),
                ChatMessage {
                    seq: r.get(0),
                    message_id: r.get(1),
                    thread_key: r.get(2),
                    role: Role::parse(r.get::<_, &str>(3)),
                    text: r.get(4),
                    ts_ms: r.get(5),
                    reply_to: r.get(6),
                },
            )
        })
        .collect())
}

/// Up to `n` rows of `lane` of `session` just before `seq` (newest first) or just after
/// it (`after`, oldest first).
pub async fn lane_seqs(
    pg: &Pg,
    session: &str,
    lane: &str,
    seq: i64,
    after: bool,
    n: usize,
) -> Result<Vec<i64>, PgError> {
    let limit = i64::try_from(n).unwrap_or(i64::MAX);
    let sql = if after {
        "SELECT seq FROM memory_messages WHERE session_id = $1 AND thread_key = $2 AND seq > $3
         ORDER BY seq ASC LIMIT $4"
    } else {
        "SELECT seq FROM memory_messages WHERE session_id = $1 AND thread_key = $2 AND seq < $3
         ORDER BY seq DESC LIMIT $4"
    };
    let rows = pg
        .query("reading a lane", sql, &[&session, &lane, &seq, &limit])
        .await?;
    Ok(rows.iter().map(|r| r.get(0)).collect())
}
