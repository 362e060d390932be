//! Runtime hardening exports: the pure decisions as functions, and
//! `RuntimeGuard`, which keeps state between them and counts what they did. The
//! decisions live in `crate::runtime`; this module only translates.

use super::js::named;
use super::js::{
    clear_exception, describe, expect_array, expect_object, from_js, from_js_opt, is_nullish,
    json_value, shallow_copy_except, string_arg, throw, to_js,
};
use crate::input::InputError;
use crate::manifest::{parse_manifest_data, Manifest};
use crate::runtime::error::ErrorInfo;
use crate::runtime::events::{read_event, AttemptSignals};
use crate::runtime::guard::{GuardOptions, RuntimeGuard as Guard, WithDiagnostic};
use crate::runtime::integrity::{find_orphans, plan_resume, repair_jsonl, OrphanRepair};
use crate::runtime::media::{MediaItem, MediaMode, MEDIA_FILE_IDS_KEY as FILE_IDS_KEY};
use crate::runtime::metrics::Labels;
use crate::runtime::overflow::{classify_overflow, decide_overflow, fingerprint, OverflowAttempt};
use crate::runtime::strip::{strip_thread_context, StripOutcome};
use crate::sha256::sha256_hex;
use crate::tools::media::base64;
use napi::bindgen_prelude::*;
use napi::{Env, JsString, ValueType};
use napi_derive::napi;
use serde::Deserialize;
use serde_json::{json, Value};
use std::cell::RefCell;

/// The marker line of a thread-history section: `"[Thread history - for context]"`.
#[napi]
pub const THREAD_HISTORY_MARKER: &str = crate::runtime::strip::THREAD_HISTORY_MARKER;
/// The marker line of a thread-starter section: `"[Thread starter - for context]"`.
#[napi]
pub const THREAD_STARTER_MARKER: &str = crate::runtime::strip::THREAD_STARTER_MARKER;
/// The custom-entry type the media file-id map is persisted under:
/// `"openclaw:claude-sdk-media-file-ids"`.
#[napi]
pub const MEDIA_FILE_IDS_KEY: &str = FILE_IDS_KEY;
/// Media at or under this many bytes may always go inline (262,144).
#[napi]
pub const DEFAULT_INLINE_MAX_BYTES: u32 = crate::runtime::media::DEFAULT_INLINE_MAX_BYTES as u32;

fn now_ms() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as f64)
        .unwrap_or(0.0)
}

/// The result object, built directly: the prompt can be megabytes, and a JSON round
/// trip would escape and re-parse all of it.
/// A prompt left as it was is handed back as the caller's own string.
fn strip_js<'e>(env: &'e Env, out: &StripOutcome, prompt: Unknown<'e>) -> Result<Unknown<'e>> {
    let mut o = Object::new(env)?;
    if out.stripped {
        o.set_named_property("text", env.create_string(&out.text)?)?;
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

struct StripOptions {
    resumed: bool,
    labels: Option<Labels>,
}

/// Reads `{ resumed, labels? }` property by property (no JSON round trip per turn).
fn strip_options(env: &Env, func: &str, v: Option<Unknown>) -> Result<StripOptions> {
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
    Ok(StripOptions { resumed, labels })
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
    named(
        env,
        "stripThreadContext",
        "options",
        (|| -> Result<Unknown<'e>> {
            const F: &str = "stripThreadContext";
            let text = string_arg(env, F, "prompt", &prompt)?;
            let opts = strip_options(env, F, options)?;
            strip_js(env, &strip_thread_context(&text, opts.resumed), prompt)
        })(),
    )
}

/// Reads an error argument (an `Error`, an Anthropic `APIError`, a plain object or a
/// string) into JSON, own non-enumerable `message`/`name` included. Getters that throw
/// are skipped.
fn error_value(env: &Env, v: &Unknown) -> Result<Value> {
    match v.get_type()? {
        ValueType::String => {
            // SAFETY: this arm is for strings.
            let s: JsString = unsafe { v.cast()? };
            Ok(Value::String(s.into_utf8()?.into_owned()?))
        }
        ValueType::Object => {
            // SAFETY: this arm is for objects.
            let o: Object = unsafe { v.cast()? };
            let mut m = serde_json::Map::new();
            for key in [
                "name",
                "message",
                "code",
                "status",
                "statusCode",
                "type",
                "subtype",
                "error",
                "errors",
            ] {
                let Ok(p) = o.get_named_property::<Unknown>(key) else {
                    clear_exception(env);
                    continue;
                };
                let value = match p.get_type()? {
                    ValueType::String => {
                        // SAFETY: this arm is for strings.
                        let s: JsString = unsafe { p.cast()? };
                        Value::String(s.into_utf8()?.into_owned()?)
                    }
                    ValueType::Number => {
                        // SAFETY: this arm is for numbers.
                        let n: f64 = unsafe { p.cast()? };
                        if n.fract() == 0.0 && n.abs() < 9_007_199_254_740_992.0 {
                            Value::from(n as i64)
                        } else {
                            serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number)
                        }
                    }
                    ValueType::Object => json_value(env, p)?,
                    _ => Value::Null,
                };
                if !value.is_null() {
                    m.insert(key.to_string(), value);
                }
            }
            Ok(Value::Object(m))
        }
        _ => Ok(Value::Null),
    }
}

