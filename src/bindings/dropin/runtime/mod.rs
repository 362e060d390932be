//! Runtime hardening exports: the pure decisions as functions (here), `RuntimeGuard`,
//! which keeps state between them and counts what they did ([`guard`]), and the reading
//! of a caller's error argument ([`error_arg`]). The decisions live in
//! `crate::dropin::runtime`; these modules only translate.

mod error_arg;
mod guard;
mod media;

use error_arg::error_arg;

use crate::bindings::errors::named;
use crate::bindings::errors::throw;
use crate::bindings::js::{
    create_js_string, describe, expect_array, expect_object, from_js_opt, is_nullish, json_value,
    shallow_copy_except, string_arg, to_js,
};
use crate::core::input::InputError;
use crate::dropin::runtime::events::{read_event, AttemptSignals};
use crate::dropin::runtime::integrity::{find_orphans, plan_resume, repair_jsonl, OrphanRepair};
use crate::dropin::runtime::media::MEDIA_FILE_IDS_KEY as FILE_IDS_KEY;
use crate::dropin::runtime::metrics::Labels;
use crate::dropin::runtime::overflow::{
    classify_overflow, decide_overflow, fingerprint, OverflowAttempt,
};
use crate::dropin::runtime::strip::{strip_thread_context, StripOutcome};
use napi::bindgen_prelude::*;
use napi::{Env, JsString, ValueType};
use napi_derive::napi;
use serde::Deserialize;
use serde_json::{json, Value};

/// The marker line of a thread-history section: `"[Thread history - for context]"`.
#[napi]
pub const THREAD_HISTORY_MARKER: &str = crate::dropin::runtime::strip::THREAD_HISTORY_MARKER;
/// The marker line of a thread-starter section: `"[Thread starter - for context]"`.
#[napi]
pub const THREAD_STARTER_MARKER: &str = crate::dropin::runtime::strip::THREAD_STARTER_MARKER;
/// The custom-entry type the media file-id map is persisted under:
/// `"openclaw:claude-sdk-media-file-ids"`.
#[napi]
pub const MEDIA_FILE_IDS_KEY: &str = FILE_IDS_KEY;
/// Media at or under this many bytes may always go inline (262,144).
#[napi]
pub const DEFAULT_INLINE_MAX_BYTES: u32 =
    crate::dropin::runtime::media::DEFAULT_INLINE_MAX_BYTES as u32;

/// The result object, built directly: the prompt can be megabytes, and a JSON round
/// trip would escape and re-parse all of it.
/// A prompt left as it was is handed back as the caller's own string.
pub(super) fn strip_js<'e>(
    env: &'e Env,
    out: &StripOutcome,
    prompt: Unknown<'e>,
) -> Result<Unknown<'e>> {
    let mut o = Object::new(env)?;
    if out.stripped {
        o.set_named_property("text", create_js_string(env, &out.text)?)?;
    } else {
        o.set_named_property("text", prompt)?;
    }
    o.set_named_property("stripped", out.stripped)?;
    o.set_named_property("charsRemoved", out.chars_removed as f64)?;
    o.set_named_property("sections", out.sections as u32)?;
    o.set_named_property("entries", out.entries as u32)?;
    match out.reason {
        Some(r) => o.set_named_property("reason", r.as_str())?,
        None => o.set_named_property("reason", Null)?,
    }
    match &out.detail {
        Some(d) => o.set_named_property("detail", d.as_str())?,
        None => o.set_named_property("detail", Null)?,
    }
    Ok(o.to_unknown())
}

/// `stripThreadContext`'s arguments as read: the prompt's text and the options.
pub(super) struct StripArgs {
    pub(super) text: String,
    pub(super) resumed: bool,
    pub(super) labels: Option<Labels>,
}

/// Reads `stripThreadContext(prompt, options)`'s arguments for export `func` (the free
/// function or the guard's method), naming what a caller's own code threw while they
/// were read.
pub(super) fn strip_args(
    env: &Env,
    func: &str,
    prompt: &Unknown,
    options: Option<Unknown>,
) -> Result<StripArgs> {
    named(env, func, "options", || {
        let text = string_arg(env, func, "prompt", prompt)?;
        let (resumed, labels) = strip_options(env, func, options)?;
        Ok(StripArgs {
            text,
            resumed,
            labels,
        })
    })
}

