//! A small two-person chat for the retrieval tests: one session, one lane, a turn a day.

use crate::memory::assemble::AssembleRequest;
use crate::memory::store::{MemoryStore, NewMessage, Role};

pub const S: &str = "telegram:chat:7";
pub const LANE: &str = "root:7";
pub const DAY: i64 = 86_400_000;

/// A store of `turns` (user first, then by turns), one a day from day 0.
pub fn chat(turns: &[&str]) -> MemoryStore {
    let mut s = MemoryStore::open(":memory:").unwrap_or_else(|e| panic!("{e}"));
    for (i, text) in turns.iter().enumerate() {
        let id = i.to_string();
        s.ingest(&NewMessage {
            session_id: S,
            chat_id: "7",
            message_id: &id,
            role: if i % 2 == 0 {
                Role::User
            } else {
                Role::Assistant
            },
            text,
            ts_ms: i64::try_from(i).unwrap_or(0) * DAY,
            topic_id: None,
            reply_to: None,
        })
        .unwrap_or_else(|e| panic!("{e}"));
    }
    s
}

/// An assembly of the chat's lane for `question` at 300 tokens on day 30: the newest
/// message, no memories, no neighbours, any match.
pub fn request(question: &str) -> AssembleRequest<'_> {
    AssembleRequest {
        session_id: S,
        thread_key: LANE,
        policy: "",
        personality: "",
        user_message: question,
        quoted_reply: None,
        query: None,
        recent: Some(1),
        memories: 0,
        budget_tokens: 300,
        now_ms: 30 * DAY,
        host: None,
        passages_max_tokens: None,
        passages_min_terms: 1,
        passages_neighbours: 0,
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
