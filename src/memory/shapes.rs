//! The memory store's shapes as JavaScript passes and receives them, each read by serde
//! (unknown fields refused by name) and converted into the domain with `TryFrom`, or
//! written from the domain. The typings come from these structs.

use super::assemble::{Assembled, LayerTokens};
use super::history::{Conversation, HistoryOptions, HistoryRequest, Turn, Zone};
use super::store::{
    ChatMessage, Compaction, CompactionPlan, Focus, NewMessage, NewRecord, Record, RecordKind,
    Role, SummarySource,
};
use super::summary::{CompactionPolicy, Trigger};
use super::transcript::{parse_jsonl, OpenClawSession};
use crate::input::{whole_number, InputError, PackedFields};
use napi_derive::napi;
use serde::{Deserialize, Serialize};

/// Largest batch `ingest` takes in one call.
pub const MAX_BATCH: usize = 100_000;

/// `new MemoryStore(options)`.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MemoryStoreOptions {
    /// The SQLite file (created when missing; default `":memory:"`, a private database
    /// that ends with the store).
    pub path: Option<String>,
    /// When a thread is compacted and how much of it stays verbatim.
    pub compaction: Option<CompactionOptions>,
}

/// Compaction thresholds per thread key; a thread is compacted when any one is passed.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CompactionOptions {
    /// More unsummarized messages than this (default 30).
    pub max_recent_messages: Option<f64>,
    /// More estimated tokens of unsummarized messages than this (default 2,500).
    pub max_recent_tokens: Option<f64>,
    /// The summary older than this, in ms (default 86,400,000: 24 hours).
    pub max_summary_age_ms: Option<f64>,
    /// The newest messages a compaction leaves verbatim (default 10).
    pub keep_recent: Option<f64>,
}

impl TryFrom<Option<CompactionOptions>> for CompactionPolicy {
    type Error = InputError;

    fn try_from(o: Option<CompactionOptions>) -> Result<Self, InputError> {
        let mut p = CompactionPolicy::default();
        let Some(o) = o else { return Ok(p) };
        let count = |v: Option<f64>, name: &str| {
            v.map(|n| whole_number(n, &format!("options.compaction.{name}"), "count"))
                .transpose()
        };
        if let Some(n) = count(o.max_recent_messages, "maxRecentMessages")? {
            p.max_recent_messages = usize::try_from(n).unwrap_or(usize::MAX);
        }
        if let Some(n) = count(o.max_recent_tokens, "maxRecentTokens")? {
            p.max_recent_tokens = n;
        }
        if let Some(n) = count(o.max_summary_age_ms, "maxSummaryAgeMs")? {
            p.max_summary_age_ms = i64::try_from(n).unwrap_or(i64::MAX);
        }
        if let Some(n) = count(o.keep_recent, "keepRecent")? {
            p.keep_recent = usize::try_from(n).unwrap_or(usize::MAX);
        }
        Ok(p)
    }
}

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

/// `compact` / `planCompaction` options.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CompactOptions {
    /// Compact even below the thresholds, whenever there is more than `keepRecent` to fold.
    pub force: Option<bool>,
    /// Epoch milliseconds (default now): the summary's `updatedAt`, and its age.
    pub now: Option<f64>,
}

/// `applyCompaction` options.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApplyCompactionOptions {
    /// The new summary from the caller's summarizer (a model): used when it has the
    /// five sections in order (`Current goals / open questions:`, `Decisions made:`,
    /// `Important facts:`, `Recent outcomes:`, `Pending actions:`), each with at most 8
    /// `- ` items of at most 160 characters; otherwise the extractive summarizer writes
    /// it, and the result says why.
    #[napi(ts_type = "string | null")]
    pub summary: Option<String>,
    pub now: Option<f64>,
    /// The fencing token of the lock the caller holds for this lane
    /// (`RedisCoordinator.lock(...).fence`): the write is refused with
    /// `ERR_MEMORY_FENCED` when the summary was last written under a newer one (this
    /// caller's lock expired and another holder wrote). Omit it, or pass null for a
    /// process-local lock, to rely on the version check alone.
    #[napi(ts_type = "number | null")]
    pub fence: Option<f64>,
}

