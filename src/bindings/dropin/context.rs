//! Drop-in exports of the context modules: token estimate, snippets, thread budget,
//! ChannelSnapshot, ThreadContext and the prompt section.

use crate::bindings::errors::named;
use crate::bindings::errors::throw;
use crate::bindings::js::js_string;
use crate::bindings::js::{
    budget_arg, create_js_string, describe, expect_object, from_js, from_js_opt, to_js,
};
use crate::core::input::InputError;
use crate::core::model::ThreadContext;
use crate::core::model::{ChannelSnapshotInput, ThreadInput, ThreadTelemetry, Truncation};
use crate::core::prompt::{build_prompt_section, PromptOptionsInput, PromptSectionInput};
use crate::core::snapshot::build_channel_snapshot;
use crate::core::text::{
    cut_end_units, cut_probe_unit, snippet_units, tokens_for_units, REPLY_MAX_TOKENS,
};
use crate::core::thread::{build_thread_context, BudgetedThread};
use crate::dropin::context::{thread_plan, StructuredContextInput, ThreadDataInput};
use napi::bindgen_prelude::*;
use napi::{Env, JsString, JsValue, ValueType};
use napi_derive::napi;
use serde::Serialize;

/// The truncation strategy a ThreadContext names, for `js/dropin/context.js`.
#[napi(skip_typescript)]
pub const TRUNCATION_STRATEGY: &str = crate::core::model::STRATEGY_MOST_RECENT;

/// The unit of a reply over 300 tokens its cut looks at (`_threadPlan`'s `probes`), for
/// `js/dropin/context.js`.
#[napi(skip_typescript)]
pub const REPLY_CUT_PROBE_UNIT: u32 = cut_probe_unit((REPLY_MAX_TOKENS * 4) as usize) as u32;

/// What ends a cut text (`…`), for `js/dropin/context.js`.
#[napi(skip_typescript)]
pub const CUT_MARK: &str = crate::core::text::ELLIPSIS_STR;

/// Default token budget of a ThreadContext (root plus replies): 8000.
#[napi]
pub const THREAD_BUDGET_TOKENS: u32 = crate::core::text::THREAD_BUDGET_TOKENS;

/// Longest adjacent-message snippet in UTF-16 units, `…` included: 150.
#[napi]
pub const SNIPPET_MAX_CHARS: u32 = crate::core::text::SNIPPET_MAX_CHARS as u32;

/// The `budgetTokens` argument of the thread exports: 8000 when absent.
fn thread_budget(env: &Env, func: &str, v: Option<&Unknown>) -> Result<u64> {
    let default = u64::from(crate::core::text::THREAD_BUDGET_TOKENS);
    budget_arg(env, func, "budgetTokens", v, default)
}

/// Estimated tokens of a text: `ceil(text.length / 4)`, counting UTF-16 code units as
/// `String.prototype.length` does (`"😀"` is 2 units, 1 token); 0 for `""`.
#[napi(catch_unwind, ts_args_type = "text: string")]
pub fn estimate_tokens(env: &Env, text: Unknown) -> Result<u32> {
    let s = js_string(env, "estimateTokens", "text", &text)?;
    let tokens = tokens_for_units(s.utf16_len()?);
    Ok(u32::try_from(tokens).unwrap_or(u32::MAX))
}

/// A one-line snippet: whitespace runs collapsed to one space, trimmed; when longer than
/// 150 UTF-16 units, the first 149 (148 rather than split an emoji) plus `…`.
#[napi(catch_unwind, ts_args_type = "text: string")]
pub fn truncate_snippet<'e>(env: &'e Env, text: Unknown<'e>) -> Result<JsString<'e>> {
    let s = js_string(env, "truncateSnippet", "text", &text)?;
    let units = s.into_utf16()?;
    // The buffer napi fills ends with a NUL terminator, which is not part of the text.
    let text = units.as_slice().split_last().map_or(&[][..], |(_, t)| t);
    env.create_string_utf16(snippet_units(text.iter().copied()))
}

