//! The tools over a store: scope, search quality cases, fetch planning and answers.

use crate::channel::message::{Event, StoredFile, StoredMessage};
use crate::channel::store::fetch::Need;
use crate::channel::store::{CachedMedia, ChannelStore, StoreConfig};
use crate::channel::tools::channel_messages::{
    build, media_lookup, plan, MediaLookup, MediaResult,
};
use crate::channel::tools::input::{context_input, messages_input};
use crate::core::model::{Author, MediaRef};
use serde_json::{json, Value};

const T0: u64 = 1_775_835_600_000;

fn ts(sec: u64) -> String {
    format!("{}.000100", T0 / 1000 + sec)
}

fn msg(sec: u64, user: &str, text: &str, thread: Option<u64>) -> StoredMessage {
    let author = Author {
        user_id: format!("U_{user}"),
        display_name: user.to_string(),
        is_bot: false,
    };
    let mut m = StoredMessage::new(&ts(sec), author, text).unwrap_or_else(|| panic!("ts"));
    m.thread_id = thread.map(|t| ts(t).into());
    m
}

/// `channel_messages`' answer from what `s` holds, media allowed up to 100 bytes.
fn answer(
    s: &mut ChannelStore,
    channel: &str,
    input: &crate::channel::tools::input::MessagesInput,
) -> Value {
    answer_at(s, channel, input, T0)
}

/// [`answer`] at `now`.
fn answer_at(
    s: &mut ChannelStore,
    channel: &str,
    input: &crate::channel::tools::input::MessagesInput,
    now: u64,
) -> Value {
    serde_json::from_str(&build(s, channel, input, &[], MediaResult::None, 100, now))
        .unwrap_or_default()
}

fn post(s: &mut ChannelStore, channel: &str, m: StoredMessage) {
    s.apply(
        Event::Message {
            channel: channel.into(),
            workspace: None,
            message: Box::new(m),
        },
        T0 + 3_600_000,
    );
}

