//! What a search and an assembly read of stored messages on PostgreSQL, each the SQLite
//! store's read of the same name (`crate::memory::passages`) in one round trip: a lane's
//! or a session's counts, the rows of a scope holding a word (through the GIN index, read
//! on past a row), what ranking reads of rows, messages by row, and a lane's rows around one.
//! A message's text reads as stored: a NUL character, which PostgreSQL's text cannot hold,
//! was stored as U+FFFD.

use super::words::{lexeme, phrase, tsquery_literal};
use crate::core::pg::PgError;
use crate::memory::message::{count_and_mean, ChatMessage, Role, RowsAround};
use deadpool_postgres::GenericClient;
use std::collections::HashMap;

/// How many messages `lane` of `session` holds, and their mean length in characters.
pub async fn lane_stats<C: GenericClient>(
    c: &C,
    session: &str,
    lane: &str,
) -> Result<(usize, f64), PgError> {
    let rows = super::rows(
        c,
        "SELECT messages, chars FROM memory_lane_stats WHERE session_id = $1 AND thread_key = $2",
        &[&session, &lane],
    )
    .await?;
    Ok(count_and_mean(
        rows.first().map_or((0, 0), |r| (r.get(0), r.get(1))),
    ))
}

/// How many messages `session` holds, and their mean length in characters.
pub async fn session_stats<C: GenericClient>(
    c: &C,
    session: &str,
) -> Result<(usize, f64), PgError> {
    let rows = super::rows(
        c,
        "SELECT coalesce(sum(messages), 0)::bigint, coalesce(sum(chars), 0)::bigint
             FROM memory_lane_stats WHERE session_id = $1",
        &[&session],
    )
    .await?;
    Ok(count_and_mean(
        rows.first().map_or((0, 0), |r| (r.get(0), r.get(1))),
    ))
}

/// The columns [`chat_message`] reads, in its order.
const MESSAGE_COLUMNS: &str = "seq, message_id, thread_key, role, text, ts_ms, reply_to";

/// A message from a row of [`MESSAGE_COLUMNS`].
fn chat_message(r: &tokio_postgres::Row) -> ChatMessage {
    ChatMessage {
        seq: r.get(0),
        message_id: r.get(1),
        thread_key: r.get(2),
        role: Role::parse(r.get::<_, &str>(3)),
        text: r.get(4),
        ts_ms: r.get(5),
        reply_to: r.get(6),
    }
}

/// The stored messages at `seqs`, each with its session, in no order.
pub async fn messages_at<C: GenericClient>(
    c: &C,
    seqs: &[i64],
) -> Result<Vec<(String, ChatMessage)>, PgError> {
    let rows = super::rows(
        c,
        &format!("SELECT {MESSAGE_COLUMNS}, session_id FROM memory_messages WHERE seq = ANY($1)"),
        &[&seqs],
    )
    .await?;
    Ok(rows.iter().map(|r| (r.get(7), chat_message(r))).collect())
}

/// The stored message of `session` whose id is `message_id`.
pub async fn message_by_id<C: GenericClient>(
    c: &C,
    session: &str,
    message_id: &str,
) -> Result<Option<ChatMessage>, PgError> {
    let rows = super::rows(
            c,
            &format!(
                "SELECT {MESSAGE_COLUMNS} FROM memory_messages WHERE session_id = $1 AND message_id = $2"
            ),
            &[&session, &message_id],
        )
        .await?;
    Ok(rows.first().map(chat_message))
}

/// The newest `n` messages of a lane, oldest first.
pub async fn recent<C: GenericClient>(
    c: &C,
    session: &str,
    lane: &str,
    n: usize,
) -> Result<Vec<ChatMessage>, PgError> {
    let limit = i64::try_from(n).unwrap_or(i64::MAX);
    let rows = super::rows(
            c,
            &format!(
                "SELECT {MESSAGE_COLUMNS} FROM memory_messages WHERE session_id = $1 AND thread_key = $2
                 ORDER BY seq DESC LIMIT $3"
            ),
            &[&session, &lane, &limit],
        )
        .await?;
    Ok(rows.iter().rev().map(chat_message).collect())
}