/// Keeps the most recent replies that fit `budgetTokens` (default 8000), filling from the
/// newest backwards; the newest reply is always kept, even alone over budget. Replies keep
/// their order and are returned as the same objects. `omitted_range_ts` is
/// `[oldest omitted ts, newest omitted ts]`, or `null`.
#[napi(
    catch_unwind,
    ts_generic_types = "T extends BudgetReply",
    ts_args_type = "input: { replies: T[]; budgetTokens?: number | null }",
    ts_return_type = "{ included: T[]; truncation: Truncation }"
)]
pub fn apply_thread_budget<'e>(env: &'e Env, input: Unknown<'e>) -> Result<Object<'e>> {
    named(
        env,
        "applyThreadBudget",
        "input",
        || -> Result<Object<'e>> {
            const F: &str = "applyThreadBudget";
            expect_object(env, F, "input", &input)?;
            // SAFETY: checked to be an object by `expect_object` above.
            let input: Object = unsafe { input.cast()? };
            let budget_value: Unknown = input.get_named_property("budgetTokens")?;
            let budget = thread_budget(env, F, Some(&budget_value))?;
            let replies: Unknown = input.get_named_property("replies")?;
            if !replies.is_array()? {
                return Err(throw(
                    env,
                    F,
                    &InputError::type_error(
                        "replies",
                        format!("expected an array, got {}", describe(&replies)),
                    ),
                ));
            }
            // SAFETY: checked to be an array above.
            let replies: Object = unsafe { replies.cast()? };
            let n = replies.get_array_length()?;
            let mut items: Vec<Unknown> = Vec::with_capacity(n as usize);
            let mut stamps: Vec<JsString> = Vec::with_capacity(n as usize);
            let mut units: Vec<usize> = Vec::with_capacity(n as usize);
            for i in 0..n {
                let item: Unknown = replies.get_element(i)?;
                expect_object(env, F, &format!("replies[{i}]"), &item)?;
                // SAFETY: checked to be an object by `expect_object` above.
                let reply: Object = unsafe { item.cast()? };
                let text: Unknown = reply.get_named_property("text")?;
                let text = js_string(env, F, &format!("replies[{i}].text"), &text)?;
                let ts: Unknown = reply.get_named_property("ts")?;
                stamps.push(js_string(env, F, &format!("replies[{i}].ts"), &ts)?);
                units.push(text.utf16_len()?);
                items.push(item);
            }

            let omitted = thread_plan(units.into_iter(), budget).first;
            let mut included = env.create_array(n - omitted as u32)?;
            for (i, item) in (0u32..).zip(&items[omitted..]) {
                included.set(i, *item)?;
            }
            let text_of = |s: &JsString| s.into_utf8().and_then(napi::JsStringUtf8::into_owned);
            let range = match omitted {
                0 => None,
                _ => Some((text_of(&stamps[0])?, text_of(&stamps[omitted - 1])?)),
            };
            let truncation =
                Truncation::most_recent(u64::from(n), u64::from(n - omitted as u32), range);
            let mut out = Object::new(env)?;
            out.set_named_property("included", included)?;
            out.set_named_property("truncation", to_js(env, &truncation)?)?;
            Ok(out)
        },
    )
}

/// The budget rule of `applyThreadBudget` over text lengths alone: given each reply's
/// text length in UTF-16 units (oldest first), the index of the first reply kept when
/// filling newest-first within `budgetTokens` (default 8000). Replies from that index on
/// fit; the newest is always kept. For callers that keep replies elsewhere and want one
/// native call instead of one per reply.
#[napi(catch_unwind, ts_args_type = "textLengths: Uint32Array, budgetTokens?: number | null")]
pub fn thread_budget_cut(
    env: &Env,
    text_lengths: Unknown,
    budget_tokens: Option<Unknown>,
) -> Result<u32> {
    const F: &str = "threadBudgetCut";
    let budget = thread_budget(env, F, budget_tokens.as_ref())?;
    // SAFETY: a typed-array slice is read through `napi_get_typedarray_info`, which
    // fails (an Err, not UB) for any other value.
    let lengths = match unsafe { text_lengths.cast::<Uint32ArraySlice>() } {
        Ok(l) if text_lengths.is_typedarray()? => l,
        _ => {
            return Err(throw(
                env,
                F,
                &InputError::type_error(
                    "textLengths",
                    format!("expected a Uint32Array, got {}", describe(&text_lengths)),
                ),
            ))
        }
    };
    Ok(thread_plan(lengths.iter().map(|&u| u as usize), budget).first as u32)
}