fn error_arg(env: &Env, func: &str, path: &str, v: &Unknown) -> Result<ErrorInfo> {
    let value = error_value(env, v)?;
    if value.is_null() {
        return Err(throw(
            env,
            func,
            &InputError::type_error(
                path,
                format!(
                    "expected an Error, an object or a string, got {}",
                    describe(v)
                ),
            ),
        ));
    }
    Ok(ErrorInfo::from_value(&value))
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
               "sizes": crate::runtime::error::numbers(&e.message)})
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
        .unwrap_or(crate::runtime::overflow::DEFAULT_MAX_ATTEMPTS);
    to_js(env, &decide_overflow(&history, max))
}

/// Folds SDK messages (`status`, `compact_boundary`, `files_persisted`,
/// `rate_limit_event`, `auth_status`; others are counted and ignored) into the signals
/// of one attempt.
#[napi(
    catch_unwind,
    ts_args_type = "messages: unknown[]",
    ts_return_type = "AttemptSignals"
)]
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
fn sdk_message(env: &Env, m: &Unknown) -> Result<Value> {
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
fn string_prop(o: &Object, key: &str) -> Result<Option<String>> {
    let v: Unknown = o.get_named_property(key)?;
    if v.get_type()? != ValueType::String {
        return Ok(None);
    }
    // SAFETY: checked to be a string above.
    let s: JsString = unsafe { v.cast()? };
    Ok(Some(s.into_utf8()?.into_owned()?))
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct GuardOptionsJs {
    #[serde(default)]
    inline_max_bytes: Option<f64>,
    #[serde(default)]
    max_attempts: Option<u32>,
    #[serde(default)]
    max_series: Option<u32>,
    #[serde(default)]
    file_refs: Option<bool>,
}

fn bytes_option(v: Option<f64>, path: &str) -> std::result::Result<Option<u64>, InputError> {
    match v {
        None => Ok(None),
        Some(n)
            if n.is_finite() && n >= 0.0 && n.fract() == 0.0 && n <= 9_007_199_254_740_991.0 =>
        {
            Ok(Some(n as u64))
        }
        Some(n) => Err(InputError::range_error(
            path,
            format!("expected a non-negative integer, got {n}"),
        )),
    }
}

/// Runtime state for a Claude SDK runner: the media file-id map (per provider and
/// session), each run's attempt signals, overflow history and resume recoveries, and
/// the runtime counters. One per gateway process; every method takes the diagnostic
/// labels (`runId`, `sessionId`, `sessionKey`, `provider`, `model`, `attempt`).
///
/// ```ts
/// const guard = new RuntimeGuard()
/// const { text } = guard.stripThreadContext(prompt, { resumed, labels })
/// for await (const m of query(...)) guard.observe(m, { labels })
/// const d = guard.decideOverflow(err, { labels })   // 'retry' | 'fail_fast' | ...
/// res.end(guard.prometheus())
/// ```
#[napi]
pub struct RuntimeGuard {
    core: RefCell<Guard>,
    /// Calls in progress on this guard: a caller's getter that calls back into
    /// `observe` / `loadMedia` is answered at once, without reading anything (those two
    /// never throw, so a re-read per level would recurse without end).
    busy: std::cell::Cell<u32>,
}

/// Marks a [`RuntimeGuard`] call in progress for as long as it lives.
struct Busy<'a>(&'a std::cell::Cell<u32>);

impl<'a> Busy<'a> {
    /// `None` when a call is already in progress (a re-entrant call).
    fn enter(cell: &'a std::cell::Cell<u32>) -> Option<Self> {
        if cell.get() > 0 {
            return None;
        }
        cell.set(cell.get() + 1);
        Some(Busy(cell))
    }
}

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        self.0.set(self.0.get().saturating_sub(1));
    }
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct LabelOptions {
    #[serde(default)]
    labels: Option<Labels>,
    #[serde(default)]
    now: Option<f64>,
    #[serde(default)]
    state_key: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct MediaOptions {
    #[serde(default)]
    labels: Option<Labels>,
    #[serde(default)]
    now: Option<f64>,
    #[serde(default)]
    inline_max_bytes: Option<f64>,
    #[serde(default)]
    manifest: Option<Value>,
}

/// A decision with its `diagnostic` (or `null`) as one object.
fn with_diagnostic<'e, T: serde::Serialize>(
    env: &'e Env,
    d: WithDiagnostic<T>,
) -> Result<Unknown<'e>> {
    let mut v = serde_json::to_value(&d.value).unwrap_or(Value::Null);
    if let Some(m) = v.as_object_mut() {
        m.insert("diagnostic".into(), d.diagnostic.unwrap_or(Value::Null));
    }
    to_js(env, &v)
}

