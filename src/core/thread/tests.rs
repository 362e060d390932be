use super::*;
use crate::core::text::THREAD_BUDGET_TOKENS;
use serde_json::json;

fn msg(ts: &str, text: &str) -> serde_json::Value {
    json!({"ts": ts, "author": {"userId": "U1", "displayName": "Sam"}, "text": text})
}

fn thread(root: &str, replies: Vec<serde_json::Value>, total: Option<u64>) -> ThreadInput {
    let mut v = json!({"root": msg("1000.000001", root), "replies": replies});
    if let Some(t) = total {
        v["totalReplyCount"] = json!(t);
    }
    serde_json::from_value(v).unwrap_or_else(|e| panic!("fixture: {e}"))
}

fn ctx(b: BudgetedThread) -> ThreadContext {
    b.context
        .unwrap_or_else(|| panic!("expected a thread context"))
}

#[test]
fn a_message_without_replies_is_not_a_thread() {
    let b = build_thread_context(&thread("root", vec![], None), 8000);
    assert!(b.context.is_none());
}

#[test]
fn thread_id_is_root_ts_and_total_comes_from_caller() {
    let t = ctx(build_thread_context(
        &thread("root", vec![msg("1001.5", "hi")], Some(42)),
        8000,
    ));
    assert_eq!(t.thread_id, "1000.000001");
    assert_eq!(t.root.message_id, "1000.000001");
    assert_eq!(t.truncation.total_replies, 42);
    assert_eq!(t.truncation.included_replies, 1);
    assert_eq!(t.truncation.strategy, "most_recent");
    assert_eq!(t.truncation.omitted_range_ts, None);
}

#[test]
fn long_reply_is_cut_to_300_tokens_and_flagged() {
    let long = "a".repeat(5000);
    let b = build_thread_context(
        &thread("r", vec![msg("1001", &long), msg("1002", "ok")], None),
        8000,
    );
    // Cut, not left out: messages_truncated counts the replies the budget left out.
    assert_eq!(b.telemetry.messages_truncated, 0);
    let t = ctx(b);
    assert!(t.replies[0].is_truncated);
    assert_eq!(t.replies[0].text.encode_utf16().count(), 1200);
    assert!(t.replies[0].text.ends_with('…'));
    assert!(!t.replies[1].is_truncated);
}

#[test]
fn budget_omits_oldest_and_reports_range() {
    // root 1 token, each reply 250 tokens (1000 units): 8000 - 1 fits 31 replies.
    let replies: Vec<_> = (0..40)
        .map(|i| msg(&format!("{}", 2000 + i), &"b".repeat(1000)))
        .collect();
    let b = build_thread_context(&thread("r", replies, None), u64::from(THREAD_BUDGET_TOKENS));
    assert!(b.telemetry.actual_tokens <= 8000);
    assert_eq!(b.telemetry.actual_tokens, 1 + 31 * 250);
    let t = ctx(b);
    assert_eq!(t.truncation.included_replies, 31);
    assert_eq!(t.truncation.total_replies, 40);
    assert_eq!(
        t.truncation.omitted_range_ts,
        Some((
            "1970-01-01T00:33:20Z".to_string(),
            "1970-01-01T00:33:28Z".to_string()
        ))
    );
    assert_eq!(t.replies[0].message_id, "2009");
    assert_eq!(t.replies[30].message_id, "2039");
}

#[test]
fn root_is_always_full() {
    let root = "r".repeat(40_000);
    let t = ctx(build_thread_context(
        &thread(&root, vec![msg("1001", "x"), msg("1002", "y")], None),
        100,
    ));
    assert_eq!(t.root.text, root);
    assert_eq!(
        t.replies.len(),
        1,
        "only the newest reply survives an exhausted budget"
    );
}
