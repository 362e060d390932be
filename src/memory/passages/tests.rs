use super::rank::LENGTH_CHUNK;
use super::*;
use crate::memory::store::{NewMessage, Role};

const S: &str = "telegram:chat:42";

fn store_with(messages: &[(&str, Option<&str>, &str)]) -> MemoryStore {
    let mut s = MemoryStore::open(":memory:").unwrap_or_else(|e| panic!("{e}"));
    for (i, (id, topic, text)) in messages.iter().enumerate() {
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
            ts_ms: i64::try_from(i).unwrap_or(0) * 60_000,
            topic_id: *topic,
            reply_to: None,
        };
        s.ingest(&m).unwrap_or_else(|e| panic!("{e}"));
    }
    s
}

/// A store whose root lane holds `texts`, their ids their indexes.
fn store_of_texts(texts: &[String]) -> MemoryStore {
    let ids: Vec<String> = (0..texts.len()).map(|i| i.to_string()).collect();
    let rows: Vec<(&str, Option<&str>, &str)> = ids
        .iter()
        .zip(texts)
        .map(|(id, t)| (id.as_str(), None, t.as_str()))
        .collect();
    store_with(&rows)
}

fn ids(s: &MemoryStore, hits: &[Hit]) -> Vec<String> {
    hits.iter()
        .map(|h| {
            s.message_in(S, h.seq)
                .unwrap_or_else(|e| panic!("{e}"))
                .map_or_else(String::new, |m| m.message_id)
        })
        .collect()
}

fn message_ids(messages: &[ChatMessage]) -> Vec<&str> {
    messages.iter().map(|m| m.message_id.as_str()).collect()
}

#[test]
fn query_terms_drop_stop_words_unless_nothing_else_is_left() {
    assert_eq!(
        query_terms("What did Caroline research, and WHEN?"),
        ["caroline", "research"]
    );
    assert_eq!(query_terms("what is it?"), ["what", "is", "it"]);
    assert_eq!(query_terms("  ,,, "), Vec::<String>::new());
    // Unsegmented runs become character pairs; a lone character stays.
    assert_eq!(
        query_terms("東京大学 in 2024"),
        ["東京", "京大", "大学", "2024"]
    );
    assert_eq!(query_terms("猫"), ["猫"]);
}

#[test]
fn the_fallback_is_the_stop_words_a_question_with_other_words_left_out() {
    assert_eq!(
        fallback_terms("Where is Casey from?"),
        ["where", "is", "from"]
    );
    assert!(fallback_terms("where is it?").is_empty());
}

#[test]
fn a_term_the_lane_never_holds_weighs_nothing() {
    let s = store_with(&[("1", None, "I am from Texas")]);
    let (hits, w) = s
        .lane_hits(S, "root:42", &query_terms("Casey texas"), i64::MAX, 10)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(w[0], 0.0);
    assert!(w[1] > 0.0);
    assert_eq!(ids(&s, &hits), ["1"]);
}

#[test]
fn index_text_spaces_the_pairs_of_unsegmented_runs_and_keeps_the_rest() {
    assert_eq!(index_text("plain words."), "plain words.");
    assert_eq!(index_text("我在东京"), " 我在 在东 东京 ");
    assert_eq!(index_text("v2 猫!"), "v2  猫 !");
}

