use super::*;
use proptest::prelude::*;
use serde_json::json;

fn none(_: &str, _: &str) -> Option<String> {
    None
}

proptest! {
    #[test]
    fn ts_orders_by_date_then_id(d1 in 0i64..4_000_000_000, d2 in 0i64..4_000_000_000, i1 in 1i64..999_999_999, i2 in 1i64..999_999_999) {
        let k1 = ts_key(&message_ts(d1, i1));
        let k2 = ts_key(&message_ts(d2, i2));
        prop_assert!(k1.is_some() && k2.is_some());
        prop_assert_eq!((d1, i1).cmp(&(d2, i2)), k1.cmp(&k2));
    }
}

fn msg(id: i64, extra: serde_json::Value) -> serde_json::Value {
    let mut m = json!({
        "message_id": id, "date": 1_795_165_200,
        "chat": { "id": -100, "type": "supergroup", "title": "Ops", "is_forum": true },
        "from": { "id": 7, "is_bot": false, "first_name": "Ann" },
    });
    if let (Some(o), Some(e)) = (m.as_object_mut(), extra.as_object()) {
        for (k, v) in e {
            o.insert(k.clone(), v.clone());
        }
    }
    m
}

fn placed(u: &serde_json::Value) -> Vec<(String, Option<String>)> {
    let out = update(u, &none).unwrap_or_else(|e| panic!("{e}"));
    out.events
        .iter()
        .filter_map(|e| match e {
            Event::Message { message, .. } => Some((
                message.id().to_string(),
                message.thread_id.as_deref().map(str::to_string),
            )),
            _ => None,
        })
        .collect()
}

#[test]
fn only_a_forum_topic_message_other_than_general_is_in_a_topic() {
    let topic = msg(
        9,
        json!({ "text": "x", "message_thread_id": 5, "is_topic_message": true }),
    );
    assert_eq!(
        placed(&json!({ "update_id": 1, "message": topic })),
        vec![("9".into(), Some("5".into()))]
    );
    let general = msg(
        9,
        json!({ "text": "x", "message_thread_id": GENERAL_TOPIC, "is_topic_message": true }),
    );
    assert_eq!(
        placed(&json!({ "update_id": 1, "message": general })),
        vec![("9".into(), None)]
    );
}

#[test]
fn a_reply_inherits_its_parents_chain() {
    let parent = msg(3, json!({ "text": "q" }));
    let reply = msg(4, json!({ "text": "a", "reply_to_message": parent }));
    let chain = |_: &str, id: &str| (id == "3").then(|| "1".to_string());
    let out = update(&json!({ "update_id": 1, "message": reply }), &chain)
        .unwrap_or_else(|e| panic!("{e}"));
    let threads: Vec<_> = out
        .events
        .iter()
        .filter_map(|e| match e {
            Event::Message { message, .. } => message.thread_id.as_deref().map(str::to_string),
            _ => None,
        })
        .collect();
    assert_eq!(threads, vec!["1".to_string(), "1".to_string()]);
}

#[test]
fn an_external_reply_keeps_the_quote_and_no_id() {
    let m = msg(
        4,
        json!({ "text": "agreed", "external_reply": { "origin": { "type": "channel", "date": 1 }, "chat": { "id": -5, "type": "channel", "title": "News" } }, "quote": { "text": "prices up", "position": 0 } }),
    );
    let out =
        update(&json!({ "update_id": 1, "message": m }), &none).unwrap_or_else(|e| panic!("{e}"));
    let Some(Event::Message { message, .. }) = out.events.last() else {
        panic!("a message");
    };
    assert_eq!(
        message.reply_to(),
        Some(&ReplyRef {
            id: None,
            quote: Some("prices up".into())
        })
    );
}

#[test]
fn a_channel_post_is_signed_by_the_channel() {
    let post = json!({ "message_id": 1, "date": 1_795_165_200, "chat": { "id": -200, "type": "channel", "title": "News" }, "sender_chat": { "id": -200, "type": "channel", "title": "News" }, "author_signature": "Ann", "text": "out now" });
    let out = update(&json!({ "update_id": 1, "channel_post": post }), &none)
        .unwrap_or_else(|e| panic!("{e}"));
    let Some(Event::Message { message, .. }) = out.events.last() else {
        panic!("a message");
    };
    assert_eq!(message.author.display_name, "News (Ann)");
    assert_eq!(out.chat, Some(("-200".into(), Some("News".into()))));
}

#[test]
fn a_voice_note_and_a_document_are_media_by_file_id() {
    let m = msg(
        2,
        json!({ "caption": "notes", "document": { "file_id": "BQAC", "file_unique_id": "u", "file_name": "plan.pdf", "mime_type": "application/pdf", "file_size": 2048 } }),
    );
    let found = files(&m);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].media.artifact_id, "BQAC");
    assert_eq!(found[0].media.filename.as_deref(), Some("plan.pdf"));
    let v = msg(
        3,
        json!({ "voice": { "file_id": "AwAC", "file_unique_id": "v", "duration": 3 } }),
    );
    assert_eq!(files(&v)[0].media.media_type, "audio/ogg");
}
