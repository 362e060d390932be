//! The context schema: what the builders return (snake_case, `schema_version: "1.0"`) and
//! the camelCase inputs they take from channel intake.

use napi_derive::napi;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// Version tag carried by every ChannelSnapshot and ThreadContext.
pub const SCHEMA_VERSION: &str = "1.0";

// ---------------------------------------------------------------- outputs

/// Who wrote a message.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Author {
    #[napi(js_name = "user_id")]
    pub user_id: String,
    #[napi(js_name = "display_name")]
    pub display_name: String,
    #[napi(js_name = "is_bot")]
    pub is_bot: bool,
}

/// A media attachment, by reference: the model asks for its bytes through a tool.
#[napi(object, object_to_js = false, object_from_js = false, use_nullable = true)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MediaRef {
    #[napi(js_name = "artifact_id")]
    pub artifact_id: String,
    #[napi(js_name = "media_type")]
    pub media_type: String,
    pub filename: Option<String>,
    #[napi(js_name = "byte_length", ts_type = "number")]
    pub byte_length: u64,
}

/// The channel a snapshot was taken in.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Channel {
    pub id: String,
    pub name: String,
    /// `"slack"`, `"discord"`, `"telegram"`, ...
    pub platform: String,
}

/// The message being answered, in full.
#[napi(object, object_to_js = false, object_from_js = false, use_nullable = true)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Anchor {
    #[napi(js_name = "message_id")]
    pub message_id: String,
    /// ISO-8601 UTC (`2026-04-10T20:30:00.123456Z`), converted from the platform ts.
    pub ts: String,
    pub author: Author,
    pub text: String,
    pub media: Vec<MediaRef>,
    #[napi(js_name = "thread_id")]
    pub thread_id: Option<String>,
}

/// Reply activity of a message that starts a thread.
#[napi(object, object_to_js = false, object_from_js = false, use_nullable = true)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadActivity {
    #[napi(js_name = "reply_count", ts_type = "number")]
    pub reply_count: u64,
    #[napi(js_name = "replies_last_1h", ts_type = "number")]
    pub replies_last_1h: u64,
    #[napi(js_name = "last_reply_ts")]
    pub last_reply_ts: Option<String>,
}

/// A message near the anchor, in compact form.
#[napi(object, object_to_js = false, object_from_js = false, use_nullable = true)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AdjacentMessage {
    #[napi(js_name = "message_id")]
    pub message_id: String,
    /// ISO-8601 UTC.
    pub ts: String,
    pub author: Author,
    /// Whitespace collapsed, at most 150 UTF-16 units (`…` included).
    pub snippet: String,
    /// `null` when the message has no replies.
    #[napi(js_name = "thread_activity")]
    pub thread_activity: Option<ThreadActivity>,
    #[napi(js_name = "has_media")]
    pub has_media: bool,
    /// `":emoji_name: count"` strings, in the order given.
    pub reactions: Vec<String>,
}

/// The structured view of a channel around the message being answered.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChannelSnapshot {
    #[napi(js_name = "schema_version", ts_type = "\"1.0\"")]
    pub schema_version: String,
    pub channel: Channel,
    pub anchor: Anchor,
    pub adjacent: Vec<AdjacentMessage>,
    /// Adjacent messages the snapshot's token budget left out (a `ChannelStore` snapshot
    /// only; absent when none was).
    #[napi(js_name = "adjacent_omitted")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adjacent_omitted: Option<u32>,
}

/// The message that started a thread, always in full.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
#[napi(object, object_to_js = false, object_from_js = false, use_nullable = true)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Truncation {
    /// Replies the thread has (the caller's `totalReplyCount` when larger than those given).
    #[napi(js_name = "total_replies", ts_type = "number")]
    pub total_replies: u64,
    #[napi(js_name = "included_replies", ts_type = "number")]
    pub included_replies: u64,
    #[napi(ts_type = "\"most_recent\"")]
    pub strategy: String,
    /// `[oldest omitted ts, newest omitted ts]`, or `null` when nothing was omitted.
    #[napi(js_name = "omitted_range_ts", ts_type = "[string, string]")]
    pub omitted_range_ts: Option<(String, String)>,
}