/// The messages of a lane after seq `after`, oldest first.
pub async fn lane_after<C: GenericClient>(
    c: &C,
    session: &str,
    lane: &str,
    after: i64,
) -> Result<Vec<ChatMessage>, PgError> {
    let rows = super::rows(
            c,
            &format!(
                "SELECT {MESSAGE_COLUMNS} FROM memory_messages WHERE session_id = $1 AND thread_key = $2
                 AND seq > $3 ORDER BY seq"
            ),
            &[&session, &lane, &after],
        )
        .await?;
    Ok(rows.iter().map(chat_message).collect())
}

/// The seq of the message of `session` stored as `message_id`, if it is in `lane` (any
/// lane: `None`) after seq `after`.
pub async fn seq_of<C: GenericClient>(
    c: &C,
    session: &str,
    message_id: &str,
    lane: Option<&str>,
    after: i64,
) -> Result<Option<i64>, PgError> {
    let rows = super::rows(
        c,
        "SELECT seq FROM memory_messages WHERE session_id = $1 AND message_id = $2
             AND ($3::text IS NULL OR thread_key = $3) AND seq > $4",
        &[&session, &message_id, &lane, &after],
    )
    .await?;
    Ok(rows.first().map(|r| r.get(0)))
}

/// The oldest stored message of `session` among `ids`: its seq.
pub async fn oldest_seq_of<C: GenericClient>(
    c: &C,
    session: &str,
    ids: &[&str],
) -> Result<Option<i64>, PgError> {
    if ids.is_empty() {
        return Ok(None);
    }
    let rows = super::rows(
        c,
        "SELECT min(seq) FROM memory_messages WHERE session_id = $1 AND message_id = ANY($2)",
        &[&session, &ids],
    )
    .await?;
    Ok(rows.first().and_then(|r| r.get(0)))
}

/// Whether `lane` holds a message with a seq strictly between `after` and `before`.
pub async fn lane_has_between<C: GenericClient>(
    c: &C,
    session: &str,
    lane: &str,
    after: i64,
    before: i64,
) -> Result<bool, PgError> {
    let rows = super::rows(
        c,
        "SELECT EXISTS (SELECT 1 FROM memory_messages
             WHERE session_id = $1 AND thread_key = $2 AND seq > $3 AND seq < $4)",
        &[&session, &lane, &after, &before],
    )
    .await?;
    Ok(rows.first().is_some_and(|r| r.get(0)))
}

/// How many user messages `lane` holds after seq `after` up to and including seq `to`.
pub async fn user_turns_between<C: GenericClient>(
    c: &C,
    session: &str,
    lane: &str,
    after: i64,
    to: i64,
) -> Result<usize, PgError> {
    let rows = super::rows(
        c,
        "SELECT count(*) FROM memory_messages WHERE session_id = $1 AND thread_key = $2
             AND seq > $3 AND seq <= $4 AND role = 'user'",
        &[&session, &lane, &after, &to],
    )
    .await?;
    Ok(rows
        .first()
        .map_or(0, |r| usize::try_from(r.get::<_, i64>(0)).unwrap_or(0)))
}

/// Whether `session` holds a message in a lane other than `lane`.
pub async fn has_other_lanes<C: GenericClient>(
    c: &C,
    session: &str,
    lane: &str,
) -> Result<bool, PgError> {
    let rows = super::rows(
        c,
        "SELECT EXISTS (SELECT 1 FROM memory_lane_stats
             WHERE session_id = $1 AND thread_key <> $2 AND messages > 0)",
        &[&session, &lane],
    )
    .await?;
    Ok(rows.first().is_some_and(|r| r.get(0)))
}

/// The rows of the session `session_token` outside the lane `lane_token` holding every
/// word of `phrases` (each a word's index terms), oldest first.
pub async fn rows_with_all_elsewhere<C: GenericClient>(
    c: &C,
    session_token: &str,
    lane_token: &str,
    phrases: &[Vec<String>],
) -> Result<Vec<i64>, PgError> {
    if phrases.iter().any(Vec::is_empty) {
        return Ok(Vec::new());
    }
    let words: Vec<String> = phrases.iter().map(|p| format!("({})", phrase(p))).collect();
    let query = format!(
        "{}:A & {} & !{}:A",
        lexeme(session_token),
        words.join(" & "),
        lexeme(lane_token)
    );
    let rows = super::rows(
        c,
        "SELECT seq FROM memory_messages WHERE words @@ $1::text::tsquery ORDER BY seq",
        &[&query],
    )
    .await?;
    Ok(rows.iter().map(|r| r.get(0)).collect())
}

