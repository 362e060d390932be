use super::*;

const S: &str = "telegram:chat:42";

fn msg<'a>(id: &'a str, role: Role, text: &'a str, reply_to: Option<&'a str>) -> NewMessage<'a> {
    NewMessage {
        session_id: S,
        chat_id: "42",
        message_id: id,
        role,
        text,
        ts_ms: 1_775_835_600_000,
        topic_id: None,
        reply_to,
    }
}

fn record<'a>(kind: RecordKind, lane: &'a str, body: &'a str) -> NewRecord<'a> {
    NewRecord {
        session_id: S,
        kind,
        thread_key: lane,
        body,
        summary_version: 1,
        updated_at_ms: 1,
        message_range: None,
    }
}

fn store() -> MemoryStore {
    MemoryStore::open(":memory:").unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn a_reply_chain_is_one_lane_and_the_root_lane_stays_apart() {
    let mut s = store();
    let ingest =
        |s: &mut MemoryStore, m: NewMessage<'_>| s.ingest(&m).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        ingest(&mut s, msg("1", Role::User, "deploy v2.4?", None)),
        "root:42"
    );
    assert_eq!(
        ingest(
            &mut s,
            msg("2", Role::Assistant, "Which region?", Some("1"))
        ),
        "reply:42:1"
    );
    assert_eq!(
        ingest(&mut s, msg("3", Role::User, "eu-west", Some("2"))),
        "reply:42:1"
    );
    assert_eq!(
        ingest(&mut s, msg("4", Role::User, "lunch?", None)),
        "root:42"
    );
    // The same message again: stored once, same lane.
    assert_eq!(
        ingest(&mut s, msg("3", Role::User, "eu-west", None)),
        "reply:42:1"
    );
    let lane = s.recent(S, "reply:42:1", 10).unwrap_or_default();
    let ids: Vec<&str> = lane.iter().map(|m| m.message_id.as_str()).collect();
    assert_eq!(ids, ["1", "2", "3"][1..]);
    let root = s.recent(S, "root:42", 10).unwrap_or_default();
    assert_eq!(
        root.iter().map(|m| m.text.as_str()).collect::<Vec<_>>(),
        ["deploy v2.4?", "lunch?"]
    );
    assert_eq!(
        s.recent(S, "root:42", 1).unwrap_or_default()[0].message_id,
        "4"
    );
}

#[test]
fn focus_is_the_reply_target_then_the_lanes_last_assistant_message() {
    let mut s = store();
    for m in [
        msg("1", Role::User, "deploy?", None),
        msg("2", Role::Assistant, "Done.", None),
        msg("3", Role::Assistant, "Anything else?", None),
    ] {
        s.ingest(&m).unwrap_or_else(|e| panic!("{e}"));
    }
    let reply = msg("4", Role::User, "what about eu?", Some("2"));
    assert_eq!(
        s.focus_anchor(&reply, "reply:42:2").unwrap_or(None),
        Some(Focus::ReplyTarget("2".into()))
    );
    let plain = msg("5", Role::User, "thanks", None);
    assert_eq!(
        s.focus_anchor(&plain, "root:42").unwrap_or(None),
        Some(Focus::LastAssistant("3".into()))
    );
    assert_eq!(s.focus_anchor(&plain, "topic:42:9").unwrap_or(None), None);
}

