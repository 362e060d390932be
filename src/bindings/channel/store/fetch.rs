//! Fetching as steps: a call that needs data the store lacks starts a run
//! ([`crate::channel::fetch_run`]); the JS layer's `_drive` performs each effect the run asks
//! for (a fetcher call with its timeout, a sleep, a promise to wait on) and hands every
//! answer back through `_step`, the one hidden method, until the run is done. This
//! module only converts effects and answers between the two.

use super::built::{media_content, BuiltContext};
use super::{reentered, JsChannelStore};
use crate::bindings::errors::{clear_exception, promised, take_exception, throw};
use crate::bindings::js::{
    bytes_of, call_method, describe, from_js_opt, id_arg, is_nullish, stringify, to_js,
};
use crate::channel::fetch_run::{Answer, Done, Effect, EffectId, Expect, Goal, Runs, Step};
use crate::channel::store::build::BuildError;
use crate::channel::store::fetch::{Failure, FetchJob, FetcherFn};
use crate::channel::store::media::MediaSource;
use crate::channel::store::request::{BuildContextOptions, ContextRequest};
use napi::bindgen_prelude::*;
use napi::{Env, JsValue, ValueType};
use napi_derive::napi;
use std::cell::RefMut;
use std::collections::HashMap;

/// What wakes a run waiting on another run's fetch.
pub(super) type Wake = napi::JsDeferred<(), fn(Env) -> Result<()>>;

fn woken(_: Env) -> Result<()> {
    Ok(())
}

/// The request of a `buildContext` call, checked.
fn request(
    env: &Env,
    channel: String,
    anchor: String,
    options: Option<Unknown>,
) -> Result<ContextRequest> {
    const F: &str = "ChannelStore.buildContext";
    let opts: BuildContextOptions = from_js_opt(env, F, "options", options)?.unwrap_or_default();
    ContextRequest::with_options(channel, anchor, opts).map_err(|e| throw(env, F, &e))
}

/// The error a `buildContext` promise rejects with when its anchor cannot be found.
fn anchor_error<'e>(env: &'e Env, e: &BuildError) -> Result<Unknown<'e>> {
    let mut obj = env.create_error(Error::new(Status::GenericFailure, e.to_string()))?;
    obj.set_named_property("code", "ANCHOR_NOT_FOUND")?;
    Ok(obj.to_unknown())
}

/// A finished run's value, or the error it rejects with.
fn done_value<'e>(
    env: &'e Env,
    done: Done,
) -> Result<std::result::Result<Unknown<'e>, Unknown<'e>>> {
    Ok(match done {
        Done::Context(Ok(built), calls) => Ok(BuiltContext::new(env, built, calls)
            .into_instance(env)?
            .as_object(env)
            .to_unknown()),
        Done::Context(Err(e), _) => Err(anchor_error(env, &e)?),
        Done::Media {
            artifact_id,
            item,
            note,
            held,
            calls,
        } => Ok(media_content(
            env,
            item.as_ref(),
            &artifact_id,
            note.as_deref(),
            held,
            calls,
        )?),
        Done::Messages(text) => Ok(env.create_string(&text)?.to_unknown()),
    })
}

/// A settled promise of a run done at its start.
fn settled<'e>(env: &'e Env, done: Done) -> Result<Unknown<'e>> {
    match done_value(env, done)? {
        Ok(v) => PromiseRaw::resolve(env, v).map(|p| p.to_unknown()),
        Err(e) => PromiseRaw::<()>::reject(env, e).map(|p| p.to_unknown()),
    }
}