/// Reads `{ resumed, labels? }` property by property (no JSON round trip per turn).
fn strip_options(env: &Env, func: &str, v: Option<Unknown>) -> Result<(bool, Option<Labels>)> {
    let missing = || {
        throw(
            env,
            func,
            &InputError::type_error(
                "options.resumed",
                "required: pass { resumed: true | false }",
            ),
        )
    };
    let Some(v) = v.filter(|v| !is_nullish(v)) else {
        return Err(missing());
    };
    expect_object(env, func, "options", &v)?;
    // SAFETY: checked to be an object by `expect_object` above.
    let o: Object = unsafe { v.cast()? };
    let r: Unknown = o.get_named_property("resumed")?;
    let resumed = match r.get_type()? {
        // SAFETY: this arm is for booleans.
        ValueType::Boolean => unsafe { r.cast::<bool>()? },
        ValueType::Undefined => return Err(missing()),
        _ => {
            return Err(throw(
                env,
                func,
                &InputError::type_error(
                    "options.resumed",
                    format!("expected a boolean, got {}", describe(&r)),
                ),
            ))
        }
    };
    let l: Unknown = o.get_named_property("labels")?;
    let labels = from_js_opt(env, func, "options.labels", Some(l))?;
    Ok((resumed, labels))
}

/// Removes the thread-context section (`[Thread history - for context]` or
/// `[Thread starter - for context]` and its entries) from a resumed turn's prompt, and
/// only it: media notes, hook text, `System:` lines, metadata blocks and the user's text
/// keep every byte. On a fresh session (`resumed: false`) nothing changes. When the
/// section's end cannot be told safely, nothing is removed and `reason` says why.
#[napi(
    catch_unwind,
    js_name = "stripThreadContext",
    ts_args_type = "prompt: string, options: { resumed: boolean }",
    ts_return_type = "StripResult"
)]
pub fn strip_thread_context_js<'e>(
    env: &'e Env,
    prompt: Unknown<'e>,
    options: Option<Unknown<'e>>,
) -> Result<Unknown<'e>> {
    let args = strip_args(env, "stripThreadContext", &prompt, options)?;
    strip_js(env, &strip_thread_context(&args.text, args.resumed), prompt)
}

fn orphan_js(r: &OrphanRepair) -> serde_json::Map<String, Value> {
    let mut m = serde_json::Map::new();
    m.insert("repaired".into(), r.repaired.into());
    m.insert(
        "removed".into(),
        serde_json::to_value(&r.removed).unwrap_or(Value::Null),
    );
    m.insert("reason".into(), r.reason.map_or(Value::Null, Value::from));
    m
}

/// Orphan repair of a session transcript (Pi `{ type: "message", id, parentId, message }`
/// or Claude Code `{ type: "user" | "assistant", uuid, parentUuid, message }` entries):
/// a trailing run of user messages with no assistant reply is removed, and entries that
/// hung off it are re-parented (as shallow copies). Entries are returned as given
/// otherwise. A trailing user message made only of `tool_result` blocks is kept.
#[napi(
    catch_unwind,
    ts_args_type = "entries: unknown[]",
    ts_return_type = "OrphanRepair & { entries: unknown[] }"
)]
pub fn repair_orphan_turn<'e>(env: &'e Env, entries: Unknown<'e>) -> Result<Unknown<'e>> {
    const F: &str = "repairOrphanTurn";
    let arr = expect_array(env, F, "entries", &entries)?;
    let n = arr.get_array_length()?;
    let mut values = Vec::with_capacity(n as usize);
    for i in 0..n {
        let e: Unknown = arr.get_element(i)?;
        let v = if e.get_type()? == ValueType::Object {
            json_value(env, e)?
        } else {
            Value::Null
        };
        values.push(v);
    }
    let repair = find_orphans(&values);
    let gone: std::collections::HashSet<usize> = repair.removed.iter().map(|o| o.index).collect();
    let mut out = env.create_array(0)?;
    for i in 0..n {
        if gone.contains(&(i as usize)) {
            continue;
        }
        let e: Unknown = arr.get_element(i)?;
        match repair.reparent.iter().find(|(j, _, _)| *j == i as usize) {
            Some((_, key, parent)) => {
                // SAFETY: only entries `repairOrphanTurn` read as objects are reparented.
                let src: Object = unsafe { e.cast()? };
                let (mut copy, _) = shallow_copy_except(env, &src, None)?;
                match parent {
                    Some(p) => copy.set_named_property(key, p.as_str())?,
                    None => copy.set_named_property(key, Null)?,
                }
                out.insert(copy)?;
            }
            None => out.insert(e)?,
        }
    }
    let info = to_js(env, &Value::Object(orphan_js(&repair)))?;
    // SAFETY: `to_js` of a JSON object returns an object.
    let mut obj: Object = unsafe { info.cast()? };
    obj.set_named_property("entries", out)?;
    Ok(obj.to_unknown())
}

