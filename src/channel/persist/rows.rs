//! The channel tables of the SQLite file: writing a store's changes in one transaction,
//! and reading a whole saved state back.

use super::codec::{self, CorruptRow};
use crate::channel::message::StoredMessage;
use crate::channel::store::journal::{
    Changes, ChannelMeta, DeletedChange, MessageKey, SavedStarter, SavedThread,
};
use crate::channel::store::{CachedMedia, FileLocation};
use crate::core::model::MediaRef;
use rusqlite::{params, Connection, OptionalExtension, Transaction};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// A file location's body (its channel and artifact id are the row's key).
#[derive(Serialize, Deserialize)]
struct SavedFile<'a> {
    message_id: Cow<'a, str>,
    media: Cow<'a, MediaRef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    url: Option<Cow<'a, str>>,
}

fn to_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn to_u64(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

/// Writes `changes` in `tx`. Media rows are written only while `media_max_bytes` is
/// above 0, and the oldest are dropped past it.
pub fn write(tx: &Transaction, changes: &Changes, media_max_bytes: u64) -> rusqlite::Result<()> {
    write_channels(tx, changes)?;
    write_messages(tx, "channel_window", &changes.window)?;
    write_messages(tx, "channel_orphans", &changes.orphans)?;
    write_deleted(tx, changes)?;
    write_threads(tx, changes)?;
    write_starters(tx, changes)?;
    write_files(tx, changes)?;
    write_users(tx, changes)?;
    if media_max_bytes > 0 {
        write_media(tx, &changes.media, media_max_bytes)?;
    }
    Ok(())
}

/// Writes the channels' names, platforms and deletion horizons of `changes`.
fn write_channels(tx: &Transaction, changes: &Changes) -> rusqlite::Result<()> {
    let mut up = tx.prepare_cached(
        "INSERT INTO channel_meta (channel, name, platform, workspace, history_loaded, horizon_secs, horizon_frac)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
         ON CONFLICT (channel) DO UPDATE SET name = ?2, platform = ?3, workspace = ?4,
           history_loaded = ?5, horizon_secs = ?6, horizon_frac = ?7",
    )?;
    for c in &changes.channels {
        let (secs, frac) = match c.deleted_horizon {
            Some((s, f)) => (Some(s), Some(f)),
            None => (None, None),
        };
        up.execute(params![
            c.id,
            c.name,
            c.platform,
            c.workspace,
            c.history_loaded,
            secs,
            frac
        ])?;
    }
    Ok(())
}

/// Writes the deletions remembered and forgotten of `changes`.
fn write_deleted(tx: &Transaction, changes: &Changes) -> rusqlite::Result<()> {
    let mut add = tx.prepare_cached(
        "INSERT OR IGNORE INTO channel_deleted (channel, id, key_secs, key_frac) VALUES (?1, ?2, ?3, ?4)",
    )?;
    let mut del =
        tx.prepare_cached("DELETE FROM channel_deleted WHERE channel = ?1 AND id = ?2")?;
    for d in &changes.deleted {
        match d {
            DeletedChange::Remembered { channel, id, key } => {
                add.execute(params![channel, id, key.0, key.1])?
            }
            DeletedChange::Forgotten { channel, id } => del.execute(params![channel, id])?,
        };
    }
    Ok(())
}

/// Writes the held threads of `changes`.
fn write_threads(tx: &Transaction, changes: &Changes) -> rusqlite::Result<()> {
    let mut up = tx.prepare_cached(
        "INSERT INTO channel_threads (channel, thread, written_at_ms, complete, replies, rootless) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT (channel, thread) DO UPDATE SET written_at_ms = ?3, complete = ?4, replies = ?5, rootless = ?6",
    )?;
    let mut del =
        tx.prepare_cached("DELETE FROM channel_threads WHERE channel = ?1 AND thread = ?2")?;
    for ((channel, thread), t) in &changes.threads {
        match t {
            Some(t) => up.execute(params![
                channel,
                thread,
                to_i64(t.written_at),
                t.complete,
                codec::encode_all(&t.replies),
                t.rootless
            ])?,
            None => del.execute(params![channel, thread])?,
        };
    }
    Ok(())
}

/// Writes the thread starters of `changes`.
fn write_starters(tx: &Transaction, changes: &Changes) -> rusqlite::Result<()> {
    let mut up = tx.prepare_cached(
        "INSERT INTO channel_starters (channel, thread, written_at_ms, body) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (channel, thread) DO UPDATE SET written_at_ms = ?3, body = ?4",
    )?;
    let mut del =
        tx.prepare_cached("DELETE FROM channel_starters WHERE channel = ?1 AND thread = ?2")?;
    for ((channel, thread), s) in &changes.starters {
        match s {
            Some(s) => up.execute(params![
                channel,
                thread,
                to_i64(s.written_at),
                codec::encode(&s.message)
            ])?,
            None => del.execute(params![channel, thread])?,
        };
    }
    Ok(())
}

/// Writes the file index of `changes`.
fn write_files(tx: &Transaction, changes: &Changes) -> rusqlite::Result<()> {
    let mut up = tx.prepare_cached(
        "INSERT INTO channel_files (channel, artifact, body) VALUES (?1, ?2, ?3)
         ON CONFLICT (channel, artifact) DO UPDATE SET body = ?3",
    )?;
    let mut del =
        tx.prepare_cached("DELETE FROM channel_files WHERE channel = ?1 AND artifact = ?2")?;
    for ((channel, artifact), f) in &changes.files {
        match f {
            Some(f) => {
                let body = serde_json::to_string(&SavedFile {
                    message_id: Cow::Borrowed(&f.message_id),
                    media: Cow::Borrowed(&f.media),
                    url: f.url.as_deref().map(Cow::Borrowed),
                })
                .unwrap_or_default();
                up.execute(params![channel, artifact, body])?
            }
            None => del.execute(params![channel, artifact])?,
        };
    }
    Ok(())
}

/// Writes the user directory of `changes`.
fn write_users(tx: &Transaction, changes: &Changes) -> rusqlite::Result<()> {
    let mut up = tx.prepare_cached(
        "INSERT INTO channel_users (user_id, display_name, is_bot) VALUES (?1, ?2, ?3)
         ON CONFLICT (user_id) DO UPDATE SET display_name = ?2, is_bot = ?3",
    )?;
    let mut del = tx.prepare_cached("DELETE FROM channel_users WHERE user_id = ?1")?;
    for (id, u) in &changes.users {
        match u {
            Some((name, is_bot)) => up.execute(params![id, name, is_bot])?,
            None => del.execute(params![id])?,
        };
    }
    Ok(())
}

/// Upserts or deletes messages keyed `(channel, id)` in `table` (the window, the orphan
/// replies: one shape, two tables).
fn write_messages(
    tx: &Transaction,
    table: &str,
    rows: &[(MessageKey, Option<StoredMessage>)],
) -> rusqlite::Result<()> {
    let mut up = tx.prepare_cached(&format!(
        "INSERT INTO {table} (channel, id, body) VALUES (?1, ?2, ?3)
         ON CONFLICT (channel, id) DO UPDATE SET body = ?3"
    ))?;
    let mut del = tx.prepare_cached(&format!(
        "DELETE FROM {table} WHERE channel = ?1 AND id = ?2"
    ))?;
    for ((channel, id), m) in rows {
        match m {
            Some(m) => up.execute(params![channel, id, codec::encode(m)])?,
            None => del.execute(params![channel, id])?,
        };
    }
    Ok(())
}

/// Saves downloaded media that fits the byte budget, dropping the oldest saved items
/// past it. Media that left the store's memory stays saved: the file has its own bound.
fn write_media(
    tx: &Transaction,
    media: &[(crate::channel::store::FileKey, Option<CachedMedia>)],
    max: u64,
) -> rusqlite::Result<()> {
    let mut wrote = false;
    {
        let mut up = tx.prepare_cached(
            "INSERT INTO channel_media (channel, artifact, media_type, filename, content_hash, fetched_at_ms, bytes)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
             ON CONFLICT (channel, artifact) DO UPDATE SET media_type = ?3, filename = ?4,
               content_hash = ?5, fetched_at_ms = ?6, bytes = ?7",
        )?;
        for (_, m) in media {
            let Some(m) = m.as_ref().filter(|m| m.bytes.len() as u64 <= max) else {
                continue;
            };
            up.execute(params![
                m.channel,
                m.artifact_id,
                m.media_type,
                m.filename,
                m.content_hash,
                to_i64(m.fetched_at),
                m.bytes
            ])?;
            wrote = true;
        }
    }
    if !wrote {
        return Ok(());
    }
    let mut total: i64 = tx.query_row(
        "SELECT COALESCE(SUM(length(bytes)), 0) FROM channel_media",
        [],
        |r| r.get(0),
    )?;
    while to_u64(total) > max {
        let oldest: Option<(i64, i64)> = tx
            .query_row(
                "SELECT seq, length(bytes) FROM channel_media ORDER BY seq LIMIT 1",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        let Some((seq, len)) = oldest else { break };
        tx.execute("DELETE FROM channel_media WHERE seq = ?1", params![seq])?;
        total -= len;
    }
    Ok(())
}

/// A whole saved state, with what could not be read (named, skipped).
#[derive(Debug, Default)]
pub struct Loaded {
    pub state: Changes,
    pub corrupt: Vec<CorruptRow>,
}

fn keep<T>(corrupt: &mut Vec<CorruptRow>, what: &str, r: Result<T, CorruptRow>) -> Option<T> {
    match r {
        Ok(v) => Some(v),
        Err(e) => {
            corrupt.push(CorruptRow(format!("{what}: {e}")));
            None
        }
    }
}

/// Reads every saved channel row (media only while `media_max_bytes` is above 0).
pub fn load(conn: &Connection, media_max_bytes: u64) -> rusqlite::Result<Loaded> {
    let mut out = Loaded::default();
    let corrupt = &mut out.corrupt;
    let s = &mut out.state;
    load_channels(conn, s)?;
    load_deleted(conn, s)?;
    load_window(conn, s, corrupt)?;
    load_orphans(conn, s, corrupt)?;
    load_threads(conn, s, corrupt)?;
    load_starters(conn, s, corrupt)?;
    load_files(conn, s, corrupt)?;
    load_users(conn, s)?;
    if media_max_bytes > 0 {
        load_media(conn, s)?;
    }
    Ok(out)
}

/// Loads the channels' names, platforms and deletion horizons.
fn load_channels(conn: &Connection, s: &mut Changes) -> rusqlite::Result<()> {
    let mut q = conn.prepare(
        "SELECT channel, name, platform, workspace, history_loaded, horizon_secs, horizon_frac FROM channel_meta",
    )?;
    let rows = q.query_map([], |r| {
        let secs: Option<i64> = r.get(5)?;
        let frac: Option<u32> = r.get(6)?;
        Ok(ChannelMeta {
            id: r.get(0)?,
            name: r.get(1)?,
            platform: r.get(2)?,
            workspace: r.get(3)?,
            history_loaded: r.get(4)?,
            deleted_horizon: secs.zip(frac),
        })
    })?;
    for c in rows {
        s.channels.push(c?);
    }
    Ok(())
}

/// Loads the deletions remembered, oldest first.
fn load_deleted(conn: &Connection, s: &mut Changes) -> rusqlite::Result<()> {
    let mut q =
        conn.prepare("SELECT channel, id, key_secs, key_frac FROM channel_deleted ORDER BY seq")?;
    let rows = q.query_map([], |r| {
        Ok(DeletedChange::Remembered {
            channel: r.get(0)?,
            id: r.get(1)?,
            key: (r.get(2)?, r.get(3)?),
        })
    })?;
    for d in rows {
        s.deleted.push(d?);
    }
    Ok(())
}

/// Loads each channel's window of messages.
fn load_window(
    conn: &Connection,
    s: &mut Changes,
    corrupt: &mut Vec<CorruptRow>,
) -> rusqlite::Result<()> {
    let mut q = conn.prepare("SELECT channel, id, body FROM channel_window")?;
    let mut rows = q.query([])?;
    while let Some(r) = rows.next()? {
        let (channel, id, body): (String, String, String) = (r.get(0)?, r.get(1)?, r.get(2)?);
        let what = format!("window message {id:?} of {channel:?}");
        if let Some(m) = keep(corrupt, &what, codec::decode(&body)) {
            s.window.push(((channel, id), Some(m)));
        }
    }
    Ok(())
}

/// Loads the replies held without their thread, oldest first.
fn load_orphans(
    conn: &Connection,
    s: &mut Changes,
    corrupt: &mut Vec<CorruptRow>,
) -> rusqlite::Result<()> {
    let mut q = conn.prepare("SELECT channel, id, body FROM channel_orphans ORDER BY seq")?;
    let mut rows = q.query([])?;
    while let Some(r) = rows.next()? {
        let (channel, id, body): (String, String, String) = (r.get(0)?, r.get(1)?, r.get(2)?);
        let what = format!("reply {id:?} of {channel:?}");
        if let Some(m) = keep(corrupt, &what, codec::decode(&body)) {
            s.orphans.push(((channel, id), Some(m)));
        }
    }
    Ok(())
}

/// Loads the held threads, oldest written first.
fn load_threads(
    conn: &Connection,
    s: &mut Changes,
    corrupt: &mut Vec<CorruptRow>,
) -> rusqlite::Result<()> {
    let mut q = conn.prepare(
        "SELECT channel, thread, written_at_ms, complete, replies, rootless FROM channel_threads ORDER BY written_at_ms",
    )?;
    let mut rows = q.query([])?;
    while let Some(r) = rows.next()? {
        let (channel, thread): (String, String) = (r.get(0)?, r.get(1)?);
        let written_at = to_u64(r.get(2)?);
        let complete: bool = r.get(3)?;
        let body: String = r.get(4)?;
        let rootless: bool = r.get(5)?;
        let what = format!("thread {thread:?} of {channel:?}");
        if let Some(replies) = keep(corrupt, &what, codec::decode_all(&body)) {
            let t = SavedThread {
                written_at,
                complete,
                rootless,
                replies,
            };
            s.threads.push(((channel, thread), Some(t)));
        }
    }
    Ok(())
}

/// Loads the thread starters, oldest written first.
fn load_starters(
    conn: &Connection,
    s: &mut Changes,
    corrupt: &mut Vec<CorruptRow>,
) -> rusqlite::Result<()> {
    let mut q = conn.prepare(
        "SELECT channel, thread, written_at_ms, body FROM channel_starters ORDER BY written_at_ms",
    )?;
    let mut rows = q.query([])?;
    while let Some(r) = rows.next()? {
        let (channel, thread): (String, String) = (r.get(0)?, r.get(1)?);
        let written_at = to_u64(r.get(2)?);
        let body: String = r.get(3)?;
        let what = format!("thread starter {thread:?} of {channel:?}");
        if let Some(message) = keep(corrupt, &what, codec::decode(&body)) {
            s.starters.push((
                (channel, thread),
                Some(SavedStarter {
                    written_at,
                    message,
                }),
            ));
        }
    }
    Ok(())
}

/// Loads the file index, oldest first.
fn load_files(
    conn: &Connection,
    s: &mut Changes,
    corrupt: &mut Vec<CorruptRow>,
) -> rusqlite::Result<()> {
    let mut q = conn.prepare("SELECT channel, artifact, body FROM channel_files ORDER BY seq")?;
    let mut rows = q.query([])?;
    while let Some(r) = rows.next()? {
        let (channel, artifact, body): (String, String, String) = (r.get(0)?, r.get(1)?, r.get(2)?);
        let what = format!("file {artifact:?} of {channel:?}");
        let parsed =
            serde_json::from_str::<SavedFile>(&body).map_err(|e| CorruptRow(e.to_string()));
        if let Some(f) = keep(corrupt, &what, parsed) {
            let loc = FileLocation {
                channel: channel.clone(),
                message_id: f.message_id.into_owned(),
                media: f.media.into_owned(),
                url: f.url.map(Cow::into_owned),
            };
            s.files.push(((channel, artifact), Some(loc)));
        }
    }
    Ok(())
}

/// Loads the user directory.
fn load_users(conn: &Connection, s: &mut Changes) -> rusqlite::Result<()> {
    let mut q = conn.prepare("SELECT user_id, display_name, is_bot FROM channel_users")?;
    let rows = q.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, bool>(2)?,
        ))
    })?;
    for u in rows {
        let (id, name, is_bot) = u?;
        s.users.push((id, Some((name, is_bot))));
    }
    Ok(())
}

/// Loads the saved media, newest last (so the newest are the most recently used once loaded).
fn load_media(conn: &Connection, s: &mut Changes) -> rusqlite::Result<()> {
    let mut q = conn.prepare(
        "SELECT channel, artifact, media_type, filename, content_hash, fetched_at_ms, bytes FROM channel_media ORDER BY seq",
    )?;
    let rows = q.query_map([], |r| {
        Ok(CachedMedia {
            channel: r.get(0)?,
            artifact_id: r.get(1)?,
            media_type: r.get(2)?,
            filename: r.get(3)?,
            content_hash: r.get(4)?,
            fetched_at: to_u64(r.get(5)?),
            bytes: r.get(6)?,
        })
    })?;
    for m in rows {
        let m = m?;
        s.media
            .push(((m.channel.clone(), m.artifact_id.clone()), Some(m)));
    }
    Ok(())
}
