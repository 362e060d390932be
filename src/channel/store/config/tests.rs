use super::*;
use crate::core::input::ErrorKind;

fn config(json: &str) -> Result<StoreConfig, InputError> {
    let o: ChannelStoreOptions = crate::core::input::parse(json, "options")?;
    StoreConfig::try_from(o)
}

#[test]
fn no_options_give_the_documented_defaults() {
    let c = config("{}").unwrap();
    assert_eq!(c, StoreConfig::default());
    assert_eq!(c.window_size, 1_000);
    assert_eq!((c.replies_max, c.replies_ttl_ms), (500, 300_000));
    assert_eq!((c.starters_max, c.starters_ttl_ms), (2_000, 21_600_000));
    assert_eq!(c.media_max_size, 52_428_800);
    assert_eq!(c.fetch_timeout_ms, 5_000);
    assert_eq!(c.max_thread_replies, 2_000);
    assert_eq!(c.rate_limit.calls_per_min, 40);
}

#[test]
fn options_override_defaults_and_the_preset() {
    let c = config(
        r#"{"windowSize":5,"threadReplies":{"ttl":10},"rateLimit":{"preset":"slack-non-marketplace","pageSize":7,"perMethod":{"files.download":3},"overflowStrategy":"degrade"}}"#,
    )
    .unwrap();
    assert_eq!(c.window_size, 5);
    assert_eq!(c.replies_ttl_ms, 10);
    assert_eq!(c.replies_max, DEFAULT_REPLIES_MAX);
    assert_eq!(c.rate_limit.page_size, 7);
    assert_eq!(c.rate_limit.per_method.get("files.download"), Some(&3));
    assert_eq!(c.rate_limit.overflow, Overflow::Degrade);
}

#[test]
fn each_bad_option_names_its_path() {
    for (json, path, kind) in [
        (
            r#"{"windowSize":0}"#,
            "options.windowSize",
            ErrorKind::Range,
        ),
        (
            r#"{"windowSize":1.5}"#,
            "options.windowSize",
            ErrorKind::Range,
        ),
        (
            r#"{"fetchTimeout":0}"#,
            "options.fetchTimeout",
            ErrorKind::Range,
        ),
        (
            r#"{"maxRepliesPerThread":0}"#,
            "options.maxRepliesPerThread",
            ErrorKind::Range,
        ),
        (
            r#"{"threadReplies":{"max":-1}}"#,
            "options.threadReplies.max",
            ErrorKind::Range,
        ),
        (
            r#"{"rateLimit":{"pageSize":0}}"#,
            "options.rateLimit.pageSize",
            ErrorKind::Range,
        ),
        (
            r#"{"rateLimit":{"maxPages":0}}"#,
            "options.rateLimit.maxPages",
            ErrorKind::Range,
        ),
        (
            r#"{"rateLimit":{"preset":"fast"}}"#,
            "options.rateLimit.preset",
            ErrorKind::Range,
        ),
        (
            r#"{"rateLimit":{"overflowStrategy":"drop"}}"#,
            "options.rateLimit.overflowStrategy",
            ErrorKind::Range,
        ),
        (
            r#"{"rateLimit":{"perMethod":{"x":-2}}}"#,
            "options.rateLimit.perMethod[\"x\"]",
            ErrorKind::Range,
        ),
        (
            r#"{"workspaceId":""}"#,
            "options.workspaceId",
            ErrorKind::Type,
        ),
        (
            r#"{"windowSize":"5"}"#,
            "options.windowSize",
            ErrorKind::Type,
        ),
        (r#"{"windowsize":5}"#, "options.windowsize", ErrorKind::Type),
    ] {
        let e = config(json).expect_err(json);
        assert_eq!((e.path.as_str(), e.kind), (path, kind), "{json}: {e}");
    }
}
