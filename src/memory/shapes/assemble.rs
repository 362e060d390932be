//! The shapes of an assembly: its input, the host's messages, its tokens and result.

use super::*;
use crate::memory::assemble::{Assembled, LayerTokens};
use napi_derive::napi;
use serde::{Deserialize, Serialize};

/// `assemble`'s input: one user message of one lane.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AssembleInput {
    pub session_id: String,
    /// The lane of the user's message (what `ingest` returned for it).
    pub thread_key: String,
    /// The system/developer policy; never dropped. Empty or absent: no section.
    pub policy: Option<String>,
    pub personality: Option<String>,
    /// The user's message; never dropped. Empty: no section (a gateway that sends the
    /// message itself assembles the layers around it).
    pub user_message: String,
    /// The text retrieval and lane naming go by (default: the user message).
    #[napi(ts_type = "string | null")]
    pub query: Option<String>,
    /// The text of the message the user replied to, labelled apart from theirs.
    #[napi(ts_type = "string | null")]
    pub quoted_reply: Option<String>,
    /// Recent messages of the lane, at most (default: as many as the budget gives them).
    pub recent: Option<f64>,
    /// Retrieved memory records, at most (default 5): facts, preferences and outcomes of
    /// the session that match the message, the summaries of lanes it names. A record a
    /// compaction wrote of this lane's own message is left to the retrieved messages,
    /// which bring the message itself.
    pub memories: Option<f64>,
    /// The hard budget of the whole context, in estimated tokens.
    pub budget_tokens: f64,
    /// The moment dates are told from, "3 days ago" (ms since 1970; default: now).
    pub now: Option<f64>,
    /// The conversation's messages the caller sends the model itself, oldest first (a
    /// host's transcript). They take the place of the recent messages: the result's
    /// `keepFrom` says from which one on to send them (whole turns, the newest first,
    /// the current one always), the rest of the budget going to the other layers.
    pub host_messages: Option<Vec<HostMessageInput>>,
    /// The most tokens the retrieved messages may take (default: what the budget leaves
    /// them). They change every turn, so a prompt cache never reuses them.
    pub retrieved_max_tokens: Option<f64>,
    /// Retrieve a match only when it holds at least this many of the question's search
    /// terms, and nothing for a question of fewer search terms ("hello", "thanks") or
    /// none of whose words is in the conversation. Default 1: any match, the question's
    /// common words ("where", "from") standing in when none of its other words is found.
    pub retrieved_min_terms: Option<f64>,
    /// Retrieve a match only when the question's search terms it holds weigh at least
    /// this much together, each weighing its BM25 idf in the conversation,
    /// `ln(1 + (N - n + 0.5) / (n + 0.5))` for a term found in `n` of `N` messages: at 3, a
    /// lone word must be in about one message in 20 or fewer, while two words each in one
    /// message in five clear it together. A bar that a common word ("today", "good")
    /// alone never clears. Default 0: no bar.
    pub retrieved_min_weight: Option<f64>,
    /// How many turns come with each retrieved match on each side, at most (default 2,
    /// at most 16).
    pub retrieved_neighbours: Option<f64>,
    /// Text that changes every turn (a platform's thread block), put in `turn` before
    /// the retrieved messages; left out when it does not fit.
    pub turn_blocks: Option<Vec<String>>,
    /// Text that changes seldom (earlier conversations), put in `system` after the
    /// memories; left out when it does not fit.
    pub system_blocks: Option<Vec<String>>,
    /// A chat's history, built in the same call and put in `system` before
    /// `systemBlocks`: the `<thread-status>` block (unless `threadStatus` is false), then
    /// the chat's earlier conversations by calendar tiers in `<conversation_history>`, at
    /// most `maxTokens` (0: none), as `buildConversationContext` gives them. Its `now`
    /// defaults to this call's.
    pub history: Option<ConversationContextInput>,
    /// Whether the history starts with the `<thread-status>` block (default true).
    pub thread_status: Option<bool>,
    /// With `hostMessages`: a context shaped for a prompt cache, this share of the budget
    /// (above 0, at most 1) deciding how. While the host's messages and the fixed layers
    /// fit it, every message is kept, verbatim (`verbatim` in the result), and a summary
    /// of messages among them is left out. Past it, the messages after the lane's summary
    /// are kept whole while the budget holds them, before anything is retrieved, the
    /// summary has a fixed share, and once they take half the budget (or this share, when
    /// smaller) `foldThrough` names the message a fold should end at (`compact` or
    /// `planCompaction` with `through`), so the kept messages change in large steps.
    /// Absent: the host's messages are kept from the newest as the budget shares it.
    pub verbatim_share: Option<f64>,
    /// A host's turn, stored and recorded in the same call, before the assembly: its
    /// messages stored as `ingest` stores them (those stored before are found, not stored
    /// again), and, with `conversation`, recorded as that session's conversation of the
    /// chat for `history`. Then `hostMessages[i].message` names a message of the turn.
    pub turn: Option<AssembleTurnInput>,
    /// Who writes the conversation's messages, by name (a two-person chat: the user's
    /// name and the agent's), so a question naming one ("What does Ann enjoy doing?")
    /// ranks that speaker's turns first and searches by its other words. Absent: the names
    /// the conversation itself makes clear (a speaker the other greets by name: "Hey Ann!").
    pub speakers: Option<SpeakersInput>,
    /// The question's vector by the host's embedder (the model that gave the messages
    /// theirs through `setVectors`): the lane's messages nearest it by cosine similarity
    /// are retrieved with those its words find, the two rankings fused by reciprocal
    /// rank, so a turn that says what the question asks in other words is found. With a
    /// bar (`retrievedMinTerms` over 1 or `retrievedMinWeight`), only the 8 nearest
    /// join. Absent: the words alone.
    #[napi(ts_type = "Float32Array | number[] | null")]
    #[serde(skip)]
    pub query_vector: Option<Vec<f64>>,
    /// With `queryVector`: what the nearest messages weigh against the matches of the
    /// words in the fusion (at least 0; default 1, equal, for a sentence-embedding model).
    /// At 0 the words' matches keep their order and the nearest fill the room they
    /// leave: for a weak model (word-vector averages), whose nearest are often not
    /// what the question asks (see docs/benchmarks.md).
    pub nearest_weight: Option<f64>,
}

