//! Payloads in Slack's own shapes (Events API `event_callback` envelopes, Web API bodies).
use super::*;
use serde_json::json;

/// A directory that knows one user, Jonas, and one channel, #deploys.
struct Jonas;

impl Names for Jonas {
    fn user(&self, id: &str) -> Option<(String, bool)> {
        (id == "U0H3KD2QP").then(|| ("Jonas".to_string(), false))
    }
    fn channel(&self, id: &str) -> Option<String> {
        (id == "C9").then(|| "deploys".to_string())
    }
}

fn envelope(event: Value) -> Value {
    json!({
        "token": "XXYYZZ",
        "team_id": "T024BE7LD",
        "api_app_id": "A0KRD7HC3",
        "event": event,
        "type": "event_callback",
        "event_id": "Ev08MFMKH6",
        "event_time": 1775835612,
        "authorizations": [{ "enterprise_id": null, "team_id": "T024BE7LD", "user_id": "U0BOTUSER", "is_bot": true, "is_enterprise_install": false }],
        "is_ext_shared_channel": false,
        "event_context": "4-eyJldCI6Im1lc3NhZ2UiLCJ0aWQiOiJUMDI0QkU3TEQiLCJjaWQiOiJDMDdST0xMT1VUIn0"
    })
}

fn message_of(e: Event) -> (String, Option<String>, StoredMessage) {
    match e {
        Event::Message {
            channel,
            workspace,
            message,
        } => (channel, workspace, *message),
        other => panic!("expected a message, got {other:?}"),
    }
}

#[test]
fn plain_message_in_an_event_callback_envelope() {
    let p = envelope(json!({
        "type": "message", "channel": "C07ROLLOUT", "user": "U061F7AUR",
        "text": "Starting the canary at 5%", "ts": "1775835612.000200",
        "client_msg_id": "5b3c3f1e-0b9a-4a4e-9d6e-0c1f2d3e4f50", "team": "T024BE7LD",
        "event_ts": "1775835612.000200", "channel_type": "channel",
        "user_profile": { "display_name": "Sam Rivera", "real_name": "Samuel Rivera" },
        "blocks": [{ "type": "rich_text", "block_id": "x1", "elements": [] }]
    }));
    let (channel, workspace, m) =
        message_of(event_payload(&p, &NoNames).unwrap_or_else(|e| panic!("{e}")));
    assert_eq!(channel, "C07ROLLOUT");
    assert_eq!(workspace.as_deref(), Some("T024BE7LD"));
    assert_eq!(m.id(), "1775835612.000200");
    assert_eq!(m.author.display_name, "Sam Rivera");
    assert!(!m.author.is_bot);
    assert!(m.thread_id.is_none());
}

#[test]
fn bot_message_is_authored_by_the_bot() {
    let p = envelope(json!({
        "type": "message", "subtype": "bot_message", "channel": "C07ROLLOUT",
        "text": "Deploy #4121 to canary: succeeded", "ts": "1775835620.000300",
        "bot_id": "B01DEPLOYBOT", "username": "deploy-bot",
        "bot_profile": { "id": "B01DEPLOYBOT", "name": "deploy-bot", "app_id": "A01DEPLOY" }
    }));
    let (_, _, m) = message_of(event_payload(&p, &NoNames).unwrap_or_else(|e| panic!("{e}")));
    assert_eq!(m.author.user_id, "B01DEPLOYBOT");
    assert_eq!(m.author.display_name, "deploy-bot");
    assert!(m.author.is_bot);
}