#[test]
fn a_lane_search_ranks_by_bm25_with_stemming_and_stays_in_its_lane() {
    let s = store_with(&[
        (
            "1",
            None,
            "I have been researching adoption agencies lately",
        ),
        ("2", None, "That sounds like a big step"),
        (
            "3",
            None,
            "the adoption research took weeks, adoption is hard",
        ),
        ("4", Some("7"), "adoption agencies in another topic"),
        ("5", None, "lunch?"),
    ]);
    let lane = "root:42";
    let terms = query_terms("What did she research about adoption?");
    let (hits, weights) = s
        .lane_hits(S, lane, &terms, i64::MAX, 10)
        .unwrap_or_else(|e| panic!("{e}"));
    // "researching" is found by "research"; the other topic's message is not. Both hold
    // both terms; the shorter ranks first.
    assert_eq!(ids(&s, &hits), ["1", "3"]);
    assert_eq!(weights.len(), 2);
    assert!(hits[0].score > hits[1].score && hits[1].score > 0.0);
    // A term fewer messages of the lane hold weighs more.
    let (one, w) = s
        .lane_hits(S, lane, &query_terms("big adoption"), i64::MAX, 10)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(w[0] > w[1], "{w:?}");
    assert_eq!(ids(&s, &one)[0], "2");
    // Only messages older than `below_seq`.
    let (below, _) = s
        .lane_hits(S, lane, &terms, hits[1].seq, 10)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ids(&s, &below), ["1"]);
    // Another session sees nothing.
    assert!(s
        .lane_hits("telegram:chat:43", lane, &terms, i64::MAX, 10)
        .unwrap_or_else(|e| panic!("{e}"))
        .0
        .is_empty());
}

#[test]
fn another_lane_is_searched_only_by_a_match_of_every_term() {
    let s = store_with(&[
        ("1", None, "root lane chatter"),
        ("2", Some("7"), "the adoption agencies list is ready"),
        ("3", Some("8"), "adoption only"),
    ]);
    let strong = |q: &str| {
        s.strong_hits_elsewhere(S, "root:42", &query_terms(q), 10)
            .unwrap_or_else(|e| panic!("{e}"))
    };
    assert_eq!(message_ids(&strong("adoption agencies?")), ["2"]);
    // One term is never strong enough.
    assert!(strong("adoption").is_empty());
    assert!(strong("adoption lunch").is_empty());
}

#[test]
fn cjk_text_is_found_by_a_two_character_word_inside_a_longer_run() {
    let s = store_with(&[("1", None, "我们下周去东京大学参观"), ("2", None, "好的")]);
    let (hits, _) = s
        .lane_hits(S, "root:42", &query_terms("东京在哪里"), i64::MAX, 10)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ids(&s, &hits), ["1"]);
}

#[test]
fn neighbours_are_the_lanes_turns_around_a_message() {
    let s = store_with(&[
        ("1", None, "a"),
        ("2", Some("7"), "other lane"),
        ("3", None, "b"),
        ("4", None, "c"),
        ("5", None, "d"),
    ]);
    let seq_of = |id: &str| {
        s.recent(S, "root:42", 10)
            .unwrap_or_else(|e| panic!("{e}"))
            .into_iter()
            .find(|m| m.message_id == id)
            .map_or(0, |m| m.seq)
    };
    let around = |after, n| {
        s.lane_neighbours(S, "root:42", seq_of("3"), after, n)
            .unwrap_or_else(|e| panic!("{e}"))
            .into_iter()
            .map(|m| m.message_id)
            .collect::<Vec<_>>()
    };
    assert_eq!(around(false, 2), ["1"]);
    assert_eq!(around(true, 2), ["4", "5"]);
    assert_eq!(around(true, 1), ["4"]);
}

#[test]
fn query_syntax_in_a_question_is_only_words() {
    let s = store_with(&[("1", None, "NEAR the AND gate, OR not")]);
    for q in [
        "\"unbalanced",
        "a AND (b",
        "NEAR(x y)",
        "col : x",
        "*",
        "x^y",
    ] {
        s.lane_hits(S, "root:42", &query_terms(q), i64::MAX, 10)
            .unwrap_or_else(|e| panic!("{q}: {e}"));
    }
}