#[test]
fn a_pending_question_takes_only_the_answer_it_expects() {
    let mut s = store();
    s.ingest(&msg(
        "1",
        Role::Assistant,
        "Which date should the rollout start?",
        None,
    ))
    .unwrap_or_else(|e| panic!("{e}"));
    s.put_record(&record(
        RecordKind::ThreadState,
        "root:42",
        r#"{"pending":{"questionId":"1","expects":"date"}}"#,
    ))
    .unwrap_or_else(|e| panic!("{e}"));
    let answer = msg("2", Role::User, "2026-05-04", None);
    let slot = PendingSlot {
        question_id: "1".into(),
        expects: SlotType::Date,
    };
    assert_eq!(
        s.focus_anchor(&answer, "root:42").unwrap_or(None),
        Some(Focus::PendingSlot(slot))
    );
    // An unrelated message is not captured by the pending question.
    let unrelated = msg(
        "3",
        Role::User,
        "can you summarize the incident channel?",
        None,
    );
    assert_eq!(
        s.focus_anchor(&unrelated, "root:42").unwrap_or(None),
        Some(Focus::LastAssistant("1".into()))
    );
    for (t, text, ok) in [
        (SlotType::YesNo, "Yes!", true),
        (SlotType::YesNo, "no idea what the deploy did", false),
        (SlotType::Number, "-12.5", true),
        (SlotType::Number, "twelve", false),
        (SlotType::Date, "Tomorrow", true),
        (SlotType::Date, "2026-13", false),
        (SlotType::Email, "ops@example.com", true),
        (SlotType::Email, "mail ops@example.com please", false),
    ] {
        assert_eq!(t.matches(text), ok, "{t:?} {text:?}");
    }
}

#[test]
fn summaries_are_one_per_lane_facts_accumulate_and_no_secret_is_stored() {
    let mut s = store();
    let first = s
        .put_record(&record(
            RecordKind::ThreadSummary,
            "reply:42:1",
            "Goal: deploy v2.4",
        ))
        .unwrap_or(0);
    let mut second = record(
        RecordKind::ThreadSummary,
        "reply:42:1",
        "Goal: deploy v2.4 to eu-west",
    );
    second.summary_version = 2;
    second.message_range = Some(("1", "7"));
    assert_eq!(s.put_record(&second).unwrap_or(0), first);
    let stored = s
        .record(S, RecordKind::ThreadSummary, "reply:42:1")
        .unwrap_or(None);
    let stored = stored.unwrap_or_else(|| panic!("no summary"));
    assert_eq!(
        (stored.summary_version, stored.body.as_str()),
        (2, "Goal: deploy v2.4 to eu-west")
    );
    assert_eq!(stored.message_range, Some(("1".into(), "7".into())));
    let a = s
        .put_record(&record(
            RecordKind::Fact,
            "",
            "The API key is sk-ant-api03-0123456789abcdefXYZ",
        ))
        .unwrap_or(0);
    let b = s
        .put_record(&record(RecordKind::Fact, "", "Prefers metric units"))
        .unwrap_or(0);
    assert_ne!(a, b);
    let found = s
        .search(S, "API key", "root:42", 5, 1_000)
        .unwrap_or_default();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].body, "The API key is [redacted]");
}

#[test]
fn retrieval_stays_in_the_session_and_the_lane_and_holds_its_limits() {
    let mut s = store();
    s.put_record(&record(
        RecordKind::ThreadSummary,
        "reply:42:1",
        "Rollout of checkout service to eu-west",
    ))
    .unwrap_or(0);
    s.put_record(&record(
        RecordKind::ThreadSummary,
        "reply:42:9",
        "Rollout postmortem draft",
    ))
    .unwrap_or(0);
    s.put_record(&record(
        RecordKind::Outcome,
        "",
        "Rollout of v2.3 failed on the database migration",
    ))
    .unwrap_or(0);
    s.put_record(&record(
        RecordKind::Preference,
        "",
        "デプロイは金曜日に行わない",
    ))
    .unwrap_or(0);
    let other = NewRecord {
        session_id: "telegram:chat:77",
        ..record(RecordKind::Fact, "", "Rollout secrets of another chat")
    };
    s.put_record(&other).unwrap_or(0);

    let found = s
        .search(S, "how did the rollout go?", "reply:42:1", 10, 10_000)
        .unwrap_or_default();
    let bodies: Vec<&str> = found.iter().map(|r| r.body.as_str()).collect();
    assert!(
        bodies.contains(&"Rollout of checkout service to eu-west"),
        "{bodies:?}"
    );
    assert!(
        bodies.contains(&"Rollout of v2.3 failed on the database migration"),
        "{bodies:?}"
    );
    assert!(
        !bodies.contains(&"Rollout postmortem draft"),
        "another lane's summary: {bodies:?}"
    );
    assert!(
        !bodies.iter().any(|b| b.contains("another chat")),
        "another session: {bodies:?}"
    );
    // Japanese, without spaces between words, through the trigram index.
    let cjk = s
        .search(S, "金曜日のデプロイ", "root:42", 10, 10_000)
        .unwrap_or_default();
    assert_eq!(
        cjk.iter().map(|r| r.body.as_str()).collect::<Vec<_>>(),
        ["デプロイは金曜日に行わない"]
    );
    // k and the token cap.
    assert_eq!(
        s.search(S, "rollout", "reply:42:1", 1, 10_000)
            .unwrap_or_default()
            .len(),
        1
    );
    assert!(s
        .search(S, "rollout", "reply:42:1", 10, 5)
        .unwrap_or_default()
        .is_empty());
    // Query syntax in the user's text is data.
    assert!(s
        .search(S, "\"rollout\" OR NEAR(x) AND -", "reply:42:1", 10, 10_000)
        .is_ok());
}