/// The names the user and the assistant go by (see `AssembleInput.speakers`).
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SpeakersInput {
    /// The names the user's messages are written under (e.g. `["Ann Lee"]`).
    pub user: Option<Vec<String>>,
    /// The names the assistant's messages are written under.
    pub assistant: Option<Vec<String>>,
}

impl SpeakersInput {
    /// Each word of each name, lower-cased, with the role it names.
    pub fn words(&self) -> Vec<(String, Role)> {
        let mut out = Vec::new();
        for (names, role) in [(&self.user, Role::User), (&self.assistant, Role::Assistant)] {
            for name in names.iter().flatten() {
                for w in name
                    .split(|c: char| !c.is_alphanumeric())
                    .filter(|w| !w.is_empty())
                {
                    out.push((w.to_lowercase(), role));
                }
            }
        }
        out
    }
}

/// A host's turn for `assemble` (see `AssembleInput.turn`).
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AssembleTurnInput {
    pub messages: Vec<MemoryMessage>,
    /// The conversation to record the messages as (replacing its earlier record), with the
    /// lane's summary as its summary, or the start of its first message while there is
    /// none.
    pub conversation: Option<TurnConversationInput>,
}

/// The chat and session a turn's conversation is recorded under.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TurnConversationInput {
    pub chat_id: String,
    pub session_id: String,
}

/// A message the caller sends the model itself.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HostMessageInput {
    /// The id it was stored under with `ingest` (empty or absent: not stored).
    pub id: Option<String>,
    /// With `turn`: its index in `turn.messages`, whose stored id it takes (absent: not
    /// stored, such as a tool call).
    pub message: Option<f64>,
    /// Written by the user (a kept window opens on a user message).
    pub user: bool,
    /// What it costs as the model receives it: the central estimate of its tokens
    /// (`tokenEstimate(JSON.stringify(message)).estimate`).
    pub tokens: f64,
}