/// Whether `v` is an object with an own or inherited property `key` (how the runner's
/// flat input shapes are told from the engine's nested ones).
fn has_key(v: &Unknown, key: &str) -> bool {
    if v.get_type().ok() != Some(ValueType::Object) {
        return false;
    }
    // SAFETY: checked to be an object above.
    let Ok(o) = (unsafe { v.cast::<Object>() }) else {
        return false;
    };
    o.has_named_property(key).unwrap_or(false)
}

/// The ChannelSnapshot for an anchor message and the messages around it: the anchor in
/// full, adjacent messages (the anchor skipped) as snippets with thread activity (`null`
/// without replies), media flag and reactions.
///
/// Takes the Claude SDK runner's `StructuredContextInput` (flat `channelId`, `anchor.authorId`,
/// ...), read and rendered exactly as that runner did (timestamps as given), or the
/// engine's `ChannelSnapshotInput` (`channel: { id }`, `author: { userId }`; timestamps
/// become ISO-8601). The runner's input is read as the runner read it (fields it does not
/// read, `channelType` among them, are ignored); in the engine's, an unknown field is a
/// `TypeError`.
#[napi(
    catch_unwind,
    js_name = "buildChannelSnapshot",
    ts_args_type = "input: StructuredContextInput | ChannelSnapshotInput",
    ts_return_type = "ChannelSnapshot"
)]
pub fn build_channel_snapshot_js<'e>(env: &'e Env, input: Unknown<'e>) -> Result<Unknown<'e>> {
    const F: &str = "buildChannelSnapshot";
    if has_key(&input, "channelId") {
        let input: StructuredContextInput = from_js(env, F, "", input)?;
        return to_js(env, &crate::dropin::context::channel_snapshot(&input));
    }
    let input: ChannelSnapshotInput = from_js(env, F, "", input)?;
    to_js(env, &build_channel_snapshot(&input))
}

/// A thread built in the runner's semantics (its `thread` input) or the engine's.
fn budgeted_thread(
    env: &Env,
    func: &str,
    thread: Option<Unknown>,
    budget: Option<Unknown>,
) -> Result<BudgetedThread> {
    let budget = thread_budget(env, func, budget.as_ref())?;
    if thread.as_ref().is_some_and(|t| has_key(t, "rootMessageId")) {
        let t: Option<ThreadDataInput> = from_js_opt(env, func, "", thread)?;
        if let Some(t) = t {
            let (context, telemetry) = crate::dropin::context::thread_context(&t, budget);
            return Ok(BudgetedThread {
                context: Some(context),
                telemetry,
            });
        }
    }
    let thread: Option<ThreadInput> = from_js_opt(env, func, "", thread)?;
    Ok(match thread {
        Some(t) => build_thread_context(&t, budget),
        None => BudgetedThread {
            context: None,
            telemetry: ThreadTelemetry {
                thread_budget_tokens: budget,
                actual_tokens: 0,
                messages_truncated: 0,
            },
        },
    })
}

/// The ThreadContext of a thread within `budgetTokens` (default 8000), or `null` for
/// `null`. Takes the runner's `thread` (`{ rootMessageId, rootTs, ..., replies,
/// totalReplyCount }`), built as that runner did: the newest replies whose text fits (the
/// root not counted, the newest always kept), each over 300 tokens cut with `…`,
/// timestamps as given, `total_replies` as reported, a thread without replies still a
/// ThreadContext. Or the engine's `ThreadInput`, budgeted over root and capped replies,
/// ISO timestamps, `null` for a message without replies.
#[napi(
    catch_unwind,
    js_name = "buildThreadContext",
    ts_args_type = "thread: ThreadDataInput | ThreadInput | null, budgetTokens?: number | null",
    ts_return_type = "ThreadContext | null"
)]
pub fn build_thread_context_js<'e>(
    env: &'e Env,
    thread: Option<Unknown<'e>>,
    budget_tokens: Option<Unknown<'e>>,
) -> Result<Unknown<'e>> {
    let b = budgeted_thread(env, "buildThreadContext", thread, budget_tokens)?;
    to_js(env, &b.context)
}