#[test]
fn the_file_keeps_everything_across_a_reopen_and_refuses_what_it_cannot_read() {
    let dir = std::env::temp_dir().join(format!("memory-store-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap_or_default();
    let path = dir.join("memory.sqlite");
    let path = path.to_string_lossy().to_string();
    {
        let mut s = MemoryStore::open(&path).unwrap_or_else(|e| panic!("{e}"));
        s.ingest(&msg("1", Role::User, "remember me", None))
            .unwrap_or_default();
        s.put_record(&record(RecordKind::Fact, "", "Likes tea"))
            .unwrap_or(0);
    }
    let s = MemoryStore::open(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        s.recent(S, "root:42", 5).unwrap_or_default()[0].text,
        "remember me"
    );
    assert_eq!(
        s.search(S, "tea", "root:42", 5, 100)
            .unwrap_or_default()
            .len(),
        1
    );
    drop(s);
    // A newer schema than this build knows.
    let conn = rusqlite::Connection::open(&path).unwrap_or_else(|e| panic!("{e}"));
    conn.pragma_update(None, "user_version", 99).unwrap_or(());
    drop(conn);
    let err = MemoryStore::open(&path).map(|_| ()).unwrap_err();
    assert!(err.to_string().contains("schema version 99"), "{err}");
    // Not a database at all.
    let junk = dir.join("junk.sqlite");
    std::fs::write(&junk, vec![b'x'; 8192]).unwrap_or(());
    let err = MemoryStore::open(&junk.to_string_lossy())
        .map(|_| ())
        .unwrap_err();
    assert!(err.to_string().starts_with("SQLite: "), "{err}");
    std::fs::remove_dir_all(&dir).unwrap_or(());
}

#[test]
fn compaction_folds_all_but_the_newest_ten_incrementally_and_keeps_every_message() {
    use crate::memory::summary::{CompactionPolicy, Trigger};
    let mut s = store();
    let policy = CompactionPolicy::default();
    let texts = |range: std::ops::Range<usize>| {
        range
            .map(|i| match i % 3 {
                0 => format!("Can we ship part {i}?"),
                1 => format!("We decided to ship part {i} behind a flag."),
                _ => format!("Deployed part {i} to staging."),
            })
            .collect::<Vec<_>>()
    };
    for (i, t) in texts(0..35).iter().enumerate() {
        let id = i.to_string();
        let role = if i % 3 == 1 {
            Role::Assistant
        } else {
            Role::User
        };
        s.ingest(&msg(&id, role, t, None)).unwrap_or_default();
    }
    let first = s
        .compact(S, "root:42", &policy, 1_000, false)
        .unwrap_or(None)
        .unwrap_or_else(|| panic!("not due"));
    assert_eq!(
        (first.trigger, first.folded, first.summary_version),
        (Trigger::Messages(35), 25, 1)
    );
    let summary = s
        .record(S, RecordKind::ThreadSummary, "root:42")
        .unwrap_or(None)
        .unwrap_or_else(|| panic!("no summary"));
    assert_eq!(summary.message_range, Some(("0".into(), "24".into())));
    assert!(
        summary
            .body
            .contains("- We decided to ship part 22 behind a flag."),
        "{}",
        summary.body
    );
    assert_eq!(s.unsummarized(S, "root:42").unwrap_or_default().len(), 10);
    // Ten left verbatim: nothing is due until the lane grows again.
    assert_eq!(
        s.compact(S, "root:42", &policy, 2_000, false)
            .unwrap_or(None),
        None
    );
    for (i, t) in texts(35..60).iter().enumerate() {
        let id = (35 + i).to_string();
        let role = if (35 + i) % 3 == 1 {
            Role::Assistant
        } else {
            Role::User
        };
        s.ingest(&msg(&id, role, t, None)).unwrap_or_default();
    }
    let second = s
        .compact(S, "root:42", &policy, 3_000, false)
        .unwrap_or(None)
        .unwrap_or_else(|| panic!("not due"));
    assert_eq!((second.folded, second.summary_version), (25, 2));
    // The summary is bounded (8 items per section): twice the history, about the same
    // context, while sending the history would have doubled.
    assert!(
        second.tokens_after.abs_diff(first.tokens_after) <= 25,
        "{first:?} {second:?}"
    );
    assert!(second.tokens_before > second.tokens_after, "{second:?}");
    let summary = s
        .record(S, RecordKind::ThreadSummary, "root:42")
        .unwrap_or(None)
        .unwrap_or_else(|| panic!("no summary"));
    assert_eq!(summary.message_range, Some(("0".into(), "49".into())));
    assert!(
        summary.body.contains("Deployed part 47 to staging."),
        "{}",
        summary.body
    );
    // Lossless: every message is still stored.
    assert_eq!(s.recent(S, "root:42", 1_000).unwrap_or_default().len(), 60);
}

fn summary_body(s: &MemoryStore) -> String {
    s.record(S, RecordKind::ThreadSummary, "root:42")
        .unwrap_or(None)
        .map(|r| r.body)
        .unwrap_or_default()
}

fn ingest_many(s: &mut MemoryStore, n: usize) {
    for i in 0..n {
        let id = format!("m{i}");
        let text = format!("We decided to keep step {i} small.");
        s.ingest(&msg(&id, Role::User, &text, None))
            .unwrap_or_else(|e| panic!("{e}"));
    }
}

#[test]
fn a_valid_caller_summary_is_stored_and_an_invalid_one_falls_back_to_the_extractive_one() {
    use crate::memory::summary::CompactionPolicy;
    let policy = CompactionPolicy::default();
    let mut s = store();
    ingest_many(&mut s, 12);
    // Below every threshold: nothing is due unless forced, and forcing folds all but ten.
    assert_eq!(
        s.plan_compaction(S, "root:42", &policy, 0, false)
            .unwrap_or_else(|e| panic!("{e}")),
        None
    );
    let plan = s
        .plan_compaction(S, "root:42", &policy, 0, true)
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|| panic!("not planned"));
    assert_eq!(
        (plan.trigger, plan.fold.len(), plan.kept.len()),
        (Trigger::Forced, 2, 10)
    );
    let given = "Current goals / open questions:\n- Keep steps small\nDecisions made:\n- (none)\n\
                 Important facts:\n- (none)\nRecent outcomes:\n- (none)\nPending actions:\n- (none)\n";
    let done = s
        .apply_compaction(&plan, Some(given), 5, None)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        (done.source, done.summary_version),
        (SummarySource::Caller, 1)
    );
    let body = summary_body(&s);
    assert!(body.contains("- Keep steps small"), "{body}");
    // The same plan again: the summary moved on to version 1, so it is stale, and
    // nothing is written.
    let err = s.apply_compaction(&plan, Some(given), 6, None);
    assert!(
        matches!(
            err,
            Err(MemoryError::Stale {
                expected: 0,
                found: 1
            })
        ),
        "{err:?}"
    );
    ingest_many_from(&mut s, 12, 14);
    let plan = s
        .plan_compaction(S, "root:42", &policy, 0, true)
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|| panic!("not planned"));
    let done = s
        .apply_compaction(&plan, Some("Sure! Here is a summary: all good."), 7, None)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        (done.source, done.summary_version),
        (SummarySource::Fallback("text before the first section"), 2)
    );
    let body = summary_body(&s);
    // The fallback builds on the caller's valid summary of version 1.
    assert!(body.contains("- Keep steps small"), "{body}");
    assert!(
        body.contains("- We decided to keep step 2 small."),
        "{body}"
    );
}

