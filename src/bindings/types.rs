//! TypeScript shapes of what the exports take and return.
//!
//! These structs exist for the generated `index.d.ts` only (no conversion code is
//! generated for them): values cross the boundary as JSON and are read and written by the
//! serde types in [`crate::model`] and [`crate::manifest`], which these mirror field for
//! field. Outputs use the seed's snake_case names; inputs are camelCase.
#![allow(dead_code)]

use napi_derive::napi;

// ------------------------------------------------------------------ outputs (snake_case)

/// Who wrote a message.
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct Author {
    #[napi(js_name = "user_id")]
    pub user_id: String,
    #[napi(js_name = "display_name")]
    pub display_name: String,
    #[napi(js_name = "is_bot")]
    pub is_bot: bool,
}

/// A media attachment, by reference: the model asks for its bytes through a tool.
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct MediaRef {
    #[napi(js_name = "artifact_id")]
    pub artifact_id: String,
    #[napi(js_name = "media_type")]
    pub media_type: String,
    #[napi(ts_type = "string | null")]
    pub filename: String,
    #[napi(js_name = "byte_length")]
    pub byte_length: f64,
}

/// The channel a snapshot was taken in.
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct Channel {
    pub id: String,
    pub name: String,
    /// `"slack"`, `"discord"`, `"telegram"`, ...
    pub platform: String,
}

/// The message being answered, in full.
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct Anchor {
    #[napi(js_name = "message_id")]
    pub message_id: String,
    /// ISO-8601 UTC (`2026-04-10T20:30:00.123456Z`), converted from the platform ts.
    pub ts: String,
    pub author: Author,
    pub text: String,
    pub media: Vec<MediaRef>,
    #[napi(js_name = "thread_id", ts_type = "string | null")]
    pub thread_id: String,
}

/// Reply activity of a message that starts a thread.
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct ThreadActivity {
    #[napi(js_name = "reply_count")]
    pub reply_count: f64,
    #[napi(js_name = "replies_last_1h")]
    pub replies_last_1h: f64,
    #[napi(js_name = "last_reply_ts", ts_type = "string | null")]
    pub last_reply_ts: String,
}

/// A message near the anchor, in compact form.
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct AdjacentMessage {
    #[napi(js_name = "message_id")]
    pub message_id: String,
    /// ISO-8601 UTC.
    pub ts: String,
    pub author: Author,
    /// Whitespace collapsed, at most 150 UTF-16 units (`…` included).
    pub snippet: String,
    /// `null` when the message has no replies.
    #[napi(js_name = "thread_activity", ts_type = "ThreadActivity | null")]
    pub thread_activity: ThreadActivity,
    #[napi(js_name = "has_media")]
    pub has_media: bool,
    /// `":emoji_name: count"` strings, in the order given.
    pub reactions: Vec<String>,
}

/// The structured view of a channel around the message being answered.
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct ChannelSnapshot {
    #[napi(js_name = "schema_version", ts_type = "\"1.0\"")]
    pub schema_version: String,
    pub channel: Channel,
    pub anchor: Anchor,
    pub adjacent: Vec<AdjacentMessage>,
}

/// The message that started a thread, always in full.
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct ThreadRoot {
    #[napi(js_name = "message_id")]
    pub message_id: String,
    pub ts: String,
    pub author: Author,
    pub text: String,
    pub media: Vec<MediaRef>,
}

/// One reply; text over 300 tokens is cut to 1199 UTF-16 units plus `…`.
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct ThreadReply {
    #[napi(js_name = "message_id")]
    pub message_id: String,
    pub ts: String,
    pub author: Author,
    pub text: String,
    #[napi(js_name = "is_truncated")]
    pub is_truncated: bool,
    pub media: Vec<MediaRef>,
}

