use super::*;
use serde_json::json;

fn err(msg: &str) -> ErrorInfo {
    ErrorInfo::from_value(
        &json!({"status": 400, "error": {"type": "error", "error": {"type": "invalid_request_error", "message": msg}}}),
    )
}

fn attempt(msg: &str, compaction: bool) -> OverflowAttempt {
    OverflowAttempt::from_error(&err(msg), compaction, false)
}

const TOO_LONG: &str = "prompt is too long: 215000 tokens > 200000 maximum";

#[test]
fn classifies_size_failures() {
    assert_eq!(
        classify_overflow(&err(TOO_LONG)),
        Some(OverflowKind::PromptTooLong)
    );
    let e = ErrorInfo {
        status: Some(413),
        ..ErrorInfo::default()
    };
    assert_eq!(classify_overflow(&e), Some(OverflowKind::RequestTooLarge));
    assert_eq!(
        classify_overflow(&err(
            "input length and `max_tokens` exceed context limit: 197000 + 8192 > 200000"
        )),
        Some(OverflowKind::ContextWindowExceeded)
    );
    assert_eq!(classify_overflow(&err("overloaded")), None);
}

#[test]
fn fingerprints_follow_structure_not_request_ids() {
    let a = fingerprint(
        &err(&format!("{TOO_LONG} (request req_011AAA)")),
        OverflowKind::PromptTooLong,
    );
    let b = fingerprint(
        &err(&format!("{TOO_LONG} (request req_022BBB)")),
        OverflowKind::PromptTooLong,
    );
    assert_eq!(a, b);
    assert_eq!(a.len(), 16);
    let smaller = fingerprint(
        &err("prompt is too long: 201000 tokens > 200000 maximum"),
        OverflowKind::PromptTooLong,
    );
    assert_ne!(a, smaller);
    // Same text, different structure: another status is another failure.
    let mut e = err(TOO_LONG);
    e.status = Some(500);
    assert_ne!(fingerprint(&e, OverflowKind::PromptTooLong), a);
}

// A hard-size overflow repeating without compaction ends early.
#[test]
fn hard_size_without_compaction_fails_fast() {
    let d = decide_overflow(&[attempt(TOO_LONG, false)], DEFAULT_MAX_ATTEMPTS);
    assert_eq!(
        (d.action, d.reason),
        (OverflowAction::FailFast, "no_compaction_observed")
    );
    let text = d.remediation.unwrap_or_default();
    assert!(
        text.contains("215000 tokens") && text.contains("200000-token"),
        "{text}"
    );
    let d = decide_overflow(&[attempt(TOO_LONG, true), attempt(TOO_LONG, false)], 5);
    assert_eq!(
        (d.action, d.reason),
        (OverflowAction::FailFast, "repeated_without_state_change")
    );
}

// Compaction observed and the retry improves.
#[test]
fn compaction_observed_retries_and_a_smaller_error_is_new() {
    let first = attempt(TOO_LONG, true);
    let d = decide_overflow(std::slice::from_ref(&first), DEFAULT_MAX_ATTEMPTS);
    assert_eq!(
        (d.action, d.reason),
        (OverflowAction::Retry, "compaction_observed")
    );
    assert_eq!(d.remediation, None);
    let second = attempt("prompt is too long: 203000 tokens > 200000 maximum", true);
    let d = decide_overflow(&[first.clone(), second], DEFAULT_MAX_ATTEMPTS);
    assert_eq!(d.action, OverflowAction::Retry);
    // Compaction observed but the size did not move: nothing changed.
    let d = decide_overflow(&[first.clone(), first], DEFAULT_MAX_ATTEMPTS);
    assert_eq!(d.reason, "repeated_without_state_change");
}

#[test]
fn compaction_in_flight_retries() {
    let a = OverflowAttempt::from_error(&err(TOO_LONG), false, true);
    assert_eq!(decide_overflow(&[a], 3).reason, "compaction_in_flight");
}

#[test]
fn a_state_key_change_is_a_state_change() {
    let e = ErrorInfo {
        status: Some(413),
        ..ErrorInfo::default()
    };
    let mut a = OverflowAttempt::from_error(&e, true, false);
    a.state_key = Some("len:40".into());
    let mut b = a.clone();
    // Sizeless error, compaction observed: the same fingerprint alone is not a repeat.
    assert_eq!(
        decide_overflow(&[a.clone(), b.clone()], 5).action,
        OverflowAction::Retry
    );
    b.compaction_observed = false;
    assert_eq!(
        decide_overflow(&[a.clone(), b.clone()], 5).reason,
        "repeated_without_state_change"
    );
    b.state_key = Some("len:12".into());
    assert_eq!(decide_overflow(&[a, b], 5).reason, "no_compaction_observed");
}

#[test]
fn the_attempt_budget_ends_it() {
    let h = vec![
        attempt("prompt is too long: 230000 tokens > 200000 maximum", true),
        attempt("prompt is too long: 220000 tokens > 200000 maximum", true),
        attempt(TOO_LONG, true),
    ];
    let d = decide_overflow(&h, 3);
    assert_eq!(
        (d.action, d.reason, d.attempt),
        (OverflowAction::Fail, "attempts_exhausted", 3)
    );
    assert!(d.remediation.is_some());
}

#[test]
fn other_errors_and_empty_history() {
    let d = decide_overflow(&[attempt("overloaded_error", false)], 3);
    assert_eq!(
        (d.action, d.reason),
        (OverflowAction::NotOverflow, "not_overflow")
    );
    assert_eq!(decide_overflow(&[], 3).reason, "no_attempts");
}