fn ingest_many_from(s: &mut MemoryStore, from: usize, to: usize) {
    for i in from..to {
        let id = format!("m{i}");
        s.ingest(&msg(&id, Role::Assistant, "ok", None))
            .unwrap_or_else(|e| panic!("{e}"));
    }
}

#[test]
fn a_turn_is_committed_once_under_its_key_with_all_its_messages() {
    let mut s = store();
    let turn = [
        msg("t1", Role::User, "deploy?", None),
        msg("t2", Role::Assistant, "done", None),
    ];
    assert!(s.commit_turn("k1", S, &turn, 1).unwrap_or(None).is_some());
    // A host retry of the same key writes nothing, even with other messages.
    let retry = [msg("t3", Role::User, "again", None)];
    assert!(s
        .commit_turn("k1", S, &retry, 2)
        .unwrap_or(Some(Vec::new()))
        .is_none());
    let texts: Vec<String> = s
        .recent(S, "root:42", 10)
        .unwrap_or_default()
        .into_iter()
        .map(|m| m.text)
        .collect();
    assert_eq!(texts, ["deploy?", "done"]);
}

#[test]
fn a_holder_whose_lock_expired_cannot_write_over_a_newer_holders_summary() {
    use crate::memory::summary::CompactionPolicy;
    let policy = CompactionPolicy::default();
    let mut s = store();
    ingest_many(&mut s, 12);
    let plan = |s: &MemoryStore| {
        s.plan_compaction(S, "root:42", &policy, 0, true)
            .unwrap_or_else(|e| panic!("{e}"))
            .unwrap_or_else(|| panic!("not planned"))
    };
    // Holder 7 plans; its lock expires; holder 8 plans on the same version and writes.
    let stale_holder = plan(&s);
    let newer_holder = plan(&s);
    let done = s
        .apply_compaction(&newer_holder, None, 1, Some(8))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(done.summary_version, 1);
    // Holder 7 wakes up: refused by its token before its version is even looked at.
    let err = s.apply_compaction(&stale_holder, None, 2, Some(7));
    assert!(
        matches!(
            err,
            Err(MemoryError::Fenced {
                fence: Some(7),
                found: 8
            })
        ),
        "{err:?}"
    );
    // A write without a token over a summary written under one is refused too: a
    // process-local lock cannot exclude another worker.
    let err = s.apply_compaction(&stale_holder, None, 2, None);
    assert!(
        matches!(
            err,
            Err(MemoryError::Fenced {
                fence: None,
                found: 8
            })
        ),
        "{err:?}"
    );
    // The next holder (9) writes on top; the summary is at version 2 under token 9.
    for i in 0..3 {
        let id = format!("later{i}");
        s.ingest(&msg(&id, Role::User, "One more step.", None))
            .unwrap_or_else(|e| panic!("{e}"));
    }
    let next = plan(&s);
    let done = s
        .apply_compaction(&next, None, 3, Some(9))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(done.summary_version, 2);
}