/// Orphan repair on a JSONL transcript's text: removed lines go, re-parented lines are
/// rewritten, and every other line (malformed ones included, listed by 1-based number in
/// `malformedLines`) keeps its bytes.
#[napi(
    catch_unwind,
    ts_args_type = "text: string",
    ts_return_type = "OrphanRepair & { text: string; malformedLines: number[] }"
)]
pub fn repair_orphan_jsonl<'e>(env: &'e Env, text: Unknown<'e>) -> Result<Unknown<'e>> {
    let text = string_arg(env, "repairOrphanJsonl", "text", &text)?;
    let r = repair_jsonl(&text);
    let mut m = orphan_js(&r.repair);
    m.insert("text".into(), r.text.into());
    m.insert("malformedLines".into(), json!(r.malformed_lines));
    to_js(env, &Value::Object(m))
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ResumeOptions {
    #[serde(default)]
    previous_recoveries: Option<u32>,
}

/// Classifies a failed resume (`session_not_found`, `invalid_session`, `other`) and
/// returns the recovery plan: for a stale id, `recover` with the steps
/// `clear_resume_marker`, `start_fresh_session`, `retry_once`, `emit_diagnostic`; when a
/// recovery already ran for this turn (`previousRecoveries` > 0), `fail` (terminal);
/// for any other error, `propagate`.
#[napi(
    catch_unwind,
    ts_args_type = "error: unknown, options?: { previousRecoveries?: number }",
    ts_return_type = "ResumePlan"
)]
pub fn plan_resume_recovery<'e>(
    env: &'e Env,
    error: Unknown<'e>,
    options: Option<Unknown<'e>>,
) -> Result<Unknown<'e>> {
    const F: &str = "planResumeRecovery";
    let e = error_arg(env, F, "error", &error)?;
    let o: ResumeOptions = from_js_opt(env, F, "options", options)?.unwrap_or_default();
    to_js(env, &plan_resume(&e, o.previous_recoveries.unwrap_or(0)))
}

