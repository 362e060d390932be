use super::*;

fn field(r: Result<impl std::fmt::Debug, ToolError>) -> Option<String> {
    r.err().and_then(|e| e.field)
}

#[test]
fn context_defaults_and_clamps() {
    let c =
        context_input(&json!({"intent": "rollout plan"}), 0).unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(c.max_results, 8);
    let c = context_input(
        &json!({"intent": "x", "max_results": 500, "since": null}),
        0,
    )
    .unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(c.max_results, 50);
    let c = context_input(&json!({"intent": "x", "max_results": 3.0}), 0)
        .unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(c.max_results, 3);
}

#[test]
fn bad_context_calls_name_their_field() {
    assert_eq!(field(context_input(&json!({}), 0)), Some("intent".into()));
    assert_eq!(
        field(context_input(&json!({"intent": "  "}), 0)),
        Some("intent".into())
    );
    assert_eq!(
        field(context_input(&json!({"intent": 5}), 0)),
        Some("intent".into())
    );
    assert_eq!(
        field(context_input(&json!({"intent": "x", "max_results": 0}), 0)),
        Some("max_results".into())
    );
    assert_eq!(
        field(context_input(&json!({"intent": "x", "max_results": -2}), 0)),
        Some("max_results".into())
    );
    assert_eq!(
        field(context_input(
            &json!({"intent": "x", "max_results": 2.5}),
            0
        )),
        Some("max_results".into())
    );
    assert_eq!(
        field(context_input(
            &json!({"intent": "x", "max_results": "8"}),
            0
        )),
        Some("max_results".into())
    );
    assert_eq!(
        field(context_input(
            &json!({"intent": "x", "since": "last week"}),
            0
        )),
        Some("since".into())
    );
    assert_eq!(
        field(context_input(&json!({"intent": "x", "authors": "Sam"}), 0)),
        Some("authors".into())
    );
    assert_eq!(
        field(context_input(
            &json!({"intent": "x", "authors": ["Sam", 3]}),
            0
        )),
        Some("authors[1]".into())
    );
    assert_eq!(
        field(context_input(&json!({"intent": "x", "channel": "C2"}), 0)),
        Some("channel".into())
    );
    assert!(context_input(&json!("rollout"), 0).is_err());
    assert!(context_input(&json!({"intent": "x".repeat(2001)}), 0).is_err());
}

#[test]
fn messages_needs_a_selector() {
    assert!(messages_input(&json!({})).is_err());
    assert!(messages_input(&json!({"max_replies": 5})).is_err());
    assert_eq!(
        field(messages_input(&json!({"message_ids": []}))),
        Some("message_ids".into())
    );
    assert_eq!(
        field(messages_input(&json!({"thread_id": 17}))),
        Some("thread_id".into())
    );
    let ids: Vec<String> = (0..51).map(|i| i.to_string()).collect();
    assert_eq!(
        field(messages_input(&json!({"message_ids": ids}))),
        Some("message_ids".into())
    );
    let m = messages_input(&json!({"thread_id": "1.2", "max_replies": 5000}))
        .unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!((m.thread_id.as_deref(), m.max_replies), (Some("1.2"), 1000));
    let m = messages_input(&json!({"media_artifact_id": "F1"})).unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(m.max_replies, 50);
}