#[test]
fn an_id_reused_in_another_lane_is_stored_qualified_never_dropped() {
    let mut s = store();
    let topic = |id: &'static str, topic: &'static str, text: &'static str| NewMessage {
        topic_id: Some(topic),
        ..msg(id, Role::Assistant, text, None)
    };
    // A provider numbers replies per connection: "resp-1" in topic 7, then in topic 9.
    let out = s
        .ingest_batch(&[
            topic("resp-1", "7", "The canary goes out on Tuesday."),
            topic("resp-1", "9", "The offsite is in Lisbon."),
        ])
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        out,
        [
            Ingested {
                thread_key: "topic:42:7".into(),
                ingested: true,
                stored_as: None,
            },
            Ingested {
                thread_key: "topic:42:9".into(),
                ingested: true,
                stored_as: Some("resp-1@topic:42:9".into()),
            },
        ]
    );
    let texts = |s: &MemoryStore, lane: &str| -> Vec<String> {
        s.recent(S, lane, 10)
            .unwrap_or_else(|e| panic!("{e}"))
            .into_iter()
            .map(|m| m.text)
            .collect()
    };
    assert_eq!(texts(&s, "topic:42:9"), ["The offsite is in Lisbon."]);
    assert_eq!(texts(&s, "topic:42:7"), ["The canary goes out on Tuesday."]);
    // Either one again (a host retry) writes nothing; the same id in its own lane is a
    // repeat, not a new message.
    let again = s
        .ingest_batch(&[
            topic("resp-1", "9", "The offsite is in Lisbon."),
            topic("resp-1", "7", "The canary goes out on Tuesday."),
        ])
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        again.iter().map(|i| i.ingested).collect::<Vec<_>>(),
        [false, false]
    );
    assert_eq!(again[0].stored_as.as_deref(), Some("resp-1@topic:42:9"));
    assert_eq!(again[1].stored_as, None);
    assert_eq!(texts(&s, "topic:42:9").len(), 1);
    // The same message (role and text) arriving through another lane is not a new one.
    let moved = s
        .ingest_batch(&[topic("resp-1", "11", "The canary goes out on Tuesday.")])
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        moved,
        [Ingested {
            thread_key: "topic:42:7".into(),
            ingested: false,
            stored_as: None,
        }]
    );
}

