//! What a compaction reads and writes on PostgreSQL besides records
//! ([`super::records`]), each the SQLite store's statement of the same job
//! (`crate::memory::store`'s compaction): the lane summary's version and fencing token,
//! locked for the transaction that checks and writes them, whether a statement is held
//! already, and the fence raised to the token of the lock a compaction wrote under.

use crate::core::pg::PgError;
use crate::memory::record::RecordKind;
use deadpool_postgres::GenericClient;

/// The lane's summary version and the fencing token it was last written under (both 0
/// without a summary), its row locked until the transaction `c` is in ends: two hosts
/// checking the same lane take turns, and the second sees what the first wrote.
pub async fn summary_state<C: GenericClient>(
    c: &C,
    session: &str,
    lane: &str,
) -> Result<(i64, i64), PgError> {
    let rows = super::rows(
        c,
        "SELECT summary_version, fence FROM memory_records
         WHERE session_id = $1 AND kind = 'thread_summary' AND thread_key = $2 FOR UPDATE",
        &[&session, &lane],
    )
    .await?;
    Ok(rows.first().map_or((0, 0), |r| (r.get(0), r.get(1))))
}

/// Whether `session` holds a record of `kind` whose body is `body` (as stored).
pub async fn statement_held<C: GenericClient>(
    c: &C,
    session: &str,
    kind: RecordKind,
    body: &str,
) -> Result<bool, PgError> {
    let body = body.replace('\0', "\u{FFFD}");
    let rows = super::rows(
        c,
        "SELECT EXISTS (SELECT 1 FROM memory_records
         WHERE session_id = $1 AND kind = $2 AND body = $3)",
        &[&session, &kind.as_str(), &body],
    )
    .await?;
    Ok(rows.first().is_some_and(|r| r.get(0)))
}

/// Raises the fencing token the lane's summary was written under to `fence` (never lowers it).
pub async fn raise_fence<C: GenericClient>(
    c: &C,
    session: &str,
    lane: &str,
    fence: i64,
) -> Result<(), PgError> {
    c.execute(
        "UPDATE memory_records SET fence = GREATEST(fence, $3)
         WHERE session_id = $1 AND kind = 'thread_summary' AND thread_key = $2",
        &[&session, &lane, &fence],
    )
    .await?;
    Ok(())
}
