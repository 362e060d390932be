use super::*;
use crate::channel::ratelimit::Overflow;
use crate::channel::store::build::Built;
use crate::channel::store::fetch::FetcherFn;
use crate::channel::store::fetch::Slot;
use crate::channel::store::StoreConfig;
use serde_json::json;

const C: &str = "C1";
/// 2026-04-10T15:40:00Z in ms.
const T0: u64 = 1_775_835_600_000;

fn ts(sec: u64) -> String {
    format!("{}.000100", T0 / 1000 + sec)
}

fn all_fetchers() -> Fetchers {
    FetcherFn::ALL
        .iter()
        .fold(Fetchers::default(), |f, &x| f.with(x))
}

fn page(messages: Value) -> Answer {
    Answer::Page(Some(
        json!({ "ok": true, "messages": messages }).to_string(),
    ))
}

/// Starts a build of `anchor` the way `buildContext` does.
fn start_build(runs: &mut Runs, store: &mut ChannelStore, anchor: &str, now: u64) -> (RunId, Step) {
    let req = ContextRequest::new(C, anchor);
    let mut failures = Vec::new();
    let jobs = store.plan_fetches(&req, &mut failures, &[], all_fetchers(), now);
    assert!(!jobs.is_empty(), "the build needs a fetch");
    runs.start(
        store,
        Goal::Context(req),
        jobs,
        failures,
        all_fetchers(),
        now,
    )
}

fn call_of(step: &Step) -> (EffectId, &str, &Value) {
    match step.effects.as_slice() {
        [Effect::Call {
            id, fetch, request, ..
        }] => (*id, fetch.as_str(), request),
        other => panic!("expected one call, got {other:?}"),
    }
}

fn built(step: Step) -> (Built, u32) {
    match step.done {
        Some(Done::Context(Ok(b), calls)) => (b, calls),
        other => panic!("expected a built context, got {other:?}"),
    }
}

#[test]
fn a_cold_build_asks_for_the_history_page_then_builds_with_the_calls_counted() {
    let mut store = ChannelStore::new(StoreConfig::default());
    let mut runs = Runs::new(false);
    let (run, step) = start_build(&mut runs, &mut store, &ts(5), T0);
    let (id, fetch, request) = call_of(&step);
    assert_eq!(fetch, "fetchHistory");
    assert_eq!(request["channelId"], C);
    assert_eq!(request["limit"], json!(store.config().rate_limit.page_size));
    assert!(request.get("cursor").is_none());
    assert_eq!(runs.expects(id), Some(Expect::Page));
    let answer = page(json!([{ "type": "message", "user": "U1", "text": "hello", "ts": ts(5) }]));
    let step = runs.answer(&mut store, run, id, answer, T0 + 10);
    let (b, calls) = built(step);
    assert_eq!(calls, 1);
    assert_eq!(
        b.snapshot()
            .unwrap_or_else(|| panic!("a snapshot"))
            .anchor
            .text,
        "hello"
    );
    assert!(runs.is_empty());
    assert_eq!(store.stats(T0).calls.get("conversations.history"), Some(&1));
}

#[test]
fn a_reply_found_in_the_history_plans_a_second_round_for_its_thread() {
    let mut store = ChannelStore::new(StoreConfig::default());
    let mut runs = Runs::new(false);
    let (run, step) = start_build(&mut runs, &mut store, &ts(5), T0);
    let (id, _, _) = call_of(&step);
    // The root of a thread with replies: the next round fetches the thread.
    let root = json!({ "type": "message", "user": "U1", "text": "root", "ts": ts(5),
        "thread_ts": ts(5), "reply_count": 1, "latest_reply": ts(6) });
    let step = runs.answer(&mut store, run, id, page(json!([root])), T0);
    let (id, fetch, request) = call_of(&step);
    assert_eq!(fetch, "fetchThread");
    assert_eq!(request["threadId"], ts(5));
    let reply = json!({ "type": "message", "user": "U2", "text": "a reply", "ts": ts(6), "thread_ts": ts(5) });
    let step = runs.answer(&mut store, run, id, page(json!([root, reply])), T0);
    let (b, calls) = built(step);
    assert_eq!(calls, 2);
    let thread = b.thread().unwrap_or_else(|| panic!("a thread"));
    assert_eq!(thread.replies.len(), 1);
}

#[test]
fn a_thread_is_followed_page_by_page_with_the_cursor() {
    let mut store = ChannelStore::new(StoreConfig::default());
    let job = FetchJob::for_need(
        &crate::channel::store::fetch::Need::Thread {
            channel: C.into(),
            thread: ts(1),
        },
        &store.config().rate_limit,
    );
    let mut runs = Runs::new(false);
    let goal = Goal::Context(ContextRequest::new(C, &ts(1)));
    let (run, step) = runs.start(&mut store, goal, vec![job], Vec::new(), all_fetchers(), T0);
    let (id, _, _) = call_of(&step);
    let body = json!({ "ok": true, "has_more": true, "response_metadata": { "next_cursor": "p2" },
        "messages": [{ "type": "message", "user": "U1", "text": "root", "ts": ts(1), "thread_ts": ts(1) }] });
    let step = runs.answer(
        &mut store,
        run,
        id,
        Answer::Page(Some(body.to_string())),
        T0,
    );
    let (_, fetch, request) = call_of(&step);
    assert_eq!(fetch, "fetchThread");
    assert_eq!(request["cursor"], "p2");
}

