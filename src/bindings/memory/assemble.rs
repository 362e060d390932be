//! `MemoryStore.assemble`: the layered context for one message, its input read and
//! checked here, the layers chosen by `crate::memory::assemble`.

use super::vectors::query_vector;
use super::{count_or, ingested_js, now_or, JsMemoryStore};
use crate::bindings::errors::throw;
use crate::bindings::js::{describe, from_js, is_nullish, shallow_copy_except, to_js};
use crate::core::input::{self, whole_number, InputError};
use crate::memory::assemble::{assemble, AssembleRequest, HostMessage, NEIGHBOURS};
use crate::memory::message::NewMessage;
use crate::memory::shapes::{
    AssembleInput, AssembleTurnInput, AssembledContext, HostMessageInput, SpeakersInput,
};
use crate::memory::turn::{HostRef, HostTurn};
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
    /// store and input. With `turn`, a host that keeps the transcript itself makes one
    /// call per turn: the turn is stored (and recorded as a conversation) first, in the
    /// same call, and `stored` says where each message went.
    #[napi(
        catch_unwind,
        ts_args_type = "input: AssembleInput",
        ts_return_type = "AssembledContext"
    )]
    pub fn assemble<'e>(&self, env: &'e Env, input: Unknown<'e>) -> Result<Unknown<'e>> {
        const F: &str = "MemoryStore.assemble";
        let (input, query_vector) = split_query_vector(env, F, input)?;
        let i: AssembleInput = from_js(env, F, "input", input)?;
        let budget = input::budget_tokens(i.budget_tokens, "input.budgetTokens")
            .map_err(|e| throw(env, F, &e))?;
        let turn = i.turn.as_ref();
        let messages = turn_messages(turn).map_err(|e| throw(env, F, &e))?;
        let refs: Option<Vec<HostRef>> = i
            .host_messages
            .as_ref()
            .map(|list| host_refs(list, turn.map(|_| messages.len())))
            .transpose()
            .map_err(|e| throw(env, F, &e))?;
        let host: Option<Vec<HostMessage<'_>>> = match (&refs, &i.host_messages) {
            (Some(refs), Some(list)) if turn.is_none() => Some(
                refs.iter()
                    .zip(list)
                    .map(|(r, m)| HostMessage {
                        id: m.id.as_deref().unwrap_or_default(),
                        user: r.user,
                        est: r.est,
                    })
                    .collect(),
            ),
            _ => None,
        };
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
        let speakers = i
            .speakers
            .as_ref()
            .map(SpeakersInput::words)
            .unwrap_or_default();
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
            passages_min_weight: weight_or(
                env,
                F,
                "input.retrievedMinWeight",
                i.retrieved_min_weight,
                0.0,
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
            verbatim_share: i
                .verbatim_share
                .map(|x| input::share(x, "input.verbatimShare"))
                .transpose()
                .map_err(|e| throw(env, F, &e))?,
            speakers: &speakers,
            query_vector: query_vector.as_deref(),
            nearest_weight: weight_or(env, F, "input.nearestWeight", i.nearest_weight, 1.0)?,
        };
        let Some(t) = turn else {
            let out = self.with(env, F, |s| assemble(s, &req))?;
            return to_js(env, &AssembledContext::from(&out));
        };
        let host_turn = HostTurn {
            messages: &messages,
            conversation: t
                .conversation
                .as_ref()
                .map(|c| (c.chat_id.as_str(), c.session_id.as_str())),
        };
        let refs = refs.unwrap_or_default();
        let out = self.with(env, F, |s| s.assemble_turn(&host_turn, &refs, &req))?;
        let mut ctx = AssembledContext::from(&out.assembled);
        ctx.stored = Some(ingested_js(out.stored));
        #[allow(clippy::cast_precision_loss)] // versions are small counts
        let version = out.summary_version.map(|v| v as f64);
        ctx.summary_version = Some(version);
        to_js(env, &ctx)
    }
}

/// A weight of the input (finite, at least 0), or `default` when absent.
fn weight_or(env: &Env, func: &str, path: &str, v: Option<f64>, default: f64) -> Result<f64> {
    v.map_or(Ok(default), |w| {
        input::non_negative(w, path).map_err(|e| throw(env, func, &e))
    })
}

/// The input without its `queryVector`, and that vector read (it crosses as numbers, not
/// as JSON): `None` when absent or null.
fn split_query_vector<'e>(
    env: &'e Env,
    func: &str,
    input: Unknown<'e>,
) -> Result<(Unknown<'e>, Option<Vec<f32>>)> {
    if describe(&input) != "object" {
        return Ok((input, None));
    }
    // SAFETY: checked to be an object above.
    let obj: Object = unsafe { input.cast()? };
    if !obj.has_own_property("queryVector")? {
        return Ok((input, None));
    }
    let (copy, v) = shallow_copy_except(env, &obj, Some("queryVector"))?;
    let vector = match v.filter(|v| !is_nullish(v)) {
        Some(v) => Some(query_vector(env, func, "input.queryVector", &v)?),
        None => None,
    };
    Ok((copy.to_unknown(), vector))
}

/// The messages of a host's turn, checked (none without a turn).
fn turn_messages(
    turn: Option<&AssembleTurnInput>,
) -> std::result::Result<Vec<NewMessage<'_>>, InputError> {
    turn.map_or_else(
        || Ok(Vec::new()),
        |t| {
            t.messages
                .iter()
                .enumerate()
                .map(|(n, m)| m.to_new(|| format!("input.turn.messages[{n}]")))
                .collect()
        },
    )
}

/// The host messages as the assembly reads them: each one's estimate checked, and with
/// a turn of `turn_len` messages, the index of its message in it.
fn host_refs(
    list: &[HostMessageInput],
    turn_len: Option<usize>,
) -> std::result::Result<Vec<HostRef>, InputError> {
    list.iter()
        .enumerate()
        .map(|(n, m)| {
            input::non_negative(m.tokens, &format!("input.hostMessages[{n}].tokens"))?;
            let message = match (m.message, turn_len) {
                (None, _) => None,
                (Some(_), None) => {
                    return Err(InputError::type_error(
                        format!("input.hostMessages[{n}].message"),
                        "names a message of `turn`, and there is no `turn`",
                    ))
                }
                (Some(i), Some(len)) => {
                    let path = format!("input.hostMessages[{n}].message");
                    let i = whole_number(i, &path, "a message index")?;
                    match usize::try_from(i).ok().filter(|&i| i < len) {
                        Some(i) => Some(i),
                        None => {
                            return Err(InputError::range_error(
                                path,
                                format!("must be below the {len} messages of `turn`, got {i}"),
                            ))
                        }
                    }
                }
            };
            Ok(HostRef {
                message,
                user: m.user,
                est: m.tokens,
            })
        })
        .collect()
}