#[test]
fn thread_reply_and_broadcast_carry_their_thread() {
    let reply = envelope(json!({
        "type": "message", "channel": "C07ROLLOUT", "user": "U0G9QF9C6", "text": "p99 is flat",
        "ts": "1775835640.000500", "thread_ts": "1775835630.000400", "parent_user_id": "U061F7AUR"
    }));
    let (_, _, m) = message_of(event_payload(&reply, &NoNames).unwrap_or_else(|e| panic!("{e}")));
    assert_eq!(m.thread_id.as_deref(), Some("1775835630.000400"));
    assert!(!m.broadcast && !m.in_channel());
    let broadcast = envelope(json!({
        "type": "message", "subtype": "thread_broadcast", "channel": "C07ROLLOUT", "user": "U0H3KD2QP",
        "text": "Canary promoted to 25%", "ts": "1775835650.000600", "thread_ts": "1775835630.000400",
        "root": { "type": "message", "user": "U061F7AUR", "text": "Rollout thread", "ts": "1775835630.000400", "thread_ts": "1775835630.000400", "reply_count": 2 }
    }));
    let (_, _, m) =
        message_of(event_payload(&broadcast, &NoNames).unwrap_or_else(|e| panic!("{e}")));
    assert!(m.broadcast && m.in_channel() && m.is_reply());
}

#[test]
fn a_root_with_thread_ts_equal_to_its_ts_is_not_a_reply() {
    let p = json!({ "type": "message", "channel": "C1", "user": "U1", "text": "root",
        "ts": "1775835630.000400", "thread_ts": "1775835630.000400", "reply_count": 3,
        "latest_reply": "1775835660.000700", "reply_users": ["U1", "U2"] });
    let (_, _, m) = message_of(event_payload(&p, &NoNames).unwrap_or_else(|e| panic!("{e}")));
    assert!(m.thread_id.is_none());
    assert_eq!(m.reply_count(), 3);
    assert_eq!(m.latest_reply(), Some("1775835660.000700"));
}

#[test]
fn file_share_lists_its_files_and_skips_tombstones() {
    let p = envelope(json!({
        "type": "message", "subtype": "file_share", "channel": "C07ROLLOUT", "user": "U0G9QF9C6",
        "text": "latency graph", "ts": "1775835660.000700", "upload": true, "display_as_bot": false,
        "files": [
            { "id": "F07SCREEN01", "created": 1775835659, "name": "canary-p99.png", "title": "canary-p99.png",
              "mimetype": "image/png", "filetype": "png", "size": 48213, "mode": "hosted",
              "url_private": "https://files.slack.com/files-pri/T024BE7LD-F07SCREEN01/canary-p99.png",
              "url_private_download": "https://files.slack.com/files-pri/T024BE7LD-F07SCREEN01/download/canary-p99.png" },
            { "id": "F07GONE0001", "mode": "tombstone" }
        ]
    }));
    let (_, _, m) = message_of(event_payload(&p, &NoNames).unwrap_or_else(|e| panic!("{e}")));
    assert_eq!(m.files().len(), 1);
    let f = &m.files()[0];
    assert_eq!(f.media.artifact_id, "F07SCREEN01");
    assert_eq!(f.media.media_type, "image/png");
    assert_eq!(f.media.byte_length, 48213);
    assert_eq!(f.media.filename.as_deref(), Some("canary-p99.png"));
    assert!(f.url.as_deref().is_some_and(|u| u.contains("/download/")));
}

#[test]
fn message_changed_is_an_edit_of_the_inner_message() {
    let p = envelope(json!({
        "type": "message", "subtype": "message_changed", "hidden": true, "channel": "C07ROLLOUT",
        "ts": "1775835700.000900", "event_ts": "1775835700.000900",
        "message": { "type": "message", "user": "U061F7AUR", "text": "Starting the canary at 10%",
            "ts": "1775835612.000200", "edited": { "user": "U061F7AUR", "ts": "1775835700.000000" } },
        "previous_message": { "type": "message", "user": "U061F7AUR", "text": "Starting the canary at 5%", "ts": "1775835612.000200" }
    }));
    assert_eq!(
        event_payload(&p, &NoNames).unwrap_or_else(|e| panic!("{e}")),
        Event::Edit {
            channel: "C07ROLLOUT".into(),
            message_id: "1775835612.000200".into(),
            text: "Starting the canary at 10%".into(),
            edited: true,
        }
    );
}

