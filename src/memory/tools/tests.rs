use super::*;
use crate::memory::store::{NewMessage, NewRecord, RecordKind, Role};

const S: &str = "telegram:chat:42";
const DAY: i64 = 86_400_000;
/// 2026-04-10 00:00 UTC.
const T0: i64 = 1_775_779_200_000;
const NOW: i64 = T0 + 30 * DAY;

/// A store of `messages` (id, topic, text, day), each day's at noon plus its index in minutes.
fn store_with(messages: &[(&str, Option<&str>, &str, i64)]) -> MemoryStore {
    let mut s = MemoryStore::open(":memory:").unwrap_or_else(|e| panic!("{e}"));
    for (i, (id, topic, text, day)) in messages.iter().enumerate() {
        let i = i64::try_from(i).unwrap_or(0);
        let m = NewMessage {
            session_id: S,
            chat_id: "42",
            message_id: id,
            role: if i % 2 == 0 {
                Role::User
            } else {
                Role::Assistant
            },
            text,
            ts_ms: T0 + day * DAY + DAY / 2 + i * 60_000,
            topic_id: *topic,
            reply_to: None,
        };
        s.ingest(&m).unwrap_or_else(|e| panic!("{e}"));
    }
    s
}

/// A store whose root lane holds `texts` on day 0, their ids `prefix` and their index.
fn numbered(prefix: &str, texts: &[String]) -> MemoryStore {
    let ids: Vec<String> = (0..texts.len()).map(|i| format!("{prefix}{i}")).collect();
    let rows: Vec<(&str, Option<&str>, &str, i64)> = ids
        .iter()
        .zip(texts)
        .map(|(id, t)| (id.as_str(), None, t.as_str(), 0))
        .collect();
    store_with(&rows)
}

fn scope() -> Scope {
    Scope {
        session: S.to_string(),
        lane: Some("root:42".to_string()),
        speakers: Vec::new(),
    }
}

