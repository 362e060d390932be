//! The original runner's input shapes and their semantics, for the drop-in exports.
//!
//! A Claude SDK runner calls `buildChannelSnapshot(input)` with its flat
//! `StructuredContextInput` (`channelId`, `anchor.authorId`, `adjacentMessages[].replyCount`,
//! ...) and `buildThreadContext(thread)` with `{ rootMessageId, rootTs, ..., replies,
//! totalReplyCount }`. These are read here exactly as that runner defines them, and the
//! output is what it produced: timestamps passed through as given, the thread budget
//! counted over reply text only (the root is free), `total_replies` as the caller reports
//! it, a thread without replies still a ThreadContext. One difference is deliberate: a
//! reply cut to 300 tokens never ends in half a surrogate pair.
//!
//! They are read as leniently as the runner read them: fields it does not read are
//! ignored (TypeScript callers pass objects with more fields than the declared type, such
//! as a thread's replies that are the channel's own message objects), and the adjacent
//! messages' `replyCount`, `hasMedia` and `reactions` may be absent (no activity, no
//! media, none). A wrong type in a field that is read is still a `TypeError` with its path.

use crate::core::budget::most_recent_within;
use crate::core::model::{
    AdjacentMessage, Anchor, Author, Channel, ChannelSnapshot, MediaRef, ThreadActivity,
    ThreadContext, ThreadReply, ThreadRoot, ThreadTelemetry, Truncation, SCHEMA_VERSION,
};
use crate::core::text::{
    tokens_for_units, truncate_reply, truncate_snippet, utf16_len, REPLY_MAX_TOKENS,
};
use napi_derive::napi;
use serde::Deserialize;

/// A file in the runner's input.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileInput {
    pub artifact_id: String,
    pub mime_type: String,
    #[serde(default)]
    pub filename: Option<String>,
    #[napi(ts_type = "number")]
    pub byte_length: u64,
}

/// The message being answered, in the runner's input.
#[napi(object, object_to_js = false, object_from_js = false, js_name = "StructuredAnchorInput")]
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AnchorInput {
    pub message_id: String,
    pub ts: String,
    pub author_id: String,
    pub author_name: String,
    pub author_is_bot: bool,
    pub text: String,
    #[serde(default)]
    #[napi(ts_type = "string | null")]
    pub thread_id: Option<String>,
    #[serde(default)]
    pub files: Option<Vec<FileInput>>,
}

/// A message around the anchor, in the runner's input.
#[napi(object, object_to_js = false, object_from_js = false, js_name = "StructuredAdjacentInput")]
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AdjacentInput {
    pub message_id: String,
    pub ts: String,
    pub author_id: String,
    pub author_name: String,
    pub author_is_bot: bool,
    pub text: String,
    #[serde(default)]
    #[napi(ts_type = "string | null")]
    pub thread_id: Option<String>,
    /// Replies on the platform (0 when absent: no thread activity).
    #[serde(default)]
    #[napi(ts_type = "number")]
    pub reply_count: u64,
    /// `false` when absent.
    #[serde(default)]
    pub has_media: bool,
    /// Labels as the snapshot shows them (`":white_check_mark: 3"`); none when absent.
    #[serde(default)]
    pub reactions: Vec<String>,
}

/// A thread reply, in the runner's input.
#[napi(object, object_to_js = false, object_from_js = false, js_name = "ThreadReplyInput")]
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReplyInput {
    pub message_id: String,
    pub ts: String,
    pub author_id: String,
    pub author_name: String,
    pub author_is_bot: bool,
    pub text: String,
    #[serde(default)]
    pub files: Option<Vec<FileInput>>,
}

/// The thread of the runner's input (`buildThreadContext`'s argument in the runner).
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadDataInput {
    pub root_message_id: String,
    pub root_ts: String,
    pub root_author_id: String,
    pub root_author_name: String,
    pub root_author_is_bot: bool,
    pub root_text: String,
    #[serde(default)]
    pub root_files: Option<Vec<FileInput>>,
    /// Oldest first.
    #[napi(ts_type = "Array<ThreadReplyInput>")]
    pub replies: Vec<ReplyInput>,
    /// Replies the thread has on the platform (shown as `total_replies`).
    #[napi(ts_type = "number")]
    pub total_reply_count: u64,
}

/// The Claude SDK runner's input for one turn, as its context modules take it.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StructuredContextInput {
    pub platform: String,
    pub channel_id: String,
    pub channel_name: String,
    /// `"direct"` for a DM, `"group"` for a channel or group DM: read by
    /// `coreSessionContextSubscriber` (anything but `"direct"` is a channel, as the
    /// runner's subscriber read it); the snapshot does not need it.
    #[serde(default)]
    #[napi(ts_type = "'direct' | 'group'")]
    pub channel_type: Option<String>,
    #[napi(ts_type = "StructuredAnchorInput")]
    pub anchor: AnchorInput,
    #[napi(ts_type = "Array<StructuredAdjacentInput>")]
    pub adjacent_messages: Vec<AdjacentInput>,
    #[serde(default)]
    #[napi(ts_type = "ThreadDataInput | null")]
    pub thread: Option<ThreadDataInput>,
    /// The runner's fetcher; not used by `buildChannelSnapshot`.
    #[serde(default)]
    #[napi(ts_type = "unknown")]
    pub fetcher: Option<serde_json::Value>,
}

fn author(id: &str, name: &str, is_bot: bool) -> Author {
    Author {
        user_id: id.to_string(),
        display_name: name.to_string(),
        is_bot,
    }
}

