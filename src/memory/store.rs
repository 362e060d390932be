//! The memory store: chat messages kept verbatim by session and thread key, the focus
//! anchor of a new message, typed memory records, and retrieval over them.

use super::db::MemoryError;
use super::history::{Conversation, Turn};
use super::kept::Weighed;
use super::message::{chat_row, RankingRow};
pub use super::message::{ChatMessage, NewMessage, Role};
use super::passages::terms::{fts_quote, is_unsegmented};
use super::postings::KeptPostings;
use super::secrets::redact;
use super::summary::{statements, CompactionPolicy, Statement, Summary, Trigger};
use crate::core::keys::{thread_key, Placement};
use crate::core::tokens::{counted, counted_all, estimate, Meter};
use rusqlite::{params, Connection, OptionalExtension};
use std::cell::RefCell;
use std::collections::HashMap;

/// Where an ingested message went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ingested {
    /// The lane it is stored under (for a message stored before, the lane it was stored
    /// under then).
    pub thread_key: String,
    /// Whether it was written now.
    pub ingested: bool,
    /// The id it is stored under when its own was taken by a message of another lane:
    /// `<id>@<thread key>`.
    pub stored_as: Option<String>,
}

/// Messages and characters stored per (session, lane) by one batch.
type LaneTally = std::collections::HashMap<(String, String), (i64, i64)>;

/// The store over one SQLite file.
#[derive(Debug)]
pub struct MemoryStore {
    pub(super) conn: Connection,
    /// Whose name a word is in a session, once the conversation has told it for good
    /// (see [`MemoryStore::name_owner`]): worked out once, not on every question.
    /// By session, then name: looked up without a copy of either.
    pub(super) name_owners: RefCell<HashMap<String, HashMap<String, Option<Role>>>>,
    /// Whose name a word is by the messages stored so far, while no message is added
    /// (by this store or another connection to the file): see [`NameGuesses`].
    pub(super) name_guesses: RefCell<NameGuesses>,
    /// Messages this store has written: a change tells the guesses to start over.
    pub(super) writes: std::cell::Cell<u64>,
    /// What ranking reads of a stored message, by its row. A stored message is never
    /// changed or removed, so a row read once holds for good, whoever wrote it.
    pub(super) ranking_rows: RefCell<lru::LruCache<i64, RankingRow>>,
    /// The rows of a session or lane holding a search term, kept once read (see
    /// [`KeptPostings`]).
    pub(super) postings: RefCell<KeptPostings>,
    /// Stored messages once read, by row, with their session (never changed or removed,
    /// like the ranking rows), within [`MESSAGES_BYTES_KEPT`] of text.
    pub(super) messages: RefCell<Weighed<i64, (String, ChatMessage)>>,
    /// The lines an assembly rendered of stored messages, with their estimates (see
    /// [`KeptLines`]).
    pub(super) lines: RefCell<KeptLines>,
}

/// Lines rendered of stored messages and their estimates, by the message's row and the
/// UTC offset its time was shown at (a line is its message's time, who wrote it and its
/// text, so these say all it is), within [`MESSAGES_BYTES_KEPT`].
pub type KeptLines = Weighed<(i64, i64), (String, f64)>;

/// The most bytes of stored messages a store keeps read.
pub(super) const MESSAGES_BYTES_KEPT: usize = 16 << 20;

/// The most messages whose ranking rows a store keeps read (about 3 MiB).
pub(super) const RANKING_ROWS_KEPT: usize = 65_536;

/// The owners [`MemoryStore::name_owner`] worked out from fewer messages than make an
/// answer final, good while the messages are those they were worked out from: `stamp` is
/// the store's own writes and SQLite's `data_version` (which another connection's commit
/// changes) when they were.
#[derive(Debug, Default)]
pub(super) struct NameGuesses {
    pub(super) stamp: (u64, i64),
    pub(super) by_session: HashMap<String, HashMap<String, Option<Role>>>,
}

/// The most names [`MemoryStore::name_owner`] keeps worked out (then it starts over).
pub(super) const NAME_OWNERS_MAX: usize = 4_096;