/// Estimated tokens per layer of an assembled context (0 for a layer left out).
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, Serialize)]
pub struct AssembledTokens {
    pub policy: f64,
    pub personality: f64,
    pub summary: f64,
    pub memories: f64,
    /// The retrieved messages: older messages of the lane that match the query.
    pub passages: f64,
    pub recent: f64,
    pub quoted: f64,
    pub user: f64,
    /// The turn and system blocks kept.
    pub blocks: f64,
    /// The caller's messages kept (`hostMessages` from `keepFrom` on).
    pub host: f64,
    /// The whole text, counted as one (what the budget holds; each layer counted alone
    /// carries its own rounding margin, so the layers add up to more).
    pub total: f64,
}

impl From<&LayerTokens> for AssembledTokens {
    #[allow(clippy::cast_precision_loss)] // token counts are far below 2^53
    fn from(t: &LayerTokens) -> Self {
        AssembledTokens {
            policy: t.policy as f64,
            personality: t.personality as f64,
            summary: t.summary as f64,
            memories: t.memories as f64,
            passages: t.passages as f64,
            recent: t.recent as f64,
            quoted: t.quoted as f64,
            user: t.user as f64,
            blocks: t.blocks as f64,
            host: t.host as f64,
            total: t.total as f64,
        }
    }
}

/// An assembled context: the layers as XML-like sections in order, within the budget,
/// which they share (summary, memories and recent messages up to their shares, the
/// retrieved messages the rest, then what is left back to them); never without the
/// policy or the user message.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AssembledContext {
    pub text: String,
    pub tokens: AssembledTokens,
    pub memories_included: f64,
    /// Retrieved messages included (matches of the query and the turns around them).
    pub passages_included: f64,
    pub recent_included: f64,
    /// The policy and the user message alone exceed the budget (both still included).
    pub over_budget: bool,
    /// The part of `text` that changes seldom (policy, personality, summary, system
    /// blocks): for the system prompt, where a cached prefix can reuse it.
    pub system: String,
    /// The part of `text` that changes every turn (the memories retrieved for this
    /// message, turn blocks, retrieved and recent messages, quoted reply, user message):
    /// for after the cached prefix, with the newest user turn. `text` is `system`
    /// followed by `turn`.
    pub turn: String,
    /// With `hostMessages`: the index of the first one to send (0 without).
    pub keep_from: f64,
    /// With `hostMessages`: how many of the first ones the lane's summary stands for
    /// (never sent); a `keepFrom` past it means the budget left messages out.
    pub summary_covers: f64,
    /// `turnBlocks` left out because they did not fit the budget (the last first).
    pub turn_blocks_left_out: f64,
    /// `systemBlocks` left out because they did not fit the budget (the last first).
    pub system_blocks_left_out: f64,
    /// With `verbatimShare`: every host message was kept, verbatim.
    pub verbatim: bool,
    /// With `verbatimShare`, past it: the stored id of the last host message a fold
    /// should take into the summary (the kept messages passed their fold mark, or the
    /// budget left some out); null when nothing is due.
    #[napi(ts_type = "string | null")]
    pub fold_through: Option<String>,
    /// With `turn`: where each of its messages went, as `ingest` says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stored: Option<Vec<IngestedMessage>>,
    /// With `turn`: the version of the lane's summary the assembly read (null: none yet).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[napi(ts_type = "number | null")]
    pub summary_version: Option<Option<f64>>,
}

impl From<&Assembled> for AssembledContext {
    #[allow(clippy::cast_precision_loss)] // counts are far below 2^53
    fn from(a: &Assembled) -> Self {
        AssembledContext {
            text: a.text.clone(),
            tokens: AssembledTokens::from(&a.tokens),
            memories_included: a.memories_included as f64,
            passages_included: a.passages_included as f64,
            system: a.system.clone(),
            turn: a.turn.clone(),
            keep_from: a.keep_from as f64,
            summary_covers: a.summary_covers as f64,
            turn_blocks_left_out: a.turn_blocks_left_out as f64,
            system_blocks_left_out: a.system_blocks_left_out as f64,
            recent_included: a.recent_included as f64,
            over_budget: a.over_budget,
            verbatim: a.verbatim,
            fold_through: a.fold_through.clone(),
            stored: None,
            summary_version: None,
        }
    }
}