#[test]
fn reading_lengths_only_as_far_as_the_top_can_change_gives_the_top_of_the_whole_ranking() {
    // 1,500 messages of varied length over a few words: many more matches than a chunk.
    let words = ["queue", "release", "venue", "budget", "rollout", "lunch"];
    let mut texts = Vec::new();
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for i in 0..1_500 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let n = usize::try_from(x % 24).unwrap_or(0) + 1;
        let text: Vec<&str> = (0..n)
            .map(|k| words[usize::try_from((x >> (k % 50)) % 6).unwrap_or(0)])
            .chain(std::iter::once(if i % 3 == 0 { "filler" } else { "words" }))
            .collect();
        texts.push(text.join(" "));
    }
    let s = store_of_texts(&texts);
    for q in [
        "venue budget",
        "queue release rollout",
        "lunch",
        "filler venue",
    ] {
        let terms = query_terms(q);
        let (all, _) = s
            .lane_hits(S, "root:42", &terms, i64::MAX, 100_000)
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(all.len() > 2 * LENGTH_CHUNK, "{q}: {}", all.len());
        for k in [1, 10, 200] {
            let (top, _) = s
                .lane_hits(S, "root:42", &terms, i64::MAX, k)
                .unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(top, all[..k], "{q} @{k}");
        }
    }
}

#[test]
fn the_searches_of_an_assembly_are_prepared_once_not_again_for_each_value() {
    use rusqlite::StatementStatus;
    let texts: Vec<String> = (0..300)
        .map(|i| format!("message {i} about the release {}", i % 7))
        .collect();
    let s = store_of_texts(&texts);
    // A bound LIMIT makes SQLite plan the statement again for every new value.
    for (i, q) in ["release 3", "release 4", "message 5", "about 6"]
        .iter()
        .enumerate()
    {
        let seq = 100 + i64::try_from(i).unwrap_or(0);
        s.lane_hits(S, "root:42", &query_terms(q), i64::MAX, 10 + i)
            .unwrap_or_else(|e| panic!("{e}"));
        s.lane_neighbours(S, "root:42", seq, false, 2)
            .unwrap_or_else(|e| panic!("{e}"));
        s.lane_neighbours(S, "root:42", seq, true, 2)
            .unwrap_or_else(|e| panic!("{e}"));
    }
    for after in [false, true] {
        let st = s
            .sqlite()
            .prepare_cached(&neighbours_sql(after, 2))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(st.get_status(StatementStatus::Run), 4);
        assert_eq!(st.get_status(StatementStatus::RePrepare), 0);
    }
}

#[test]
fn a_lanes_statistics_count_each_stored_message_once() {
    let mut s = store_with(&[
        ("1", None, "abcd"),
        ("2", None, "ab"),
        ("3", Some("7"), "x"),
    ]);
    assert_eq!(s.lane_stats(S, "root:42").unwrap_or_default(), (2, 3.0));
    assert_eq!(s.lane_stats(S, "topic:42:7").unwrap_or_default(), (1, 1.0));
    assert_eq!(s.lane_stats(S, "root:43").unwrap_or_default(), (0, 0.0));
    // Stored again: nothing changes. A new one, alone or in a committed turn, counts.
    let again = NewMessage {
        session_id: S,
        chat_id: "42",
        message_id: "2",
        role: Role::User,
        text: "ab",
        ts_ms: 0,
        topic_id: None,
        reply_to: None,
    };
    s.ingest(&again).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.lane_stats(S, "root:42").unwrap_or_default(), (2, 3.0));
    let fresh = NewMessage {
        message_id: "4",
        text: "abcdef",
        ..again.clone()
    };
    s.commit_turn("k1", S, &[fresh], 0)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.lane_stats(S, "root:42").unwrap_or_default(), (3, 4.0));
}

#[test]
fn a_file_from_before_the_index_has_its_messages_indexed_and_counted_when_opened() {
    a_file_from_before_the_index(false);
}

#[test]
fn a_file_a_channel_store_migrated_first_has_its_messages_indexed_when_the_memory_opens_it() {
    a_file_from_before_the_index(true);
}