#[test]
fn concurrent_runs_share_one_fetch_and_the_joiner_is_woken_with_its_end() {
    let mut store = ChannelStore::new(StoreConfig::default());
    let mut runs = Runs::new(false);
    let (first, step) = start_build(&mut runs, &mut store, &ts(5), T0);
    let (call, _, _) = call_of(&step);
    let (second, step) = start_build(&mut runs, &mut store, &ts(5), T0);
    let [Effect::Join { id: join }] = step.effects.as_slice() else {
        panic!("expected a join, got {:?}", step.effects)
    };
    let join = *join;
    assert_eq!(runs.expects(join), Some(Expect::Woken));
    let failed = Answer::Failed {
        message: "boom".into(),
        retry_after_ms: None,
        timed_out: false,
    };
    let step = runs.answer(&mut store, first, call, failed, T0);
    assert_eq!(step.woken, vec![join]);
    // Without the history, the first run asks for the anchor by id ...
    let (_, fetch, _) = call_of(&step);
    assert_eq!(fetch, "fetchMessages");
    // ... and the woken second run, planning around the same failure, joins that too.
    let step = runs.answer(&mut store, second, join, Answer::Woken, T0);
    assert!(
        matches!(step.effects.as_slice(), [Effect::Join { .. }]),
        "{:?}",
        step.effects
    );
    assert_eq!(store.stats(T0).calls.get("conversations.history"), Some(&2));
    assert_eq!(store.stats(T0).failed_fetches, 1);
}

#[test]
fn an_answer_for_another_run_or_no_effect_changes_nothing() {
    let mut store = ChannelStore::new(StoreConfig::default());
    let mut runs = Runs::new(false);
    let (run, step) = start_build(&mut runs, &mut store, &ts(5), T0);
    let (id, _, _) = call_of(&step);
    let step = runs.answer(&mut store, run + 1, id, Answer::Slept, T0);
    assert!(step.done.is_none() && step.effects.is_empty());
    let step = runs.answer(&mut store, run, id + 7, Answer::Slept, T0);
    assert!(step.done.is_none() && step.effects.is_empty());
    assert_eq!(runs.len(), 1);
    assert_eq!(runs.expects(id), Some(Expect::Page));
}

#[test]
fn a_retry_after_is_a_pause_to_share_and_the_next_build_degrades_on_it() {
    let mut store = ChannelStore::new(StoreConfig::default());
    let mut runs = Runs::new(false);
    let (run, step) = start_build(&mut runs, &mut store, &ts(5), T0);
    let (id, _, _) = call_of(&step);
    let failed = Answer::Failed {
        message: "ratelimited".into(),
        retry_after_ms: Some(30_000.0),
        timed_out: false,
    };
    let step = runs.answer(&mut store, run, id, failed, T0);
    assert_eq!(
        step.pauses,
        vec![("conversations.history".to_string(), C.to_string())]
    );
    // The anchor by id is next, on the paused method: it waits out the pause.
    let [Effect::Sleep { ms, .. }] = step.effects.as_slice() else {
        panic!("expected a sleep, got {:?}", step.effects)
    };
    assert_eq!(*ms, 30_000);
}

#[test]
fn a_queued_call_sleeps_for_its_slot_then_calls() {
    let mut config = StoreConfig::default();
    config.rate_limit.calls_per_min = 1;
    config.rate_limit.overflow = Overflow::Queue;
    config.rate_limit.queue_timeout_ms = 120_000;
    let mut store = ChannelStore::new(config);
    assert_eq!(
        store.acquire_slot("conversations.history", C, T0),
        Slot::Wait(0)
    );
    let mut runs = Runs::new(false);
    let (run, step) = start_build(&mut runs, &mut store, &ts(5), T0);
    let [Effect::Sleep { id, ms }] = step.effects.as_slice() else {
        panic!("expected a sleep, got {:?}", step.effects)
    };
    assert!(*ms > 0 && *ms <= 60_000, "{ms}");
    let step = runs.answer(&mut store, run, *id, Answer::Slept, T0 + ms);
    let (_, fetch, _) = call_of(&step);
    assert_eq!(fetch, "fetchHistory");
}