/// Why a thread is due for compaction.
fn trigger_name(t: Trigger) -> &'static str {
    match t {
        Trigger::Messages(_) => "messages",
        Trigger::Tokens(_) => "tokens",
        Trigger::Age(_) => "age",
        Trigger::Forced => "forced",
    }
}

/// Reads a trigger name back (`forced` for anything else: a plan's trigger is only
/// reported, never acted on).
pub fn trigger_of(name: &str) -> Trigger {
    match name {
        "messages" => Trigger::Messages(0),
        "tokens" => Trigger::Tokens(0),
        "age" => Trigger::Age(0),
        _ => Trigger::Forced,
    }
}

/// A compaction decided and not yet written, for a caller's summarizer: the previous
/// summary and the messages to fold into it. Hand it back to `applyCompaction` with the
/// new summary.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionPlanView {
    pub session_id: String,
    pub thread_key: String,
    #[napi(ts_type = "'messages' | 'tokens' | 'age' | 'forced'")]
    pub trigger: String,
    /// The summary the new one builds on (`null` for the first compaction).
    #[napi(ts_type = "string | null")]
    pub previous_summary: Option<String>,
    /// Its version (0 when none); the plan is stale once the stored summary moved on.
    pub previous_version: f64,
    /// The messages to fold, oldest first.
    pub messages: Vec<StoredChatMessage>,
    /// Messages left verbatim after them.
    pub kept: f64,
}

impl From<&CompactionPlan> for CompactionPlanView {
    #[allow(clippy::cast_precision_loss)] // versions and counts are far below 2^53
    fn from(p: &CompactionPlan) -> Self {
        CompactionPlanView {
            session_id: p.session_id.clone(),
            thread_key: p.thread_key.clone(),
            trigger: trigger_name(p.trigger).to_string(),
            previous_summary: p.previous.as_ref().map(|r| r.body.clone()),
            previous_version: p
                .previous
                .as_ref()
                .map_or(0.0, |r| r.summary_version as f64),
            messages: p.fold.iter().map(StoredChatMessage::from).collect(),
            kept: p.kept.len() as f64,
        }
    }
}

/// What a compaction did.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionResult {
    #[napi(ts_type = "'messages' | 'tokens' | 'age' | 'forced'")]
    pub trigger: String,
    /// Messages folded into the summary (they stay stored verbatim).
    pub folded: f64,
    pub summary_version: f64,
    /// Estimated tokens of the thread's context (summary and unsummarized messages)
    /// before and after.
    pub tokens_before: f64,
    pub tokens_after: f64,
    /// Who wrote the summary: `caller`, `extractive`, or `fallback` (the caller's text
    /// was not a valid summary; `fallbackReason` says why).
    #[napi(ts_type = "'caller' | 'extractive' | 'fallback'")]
    pub summarizer: String,
    #[napi(ts_type = "string | null")]
    pub fallback_reason: Option<String>,
    /// Facts, preferences and outcomes the folded messages stated, written as records of
    /// the lane with the message each came from (found by `search`; the assembly leaves
    /// the lane's own to its retrieved messages and shows other lanes' as memories).
    pub records: f64,
}

impl From<&Compaction> for CompactionResult {
    #[allow(clippy::cast_precision_loss)] // counts are far below 2^53
    fn from(c: &Compaction) -> Self {
        let (summarizer, reason) = match c.source {
            SummarySource::Extractive => ("extractive", None),
            SummarySource::Caller => ("caller", None),
            SummarySource::Fallback(why) => ("fallback", Some(why.to_string())),
        };
        CompactionResult {
            trigger: trigger_name(c.trigger).to_string(),
            folded: c.folded as f64,
            summary_version: c.summary_version as f64,
            tokens_before: c.tokens_before as f64,
            tokens_after: c.tokens_after as f64,
            summarizer: summarizer.to_string(),
            fallback_reason: reason,
            records: c.records as f64,
        }
    }
}