fn search(s: &mut ChannelStore, channel: &str, input: Value) -> Value {
    let i = context_input(&input, T0).unwrap_or_else(|e| panic!("{e:?}"));
    let out = crate::channel::tools::channel_context::run(s, channel, &i, T0 + 3_600_000);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

fn ids(v: &Value) -> Vec<String> {
    v["results"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|r| r["message_id"].as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
}

fn channel() -> ChannelStore {
    let mut s = ChannelStore::new(StoreConfig::default());
    post(
        &mut s,
        "C1",
        msg(
            1,
            "Sam",
            "Rollout plan for v2.4: canary Tuesday, full Thursday.",
            None,
        ),
    );
    post(&mut s, "C1", msg(2, "Priya", "Lunch anyone?", None));
    post(
        &mut s,
        "C1",
        msg(
            3,
            "Jonas",
            "Der Déploiement ist fehlgeschlagen, ich rolle zurück.",
            None,
        ),
    );
    post(
        &mut s,
        "C1",
        msg(4, "Aiko", "auth-gatewayのデプロイが完了しました", None),
    );
    post(
        &mut s,
        "C1",
        msg(5, "Priya", "We deployed the rollout's second stage", None),
    );
    post(
        &mut s,
        "C2",
        msg(1, "Omar", "Rollout plan of the other channel", None),
    );
    s
}

#[test]
fn search_finds_inflections_accents_and_cjk() {
    let mut s = channel();
    let r = search(&mut s, "C1", json!({"intent": "deploying the rollout"}));
    assert_eq!(ids(&r)[0], ts(5));
    assert!(r["results"][0]["relevance_signal"]
        .as_str()
        .unwrap_or_default()
        .starts_with("keyword:deploying,the,rollout"));
    let r = search(&mut s, "C1", json!({"intent": "deploiement"}));
    assert_eq!(ids(&r), [ts(3)]);
    let r = search(&mut s, "C1", json!({"intent": "デプロイ"}));
    assert_eq!(ids(&r), [ts(4)]);
    assert_eq!(r["coverage"]["messages_scanned"], 5);
}

#[test]
fn search_is_scoped_to_its_channel() {
    let mut s = channel();
    let r = search(&mut s, "C2", json!({"intent": "rollout plan"}));
    assert_eq!(ids(&r), [ts(1)]);
    assert_eq!(r["results"][0]["author"]["display_name"], "Omar");
    let r = search(&mut s, "C9", json!({"intent": "rollout"}));
    assert_eq!(ids(&r), Vec::<String>::new());
}

#[test]
fn edited_and_deleted_words_are_never_found_again() {
    let mut s = channel();
    s.apply(
        Event::Edit {
            channel: "C1".into(),
            message_id: ts(2),
            text: "Dinner anyone?".into(),
            edited: true,
        },
        T0,
    );
    // Nothing matches "lunch" any more: the answer is the recent-activity fallback.
    let r = search(&mut s, "C1", json!({"intent": "lunch"}));
    assert!(r["notes"][0]
        .as_str()
        .unwrap_or_default()
        .starts_with("No held message matches"));
    assert_eq!(
        ids(&search(&mut s, "C1", json!({"intent": "dinner"}))),
        [ts(2)]
    );
    s.apply(
        Event::Delete {
            channel: "C1".into(),
            message_id: ts(1),
        },
        T0,
    );
    let r = search(&mut s, "C1", json!({"intent": "canary"}));
    assert!(!ids(&r).contains(&ts(1)));
    assert!(r["notes"][0]
        .as_str()
        .unwrap_or_default()
        .starts_with("No held message matches"));
}

#[test]
fn since_filters_and_authors_boost() {
    let mut s = channel();
    let r = search(&mut s, "C1", json!({"intent": "rollout", "since": ts(2)}));
    assert_eq!(ids(&r), [ts(5)]);
    assert_eq!(r["coverage"]["messages_scanned"], 4);
    let r = search(
        &mut s,
        "C1",
        json!({"intent": "rollout", "authors": ["sam"]}),
    );
    assert_eq!(ids(&r)[0], ts(1));
    assert!(r["results"][0]["relevance_signal"]
        .as_str()
        .unwrap_or_default()
        .contains("author:sam"));
    let r = search(
        &mut s,
        "C1",
        json!({"intent": "rollout", "authors": ["Nobody"]}),
    );
    assert!(r["notes"][0]
        .as_str()
        .unwrap_or_default()
        .contains("Nobody"));
}

#[test]
fn no_keyword_match_falls_back_to_recent_activity() {
    let mut s = channel();
    let r = search(
        &mut s,
        "C1",
        json!({"intent": "zzzz qqqq", "max_results": 2}),
    );
    assert_eq!(ids(&r), [ts(5), ts(4)]);
    assert_eq!(r["results"][0]["relevance_signal"], "recent_activity");
    assert!(r["notes"][0].as_str().unwrap_or_default().contains("zzzz"));
}

#[test]
fn threads_carry_their_summary() {
    let mut s = channel();
    post(
        &mut s,
        "C1",
        msg(10, "Sam", "Incident: redis failover", None),
    );
    post(&mut s, "C1", msg(11, "Priya", "replica promoted", Some(10)));
    post(
        &mut s,
        "C1",
        msg(12, "Jonas", "latency back to normal", Some(10)),
    );
    let r = search(&mut s, "C1", json!({"intent": "replica promoted"}));
    assert_eq!(ids(&r)[0], ts(11));
    assert_eq!(r["results"][0]["thread_id"], json!(ts(10)));
    assert_eq!(r["results"][0]["thread_summary"]["reply_count"], 2);
    assert_eq!(
        r["results"][0]["thread_summary"]["participant_names"],
        json!(["Priya", "Jonas"])
    );
}

#[test]
fn messages_come_from_the_store_and_other_channels_ids_are_not_found() {
    let mut s = channel();
    post(&mut s, "C1", msg(10, "Sam", "root", None));
    post(&mut s, "C1", msg(11, "Priya", "first", Some(10)));
    let input = messages_input(&json!({"thread_id": ts(10), "message_ids": [ts(1), ts(99)]}))
        .unwrap_or_else(|e| panic!("{e:?}"));
    let needs = plan(&mut s, "C1", &input, &[], T0 + 3_600_000);
    assert_eq!(
        needs,
        vec![Need::Messages {
            channel: "C1".into(),
            ids: vec![ts(99)]
        }]
    );
    let out: Value = answer_at(&mut s, "C1", &input, T0 + 3_600_000);
    assert_eq!(out["thread"]["replies"][0]["text"], "first");
    assert_eq!(
        out["messages"][0]["text"],
        "Rollout plan for v2.4: canary Tuesday, full Thursday."
    );
    assert_eq!(out["not_found"], json!([ts(99)]));
    // The same ids in C2: C2's message, and C1's thread is unknown there.
    let out: Value = answer_at(&mut s, "C2", &input, T0 + 3_600_000);
    assert_eq!(out["messages"][0]["author"]["display_name"], "Omar");
    assert_eq!(out["not_found"], json!([ts(10), ts(99)]));
}

#[test]
fn an_unheld_thread_is_fetched_and_max_replies_keeps_the_newest() {
    let mut s = channel();
    let input = messages_input(&json!({"thread_id": ts(20), "max_replies": 2}))
        .unwrap_or_else(|e| panic!("{e:?}"));
    let needs = plan(&mut s, "C1", &input, &[], T0);
    assert_eq!(
        needs,
        vec![Need::Thread {
            channel: "C1".into(),
            thread: ts(20)
        }]
    );
    let mut page = vec![{
        let mut r = msg(20, "Sam", "root", None);
        r.extras_mut().reply_count = 3;
        r
    }];
    page.extend((21..24).map(|i| msg(i, "Priya", &format!("reply {i}"), Some(20))));
    s.put_thread_page("C1", &ts(20), page, true, true, T0);
    assert!(plan(&mut s, "C1", &input, &[], T0).is_empty());
    let out: Value = answer(&mut s, "C1", &input);
    assert_eq!(out["thread"]["replies"].as_array().map(Vec::len), Some(2));
    assert_eq!(out["thread"]["replies"][1]["text"], "reply 23");
    assert_eq!(out["thread"]["truncation"]["total_replies"], 3);
    assert_eq!(out["thread"]["truncation"]["included_replies"], 2);
}

#[test]
fn media_only_for_files_of_this_channel_with_a_size_guard() {
    let mut s = channel();
    let mut m = msg(30, "Sam", "screenshot", None);
    let file = |id: &str, n: u64| StoredFile {
        media: MediaRef {
            artifact_id: id.into(),
            media_type: "image/png".into(),
            filename: Some("s.png".into()),
            byte_length: n,
        },
        url: None,
    };
    m.extras_mut().files = vec![file("F1", 3), file("F2", 10_000)];
    post(&mut s, "C1", m);
    assert_eq!(media_lookup(&mut s, "C2", "F1", 100), MediaLookup::NotFound);
    assert!(matches!(
        media_lookup(&mut s, "C1", "F1", 100),
        MediaLookup::Fetch(_)
    ));
    assert!(matches!(
        media_lookup(&mut s, "C1", "F2", 100),
        MediaLookup::TooLarge(_)
    ));
    s.put_media(CachedMedia {
        channel: "C1".into(),
        artifact_id: "F1".into(),
        media_type: "image/png".into(),
        filename: None,
        bytes: b"png".to_vec(),
        content_hash: "h".into(),
        fetched_at: T0,
    });
    assert_eq!(media_lookup(&mut s, "C1", "F1", 100), MediaLookup::Cached);
    let input =
        messages_input(&json!({"media_artifact_id": "F1"})).unwrap_or_else(|e| panic!("{e:?}"));
    let out: Value = answer(&mut s, "C1", &input);
    assert_eq!(out["media"]["content"]["type"], "image");
    assert_eq!(out["media"]["content"]["source"]["data"], "cG5n");
    let out: Value = answer(&mut s, "C2", &input);
    assert_eq!(out["not_found"], json!(["F1"]));
    let input =
        messages_input(&json!({"media_artifact_id": "F2"})).unwrap_or_else(|e| panic!("{e:?}"));
    let out: Value = answer(&mut s, "C1", &input);
    assert_eq!(out["media"]["inline"], false);
    assert!(out["media"]["content"]["text"]
        .as_str()
        .unwrap_or_default()
        .contains("larger than"));
}

#[test]
fn a_cut_search_whose_top_has_no_boost_is_not_scored_twice() {
    // Matches from ten years before the channel's newest message have no recency left,
    // so each one's score is its BM25; the cut's k-th BM25 is rounded to f32. The
    // ranking must still take the cut as exact, not score the query a second time.
    let mut s = ChannelStore::new(StoreConfig::default());
    for i in 0..300u64 {
        let text = format!(
            "deploy {}{}",
            "canary ".repeat((i % 5) as usize),
            format!("word{} ", i % 13).repeat((i % 7) as usize)
        );
        post(&mut s, "C1", msg(i, "sam", &text, None));
    }
    post(
        &mut s,
        "C1",
        msg(10 * 365 * 86_400, "sam", "unrelated", None),
    );
    for j in 0..13 {
        let scored =
            |s: &mut ChannelStore| s.search_index_mut("C1").map_or(0, |ix| ix.scored_queries);
        let before = scored(&mut s);
        let out = search(
            &mut s,
            "C1",
            // A word no message has: no match covers the whole query, so no score is an
            // f32 sum times 1.
            json!({"intent": format!("deploy canary word{j} nowhere"), "max_results": 8}),
        );
        assert_eq!(out["results"].as_array().map(Vec::len), Some(8), "{out}");
        assert_eq!(scored(&mut s) - before, 1, "query {j} was scored again");
    }
}