#[test]
fn a_compaction_writes_what_the_messages_state_as_records_once_with_their_message() {
    use crate::memory::summary::CompactionPolicy;
    let mut s = store();
    let texts = [
        "My favorite movie is Spirited Away.",
        "Agreed!",
        "The canary failed on eu-west after the schema change.",
        "We always deploy from the release branch.",
        "My favorite movie is Spirited Away.",
    ];
    for i in 0..15 {
        let id = format!("m{i}");
        let text = texts[i % texts.len()];
        s.ingest(&msg(&id, Role::User, text, None))
            .unwrap_or_else(|e| panic!("{e}"));
    }
    let policy = CompactionPolicy::default();
    let plan = s
        .plan_compaction(S, "root:42", &policy, 1_000, true)
        .unwrap_or(None)
        .unwrap_or_else(|| panic!("nothing to fold"));
    s.apply_compaction(&plan, None, 1_000, None)
        .unwrap_or_else(|e| panic!("{e}"));
    let found = |q: &str| s.search(S, q, "root:42", 10, 10_000).unwrap_or_default();
    let movie = found("favorite movie");
    let kinds: Vec<(RecordKind, &str)> = movie
        .iter()
        .map(|r| (r.kind, r.body.as_str()))
        .filter(|(k, _)| *k != RecordKind::ThreadSummary)
        .collect();
    // Said three times in the folded messages, written once, from the first message.
    assert_eq!(
        kinds,
        [(
            RecordKind::Preference,
            "My favorite movie is Spirited Away."
        )]
    );
    let pref = movie
        .iter()
        .find(|r| r.kind == RecordKind::Preference)
        .unwrap_or_else(|| panic!("no preference"));
    assert_eq!(pref.message_range, Some(("m0".into(), "m0".into())));
    assert_eq!(pref.thread_key, "root:42");
    assert!(found("canary eu-west")
        .iter()
        .any(|r| r.kind == RecordKind::Outcome && r.body.starts_with("The canary failed")));
    assert!(found("release branch")
        .iter()
        .any(|r| r.kind == RecordKind::Fact && r.body.starts_with("We always deploy")));
    // Filler is no record.
    assert!(!found("agreed").iter().any(|r| r.body == "Agreed!"));
}