/// `assemble`'s input: one user message of one lane.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AssembleInput {
    pub session_id: String,
    /// The lane of the user's message (what `ingest` returned for it).
    pub thread_key: String,
    /// The system/developer policy; never dropped. Empty or absent: no section.
    pub policy: Option<String>,
    pub personality: Option<String>,
    /// The user's message; never dropped. Empty: no section (a gateway that sends the
    /// message itself assembles the layers around it).
    pub user_message: String,
    /// The text retrieval and lane naming go by (default: the user message).
    #[napi(ts_type = "string | null")]
    pub query: Option<String>,
    /// The text of the message the user replied to, labelled apart from theirs.
    #[napi(ts_type = "string | null")]
    pub quoted_reply: Option<String>,
    /// Recent messages of the lane, at most (default: as many as the budget gives them).
    pub recent: Option<f64>,
    /// Retrieved memory records, at most (default 5): facts, preferences and outcomes of
    /// the session that match the message, the summaries of lanes it names. A record a
    /// compaction wrote of this lane's own message is left to the retrieved messages,
    /// which bring the message itself.
    pub memories: Option<f64>,
    /// The hard budget of the whole context, in estimated tokens.
    pub budget_tokens: f64,
    /// The moment dates are told from, "3 days ago" (ms since 1970; default: now).
    pub now: Option<f64>,
    /// The conversation's messages the caller sends the model itself, oldest first (a
    /// host's transcript). They take the place of the recent messages: the result's
    /// `keepFrom` says from which one on to send them (whole turns, the newest first,
    /// the current one always), the rest of the budget going to the other layers.
    pub host_messages: Option<Vec<HostMessageInput>>,
    /// The most tokens the retrieved messages may take (default: what the budget leaves
    /// them). They change every turn, so a prompt cache never reuses them.
    pub retrieved_max_tokens: Option<f64>,
    /// Retrieve a match only when it holds at least this many of the question's search
    /// terms, and nothing for a question of fewer search terms ("hello", "thanks") or
    /// none of whose words is in the conversation. Default 1: any match, the question's
    /// common words ("where", "from") standing in when none of its other words is found.
    pub retrieved_min_terms: Option<f64>,
    /// How many turns come with each retrieved match on each side, at most (default 2,
    /// at most 16).
    pub retrieved_neighbours: Option<f64>,
    /// Text that changes every turn (a platform's thread block), put in `turn` before
    /// the retrieved messages; left out when it does not fit.
    pub turn_blocks: Option<Vec<String>>,
    /// Text that changes seldom (earlier conversations), put in `system` after the
    /// memories; left out when it does not fit.
    pub system_blocks: Option<Vec<String>>,
    /// A chat's history, built in the same call and put in `system` before
    /// `systemBlocks`: the `<thread-status>` block (unless `threadStatus` is false), then
    /// the chat's earlier conversations by calendar tiers in `<conversation_history>`, at
    /// most `maxTokens` (0: none), as `buildConversationContext` gives them. Its `now`
    /// defaults to this call's.
    pub history: Option<ConversationContextInput>,
    /// Whether the history starts with the `<thread-status>` block (default true).
    pub thread_status: Option<bool>,
}

/// A message the caller sends the model itself.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HostMessageInput {
    /// The id it was stored under with `ingest` (empty or absent: not stored).
    pub id: Option<String>,
    /// Written by the user (a kept window opens on a user message).
    pub user: bool,
    /// What it costs as the model receives it: the central estimate of its tokens
    /// (`tokenEstimate(JSON.stringify(message)).estimate`).
    pub tokens: f64,
}

