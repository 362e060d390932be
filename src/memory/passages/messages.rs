//! The stored messages a search and an assembly read: by id, by row (kept once read: a
//! stored message never changes), and a lane's turns around one.

use super::{json_list, neighbours_sql};
use crate::memory::db::MemoryError;
use crate::memory::message::{chat_row, ChatMessage, RowsAround};
use crate::memory::pg::reads;
use crate::memory::store::{on_pg, Backend, MemoryStore};
use rusqlite::{params, OptionalExtension};

impl MemoryStore {
    /// The oldest stored message of `session` among `ids`: its seq.
    pub fn oldest_seq_of(&self, session: &str, ids: &[&str]) -> Result<Option<i64>, MemoryError> {
        if ids.is_empty() {
            return Ok(None);
        }
        let conn = match &self.db {
            Backend::Lite(conn) => conn,
            Backend::Pg(link) => {
                return on_pg!(link, "finding messages", |c| reads::oldest_seq_of(
                    c, session, ids
                ))
            }
        };
        let list = json_list(ids.iter().copied());
        Ok(conn
            .prepare_cached(
                "SELECT min(m.seq) FROM json_each(?2) j
                 JOIN messages m ON m.session_id = ?1 AND m.message_id = j.value",
            )?
            .query_row(params![session, list], |r| r.get(0))?)
    }

    /// The stored message of `session` whose id is `message_id`.
    pub fn message_by_id(
        &self,
        session: &str,
        message_id: &str,
    ) -> Result<Option<ChatMessage>, MemoryError> {
        match &self.db {
            Backend::Lite(conn) => Ok(conn
                .prepare_cached(
                    "SELECT seq, message_id, thread_key, role, text, ts_ms, reply_to FROM messages
                     WHERE session_id = ?1 AND message_id = ?2",
                )?
                .query_row(params![session, message_id], chat_row)
                .optional()?),
            Backend::Pg(link) => on_pg!(link, "finding a message", |c| reads::message_by_id(
                c, session, message_id
            )),
        }
    }

    /// The stored message of `session` at `seq` (`None` for another session's).
    pub fn message_in(&self, session: &str, seq: i64) -> Result<Option<ChatMessage>, MemoryError> {
        Ok(self.messages_at(session, &[seq])?.pop())
    }

    /// The stored messages of `session` at `seqs`, in that order (a row of another session,
    /// or none, left out): those kept from an earlier read, the rest read in one statement
    /// and kept.
    pub(in crate::memory) fn messages_at(
        &self,
        session: &str,
        seqs: &[i64],
    ) -> Result<Vec<ChatMessage>, MemoryError> {
        let mut unread: Vec<i64> = {
            let mut kept = self.messages.borrow_mut();
            seqs.iter()
                .copied()
                .filter(|s| kept.get(s).is_none())
                .collect()
        };
        unread.sort_unstable();
        unread.dedup();
        let mut read = std::collections::HashMap::new();
        if !unread.is_empty() {
            for (owner, m) in self.read_messages(&unread)? {
                read.insert(m.seq, (owner, m));
            }
        }
        let mut kept = self.messages.borrow_mut();
        let mut out = Vec::with_capacity(seqs.len());
        for seq in seqs {
            let found = match read.remove(seq) {
                Some(entry) => {
                    let weight = kept_weight(&entry);
                    let m = (entry.0 == session).then(|| entry.1.clone());
                    kept.put(*seq, entry, weight);
                    m
                }
                None => kept
                    .get(seq)
                    .filter(|(owner, _)| owner == session)
                    .map(|(_, m)| m.clone()),
            };
            out.extend(found);
        }
        Ok(out)
    }

    /// Keeps `read` (stored messages, each with its session) for [`MemoryStore::messages_at`].
    pub(in crate::memory) fn keep_messages(&self, read: Vec<(String, ChatMessage)>) {
        let mut kept = self.messages.borrow_mut();
        for entry in read {
            let weight = kept_weight(&entry);
            kept.put(entry.1.seq, entry, weight);
        }
    }

    /// The stored messages at `seqs`, each with its session, in no order.
    fn read_messages(&self, seqs: &[i64]) -> Result<Vec<(String, ChatMessage)>, MemoryError> {
        match &self.db {
            Backend::Lite(conn) => {
                let mut stmt = conn.prepare_cached(
                    "SELECT m.seq, m.message_id, m.thread_key, m.role, m.text, m.ts_ms,
                            m.reply_to, m.session_id
                     FROM json_each(?1) j JOIN messages m ON m.seq = j.value",
                )?;
                let rows = stmt.query_map(params![json_list(seqs.iter().copied())], |r| {
                    Ok((r.get(7)?, chat_row(r)?))
                })?;
                Ok(rows.collect::<Result<Vec<_>, _>>()?)
            }
            Backend::Pg(link) => on_pg!(link, "reading messages", |c| reads::messages_at(c, seqs)),
        }
    }

    /// Up to `n` messages of the message's lane just before (`after` false, newest first)
    /// or just after (`after` true, oldest first) the stored message at `seq`.
    pub fn lane_neighbours(
        &self,
        session: &str,
        lane: &str,
        seq: i64,
        after: bool,
        n: usize,
    ) -> Result<Vec<ChatMessage>, MemoryError> {
        if let Backend::Pg(link) = &self.db {
            // Read whole in one statement, and kept for the reads that follow.
            let read = on_pg!(link, "reading a lane", |c| reads::lane_messages(
                c, session, lane, seq, after, n
            ))?;
            self.keep_messages(
                read.iter()
                    .map(|m| (session.to_string(), m.clone()))
                    .collect(),
            );
            return Ok(read);
        }
        let seqs = self.lane_seqs(session, lane, seq, after, n)?;
        self.messages_at(session, &seqs)
    }

    /// The rows of [`MemoryStore::lane_neighbours`] on SQLite.
    fn lane_seqs(
        &self,
        session: &str,
        lane: &str,
        seq: i64,
        after: bool,
        n: usize,
    ) -> Result<Vec<i64>, MemoryError> {
        let mut stmt = self.db.lite()?.prepare_cached(&neighbours_sql(after, n))?;
        let rows = stmt.query_map(params![session, lane, seq], |r| r.get::<_, i64>(0))?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }

    /// The rows just before (newest first) and just after (oldest first) each of `at`
    /// (a lane and a row of it), `n` each side: on PostgreSQL in one statement (each is a
    /// round trip there), on SQLite one statement a side.
    pub fn lanes_around(
        &self,
        session: &str,
        at: &[(&str, i64)],
        n: usize,
    ) -> Result<Vec<RowsAround>, MemoryError> {
        match &self.db {
            Backend::Lite(_) => at
                .iter()
                .map(|&(lane, seq)| {
                    Ok((
                        self.lane_seqs(session, lane, seq, false, n)?,
                        self.lane_seqs(session, lane, seq, true, n)?,
                    ))
                })
                .collect(),
            Backend::Pg(link) => {
                let (lanes, seqs): (Vec<&str>, Vec<i64>) = at.iter().copied().unzip();
                on_pg!(link, "reading lanes", |c| reads::lanes_around(
                    c, session, &lanes, &seqs, n
                ))
            }
        }
    }
}

/// What a kept message weighs: its bytes, and a row's worth for the rest.
fn kept_weight((session, m): &(String, ChatMessage)) -> usize {
    session.len()
        + m.message_id.len()
        + m.thread_key.len()
        + m.text.len()
        + m.reply_to.as_ref().map_or(0, String::len)
        + 64
}
