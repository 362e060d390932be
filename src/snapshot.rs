//! ChannelSnapshot: the anchor message in full plus a compact index of the messages
//! around it (snippets, thread activity, media flag, reactions).

use crate::model::{
    AdjacentMessage, Anchor, Author, Channel, ChannelSnapshot, ChannelSnapshotInput, MessageInput,
    ThreadActivity, SCHEMA_VERSION,
};
use crate::text::truncate_snippet;
use crate::time::to_iso;

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
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn input(v: serde_json::Value) -> ChannelSnapshotInput {
        serde_json::from_value(v).unwrap_or_else(|e| panic!("fixture: {e}"))
    }

    fn msg(ts: &str, text: &str) -> serde_json::Value {
        json!({"ts": ts, "author": {"userId": "U1", "displayName": "Sam"}, "text": text})
    }

    #[test]
    fn anchor_is_full_and_excluded_from_adjacent() {
        let long = "word ".repeat(100);
        let snap = build_channel_snapshot(&input(json!({
            "channel": {"id": "C1", "name": "eng", "platform": "slack"},
            "anchor": msg("1775853170.228819", &long),
            "adjacentMessages": [msg("1775853100.000001", "before"), msg("1775853170.228819", &long)],
        })));
        assert_eq!(snap.schema_version, "1.0");
        assert_eq!(snap.anchor.text, long);
        assert_eq!(snap.anchor.message_id, "1775853170.228819");
        assert_eq!(snap.anchor.ts, "2026-04-10T20:32:50.228819Z");
        assert_eq!(snap.anchor.thread_id, None);
        assert_eq!(snap.adjacent.len(), 1);
        assert_eq!(snap.adjacent[0].snippet, "before");
    }

    #[test]
    fn adjacent_carries_activity_media_and_reactions() {
        let mut m = msg("1775853100.000001", "see   the\nplan");
        m["replyCount"] = json!(4);
        m["repliesLast1h"] = json!(2);
        m["lastReplyTs"] = json!("1775853170.228819");
        m["reactions"] =
            json!([{"name": "white_check_mark", "count": 3}, {"name": ":eyes:", "count": 2}]);
        m["media"] = json!([{"artifactId": "F1", "mediaType": "image/png", "byteLength": 10}]);
        let quiet = msg("1775853101.000001", "quiet");
        let snap = build_channel_snapshot(&input(json!({
            "channel": {"id": "C1", "name": "eng", "platform": "slack"},
            "anchor": msg("1775853170.5", "q"),
            "adjacentMessages": [m, quiet],
        })));
        let a = &snap.adjacent[0];
        assert_eq!(a.snippet, "see the plan");
        assert_eq!(a.reactions, vec![":white_check_mark: 3", ":eyes: 2"]);
        assert!(a.has_media);
        let act = a
            .thread_activity
            .as_ref()
            .map(|t| (t.reply_count, t.replies_last_1h, t.last_reply_ts.clone()));
        assert_eq!(
            act,
            Some((4, 2, Some("2026-04-10T20:32:50.228819Z".to_string())))
        );
        assert_eq!(snap.adjacent[1].thread_activity, None);
        assert!(!snap.adjacent[1].has_media);
    }
}