fn media(files: Option<&Vec<FileInput>>) -> Vec<MediaRef> {
    files
        .map(|fs| {
            fs.iter()
                .map(|f| MediaRef {
                    artifact_id: f.artifact_id.clone(),
                    media_type: f.mime_type.clone(),
                    filename: f.filename.clone(),
                    byte_length: f.byte_length,
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The ChannelSnapshot the runner built: the anchor in full, the other messages as
/// snippets (the anchor left out by id), thread activity from `replyCount` (recent
/// activity is not in the input: 0 and `null`), `hasMedia` and `reactions` as given.
pub fn channel_snapshot(input: &StructuredContextInput) -> ChannelSnapshot {
    let a = &input.anchor;
    ChannelSnapshot {
        schema_version: SCHEMA_VERSION.to_string(),
        channel: Channel {
            id: input.channel_id.clone(),
            name: input.channel_name.clone(),
            platform: input.platform.clone(),
        },
        anchor: Anchor {
            message_id: a.message_id.clone(),
            ts: a.ts.clone(),
            author: author(&a.author_id, &a.author_name, a.author_is_bot),
            text: a.text.clone(),
            media: media(a.files.as_ref()),
            thread_id: a.thread_id.clone(),
        },
        adjacent: input
            .adjacent_messages
            .iter()
            .filter(|m| m.message_id != a.message_id)
            .map(|m| AdjacentMessage {
                message_id: m.message_id.clone(),
                ts: m.ts.clone(),
                author: author(&m.author_id, &m.author_name, m.author_is_bot),
                snippet: truncate_snippet(&m.text),
                thread_activity: (m.reply_count > 0).then_some(ThreadActivity {
                    reply_count: m.reply_count,
                    replies_last_1h: 0,
                    last_reply_ts: None,
                }),
                has_media: m.has_media,
                reactions: m.reactions.clone(),
            })
            .collect(),
        adjacent_omitted: None,
    }
}

/// The ThreadContext the runner built, with its budget telemetry: the newest replies
/// whose text fits `budget_tokens` (the newest always kept; the root not counted), each
/// over 300 tokens cut; `actual_tokens` is the included replies' text before the cut and
/// `messages_truncated` the replies the budget left out.
pub fn thread_context(
    thread: &ThreadDataInput,
    budget_tokens: u64,
) -> (ThreadContext, ThreadTelemetry) {
    let plan = thread_plan(
        thread.replies.iter().map(|r| utf16_len(&r.text)),
        budget_tokens,
    );
    let first = plan.first;
    let included = &thread.replies[first..];
    let omitted_range_ts = (first > 0).then(|| {
        (
            thread.replies[0].ts.clone(),
            thread.replies[first - 1].ts.clone(),
        )
    });
    let replies = included
        .iter()
        .map(|r| {
            let cut = truncate_reply(&r.text);
            ThreadReply {
                message_id: r.message_id.clone(),
                ts: r.ts.clone(),
                author: author(&r.author_id, &r.author_name, r.author_is_bot),
                is_truncated: cut.is_some(),
                text: cut.unwrap_or_else(|| r.text.clone()),
                media: media(r.files.as_ref()),
            }
        })
        .collect();
    let context = ThreadContext {
        schema_version: SCHEMA_VERSION.to_string(),
        thread_id: thread.root_ts.clone(),
        root: ThreadRoot {
            message_id: thread.root_message_id.clone(),
            ts: thread.root_ts.clone(),
            author: author(
                &thread.root_author_id,
                &thread.root_author_name,
                thread.root_author_is_bot,
            ),
            text: thread.root_text.clone(),
            media: media(thread.root_files.as_ref()),
        },
        replies,
        truncation: Truncation::most_recent(
            thread.total_reply_count,
            included.len() as u64,
            omitted_range_ts,
        ),
    };
    let telemetry = ThreadTelemetry {
        thread_budget_tokens: budget_tokens,
        actual_tokens: plan.used,
        messages_truncated: first as u64,
    };
    (context, telemetry)
}

/// What the runner's thread rule decides from the replies' lengths alone (in UTF-16
/// units, oldest first): the newest replies that fit the budget, filled newest first (the
/// newest always kept), the tokens they come to, and which of them are over
/// [`REPLY_MAX_TOKENS`] and cut. The one home of the rule: [`thread_context`] builds on it,
/// and so does the JS side of the drop-in, from the lengths it reads (`js/dropin/context.js`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadPlan {
    /// The index of the oldest reply kept (the replies before it are omitted).
    pub first: usize,
    /// The estimated tokens of the replies kept.
    pub used: u64,
    /// The kept replies that are cut to [`REPLY_MAX_TOKENS`], by index, oldest first.
    pub cut: Vec<usize>,
}

/// The [`ThreadPlan`] of replies of `units` UTF-16 units each within `budget_tokens`.
pub fn thread_plan(units: impl Iterator<Item = usize>, budget_tokens: u64) -> ThreadPlan {
    let tokens: Vec<u64> = units.map(tokens_for_units).collect();
    let first = most_recent_within(&tokens, budget_tokens).omitted();
    let kept = tokens.iter().enumerate().skip(first);
    ThreadPlan {
        first,
        used: tokens[first..].iter().sum(),
        cut: kept
            .filter(|&(_, &t)| t > REPLY_MAX_TOKENS)
            .map(|(i, _)| i)
            .collect(),
    }
}

#[cfg(test)]
mod tests;