impl JsChannelStore {
    /// The store's fetch runs, for one step.
    fn runs(&self, env: &Env) -> Result<RefMut<'_, Runs>> {
        self.runs.try_borrow_mut().map_err(|_| reentered(env))
    }

    fn joins(&self, env: &Env) -> Result<RefMut<'_, HashMap<EffectId, Wake>>> {
        self.joins.try_borrow_mut().map_err(|_| reentered(env))
    }

    /// Starts a run towards `goal` and returns the caller's promise: settled at once when
    /// the run needs nothing, else the JS layer's `_drive` of its effects.
    pub(crate) fn start_run<'e>(
        &self,
        env: &'e Env,
        this: &Object,
        goal: Goal,
        jobs: Vec<FetchJob>,
        failures: Vec<Failure>,
        now: u64,
    ) -> Result<Unknown<'e>> {
        // A tool's answer never rejects: the driver turns a fault into its error JSON.
        let tool = match &goal {
            Goal::Messages { .. } => Some("channel_messages"),
            _ => None,
        };
        let (run, step) = {
            let mut core = self.core(env)?;
            let mut runs = self.runs(env)?;
            runs.start(&mut core, goal, jobs, failures, self.fetchers(), now)
        };
        let effects = match self.after_step(env, step)? {
            Ok(effects) => effects,
            Err(done) => return settled(env, done),
        };
        let run = env.create_uint32(run)?.to_unknown();
        let tool = match tool {
            Some(name) => env.create_string(name)?.to_unknown(),
            None => ().into_unknown(env)?,
        };
        call_method(env, this, "_drive", &[run, effects, tool])
    }

    /// Shares the step's pauses and wakes its joins; then its effects for `_drive`, or
    /// what the run is done with.
    fn after_step<'e>(
        &self,
        env: &'e Env,
        step: Step,
    ) -> Result<std::result::Result<Unknown<'e>, Done>> {
        for (method, channel) in &step.pauses {
            self.share_pause(env, method, channel)?;
        }
        self.wake(env, &step.woken)?;
        if let Some(done) = step.done {
            return Ok(Err(done));
        }
        let mut list = env.create_array(0)?;
        for effect in step.effects {
            list.insert(self.effect_js(env, effect)?)?;
        }
        Ok(Ok(list.coerce_to_object()?.to_unknown()))
    }

    /// Resolves the waits of joins whose fetch has ended.
    fn wake(&self, env: &Env, ids: &[EffectId]) -> Result<()> {
        if ids.is_empty() {
            return Ok(());
        }
        let mut joins = self.joins(env)?;
        for id in ids {
            if let Some(wake) = joins.remove(id) {
                wake.resolve(woken as fn(Env) -> Result<()>);
            }
        }
        Ok(())
    }

    /// One effect as `_drive` performs it: `{ id, call, request, timeoutMs }`,
    /// `{ id, sleep }` or `{ id, wait }` (a promise).
    fn effect_js<'e>(&self, env: &'e Env, effect: Effect) -> Result<Object<'e>> {
        let mut obj = Object::new(env)?;
        obj.set_named_property("id", effect.id())?;
        match effect {
            Effect::Call {
                fetch,
                request,
                timeout_ms,
                ..
            } => {
                obj.set_named_property("call", fetch.as_str())?;
                obj.set_named_property("request", to_js(env, &request)?)?;
                obj.set_named_property("timeoutMs", timeout_ms as f64)?;
            }
            Effect::Sleep { ms, .. } => obj.set_named_property("sleep", ms as f64)?,
            Effect::Shared {
                method, channel, ..
            } => obj.set_named_property("wait", self.ask_shared(env, &method, &channel)?)?,
            Effect::Join { id } => {
                let (wake, promise) = env.create_deferred::<(), fn(Env) -> Result<()>>()?;
                self.joins(env)?.insert(id, wake);
                obj.set_named_property("wait", promise)?;
            }
        }
        Ok(obj)
    }

    /// The answer `_drive` handed back for `effect`, read as the run expects it.
    fn answer_of(&self, env: &Env, expect: Expect, result: &Object) -> Result<Answer> {
        let error: Unknown = result.get_named_property("error")?;
        let value: Unknown = result.get_named_property("value")?;
        if !is_nullish(&error) {
            let message = text_of(&error)?;
            if expect == Expect::Shared {
                return self.shared_answer(env, None, Some(message));
            }
            let retry: Unknown = result.get_named_property("retryAfter")?;
            let retry_after_ms = match retry.get_type()? {
                ValueType::Number => Some(retry.coerce_to_number()?.get_double()?),
                _ => None,
            };
            let timed: Unknown = result.get_named_property("timedOut")?;
            let timed_out = timed.get_type()? == ValueType::Boolean && timed.coerce_to_bool()?;
            return Ok(Answer::Failed {
                message,
                retry_after_ms,
                timed_out,
            });
        }
        Ok(match expect {
            Expect::Slept => Answer::Slept,
            Expect::Woken => Answer::Woken,
            Expect::Shared => {
                let text = if value.get_type()? == ValueType::String {
                    Some(text_of(&value)?)
                } else {
                    None
                };
                return self.shared_answer(env, text, None);
            }
            Expect::Page => {
                // Whatever the fetcher resolved with is data: a value JSON cannot hold
                // makes the page unusable (reported by the store), never an exception.
                let json = stringify(env, value).unwrap_or_else(|_| {
                    clear_exception(env);
                    None
                });
                Answer::Page(json)
            }
            Expect::Bytes => match bytes_of(&value)? {
                Some(bytes) => Answer::Bytes(bytes),
                None => Answer::NotBytes(describe(&value).to_string()),
            },
        })
    }
}