/// The lanes of `session` other than `own` with a summary, in key order.
pub async fn summarized_lanes<C: GenericClient>(
    c: &C,
    session: &str,
    own: &str,
) -> Result<Vec<String>, PgError> {
    let rows = super::rows(
        c,
        "SELECT thread_key FROM memory_records WHERE session_id = $1 AND kind = 'thread_summary'
             AND thread_key <> $2 ORDER BY thread_key COLLATE \"C\"",
        &[&session, &own],
    )
    .await?;
    Ok(rows.iter().map(|r| r.get(0)).collect())
}

/// Up to `n` messages of `session`'s `lane` just before (`after` false, newest first) or just
/// after (`after` true, oldest first) the row `seq`, whole.
pub async fn lane_messages<C: GenericClient>(
    c: &C,
    session: &str,
    lane: &str,
    seq: i64,
    after: bool,
    n: usize,
) -> Result<Vec<ChatMessage>, PgError> {
    let limit = i64::try_from(n).unwrap_or(i64::MAX);
    let (side, order) = if after { (">", "ASC") } else { ("<", "DESC") };
    let rows = super::rows(
        c,
        &format!(
            "SELECT {MESSAGE_COLUMNS} FROM memory_messages
             WHERE session_id = $1 AND thread_key = $2 AND seq {side} $3
             ORDER BY seq {order} LIMIT $4"
        ),
        &[&session, &lane, &seq, &limit],
    )
    .await?;
    Ok(rows.iter().map(chat_message).collect())
}

/// A lane holding at most this many rows per row asked around is read whole between the
/// first and the last of them (its index only, in order), each row's neighbours found in
/// what was read; a larger lane is asked around each row, one index probe a side. A probe
/// costs what reading a hundred or so index entries in order does.
pub const SPAN_ROWS_PER_ROW: i64 = 64;

/// Up to `n` rows of `session` just before (newest first) and just after (oldest first)
/// each of `seqs` in its lane of `lanes`, in one statement.
pub async fn lanes_around<C: GenericClient>(
    c: &C,
    session: &str,
    lanes: &[&str],
    seqs: &[i64],
    n: usize,
) -> Result<Vec<RowsAround>, PgError> {
    let limit = i64::try_from(n).unwrap_or(i64::MAX);
    // Per lane, by its count in `memory_lane_stats`: the span of its rows asked around
    // (with `n` more each side), or each row's neighbours.
    let rows = super::rows(
        c,
        "WITH a AS (
             SELECT lane, seq, n FROM unnest($2::text[], $3::bigint[]) WITH ORDINALITY AS q (lane, seq, n)
         ), span AS (
             SELECT a.lane, min(a.seq) AS lo, max(a.seq) AS hi
             FROM a JOIN memory_lane_stats s ON s.session_id = $1 AND s.thread_key = a.lane
             GROUP BY a.lane, s.messages
             HAVING s.messages <= count(*) * $5
         )
         SELECT NULL::bigint, sp.lane, m.seq, false
         FROM span sp CROSS JOIN LATERAL (
             (SELECT seq FROM memory_messages
              WHERE session_id = $1 AND thread_key = sp.lane AND seq < sp.lo
              ORDER BY seq DESC LIMIT $4)
             UNION ALL
             (SELECT seq FROM memory_messages
              WHERE session_id = $1 AND thread_key = sp.lane AND seq >= sp.lo AND seq <= sp.hi)
             UNION ALL
             (SELECT seq FROM memory_messages
              WHERE session_id = $1 AND thread_key = sp.lane AND seq > sp.hi
              ORDER BY seq ASC LIMIT $4)
         ) m
         UNION ALL
         SELECT a.n, NULL, m.seq, m.seq > a.seq
         FROM a CROSS JOIN LATERAL (
             (SELECT seq FROM memory_messages
              WHERE session_id = $1 AND thread_key = a.lane AND seq < a.seq
              ORDER BY seq DESC LIMIT $4)
             UNION ALL
             (SELECT seq FROM memory_messages
              WHERE session_id = $1 AND thread_key = a.lane AND seq > a.seq
              ORDER BY seq ASC LIMIT $4)
         ) m
         WHERE a.lane NOT IN (SELECT lane FROM span)",
        &[&session, &lanes, &seqs, &limit, &SPAN_ROWS_PER_ROW],
    )
    .await?;
    let mut out: Vec<RowsAround> = vec![(Vec::new(), Vec::new()); seqs.len()];
    let mut spans: HashMap<String, Vec<i64>> = HashMap::new();
    for r in &rows {
        match (r.get::<_, Option<i64>>(0), r.get::<_, Option<String>>(1)) {
            (_, Some(lane)) => spans.entry(lane).or_default().push(r.get(2)),
            (Some(at), None) => {
                let at = usize::try_from(at - 1).unwrap_or(usize::MAX);
                if let Some((before, after)) = out.get_mut(at) {
                    if r.get::<_, bool>(3) {
                        after.push(r.get(2));
                    } else {
                        before.push(r.get(2));
                    }
                }
            }
            (None, None) => {}
        }
    }
    for rows in spans.values_mut() {
        rows.sort_unstable();
    }
    for ((lane, seq), (before, after)) in lanes.iter().zip(seqs).zip(&mut out) {
        if let Some(rows) = spans.get(*lane) {
            let below = rows.partition_point(|r| r < seq);
            let above = rows.partition_point(|r| r <= seq);
            before.extend(rows[..below].iter().rev().take(n));
            after.extend(rows[above..].iter().take(n));
        }
    }
    for (before, after) in &mut out {
        before.sort_unstable_by(|a, b| b.cmp(a));
        after.sort_unstable();
    }
    Ok(out)
}