/// `buildThreadContext` plus how the budget was used, as the runner reported it:
/// `{ threadContext, budgetUtilization: { threadBudgetTokens, actualTokens,
/// messagesTruncated } }` (`messagesTruncated`: replies the budget left out), or
/// `{ threadContext: null }` without a thread.
#[napi(
    catch_unwind,
    ts_args_type = "thread: ThreadDataInput | ThreadInput | null, budgetTokens?: number | null",
    ts_return_type = "ThreadContextWithTelemetry"
)]
pub fn build_thread_context_with_telemetry<'e>(
    env: &'e Env,
    thread: Option<Unknown<'e>>,
    budget_tokens: Option<Unknown<'e>>,
) -> Result<Unknown<'e>> {
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Out<'a> {
        thread_context: &'a Option<crate::core::model::ThreadContext>,
        #[serde(skip_serializing_if = "Option::is_none")]
        budget_utilization: Option<&'a ThreadTelemetry>,
    }
    let b = budgeted_thread(
        env,
        "buildThreadContextWithTelemetry",
        thread,
        budget_tokens,
    )?;
    to_js(
        env,
        &Out {
            thread_context: &b.context,
            budget_utilization: b.context.as_ref().map(|_| &b.telemetry),
        },
    )
}

/// The system-prompt section appended at session creation: guidance on using the
/// structured context and the `channel.context` / `channel.messages` tools (without
/// channel search for a direct message), then the ChannelSnapshot and the ThreadContext
/// (when given) as JSON inside `<channel_snapshot format="json">` and
/// `<thread_context format="json">` tags. Deterministic to the byte; message text cannot
/// close a tag, open a code fence or start a heading.
#[napi(
    catch_unwind,
    ts_args_type = "input: PromptSectionInput, options?: PromptSectionOptions | null",
    ts_return_type = "string"
)]
pub fn build_context_prompt_section<'e>(
    env: &'e Env,
    input: Unknown,
    options: Option<Unknown>,
) -> Result<JsString<'e>> {
    const F: &str = "buildContextPromptSection";
    let input: PromptSectionInput = from_js(env, F, "", input)?;
    let options: Option<PromptOptionsInput> = from_js_opt(env, F, "options", options)?;
    let opts = options.unwrap_or_default().into();
    create_js_string(
        env,
        &build_prompt_section(&input.snapshot, input.thread_context.as_ref(), opts),
    )
}

// ------------------------------------------------------------------ typings
//
// Shapes this file reads or builds by hand, declared for the typings only (no
// conversion code is generated for them).

#[allow(dead_code)]
mod typings {
    use super::{ThreadContext, ThreadTelemetry};
    use napi_derive::napi;

    /// `buildThreadContextWithTelemetry`'s result, as the runner's module returned it.
    #[napi(object, object_to_js = false, object_from_js = false)]
    pub struct ThreadContextWithTelemetry {
        #[napi(ts_type = "ThreadContext | null")]
        pub thread_context: ThreadContext,
        /// How the budget was used; absent without a thread.
        pub budget_utilization: Option<ThreadTelemetry>,
    }

    /// The least a reply needs for `applyThreadBudget`.
    #[napi(object, object_to_js = false, object_from_js = false)]
    pub struct BudgetReply {
        pub ts: String,
        pub text: String,
    }

    /// The event a runner's `before_session_create` subscribers receive (the fields
    /// `coreSessionContextSubscriber` reads; others are ignored).
    #[napi(object, object_to_js = false, object_from_js = false)]
    pub struct BeforeSessionCreateEvent {
        pub system_prompt: Option<String>,
        /// The turn's channel input; without it there is no channel section.
        #[napi(ts_type = "StructuredContextInput | null")]
        pub structured_context_input: Option<String>,
    }
}

/// The channel tools' guidance that ends the section `coreSessionContextSubscriber` adds:
/// `### Channel Tools`, both tools and when to reach for them, or for `"direct"` (a DM) the
/// one that works there. For a gateway that composes its own section.
#[napi(catch_unwind, ts_args_type = "channelType?: 'direct' | 'group' | null")]
pub fn channel_tools_guidance(env: &Env, channel_type: Option<Unknown>) -> Result<&'static str> {
    let kind = match channel_type {
        Some(v) if !crate::bindings::js::is_nullish(&v) => Some(
            js_string(env, "channelToolsGuidance", "channelType", &v)?
                .into_utf8()?
                .into_owned()?,
        ),
        _ => None,
    };
    Ok(crate::dropin::session::channel_tools_guidance(
        kind.as_deref(),
    ))
}