#[test]
fn with_a_shared_limiter_each_call_asks_it_and_waits_as_told() {
    let mut store = ChannelStore::new(StoreConfig::default());
    let mut runs = Runs::new(true);
    let (run, step) = start_build(&mut runs, &mut store, &ts(5), T0);
    let [Effect::Shared {
        id,
        method,
        channel,
    }] = step.effects.as_slice()
    else {
        panic!("expected a shared ask, got {:?}", step.effects)
    };
    assert_eq!(
        (method.as_str(), channel.as_str()),
        ("conversations.history", C)
    );
    assert_eq!(runs.expects(*id), Some(Expect::Shared));
    let wait = Answer::Shared {
        grant: SharedGrant::Wait {
            ms: 500,
            paused: false,
        },
        asked_at: T0,
        note: None,
    };
    let step = runs.answer(&mut store, run, *id, wait, T0);
    let [Effect::Sleep { id, ms: 500 }] = step.effects.as_slice() else {
        panic!("expected a 500 ms sleep, got {:?}", step.effects)
    };
    let step = runs.answer(&mut store, run, *id, Answer::Slept, T0 + 500);
    let [Effect::Shared { id, .. }] = step.effects.as_slice() else {
        panic!("expected a second ask, got {:?}", step.effects)
    };
    let granted = Answer::Shared {
        grant: SharedGrant::Granted,
        asked_at: T0 + 500,
        note: None,
    };
    let step = runs.answer(&mut store, run, *id, granted, T0 + 500);
    call_of(&step);
}

#[test]
fn a_download_keeps_its_bytes_and_one_that_is_not_bytes_is_a_note() {
    let mut store = ChannelStore::new(StoreConfig::default());
    let loc = crate::channel::store::FileLocation {
        channel: C.into(),
        message_id: ts(1),
        url: Some("https://files.example/F1".into()),
        media: crate::core::model::MediaRef {
            artifact_id: "F1".into(),
            media_type: "image/png".into(),
            filename: Some("a.png".into()),
            byte_length: 3,
        },
    };
    let job = FetchJob::for_media("F1", &loc, &store.config().rate_limit);
    let mut runs = Runs::new(false);
    let goal = || Goal::Media {
        artifact_id: "F1".into(),
    };
    let (run, step) = runs.start(
        &mut store,
        goal(),
        vec![job.clone()],
        Vec::new(),
        all_fetchers(),
        T0,
    );
    let (id, fetch, request) = call_of(&step);
    assert_eq!(fetch, "fetchMedia");
    assert_eq!(request["artifactId"], "F1");
    assert!(request.get("limit").is_none());
    assert_eq!(runs.expects(id), Some(Expect::Bytes));
    let step = runs.answer(&mut store, run, id, Answer::Bytes(vec![1, 2, 3]), T0);
    let Some(Done::Media {
        item: Some(item),
        note: None,
        calls: 1,
        ..
    }) = step.done
    else {
        panic!("expected the file, got {:?}", step.done)
    };
    assert_eq!(item.bytes, vec![1, 2, 3]);

    let (run, step) = runs.start(
        &mut store,
        goal(),
        vec![job],
        Vec::new(),
        all_fetchers(),
        T0,
    );
    let (id, _, _) = call_of(&step);
    let step = runs.answer(&mut store, run, id, Answer::NotBytes("a string".into()), T0);
    let Some(Done::Media {
        item: None,
        note: Some(note),
        ..
    }) = step.done
    else {
        panic!("expected a note, got {:?}", step.done)
    };
    assert!(note.contains("a string instead of bytes"), "{note}");
}

#[test]
fn an_aborted_run_ends_its_fetches_and_wakes_who_joined_them() {
    let mut store = ChannelStore::new(StoreConfig::default());
    let mut runs = Runs::new(false);
    let (first, _) = start_build(&mut runs, &mut store, &ts(5), T0);
    let (second, step) = start_build(&mut runs, &mut store, &ts(5), T0);
    let [Effect::Join { id: join }] = step.effects.as_slice() else {
        panic!("expected a join")
    };
    let join = *join;
    assert_eq!(
        runs.abort(&mut store, first, "the driver failed"),
        vec![join]
    );
    assert_eq!(runs.len(), 1);
    let step = runs.answer(&mut store, second, join, Answer::Woken, T0);
    // The joiner planned again around the failure; a third run now owns the fetch.
    assert!(step.done.is_some() || !step.effects.is_empty());
    let (_, step) = start_build(&mut runs, &mut store, &ts(5), T0);
    assert!(!step.effects.is_empty());
}

#[test]
fn a_build_fetches_in_at_most_max_rounds() {
    assert_eq!(MAX_ROUNDS, 4);
    let mut store = ChannelStore::new(StoreConfig::default());
    let mut runs = Runs::new(false);
    let (run, mut step) = start_build(&mut runs, &mut store, &ts(5), T0);
    let mut calls = 0;
    // Every answer is unusable: each round plans the next fetch until the rounds run out.
    while step.done.is_none() {
        let (id, _, _) = call_of(&step);
        calls += 1;
        step = runs.answer(&mut store, run, id, Answer::Page(None), T0);
    }
    assert!(calls <= MAX_ROUNDS, "{calls}");
}