#[test]
fn a_plan_handed_back_is_fenced_first_then_taken_back_as_the_store_stands() {
    use crate::memory::summary::CompactionPolicy;
    let policy = CompactionPolicy::default();
    let mut s = store();
    ingest_many(&mut s, 12);
    // Not due (12 messages), but forced: the whole compaction in one domain call.
    assert!(s
        .compact(S, "root:42", &policy, 0, false)
        .unwrap_or_else(|e| panic!("{e}"))
        .is_none());
    let plan = s
        .plan_compaction(S, "root:42", &policy, 0, true)
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|| panic!("not planned"));
    let last = plan
        .fold
        .last()
        .map(|m| m.message_id.clone())
        .unwrap_or_default();
    let planned = PlannedCompaction {
        session: S,
        lane: "root:42",
        version: 0,
        last_folded: &last,
        trigger: plan.trigger,
    };
    let done = s
        .apply_planned(&planned, None, 1, Some(5))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(done.summary_version, 1);
    // The same plan again is stale; with an older token it is fenced, and that is said
    // first.
    assert!(matches!(
        s.apply_planned(&planned, None, 2, Some(5)),
        Err(MemoryError::Stale { .. })
    ));
    assert!(matches!(
        s.apply_planned(&planned, None, 2, Some(4)),
        Err(MemoryError::Fenced {
            fence: Some(4),
            found: 5
        })
    ));
    // A lane written under a fence is not compacted without one (the convenience
    // `compact` has none): another worker may hold its lock.
    ingest_many_from(&mut s, 12, 30);
    assert!(matches!(
        s.compact(S, "root:42", &policy, 3, true),
        Err(MemoryError::Fenced {
            fence: None,
            found: 5
        })
    ));
}

/// A long turn: `words` words of varied prose, numbered by `n` so no two are the same.
fn long_turn(n: usize, words: usize) -> String {
    const WORDS: [&str; 12] = [
        "the", "schedule", "moved", "because", "our", "vendor", "asked", "for", "another",
        "review", "of", "costs",
    ];
    let mut out = format!("Turn {n}:");
    for i in 0..words {
        out.push(' ');
        out.push_str(WORDS[(i * 7 + n) % WORDS.len()]);
    }
    out.push('.');
    out
}

#[test]
fn a_lane_of_long_turns_compacts_in_steps_down_to_its_low_water_mark() {
    // A user and an assistant whose turns run to hundreds of tokens: ten kept messages
    // hold more than the 2,500-token trigger, which once meant a compaction of one message
    // after every turn.
    let mut s = store();
    let policy = CompactionPolicy::default();
    let (mut compactions, mut messages) = (0, 0);
    for n in 0..200 {
        let (role, words) = if n % 2 == 0 {
            (Role::User, 120)
        } else {
            (Role::Assistant, 260)
        };
        let text = long_turn(n, words);
        let id = n.to_string();
        s.ingest(&msg(&id, role, &text, None))
            .unwrap_or_else(|e| panic!("{e}"));
        messages += 1;
        let done = s
            .compact(S, "root:42", &policy, 1_775_835_600_000, false)
            .unwrap_or_else(|e| panic!("{e}"));
        if let Some(c) = done {
            compactions += 1;
            assert!(c.folded >= policy.min_fold, "folded {}", c.folded);
            let left = s
                .unsummarized(S, "root:42")
                .unwrap_or_else(|e| panic!("{e}"));
            let tokens = counted_all(left.iter().map(|m| m.text.as_str()));
            assert!(
                left.len() == 1 || tokens <= policy.max_recent_tokens / 2,
                "{} messages of {tokens} tokens left",
                left.len()
            );
        }
    }
    assert!(compactions >= 10, "{compactions} compactions");
    assert!(
        compactions * 10 <= messages,
        "{compactions} in {messages} turns"
    );
}

#[test]
fn the_kept_messages_are_the_newest_within_the_count_and_half_the_token_trigger() {
    let p = CompactionPolicy::default();
    assert_eq!(p.kept([10; 20]), 10);
    assert_eq!(p.kept([400, 400, 400, 400]), 3);
    // The newest always stays, however long.
    assert_eq!(p.kept([9_000, 10]), 1);
    assert_eq!(p.kept(std::iter::empty()), 0);
}