/// The overflow kind of an error (`prompt_too_long`, `request_too_large`,
/// `context_window_exceeded`) with its fingerprint (16 hex digits over status, error
/// type, code and the sizes quoted; request ids and UUIDs do not enter it) and those
/// sizes; `null` when the error is not a size failure.
#[napi(
    catch_unwind,
    ts_args_type = "error: unknown",
    ts_return_type = "{ kind: OverflowKind; fingerprint: string; sizes: number[] } | null"
)]
pub fn classify_overflow_error<'e>(env: &'e Env, error: Unknown<'e>) -> Result<Unknown<'e>> {
    let e = error_arg(env, "classifyOverflowError", "error", &error)?;
    let out = classify_overflow(&e).map(|k| {
        json!({"kind": k, "fingerprint": fingerprint(&e, k),
               "sizes": crate::dropin::runtime::error::numbers(&e.message)})
    });
    to_js(env, &out)
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct OverflowOptions {
    #[serde(default)]
    max_attempts: Option<u32>,
}

/// The overflow retry decision over a turn's failed attempts (oldest first; each
/// `{ error, compactionObserved?, compacting?, stateKey? }`): `retry` only when
/// compaction was observed during the last attempt; `fail_fast` with `remediation` when
/// nothing changed (no compaction, or the same fingerprint again with the same
/// `stateKey`); `fail` when `maxAttempts` (default 3) are spent; `not_overflow` for other
/// errors.
#[napi(
    catch_unwind,
    ts_args_type = "attempts: OverflowAttemptInput[], options?: { maxAttempts?: number }",
    ts_return_type = "OverflowDecision"
)]
pub fn decide_overflow_retry<'e>(
    env: &'e Env,
    attempts: Unknown<'e>,
    options: Option<Unknown<'e>>,
) -> Result<Unknown<'e>> {
    const F: &str = "decideOverflowRetry";
    let arr = expect_array(env, F, "attempts", &attempts)?;
    let o: OverflowOptions = from_js_opt(env, F, "options", options)?.unwrap_or_default();
    let mut history = Vec::new();
    for i in 0..arr.get_array_length()? {
        let path = format!("attempts[{i}]");
        let a: Unknown = arr.get_element(i)?;
        expect_object(env, F, &path, &a)?;
        // SAFETY: checked to be an object by `expect_object` above.
        let obj: Object = unsafe { a.cast()? };
        let err: Unknown = obj.get_named_property("error")?;
        let e = error_arg(env, F, &format!("{path}.error"), &err)?;
        let flag = |name: &str| -> Result<bool> {
            let v: Unknown = obj.get_named_property(name)?;
            match v.get_type()? {
                ValueType::Undefined | ValueType::Null => Ok(false),
                // SAFETY: this arm is for booleans.
                ValueType::Boolean => unsafe { v.cast::<bool>() },
                _ => Err(throw(
                    env,
                    F,
                    &InputError::type_error(
                        format!("{path}.{name}"),
                        format!("expected a boolean, got {}", describe(&v)),
                    ),
                )),
            }
        };
        let mut attempt =
            OverflowAttempt::from_error(&e, flag("compactionObserved")?, flag("compacting")?);
        let key: Unknown = obj.get_named_property("stateKey")?;
        if !is_nullish(&key) {
            attempt.state_key = Some(string_arg(env, F, &format!("{path}.stateKey"), &key)?);
        }
        history.push(attempt);
    }
    let max = o
        .max_attempts
        .unwrap_or(crate::dropin::runtime::overflow::DEFAULT_MAX_ATTEMPTS);
    to_js(env, &decide_overflow(&history, max))
}

/// Folds SDK messages (`status`, `compact_boundary`, `files_persisted`,
/// `rate_limit_event`, `auth_status`; others are counted and ignored) into the signals
/// of one attempt.
#[napi(catch_unwind, ts_args_type = "messages: unknown[]", ts_return_type = "AttemptSignals")]
pub fn read_sdk_signals<'e>(env: &'e Env, messages: Unknown<'e>) -> Result<Unknown<'e>> {
    const F: &str = "readSdkSignals";
    let arr = expect_array(env, F, "messages", &messages)?;
    let mut s = AttemptSignals::default();
    for i in 0..arr.get_array_length()? {
        let m: Unknown = arr.get_element(i)?;
        s.apply(&read_event(&sdk_message(env, &m)?));
    }
    to_js(env, &s)
}

/// The message types the adapter reads; any other message is not stringified.
pub(super) fn sdk_message(env: &Env, m: &Unknown) -> Result<Value> {
    if m.get_type()? != ValueType::Object {
        return Ok(Value::Null);
    }
    // SAFETY: checked to be an object above.
    let o: Object = unsafe { m.cast()? };
    let Some(t) = string_prop(&o, "type")? else {
        return Ok(Value::Null);
    };
    if !matches!(t.as_str(), "system" | "rate_limit_event" | "auth_status") {
        return Ok(json!({ "type": t }));
    }
    json_value(env, o.to_unknown())
}

/// A string property of `o`, `None` when absent or not a string.
pub(super) fn string_prop(o: &Object, key: &str) -> Result<Option<String>> {
    let v: Unknown = o.get_named_property(key)?;
    if v.get_type()? != ValueType::String {
        return Ok(None);
    }
    // SAFETY: checked to be a string above.
    let s: JsString = unsafe { v.cast()? };
    Ok(Some(s.into_utf8()?.into_owned()?))
}
