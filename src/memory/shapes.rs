//! The memory store's shapes as JavaScript passes and receives them, each read by serde
//! (unknown fields refused by name) and converted into the domain with `TryFrom`, or
//! written from the domain. The typings come from these structs.

use super::store::{ChatMessage, Focus, NewMessage, NewRecord, Record, RecordKind, Role};
use crate::core::input::{whole_number, InputError, PackedFields};
use napi_derive::napi;
use serde::{Deserialize, Serialize};

/// Largest batch `ingest` takes in one call.
pub const MAX_BATCH: usize = 100_000;

/// A chat message to store.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MemoryMessage {
    /// The conversation it belongs to, chat-scoped (`telegram:chat:<chatId>`, or a
    /// gateway's session key).
    pub session_id: String,
    pub chat_id: String,
    /// Unique within the session; storing the same id again changes nothing.
    pub message_id: String,
    #[napi(ts_type = "'user' | 'assistant'")]
    pub role: String,
    pub text: String,
    /// Epoch milliseconds.
    pub ts: f64,
    /// The forum topic (Telegram `message_thread_id`), when in one.
    #[napi(ts_type = "string | null")]
    pub topic_id: Option<String>,
    /// The message it replies to, when it is a reply.
    #[napi(ts_type = "string | null")]
    pub reply_to: Option<String>,
}

impl MemoryMessage {
    /// The domain message; `path` names this message in errors (built only for one).
    pub fn to_new(&self, path: impl Fn() -> String) -> Result<NewMessage<'_>, InputError> {
        let role = match self.role.as_str() {
            "user" => Role::User,
            "assistant" => Role::Assistant,
            other => {
                return Err(InputError::type_error(
                    format!("{}.role", path()),
                    format!("expected 'user' or 'assistant', got {other:?}"),
                ))
            }
        };
        if !self.ts.is_finite() {
            return Err(InputError::range_error(
                format!("{}.ts", path()),
                format!("expected a finite number of ms, got {}", self.ts),
            ));
        }
        for (name, v) in [
            ("sessionId", &self.session_id),
            ("chatId", &self.chat_id),
            ("messageId", &self.message_id),
        ] {
            if v.is_empty() {
                return Err(InputError::type_error(
                    format!("{}.{name}", path()),
                    "expected a non-empty string",
                ));
            }
        }
        #[allow(clippy::cast_possible_truncation)] // finite, checked above; saturates
        let ts_ms = self.ts as i64;
        Ok(NewMessage {
            session_id: &self.session_id,
            chat_id: &self.chat_id,
            message_id: &self.message_id,
            role,
            text: &self.text,
            ts_ms,
            topic_id: self.topic_id.as_deref(),
            reply_to: self.reply_to.as_deref(),
        })
    }
}

/// `roles` entries of a packed batch.
pub const PACKED_USER: u8 = 0;
pub const PACKED_ASSISTANT: u8 = 1;

/// Decodes a packed batch of messages (what the JS side of `ingest` sends for plain
/// batches): per message, its session id, chat id, message id, text, topic id and reply
/// target (empty for none) back to back in `units` with their lengths in `lens`, its role
/// in `roles` and its time in `ts`. The messages are checked by [`MemoryMessage::to_new`]
/// as the JSON path checks them.
pub fn decode_packed(
    units: &[u16],
    lens: &[u32],
    roles: &[u8],
    ts: &[f64],
) -> Result<Vec<MemoryMessage>, InputError> {
    if roles.len() != ts.len() {
        return Err(InputError::type_error(
            "messages",
            "packed batch has as many roles as times",
        ));
    }
    let mut fields = PackedFields::new(units, lens, "messages");
    let mut out = Vec::with_capacity(roles.len());
    for (i, (&role, &ts)) in roles.iter().zip(ts).enumerate() {
        let at = |field: &str| format!("messages[{i}].{field}");
        let role = match role {
            PACKED_USER => "user",
            PACKED_ASSISTANT => "assistant",
            other => {
                return Err(InputError::range_error(
                    "messages",
                    format!("unknown packed role {other}"),
                ))
            }
        };
        let session_id = fields.id(|| at("sessionId"))?;
        let chat_id = fields.id(|| at("chatId"))?;
        let message_id = fields.id(|| at("messageId"))?;
        let text = fields.text()?;
        let topic_id = fields.id(|| at("topicId"))?;
        let reply_to = fields.id(|| at("replyTo"))?;
        out.push(MemoryMessage {
            session_id,
            chat_id,
            message_id,
            role: role.to_string(),
            text,
            ts,
            topic_id: (!topic_id.is_empty()).then_some(topic_id),
            reply_to: (!reply_to.is_empty()).then_some(reply_to),
        });
    }
    Ok(out)
}

