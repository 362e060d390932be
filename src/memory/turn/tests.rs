use super::*;
use crate::memory::assemble::NEIGHBOURS;

const S: &str = "agent:main:slack:channel:c1:thread:1";
const LANE: &str = "root:c1";

fn message<'a>(id: &'a str, role: Role, text: &'a str, ts_ms: i64) -> NewMessage<'a> {
    NewMessage {
        session_id: S,
        chat_id: "c1",
        message_id: id,
        role,
        text,
        ts_ms,
        topic_id: None,
        reply_to: None,
    }
}

fn request(budget: u64) -> AssembleRequest<'static> {
    AssembleRequest {
        session_id: S,
        thread_key: LANE,
        policy: "",
        personality: "",
        user_message: "",
        quoted_reply: None,
        query: Some("rollout"),
        recent: None,
        memories: 0,
        budget_tokens: budget,
        now_ms: 10_000,
        host: None,
        passages_max_tokens: None,
        passages_min_terms: 1,
        passages_neighbours: NEIGHBOURS,
        verbatim_share: None,
        speakers: &[],
        query_vector: None,
        nearest_weight: 1.0,
        passages_min_weight: 0.0,
        turn_blocks: &[],
        system_blocks: &[],
        history: None,
    }
}

#[test]
fn a_conversation_without_a_summary_is_summarized_by_280_utf16_units_of_its_first_turn() {
    assert_eq!(CONVERSATION_SUMMARY_UNITS, 280);
    assert_eq!(utf16_prefix("abc", 2), "ab");
    assert_eq!(utf16_prefix("abc", 9), "abc");
    // An astral character is two units: cut in half, its lone half reads as U+FFFD.
    assert_eq!(utf16_prefix("a😀b", 2), "a\u{FFFD}");
    assert_eq!(utf16_prefix("a😀b", 3), "a😀");
    let long = "x".repeat(400);
    assert_eq!(utf16_prefix(&long, CONVERSATION_SUMMARY_UNITS).len(), 280);
}

#[test]
fn a_turn_is_stored_once_recorded_as_a_conversation_and_assembled_around_the_host() {
    let mut store = MemoryStore::open(":memory:").unwrap_or_else(|e| panic!("{e}"));
    let first = "the rollout starts Tuesday ".repeat(20);
    let messages = [
        message("m1", Role::User, &first, 1_000),
        message("m2", Role::Assistant, "noted: Tuesday", 2_000),
    ];
    let turn = HostTurn {
        messages: &messages,
        conversation: Some(("c1#root:c1", "s1")),
    };
    let host = [
        HostRef {
            message: Some(0),
            user: true,
            est: 50.0,
        },
        HostRef {
            message: None,
            user: false,
            est: 5.0,
        },
        HostRef {
            message: Some(1),
            user: false,
            est: 5.0,
        },
    ];
    let out = store
        .assemble_turn(&turn, &host, &request(100_000))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(out
        .stored
        .iter()
        .all(|s| s.ingested && s.thread_key == LANE));
    assert_eq!(out.summary_version, None);
    // Every host message fits: all are kept, and none comes back as retrieved.
    assert_eq!(out.assembled.keep_from, 0);
    assert_eq!(out.assembled.passages_included, 0);
    let conv = store
        .conversations("c1#root:c1", 0, 10_000, 0)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(conv.len(), 1);
    assert_eq!((conv[0].started_at_ms, conv[0].ended_at_ms), (1_000, 2_000));
    assert_eq!(conv[0].summary, first[..280]);
    assert_eq!(conv[0].turns.len(), 2);

    // The same turn again stores nothing new and records the conversation once.
    let again = store
        .assemble_turn(&turn, &host, &request(100_000))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(again.stored.iter().all(|s| !s.ingested));
    let conv = store
        .conversations("c1#root:c1", 0, 10_000, 0)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(conv.len(), 1);
}

#[test]
fn host_ids_are_the_ids_the_turn_was_stored_under() {
    let mut store = MemoryStore::open(":memory:").unwrap_or_else(|e| panic!("{e}"));
    // Another lane of the session took id m1 first: this turn's m1 is stored as m1@lane.
    let mut other = message("m1", Role::User, "the other thread's rollout", 500);
    other.topic_id = Some("7");
    let older = message("m0", Role::User, "our rollout history from before", 800);
    store
        .ingest_batch(&[other, older])
        .unwrap_or_else(|e| panic!("{e}"));
    let messages = [message("m1", Role::User, "our rollout question", 1_000)];
    let turn = HostTurn {
        messages: &messages,
        conversation: None,
    };
    let host = [HostRef {
        message: Some(0),
        user: true,
        est: 10.0,
    }];
    let out = store
        .assemble_turn(&turn, &host, &request(100_000))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.stored[0].stored_as.as_deref(), Some("m1@root:c1"));
    // The host's message is known as the stored one, so what is older than it in the
    // lane is retrieved (under the other lane's m1, nothing of this lane would be).
    assert!(
        out.assembled.text.contains("our rollout history"),
        "{}",
        out.assembled.text
    );
    assert!(!out.assembled.text.contains("our rollout question"));
}
