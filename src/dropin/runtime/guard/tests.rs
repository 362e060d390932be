use super::*;
use crate::dropin::runtime::media::MediaMode;
use crate::dropin::runtime::metrics::tests::labels;

fn too_long(n: u64) -> ErrorInfo {
    ErrorInfo {
        status: Some(400),
        message: format!("prompt is too long: {n} tokens > 200000 maximum"),
        ..ErrorInfo::default()
    }
}

#[test]
fn an_overflow_after_compaction_retries_and_a_repeat_fails_fast() {
    let mut g = Guard::default();
    let l1 = labels("r1", 1);
    g.observe(&json!({"type": "system", "subtype": "compact_boundary", "compact_metadata": {"trigger": "auto", "pre_tokens": 210000}}), &l1, 0.0);
    let d = g.decide_overflow(&too_long(215_000), &l1, None);
    assert_eq!(d.value.action, OverflowAction::Retry);
    assert_eq!(
        d.diagnostic.as_ref().map(|v| v["runId"].clone()),
        Some(json!("r1"))
    );
    // Attempt 2 sees no compaction and the same error.
    let l2 = labels("r1", 2);
    let d = g.decide_overflow(&too_long(215_000), &l2, None);
    assert_eq!(
        (d.value.action, d.value.reason),
        (OverflowAction::FailFast, "repeated_without_state_change")
    );
    assert_eq!(g.metrics.total(Counter::OverflowRetries), 1);
    assert_eq!(g.metrics.total(Counter::OverflowFailFast), 1);
    // Another run has its own history.
    let d = g.decide_overflow(&too_long(215_000), &labels("r2", 1), None);
    assert_eq!(d.value.reason, "no_compaction_observed");
}

#[test]
fn files_persisted_feeds_the_planner_and_the_metrics() {
    let mut g = Guard::default();
    let l = labels("r1", 1);
    let item = MediaItem {
        artifact_id: None,
        filename: Some("a.png".into()),
        media_type: "image/png".into(),
        content_hash: "h".into(),
        byte_length: 600_000,
        durable_url: None,
        has_data: false,
    };
    let p = g
        .plan_media(std::slice::from_ref(&item), &l, None, None, 0.0)
        .unwrap_or_default();
    assert_eq!(p[0].mode, MediaMode::Inline);
    let o = g.observe(&json!({"type": "system", "subtype": "files_persisted", "session_id": "s1",
        "files": [{"filename": "a.png", "file_id": "file_9"}], "failed": [{"filename": "b.png", "error": "x"}]}), &l, 1.0);
    assert_eq!(o.persisted.map(|p| p.learned), Some(1));
    let p = g
        .plan_media(&[item], &l, None, None, 2.0)
        .unwrap_or_default();
    assert_eq!(p[0].file_id.as_deref(), Some("file_9"));
    assert_eq!(g.metrics.total(Counter::InlineBytesSent), 600_000);
    assert_eq!(g.metrics.total(Counter::FileRefUsed), 1);
    assert_eq!(g.metrics.total(Counter::PersistFailures), 1);
    assert!(g
        .plan_media(&[], &Labels::default(), None, None, 0.0)
        .is_none());
}

#[test]
fn resume_recovery_once_per_run_and_stripping_counts() {
    let mut g = Guard::default();
    let l = labels("r1", 1);
    let stale = ErrorInfo {
        message: "No conversation found with session ID: x".into(),
        ..ErrorInfo::default()
    };
    let p = g.plan_resume(&stale, &l);
    assert_eq!(p.value.action, ResumeAction::Recover);
    assert_eq!(
        p.diagnostic.map(|d| d["event"].clone()),
        Some(json!("claude_sdk.resume.stale_recovered"))
    );
    let p = g.plan_resume(&stale, &l);
    assert!(p.value.terminal);
    assert_eq!(g.metrics.total(Counter::ResumeStaleRecovered), 1);
    assert!(g.end_run(&l));
    assert_eq!(
        g.plan_resume(&stale, &l).value.action,
        ResumeAction::Recover
    );
    let prompt = "[Thread history - for context]\n[Slack A (user) Fri 2026-04-10 16:32 EDT] x\n[slack message id: 1.1 channel: C]\n\nhi";
    let out = g.strip(prompt, true, &l);
    assert_eq!(out.text, "hi");
    assert_eq!(g.metrics.total(Counter::ThreadContextStripped), 1);
    assert_eq!(
        g.metrics.total(Counter::ThreadContextStrippedChars),
        out.chars_removed as u64
    );
    g.strip(prompt, false, &l);
    assert_eq!(g.metrics.total(Counter::ThreadContextStripped), 1);
}