/// What the budget left out of a thread.
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct Truncation {
    /// Replies the thread has (the caller's `totalReplyCount` when larger than those given).
    #[napi(js_name = "total_replies")]
    pub total_replies: f64,
    #[napi(js_name = "included_replies")]
    pub included_replies: f64,
    #[napi(ts_type = "\"most_recent\"")]
    pub strategy: String,
    /// `[oldest omitted ts, newest omitted ts]`, or `null` when nothing was omitted.
    #[napi(js_name = "omitted_range_ts", ts_type = "[string, string] | null")]
    pub omitted_range_ts: String,
}

/// A thread: its root in full and the most recent replies that fit the budget.
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct ThreadContext {
    #[napi(js_name = "schema_version", ts_type = "\"1.0\"")]
    pub schema_version: String,
    /// The root's ts (Slack's `thread_ts`), unless the input names a `threadId`.
    #[napi(js_name = "thread_id")]
    pub thread_id: String,
    pub root: ThreadRoot,
    pub replies: Vec<ThreadReply>,
    pub truncation: Truncation,
}

/// How a ThreadContext used its budget.
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct ThreadTelemetry {
    pub thread_budget_tokens: f64,
    /// Estimated tokens of the root and included replies.
    pub actual_tokens: f64,
    /// Included replies that were cut to 300 tokens.
    pub messages_truncated: f64,
}

/// `buildThreadContextWithTelemetry`'s result.
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct ThreadContextWithTelemetry {
    #[napi(ts_type = "ThreadContext | null")]
    pub context: ThreadContext,
    pub telemetry: ThreadTelemetry,
}

/// The least a reply needs for `applyThreadBudget`.
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct BudgetReply {
    pub ts: String,
    pub text: String,
}

/// One media item already sent to the conversation (the seed's schema).
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct AttachmentRecord {
    #[napi(js_name = "artifact_id")]
    pub artifact_id: String,
    /// Human-readable name used when presenting the item to Claude.
    #[napi(js_name = "display_name")]
    pub display_name: String,
    #[napi(js_name = "media_type")]
    pub media_type: String,
    /// SHA-256 of the content bytes, lowercase hex.
    #[napi(js_name = "content_hash")]
    pub content_hash: String,
    #[napi(js_name = "source_message_id")]
    pub source_message_id: String,
    /// `null` for a top-level channel message.
    #[napi(js_name = "source_thread_id", ts_type = "string | null")]
    pub source_thread_id: String,
    #[napi(js_name = "included_at_turn")]
    pub included_at_turn: f64,
}

/// Media already sent to a conversation, keyed by artifact id. A plain object:
/// `JSON.stringify(manifest)` is its persisted form.
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct AttachmentManifest {
    #[napi(ts_type = "Record<string, AttachmentRecord>")]
    pub entries: String,
}

/// `checkAttachment`'s result: the kind of match and the record matched (`null` for none).
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct AttachmentCheck {
    /// `"artifact_id"` (same id recorded), `"content_hash"` (same bytes re-uploaded under
    /// a new id) or `"none"`.
    #[napi(js_name = "match", ts_type = "'artifact_id' | 'content_hash' | 'none'")]
    pub match_kind: String,
    #[napi(ts_type = "AttachmentRecord | null")]
    pub record: AttachmentRecord,
}

/// A session log entry as `loadManifestFromEntries` reads it; entries of other types are
/// skipped. `data` is the manifest's JSON text (or the manifest object itself).
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct SessionEntry {
    #[napi(js_name = "type")]
    pub kind: String,
    pub custom_type: Option<String>,
    #[napi(ts_type = "unknown")]
    pub data: Option<String>,
}

// ------------------------------------------------------------------ inputs (camelCase)

/// Who wrote a message, as channel intake gives it.
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct AuthorInput {
    pub user_id: String,
    pub display_name: String,
    /// Defaults to `false`.
    pub is_bot: Option<bool>,
}

/// A media item on a message.
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct MediaRefInput {
    pub artifact_id: String,
    pub media_type: String,
    #[napi(ts_type = "string | null")]
    pub filename: Option<String>,
    /// Size in bytes, a non-negative integer.
    pub byte_length: f64,
}