/// Name of the only budgeting strategy.
pub const STRATEGY_MOST_RECENT: &str = "most_recent";

impl Truncation {
    /// The thread's truncation under the most-recent-first rule: `included` of `total`
    /// replies kept, the omitted ones spanning `omitted_range_ts` (`None`: none omitted).
    pub fn most_recent(
        total: u64,
        included: u64,
        omitted_range_ts: Option<(String, String)>,
    ) -> Self {
        Truncation {
            total_replies: total,
            included_replies: included,
            strategy: STRATEGY_MOST_RECENT.to_string(),
            omitted_range_ts,
        }
    }
}

/// A thread: its root in full and the most recent replies that fit the budget.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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

/// How a ThreadContext used its budget. `messagesTruncated` is the number of replies the
/// budget left out, as the runner reported it (in `ChannelStore.buildContext`'s
/// telemetry: the included replies cut to 300 tokens). `actualTokens` is what the
/// budget counted: the included replies' text for the runner's thread input, the root and
/// the included (capped) replies for the engine's `ThreadInput` and the store.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadTelemetry {
    #[napi(ts_type = "number")]
    pub thread_budget_tokens: u64,
    #[napi(ts_type = "number")]
    pub actual_tokens: u64,
    #[napi(ts_type = "number")]
    pub messages_truncated: u64,
}

// ---------------------------------------------------------------- inputs

/// Who wrote a message, as channel intake gives it. Its typings are declared apart, in
/// `typings::AuthorInput` below: `isBot` is optional there, which napi derives only from an
/// `Option` field, while here it is a `bool` defaulting to `false`; as `Option<bool>` the
/// drop-in `buildChannelSnapshot` measured 4% slower (bench/run.js, interleaved runs).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AuthorInput {
    pub user_id: String,
    pub display_name: String,
    #[serde(default)]
    pub is_bot: bool,
}

/// The typings of [`AuthorInput`] (see there for why they are apart).
#[allow(dead_code)]
mod typings {
    use napi_derive::napi;

    /// Who wrote a message, as channel intake gives it.
    #[napi(object, object_to_js = false, object_from_js = false)]
    pub struct AuthorInput {
        pub user_id: String,
        pub display_name: String,
        /// Defaults to `false`.
        pub is_bot: Option<bool>,
    }
}

/// A media item on a message.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MediaRefInput {
    pub artifact_id: String,
    pub media_type: String,
    #[serde(default)]
    #[napi(ts_type = "string | null")]
    pub filename: Option<String>,
    /// Size in bytes, a non-negative integer.
    #[napi(ts_type = "number")]
    pub byte_length: u64,
    /// Where the bytes can be downloaded (passed to `fetcher.fetchMedia`).
    #[serde(default)]
    #[napi(ts_type = "string | null")]
    pub url: Option<String>,
}

/// A reaction and how many people added it.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReactionInput {
    /// Emoji name, with or without colons (`thumbsup` or `:thumbsup:`).
    pub name: String,
    #[napi(ts_type = "number")]
    pub count: u64,
    /// Who reacted, when known: lets the store apply add/remove events exactly.
    #[serde(default)]
    #[napi(ts_type = "string[] | null")]
    pub users: Option<Vec<String>>,
}