/// What a thrown value says: an error's message, or the value as a string.
fn thrown_text(v: &Unknown) -> String {
    let message = v
        .get_type()
        .ok()
        .filter(|t| *t == ValueType::Object)
        .and_then(|_| {
            let obj = Object::from_unknown(*v).ok()?;
            let m: Unknown = obj.get_named_property("message").ok()?;
            (m.get_type().ok()? == ValueType::String)
                .then(|| text_of(&m).ok())
                .flatten()
        });
    message
        .or_else(|| text_of(v).ok())
        .unwrap_or_else(|| "a value that cannot be read was thrown".to_string())
}

/// A string value's text (an error text `_drive` wrote).
fn text_of(v: &Unknown) -> Result<String> {
    v.coerce_to_string()?.into_utf8()?.into_owned()
}

#[napi]
impl JsChannelStore {
    /// Builds the context for answering `anchorMessageId` in `channelId`: the
    /// ChannelSnapshot, the ThreadContext (when the anchor is in a thread or has
    /// replies), the prompt section and token counts. Fetches what the store does not
    /// hold through the fetcher and the rate limiter; a fetch that fails or is rate
    /// limited degrades (stale data or nothing, with a note in `notes`) and never
    /// rejects the call. Rejects only when the anchor message itself cannot be found.
    #[napi(
        catch_unwind,
        ts_args_type = "channelId: string, anchorMessageId: string, options?: BuildContextOptions",
        ts_return_type = "Promise<BuiltContext>"
    )]
    pub fn build_context<'e>(
        &self,
        env: &'e Env,
        this: This<'e>,
        channel_id: Unknown<'e>,
        anchor_message_id: Unknown<'e>,
        options: Option<Unknown<'e>>,
    ) -> Result<Unknown<'e>> {
        promised(env, || {
            const F: &str = "ChannelStore.buildContext";
            let channel = id_arg(env, F, "channelId", &channel_id)?;
            let anchor = id_arg(env, F, "anchorMessageId", &anchor_message_id)?;
            let channel = self.core(env)?.resolve_channel(&channel, &anchor);
            let req = request(env, channel, anchor, options)?;
            let now = self.now(env)?;
            let mut failures = Vec::new();
            let mut core = self.core(env)?;
            self.sync_redis_note(&mut core);
            let jobs = core.plan_fetches(&req, &mut failures, &[], self.fetchers(), now);
            if jobs.is_empty() {
                let built = core.build(&req, &failures, now);
                drop(core);
                return settled(env, Done::Context(built, 0));
            }
            drop(core);
            self.start_run(env, &this.object, Goal::Context(req), jobs, failures, now)
        })
    }

    /// Internal (fetch driver): hands the answer to one effect of run `run` in;
    /// returns `{ effects }` to perform next, or `{ done: true, value }`. Throws the
    /// error the run rejects with.
    #[napi(catch_unwind, js_name = "_step", skip_typescript)]
    pub fn step<'e>(&self, env: &'e Env, run: u32, result: Object) -> Result<Object<'e>> {
        self.step_or_abort(env, run, &result).inspect_err(|e| {
            // The run cannot go on (the clock threw, the store was re-entered): its
            // fetches end as failed, so the runs that joined them are not left waiting.
            if self.runs_done(env, run) {
                return;
            }
            let mut reason = e.reason.clone();
            if let Some(thrown) = take_exception(env) {
                if reason.is_empty() {
                    reason = thrown_text(&thrown);
                    // Reading it may itself throw (a hostile getter): that is dropped.
                    clear_exception(env);
                }
                // Thrown again: the run's promise rejects with it.
                let _ = env.throw(thrown);
            }
            self.abort(env, run, &reason);
        })
    }
}