#[test]
fn message_deleted_names_the_deleted_ts() {
    let p = envelope(json!({
        "type": "message", "subtype": "message_deleted", "hidden": true, "channel": "C07ROLLOUT",
        "ts": "1775835710.001000", "deleted_ts": "1775835620.000300", "event_ts": "1775835710.001000",
        "previous_message": { "type": "message", "subtype": "bot_message", "text": "Deploy #4121", "ts": "1775835620.000300", "bot_id": "B01DEPLOYBOT" }
    }));
    assert_eq!(
        event_payload(&p, &NoNames).unwrap_or_else(|e| panic!("{e}")),
        Event::Delete {
            channel: "C07ROLLOUT".into(),
            message_id: "1775835620.000300".into()
        }
    );
}

#[test]
fn reactions_on_messages_apply_and_on_files_are_ignored() {
    let added = envelope(json!({
        "type": "reaction_added", "user": "U0G9QF9C6", "reaction": "eyes", "item_user": "U061F7AUR",
        "item": { "type": "message", "channel": "C07ROLLOUT", "ts": "1775835630.000400" },
        "event_ts": "1775835720.001100"
    }));
    assert_eq!(
        event_payload(&added, &NoNames).unwrap_or_else(|e| panic!("{e}")),
        Event::Reaction {
            channel: "C07ROLLOUT".into(),
            message_id: "1775835630.000400".into(),
            name: "eyes".into(),
            user: Some("U0G9QF9C6".into()),
            added: true
        }
    );
    let on_file = envelope(json!({
        "type": "reaction_removed", "user": "U1", "reaction": "eyes",
        "item": { "type": "file", "file": "F07SCREEN01" }, "event_ts": "1775835730.001200"
    }));
    assert_eq!(
        event_payload(&on_file, &NoNames).unwrap_or_else(|e| panic!("{e}")),
        Event::Ignored {
            kind: "reaction_removed/file".into()
        }
    );
}

#[test]
fn payloads_the_store_has_no_use_for_are_ignored() {
    let verify = json!({ "token": "Jhj5dZrVaK7ZwHHjRyZWjbDl", "challenge": "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P", "type": "url_verification" });
    assert_eq!(
        event_payload(&verify, &NoNames).unwrap_or_else(|e| panic!("{e}")),
        Event::Ignored {
            kind: "url_verification".into()
        }
    );
    let join = envelope(
        json!({ "type": "message", "subtype": "channel_join", "channel": "C07ROLLOUT", "user": "U0H3KD2QP", "text": "<@U0H3KD2QP> has joined the channel", "ts": "1775835600.000100" }),
    );
    assert_eq!(
        event_payload(&join, &NoNames).unwrap_or_else(|e| panic!("{e}")),
        Event::Ignored {
            kind: "message/channel_join".into()
        }
    );
}

#[test]
fn malformed_payloads_are_type_errors_naming_the_field() {
    let e = event_payload(
        &envelope(json!({ "type": "message", "channel": "C1", "text": "x" })),
        &NoNames,
    )
    .err()
    .unwrap_or_else(|| panic!("error"));
    assert_eq!(e.to_string(), "payload.event.ts: is required");
    let e = event_payload(
        &envelope(json!({ "type": "message", "channel": "C1", "ts": "yesterday" })),
        &NoNames,
    )
    .err()
    .unwrap_or_else(|| panic!("error"));
    assert!(e
        .to_string()
        .starts_with("payload.event.ts: expected a Slack ts"));
    let e = event_payload(&json!({ "type": "event_callback", "event": 3 }), &NoNames)
        .err()
        .unwrap_or_else(|| panic!("error"));
    assert_eq!(
        e.to_string(),
        "payload.event: expected an object, got number"
    );
}

