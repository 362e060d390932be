//! The memory store: chat messages kept verbatim by session and thread key, the focus
//! anchor of a new message, typed memory records, and retrieval over them.

use super::db::{self, MemoryError};
use super::history::{Conversation, Turn};
use super::keys::{thread_key, Placement};
use super::passages::{fts_quote, is_unsegmented};
use super::secrets::redact;
use super::summary::{statements, CompactionPolicy, Statement, Summary, Trigger};
use crate::tokens::{counted_all, estimate, Meter};
use rusqlite::{params, Connection, OptionalExtension};

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    User,
    Assistant,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }

    /// The role a stored row names (the table holds only these two).
    pub(super) fn parse(s: &str) -> Role {
        if s == "assistant" {
            Role::Assistant
        } else {
            Role::User
        }
    }
}

/// A chat message as the gateway hands it over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewMessage<'a> {
    pub session_id: &'a str,
    pub chat_id: &'a str,
    pub message_id: &'a str,
    pub role: Role,
    pub text: &'a str,
    pub ts_ms: i64,
    pub topic_id: Option<&'a str>,
    pub reply_to: Option<&'a str>,
}

/// A message as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatMessage {
    /// Its row in the store: the order messages were stored in.
    pub seq: i64,
    pub message_id: String,
    pub thread_key: String,
    pub role: Role,
    pub text: String,
    pub ts_ms: i64,
    pub reply_to: Option<String>,
}

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

/// The kinds of memory record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordKind {
    /// The rolling summary of one thread key (one per session and thread key).
    ThreadSummary,
    /// The rolling summary of a whole session (one per session).
    SessionSummary,
    /// A thread's state: a pending slot request, last anchors (one per thread key).
    ThreadState,
    Fact,
    Preference,
    Outcome,
}

impl RecordKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RecordKind::ThreadSummary => "thread_summary",
            RecordKind::SessionSummary => "session_summary",
            RecordKind::ThreadState => "thread_state",
            RecordKind::Fact => "fact",
            RecordKind::Preference => "preference",
            RecordKind::Outcome => "outcome",
        }
    }

    pub fn parse(s: &str) -> Option<RecordKind> {
        Some(match s {
            "thread_summary" => RecordKind::ThreadSummary,
            "session_summary" => RecordKind::SessionSummary,
            "thread_state" => RecordKind::ThreadState,
            "fact" => RecordKind::Fact,
            "preference" => RecordKind::Preference,
            "outcome" => RecordKind::Outcome,
            _ => return None,
        })
    }

    /// At most one record of this kind per session and thread key (written by upsert).
    fn single(self) -> bool {
        matches!(
            self,
            RecordKind::ThreadSummary | RecordKind::SessionSummary | RecordKind::ThreadState
        )
    }
}

/// A memory record as stored. Its body never holds what looks like a credential.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub id: i64,
    pub session_id: String,
    pub kind: RecordKind,
    /// Empty for records that belong to the session, not to one lane.
    pub thread_key: String,
    pub body: String,
    pub summary_version: i64,
    pub updated_at_ms: i64,
    /// The first and last message ids a summary covers.
    pub message_range: Option<(String, String)>,
}

/// A record to write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewRecord<'a> {
    pub session_id: &'a str,
    pub kind: RecordKind,
    pub thread_key: &'a str,
    pub body: &'a str,
    pub summary_version: i64,
    pub updated_at_ms: i64,
    pub message_range: Option<(&'a str, &'a str)>,
}

/// A question the assistant asked and is waiting for, kept in the lane's `thread_state`
/// record as `{"pending":{"questionId":"...","expects":"..."}}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingSlot {
    pub question_id: String,
    pub expects: SlotType,
}

/// What answer a pending slot waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlotType {
    /// yes / no and their common forms.
    YesNo,
    /// A number (digits, optionally signed, with a decimal point).
    Number,
    /// A date: `YYYY-MM-DD`, a weekday, today, tomorrow.
    Date,
    /// An email address.
    Email,
}

