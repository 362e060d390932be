//! `MemoryStore.assemble`: the layered context for one message, its input read and
//! checked here, the layers chosen by `crate::memory::assemble`.

use super::errors::throw;
use super::js::{from_js, to_js};
use super::memory::{count_or, now_or, JsMemoryStore};
use crate::input::{self, InputError};
use crate::memory::assemble::{assemble, AssembleRequest, HostMessage, NEIGHBOURS};
use crate::memory::shapes::{AssembleInput, AssembledContext};
use napi::bindgen_prelude::*;
use napi::Env;
use napi_derive::napi;

#[napi]
impl JsMemoryStore {
    /// The context for one user message: policy, personality, thread summary, retrieved
    /// memories (with the summaries of other lanes the message names), the lane's older
    /// messages that match the message (with the turns around them), recent messages of
    /// the lane, quoted reply, user message, each an escaped XML-like section, within
    /// `budgetTokens`, which the layers share and use: the more budget, the more of the
    /// conversation comes back. Messages are shown under day headings with their dates
    /// and how long ago that was (from `now`). Deterministic to the byte for the same
    /// store and input.
    #[napi(
        catch_unwind,
        ts_args_type = "input: AssembleInput",
        ts_return_type = "AssembledContext"
    )]
    pub fn assemble<'e>(&self, env: &'e Env, input: Unknown<'e>) -> Result<Unknown<'e>> {
        const F: &str = "MemoryStore.assemble";
        let i: AssembleInput = from_js(env, F, "input", input)?;
        let budget = input::budget_tokens(i.budget_tokens, "input.budgetTokens")
            .map_err(|e| throw(env, F, &e))?;
        let host: Option<Vec<HostMessage<'_>>> = i
            .host_messages
            .as_ref()
            .map(|list| {
                list.iter()
                    .enumerate()
                    .map(|(n, m)| {
                        if !m.tokens.is_finite() || m.tokens < 0.0 {
                            return Err(InputError::range_error(
                                format!("input.hostMessages[{n}].tokens"),
                                format!("must be a finite number >= 0, got {}", m.tokens),
                            ));
                        }
                        Ok(HostMessage {
                            id: m.id.as_deref().unwrap_or_default(),
                            user: m.user,
                            est: m.tokens,
                        })
                    })
                    .collect::<std::result::Result<Vec<_>, _>>()
            })
            .transpose()
            .map_err(|e| throw(env, F, &e))?;
        let turn_blocks: Vec<&str> = i.turn_blocks.iter().flatten().map(String::as_str).collect();
        let system_blocks: Vec<&str> = i
            .system_blocks
            .iter()
            .flatten()
            .map(String::as_str)
            .collect();
        let now = now_or(env, F, "input.now", i.now)?;
        let history = i
            .history
            .as_ref()
            .map(|h| h.history_request(now, i.thread_status.unwrap_or(true)))
            .transpose()
            .map_err(|e| throw(env, F, &e.under("input.history")))?;
        let req = AssembleRequest {
            session_id: &i.session_id,
            thread_key: &i.thread_key,
            policy: i.policy.as_deref().unwrap_or_default(),
            personality: i.personality.as_deref().unwrap_or_default(),
            user_message: &i.user_message,
            quoted_reply: i.quoted_reply.as_deref(),
            query: i.query.as_deref(),
            recent: i
                .recent
                .map(|n| count_or(env, F, "input.recent", Some(n), 0))
                .transpose()?,
            memories: count_or(env, F, "input.memories", i.memories, 5)?,
            budget_tokens: budget,
            now_ms: now,
            host: host.as_deref(),
            passages_min_terms: count_or(
                env,
                F,
                "input.retrievedMinTerms",
                i.retrieved_min_terms,
                1,
            )?,
            passages_neighbours: count_or(
                env,
                F,
                "input.retrievedNeighbours",
                i.retrieved_neighbours,
                NEIGHBOURS,
            )?,
            passages_max_tokens: i
                .retrieved_max_tokens
                .map(|n| input::budget_tokens(n, "input.retrievedMaxTokens"))
                .transpose()
                .map_err(|e| throw(env, F, &e))?,
            turn_blocks: &turn_blocks,
            system_blocks: &system_blocks,
            history: history.as_ref(),
        };
        let out = self.with(env, F, |s| assemble(s, &req))?;
        to_js(env, &AssembledContext::from(&out))
    }
}
