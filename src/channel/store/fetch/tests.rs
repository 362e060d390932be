use super::*;
use crate::channel::ratelimit::{Overflow, RateLimitConfig};
use crate::channel::store::StoreConfig;
use serde_json::json;

const C: &str = "C1";
/// 2026-04-10T15:40:00Z in ms.
const T0: u64 = 1_775_835_600_000;

fn ts(sec: u64) -> String {
    format!("{}.000100", T0 / 1000 + sec)
}

fn slack_message(sec: u64, text: &str) -> Value {
    json!({ "type": "message", "user": "U1", "text": text, "ts": ts(sec) })
}

fn all_fetchers() -> Fetchers {
    FetcherFn::ALL
        .iter()
        .fold(Fetchers::default(), |f, &x| f.with(x))
}

#[test]
fn a_need_without_its_fetcher_function_becomes_a_failure_naming_it() {
    let mut store = ChannelStore::new(StoreConfig::default());
    let req = ContextRequest::new(C, &ts(5));
    let mut failures = Vec::new();
    let jobs = store.plan_fetches(&req, &mut failures, &[], Fetchers::default(), T0);
    // The history first; once it cannot be fetched, the anchor by id; then nothing.
    assert!(jobs.is_empty());
    let failed: Vec<(&Need, &str)> = failures
        .iter()
        .map(|f| (&f.need, f.reason.as_str()))
        .collect();
    assert_eq!(
        failed,
        [
            (
                &Need::History { channel: C.into() },
                "no fetchHistory in the fetcher"
            ),
            (
                &Need::Messages {
                    channel: C.into(),
                    ids: vec![ts(5)]
                },
                "no fetchMessages in the fetcher"
            ),
        ]
    );

    let mut failures = Vec::new();
    let jobs = store.plan_fetches(&req, &mut failures, &[], all_fetchers(), T0);
    assert_eq!(jobs.len(), 1);
    assert_eq!(jobs[0].kind, FetchKind::History);
    assert_eq!(jobs[0].fetch, "fetchHistory");
    assert_eq!(jobs[0].method, "conversations.history");
    assert!(failures.is_empty());
}

#[test]
fn jobs_carry_out_their_needs_and_only_threads_follow_pages() {
    let rate = RateLimitConfig::default();
    for need in [
        Need::History { channel: C.into() },
        Need::Thread {
            channel: C.into(),
            thread: ts(1),
        },
        Need::Messages {
            channel: C.into(),
            ids: vec![ts(2), ts(3)],
        },
    ] {
        let job = FetchJob::for_need(&need, &rate);
        assert_eq!(job.need(), Some(need.clone()));
        assert_eq!(job.key, need.key());
        let pages = if matches!(need, Need::Thread { .. }) {
            rate.max_pages
        } else {
            1
        };
        assert_eq!(job.max_pages, pages);
    }
}

#[test]
fn refusals_say_which_method_and_for_how_long() {
    let mut config = StoreConfig::default();
    config.rate_limit.calls_per_min = 1;
    config.rate_limit.overflow = Overflow::Degrade;
    let mut store = ChannelStore::new(config);
    assert_eq!(
        store.acquire_slot("conversations.history", C, T0),
        Slot::Wait(0)
    );
    let Slot::Refused(note) = store.acquire_slot("conversations.history", C, T0 + 1_000) else {
        panic!("the second call within the minute is refused when degrading");
    };
    assert_eq!(
        note,
        "conversations.history is rate limited; next slot in 59s"
    );
    assert_eq!(store.stats(T0).rate_limited, 1);
}

#[test]
fn a_retry_after_pauses_the_method_and_is_capped_at_an_hour() {
    let mut store = ChannelStore::new(StoreConfig::default());
    let note = store.fetch_failed(
        "conversations.replies",
        C,
        "ratelimited",
        Some(30_000.0),
        false,
        T0,
    );
    assert_eq!(
        note,
        "conversations.replies failed: ratelimited; paused for 30s (Retry-After)"
    );
    assert_eq!(
        store.paused_reason("conversations.replies", C, T0 + 1_000),
        Some("conversations.replies is paused by Retry-After for 29s more".into())
    );
    assert_eq!(
        store.paused_reason("conversations.history", C, T0 + 1_000),
        None
    );

    let note = store.fetch_failed("files.download", C, "slow", Some(f64::INFINITY), true, T0);
    assert!(
        note.ends_with("paused for 3600s (Retry-After, capped at 1 hour)"),
        "{note}"
    );
    let s = store.stats(T0);
    assert_eq!(
        (s.failed_fetches, s.timed_out_fetches, s.retry_after_capped),
        (2, 1, 1)
    );
}

#[test]
fn a_page_holds_at_most_what_was_asked_and_the_rest_is_counted() {
    let mut config = StoreConfig::default();
    config.rate_limit.page_size = 2;
    let mut store = ChannelStore::new(config);
    let job = FetchJob::for_need(
        &Need::History { channel: C.into() },
        &store.config().rate_limit,
    );
    let body = json!({
        "ok": true,
        "messages": [slack_message(3, "c"), slack_message(2, "b"), slack_message(1, "a")],
        "has_more": false,
    });
    let next = store.ingest_fetched(&job, Some(body.to_string()), true, None, T0);
    assert_eq!(next, Ok(None));
    assert_eq!(store.stats(T0).replies_dropped, 1);
    assert_eq!(store.stats(T0).messages, 2);
}

#[test]
fn an_unusable_page_is_a_note_and_a_failed_fetch_never_an_error() {
    let mut store = ChannelStore::new(StoreConfig::default());
    let job = FetchJob::for_need(
        &Need::History { channel: C.into() },
        &store.config().rate_limit,
    );
    for body in [
        None,
        Some("42".to_string()),
        Some(r#"{"ok":false,"error":"channel_not_found"}"#.into()),
    ] {
        let out = store.ingest_fetched(&job, body, true, None, T0);
        let Err(note) = out else { panic!("{out:?}") };
        assert!(
            note.starts_with("fetchHistory returned an unusable result: "),
            "{note}"
        );
    }
    let lone =
        r#"{"ok":true,"messages":[{"type":"message","user":"U1","text":"x","ts":"\ud800"}]}"#;
    let out = store.ingest_fetched(&job, Some(lone.into()), true, None, T0);
    assert!(
        matches!(&out, Err(n) if n.contains("lone surrogate")),
        "{out:?}"
    );
    assert_eq!(store.stats(T0).failed_fetches, 4);
}

#[test]
fn downloads_are_kept_per_channel_with_their_hash() {
    let mut store = ChannelStore::new(StoreConfig::default());
    let (item, held) = store.keep_download(C, "F1", b"abc".to_vec(), T0);
    assert!(held);
    assert_eq!(
        item.content_hash,
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    assert_eq!(item.media_type, "application/octet-stream");
    assert!(store.cached_media(C, "F1").is_some());
    assert!(store.cached_media("C2", "F1").is_none());
}