/// One message as channel intake hands it over.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MessageInput {
    /// Platform message id; defaults to `ts` (on Slack the ts is the id).
    #[serde(default)]
    #[napi(ts_type = "string | null")]
    pub message_id: Option<String>,
    /// Platform timestamp (Slack: `"1712780400.123456"`); converted to ISO-8601 in output.
    pub ts: String,
    pub author: AuthorInput,
    pub text: String,
    #[serde(default)]
    #[napi(ts_type = "MediaRefInput[] | null")]
    pub media: Option<Vec<MediaRefInput>>,
    /// Set when the message has media not listed in `media`.
    #[serde(default)]
    #[napi(ts_type = "boolean | null")]
    pub has_media: Option<bool>,
    /// The thread the message belongs to (Slack: `thread_ts`).
    #[serde(default)]
    #[napi(ts_type = "string | null")]
    pub thread_id: Option<String>,
    #[serde(default)]
    #[napi(ts_type = "number | null")]
    pub reply_count: Option<u64>,
    /// Replies in the hour before the anchor.
    #[serde(default, alias = "repliesLast1H")]
    #[napi(js_name = "repliesLast1h", ts_type = "number | null")]
    pub replies_last1h: Option<u64>,
    #[serde(default)]
    #[napi(ts_type = "string | null")]
    pub last_reply_ts: Option<String>,
    #[serde(default)]
    #[napi(ts_type = "ReactionInput[] | null")]
    pub reactions: Option<Vec<ReactionInput>>,
    /// The message was edited (ChannelStore).
    #[serde(default)]
    #[napi(ts_type = "boolean | null")]
    pub edited: Option<bool>,
    /// A thread reply also posted to the channel (ChannelStore).
    #[serde(default)]
    #[napi(ts_type = "boolean | null")]
    pub broadcast: Option<bool>,
}

/// The channel, as intake gives it.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChannelInput {
    pub id: String,
    pub name: String,
    pub platform: String,
}

/// `buildChannelSnapshot`'s input.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ChannelSnapshotInput {
    pub channel: ChannelInput,
    pub anchor: MessageInput,
    /// Messages around the anchor, oldest first; the anchor itself is skipped if present.
    #[serde(default)]
    pub adjacent_messages: Vec<MessageInput>,
}

/// `buildThreadContext`'s input: a thread root and its replies, oldest first.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ThreadInput {
    /// Defaults to the root's ts.
    #[serde(default)]
    #[napi(ts_type = "string | null")]
    pub thread_id: Option<String>,
    pub root: MessageInput,
    #[serde(default)]
    pub replies: Vec<MessageInput>,
    /// Replies the thread has on the platform, when more than those given.
    #[serde(default)]
    #[napi(ts_type = "number | null")]
    pub total_reply_count: Option<u64>,
}

// ---------------------------------------------------------------- conversions

impl From<&AuthorInput> for Author {
    fn from(a: &AuthorInput) -> Self {
        Author {
            user_id: a.user_id.clone(),
            display_name: a.display_name.clone(),
            is_bot: a.is_bot,
        }
    }
}

impl From<&MediaRefInput> for MediaRef {
    fn from(m: &MediaRefInput) -> Self {
        MediaRef {
            artifact_id: m.artifact_id.clone(),
            media_type: m.media_type.clone(),
            filename: m.filename.clone(),
            byte_length: m.byte_length,
        }
    }
}

/// What the builders read from a message, whichever way it is held (caller input or
/// the store's own copy).
pub trait MessageView {
    fn id(&self) -> &str;
    fn ts(&self) -> &str;
    fn author(&self) -> Author;
    fn text(&self) -> Cow<'_, str>;
    fn media_refs(&self) -> Vec<MediaRef>;
}

impl MessageView for MessageInput {
    fn id(&self) -> &str {
        MessageInput::id(self)
    }
    fn ts(&self) -> &str {
        &self.ts
    }
    fn author(&self) -> Author {
        Author::from(&self.author)
    }
    fn text(&self) -> Cow<'_, str> {
        Cow::Borrowed(&self.text)
    }
    fn media_refs(&self) -> Vec<MediaRef> {
        MessageInput::media_refs(self)
    }
}

impl MessageInput {
    /// The platform id: `messageId`, or `ts` when none is given.
    pub fn id(&self) -> &str {
        self.message_id.as_deref().unwrap_or(&self.ts)
    }

    pub fn media_refs(&self) -> Vec<MediaRef> {
        self.media
            .as_deref()
            .unwrap_or_default()
            .iter()
            .map(MediaRef::from)
            .collect()
    }
}
