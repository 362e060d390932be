//! The seed's schema: what the builders return (snake_case, `schema_version: "1.0"`) and
//! the camelCase inputs they take from channel intake.

use serde::{Deserialize, Serialize};

/// Version tag carried by every ChannelSnapshot and ThreadContext.
pub const SCHEMA_VERSION: &str = "1.0";

// ---------------------------------------------------------------- outputs

/// Who wrote a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Author {
    pub user_id: String,
    pub display_name: String,
    pub is_bot: bool,
}

/// A media attachment, by reference (never its bytes).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MediaRef {
    pub artifact_id: String,
    pub media_type: String,
    pub filename: Option<String>,
    pub byte_length: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Channel {
    pub id: String,
    pub name: String,
    pub platform: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Anchor {
    pub message_id: String,
    pub ts: String,
    pub author: Author,
    pub text: String,
    pub media: Vec<MediaRef>,
    pub thread_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadActivity {
    pub reply_count: u64,
    pub replies_last_1h: u64,
    pub last_reply_ts: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AdjacentMessage {
    pub message_id: String,
    pub ts: String,
    pub author: Author,
    pub snippet: String,
    pub thread_activity: Option<ThreadActivity>,
    pub has_media: bool,
    pub reactions: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChannelSnapshot {
    pub schema_version: String,
    pub channel: Channel,
    pub anchor: Anchor,
    pub adjacent: Vec<AdjacentMessage>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadRoot {
    pub message_id: String,
    pub ts: String,
    pub author: Author,
    pub text: String,
    pub media: Vec<MediaRef>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadReply {
    pub message_id: String,
    pub ts: String,
    pub author: Author,
    pub text: String,
    pub is_truncated: bool,
    pub media: Vec<MediaRef>,
}

/// What a budget left out. `omitted_range_ts` is `[oldest omitted, newest omitted]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Truncation {
    pub total_replies: u64,
    pub included_replies: u64,
    pub strategy: String,
    pub omitted_range_ts: Option<(String, String)>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadContext {
    pub schema_version: String,
    pub thread_id: String,
    pub root: ThreadRoot,
    pub replies: Vec<ThreadReply>,
    pub truncation: Truncation,
}

/// How many tokens a ThreadContext was given and used.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadTelemetry {
    pub thread_budget_tokens: u64,
    pub actual_tokens: u64,
    pub messages_truncated: u64,
}

// ---------------------------------------------------------------- inputs

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AuthorInput {
    pub user_id: String,
    pub display_name: String,
    #[serde(default)]
    pub is_bot: bool,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MediaRefInput {
    pub artifact_id: String,
    pub media_type: String,
    #[serde(default)]
    pub filename: Option<String>,
    pub byte_length: u64,
    /// Where the bytes can be downloaded (Slack's `url_private`); used by the store's
    /// media fetcher.
    #[serde(default)]
    pub url: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReactionInput {
    pub name: String,
    pub count: u64,
    /// Who reacted, when known (lets the store apply add/remove events exactly).
    #[serde(default)]
    pub users: Option<Vec<String>>,
}

/// One message as channel intake hands it over.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MessageInput {
    /// Platform message id; defaults to `ts` (on Slack the ts is the id).
    #[serde(default)]
    pub message_id: Option<String>,
    pub ts: String,
    pub author: AuthorInput,
    pub text: String,
    #[serde(default)]
    pub media: Option<Vec<MediaRefInput>>,
    #[serde(default)]
    pub has_media: Option<bool>,
    #[serde(default)]
    pub thread_id: Option<String>,
    #[serde(default)]
    pub reply_count: Option<u64>,
    #[serde(default, alias = "repliesLast1H")]
    pub replies_last1h: Option<u64>,
    #[serde(default)]
    pub last_reply_ts: Option<String>,
    #[serde(default)]
    pub reactions: Option<Vec<ReactionInput>>,
    /// The message was edited (the store shows the latest text).
    #[serde(default)]
    pub edited: Option<bool>,
    /// A thread reply also sent to the channel (Slack's `thread_broadcast`).
    #[serde(default)]
    pub broadcast: Option<bool>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChannelInput {
    pub id: String,
    pub name: String,
    pub platform: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ChannelSnapshotInput {
    pub channel: ChannelInput,
    pub anchor: MessageInput,
    #[serde(default)]
    pub adjacent_messages: Vec<MessageInput>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ThreadInput {
    /// Defaults to the root's message id (the root ts on Slack).
    #[serde(default)]
    pub thread_id: Option<String>,
    pub root: MessageInput,
    #[serde(default)]
    pub replies: Vec<MessageInput>,
    /// Replies the thread has on the platform, which may exceed `replies.len()`.
    #[serde(default)]
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
    fn text(&self) -> &str;
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
    fn text(&self) -> &str {
        &self.text
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