/// What `ingest` did with one message.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct IngestedMessage {
    /// The thread key it is stored under: `topic:<chatId>:<topicId>`,
    /// `reply:<chatId>:<messageId>` (the lane of a reply chain) or `root:<chatId>`.
    pub thread_key: String,
    /// False when the message was stored before.
    pub ingested: bool,
    /// Set when its id was already taken by a message of another lane (a provider that
    /// reuses reply ids across threads): the id it is stored under instead,
    /// `<messageId>@<threadKey>`. Storing it again finds it there.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stored_as: Option<String>,
}

/// What `commitTurnReport` did with a turn.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, Serialize)]
pub struct CommittedTurn {
    /// `committed` the first time, `duplicate` (nothing written) for a key committed before.
    #[napi(ts_type = "'committed' | 'duplicate'")]
    pub status: String,
    /// Where each message went, in order (none for a duplicate).
    pub messages: Vec<IngestedMessage>,
}

/// A stored message without a vector (see `MemoryStore.messagesToEmbed`).
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageToEmbed {
    /// The id the message is stored under (what `setVectors` takes).
    pub message_id: String,
    pub text: String,
}

/// A stored chat message.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredChatMessage {
    pub message_id: String,
    pub thread_key: String,
    #[napi(ts_type = "'user' | 'assistant'")]
    pub role: String,
    pub text: String,
    pub ts: f64,
    #[napi(ts_type = "string | null")]
    pub reply_to: Option<String>,
}

impl From<&ChatMessage> for StoredChatMessage {
    #[allow(clippy::cast_precision_loss)] // ms since 1970 are far below 2^53
    fn from(m: &ChatMessage) -> Self {
        StoredChatMessage {
            message_id: m.message_id.clone(),
            thread_key: m.thread_key.clone(),
            role: m.role.as_str().to_string(),
            text: m.text.clone(),
            ts: m.ts_ms as f64,
            reply_to: m.reply_to.clone(),
        }
    }
}

/// The first and last message a summary covers.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MessageRange {
    pub from: String,
    pub to: String,
}

/// A memory record to write. Its body is redacted of anything that looks like a
/// credential before it is stored.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MemoryRecordInput {
    pub session_id: String,
    #[napi(ts_type = "MemoryRecordKind")]
    pub kind: String,
    /// The lane of a thread summary or thread state; empty or absent for session-wide
    /// records.
    pub thread_key: Option<String>,
    pub body: String,
    pub summary_version: Option<f64>,
    /// Epoch milliseconds (default now).
    pub updated_at: Option<f64>,
    #[napi(ts_type = "MessageRange | null")]
    pub message_range: Option<MessageRange>,
}

/// Reads a record kind; `path` names it in errors.
pub fn record_kind(kind: &str, path: &str) -> Result<RecordKind, InputError> {
    RecordKind::parse(kind).ok_or_else(|| {
        InputError::type_error(
            path,
            format!(
                "expected one of 'thread_summary', 'session_summary', 'thread_state', 'fact', 'preference', 'outcome', got {kind:?}"
            ),
        )
    })
}