/// The runner's thread rule for `js/dropin/context.js`, which reads the replies' text lengths into
/// `lengths` (the first `count`) and, for each reply longer than [`REPLY_CUT_PROBE_UNIT`],
/// its unit there into `probes`, and builds the runner's shapes from the plan: writes the
/// kept replies' first index, their tokens and the budget applied (8000 when absent) to
/// `out[0..3]`, then the indexes of the kept replies to cut, then where each of those is
/// cut (in UTF-16 units, `…` to follow); returns how many replies are cut. `out` holds at
/// least `3 + 2 * count` numbers.
#[napi(catch_unwind, js_name = "_threadPlan", skip_typescript)]
pub fn thread_plan_js(
    env: &Env,
    lengths: Uint32ArraySlice,
    count: u32,
    budget_tokens: Option<Unknown>,
    probes: Uint16ArraySlice,
    mut out: Float64ArraySlice,
) -> Result<u32> {
    let budget = thread_budget(env, "threadBudgetCut", budget_tokens.as_ref())?;
    let units = lengths.get(..count as usize).unwrap_or(&lengths[..]);
    let plan = thread_plan(units.iter().map(|&u| u as usize), budget);
    // SAFETY: the typed array is the caller's, borrowed for this synchronous call on the
    // JS thread, which nothing else runs on meanwhile.
    let slots = unsafe { out.as_mut() };
    let cuts = plan.cut.len();
    if slots.len() < 3 + 2 * cuts {
        return Err(throw(
            env,
            "threadBudgetCut",
            &InputError::range_error("out", format!("must hold {} numbers", 3 + 2 * units.len())),
        ));
    }
    let max_units = (REPLY_MAX_TOKENS * 4) as usize;
    #[allow(clippy::cast_precision_loss)] // counts and budgets are far below 2^53
    {
        slots[0] = plan.first as f64;
        slots[1] = plan.used as f64;
        slots[2] = budget as f64;
        for (k, &i) in plan.cut.iter().enumerate() {
            slots[3 + k] = i as f64;
            slots[3 + cuts + k] =
                cut_end_units(max_units, probes.get(i).copied().unwrap_or(0)) as f64;
        }
    }
    Ok(cuts as u32)
}

/// `applyThreadBudget`'s rule for `js/dropin/context.js`: of the first `count` replies,
/// whose text lengths in UTF-16 units are in `lengths`, the index of the first one kept
/// (the plan of [`thread_plan_js`] without the cuts, in one typed array: the call is most
/// of what a small budget costs).
#[napi(catch_unwind, js_name = "_threadFirst", skip_typescript)]
pub fn thread_first_js(
    env: &Env,
    lengths: Uint32ArraySlice,
    count: u32,
    budget_tokens: Option<Unknown>,
) -> Result<u32> {
    let budget = thread_budget(env, "applyThreadBudget", budget_tokens.as_ref())?;
    let units = lengths.get(..count as usize).unwrap_or(&lengths[..]);
    let first = thread_plan(units.iter().map(|&u| u as usize), budget).first;
    Ok(u32::try_from(first).unwrap_or(u32::MAX))
}

/// The section `coreSessionContextSubscriber` adds, from the documents' JSON as
/// `JSON.stringify(value, null, 2)` wrote them (see `crate::dropin::session`), read and
/// written as UTF-16 units.
#[napi(catch_unwind, js_name = "_sessionSection", skip_typescript)]
pub fn session_section_js<'e>(
    env: &'e Env,
    snapshot_json: JsString,
    thread_json: Option<JsString>,
    channel_type: Option<String>,
) -> Result<JsString<'e>> {
    // napi's buffers end with a NUL terminator, which is not part of the text.
    let units = |s: JsString| -> Result<Vec<u16>> {
        let mut u = s.into_utf16()?.as_slice().to_vec();
        u.pop();
        Ok(u)
    };
    let mut snapshot = units(snapshot_json)?;
    let mut thread = thread_json.map(units).transpose()?;
    let section = crate::dropin::session::session_section(
        &mut snapshot,
        thread.as_deref_mut(),
        channel_type.as_deref(),
    );
    env.create_string_utf16(&section)
}

/// The adjacent messages' snippets of a runner's snapshot, for `js/dropin/context.js`: each text
/// as `truncateSnippet` gives it, in one call.
#[napi(catch_unwind, js_name = "_snippets", skip_typescript)]
pub fn snippets(texts: Vec<String>) -> Vec<String> {
    texts
        .iter()
        .map(|t| crate::core::text::truncate_snippet(t))
        .collect()
}