/// Estimated tokens per layer of an assembled context (0 for a layer left out).
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, Serialize)]
pub struct AssembledTokens {
    pub policy: f64,
    pub personality: f64,
    pub summary: f64,
    pub memories: f64,
    /// The retrieved messages: older messages of the lane that match the query.
    pub passages: f64,
    pub recent: f64,
    pub quoted: f64,
    pub user: f64,
    /// The turn and system blocks kept.
    pub blocks: f64,
    /// The caller's messages kept (`hostMessages` from `keepFrom` on).
    pub host: f64,
    /// The whole text, counted as one (what the budget holds; each layer counted alone
    /// carries its own rounding margin, so the layers add up to more).
    pub total: f64,
}

impl From<&LayerTokens> for AssembledTokens {
    #[allow(clippy::cast_precision_loss)] // token counts are far below 2^53
    fn from(t: &LayerTokens) -> Self {
        AssembledTokens {
            policy: t.policy as f64,
            personality: t.personality as f64,
            summary: t.summary as f64,
            memories: t.memories as f64,
            passages: t.passages as f64,
            recent: t.recent as f64,
            quoted: t.quoted as f64,
            user: t.user as f64,
            blocks: t.blocks as f64,
            host: t.host as f64,
            total: t.total as f64,
        }
    }
}

/// An assembled context: the layers as XML-like sections in order, within the budget,
/// which they share (summary, memories and recent messages up to their shares, the
/// retrieved messages the rest, then what is left back to them); never without the
/// policy or the user message.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AssembledContext {
    pub text: String,
    pub tokens: AssembledTokens,
    pub memories_included: f64,
    /// Retrieved messages included (matches of the query and the turns around them).
    pub passages_included: f64,
    pub recent_included: f64,
    /// The policy and the user message alone exceed the budget (both still included).
    pub over_budget: bool,
    /// The part of `text` that changes seldom (policy, personality, summary, system
    /// blocks): for the system prompt, where a cached prefix can reuse it.
    pub system: String,
    /// The part of `text` that changes every turn (the memories retrieved for this
    /// message, turn blocks, retrieved and recent messages, quoted reply, user message):
    /// for after the cached prefix, with the newest user turn. `text` is `system`
    /// followed by `turn`.
    pub turn: String,
    /// With `hostMessages`: the index of the first one to send (0 without).
    pub keep_from: f64,
    /// With `hostMessages`: how many of the first ones the lane's summary stands for
    /// (never sent); a `keepFrom` past it means the budget left messages out.
    pub summary_covers: f64,
    /// `turnBlocks` left out because they did not fit the budget (the last first).
    pub turn_blocks_left_out: f64,
    /// `systemBlocks` left out because they did not fit the budget (the last first).
    pub system_blocks_left_out: f64,
}

impl From<&Assembled> for AssembledContext {
    #[allow(clippy::cast_precision_loss)] // counts are far below 2^53
    fn from(a: &Assembled) -> Self {
        AssembledContext {
            text: a.text.clone(),
            tokens: AssembledTokens::from(&a.tokens),
            memories_included: a.memories_included as f64,
            passages_included: a.passages_included as f64,
            system: a.system.clone(),
            turn: a.turn.clone(),
            keep_from: a.keep_from as f64,
            summary_covers: a.summary_covers as f64,
            turn_blocks_left_out: a.turn_blocks_left_out as f64,
            system_blocks_left_out: a.system_blocks_left_out as f64,
            recent_included: a.recent_included as f64,
            over_budget: a.over_budget,
        }
    }
}

/// One turn of a conversation, as `putConversation` takes it.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConversationTurn {
    #[napi(ts_type = "'user' | 'assistant'")]
    pub role: String,
    pub text: String,
    /// Epoch ms.
    #[napi(ts_type = "number | null")]
    pub ts: Option<f64>,
}