impl SlotType {
    pub fn parse(s: &str) -> Option<SlotType> {
        Some(match s {
            "yes_no" => SlotType::YesNo,
            "number" => SlotType::Number,
            "date" => SlotType::Date,
            "email" => SlotType::Email,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            SlotType::YesNo => "yes_no",
            SlotType::Number => "number",
            SlotType::Date => "date",
            SlotType::Email => "email",
        }
    }

    /// Whether `text` is an answer of this type (the whole message, not a mention inside a
    /// longer one: "no" answers a yes/no question, "no idea what the deploy did" does not).
    pub fn matches(self, text: &str) -> bool {
        let t = text
            .trim()
            .trim_end_matches(['.', '!'])
            .trim()
            .to_lowercase();
        match self {
            SlotType::YesNo => matches!(
                t.as_str(),
                "yes" | "y" | "yeah" | "yep" | "sure" | "ok" | "okay" | "no" | "n" | "nope" | "nah"
            ),
            SlotType::Number => {
                let digits = t.strip_prefix(['-', '+']).unwrap_or(&t);
                !digits.is_empty()
                    && digits
                        .chars()
                        .all(|c| c.is_ascii_digit() || c == '.' || c == ',')
                    && digits.chars().any(|c| c.is_ascii_digit())
            }
            SlotType::Date => {
                const WORDS: [&str; 9] = [
                    "today",
                    "tomorrow",
                    "monday",
                    "tuesday",
                    "wednesday",
                    "thursday",
                    "friday",
                    "saturday",
                    "sunday",
                ];
                let b = t.as_bytes();
                let iso = b.len() == 10
                    && b.iter().enumerate().all(|(i, c)| {
                        if i == 4 || i == 7 {
                            *c == b'-'
                        } else {
                            c.is_ascii_digit()
                        }
                    });
                iso || WORDS.contains(&t.as_str())
            }
            SlotType::Email => {
                let mut parts = t.split('@');
                matches!((parts.next(), parts.next(), parts.next()), (Some(a), Some(d), None)
                    if !a.is_empty() && d.contains('.') && !t.contains(char::is_whitespace))
            }
        }
    }
}

/// What the user's new message most likely refers to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Focus {
    /// The message it replies to.
    ReplyTarget(String),
    /// The newest assistant message of its lane.
    LastAssistant(String),
    /// The lane's pending question, which the message answers.
    PendingSlot(PendingSlot),
}

/// Messages and characters stored per (session, lane) by one batch.
type LaneTally = std::collections::HashMap<(String, String), (i64, i64)>;

/// The store over one SQLite file.
#[derive(Debug)]
pub struct MemoryStore {
    pub(super) conn: Connection,
}

/// A message from the columns `seq, message_id, thread_key, role, text, ts_ms, reply_to`.
pub(super) fn chat_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<ChatMessage> {
    Ok(ChatMessage {
        seq: r.get(0)?,
        message_id: r.get(1)?,
        thread_key: r.get(2)?,
        role: Role::parse(&r.get::<_, String>(3)?),
        text: r.get(4)?,
        ts_ms: r.get(5)?,
        reply_to: r.get(6)?,
    })
}

fn record_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Record> {
    let kind: String = r.get(2)?;
    let from: Option<String> = r.get(7)?;
    let to: Option<String> = r.get(8)?;
    Ok(Record {
        id: r.get(0)?,
        session_id: r.get(1)?,
        kind: RecordKind::parse(&kind).unwrap_or(RecordKind::Fact),
        thread_key: r.get(3)?,
        body: r.get(4)?,
        summary_version: r.get(5)?,
        updated_at_ms: r.get(6)?,
        message_range: from.zip(to),
    })
}

const RECORD_COLUMNS: &str =
    "id, session_id, kind, thread_key, body, summary_version, updated_at_ms, range_from, range_to";

