//! ChannelSnapshot: the anchor message in full plus a compact index of the messages
//! around it (snippets, thread activity, media flag, reactions).

use crate::core::model::{
    AdjacentMessage, Anchor, Author, Channel, ChannelSnapshot, ChannelSnapshotInput, MessageInput,
    ThreadActivity, SCHEMA_VERSION,
};
use crate::core::text::truncate_snippet;
use crate::core::time::to_iso;

/// `":name: count"`, the reaction label the snapshot shows.
pub fn reaction_label(name: &str, count: u64) -> String {
    format!(":{}: {}", name.trim_matches(':'), count)
}

/// A label for each reaction, in the order given.
fn reaction_labels(m: &MessageInput) -> Vec<String> {
    m.reactions
        .as_deref()
        .unwrap_or_default()
        .iter()
        .map(|r| reaction_label(&r.name, r.count))
        .collect()
}

/// Thread activity for a message, or `None` when it has no replies.
fn thread_activity(m: &MessageInput) -> Option<ThreadActivity> {
    let reply_count = m.reply_count.unwrap_or(0);
    if reply_count == 0 {
        return None;
    }
    Some(ThreadActivity {
        reply_count,
        replies_last_1h: m.replies_last1h.unwrap_or(0),
        last_reply_ts: m.last_reply_ts.as_deref().map(to_iso),
    })
}

/// One adjacent message in its compact form.
pub fn adjacent_message(m: &MessageInput) -> AdjacentMessage {
    let has_media = m.has_media.unwrap_or(false) || m.media.as_ref().is_some_and(|v| !v.is_empty());
    AdjacentMessage {
        message_id: m.id().to_string(),
        ts: to_iso(&m.ts),
        author: Author::from(&m.author),
        snippet: truncate_snippet(&m.text),
        thread_activity: thread_activity(m),
        has_media,
        reactions: reaction_labels(m),
    }
}

/// Builds the snapshot. Adjacent messages keep the caller's order; the anchor is left
/// out of them (matched by message id) since it is carried in full.
pub fn build_channel_snapshot(input: &ChannelSnapshotInput) -> ChannelSnapshot {
    let anchor = &input.anchor;
    let anchor_id = anchor.id();
    let adjacent = input
        .adjacent_messages
        .iter()
        .filter(|m| m.id() != anchor_id)
        .map(adjacent_message)
        .collect();
    ChannelSnapshot {
        schema_version: SCHEMA_VERSION.to_string(),
        channel: Channel {
            id: input.channel.id.clone(),
            name: input.channel.name.clone(),
            platform: input.channel.platform.clone(),
        },
        anchor: Anchor {
            message_id: anchor_id.to_string(),
            ts: to_iso(&anchor.ts),
            author: Author::from(&anchor.author),
            text: anchor.text.clone(),
            media: anchor.media_refs(),
            thread_id: anchor.thread_id.clone(),
        },
        adjacent,
        adjacent_omitted: None,
    }
}

#[cfg(test)]
mod tests;