/// A conversation to store: one session's turns in a chat, given as `turns` or as a
/// JSONL `transcript` (Claude Code or Pi / OpenClaw entries; only user and assistant text
/// is kept).
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConversationInput {
    pub chat_id: String,
    pub session_id: String,
    /// Epoch ms (default: the first turn's time).
    pub started_at: Option<f64>,
    /// Epoch ms (default: the last turn's time).
    pub ended_at: Option<f64>,
    /// Shown for the conversation when it is summarized (default none: it is then left
    /// out of the summary tiers).
    pub summary: Option<String>,
    pub turns: Option<Vec<ConversationTurn>>,
    pub transcript: Option<String>,
}

fn epoch_ms(v: f64, path: &str) -> Result<i64, InputError> {
    if !v.is_finite() {
        return Err(InputError::range_error(
            path,
            format!("expected a finite number of ms, got {v}"),
        ));
    }
    #[allow(clippy::cast_possible_truncation)] // finite; saturates
    Ok(v as i64)
}

impl ConversationInput {
    /// The domain conversation, checked.
    pub fn to_conversation(&self) -> Result<Conversation, InputError> {
        for (name, v) in [("chatId", &self.chat_id), ("sessionId", &self.session_id)] {
            if v.is_empty() {
                return Err(InputError::type_error(
                    format!("conversation.{name}"),
                    "expected a non-empty string",
                ));
            }
        }
        let mut turns = match &self.transcript {
            Some(t) => parse_jsonl(t),
            None => Vec::new(),
        };
        for (i, t) in self.turns.iter().flatten().enumerate() {
            let human = match t.role.as_str() {
                "user" => true,
                "assistant" => false,
                other => {
                    return Err(InputError::type_error(
                        format!("conversation.turns[{i}].role"),
                        format!("expected 'user' or 'assistant', got {other:?}"),
                    ))
                }
            };
            let ts_ms =
                t.ts.map(|v| epoch_ms(v, &format!("conversation.turns[{i}].ts")))
                    .transpose()?;
            turns.push(Turn {
                human,
                text: t.text.clone(),
                ts_ms,
            });
        }
        let first = turns.iter().find_map(|t| t.ts_ms);
        let last = turns.iter().rev().find_map(|t| t.ts_ms);
        let started = match self.started_at {
            Some(v) => epoch_ms(v, "conversation.startedAt")?,
            None => first.ok_or_else(|| {
                InputError::type_error("conversation.startedAt", "required when no turn has a time")
            })?,
        };
        let ended = match self.ended_at {
            Some(v) => epoch_ms(v, "conversation.endedAt")?,
            None => last.unwrap_or(started),
        };
        if ended < started {
            return Err(InputError::range_error(
                "conversation.endedAt",
                "must not be before startedAt",
            ));
        }
        Ok(Conversation {
            chat_id: self.chat_id.clone(),
            session_id: self.session_id.clone(),
            started_at_ms: started,
            ended_at_ms: ended,
            summary: self.summary.clone().unwrap_or_default(),
            turns,
        })
    }
}

/// A UTC offset from an instant on.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UtcOffset {
    /// Epoch ms from which the offset holds.
    pub from: f64,
    /// Minutes east of UTC (`60` for UTC+01:00).
    pub minutes: f64,
}

/// `buildConversationContext` / `threadStatus` options.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConversationContextInput {
    pub chat_id: String,
    /// The hard budget in estimated tokens (default 30,000).
    pub max_tokens: Option<f64>,
    /// Epoch ms (default now).
    pub now: Option<f64>,
    /// An IANA time zone for calendar days and clock times (default `"UTC"`; never the
    /// machine's zone).
    pub time_zone: Option<String>,
    /// The zone as UTC offsets over time, for a zone `Intl` does not know (`timeZone` is
    /// turned into these).
    pub utc_offsets: Option<Vec<UtcOffset>>,
    /// Conversations that ended less than this long ago are the active one, in full and
    /// `just now` (default 1,800,000: 30 minutes).
    pub active_window_ms: Option<f64>,
    /// A message this soon after the last conversation's end continues it (default
    /// 1,800,000).
    pub continuation_window_ms: Option<f64>,
    /// A session to leave out of the history (the one whose messages the model gets
    /// anyway).
    pub exclude_session_id: Option<String>,
}

