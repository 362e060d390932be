//! Storing messages on PostgreSQL with the SQLite store's rules (`MemoryStore::ingest_batch`):
//! each message's lane from its topic or the lane of the message it replies to (an earlier
//! one of the same batch included), a message id stored once per session (the same id
//! again is a repeat; the id of another lane's message with other words is stored as
//! `<id>@<lane>`), each lane's counts, and the word index; all of a batch or none, in one
//! transaction and three round trips: what is stored of the batch's ids is read at once,
//! the batch is placed in order here, and its new rows are written in one statement.
//!
//! The transaction first takes each of its sessions' advisory locks (in order, so two
//! batches never wait on each other in a circle): the rows of a session are numbered in
//! the order they are committed, which a reader that keeps what it read relies on (a row
//! never appears below one it has seen).

use super::words::TsVector;
use crate::core::keys::{thread_key, Placement};
use crate::core::pg::Pg;
use crate::memory::db::MemoryError;
use crate::memory::message::{Ingested, NewMessage};
use crate::memory::passages::index_terms::IndexTerms;
use crate::memory::passages::terms::{lane_token, session_token};
use std::collections::{BTreeMap, HashMap, HashSet};

/// What is stored under a (session, id): its lane, role and text.
type Stored = HashMap<(String, String), (String, String, String)>;

/// A row to write.
struct Row<'a> {
    m: &'a NewMessage<'a>,
    id: String,
    lane: String,
    at: usize,
}