impl MemoryRecordInput {
    /// The domain record, `now_ms` standing in for a missing `updatedAt`.
    pub fn to_new(&self, now_ms: i64) -> Result<NewRecord<'_>, InputError> {
        let kind = record_kind(&self.kind, "record.kind")?;
        let version = self
            .summary_version
            .map(|n| whole_number(n, "record.summaryVersion", "version"))
            .transpose()?
            .unwrap_or(0);
        let updated = self
            .updated_at
            .map(|n| whole_number(n, "record.updatedAt", "time"))
            .transpose()?
            .map_or(now_ms, |n| i64::try_from(n).unwrap_or(i64::MAX));
        Ok(NewRecord {
            session_id: &self.session_id,
            kind,
            thread_key: self.thread_key.as_deref().unwrap_or_default(),
            body: &self.body,
            summary_version: i64::try_from(version).unwrap_or(i64::MAX),
            updated_at_ms: updated,
            message_range: self
                .message_range
                .as_ref()
                .map(|r| (r.from.as_str(), r.to.as_str())),
        })
    }
}

/// A stored memory record.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MemoryRecord {
    pub id: f64,
    pub session_id: String,
    #[napi(ts_type = "MemoryRecordKind")]
    pub kind: String,
    /// Empty for session-wide records.
    pub thread_key: String,
    pub body: String,
    pub summary_version: f64,
    pub updated_at: f64,
    #[napi(ts_type = "MessageRange | null")]
    pub message_range: Option<MessageRange>,
    /// The id of the newer record that changes what this one said.
    #[napi(ts_type = "number | null")]
    pub superseded_by: Option<f64>,
}

impl From<&Record> for MemoryRecord {
    #[allow(clippy::cast_precision_loss)] // ids, versions and ms are far below 2^53
    fn from(r: &Record) -> Self {
        MemoryRecord {
            id: r.id as f64,
            session_id: r.session_id.clone(),
            kind: r.kind.as_str().to_string(),
            thread_key: r.thread_key.clone(),
            body: r.body.clone(),
            summary_version: r.summary_version as f64,
            updated_at: r.updated_at_ms as f64,
            message_range: r.message_range.as_ref().map(|(from, to)| MessageRange {
                from: from.clone(),
                to: to.clone(),
            }),
            superseded_by: r.superseded_by.map(|id| id as f64),
        }
    }
}

/// `search` options.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MemorySearchOptions {
    /// The lane whose own summary may be found (other lanes' summaries never are).
    pub thread_key: Option<String>,
    /// Most records (default 5).
    pub k: Option<f64>,
    /// Most estimated tokens of bodies in all (default 1,000).
    pub max_tokens: Option<f64>,
}

/// Whose memory `memory.tools(scope)` reaches.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MemoryToolsScope {
    /// The session (chat) the tools search; they reach nothing of any other.
    pub session_id: String,
    /// The lane the conversation is in: what `lane: "current"` searches.
    pub thread_key: Option<String>,
    /// The moment ages are told from ("3 days ago") and durations count back from, ms
    /// since 1970 (default: the clock at each call).
    pub now: Option<f64>,
    /// Who writes the chat's turns, by name, as `assemble` takes them: a search naming
    /// one ranks that speaker's turns first.
    pub speakers: Option<SpeakersInput>,
}

/// What the user's new message most likely refers to.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FocusAnchor {
    /// `reply_target`: the message it replies to; `last_assistant`: the newest assistant
    /// message of its lane; `pending_slot`: the lane's pending question, which it answers.
    #[napi(ts_type = "'reply_target' | 'last_assistant' | 'pending_slot'")]
    pub kind: String,
    /// The message (`reply_target`, `last_assistant`) or question (`pending_slot`) id.
    pub id: String,
    /// What the pending question expects (`pending_slot` only).
    #[napi(ts_type = "'yes_no' | 'number' | 'date' | 'email' | null")]
    pub expects: Option<String>,
}

impl From<Focus> for FocusAnchor {
    fn from(f: Focus) -> Self {
        let (kind, id, expects) = match f {
            Focus::ReplyTarget(id) => ("reply_target", id, None),
            Focus::LastAssistant(id) => ("last_assistant", id, None),
            Focus::PendingSlot(s) => (
                "pending_slot",
                s.question_id,
                Some(s.expects.as_str().to_string()),
            ),
        };
        FocusAnchor {
            kind: kind.to_string(),
            id,
            expects,
        }
    }
}

mod assemble;
mod compaction;
mod history;
mod options;
pub use assemble::*;
pub use compaction::*;
pub use history::*;
pub use options::*;