/// A reaction and how many people added it.
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct ReactionInput {
    /// Emoji name, with or without colons (`thumbsup` or `:thumbsup:`).
    pub name: String,
    pub count: f64,
}

/// One message as channel intake hands it over.
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct MessageInput {
    /// Platform message id; defaults to `ts` (on Slack the ts is the id).
    #[napi(ts_type = "string | null")]
    pub message_id: Option<String>,
    /// Platform timestamp (Slack: `"1712780400.123456"`); converted to ISO-8601 in output.
    pub ts: String,
    pub author: AuthorInput,
    pub text: String,
    #[napi(ts_type = "MediaRefInput[] | null")]
    pub media: Option<Vec<MediaRefInput>>,
    /// Set when the message has media not listed in `media`.
    #[napi(ts_type = "boolean | null")]
    pub has_media: Option<bool>,
    /// The thread the message belongs to (Slack: `thread_ts`).
    #[napi(ts_type = "string | null")]
    pub thread_id: Option<String>,
    #[napi(ts_type = "number | null")]
    pub reply_count: Option<f64>,
    /// Replies in the hour before the anchor.
    #[napi(js_name = "repliesLast1h", ts_type = "number | null")]
    pub replies_last1h: Option<f64>,
    #[napi(ts_type = "string | null")]
    pub last_reply_ts: Option<String>,
    #[napi(ts_type = "ReactionInput[] | null")]
    pub reactions: Option<Vec<ReactionInput>>,
}

/// The channel, as intake gives it.
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct ChannelInput {
    pub id: String,
    pub name: String,
    pub platform: String,
}

/// `buildChannelSnapshot`'s input.
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct ChannelSnapshotInput {
    pub channel: ChannelInput,
    pub anchor: MessageInput,
    /// Messages around the anchor, oldest first; the anchor itself is skipped if present.
    pub adjacent_messages: Vec<MessageInput>,
}

/// `buildThreadContext`'s input: a thread root and its replies, oldest first.
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct ThreadInput {
    /// Defaults to the root's ts.
    #[napi(ts_type = "string | null")]
    pub thread_id: Option<String>,
    pub root: MessageInput,
    pub replies: Vec<MessageInput>,
    /// Replies the thread has on the platform, when more than those given.
    #[napi(ts_type = "number | null")]
    pub total_reply_count: Option<f64>,
}

/// A record to add with `recordAttachment`: the seed's snake_case `AttachmentRecord`, or
/// the same fields in camelCase.
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct AttachmentRecordInput {
    pub artifact_id: String,
    pub display_name: String,
    pub media_type: String,
    pub content_hash: String,
    pub source_message_id: String,
    #[napi(ts_type = "string | null")]
    pub source_thread_id: Option<String>,
    pub included_at_turn: f64,
}

/// A candidate for `checkAttachment`.
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct AttachmentCandidate {
    pub artifact_id: String,
    /// SHA-256 hex of the bytes, when known; enables re-upload detection.
    #[napi(ts_type = "string | null")]
    pub content_hash: Option<String>,
}

/// `buildContextPromptSection`'s input.
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct PromptSectionInput {
    pub snapshot: ChannelSnapshot,
    #[napi(ts_type = "ThreadContext | null")]
    pub thread_context: Option<ThreadContext>,
}

/// How to render the prompt section.
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct PromptSectionOptions {
    /// A direct message: guidance without channel search. Default `false`.
    pub direct_message: Option<bool>,
    /// `"dotted"` (`channel.context`, the default) or `"api"` (`channel_context`, valid
    /// Messages API tool names).
    #[napi(ts_type = "'dotted' | 'api'")]
    pub tool_names: Option<String>,
    /// Indent the JSON sections (more readable, more tokens). Default `false`.
    pub pretty: Option<bool>,
}