/// Stores `batch` (see the module docs) in a transaction of its own; where each message
/// went, as `ingest_batch` says.
pub async fn ingest_batch(
    pg: &Pg,
    terms: &IndexTerms,
    batch: &[NewMessage<'_>],
) -> Result<Vec<Ingested>, MemoryError> {
    if batch.is_empty() {
        return Ok(Vec::new());
    }
    pg.within("storing messages", async {
        let mut client = pg.client().await?;
        let tx = client.transaction().await?;
        let out = ingest_in(&tx, terms, batch).await?;
        tx.commit().await?;
        Ok(out)
    })
    .await
}

/// Stores one accepted turn of a host under its `advancement_key`, in one transaction:
/// its messages and the key, or nothing when the key was committed before (see
/// `MemoryStore::commit_turn`). Where each message went; `None` for a repeat.
pub async fn commit_turn(
    pg: &Pg,
    terms: &IndexTerms,
    advancement_key: &str,
    session: &str,
    batch: &[NewMessage<'_>],
    now_ms: i64,
) -> Result<Option<Vec<Ingested>>, MemoryError> {
    pg.within("committing a turn", async {
        let mut client = pg.client().await?;
        let tx = client.transaction().await?;
        let fresh = tx
            .execute(
                "INSERT INTO memory_turns (advancement_key, session_id, committed_at_ms)
                 VALUES ($1, $2, $3) ON CONFLICT (advancement_key) DO NOTHING",
                &[&advancement_key, &session, &now_ms],
            )
            .await?
            == 1;
        let out = match fresh {
            true => Some(ingest_in(&tx, terms, batch).await?),
            false => None,
        };
        tx.commit().await?;
        Ok(out)
    })
    .await
}

/// Stores `batch` through the transaction `tx`, taking its sessions' locks (in order, so
/// two batches never wait on each other in a circle).
pub async fn ingest_in(
    tx: &deadpool_postgres::Transaction<'_>,
    terms: &IndexTerms,
    batch: &[NewMessage<'_>],
) -> Result<Vec<Ingested>, MemoryError> {
    if batch.is_empty() {
        return Ok(Vec::new());
    }
    let mut sessions: Vec<&str> = batch.iter().map(|m| m.session_id).collect();
    sessions.sort_unstable();
    sessions.dedup();
    super::lock_sessions(tx, &sessions).await?;
    let ids: Vec<(&str, String)> = batch
        .iter()
        .flat_map(|m| {
            std::iter::once(m.message_id)
                .chain(m.reply_to)
                .map(|id| (m.session_id, id.to_string()))
        })
        .collect();
    let read = read_stored(tx, &ids).await?;
    let (_, first) = place(batch, &mut read.clone());
    // An id taken in another lane is stored qualified (`<id>@<lane>`): whether that is
    // stored too is read, and the batch placed again knowing it.
    let qualified: Vec<(&str, String)> = batch
        .iter()
        .zip(&first)
        .filter_map(|(m, i)| Some((m.session_id, i.stored_as.clone()?)))
        .collect();
    let mut stored = read;
    stored.extend(read_stored(tx, &qualified).await?);
    let (rows, mut out) = place(batch, &mut stored);
    let written = write_all(tx, terms, &rows).await?;
    let mut tally: BTreeMap<(&str, &str), (i64, i64)> = BTreeMap::new();
    for r in &rows {
        if written.contains(&r.at) {
            let t = tally
                .entry((r.m.session_id, r.lane.as_str()))
                .or_insert((0, 0));
            t.0 += 1;
            t.1 += i64::try_from(r.m.text.chars().count()).unwrap_or(i64::MAX);
        } else {
            // Written by another host since it was read: a repeat, as it would have
            // been read.
            out[r.at].ingested = false;
        }
    }
    // Every lane's counts in one statement, in key order.
    let mut cols: (Vec<&str>, Vec<&str>, Vec<i64>, Vec<i64>) = Default::default();
    for ((session, lane), (n, chars)) in tally {
        cols.0.push(session);
        cols.1.push(lane);
        cols.2.push(n);
        cols.3.push(chars);
    }
    if !cols.0.is_empty() {
        super::rows(
            tx,
            "INSERT INTO memory_lane_stats (session_id, thread_key, messages, chars)
             SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[])
             ON CONFLICT (session_id, thread_key) DO UPDATE SET
                 messages = memory_lane_stats.messages + excluded.messages,
                 chars = memory_lane_stats.chars + excluded.chars",
            &[&cols.0, &cols.1, &cols.2, &cols.3],
        )
        .await?;
    }
    Ok(out)
}

/// What is stored under each (session, id) of `ids`, read through the sessions' unique
/// index.
async fn read_stored(
    tx: &deadpool_postgres::Transaction<'_>,
    ids: &[(&str, String)],
) -> Result<Stored, crate::core::pg::PgError> {
    if ids.is_empty() {
        return Ok(Stored::new());
    }
    let sessions: Vec<&str> = ids.iter().map(|(s, _)| *s).collect();
    let wanted: Vec<&str> = ids.iter().map(|(_, i)| i.as_str()).collect();
    let rows = super::rows(
        tx,
        "SELECT m.session_id, m.message_id, m.thread_key, m.role, m.text
         FROM unnest($1::text[], $2::text[]) AS q (session_id, message_id)
         JOIN memory_messages m
           ON m.session_id = q.session_id AND m.message_id = q.message_id",
        &[&sessions, &wanted],
    )
    .await?;
    Ok(rows
        .iter()
        .map(|r| ((r.get(0), r.get(1)), (r.get(2), r.get(3), r.get(4))))
        .collect())
}

/// Places the batch in order against what is stored (and what it adds): the rows to write,
/// and where each message went.
fn place<'a>(batch: &'a [NewMessage<'a>], stored: &mut Stored) -> (Vec<Row<'a>>, Vec<Ingested>) {
    let mut rows = Vec::new();
    let mut out = Vec::with_capacity(batch.len());
    for (at, m) in batch.iter().enumerate() {
        let placement = Placement {
            chat_id: m.chat_id,
            topic_id: m.topic_id,
            reply_to: m.reply_to,
        };
        let key = thread_key(&placement, |id| {
            stored
                .get(&(m.session_id.to_string(), id.to_string()))
                .map(|s| s.0.clone())
        });
        let mut add = |id: &str, stored: &mut Stored| -> bool {
            let k = (m.session_id.to_string(), id.to_string());
            if stored.contains_key(&k) {
                return false;
            }
            stored.insert(
                k,
                (key.clone(), m.role.as_str().to_string(), m.text.to_string()),
            );
            rows.push(Row {
                m,
                id: id.to_string(),
                lane: key.clone(),
                at,
            });
            true
        };
        if add(m.message_id, stored) {
            out.push(Ingested {
                thread_key: key.clone(),
                ingested: true,
                stored_as: None,
            });
            continue;
        }
        let before = stored
            .get(&(m.session_id.to_string(), m.message_id.to_string()))
            .map(|(lane, role, text)| (lane.clone(), role == m.role.as_str() && text == m.text));
        match before {
            Some((lane, false)) if lane != key => {
                let qualified = format!("{}@{key}", m.message_id);
                let ingested = add(&qualified, stored);
                out.push(Ingested {
                    thread_key: key.clone(),
                    ingested,
                    stored_as: Some(qualified),
                });
            }
            before => out.push(Ingested {
                thread_key: before.map_or(key.clone(), |(lane, _)| lane),
                ingested: false,
                stored_as: None,
            }),
        }
    }
    (rows, out)
}

/// Rows written by one statement. A batch's next rows are tokenized while the server
/// writes these: at 1,000 messages, a tenth of the batch's time.
const WRITE_ROWS: usize = 250;

/// The word index's pending list (kB) while a batch's last rows are written: new rows wait
/// there, and every search through the index reads it whole, until the writer that fills
/// it merges it into the index.
const PENDING_KB: u32 = 64;
/// The pending list (kB) while a large batch's other rows are written: merged in bulk by
/// the last rows' write (over [`PENDING_KB`]), not every 60 rows.
const BULK_PENDING_KB: u32 = 4_096;

/// Writes `rows` in order, [`WRITE_ROWS`] a statement, the words of each statement's rows
/// made while the statement before is written; the batch positions of those written
/// (another host may have written one since it was read).
async fn write_all(
    tx: &deadpool_postgres::Transaction<'_>,
    terms: &IndexTerms,
    rows: &[Row<'_>],
) -> Result<HashSet<usize>, MemoryError> {
    let tokenize =
        |chunk: &[Row<'_>]| terms.of_messages(&chunk.iter().map(|r| r.m.text).collect::<Vec<_>>());
    let chunks: Vec<&[Row<'_>]> = rows.chunks(WRITE_ROWS).collect();
    let mut written = HashSet::new();
    let Some(first) = chunks.first() else {
        return Ok(written);
    };
    let mut made = tokenize(first)?;
    for (k, chunk) in chunks.iter().enumerate() {
        let last = k + 1 == chunks.len();
        if k == 0 || last {
            let kb = if last { PENDING_KB } else { BULK_PENDING_KB };
            tx.batch_execute(&format!("SET LOCAL gin_pending_list_limit = {kb}"))
                .await
                .map_err(crate::core::pg::PgError::from)?;
        }
        let next = async {
            // The runtime runs the connection's task between these: the write is on its
            // way to the server before the words are made.
            tokio::task::yield_now().await;
            tokio::task::yield_now().await;
            chunks.get(k + 1).map(|c| tokenize(c)).transpose()
        };
        let (done, next) = tokio::join!(write_rows(tx, chunk, &made), next);
        written.extend(done?);
        made = next?.unwrap_or_default();
    }
    Ok(written)
}

/// Writes `rows` (`made`: their words) in one statement, numbered in their order; the
/// batch positions of those written.
async fn write_rows(
    tx: &deadpool_postgres::Transaction<'_>,
    rows: &[Row<'_>],
    made: &[crate::memory::passages::index_terms::Terms],
) -> Result<HashSet<usize>, crate::core::pg::PgError> {
    if rows.is_empty() {
        return Ok(HashSet::new());
    }
    let mut cols: [Vec<Option<String>>; 6] = Default::default();
    let mut words: Vec<TsVector> = Vec::with_capacity(rows.len());
    let mut ts: Vec<i64> = Vec::with_capacity(rows.len());
    let mut at: Vec<i64> = Vec::with_capacity(rows.len());
    for (i, r) in rows.iter().enumerate() {
        let scope = [
            session_token(r.m.session_id),
            lane_token(r.m.session_id, &r.lane),
        ];
        words.push(TsVector::of(made.get(i).map_or(&Vec::new(), |t| t), &scope));
        let values = [
            Some(r.m.session_id.to_string()),
            Some(r.id.clone()),
            Some(r.lane.clone()),
            Some(r.m.role.as_str().to_string()),
            Some(r.m.text.replace('\0', "\u{FFFD}")),
            r.m.reply_to.map(str::to_string),
        ];
        for (col, v) in cols.iter_mut().zip(values) {
            col.push(v);
        }
        ts.push(r.m.ts_ms);
        at.push(i64::try_from(r.at).unwrap_or(i64::MAX));
    }
    let written = super::rows(
        tx,
        "INSERT INTO memory_messages
                 (session_id, message_id, thread_key, role, text, reply_to, words, ts_ms)
             SELECT s, i, l, r, t, p, w, ts
             FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[],
                         $6::text[], $7::tsvector[], $8::bigint[], $9::bigint[])
                  AS u (s, i, l, r, t, p, w, ts, at)
             ORDER BY at
             ON CONFLICT (session_id, message_id) DO NOTHING
             RETURNING message_id, session_id",
        &[
            &cols[0], &cols[1], &cols[2], &cols[3], &cols[4], &cols[5], &words, &ts, &at,
        ],
    )
    .await?;
    let done: HashSet<(String, String)> = written.iter().map(|r| (r.get(1), r.get(0))).collect();
    Ok(rows
        .iter()
        .filter(|r| done.contains(&(r.m.session_id.to_string(), r.id.clone())))
        .map(|r| r.at)
        .collect())
}