fn call(s: &MemoryStore, name: &str, input: Value) -> Value {
    let out = run(s, &scope(), name, &input, NOW).unwrap_or_else(|e| panic!("{e}"));
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

fn ids_of(v: &Value, key: &str) -> Vec<String> {
    v[key]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|r| r["id"].as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default()
}

fn chat() -> MemoryStore {
    store_with(&[
        (
            "a1",
            None,
            "We booked the Lisbon venue for the May offsite.",
            0,
        ),
        ("a2", None, "Great, the Lisbon venue has a terrace.", 0),
        ("a3", None, "What about catering?", 1),
        ("a4", None, "Catering is the hotel's own kitchen.", 1),
        (
            "b1",
            Some("7"),
            "The Lisbon flights land at 09:40 on Monday.",
            10,
        ),
        ("b2", Some("7"), "I will book the airport shuttle.", 10),
        ("a5", None, "Anything else for the offsite?", 20),
        ("a6", None, "Just the agenda, due Friday.", 20),
    ])
}

#[test]
fn the_tools_have_valid_api_names_and_strict_schemas() {
    let defs = definitions();
    let names: Vec<&str> = defs.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, [SEARCH_TOOL, EXPAND_TOOL]);
    assert_eq!(names, ["conversation_search", "conversation_expand"]);
    for d in &defs {
        assert!(d
            .name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'));
        assert_eq!(d.input_schema["type"], "object");
        assert_eq!(d.input_schema["additionalProperties"], false);
    }
    assert_eq!(defs[0].input_schema["required"], json!(["query"]));
    assert_eq!(defs[1].input_schema["required"], json!(["id"]));
}

#[test]
fn a_search_covers_every_lane_best_first_with_ids_lanes_and_dates() {
    let s = chat();
    let v = call(&s, SEARCH_TOOL, json!({ "query": "Lisbon venue" }));
    let ids = ids_of(&v, "results");
    // Both words, the shorter message first (BM25), then one word in another lane (the
    // best match holds every word: no second round).
    assert_eq!(ids, ["a2", "a1", "b1"], "{v}");
    assert!(ids.contains(&"b1".to_string()), "another lane's match: {v}");
    let a1 = &v["results"][1];
    assert_eq!(a1["lane"], "root:42");
    assert_eq!(a1["role"], "user");
    assert_eq!(a1["date"], "2026-04-10 12:00 UTC");
    assert_eq!(a1["ago"], "29 days ago");
    let b1 = v["results"]
        .as_array()
        .and_then(|a| a.iter().find(|r| r["id"] == "b1"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(b1["lane"], "topic:42:7");
}

#[test]
fn a_search_keeps_to_a_lane_when_asked() {
    let s = chat();
    let current = call(
        &s,
        SEARCH_TOOL,
        json!({ "query": "Lisbon", "lane": "current" }),
    );
    // The two that say it, then (a one-word query gets the second round) a turn of the
    // same lane about what they are about; none of another lane.
    assert_eq!(ids_of(&current, "results"), ["a2", "a1", "a5"], "{current}");
    assert!(
        current["results"]
            .as_array()
            .is_some_and(|r| r.iter().all(|m| m["lane"] == "root:42")),
        "{current}"
    );
    let topic = call(
        &s,
        SEARCH_TOOL,
        json!({ "query": "Lisbon", "lane": "topic:42:7" }),
    );
    assert_eq!(ids_of(&topic, "results"), ["b1"], "{topic}");
}

#[test]
fn a_search_keeps_to_its_time_window() {
    let s = chat();
    // Day 10 is 2026-04-20; an `until` date counts its whole day.
    let v = call(
        &s,
        SEARCH_TOOL,
        json!({ "query": "Lisbon", "since": "2026-04-15", "until": "2026-04-20" }),
    );
    assert_eq!(ids_of(&v, "results"), ["b1"], "{v}");
    let before = call(
        &s,
        SEARCH_TOOL,
        json!({ "query": "Lisbon", "until": "2026-04-19" }),
    );
    assert_eq!(ids_of(&before, "results"), ["a2", "a1"], "{before}");
    // A duration back from now: the last 15 days hold day 20 only.
    let recent = call(
        &s,
        SEARCH_TOOL,
        json!({ "query": "offsite", "since": "P15D" }),
    );
    assert_eq!(ids_of(&recent, "results"), ["a5"], "{recent}");
}

#[test]
fn a_search_returns_at_most_max_results_default_8_and_cuts_long_texts() {
    let long = format!("budget review {}", "word ".repeat(200));
    let rows: Vec<(String, String)> = (0..12)
        .map(|i| (format!("m{i}"), format!("budget review number {i}")))
        .collect();
    let mut all: Vec<(&str, Option<&str>, &str, i64)> = rows
        .iter()
        .map(|(id, t)| (id.as_str(), None, t.as_str(), 0))
        .collect();
    all.push(("long", None, long.as_str(), 0));
    let s = store_with(&all);
    let v = call(&s, SEARCH_TOOL, json!({ "query": "budget review" }));
    assert_eq!(
        ids_of(&v, "results").len(),
        usize::try_from(DEFAULT_SEARCH_RESULTS).unwrap_or(0)
    );
    let three = call(
        &s,
        SEARCH_TOOL,
        json!({ "query": "budget review", "max_results": 3 }),
    );
    assert_eq!(ids_of(&three, "results").len(), 3);
    let all_of_them = call(
        &s,
        SEARCH_TOOL,
        json!({ "query": "budget review", "max_results": 1000 }),
    );
    assert_eq!(ids_of(&all_of_them, "results").len(), 13);
    let text = all_of_them["results"]
        .as_array()
        .and_then(|a| a.iter().find(|r| r["id"] == "long"))
        .and_then(|r| r["text"].as_str())
        .unwrap_or("")
        .to_string();
    assert_eq!(text.chars().count(), RESULT_CHARS + 1, "{text}");
    assert!(text.ends_with('…'));
}

#[test]
fn a_search_with_no_match_says_so_and_what_to_try() {
    let s = chat();
    let v = call(&s, SEARCH_TOOL, json!({ "query": "kubernetes" }));
    assert_eq!(ids_of(&v, "results"), Vec::<String>::new());
    assert!(
        v["note"].as_str().unwrap_or("").contains("Try other words"),
        "{v}"
    );
}

#[test]
fn expanding_a_message_gives_the_turns_around_it_in_its_lane_oldest_first() {
    let s = chat();
    let v = call(
        &s,
        EXPAND_TOOL,
        json!({ "id": "a3", "before": 1, "after": 2 }),
    );
    assert_eq!(ids_of(&v, "messages"), ["a2", "a3", "a4", "a5"], "{v}");
    assert_eq!(v["lane"], "root:42");
    assert_eq!(v["more_before"], "a1");
    assert_eq!(v["more_after"], "a6");
    // Another lane's message brings its own lane's turns, not the root's.
    let b = call(&s, EXPAND_TOOL, json!({ "id": "b2" }));
    assert_eq!(ids_of(&b, "messages"), ["b1", "b2"], "{b}");
    assert!(b.get("more_before").is_none() && b.get("more_after").is_none());
    // The message's whole text.
    assert_eq!(
        b["messages"][0]["text"],
        "The Lisbon flights land at 09:40 on Monday."
    );
}

#[test]
fn an_expansion_stays_within_its_budget_nearest_turns_first() {
    let texts: Vec<String> = (0..60)
        .map(|i| format!("turn {i}: {}", "the migration plan needs review ".repeat(8)))
        .collect();
    let s = numbered("t", &texts);
    for budget in [MIN_EXPAND_TOKENS, 500, 1_000, 4_000] {
        let v = call(
            &s,
            EXPAND_TOOL,
            json!({ "id": "t30", "before": 50, "after": 50, "max_tokens": budget }),
        );
        assert!(
            counted(&v.to_string()) <= budget,
            "{budget}: {}",
            counted(&v.to_string())
        );
        let got = ids_of(&v, "messages");
        let at = got.iter().position(|i| i == "t30").unwrap_or(usize::MAX);
        assert!(at < got.len(), "{budget}: {got:?}");
        // Nearest first: as many before as after, give or take one.
        assert!(
            (at as i64 - (got.len() - 1 - at) as i64).abs() <= 1,
            "{budget}: {got:?}"
        );
        assert!(v.get("more_before").is_some() && v.get("more_after").is_some());
    }
    // A message larger than the budget alone comes back cut to it.
    let huge = "a very long message about the release ".repeat(400);
    let s = store_with(&[("big", None, huge.as_str(), 0)]);
    let v = call(&s, EXPAND_TOOL, json!({ "id": "big", "max_tokens": 300 }));
    assert!(counted(&v.to_string()) <= 300);
    assert!(v["messages"][0]["text"]
        .as_str()
        .unwrap_or("")
        .ends_with('…'));
}

#[test]
fn a_summary_is_found_and_expands_back_to_the_messages_it_covers() {
    let mut s = chat();
    let id = s
        .put_record(&NewRecord {
            session_id: S,
            kind: RecordKind::ThreadSummary,
            thread_key: "root:42",
            body: "Decisions made:\n- The offsite is at the Lisbon venue; catering by the hotel.",
            summary_version: 1,
            updated_at_ms: T0 + 2 * DAY,
            message_range: Some(("a1", "a4")),
        })
        .unwrap_or_else(|e| panic!("{e}"));
    let v = call(
        &s,
        SEARCH_TOOL,
        json!({ "query": "catering offsite", "lane": "current" }),
    );
    let record = format!("{RECORD_PREFIX}{id}");
    assert_eq!(ids_of(&v, "memories"), std::slice::from_ref(&record), "{v}");
    assert_eq!(v["memories"][0]["kind"], "thread_summary");
    let e = call(&s, EXPAND_TOOL, json!({ "id": record }));
    assert_eq!(ids_of(&e, "messages"), ["a1", "a2", "a3", "a4"], "{e}");
    assert!(e.get("more_after").is_none());
    // Cut by the budget, it says where to go on.
    let long: Vec<String> = (0..40)
        .map(|i| format!("point {i} of the plan: {}", "details ".repeat(30)))
        .collect();
    let mut s = numbered("p", &long);
    let id = s
        .put_record(&NewRecord {
            session_id: S,
            kind: RecordKind::ThreadSummary,
            thread_key: "root:42",
            body: "The plan's points.",
            summary_version: 1,
            updated_at_ms: T0,
            message_range: Some(("p0", "p39")),
        })
        .unwrap_or_else(|e| panic!("{e}"));
    let e = call(
        &s,
        EXPAND_TOOL,
        json!({ "id": format!("{RECORD_PREFIX}{id}"), "max_tokens": 1_000 }),
    );
    assert!(counted(&e.to_string()) <= 1_000);
    let got = ids_of(&e, "messages");
    assert!(!got.is_empty() && got.len() < 40, "{got:?}");
    assert_eq!(got[0], "p0");
    assert_eq!(e["more_after"], format!("p{}", got.len()));
}

#[test]
fn bad_calls_are_errors_the_model_can_read() {
    let s = chat();
    let code = |v: &Value| v["error"]["code"].as_str().unwrap_or("").to_string();
    let field = |v: &Value| v["error"]["field"].as_str().unwrap_or("").to_string();
    let v = call(&s, "memory_search", json!({ "query": "x" }));
    assert_eq!(code(&v), "unknown_tool");
    let v = call(&s, SEARCH_TOOL, json!({}));
    assert_eq!(
        (code(&v), field(&v)),
        ("invalid_input".into(), "query".into())
    );
    let v = call(
        &s,
        SEARCH_TOOL,
        json!({ "query": "x", "since": "last tuesday" }),
    );
    assert_eq!(field(&v), "since");
    let v = call(
        &s,
        SEARCH_TOOL,
        json!({ "query": "x", "since": "2026-04-20", "until": "2026-04-10" }),
    );
    assert_eq!(field(&v), "until");
    let v = call(&s, SEARCH_TOOL, json!({ "query": "x", "chat": "other" }));
    assert_eq!(field(&v), "chat");
    let v = call(&s, EXPAND_TOOL, json!({ "id": "nope" }));
    assert_eq!(field(&v), "id");
    assert!(v["error"]["message"]
        .as_str()
        .unwrap_or("")
        .contains("\"nope\""));
    let v = call(&s, EXPAND_TOOL, json!({ "id": "record:x" }));
    assert_eq!(field(&v), "id");
    let v = call(&s, EXPAND_TOOL, json!({ "id": "a1", "max_tokens": 10 }));
    assert_eq!(field(&v), "max_tokens");
    let v = call(&s, EXPAND_TOOL, json!({ "id": "a1", "before": -1 }));
    assert_eq!(field(&v), "before");
}

#[test]
fn a_tool_set_reaches_nothing_of_another_chat() {
    let s = chat();
    let other = Scope {
        session: "telegram:chat:99".to_string(),
        lane: None,
        speakers: Vec::new(),
    };
    let out = run(
        &s,
        &other,
        SEARCH_TOOL,
        &json!({ "query": "Lisbon venue" }),
        NOW,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let v: Value = serde_json::from_str(&out).unwrap_or_default();
    assert_eq!(ids_of(&v, "results"), Vec::<String>::new());
    let out =
        run(&s, &other, EXPAND_TOOL, &json!({ "id": "a1" }), NOW).unwrap_or_else(|e| panic!("{e}"));
    assert!(out.contains("invalid_input"), "{out}");
}

#[test]
fn ages_read_as_people_say_them() {
    assert_eq!(age_of(NOW, NOW), "just now");
    assert_eq!(age_of(NOW - 60_000, NOW), "1 minute ago");
    assert_eq!(age_of(NOW - 5 * 3_600_000, NOW), "5 hours ago");
    assert_eq!(age_of(NOW - DAY, NOW), "1 day ago");
    assert_eq!(age_of(NOW + DAY, NOW), "later");
    assert_eq!(date_of(T0), "2026-04-10 00:00 UTC");
}

#[test]
fn a_search_about_what_someone_likes_finds_what_they_said_they_like() {
    let mut s = store_with(&[
        ("p1", None, "I love climbing at the old quarry.", 0),
        ("p2", None, "Did you enjoy the concert?", 1),
        ("p3", None, "It was loud, three hours of it.", 1),
        ("p4", None, "I really like hiking when the leaves turn.", 2),
        ("p5", None, "Work starts early tomorrow.", 3),
        ("p6", None, "Same here.", 3),
    ]);
    let policy = crate::memory::summary::CompactionPolicy {
        keep_recent: 1,
        ..crate::memory::summary::CompactionPolicy::default()
    };
    s.compact(S, "root:42", &policy, NOW, true)
        .unwrap_or_else(|e| panic!("{e}"));
    let v = call(
        &s,
        SEARCH_TOOL,
        json!({ "query": "what do they enjoy doing" }),
    );
    let found = ids_of(&v, "results");
    // The turn with the word, and the two preferences stated in other words.
    for id in ["p2", "p1", "p4"] {
        assert!(found.contains(&id.to_string()), "{id}: {v}");
    }
    let plain = call(&s, SEARCH_TOOL, json!({ "query": "concert" }));
    assert!(
        !ids_of(&plain, "results").contains(&"p1".to_string()),
        "{plain}"
    );
}

#[test]
fn a_search_naming_a_speaker_the_scope_gives_ranks_that_speakers_turns_first() {
    // Ann (the user) and the assistant say the same words: the words alone rank the
    // newer first, the assistant's.
    let texts = vec![
        "The lake house is too remote.".to_string(),
        "The lake house is too remote.".to_string(),
    ];
    let s = numbered("m", &texts);
    // Where Ann's turn ranks among the results.
    let rank_of_ann = |speakers: Vec<(String, Role)>| {
        let scope = Scope {
            speakers,
            ..scope()
        };
        let input = json!({ "query": "What did Ann say about the lake house?" });
        let out = run(&s, &scope, SEARCH_TOOL, &input, NOW).unwrap_or_else(|e| panic!("{e}"));
        let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
        v["results"]
            .as_array()
            .and_then(|r| r.iter().position(|m| m["id"] == "m0"))
            .unwrap_or(usize::MAX)
    };
    assert_eq!(rank_of_ann(Vec::new()), 1);
    assert_eq!(rank_of_ann(vec![("ann".to_string(), Role::User)]), 0);
}
