use super::*;
use serde_json::json;

fn feed(msgs: &[Value]) -> AttemptSignals {
    let mut s = AttemptSignals::default();
    for m in msgs {
        s.apply(&read_event(m));
    }
    s
}

#[test]
fn compaction_lifecycle() {
    let s = feed(&[json!({"type": "system", "subtype": "status", "status": "compacting"})]);
    assert!(s.compacting && !s.compaction_observed());
    let s = feed(&[
        json!({"type": "system", "subtype": "status", "status": "compacting"}),
        json!({"type": "system", "subtype": "compact_boundary", "compact_metadata": {"trigger": "auto", "pre_tokens": 191000}}),
        json!({"type": "system", "subtype": "status", "status": null}),
    ]);
    assert!(!s.compacting && s.compaction_observed());
    assert_eq!(s.last_compaction_pre_tokens, Some(191_000));
    assert_eq!(s.last_compaction_trigger.as_deref(), Some("auto"));
}

#[test]
fn files_persisted_reads_both_lists() {
    let ev = read_event(
        &json!({"type": "system", "subtype": "files_persisted", "session_id": "s1",
        "files": [{"filename": "a.png", "file_id": "file_1"}], "failed": [{"filename": "b.pdf", "error": "too big"}]}),
    );
    assert_eq!(
        ev,
        SdkEvent::FilesPersisted {
            session_id: Some("s1".into()),
            files: vec![("a.png".into(), "file_1".into())],
            failed: vec![("b.pdf".into(), "too big".into())]
        }
    );
    let bad = read_event(
        &json!({"type": "system", "subtype": "files_persisted", "files": [{"filename": 3}]}),
    );
    assert!(matches!(bad, SdkEvent::Malformed(m) if m.contains("files[0]")));
}

#[test]
fn rate_limits_give_a_backoff_hint() {
    let s = feed(&[
        json!({"type": "rate_limit_event", "rate_limit_info": {"status": "rejected", "resetsAt": 1_800_000_060u64}}),
    ]);
    assert_eq!(s.backoff_ms(1_800_000_000_000.0), Some(60_000.0));
    let s = feed(&[
        json!({"type": "rate_limit_event", "rate_limit_info": {"status": "allowed_warning", "utilization": 0.9}}),
    ]);
    assert_eq!(s.backoff_ms(0.0), Some(0.0));
    assert_eq!(AttemptSignals::default().backoff_ms(0.0), None);
}

#[test]
fn auth_states() {
    let s = feed(&[json!({"type": "auth_status", "isAuthenticating": true, "output": []})]);
    assert_eq!(s.auth.map(|a| a.state), Some("authenticating"));
    let s = feed(&[
        json!({"type": "auth_status", "isAuthenticating": false, "output": [], "error": "token expired"}),
    ]);
    assert_eq!(
        s.auth.map(|a| (a.state, a.error)),
        Some(("auth_failed", Some("token expired".to_string())))
    );
}

#[test]
fn unknown_and_malformed_messages_are_ignored() {
    let s = feed(&[
        json!({"type": "assistant"}),
        json!(null),
        json!({"type": "rate_limit_event"}),
        json!({"type": "system", "subtype": "status", "status": 5}),
    ]);
    assert_eq!((s.events, s.ignored), (4, 4));
    assert_eq!(
        read_event(&json!({"type": "system", "subtype": "init"})).kind(),
        "system/init"
    );
}