#[test]
fn an_assistants_prose_is_no_record_and_no_fact_of_the_summary_the_users_statements_are() {
    let mut s = store();
    let prose = "I apologize for the confusion in my earlier answer. As an AI language model, \
                 I must always remind you that backups are important and you should never skip \
                 them. Here is a longer explanation of how rotating backups work: a daily copy is \
                 kept for a week, a weekly copy for a month, and a monthly copy for a year, which \
                 balances what it costs to keep them against how far back you can reach when \
                 something goes wrong. We always recommend testing a restore now and then.";
    let texts = [
        (Role::User, "I moved to Denver last month for the new job."),
        (Role::Assistant, prose),
        (Role::User, "My sister Maya prefers the train over flying."),
        (Role::Assistant, "I love hiking near Boulder."),
        (Role::Assistant, "I never drink coffee after noon."),
    ];
    for i in 0..12 {
        let (role, text) = texts[i % texts.len()];
        s.ingest(&msg(&format!("m{i}"), role, text, None))
            .unwrap_or_else(|e| panic!("{e}"));
    }
    let policy = CompactionPolicy {
        keep_recent: 2,
        ..CompactionPolicy::default()
    };
    s.compact(S, "root:42", &policy, 1_000, true)
        .unwrap_or_else(|e| panic!("{e}"));
    let bodies = |q: &str| -> Vec<String> {
        s.search(S, q, "root:42", 20, 100_000)
            .unwrap_or_default()
            .into_iter()
            .filter(|r| r.kind != RecordKind::ThreadSummary)
            .map(|r| r.body)
            .collect()
    };
    assert!(bodies("moved Denver").iter().any(|b| b.contains("Denver")));
    assert!(bodies("Maya train").iter().any(|b| b.contains("Maya")));
    // A short turn of the other side is a person's: what they like is theirs.
    assert!(bodies("hiking Boulder")
        .iter()
        .any(|b| b.contains("hiking")));
    let junk = bodies("apologize confusion AI language model backups restore copy");
    assert!(junk.is_empty(), "{junk:?}");
    let summary = summary_body(&s);
    assert!(!summary.contains("AI language model"), "{summary}");
    assert!(!summary.contains("restore"), "{summary}");
    // The same rule as the records: a short turn of the other side states a fact.
    assert!(
        summary.contains("I never drink coffee after noon."),
        "{summary}"
    );
}

/// Compacts the lane of `S` after storing `texts` as the user's turns (and two more
/// kept as recent), and returns the session's records matching `query`.
fn records_stated(texts: &[&str], query: &str) -> (MemoryStore, Vec<Record>) {
    let mut s = store();
    let ids: Vec<String> = (0..texts.len() + 2).map(|i| format!("m{i}")).collect();
    for (i, id) in ids.iter().enumerate() {
        let text = texts.get(i).copied().unwrap_or("ok");
        s.ingest(&msg(id, Role::User, text, None))
            .unwrap_or_else(|e| panic!("{e}"));
    }
    let policy = CompactionPolicy {
        keep_recent: 2,
        min_fold: 1,
        ..CompactionPolicy::default()
    };
    s.compact(S, "root:42", &policy, 1_000, true)
        .unwrap_or_else(|e| panic!("{e}"));
    let found = s
        .search(S, query, "root:42", 20, 100_000)
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .filter(|r| r.kind != RecordKind::ThreadSummary)
        .collect();
    (s, found)
}

#[test]
fn a_changed_statement_supersedes_the_one_it_changes_and_a_search_finds_the_newest() {
    let (s, found) = records_stated(
        &[
            "My favourite colour is blue.",
            "I work as a nurse at the city hospital.",
            "My favourite colour is green now.",
        ],
        "favourite colour",
    );
    let bodies: Vec<&str> = found.iter().map(|r| r.body.as_str()).collect();
    assert_eq!(bodies, ["My favourite colour is green now."], "{found:?}");
    // The older one is kept, marked with the record that changed it.
    let green = found[0].id;
    let blue = s
        .search(S, "blue", "root:42", 20, 100_000)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(blue.len(), 1, "{blue:?}");
    assert_eq!(blue[0].superseded_by, Some(green));
}

#[test]
fn a_statement_on_another_subject_or_in_other_words_supersedes_nothing() {
    let (_, found) = records_stated(
        &[
            "My sister lives in Lisbon with her two cats.",
            "My brother lives in Porto.",
            "I really love hiking in the mountains.",
            "I love hiking in the mountains.",
        ],
        "lives hiking mountains",
    );
    assert!(found.iter().all(|r| r.superseded_by.is_none()), "{found:?}");
    assert_eq!(found.len(), 4, "{found:?}");
}
