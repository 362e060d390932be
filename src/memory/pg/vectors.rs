//! The host's vectors on PostgreSQL, as the SQLite store keeps them
//! (`crate::memory::passages::vectors`): one per stored message (its bytes as that module
//! writes them), replaced by a later one, each session's count kept with them, what is
//! left to embed read from the newest message back, and a scope's vectors read for the
//! nearest to a question (scored in Rust, as the SQLite store scores them).

use crate::core::pg::PgError;
use deadpool_postgres::GenericClient;
use std::collections::HashMap;

/// Keeps `entries` (a message id of `session` and its vector's bytes; a later entry for
/// the same id replaces an earlier one) through `c`, a transaction. Returns the ids no
/// message of the session has, in order (nothing is kept for them).
pub async fn put_vectors<C: GenericClient>(
    c: &C,
    session: &str,
    entries: &[(&str, Vec<u8>)],
) -> Result<Vec<String>, PgError> {
    let ids: Vec<&str> = entries.iter().map(|(id, _)| *id).collect();
    let found: HashMap<String, (i64, bool)> = super::rows(
        c,
        "SELECT m.message_id, m.seq, v.seq IS NOT NULL FROM memory_messages m
         LEFT JOIN memory_message_vectors v ON v.seq = m.seq
         WHERE m.session_id = $1 AND m.message_id = ANY($2)",
        &[&session, &ids],
    )
    .await?
    .iter()
    .map(|r| (r.get(0), (r.get(1), r.get(2))))
    .collect();
    let mut unknown = Vec::new();
    let mut last: HashMap<i64, &[u8]> = HashMap::new();
    for (id, blob) in entries {
        match found.get(*id) {
            Some((seq, _)) => {
                last.insert(*seq, blob);
            }
            None => unknown.push((*id).to_string()),
        }
    }
    let added = i64::try_from(
        found
            .values()
            .filter(|(seq, had)| !had && last.contains_key(seq))
            .count(),
    )
    .unwrap_or(0);
    let mut seqs: Vec<i64> = last.keys().copied().collect();
    seqs.sort_unstable();
    let blobs: Vec<&[u8]> = seqs.iter().map(|s| last[s]).collect();
    if !seqs.is_empty() {
        c.execute(
            "INSERT INTO memory_message_vectors (seq, vec)
             SELECT * FROM unnest($1::bigint[], $2::bytea[])
             ON CONFLICT (seq) DO UPDATE SET vec = excluded.vec",
            &[&seqs, &blobs],
        )
        .await?;
    }
    if added > 0 {
        c.execute(
            "INSERT INTO memory_vector_counts (session_id, vectors) VALUES ($1, $2)
             ON CONFLICT (session_id) DO UPDATE SET
                 vectors = memory_vector_counts.vectors + excluded.vectors",
            &[&session, &added],
        )
        .await?;
    }
    Ok(unknown)
}

/// Up to `limit` messages of `session` without a vector, the newest first: `(id, text)`.
/// When the session's count of vectors is its count of messages, nothing is read.
pub async fn unembedded<C: GenericClient>(
    c: &C,
    session: &str,
    limit: usize,
) -> Result<Vec<(String, String)>, PgError> {
    let counts = super::rows(
        c,
        "SELECT (SELECT coalesce(sum(messages), 0)::bigint FROM memory_lane_stats WHERE session_id = $1),
                (SELECT coalesce(max(vectors), 0)::bigint FROM memory_vector_counts WHERE session_id = $1)",
        &[&session],
    )
    .await?;
    let (messages, vectors): (i64, i64) = counts.first().map_or((0, 0), |r| (r.get(0), r.get(1)));
    let pending = messages - vectors;
    if pending <= 0 || limit == 0 {
        return Ok(Vec::new());
    }
    let limit = i64::try_from(limit).unwrap_or(i64::MAX).min(pending);
    let rows = super::rows(
        c,
        "SELECT m.message_id, m.text FROM memory_messages m
         WHERE m.session_id = $1
           AND NOT EXISTS (SELECT 1 FROM memory_message_vectors v WHERE v.seq = m.seq)
         ORDER BY m.seq DESC LIMIT $2",
        &[&session, &limit],
    )
    .await?;
    Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
}

/// The vectors of `session`'s messages below seq `below` (of `lane` when given): each
/// message's seq, vector bytes and time.
pub async fn scope_vectors<C: GenericClient>(
    c: &C,
    session: &str,
    below: i64,
    lane: Option<&str>,
) -> Result<Vec<(i64, Vec<u8>, i64)>, PgError> {
    let rows = super::rows(
        c,
        "SELECT v.seq, v.vec, m.ts_ms FROM memory_messages m
         JOIN memory_message_vectors v ON v.seq = m.seq
         WHERE m.session_id = $1 AND m.seq < $2 AND ($3::text IS NULL OR m.thread_key = $3)
         ORDER BY v.seq",
        &[&session, &below, &lane],
    )
    .await?;
    Ok(rows
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect())
}