impl MemoryStore {
    /// Opens the store at `path` (`:memory:` for a private in-memory one).
    pub fn open(path: &str) -> Result<Self, MemoryError> {
        Ok(MemoryStore {
            conn: super::db::open(path)?,
            name_owners: RefCell::new(HashMap::new()),
            name_guesses: RefCell::new(NameGuesses::default()),
            writes: std::cell::Cell::new(0),
            ranking_rows: RefCell::new(lru::LruCache::new(
                std::num::NonZeroUsize::new(RANKING_ROWS_KEPT)
                    .unwrap_or(std::num::NonZeroUsize::MIN),
            )),
            postings: RefCell::new(KeptPostings::default()),
            messages: RefCell::new(Weighed::new(MESSAGES_BYTES_KEPT)),
            lines: RefCell::new(Weighed::new(MESSAGES_BYTES_KEPT)),
        })
    }

    /// Stores a message verbatim and returns its thread key. Storing the same message id of
    /// a session again changes nothing and returns the key it was stored under.
    pub fn ingest(&mut self, m: &NewMessage<'_>) -> Result<String, MemoryError> {
        let mut out = self.ingest_batch(std::slice::from_ref(m))?;
        Ok(out.pop().map(|i| i.thread_key).unwrap_or_default())
    }

    /// Stores messages in one transaction: all of them or, on an error, none. Returns
    /// where each message went.
    pub fn ingest_batch(
        &mut self,
        messages: &[NewMessage<'_>],
    ) -> Result<Vec<Ingested>, MemoryError> {
        let tx = self.conn.unchecked_transaction()?;
        let mut tally = LaneTally::default();
        let out = messages
            .iter()
            .map(|m| self.insert(m, &mut tally))
            .collect::<Result<Vec<_>, _>>()?;
        self.add_lane_stats(&tally)?;
        tx.commit()?;
        Ok(out)
    }

    /// Stores one accepted turn of a host, keyed by the host's `advancement_key`, in one
    /// transaction: its messages and the key, or, when the key was committed before (a
    /// host retry), nothing. Where each message went when it was committed now; `None`
    /// for a duplicate.
    pub fn commit_turn(
        &mut self,
        advancement_key: &str,
        session: &str,
        messages: &[NewMessage<'_>],
        now_ms: i64,
    ) -> Result<Option<Vec<Ingested>>, MemoryError> {
        let tx = self.conn.unchecked_transaction()?;
        let fresh = self
            .conn
            .prepare_cached(
                "INSERT INTO turns (advancement_key, session_id, committed_at_ms) VALUES (?1, ?2, ?3)
                 ON CONFLICT (advancement_key) DO NOTHING",
            )?
            .execute(params![advancement_key, session, now_ms])?
            == 1;
        let mut stored = None;
        if fresh {
            let mut tally = LaneTally::default();
            let mut out = Vec::with_capacity(messages.len());
            for m in messages {
                out.push(self.insert(m, &mut tally)?);
            }
            self.add_lane_stats(&tally)?;
            stored = Some(out);
        }
        tx.commit()?;
        Ok(stored)
    }

    /// Adds what a batch stored to its lanes' statistics (one write per lane).
    fn add_lane_stats(&self, tally: &LaneTally) -> Result<(), MemoryError> {
        let mut stmt = self.conn.prepare_cached(
            "INSERT INTO lane_stats (session_id, thread_key, messages, chars) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (session_id, thread_key) DO UPDATE SET
                 messages = messages + excluded.messages, chars = chars + excluded.chars",
        )?;
        // In key order: the same file gets the same writes in the same order.
        let mut lanes: Vec<_> = tally.iter().collect();
        lanes.sort();
        for ((session, lane), (messages, chars)) in lanes {
            stmt.execute(params![session, lane, messages, chars])?;
        }
        Ok(())
    }

    /// Stores one message (see [`Ingested`]).
    fn insert(&self, m: &NewMessage<'_>, tally: &mut LaneTally) -> Result<Ingested, MemoryError> {
        let placement = Placement {
            chat_id: m.chat_id,
            topic_id: m.topic_id,
            reply_to: m.reply_to,
        };
        // Only a reply outside a topic looks up what is stored to find its lane.
        let key = thread_key(&placement, |id| {
            self.lane_of(m.session_id, id).ok().flatten()
        });
        if self.insert_as(m, m.message_id, &key, tally)? {
            return Ok(Ingested {
                thread_key: key,
                ingested: true,
                stored_as: None,
            });
        }
        // The id is stored already. In the same lane, or with the same role and text, it
        // is this message again: nothing is written. In another lane with other words, it
        // is another message under a reused id (a provider or proxy that numbers replies
        // per connection): it is stored under the id qualified by its lane, never dropped.
        let stored: Option<(String, String, String)> = self
            .conn
            .prepare_cached(
                "SELECT thread_key, role, text FROM messages WHERE session_id = ?1 AND message_id = ?2",
            )?
            .query_row(params![m.session_id, m.message_id], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })
            .optional()?;
        let stored = stored.map(|(lane, role, text)| {
            let same = role == m.role.as_str() && text == m.text;
            (lane, same)
        });
        match stored {
            Some((lane, false)) if lane != key => {
                let qualified = format!("{}@{key}", m.message_id);
                let ingested = self.insert_as(m, &qualified, &key, tally)?;
                Ok(Ingested {
                    thread_key: key,
                    ingested,
                    stored_as: Some(qualified),
                })
            }
            stored => Ok(Ingested {
                thread_key: stored.map_or(key, |(lane, _)| lane),
                ingested: false,
                stored_as: None,
            }),
        }
    }

    /// Writes `m` under `id` in `lane` unless the session holds that id; true when written.
    fn insert_as(
        &self,
        m: &NewMessage<'_>,
        id: &str,
        lane: &str,
        tally: &mut LaneTally,
    ) -> Result<bool, MemoryError> {
        let inserted = self
            .conn
            .prepare_cached(
                "INSERT INTO messages (session_id, message_id, thread_key, role, text, ts_ms, reply_to)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                 ON CONFLICT (session_id, message_id) DO NOTHING",
            )?
            .execute(params![
                m.session_id,
                id,
                lane,
                m.role.as_str(),
                m.text,
                m.ts_ms,
                m.reply_to
            ])?;
        if inserted == 0 {
            return Ok(false);
        }
        self.writes.set(self.writes.get().wrapping_add(1));
        self.index_message(self.conn.last_insert_rowid(), m.session_id, lane, m.text)?;
        let t = tally
            .entry((m.session_id.to_string(), lane.to_string()))
            .or_insert((0, 0));
        t.0 += 1;
        t.1 += i64::try_from(m.text.chars().count()).unwrap_or(i64::MAX);
        Ok(true)
    }

    /// The thread key a stored message of `session` was filed under.
    pub fn lane_of(&self, session: &str, message_id: &str) -> Result<Option<String>, MemoryError> {
        Ok(self
            .conn
            .prepare_cached(
                "SELECT thread_key FROM messages WHERE session_id = ?1 AND message_id = ?2",
            )?
            .query_row(params![session, message_id], |r| r.get(0))
            .optional()?)
    }

    /// The newest `n` messages of a lane, oldest first.
    pub fn recent(
        &self,
        session: &str,
        lane: &str,
        n: usize,
    ) -> Result<Vec<ChatMessage>, MemoryError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT seq, message_id, thread_key, role, text, ts_ms, reply_to FROM messages
             WHERE session_id = ?1 AND thread_key = ?2 ORDER BY seq DESC LIMIT ?3",
        )?;
        let limit = i64::try_from(n).unwrap_or(i64::MAX);
        let mut out = stmt
            .query_map(params![session, lane, limit], chat_row)?
            .collect::<Result<Vec<_>, _>>()?;
        out.reverse();
        Ok(out)
    }

    /// The seq of the last message a lane's summary covers (`None`: no summary yet).
    fn covered_seq(&self, session: &str, lane: &str) -> Result<Option<i64>, MemoryError> {
        Ok(
            match self.record(session, RecordKind::ThreadSummary, lane)? {
                Some(Record {
                    message_range: Some((_, to)),
                    ..
                }) => self
                    .conn
                    .query_row(
                        "SELECT seq FROM messages WHERE session_id = ?1 AND message_id = ?2",
                        params![session, to],
                        |r| r.get(0),
                    )
                    .optional()?,
                _ => None,
            },
        )
    }

    /// The messages of a lane that its summary does not cover yet, oldest first.
    pub fn unsummarized(&self, session: &str, lane: &str) -> Result<Vec<ChatMessage>, MemoryError> {
        let covered_to = self.covered_seq(session, lane)?;
        let mut stmt = self.conn.prepare_cached(
            "SELECT seq, message_id, thread_key, role, text, ts_ms, reply_to FROM messages
             WHERE session_id = ?1 AND thread_key = ?2 AND seq > ?3 ORDER BY seq",
        )?;
        let rows = stmt.query_map(params![session, lane, covered_to.unwrap_or(0)], chat_row)?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }

    /// Whether the lane holds a message after seq `after` (the last its summary covers: 0
    /// without one) older than every stored message of `ids` (any such message when none
    /// of `ids` is stored): what a host's transcript of the lane left out (an earlier
    /// assembly's window, a reset).
    pub fn lane_has_between(
        &self,
        session: &str,
        lane: &str,
        after: i64,
        ids: &[&str],
    ) -> Result<bool, MemoryError> {
        let oldest = self.oldest_seq_of(session, ids)?.unwrap_or(i64::MAX);
        Ok(self
            .conn
            .prepare_cached(
                "SELECT EXISTS (SELECT 1 FROM messages
             WHERE session_id = ?1 AND thread_key = ?2 AND seq > ?3 AND seq < ?4)",
            )?
            .query_row(params![session, lane, after, oldest], |r| r.get(0))?)
    }

    /// The user messages of a lane its summary does not cover yet, up to and including the
    /// one stored as `through` (`None` when `through` is not an unsummarized message of
    /// the lane): the turns a fold through it would take into the summary.
    pub fn unsummarized_turns_through(
        &self,
        session: &str,
        lane: &str,
        through: &str,
    ) -> Result<Option<usize>, MemoryError> {
        let after = self.covered_seq(session, lane)?.unwrap_or(0);
        self.user_turns_through(session, lane, after, through)
    }

    /// The user messages of a lane after seq `after` up to and including the one stored as
    /// `through` (`None` when `through` is not a message of the lane after `after`).
    pub fn user_turns_through(
        &self,
        session: &str,
        lane: &str,
        after: i64,
        through: &str,
    ) -> Result<Option<usize>, MemoryError> {
        let Some(to): Option<i64> = self
            .conn
            .query_row(
                "SELECT seq FROM messages WHERE session_id = ?1 AND message_id = ?2
                 AND thread_key = ?3 AND seq > ?4",
                params![session, through, lane, after],
                |r| r.get(0),
            )
            .optional()?
        else {
            return Ok(None);
        };
        let n: i64 = self
            .conn
            .prepare_cached(
                "SELECT count(*) FROM messages WHERE session_id = ?1 AND thread_key = ?2
             AND seq > ?3 AND seq <= ?4 AND role = 'user'",
            )?
            .query_row(params![session, lane, after, to], |r| r.get(0))?;
        Ok(Some(usize::try_from(n).unwrap_or(0)))
    }

    /// The other lanes of `session` with a summary that `text` names, in key order. A
    /// lane is named by its whole key (`topic:42:7`) or by the id its key ends with
    /// after `#`, `topic ` or `thread ` (`#7`, `topic 7`, `thread 1712.5`, any case).
    /// Retrieval stays in the message's own lane otherwise.
    pub fn named_lanes(
        &self,
        session: &str,
        text: &str,
        own_lane: &str,
    ) -> Result<Vec<String>, MemoryError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT thread_key FROM records WHERE session_id = ?1 AND kind = 'thread_summary'
             AND thread_key != ?2 ORDER BY thread_key",
        )?;
        let lanes = stmt
            .query_map(params![session, own_lane], |r| r.get::<_, String>(0))?
            .collect::<Result<Vec<_>, _>>()?;
        let lower = text.to_lowercase();
        let names_id = |id: &str| {
            ["#", "topic ", "thread "].iter().any(|p| {
                let needle = format!("{p}{}", id.to_lowercase());
                lower.match_indices(&needle).any(|(at, _)| {
                    let end = at + needle.len();
                    let before = lower[..at].chars().next_back();
                    let after = lower[end..].chars().next();
                    !before.is_some_and(char::is_alphanumeric)
                        && !after.is_some_and(|c| c.is_alphanumeric() || c == '.')
                })
            })
        };
        Ok(lanes
            .into_iter()
            .filter(|lane| {
                let id = lane.rsplit(':').next().unwrap_or_default();
                text.contains(lane.as_str()) || (!id.is_empty() && names_id(id))
            })
            .collect())
    }
}

mod conversations;
pub(in crate::memory) use conversations::{stored_turns, turns_json};
mod focus;
pub use focus::{Focus, PendingSlot, SlotType};
mod records;
pub(in crate::memory) use records::{
    best_within, changes, query_words, record_columns_of, subject_words, RECORD_COLUMNS,
    SUPERSEDE_CANDIDATES, SUPERSEDE_MIN_SHARED,
};
pub use records::{NewRecord, Record, RecordKind};

mod compaction;
pub use compaction::{Compaction, CompactionPlan, PlannedCompaction, SummarySource};

#[cfg(test)]
mod tests;