fn now_or(v: Option<f64>) -> f64 {
    v.filter(|n| n.is_finite()).unwrap_or_else(now_ms)
}

#[napi]
impl RuntimeGuard {
    /// `inlineMaxBytes` (default 262,144), `maxAttempts` per turn for overflows (3),
    /// `maxSeries` of metrics (10,000), `fileRefs`: the provider takes Files API
    /// references (true).
    #[napi(
        constructor,
        catch_unwind,
        ts_args_type = "options?: RuntimeGuardOptions"
    )]
    pub fn new(env: Env, options: Option<Unknown>) -> Result<Self> {
        const F: &str = "RuntimeGuard";
        let o: GuardOptionsJs = from_js_opt(&env, F, "options", options)?.unwrap_or_default();
        let mut g = GuardOptions::default();
        if let Some(b) = bytes_option(o.inline_max_bytes, "options.inlineMaxBytes")
            .map_err(|e| throw(&env, F, &e))?
        {
            g.inline_max_bytes = b;
        }
        if let Some(a) = o.max_attempts {
            if a == 0 || a as usize > crate::runtime::guard::MAX_HISTORY {
                return Err(throw(
                    &env,
                    F,
                    &InputError::range_error(
                        "options.maxAttempts",
                        format!(
                            "must be from 1 to {}, got {a}",
                            crate::runtime::guard::MAX_HISTORY
                        ),
                    ),
                ));
            }
            g.max_attempts = a;
        }
        if let Some(s) = o.max_series {
            if s == 0 {
                return Err(throw(
                    &env,
                    F,
                    &InputError::range_error("options.maxSeries", "must be at least 1"),
                ));
            }
            g.max_series = s as usize;
        }
        if let Some(f) = o.file_refs {
            g.file_refs = f;
        }
        Ok(RuntimeGuard {
            core: RefCell::new(Guard::new(g)),
            busy: std::cell::Cell::new(0),
        })
    }

    /// `stripThreadContext`, counted in `claude_sdk.prompt.thread_context_stripped` (and
    /// `..._chars`) under `labels`.
    #[napi(
        catch_unwind,
        ts_args_type = "prompt: string, options: { resumed: boolean; labels?: RuntimeLabels }",
        ts_return_type = "StripResult"
    )]
    pub fn strip_thread_context<'e>(
        &self,
        env: &'e Env,
        prompt: Unknown<'e>,
        options: Option<Unknown<'e>>,
    ) -> Result<Unknown<'e>> {
        named(
            env,
            "stripThreadContext",
            "options",
            (|| -> Result<Unknown<'e>> {
                const F: &str = "stripThreadContext";
                let text = string_arg(env, F, "prompt", &prompt)?;
                let o = strip_options(env, F, options)?;
                let out =
                    self.core
                        .borrow_mut()
                        .strip(&text, o.resumed, &o.labels.unwrap_or_default());
                strip_js(env, &out, prompt)
            })(),
        )
    }

    /// Reads one SDK message into the run's attempt signals (`labels.runId`; a new
    /// `labels.attempt` starts fresh signals). `files_persisted` teaches the media map
    /// (file ids by content hash, failures with a retry backoff) and counts
    /// `claude_sdk.media.persist_failures`. Unknown or malformed messages are ignored
    /// (`ignored` says why); never throws on a message.
    #[napi(
        catch_unwind,
        ts_args_type = "message: unknown, options?: { labels?: RuntimeLabels; now?: number }",
        ts_return_type = "ObservedEvent"
    )]
    pub fn observe<'e>(
        &self,
        env: &'e Env,
        message: Unknown<'e>,
        options: Option<Unknown<'e>>,
    ) -> Result<Unknown<'e>> {
        let Some(_busy) = Busy::enter(&self.busy) else {
            // Answered as a malformed message, without reading anything.
            let Ok(mut core) = self.core.try_borrow_mut() else {
                return Err(Error::from_reason(
                    "observe: re-entered while the guard is busy",
                ));
            };
            let out = core.observe(&Value::Null, &Labels::default(), now_ms());
            drop(core);
            return to_js(
                env,
                &json!({"kind": out.kind, "signals": out.signals, "persisted": out.persisted, "ignored": "re-entrant call: observe was called from inside a call on the same guard"}),
            );
        };
        let o: LabelOptions = from_js_opt(env, "observe", "options", options)?.unwrap_or_default();
        // A message that cannot be read (a throwing getter, a revoked Proxy) is ignored
        // like any other malformed message.
        let msg = sdk_message(env, &message).unwrap_or_else(|_| {
            clear_exception(env);
            Value::Null
        });
        let out =
            self.core
                .borrow_mut()
                .observe(&msg, &o.labels.unwrap_or_default(), now_or(o.now));
        to_js(
            env,
            &json!({"kind": out.kind, "signals": out.signals, "persisted": out.persisted, "ignored": out.ignored}),
        )
    }

    /// The current attempt's signals for `labels.runId`, and a rate-limit backoff hint
    /// (`backoffMs`: until the reset when rejected, 0 when allowed, null when unknown).
    #[napi(
        catch_unwind,
        ts_args_type = "options?: { labels?: RuntimeLabels; now?: number }",
        ts_return_type = "AttemptSignals & { backoffMs: number | null }"
    )]
    pub fn signals<'e>(&self, env: &'e Env, options: Option<Unknown<'e>>) -> Result<Unknown<'e>> {
        let o: LabelOptions = from_js_opt(env, "signals", "options", options)?.unwrap_or_default();
        let s = self
            .core
            .borrow_mut()
            .signals(&o.labels.unwrap_or_default());
        let mut v = serde_json::to_value(&s).unwrap_or(Value::Null);
        if let Some(m) = v.as_object_mut() {
            m.insert("backoffMs".into(), json!(s.backoff_ms(now_or(o.now))));
        }
        to_js(env, &v)
    }

    /// Plans how each piece of media of a turn goes to the model: `reference` (already
    /// attached: in `manifest` or earlier in this call), `file` (a file id persisted for
    /// this content hash in this provider and session), `url` (an https `durableUrl`),
    /// `inline` (under `inlineMaxBytes`, not persisted yet, or the fallback while
    /// persistence fails, with a `marker`), or `omit` (over the API's inline limits, or a
    /// type it does not take). Items may carry `data` (bytes): the hash and length are
    /// then computed and inline blocks come with their data. Requires `labels.sessionId`
    /// or `labels.sessionKey`. Counts `inline_bytes_sent` and `file_ref_used`.
    #[napi(
        catch_unwind,
        ts_args_type = "items: MediaItemInput[], options: MediaPlanOptions",
        ts_return_type = "MediaPlan[]"
    )]
    pub fn plan_media<'e>(
        &self,
        env: &'e Env,
        items: Unknown<'e>,
        options: Option<Unknown<'e>>,
    ) -> Result<Unknown<'e>> {
        const F: &str = "planMedia";
        let arr = expect_array(env, F, "items", &items)?;
        let o: MediaOptions = from_js_opt(env, F, "options", options)?.unwrap_or_default();
        let labels = o.labels.unwrap_or_default();
        let inline_max = bytes_option(o.inline_max_bytes, "options.inlineMaxBytes")
            .map_err(|e| throw(env, F, &e))?;
        let manifest: Option<Manifest> = match &o.manifest {
            None | Some(Value::Null) => None,
            Some(m) => Some(
                parse_manifest_data(&m.to_string())
                    .map(|(m, _)| m)
                    .ok_or_else(|| {
                        throw(
                            env,
                            F,
                            &InputError::type_error(
                                "options.manifest",
                                "expected an attachment manifest { entries: {...} }",
                            ),
                        )
                    })?,
            ),
        };
        let n = arr.get_array_length()?;
        let mut parsed = Vec::with_capacity(n as usize);
        let mut data: Vec<Option<Uint8Array>> = Vec::with_capacity(n as usize);
        for i in 0..n {
            let path = format!("items[{i}]");
            let it: Unknown = arr.get_element(i)?;
            expect_object(env, F, &path, &it)?;
            // SAFETY: checked to be an object by `expect_object` above.
            let src: Object = unsafe { it.cast()? };
            // Everything but `data` goes through JSON; the bytes are read in place (not
            // copied: they are only encoded if the plan is inline).
            let (rest, data_value) = shallow_copy_except(env, &src, Some("data"))?;
            let bytes = match data_value.filter(|v| !is_nullish(v)) {
                None => None,
                Some(value) if value.is_typedarray()? || value.is_buffer()? => {
                    // SAFETY: the guard of this arm checked it is a typed array or a Buffer (a Uint8Array).
                    Some(unsafe { value.cast::<Uint8Array>()? })
                }
                Some(value) => {
                    return Err(throw(
                        env,
                        F,
                        &InputError::type_error(
                            format!("{path}.data"),
                            format!("expected a Uint8Array or Buffer, got {}", describe(&value)),
                        ),
                    ))
                }
            };
            let mut item: MediaItem = from_js(env, F, &path, rest.to_unknown())?;
            if let Some(b) = &bytes {
                if item.content_hash.is_empty() {
                    item.content_hash = sha256_hex(b);
                }
                item.byte_length = b.len() as u64;
                item.has_data = true;
            } else if item.content_hash.is_empty() {
                return Err(throw(
                    env,
                    F,
                    &InputError::type_error(
                        format!("{path}.contentHash"),
                        "required when data is not given",
                    ),
                ));
            }
            if item.media_type.is_empty() {
                return Err(throw(
                    env,
                    F,
                    &InputError::range_error(
                        format!("{path}.mediaType"),
                        "must be a non-empty string",
                    ),
                ));
            }
            parsed.push(item);
            data.push(bytes);
        }
        let plans = self
            .core
            .borrow_mut()
            .plan_media(&parsed, &labels, manifest.as_ref(), inline_max, now_or(o.now))
            .ok_or_else(|| {
                throw(env, F, &InputError::type_error("options.labels.sessionId", "labels.sessionId or labels.sessionKey is required: file ids are kept per session"))
            })?;
        let out = to_js(env, &plans)?;
        // Inline bytes are set on the built objects, not passed through JSON.
        // SAFETY: `to_js` of a JSON array returns an array, which is an object.
        let arr: Object = unsafe { out.cast()? };
        for (i, (p, bytes)) in plans.iter().zip(data).enumerate() {
            let (MediaMode::Inline, Some(b)) = (p.mode, bytes) else {
                continue;
            };
            let text_source =
                p.block.pointer("/source/type").and_then(Value::as_str) == Some("text");
            let encoded = if text_source {
                String::from_utf8_lossy(&b).into_owned()
            } else {
                base64(&b)
            };
            let plan: Object = arr.get_element(i as u32)?;
            let block: Object = plan.get_named_property("block")?;
            let mut source: Object = block.get_named_property("source")?;
            source.set_named_property("data", env.create_string(&encoded)?)?;
        }
        Ok(out)
    }

    /// Ends the run's current attempt with `error` and decides (see
    /// `decideOverflowRetry`), using the compaction signals observed for it. Counts
    /// `claude_sdk.overflow.retries` / `claude_sdk.overflow.fail_fast`; `diagnostic` is
    /// the structured log line, labels included.
    #[napi(
        catch_unwind,
        ts_args_type = "error: unknown, options?: { labels?: RuntimeLabels; stateKey?: string }",
        ts_return_type = "OverflowDecision & { diagnostic: Record<string, unknown> | null }"
    )]
    pub fn decide_overflow<'e>(
        &self,
        env: &'e Env,
        error: Unknown<'e>,
        options: Option<Unknown<'e>>,
    ) -> Result<Unknown<'e>> {
        const F: &str = "decideOverflow";
        let e = error_arg(env, F, "error", &error)?;
        let o: LabelOptions = from_js_opt(env, F, "options", options)?.unwrap_or_default();
        let d =
            self.core
                .borrow_mut()
                .decide_overflow(&e, &o.labels.unwrap_or_default(), o.state_key);
        with_diagnostic(env, d)
    }

    /// `planResumeRecovery` with the run's own count: the first stale failure of a run
    /// recovers (counted in `claude_sdk.resume.stale_recovered`), the next is terminal.
    #[napi(
        catch_unwind,
        ts_args_type = "error: unknown, options?: { labels?: RuntimeLabels }",
        ts_return_type = "ResumePlan & { diagnostic: Record<string, unknown> | null }"
    )]
    pub fn plan_resume_recovery<'e>(
        &self,
        env: &'e Env,
        error: Unknown<'e>,
        options: Option<Unknown<'e>>,
    ) -> Result<Unknown<'e>> {
        const F: &str = "planResumeRecovery";
        let e = error_arg(env, F, "error", &error)?;
        let o: LabelOptions = from_js_opt(env, F, "options", options)?.unwrap_or_default();
        let p = self
            .core
            .borrow_mut()
            .plan_resume(&e, &o.labels.unwrap_or_default());
        with_diagnostic(env, p)
    }

    /// Forgets a finished run's signals and history; true when it was held.
    #[napi(catch_unwind, ts_args_type = "labels?: RuntimeLabels")]
    pub fn end_run(&self, env: Env, labels: Option<Unknown>) -> Result<bool> {
        let l: Labels = from_js_opt(&env, "endRun", "labels", labels)?.unwrap_or_default();
        Ok(self.core.borrow_mut().end_run(&l))
    }

    /// The media map as a session custom entry
    /// `{ type: "custom", customType: MEDIA_FILE_IDS_KEY, data }` (`data` is JSON text),
    /// for the labels' provider and session, or every scope without labels.
    #[napi(
        catch_unwind,
        ts_args_type = "labels?: RuntimeLabels",
        ts_return_type = "{ type: 'custom'; customType: string; data: string }"
    )]
    pub fn media_entry<'e>(
        &self,
        env: &'e Env,
        labels: Option<Unknown<'e>>,
    ) -> Result<Unknown<'e>> {
        let l: Option<Labels> = from_js_opt(env, "mediaEntry", "labels", labels)?;
        let scope = l
            .as_ref()
            .and_then(|l| crate::runtime::guard::scope_of(l, None));
        let data = self.core.borrow().media.serialize(scope.as_ref());
        to_js(
            env,
            &json!({"type": "custom", "customType": MEDIA_FILE_IDS_KEY, "data": data}),
        )
    }

    /// Loads the media map from a session's entries (oldest first): the newest usable
    /// `MEDIA_FILE_IDS_KEY` entry wins; malformed entries and records are skipped and
    /// listed in `dropped`. Never throws on entry contents.
    #[napi(
        catch_unwind,
        ts_args_type = "entries: unknown[]",
        ts_return_type = "MediaLoadReport"
    )]
    pub fn load_media<'e>(&self, env: &'e Env, entries: Unknown<'e>) -> Result<Unknown<'e>> {
        const F: &str = "loadMedia";
        let Some(_busy) = Busy::enter(&self.busy) else {
            return to_js(
                env,
                &json!({"loaded": false, "files": 0, "failures": 0, "dropped": ["re-entrant call: loadMedia was called from inside a call on the same guard"]}),
            );
        };
        let arr = expect_array(env, F, "entries", &entries)?;
        // Only the entries under the key are serialized; a transcript's messages (which
        // can be large) are not, and stand in as `null` to keep the indices.
        let mut values = Vec::with_capacity(arr.get_array_length()? as usize);
        for i in 0..arr.get_array_length()? {
            // An entry that cannot be read (a throwing getter, a revoked Proxy) is
            // skipped like any other malformed entry.
            let read = || -> Result<Value> {
                let e: Unknown = arr.get_element(i)?;
                let ours = e.get_type()? == ValueType::Object && {
                    // SAFETY: this arm is for objects.
                    let o: Object = unsafe { e.cast()? };
                    string_prop(&o, "type")?.as_deref() == Some("custom")
                        && string_prop(&o, "customType")?.as_deref() == Some(FILE_IDS_KEY)
                };
                if ours {
                    json_value(env, e)
                } else {
                    Ok(Value::Null)
                }
            };
            values.push(read().unwrap_or_else(|_| {
                clear_exception(env);
                Value::Null
            }));
        }
        let report = self.core.borrow_mut().media.load(&values);
        to_js(env, &report)
    }

    /// Every counter: `totals` by counter name, live `series` with their labels, and
    /// `evictedSeries`.
    #[napi(catch_unwind, ts_return_type = "RuntimeMetricsSnapshot")]
    pub fn metrics<'e>(&self, env: &'e Env) -> Result<Unknown<'e>> {
        to_js(env, &self.core.borrow().metrics.snapshot())
    }

    /// The counters in the Prometheus text exposition format (`claude_sdk_*_total`).
    #[napi(catch_unwind)]
    pub fn prometheus(&self) -> String {
        self.core.borrow().metrics.prometheus()
    }

    /// Sets every counter back to zero.
    #[napi(catch_unwind)]
    pub fn reset_metrics(&self) {
        self.core.borrow_mut().metrics.reset();
    }
}
