use super::*;
use proptest::prelude::*;
use serde_json::json;

fn pi(id: &str, parent: Option<&str>, role: &str, text: &str) -> Value {
    json!({"type": "message", "id": id, "parentId": parent, "message": {"role": role, "content": [{"type": "text", "text": text}]}})
}

fn cc(uuid: &str, parent: Option<&str>, t: &str, content: Value) -> Value {
    json!({"type": t, "uuid": uuid, "parentUuid": parent, "message": {"role": t, "content": content}})
}

#[test]
fn a_trailing_pi_user_message_is_removed_and_children_reparented() {
    let entries = vec![
        json!({"type": "session", "id": "s"}),
        pi("m1", None, "user", "hello"),
        pi("m2", Some("m1"), "assistant", "hi"),
        pi("m3", Some("m2"), "user", "are you there?"),
        json!({"type": "custom", "customType": "x", "id": "c1", "parentId": "m3", "data": {}}),
    ];
    let r = find_orphans(&entries);
    assert!(r.repaired);
    assert_eq!(r.removed.len(), 1);
    assert_eq!(r.removed[0].index, 3);
    assert_eq!(r.removed[0].text, "are you there?");
    let out = apply(entries, &r);
    assert_eq!(out.len(), 4);
    assert_eq!(out[3]["parentId"], "m2");
}

#[test]
fn a_run_of_orphans_goes_together() {
    let entries = vec![
        pi("m1", None, "user", "a"),
        pi("m2", Some("m1"), "assistant", "b"),
        pi("m3", Some("m2"), "user", "c"),
        pi("m4", Some("m3"), "user", "d"),
    ];
    let r = find_orphans(&entries);
    let idx: Vec<_> = r.removed.iter().map(|o| o.index).collect();
    assert_eq!(idx, vec![2, 3]);
    assert_eq!(apply(entries, &r).len(), 2);
}

#[test]
fn the_claude_code_shape_gets_the_same_guard() {
    let entries = vec![
        cc("u1", None, "user", json!("hi")),
        cc(
            "a1",
            Some("u1"),
            "assistant",
            json!([{"type": "text", "text": "hey"}]),
        ),
        cc("u2", Some("a1"), "user", json!("again")),
    ];
    let r = find_orphans(&entries);
    assert_eq!(
        r.removed.iter().map(|o| o.id.clone()).collect::<Vec<_>>(),
        vec![Some("u2".to_string())]
    );
    assert_eq!(r.removed[0].text, "again");
}

#[test]
fn answered_turns_and_tool_results_are_not_orphans() {
    let answered = vec![
        pi("m1", None, "user", "a"),
        pi("m2", Some("m1"), "assistant", "b"),
    ];
    assert_eq!(find_orphans(&answered).reason, Some("last_is_assistant"));
    let tool = vec![
        cc("u1", None, "user", json!("run it")),
        cc(
            "a1",
            Some("u1"),
            "assistant",
            json!([{"type": "tool_use", "id": "t", "name": "x", "input": {}}]),
        ),
        cc(
            "u2",
            Some("a1"),
            "user",
            json!([{"type": "tool_result", "tool_use_id": "t", "content": "ok"}]),
        ),
    ];
    assert_eq!(find_orphans(&tool).reason, Some("last_is_tool_result"));
    let pi_tool = vec![
        pi("m1", None, "user", "a"),
        pi("m2", Some("m1"), "toolResult", "b"),
    ];
    assert_eq!(find_orphans(&pi_tool).reason, Some("last_is_tool_result"));
    assert_eq!(find_orphans(&[]).reason, Some("empty"));
    assert_eq!(
        find_orphans(&[json!({"type": "session"}), json!(7)]).reason,
        Some("no_messages")
    );
    let meta =
        vec![json!({"type": "user", "isMeta": true, "message": {"role": "user", "content": "x"}})];
    assert_eq!(find_orphans(&meta).reason, Some("no_messages"));
}

#[test]
fn jsonl_repair_keeps_other_lines_byte_exact() {
    let lines = [
        r#"{"type":"session","id":"s",  "version":3}"#.to_string(),
        pi("m1", None, "user", "a").to_string(),
        "{not json".to_string(),
        pi("m2", Some("m1"), "assistant", "b").to_string(),
        pi("m3", Some("m2"), "user", "lost").to_string(),
        r#"{"type":"custom","id":"c","parentId":"m3"}"#.to_string(),
    ];
    let text = format!("{}\n", lines.join("\n"));
    let r = repair_jsonl(&text);
    assert_eq!(r.malformed_lines, vec![3]);
    assert!(r.repair.repaired);
    let want = format!(
        "{}\n{}\n{}\n{}\n{}\n",
        lines[0], lines[1], lines[2], lines[3], r#"{"id":"c","parentId":"m2","type":"custom"}"#
    );
    assert_eq!(r.text, want);
    // Nothing to repair: identical text, CRLF and a missing final newline included.
    let clean = "{\"type\":\"message\",\"message\":{\"role\":\"assistant\"}}\r\n\r\n{oops";
    assert_eq!(repair_jsonl(clean).text, clean);
}

