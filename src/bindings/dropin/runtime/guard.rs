//! `RuntimeGuard`: the runtime state of a Claude SDK runner behind a JS class.

use super::error_arg::error_arg;
use super::media::{media_items, set_inline_data};
use super::{sdk_message, string_prop, strip_args, strip_js};
use crate::bindings::errors::{clear_exception, throw};
use crate::bindings::js::now_ms;
use crate::bindings::js::{expect_array, from_js_opt, json_value, to_js};
use crate::core::input::{whole_number, InputError};
use crate::dropin::manifest::{parse_manifest_data, Manifest};
use crate::dropin::runtime::guard::{Guard, GuardOptions, WithDiagnostic};
use crate::dropin::runtime::media::MEDIA_FILE_IDS_KEY as FILE_IDS_KEY;
use crate::dropin::runtime::metrics::Labels;
use napi::bindgen_prelude::*;
use napi::{Env, ValueType};
use napi_derive::napi;
use serde::Deserialize;
use serde_json::{json, Value};
use std::cell::RefCell;

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
    v.map(|n| whole_number(n, path, "bytes")).transpose()
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
    #[napi(constructor, catch_unwind, ts_args_type = "options?: RuntimeGuardOptions")]
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
            if a == 0 || a as usize > crate::dropin::runtime::guard::MAX_HISTORY {
                return Err(throw(
                    &env,
                    F,
                    &InputError::range_error(
                        "options.maxAttempts",
                        format!(
                            "must be from 1 to {}, got {a}",
                            crate::dropin::runtime::guard::MAX_HISTORY
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
        let args = strip_args(env, "RuntimeGuard.stripThreadContext", &prompt, options)?;
        let labels = args.labels.unwrap_or_default();
        let out = self
            .core
            .borrow_mut()
            .strip(&args.text, args.resumed, &labels);
        strip_js(env, &out, prompt)
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
        let o: LabelOptions =
            from_js_opt(env, "RuntimeGuard.observe", "options", options)?.unwrap_or_default();
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
        let o: LabelOptions =
            from_js_opt(env, "RuntimeGuard.signals", "options", options)?.unwrap_or_default();
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
        const F: &str = "RuntimeGuard.planMedia";
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
        let (parsed, data) = media_items(env, F, &arr)?;
        let plans = self
            .core
            .borrow_mut()
            .plan_media(&parsed, &labels, manifest.as_ref(), inline_max, now_or(o.now))
            .ok_or_else(|| {
                throw(env, F, &InputError::type_error("options.labels.sessionId", "labels.sessionId or labels.sessionKey is required: file ids are kept per session"))
            })?;
        let out = to_js(env, &plans)?;
        set_inline_data(env, &out, &plans, data)?;
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
        const F: &str = "RuntimeGuard.decideOverflow";
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
        const F: &str = "RuntimeGuard.planResumeRecovery";
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
        let l: Labels =
            from_js_opt(&env, "RuntimeGuard.endRun", "labels", labels)?.unwrap_or_default();
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
        let l: Option<Labels> = from_js_opt(env, "RuntimeGuard.mediaEntry", "labels", labels)?;
        let scope = l
            .as_ref()
            .and_then(|l| crate::dropin::runtime::guard::scope_of(l, None));
        let data = self.core.borrow().media.serialize(scope.as_ref());
        to_js(
            env,
            &json!({"type": "custom", "customType": FILE_IDS_KEY, "data": data}),
        )
    }

    /// Loads the media map from a session's entries (oldest first): the newest usable
    /// `MEDIA_FILE_IDS_KEY` entry wins; malformed entries and records are skipped and
    /// listed in `dropped`. Never throws on entry contents.
    #[napi(catch_unwind, ts_args_type = "entries: unknown[]", ts_return_type = "MediaLoadReport")]
    pub fn load_media<'e>(&self, env: &'e Env, entries: Unknown<'e>) -> Result<Unknown<'e>> {
        const F: &str = "RuntimeGuard.loadMedia";
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