impl JsChannelStore {
    /// Every build after Redis first failed a call (a rate-limit slot, a pause shared, a
    /// lock) carries the note, until it answers again.
    fn sync_redis_note(&self, core: &mut crate::channel::store::ChannelStore) {
        if let Some(c) = &self.coord {
            core.set_shared_note(c.degraded_note());
        }
    }

    fn runs_done(&self, env: &Env, run: u32) -> bool {
        self.runs(env).map(|r| !r.is_live(run)).unwrap_or(true)
    }

    /// Ends run `run` early with `reason`, waking who joined its fetches (best effort:
    /// a store that cannot be borrowed keeps the run).
    fn abort(&self, env: &Env, run: u32, reason: &str) {
        let woken = match (self.core(env), self.runs(env)) {
            (Ok(mut core), Ok(mut runs)) => runs.abort(&mut core, run, reason),
            _ => return,
        };
        let _ = self.wake(env, &woken);
    }

    fn step_or_abort<'e>(&self, env: &'e Env, run: u32, result: &Object) -> Result<Object<'e>> {
        let id: u32 = result.get_named_property("id")?;
        let expect = self.runs(env)?.expects(id);
        let Some(expect) = expect else {
            return Err(Error::from_reason(format!(
                "ChannelStore: no fetch is waiting for effect {id} of run {run}"
            )));
        };
        let answer = self.answer_of(env, expect, result)?;
        // The shared limiter's answer is about the moment it was asked: the call it
        // admits is made as of then, without another clock reading in between.
        let now = match &answer {
            Answer::Shared { asked_at, .. } => *asked_at,
            _ => self.now(env)?,
        };
        let step = {
            let mut core = self.core(env)?;
            self.sync_redis_note(&mut core);
            self.runs(env)?.answer(&mut core, run, id, answer, now)
        };
        let mut out = Object::new(env)?;
        match self.after_step(env, step)? {
            Ok(effects) => out.set_named_property("effects", effects)?,
            Err(done) => match done_value(env, done)? {
                Ok(value) => {
                    out.set_named_property("done", true)?;
                    out.set_named_property("value", value)?;
                }
                Err(e) => {
                    env.throw(e)?;
                    return Err(Error::from_status(Status::PendingException));
                }
            },
        }
        Ok(out)
    }
}

#[napi]
impl JsChannelStore {
    /// Downloaded media by artifact id (a Slack file id), from the media cache or, on a
    /// miss, through `fetcher.fetchMedia` (rate limited as `files.download`). With
    /// `channelId`, only a file that a message of that channel references is served
    /// (bytes are cached per channel); without it, the channel that referenced the file
    /// most recently. Resolves with the bytes, their SHA-256 and `note: null`, or with
    /// `data: null` and a note saying why when the file is unknown or the download failed.
    #[napi(
        catch_unwind,
        ts_args_type = "artifactId: string, channelId?: string",
        ts_return_type = "Promise<MediaContent>"
    )]
    pub fn get_media<'e>(
        &self,
        env: &'e Env,
        this: This<'e>,
        artifact_id: Unknown<'e>,
        channel_id: Option<Unknown<'e>>,
    ) -> Result<Unknown<'e>> {
        promised(env, || {
            const F: &str = "ChannelStore.getMedia";
            let id = id_arg(env, F, "artifactId", &artifact_id)?;
            let channel = match channel_id {
                Some(c) if !is_nullish(&c) => Some(id_arg(env, F, "channelId", &c)?),
                _ => None,
            };
            let source = self.core(env)?.media_source(
                &id,
                channel.as_deref(),
                self.fetchers().has(FetcherFn::Media),
            );
            match source {
                MediaSource::Cached(item) => {
                    let v = media_content(env, Some(&item), &id, None, true, 0)?;
                    PromiseRaw::resolve(env, v).map(|p| p.to_unknown())
                }
                MediaSource::Fetch(job) => {
                    let now = self.now(env)?;
                    let goal = Goal::Media { artifact_id: id };
                    self.start_run(env, &this.object, goal, vec![job], Vec::new(), now)
                }
                MediaSource::Unavailable(note) => {
                    let v = media_content(env, None, &id, Some(&note), false, 0)?;
                    PromiseRaw::resolve(env, v).map(|p| p.to_unknown())
                }
            }
        })
    }
}
