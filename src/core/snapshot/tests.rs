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