impl MemoryStore {
    /// Opens the store at `path` (`:memory:` for a private in-memory one).
    pub fn open(path: &str) -> Result<Self, MemoryError> {
        Ok(MemoryStore {
            conn: db::open(path)?,
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

    /// What `m` most likely refers to, in this order: the message it replies to; else the
    /// newest assistant message of its lane `lane`, unless the lane has a pending question
    /// that `m` answers, which then wins; a pending question never captures a message that
    /// does not answer it.
    pub fn focus_anchor(
        &self,
        m: &NewMessage<'_>,
        lane: &str,
    ) -> Result<Option<Focus>, MemoryError> {
        if let Some(target) = m.reply_to.filter(|r| !r.is_empty()) {
            return Ok(Some(Focus::ReplyTarget(target.to_string())));
        }
        if let Some(slot) = self.pending_slot(m.session_id, lane)? {
            if slot.expects.matches(m.text) {
                return Ok(Some(Focus::PendingSlot(slot)));
            }
        }
        let last: Option<String> = self
            .conn
            .query_row(
                "SELECT message_id FROM messages
                 WHERE session_id = ?1 AND thread_key = ?2 AND role = 'assistant' AND message_id != ?3
                 ORDER BY seq DESC LIMIT 1",
                params![m.session_id, lane, m.message_id],
                |r| r.get(0),
            )
            .optional()?;
        Ok(last.map(Focus::LastAssistant))
    }

    /// The messages of a lane that its summary does not cover yet, oldest first.
    pub fn unsummarized(&self, session: &str, lane: &str) -> Result<Vec<ChatMessage>, MemoryError> {
        let covered_to: Option<i64> = match self.record(session, RecordKind::ThreadSummary, lane)? {
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
        };
        let mut stmt = self.conn.prepare_cached(
            "SELECT seq, message_id, thread_key, role, text, ts_ms, reply_to FROM messages
             WHERE session_id = ?1 AND thread_key = ?2 AND seq > ?3 ORDER BY seq",
        )?;
        let rows = stmt.query_map(params![session, lane, covered_to.unwrap_or(0)], chat_row)?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }

    /// The pending question of a lane, from its `thread_state` record.
    pub fn pending_slot(
        &self,
        session: &str,
        lane: &str,
    ) -> Result<Option<PendingSlot>, MemoryError> {
        let Some(state) = self.record(session, RecordKind::ThreadState, lane)? else {
            return Ok(None);
        };
        let v: serde_json::Value = serde_json::from_str(&state.body).unwrap_or_default();
        let pending = &v["pending"];
        let (Some(question), Some(expects)) = (
            pending["questionId"].as_str(),
            pending["expects"].as_str().and_then(SlotType::parse),
        ) else {
            return Ok(None);
        };
        Ok(Some(PendingSlot {
            question_id: question.to_string(),
            expects,
        }))
    }

    /// Writes a record, its body redacted of anything that looks like a credential.
    /// Summaries and thread state replace the lane's previous one; facts, preferences and
    /// outcomes are added. Returns the record's id.
    pub fn put_record(&mut self, r: &NewRecord<'_>) -> Result<i64, MemoryError> {
        let body = redact(r.body);
        let (from, to) = r.message_range.unzip();
        let lane = if r.kind == RecordKind::SessionSummary {
            ""
        } else {
            r.thread_key
        };
        if r.kind.single() {
            self.conn.execute(
                "INSERT INTO records (session_id, kind, thread_key, body, summary_version, updated_at_ms, range_from, range_to)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
                 ON CONFLICT (session_id, kind, thread_key)
                     WHERE kind IN ('thread_summary', 'session_summary', 'thread_state')
                 DO UPDATE SET body = excluded.body, summary_version = excluded.summary_version,
                     updated_at_ms = excluded.updated_at_ms, range_from = excluded.range_from,
                     range_to = excluded.range_to",
                params![r.session_id, r.kind.as_str(), lane, body, r.summary_version, r.updated_at_ms, from, to],
            )?;
            let id = self
                .record(r.session_id, r.kind, lane)?
                .map_or(0, |rec| rec.id);
            return Ok(id);
        }
        self.conn.execute(
            "INSERT INTO records (session_id, kind, thread_key, body, summary_version, updated_at_ms, range_from, range_to)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![r.session_id, r.kind.as_str(), lane, body, r.summary_version, r.updated_at_ms, from, to],
        )?;
        Ok(self.conn.last_insert_rowid())
    }

    /// The one record of a single kind (summary, thread state) for a session and lane.
    pub fn record(
        &self,
        session: &str,
        kind: RecordKind,
        lane: &str,
    ) -> Result<Option<Record>, MemoryError> {
        let lane = if kind == RecordKind::SessionSummary {
            ""
        } else {
            lane
        };
        let sql = format!(
            "SELECT {RECORD_COLUMNS} FROM records WHERE session_id = ?1 AND kind = ?2 AND thread_key = ?3
             ORDER BY id DESC LIMIT 1"
        );
        Ok(self
            .conn
            .query_row(&sql, params![session, kind.as_str(), lane], record_row)
            .optional()?)
    }

    /// The record of `session` whose id is `id` (`None` for another session's).
    pub fn record_by_id(&self, session: &str, id: i64) -> Result<Option<Record>, MemoryError> {
        let sql = format!("SELECT {RECORD_COLUMNS} FROM records WHERE id = ?1 AND session_id = ?2");
        Ok(self
            .conn
            .prepare_cached(&sql)?
            .query_row(params![id, session], record_row)
            .optional()?)
    }

    /// The records of `session` that match the words of `query`, best first by BM25, for
    /// the message's lane `lane`: long-term facts, preferences and outcomes of the session
    /// and the lane's own summary (never other lanes' summaries or state). Unsegmented
    /// text (Chinese, Japanese, ...) is matched through a trigram index. At most `k`
    /// records, and no more than `max_tokens` estimated tokens of bodies in all.
    pub fn search(
        &self,
        session: &str,
        query: &str,
        lane: &str,
        k: usize,
        max_tokens: u64,
    ) -> Result<Vec<Record>, MemoryError> {
        let (words, grams) = fts_queries(query);
        let mut hits: Vec<(f64, Record)> = Vec::new();
        for (table, q) in [("records_words", words), ("records_trigrams", grams)] {
            let Some(q) = q else { continue };
            let sql = format!(
                "SELECT {cols}, bm25({table}) AS score FROM {table} JOIN records r ON r.id = {table}.rowid
                 WHERE {table} MATCH ?1 AND r.session_id = ?2
                   AND (r.kind IN ('fact', 'preference', 'outcome')
                        OR (r.kind = 'thread_summary' AND r.thread_key = ?3))
                 ORDER BY score LIMIT {limit}",
                // Written in, not bound: SQLite plans a bound LIMIT again for every value.
                limit = i64::try_from(k).unwrap_or(i64::MAX),
                cols = RECORD_COLUMNS
                    .split(", ")
                    .map(|c| format!("r.{c}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            let mut stmt = self.conn.prepare_cached(&sql)?;
            // The score comes after the record's columns, so `record_row` reads the rest.
            let rows = stmt.query_map(params![q, session, lane], |r| {
                Ok((r.get::<_, f64>(9)?, record_row(r)?))
            })?;
            for row in rows {
                let (score, rec) = row?;
                if !hits.iter().any(|(_, h)| h.id == rec.id) {
                    hits.push((score, rec));
                }
            }
        }
        // BM25 in FTS5 is negative, lower is better; ties go to the newer record.
        hits.sort_by(|a, b| a.0.total_cmp(&b.0).then(b.1.id.cmp(&a.1.id)));
        let mut out = Vec::new();
        let meter = Meter::of_model(None);
        let mut used = 0.0;
        for (_, rec) in hits.into_iter().take(k) {
            let next = used + estimate(&rec.body);
            if !meter.fits(next, max_tokens) {
                break;
            }
            used = next;
            out.push(rec);
        }
        Ok(out)
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

    /// Stores a conversation (its summary redacted of anything that looks like a
    /// credential), replacing the one of the same chat and session.
    pub fn put_conversation(&mut self, c: &Conversation) -> Result<(), MemoryError> {
        let turns: Vec<serde_json::Value> = c
            .turns
            .iter()
            .map(|t| serde_json::json!({ "h": t.human, "t": t.text, "ts": t.ts_ms }))
            .collect();
        self.conn
            .prepare_cached(
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
                serde_json::Value::Array(turns).to_string()
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
        let mut stmt = self.conn.prepare_cached(
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
        Ok(self
            .conn
            .prepare_cached(
                "SELECT max(ended_at_ms) FROM conversations WHERE chat_id = ?1 AND ended_at_ms <= ?2",
            )?
            .query_row(params![chat, until_ms], |r| r.get(0))?)
    }
}

/// Turns as [`MemoryStore::put_conversation`] stored them.
fn stored_turns(json: &str) -> Vec<Turn> {
    let v: serde_json::Value = serde_json::from_str(json).unwrap_or_default();
    v.as_array()
        .map(|turns| {
            turns
                .iter()
                .map(|t| Turn {
                    human: t["h"].as_bool().unwrap_or(false),
                    text: t["t"].as_str().unwrap_or_default().to_string(),
                    ts_ms: t["ts"].as_i64(),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// FTS5 queries for the words of `text`: word terms (two characters or more) for the
/// word index, and the three-character windows of runs of unsegmented scripts for the
/// trigram index, each term quoted so no query syntax gets through.
fn fts_queries(text: &str) -> (Option<String>, Option<String>) {
    let mut words: Vec<String> = Vec::new();
    let mut grams: Vec<String> = Vec::new();
    for token in text.split(|c: char| !c.is_alphanumeric()) {
        if token.chars().count() < 2 {
            continue;
        }
        let unsegmented = token.chars().any(is_unsegmented);
        if unsegmented {
            // No word boundaries to go by: every three-character window is a term, and
            // BM25 ranks the records that share the most of them first.
            let chars: Vec<char> = token.chars().collect();
            for w in chars.windows(3) {
                let gram = fts_quote(&w.iter().collect::<String>());
                if !grams.contains(&gram) {
                    grams.push(gram);
                }
            }
        } else {
            let lower = token.to_lowercase();
            if !words.contains(&lower) {
                words.push(lower);
            }
        }
    }
    let join = |v: Vec<String>| (!v.is_empty()).then(|| v.join(" OR "));
    (
        join(words.iter().map(|w| fts_quote(w)).collect()),
        join(grams),
    )
}

mod compaction;
pub use compaction::{Compaction, CompactionPlan, PlannedCompaction, SummarySource};

#[cfg(test)]
mod tests;