/// The first `limit` rows of the scope `token` holding the word whose index terms are
/// `tokens`, oldest first (the messages read to tell whose a name is).
pub async fn first_rows<C: GenericClient>(
    c: &C,
    token: &str,
    tokens: &[String],
    limit: usize,
) -> Result<Vec<i64>, PgError> {
    let Some(query) = tsquery_literal(token, tokens) else {
        return Ok(Vec::new());
    };
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let rows = super::rows(
        c,
        "SELECT seq FROM memory_messages WHERE words @@ $1::text::tsquery ORDER BY seq LIMIT $2",
        &[&query, &limit],
    )
    .await?;
    Ok(rows.iter().map(|r| r.get(0)).collect())
}

/// The messages of `session` below seq `below` that a preference record came from: each
/// one's seq, lane, speaker and time, by the newest record first.
pub async fn stated_preference_rows<C: GenericClient>(
    c: &C,
    session: &str,
    below: i64,
) -> Result<Vec<(i64, String, Role, i64)>, PgError> {
    let rows = super::rows(
        c,
        "SELECT m.seq, m.thread_key, m.role, m.ts_ms FROM memory_records r
         JOIN memory_messages m ON m.session_id = r.session_id AND m.message_id = r.range_from
         WHERE r.session_id = $1 AND r.kind = 'preference' AND m.seq < $2
         ORDER BY r.id DESC",
        &[&session, &below],
    )
    .await?;
    Ok(rows
        .iter()
        .map(|r| {
            (
                r.get(0),
                r.get(1),
                Role::parse(r.get::<_, &str>(2)),
                r.get(3),
            )
        })
        .collect())
}

/// The id of the newest assistant message of `lane` other than `except`.
pub async fn last_assistant_id<C: GenericClient>(
    c: &C,
    session: &str,
    lane: &str,
    except: &str,
) -> Result<Option<String>, PgError> {
    let rows = super::rows(
        c,
        "SELECT message_id FROM memory_messages
         WHERE session_id = $1 AND thread_key = $2 AND role = 'assistant' AND message_id <> $3
         ORDER BY seq DESC LIMIT 1",
        &[&session, &lane, &except],
    )
    .await?;
    Ok(rows.first().map(|r| r.get(0)))
}

/// A number that changes whenever any host stores a message (the last row number given
/// out): what a store's guesses worked out from the messages are good while it holds, as
/// SQLite's `data_version` is for a file.
pub async fn messages_version<C: GenericClient>(c: &C) -> Result<i64, PgError> {
    let rows = super::rows(
        c,
        "SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM memory_messages_seq_seq",
        &[],
    )
    .await?;
    Ok(rows.first().map_or(0, |r| r.get(0)))
}