/// A file at schema version 5 with two messages, opened by the memory (after a saved
/// ChannelStore brought it to the current version first, when `channel_first`).
fn a_file_from_before_the_index(channel_first: bool) {
    let dir = std::env::temp_dir().join(format!(
        "passages-migrate-{}-{channel_first}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap_or(());
    let path = dir.join("v5.sqlite");
    let _ = std::fs::remove_file(&path);
    let path = path.to_string_lossy().to_string();
    {
        let conn = rusqlite::Connection::open(&path).unwrap_or_else(|e| panic!("{e}"));
        for step in &crate::core::db::MIGRATIONS[..5] {
            conn.execute_batch(step).unwrap_or_else(|e| panic!("{e}"));
        }
        conn.pragma_update(None, "user_version", 5).unwrap_or(());
        conn.execute(
            "INSERT INTO messages (session_id, message_id, thread_key, role, text, ts_ms)
             VALUES (?1, 'a', 'root:42', 'user', 'the Lisbon venue is booked', 1),
                    (?1, 'b', 'root:42', 'assistant', 'noted', 2)",
            [S],
        )
        .unwrap_or_else(|e| panic!("{e}"));
    }
    if channel_first {
        drop(crate::core::db::open(&path).unwrap_or_else(|e| panic!("{e}")));
    }
    let s = MemoryStore::open(&path).unwrap_or_else(|e| panic!("{e}"));
    let (hits, _) = s
        .lane_hits(S, "root:42", &query_terms("venue"), i64::MAX, 10)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ids(&s, &hits), ["a"]);
    assert_eq!(s.lane_stats(S, "root:42").unwrap_or_default(), (2, 15.5));
    drop(s);
    // And its index merges segments once two of a size exist.
    let conn = rusqlite::Connection::open(&path).unwrap_or_else(|e| panic!("{e}"));
    let automerge: i64 = conn
        .query_row(
            "SELECT v FROM messages_index_config WHERE k = 'automerge'",
            [],
            |r| r.get(0),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(automerge, 2);
    // And writes pages of about 1,000 bytes.
    let page: i64 = conn
        .query_row(
            "SELECT v FROM messages_index_config WHERE k = 'pgsz'",
            [],
            |r| r.get(0),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(page, 1_000);
    drop(conn);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_question_says_whose_messages_it_is_about() {
    assert_eq!(
        speaker_of("What did I say about the venue?"),
        Some(Role::User)
    );
    assert_eq!(speaker_of("where's my flight number"), Some(Role::User));
    assert_eq!(
        speaker_of("What did you recommend for dinner?"),
        Some(Role::Assistant)
    );
    // Both, or neither: nobody's.
    assert_eq!(speaker_of("what did I tell you about the canary?"), None);
    assert_eq!(speaker_of("Where is Sam from?"), None);
    // Words, not letters inside words.
    assert_eq!(speaker_of("Is that one mine?"), Some(Role::User));
    assert_eq!(speaker_of("Is the iyou thing on?"), None);
}

#[test]
fn newer_messages_rank_a_little_higher_and_the_speakers_more() {
    let now = 400 * 86_400_000;
    let s = Signals::of("what did I say?", now);
    let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
    // A tenth more now, half that after a week (the half-life), next to nothing after months.
    assert!(close(s.factor(now, None), 1.0 + RECENCY_WEIGHT));
    assert!(close(
        s.factor(now - 7 * 86_400_000, None),
        1.0 + RECENCY_WEIGHT / 2.0
    ));
    assert!(s.factor(now - 180 * 86_400_000, None) < 1.0 + 1e-6);
    // The user's messages, for a question of "I".
    assert!(close(
        s.factor(now, Some(Role::User)),
        (1.0 + RECENCY_WEIGHT) * SPEAKER_WEIGHT
    ));
    assert!(close(
        s.factor(now, Some(Role::Assistant)),
        1.0 + RECENCY_WEIGHT
    ));
    // A message from the future (a clock ahead) is "now", never more.
    assert!(close(
        s.factor(now + 86_400_000, None),
        1.0 + RECENCY_WEIGHT
    ));
    assert!(close(Signals::NONE.factor(0, Some(Role::User)), 1.0));
}

#[test]
fn the_speaker_a_question_names_settles_a_match_of_equal_words() {
    // The user (even index) and the assistant each said where the venue is.
    let s = store_with(&[
        ("0", None, "the venue is in Lisbon"),
        ("1", None, "the venue is in Porto!"),
        ("2", None, "lunch?"),
    ]);
    let terms = query_terms("venue");
    let ranked = |q: &str| {
        let (hits, _) = s
            .ranked_lane_hits(S, "root:42", &terms, i64::MAX, 10, &Signals::of(q, 120_000))
            .unwrap_or_else(|e| panic!("{e}"));
        ids(&s, &hits)
    };
    assert_eq!(ranked("where did I say the venue is?"), ["0", "1"]);
    assert_eq!(ranked("where did you say the venue is?"), ["1", "0"]);
    // Without a speaker, the newer one.
    assert_eq!(ranked("where is the venue?"), ["1", "0"]);
}

proptest::proptest! {
    #[test]
    fn a_signal_factor_is_between_one_and_its_bound_and_falls_with_age(
        now in 0i64..4_000_000_000_000,
        age in 0i64..400_000_000_000,
        older in 0i64..400_000_000_000,
        user in proptest::bool::ANY,
        question in "[a-zA-Z ?']{0,40}",
    ) {
        let s = Signals::of(&question, now);
        let role = Some(if user { Role::User } else { Role::Assistant });
        let f = s.factor(now - age, role);
        proptest::prop_assert!(f >= 1.0 && f <= s.max_factor() + 1e-12);
        proptest::prop_assert!(s.factor(now - age - older, role) <= f);
    }
}

#[test]
fn a_kept_message_is_given_only_to_its_own_session() {
    let s = store_with(&[("1", None, "the boat leaves at nine"), ("2", None, "ok")]);
    let read = s
        .lane_neighbours(S, "root:42", i64::MAX, false, 2)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        read.iter().map(|m| m.text.as_str()).collect::<Vec<_>>(),
        ["ok", "the boat leaves at nine"]
    );
    // Kept now: read again, the same; asked for by another session, nothing.
    let seq = read[1].seq;
    let again = s.message_in(S, seq).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(again.as_ref(), Some(&read[1]));
    assert_eq!(
        s.message_in("another", seq)
            .unwrap_or_else(|e| panic!("{e}")),
        None
    );
    assert_eq!(
        s.message_in(S, seq + 100).unwrap_or_else(|e| panic!("{e}")),
        None
    );
}

#[test]
fn the_store_reads_whether_a_message_asks_by_the_one_rule() {
    // SQLite's ranking statement and a message read whole agree, a question inside a long
    // turn included.
    let texts = [
        "Which venue did you book? I looked at three; the riverside one had the best light.",
        "The riverside one, booked for May.",
        "See https://example.com/venues?city=lisbon for the list.",
        "你订了哪个场地？我看了三个。",
        "let x = ready ? 1 : 2;",
        "Booked?",
    ]
    .map(String::from);
    let s = store_of_texts(&texts);
    let seqs: Vec<i64> = (0..texts.len())
        .map(|i| {
            s.message_by_id(S, &i.to_string())
                .unwrap_or_else(|e| panic!("{e}"))
                .map_or(-1, |m| m.seq)
        })
        .collect();
    let rows = s
        .ranking_rows(seqs.iter().copied())
        .unwrap_or_else(|e| panic!("{e}"));
    let asked: Vec<bool> = seqs
        .iter()
        .map(|q| rows.get(q).is_some_and(|r| r.asks))
        .collect();
    assert_eq!(asked, [true, false, false, true, false, true]);
    for q in &seqs {
        let m = s.message_in(S, *q).unwrap_or_else(|e| panic!("{e}"));
        let whole = m.map(|m| crate::memory::message::RankingRow::of(&m));
        assert_eq!(whole.as_ref(), rows.get(q), "{q}");
    }
}
