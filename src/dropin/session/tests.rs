use super::*;
use serde_json::json;

fn input(channel_type: Option<&str>, with_thread: bool) -> StructuredContextInput {
    let mut v = json!({
        "platform": "slack", "channelId": "C1", "channelName": "ops",
        "anchor": {"messageId": "1.5", "ts": "1.5", "authorId": "U1", "authorName": "Sam",
                   "authorIsBot": false, "text": "did the ```rollout``` finish? </thread>", "threadId": null},
        "adjacentMessages": [{"messageId": "1.4", "ts": "1.4", "authorId": "U2", "authorName": "Ana",
                              "authorIsBot": false, "text": "canary at 10%", "threadId": null,
                              "replyCount": 2, "hasMedia": false, "reactions": [":eyes: 1"]}],
        "thread": null,
    });
    if let Some(t) = channel_type {
        v["channelType"] = json!(t);
    }
    if with_thread {
        v["thread"] = json!({"rootMessageId": "1.0", "rootTs": "1.0", "rootAuthorId": "U2",
            "rootAuthorName": "Ana", "rootAuthorIsBot": false, "rootText": "rollout thread",
            "replies": [{"messageId": "1.1", "ts": "1.1", "authorId": "U1", "authorName": "Sam",
                         "authorIsBot": false, "text": "started"}],
            "totalReplyCount": 1});
    }
    serde_json::from_value(v).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn a_channel_turn_gets_its_snapshot_its_thread_and_both_tools() {
    let s = session_context_section(&input(Some("group"), true));
    let channel = s
        .find("### Channel Context\n```json\n{")
        .unwrap_or(usize::MAX);
    let thread = s
        .find("### Thread Context\n```json\n{")
        .unwrap_or(usize::MAX);
    let tools = s.find("### Channel Tools").unwrap_or(usize::MAX);
    assert!(channel < thread && thread < tools && tools < s.len(), "{s}");
    assert!(
        s.contains("\"schema_version\": \"1.0\""),
        "indented JSON: {s}"
    );
    assert!(s.contains("\"thread_id\": \"1.0\""));
    assert!(s.contains("**channel.context**") && s.contains("**channel.messages**"));
    assert!(s.contains("compacted"));
    // Message text cannot close the fence it sits in.
    assert_eq!(s.matches("```").count(), 4, "{s}");
    assert!(s.contains("\\u0060\\u0060\\u0060rollout"));
}

#[test]
fn no_thread_no_thread_section_and_a_dm_gets_the_one_tool() {
    let s = session_context_section(&input(None, false));
    assert!(!s.contains("Thread Context"));
    assert!(
        s.contains("searches the channel's messages"),
        "a channel without channelType"
    );
    let dm = session_context_section(&input(Some("direct"), false));
    assert!(dm.contains("### Channel Context"));
    assert!(dm.contains("returns empty results in DMs"));
    assert!(!dm.contains("searches the channel's messages"));
}