#[test]
fn resume_errors_are_classified() {
    let e = |m: &str| ErrorInfo {
        message: m.into(),
        ..ErrorInfo::default()
    };
    assert_eq!(
        classify_resume_error(&e("No conversation found with session ID: 1f3c")),
        ResumeErrorClass::SessionNotFound
    );
    assert_eq!(
        classify_resume_error(&e("Invalid session ID format")),
        ResumeErrorClass::InvalidSession
    );
    let coded = ErrorInfo {
        code: Some("SESSION_NOT_FOUND".into()),
        ..ErrorInfo::default()
    };
    assert_eq!(
        classify_resume_error(&coded),
        ResumeErrorClass::SessionNotFound
    );
    let http = ErrorInfo {
        status: Some(404),
        message: "session gone".into(),
        ..ErrorInfo::default()
    };
    assert_eq!(
        classify_resume_error(&http),
        ResumeErrorClass::SessionNotFound
    );
    assert_eq!(
        classify_resume_error(&e("overloaded")),
        ResumeErrorClass::Other
    );
    assert_eq!(
        classify_resume_error(&ErrorInfo {
            status: Some(404),
            ..ErrorInfo::default()
        }),
        ResumeErrorClass::Other
    );
}

#[test]
fn resume_plan_recovers_once_then_is_terminal() {
    let stale = ErrorInfo {
        message: "No conversation found with session ID: abc".into(),
        ..ErrorInfo::default()
    };
    let p = plan_resume(&stale, 0);
    assert_eq!(p.action, ResumeAction::Recover);
    assert_eq!(
        p.steps,
        vec![
            "clear_resume_marker",
            "start_fresh_session",
            "retry_once",
            "emit_diagnostic"
        ]
    );
    assert!(!p.terminal);
    assert_eq!(p.reason, "session_not_found");
    let p = plan_resume(&stale, 1);
    assert_eq!(
        (p.action, p.terminal, p.reason),
        (ResumeAction::Fail, true, "failed_after_recovery")
    );
    assert!(p.steps.is_empty());
    let other = ErrorInfo {
        message: "rate limited".into(),
        ..ErrorInfo::default()
    };
    let p = plan_resume(&other, 0);
    assert_eq!((p.action, p.terminal), (ResumeAction::Propagate, false));
}

/// Cases the JSONL property test runs (reported in the issue's closing note).
pub const FUZZ_CASES: u32 = 2048;

fn line() -> impl Strategy<Value = String> {
    let role = prop_oneof![
        Just("user"),
        Just("assistant"),
        Just("toolResult"),
        Just("system")
    ];
    let id = "[a-c]";
    prop_oneof![
        (role, id, prop::option::of("[a-c]"))
            .prop_map(|(r, i, p)| pi(&i, p.as_deref(), r, "t").to_string()),
        (id, prop::option::of("[a-c]"))
            .prop_map(|(i, p)| cc(&i, p.as_deref(), "user", json!("x")).to_string()),
        Just(r#"{"type":"custom","id":"z","parentId":"a"}"#.to_string()),
        Just(String::new()),
        "\\PC{0,20}",
        Just(r#"{"type":"message","message":{"role":"user"},"parentId":5}"#.to_string()),
        Just("[1,2".to_string()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(FUZZ_CASES))]

    /// Arbitrary JSONL: never panics; lines it neither removes nor re-parents keep their
    /// bytes; after a repair the last message is not a plain user message, and a second
    /// pass changes nothing.
    #[test]
    fn jsonl_repair_is_total_and_local(lines in prop::collection::vec(line(), 0..12), crlf in any::<bool>()) {
        let text = lines.join(if crlf { "\r\n" } else { "\n" });
        let r = repair_jsonl(&text);
        if !r.repair.repaired {
            prop_assert_eq!(&r.text, &text);
        }
        prop_assert!(r.text.len() <= text.len() + 64 * r.repair.reparent.len());
        let again = repair_jsonl(&r.text);
        // Idempotent: the whole trailing run went, so a second pass finds nothing.
        prop_assert!(!again.repair.repaired, "{:?}", again.repair);
        let parsed: Vec<Value> = r.text.lines().filter_map(|l| serde_json::from_str::<Value>(l.trim()).ok()).filter(Value::is_object).collect();
        let last = parsed.iter().rev().find_map(|e| role_of(e).map(|x| (x, e)));
        if r.repair.repaired {
            prop_assert!(last.is_none_or(|(role, e)| role != "user" || only_tool_results(e)));
        }
    }
}
