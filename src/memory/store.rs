//! The memory store: chat messages kept verbatim by session and thread key, the focus
//! anchor of a new message, typed memory records, and retrieval over them.

use super::db::MemoryError;
use super::history::Conversation;
use super::kept::Weighed;
use super::message::{chat_row, RankingRow};
pub use super::message::{ChatMessage, NewMessage, Role};
use super::passages::terms::fts_quote;
use super::pg::link::PgLink;
use super::pg::{messages as pg_messages, reads};
use super::postings::KeptPostings;
use super::secrets::redact;
use super::summary::{statements, CompactionPolicy, Statement, Summary, Trigger};
use crate::core::keys::{thread_key, Placement};
use crate::core::tokens::{counted, counted_all};
pub(in crate::memory) use backend::{on_pg, Backend};
use rusqlite::{params, OptionalExtension};
use std::cell::RefCell;
use std::collections::HashMap;

/// The store over one SQLite file or one PostgreSQL database.
#[derive(Debug)]
pub struct MemoryStore {
    pub(super) db: Backend,
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
        Ok(Self::over(Backend::Lite(super::db::open(path)?)))
    }

    /// Connects to the PostgreSQL database `opts` names, bringing its schema up to date
    /// (see [`PgLink::connect`]). Called on a worker thread: it waits for the network.
    pub fn connect(opts: &crate::core::pg::PgOptions) -> Result<Self, MemoryError> {
        Ok(Self::over(Backend::Pg(Box::new(PgLink::connect(opts)?))))
    }

    /// Whether the store is on PostgreSQL.
    pub fn is_shared(&self) -> bool {
        matches!(self.db, Backend::Pg(_))
    }

    /// The SQLite connection of a store opened on a file (tests read it directly).
    #[cfg(test)]
    pub(crate) fn sqlite(&self) -> &rusqlite::Connection {
        match self.db.lite() {
            Ok(conn) => conn,
            Err(e) => panic!("{e}"),
        }
    }

    fn over(db: Backend) -> Self {
        MemoryStore {
            db,
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
        }
    }

    /// The thread key a stored message of `session` was filed under.
    pub fn lane_of(&self, session: &str, message_id: &str) -> Result<Option<String>, MemoryError> {
        match &self.db {
            // The lane alone (a reply's lookup while storing): no text read.
            Backend::Lite(conn) => Ok(conn
                .prepare_cached(
                    "SELECT thread_key FROM messages WHERE session_id = ?1 AND message_id = ?2",
                )?
                .query_row(params![session, message_id], |r| r.get(0))
                .optional()?),
            Backend::Pg(_) => Ok(self
                .message_by_id(session, message_id)?
                .map(|m| m.thread_key)),
        }
    }

    /// The newest `n` messages of a lane, oldest first.
    pub fn recent(
        &self,
        session: &str,
        lane: &str,
        n: usize,
    ) -> Result<Vec<ChatMessage>, MemoryError> {
        let conn = match &self.db {
            Backend::Lite(conn) => conn,
            Backend::Pg(link) => {
                return on_pg!(link, "reading a lane", |c| reads::recent(
                    c, session, lane, n
                ))
            }
        };
        let mut stmt = conn.prepare_cached(
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
                }) => self.seq_of(session, &to, None, 0)?,
                _ => None,
            },
        )
    }

    /// The seq of the message of `session` stored as `message_id`, if it is in `lane` (any
    /// lane: `None`) after seq `after`.
    fn seq_of(
        &self,
        session: &str,
        message_id: &str,
        lane: Option<&str>,
        after: i64,
    ) -> Result<Option<i64>, MemoryError> {
        match &self.db {
            Backend::Lite(conn) => Ok(conn
                .prepare_cached(
                    "SELECT seq FROM messages WHERE session_id = ?1 AND message_id = ?2
                     AND (?3 IS NULL OR thread_key = ?3) AND seq > ?4",
                )?
                .query_row(params![session, message_id, lane, after], |r| r.get(0))
                .optional()?),
            Backend::Pg(link) => on_pg!(link, "finding a message", |c| reads::seq_of(
                c, session, message_id, lane, after
            )),
        }
    }

    /// The messages of a lane that its summary does not cover yet, oldest first.
    pub fn unsummarized(&self, session: &str, lane: &str) -> Result<Vec<ChatMessage>, MemoryError> {
        let covered_to = self.covered_seq(session, lane)?.unwrap_or(0);
        let conn = match &self.db {
            Backend::Lite(conn) => conn,
            Backend::Pg(link) => {
                return on_pg!(link, "reading a lane", |c| reads::lane_after(
                    c, session, lane, covered_to
                ))
            }
        };
        let mut stmt = conn.prepare_cached(
            "SELECT seq, message_id, thread_key, role, text, ts_ms, reply_to FROM messages
             WHERE session_id = ?1 AND thread_key = ?2 AND seq > ?3 ORDER BY seq",
        )?;
        let rows = stmt.query_map(params![session, lane, covered_to], chat_row)?;
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
        let conn = match &self.db {
            Backend::Lite(conn) => conn,
            Backend::Pg(link) => {
                return on_pg!(link, "reading a lane", |c| reads::lane_has_between(
                    c, session, lane, after, oldest
                ))
            }
        };
        Ok(conn
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
        let Some(to) = self.seq_of(session, through, Some(lane), after)? else {
            return Ok(None);
        };
        let conn = match &self.db {
            Backend::Lite(conn) => conn,
            Backend::Pg(link) => {
                let n = on_pg!(link, "counting turns", |c| reads::user_turns_between(
                    c, session, lane, after, to
                ))?;
                return Ok(Some(n));
            }
        };
        let n: i64 = conn
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
        let lanes = match &self.db {
            Backend::Lite(conn) => conn
                .prepare_cached(
                    "SELECT thread_key FROM records WHERE session_id = ?1
                     AND kind = 'thread_summary' AND thread_key != ?2 ORDER BY thread_key",
                )?
                .query_map(params![session, own_lane], |r| r.get::<_, String>(0))?
                .collect::<Result<Vec<_>, _>>()?,
            Backend::Pg(link) => on_pg!(link, "reading summaries", |c| {
                reads::summarized_lanes(c, session, own_lane)
            })?,
        };
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
mod focus;
pub use focus::{Focus, PendingSlot, SlotType};
mod records;
pub(in crate::memory) use super::record::words::{changes, fts_queries, subject_words};
pub(in crate::memory) use super::record::{
    record_columns_of, RECORD_COLUMNS, SUPERSEDE_CANDIDATES, SUPERSEDE_MIN_SHARED,
};
pub use super::record::{NewRecord, Record, RecordKind};

mod backend;
mod compaction;
mod ingest;
pub use super::message::Ingested;
pub use compaction::{Compaction, CompactionPlan, PlannedCompaction, SummarySource};

#[cfg(test)]
mod tests;