#[test]
fn the_directory_names_users_that_payloads_leave_bare() {
    let dir = Jonas;
    let p = json!({ "type": "message", "channel": "C1", "user": "U0H3KD2QP", "text": "hi", "ts": "1775835600.000100" });
    let (_, _, m) = message_of(event_payload(&p, &dir).unwrap_or_else(|e| panic!("{e}")));
    assert_eq!(m.author.display_name, "Jonas");
    let p = json!({ "type": "message", "channel": "C1", "user": "U999", "text": "hi", "ts": "1775835600.000100" });
    let (_, _, m) = message_of(event_payload(&p, &dir).unwrap_or_else(|e| panic!("{e}")));
    assert_eq!(m.author.display_name, "U999");
}

#[test]
fn history_page_with_cursor_reactions_and_edits() {
    let body = json!({
        "ok": true,
        "messages": [
            { "type": "message", "user": "U0G9QF9C6", "text": "ship it", "ts": "1775835680.000800",
              "reactions": [{ "name": "white_check_mark", "users": ["U061F7AUR", "U0H3KD2QP"], "count": 2 }],
              "edited": { "user": "U0G9QF9C6", "ts": "1775835690.000000" } },
            { "type": "message", "user": "U061F7AUR", "text": "Rollout thread", "ts": "1775835630.000400",
              "thread_ts": "1775835630.000400", "reply_count": 2, "reply_users_count": 2,
              "latest_reply": "1775835650.000600", "reply_users": ["U0G9QF9C6", "U0H3KD2QP"], "is_locked": false, "subscribed": false }
        ],
        "has_more": true, "pin_count": 0, "channel_actions_ts": null, "channel_actions_count": 0,
        "response_metadata": { "next_cursor": "bmV4dF90czoxNzc1ODM1NjMwMDAwNDAw" }
    });
    let page = response_page(&body, "response", &NoNames).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        page.next_cursor.as_deref(),
        Some("bmV4dF90czoxNzc1ODM1NjMwMDAwNDAw")
    );
    assert_eq!(page.messages.len(), 2);
    let r = &page.messages[0].reactions()[0];
    assert_eq!(
        (r.name.as_str(), r.count, r.users.len()),
        ("white_check_mark", 2, 2)
    );
    assert!(page.messages[0].edited);
    assert_eq!(page.messages[1].reply_count(), 2);
}

#[test]
fn last_page_has_no_cursor_and_errors_carry_slacks_code() {
    let body = json!({ "ok": true, "messages": [], "has_more": false, "response_metadata": { "next_cursor": "" } });
    assert_eq!(
        response_page(&body, "response", &NoNames).map(|p| p.next_cursor),
        Ok(None)
    );
    let err = json!({ "ok": false, "error": "ratelimited" });
    assert_eq!(
        response_page(&err, "response", &NoNames),
        Err(ResponseError::Slack("ratelimited".into()))
    );
    let bad = json!({ "ok": true, "messages": [{ "text": "no ts" }] });
    match response_page(&bad, "response", &NoNames) {
        Err(ResponseError::Malformed(e)) => {
            assert_eq!(e.to_string(), "response.messages[0].ts: is required");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn message_text_is_stored_as_it_reads_and_edits_too() {
    let text =
        "<@U0H3KD2QP> is <#C9> &lt;ok&gt;? see <https://x.y/a?b&amp;c|the runbook> &amp; <!here>";
    let readable = "@Jonas is #deploys <ok>? see the runbook & @here";
    let p = json!({ "type": "message", "channel": "C1", "user": "U1", "text": text, "ts": "1775835600.000100" });
    let (_, _, m) = message_of(event_payload(&p, &Jonas).unwrap_or_else(|e| panic!("{e}")));
    assert_eq!(m.text.as_str(), readable);
    let edit = json!({ "type": "message", "subtype": "message_changed", "channel": "C1",
        "message": { "ts": "1775835600.000100", "user": "U1", "text": text } });
    match event_payload(&edit, &Jonas) {
        Ok(Event::Edit { text, .. }) => assert_eq!(text, readable),
        other => panic!("{other:?}"),
    }
    let body = json!({ "ok": true, "messages": [{ "ts": "1775835600.000100", "user": "U1", "text": text }] });
    let page = response_page(&body, "response", &Jonas).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(page.messages[0].text.as_str(), readable);
}