impl ConversationContextInput {
    /// The history these options ask for (with the `<thread-status>` block when
    /// `status`); `now_ms` stands in for a missing `now`.
    pub fn history_request(
        &self,
        now_ms: i64,
        status: bool,
    ) -> Result<HistoryRequest<'_>, InputError> {
        let now = self
            .now
            .map(|v| epoch_ms(v, "options.now"))
            .transpose()?
            .unwrap_or(now_ms);
        let zone = match &self.utc_offsets {
            None => Zone::utc(),
            Some(spans) => {
                let mut out = Vec::with_capacity(spans.len());
                for (i, s) in spans.iter().enumerate() {
                    let minutes =
                        whole_minutes(s.minutes, &format!("options.utcOffsets[{i}].minutes"))?;
                    out.push((
                        epoch_ms(s.from, &format!("options.utcOffsets[{i}].from"))?,
                        minutes,
                    ));
                }
                Zone::from_spans(out).ok_or_else(|| {
                    InputError::range_error(
                        "options.utcOffsets",
                        "expected at least one offset, each within ±18 hours",
                    )
                })?
            }
        };
        let mut opts = HistoryOptions::default();
        if let Some(v) = self.max_tokens {
            opts.max_tokens = whole_number(v, "options.maxTokens", "tokens")?;
        }
        if let Some(v) = self.active_window_ms {
            opts.active_window_ms =
                i64::try_from(whole_number(v, "options.activeWindowMs", "ms")?).unwrap_or(i64::MAX);
        }
        if let Some(v) = self.continuation_window_ms {
            opts.continuation_window_ms =
                i64::try_from(whole_number(v, "options.continuationWindowMs", "ms")?)
                    .unwrap_or(i64::MAX);
        }
        Ok(HistoryRequest {
            chat_id: &self.chat_id,
            now_ms: now,
            zone,
            opts,
            exclude_session: self.exclude_session_id.as_deref(),
            status,
        })
    }
}

fn whole_minutes(v: f64, path: &str) -> Result<i32, InputError> {
    if !v.is_finite() || v.fract() != 0.0 || v.abs() > 18.0 * 60.0 {
        return Err(InputError::range_error(
            path,
            format!("expected whole minutes within ±1,080, got {v}"),
        ));
    }
    #[allow(clippy::cast_possible_truncation)] // whole and within ±1,080
    Ok(v as i32)
}

/// Whether a new message continues the chat's last conversation.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, Serialize)]
pub struct ThreadStatus {
    pub continuation: bool,
    /// The `<thread-status>` block that tells the model so.
    pub block: String,
}

/// One session of an OpenClaw agent database, as `readOpenClawTranscripts` returns it:
/// ready for `putConversation` with the chat id of your choice.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenClawTranscript {
    pub session_id: String,
    pub session_key: String,
    pub started_at: f64,
    pub ended_at: f64,
    /// Its user and assistant text turns (tool calls, tool results, thinking and custom
    /// entries dropped).
    pub turns: Vec<ConversationTurn>,
    /// Events OpenClaw stored compressed, skipped (this package has no zstd decoder).
    pub compressed_skipped: f64,
}

impl From<OpenClawSession> for OpenClawTranscript {
    #[allow(clippy::cast_precision_loss)] // ms since 1970 and counts are far below 2^53
    fn from(s: OpenClawSession) -> Self {
        OpenClawTranscript {
            session_id: s.session_id,
            session_key: s.session_key,
            started_at: s.started_at_ms as f64,
            ended_at: s.ended_at_ms as f64,
            turns: s
                .turns
                .into_iter()
                .map(|t| ConversationTurn {
                    role: if t.human { "user" } else { "assistant" }.to_string(),
                    text: t.text,
                    ts: t.ts_ms.map(|ms| ms as f64),
                })
                .collect(),
            compressed_skipped: s.compressed_skipped as f64,
        }
    }
}
