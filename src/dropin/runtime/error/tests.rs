use super::*;
use serde_json::json;

#[test]
fn reads_an_anthropic_api_error() {
    let v = json!({
        "name": "BadRequestError",
        "message": "400 {\"type\":\"error\"}",
        "status": 400,
        "error": {"type": "error", "error": {"type": "invalid_request_error",
            "message": "prompt is too long: 215000 tokens > 200000 maximum"}},
    });
    let e = ErrorInfo::from_value(&v);
    assert_eq!(e.status, Some(400));
    assert_eq!(e.error_type.as_deref(), Some("invalid_request_error"));
    assert!(e
        .message
        .ends_with("prompt is too long: 215000 tokens > 200000 maximum"));
    assert_eq!(e.name.as_deref(), Some("BadRequestError"));
}

#[test]
fn reads_strings_sdk_results_and_junk() {
    assert_eq!(ErrorInfo::from_value(&json!("boom")).message, "boom");
    let r = json!({"type": "result", "subtype": "error_during_execution", "errors": ["a", "b"]});
    let e = ErrorInfo::from_value(&r);
    assert_eq!(
        (e.message.as_str(), e.subtype.as_deref()),
        ("a b", Some("error_during_execution"))
    );
    assert_eq!(e.error_type, None);
    assert_eq!(ErrorInfo::from_value(&json!(42)), ErrorInfo::default());
    assert_eq!(ErrorInfo::from_value(&json!({"status": 1e12})).status, None);
}

#[test]
fn numbers_skip_ids_uuids_and_decimals() {
    assert_eq!(
        numbers("prompt is too long: 215,000 tokens > 200000 maximum (req_011CU2x9, 3f2a-1234-ab)"),
        vec![215_000, 200_000]
    );
    assert_eq!(
        numbers("input length and `max_tokens` exceed context limit: 197000 + 8192 > 200000"),
        vec![197_000, 8192, 200_000]
    );
    assert_eq!(numbers("v1.5 at 2026-04-10"), Vec::<u64>::new());
    assert_eq!(numbers(""), Vec::<u64>::new());
    assert_eq!(numbers("99999999999999999999999"), Vec::<u64>::new());
}
