//! The fetch protocol between the store and its JS subclass (`js/store.js`), which owns
//! the one thing Rust cannot do: await the caller's async fetcher.
//!
//! `buildContext` and `getMedia` resolve at once when nothing needs fetching (the steady
//! state). Otherwise they hand a job to the subclass's `_runBuild` / `_runMedia`, which
//! asks `_acquire` for rate-limit slots, calls the fetcher, and feeds the answers back
//! through the other `_`-prefixed methods here; each only translates for
//! [`crate::store::fetch`], where the decisions are.

use super::built::{media_content, BuiltContext};
use super::ChannelStore;
use crate::bindings::errors::{promised, throw};
use crate::bindings::js::{
    bytes_of, call_method, describe, from_js, from_js_opt, id_arg, is_nullish, stringify, to_js,
};
use crate::input;
use crate::store::build::BuildError;
use crate::store::fetch::{failures_in, failures_out, FetchFailure, FetchJob, FetcherFn};
use crate::store::media::MediaSource;
use crate::store::request::{BuildContextOptions, ContextRequest};
use napi::bindgen_prelude::*;
use napi::Env;
use napi_derive::napi;
use serde_json::json;

/// The request of a `buildContext` call, checked.
fn request(
    env: &Env,
    channel: String,
    anchor: String,
    options: Option<Unknown>,
) -> Result<ContextRequest> {
    const F: &str = "buildContext";
    let opts: BuildContextOptions = from_js_opt(env, F, "options", options)?.unwrap_or_default();
    ContextRequest::with_options(channel, anchor, opts).map_err(|e| throw(env, F, &e))
}

/// The failures the fetch runtime hands back, as the store reads them.
pub(crate) fn failures_from(
    env: &Env,
    func: &str,
    v: Unknown,
) -> Result<Vec<crate::store::fetch::Failure>> {
    if is_nullish(&v) {
        return Ok(Vec::new());
    }
    let Some(text) = stringify(env, v)? else {
        return Ok(Vec::new());
    };
    let list: Vec<FetchFailure> =
        input::parse(&text, "failures").map_err(|e| throw(env, func, &e))?;
    Ok(failures_in(list))
}

/// The error a `buildContext` promise rejects with when its anchor cannot be found.
fn anchor_error<'e>(env: &'e Env, e: &BuildError) -> Result<Unknown<'e>> {
    let mut obj = env.create_error(Error::new(Status::GenericFailure, e.to_string()))?;
    obj.set_named_property("code", "ANCHOR_NOT_FOUND")?;
    Ok(obj.to_unknown())
}

#[napi]
impl ChannelStore {
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
            const F: &str = "buildContext";
            let channel = id_arg(env, F, "channelId", &channel_id)?;
            let anchor = id_arg(env, F, "anchorMessageId", &anchor_message_id)?;
            let req = request(env, channel, anchor, options)?;
            let now = self.now(env)?;
            let mut failures = Vec::new();
            let mut core = self.core()?;
            let jobs = core.plan_fetches(&req, &mut failures, self.fetchers(), now);
            if jobs.is_empty() {
                let built = core.build(&req, &failures, now);
                drop(core);
                return match built {
                    Ok(b) => PromiseRaw::resolve(env, BuiltContext::new(env, b, 0))
                        .map(|p| p.to_unknown()),
                    Err(e) => PromiseRaw::<()>::reject(env, anchor_error(env, &e)?)
                        .map(|p| p.to_unknown()),
                };
            }
            let failures = failures_out(&failures, &core.config().rate_limit);
            drop(core);
            let mut job = Object::new(env)?;
            job.set_named_property("channelId", channel_id)?;
            job.set_named_property("anchorId", anchor_message_id)?;
            job.set_named_property("options", options.unwrap_or(().into_unknown(env)?))?;
            job.set_named_property("needs", to_js(env, &jobs)?)?;
            job.set_named_property("failures", to_js(env, &failures)?)?;
            call_method(env, &this.object, "_runBuild", &[job.to_unknown()])
        })
    }

    /// Internal (fetch runtime): the fetches still needed after `failures`, and the
    /// failures planning added.
    #[napi(catch_unwind, js_name = "_plan", skip_typescript)]
    pub fn plan_js<'e>(
        &self,
        env: &'e Env,
        channel_id: String,
        anchor: String,
        options: Option<Unknown>,
        failures: Unknown,
    ) -> Result<Unknown<'e>> {
        let req = request(env, channel_id, anchor, options)?;
        let mut failures = failures_from(env, "buildContext", failures)?;
        let known = failures.len();
        let now = self.now(env)?;
        let mut core = self.core()?;
        let jobs = core.plan_fetches(&req, &mut failures, self.fetchers(), now);
        let added = failures_out(&failures[known..], &core.config().rate_limit);
        drop(core);
        to_js(env, &json!({ "needs": jobs, "failures": added }))
    }

    /// Internal (fetch runtime): builds the result after the fetches.
    #[napi(catch_unwind, js_name = "_build", skip_typescript)]
    pub fn build_js(
        &self,
        env: &Env,
        channel_id: String,
        anchor: String,
        options: Option<Unknown>,
        failures: Unknown,
        api_calls: u32,
    ) -> Result<BuiltContext> {
        let req = request(env, channel_id, anchor, options)?;
        let failures = failures_from(env, "buildContext", failures)?;
        let now = self.now(env)?;
        let built = self.core()?.build(&req, &failures, now);
        match built {
            Ok(b) => Ok(BuiltContext::new(env, b, api_calls)),
            Err(e) => {
                env.throw(anchor_error(env, &e)?)?;
                Err(Error::from_status(Status::PendingException))
            }
        }
    }

    /// Internal (fetch runtime): asks the rate limiter for a slot for one call:
    /// `{ wait: ms }` (0 = now) or `{ refused: reason }`.
    #[napi(catch_unwind, js_name = "_acquire", skip_typescript)]
    pub fn acquire_js<'e>(
        &self,
        env: &'e Env,
        method: String,
        channel_id: String,
    ) -> Result<Unknown<'e>> {
        let now = self.now(env)?;
        let slot = self.core()?.acquire_slot(&method, &channel_id, now);
        to_js(env, &slot)
    }

    /// Internal (fetch runtime): after a queued wait, whether a Retry-After pause now
    /// forbids the call (the reason), or null.
    #[napi(catch_unwind, js_name = "_pausedReason", skip_typescript)]
    pub fn paused_reason(
        &self,
        env: &Env,
        method: String,
        channel_id: String,
    ) -> Result<Option<String>> {
        let now = self.now(env)?;
        Ok(self.core()?.paused_reason(&method, &channel_id, now))
    }

    /// Internal (fetch runtime): counts a call about to be made.
    #[napi(catch_unwind, js_name = "_countCall", skip_typescript)]
    pub fn count_call(&self, method: String) -> Result<()> {
        self.core()?.count_call(&method);
        Ok(())
    }

    /// Internal (fetch runtime): a fetch failed. Counts it, applies a Retry-After pause
    /// (`retryAfterMs`), and returns the reason to report.
    #[napi(catch_unwind, js_name = "_fetchFailed", skip_typescript)]
    pub fn fetch_failed(
        &self,
        env: &Env,
        method: String,
        channel_id: String,
        message: String,
        retry_after_ms: Option<f64>,
        timed_out: Option<bool>,
    ) -> Result<String> {
        let now = self.now(env)?;
        let timed_out = timed_out == Some(true);
        let reason = self.core()?.fetch_failed(
            &method,
            &channel_id,
            &message,
            retry_after_ms,
            timed_out,
            now,
        );
        if retry_after_ms.is_some() {
            self.share_pause(env, &method, &channel_id)?;
        }
        Ok(reason)
    }

    /// Internal (fetch runtime): a fetch begins; returns the event number it began at,
    /// to pass to `_ingestPage`.
    #[napi(catch_unwind, js_name = "_fetchBegin", skip_typescript)]
    pub fn fetch_begin(&self) -> Result<f64> {
        Ok(self.core()?.begin_fetch() as f64)
    }

    /// Internal (fetch runtime): a fetch that `_fetchBegin` started has ended.
    #[napi(catch_unwind, js_name = "_fetchEnd", skip_typescript)]
    pub fn fetch_end(&self) -> Result<()> {
        self.core()?.end_fetch();
        Ok(())
    }

    /// Internal (fetch runtime): milliseconds one fetcher call may take.
    #[napi(catch_unwind, js_name = "_fetchTimeout", skip_typescript)]
    pub fn fetch_timeout(&self) -> Result<f64> {
        Ok(self.core()?.config().fetch_timeout_ms as f64)
    }

    /// Internal (fetch runtime): ingests one page of a fetch result. Returns
    /// `{ nextCursor }` or `{ error }` (a malformed body or `ok: false`, counted as a
    /// failed fetch).
    #[napi(catch_unwind, js_name = "_ingestPage", skip_typescript)]
    pub fn ingest_page<'e>(
        &self,
        env: &'e Env,
        job: Unknown,
        body: Unknown,
        first_page: bool,
        since: Option<f64>,
    ) -> Result<Unknown<'e>> {
        let job: FetchJob = from_js(env, "buildContext", "need", job)?;
        // The event number the fetch began at: events after it are newer than the page.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let since = since
            .filter(|n| n.is_finite() && *n >= 0.0)
            .map(|n| n as u64);
        // Whatever the fetcher resolved with is data: a value JSON cannot hold makes the
        // page unusable (reported by the store), never an exception.
        let json = stringify(env, body).unwrap_or_else(|_| {
            crate::bindings::errors::clear_exception(env);
            None
        });
        let now = self.now(env)?;
        let out = self
            .core()?
            .ingest_fetched(&job, json, first_page, since, now);
        match out {
            Ok(next) => to_js(env, &json!({ "nextCursor": next })),
            Err(error) => to_js(env, &json!({ "error": error })),
        }
    }

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
            const F: &str = "getMedia";
            let id = id_arg(env, F, "artifactId", &artifact_id)?;
            let channel = match channel_id {
                Some(c) if !is_nullish(&c) => Some(id_arg(env, F, "channelId", &c)?),
                _ => None,
            };
            let source = self.core()?.media_source(
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
                    let job = to_js(env, &job)?;
                    call_method(env, &this.object, "_runMedia", &[artifact_id, job])
                }
                MediaSource::Unavailable(note) => {
                    let v = media_content(env, None, &id, Some(&note), false, 0)?;
                    PromiseRaw::resolve(env, v).map(|p| p.to_unknown())
                }
            }
        })
    }

    /// Internal (fetch runtime): caches downloaded bytes and returns the MediaContent.
    #[napi(catch_unwind, js_name = "_putMedia", skip_typescript)]
    pub fn put_media<'e>(
        &self,
        env: &'e Env,
        job: Unknown,
        data: Unknown,
        api_calls: u32,
    ) -> Result<Unknown<'e>> {
        let job: FetchJob = from_js(env, "getMedia", "need", job)?;
        let id = job.artifact_id.clone().unwrap_or_default();
        let Some(bytes) = bytes_of(&data)? else {
            let note = self.core()?.not_bytes(describe(&data));
            return media_content(env, None, &id, Some(&note), false, api_calls);
        };
        let now = self.now(env)?;
        let (item, held) = self.core()?.keep_download(&job.channel_id, &id, bytes, now);
        media_content(env, Some(&item), &id, None, held, api_calls)
    }

    /// Internal (fetch runtime): a media download that failed or was refused.
    #[napi(catch_unwind, js_name = "_mediaFailed", skip_typescript)]
    pub fn media_failed<'e>(
        &self,
        env: &'e Env,
        artifact_id: String,
        reason: String,
        api_calls: u32,
    ) -> Result<Unknown<'e>> {
        media_content(env, None, &artifact_id, Some(&reason), false, api_calls)
    }
}

// ------------------------------------------------------------------ typings
//
// What the caller's fetcher functions receive and are: JavaScript-only shapes, declared
// for the typings (no conversion code is generated for them).

#[allow(dead_code)]
mod typings {
    use napi_derive::napi;

    /// What `fetchThread` is asked for: one page of a thread (`conversations.replies`).
    #[napi(object, object_to_js = false, object_from_js = false)]
    pub struct FetchThreadRequest {
        pub channel_id: String,
        /// The thread (its root's id; Slack `thread_ts`).
        pub thread_id: String,
        /// Set for pages after the first (Slack `response_metadata.next_cursor`).
        pub cursor: Option<String>,
        /// Objects per page.
        pub limit: f64,
    }

    /// What `fetchHistory` is asked for: the newest page of a channel
    /// (`conversations.history`).
    #[napi(object, object_to_js = false, object_from_js = false)]
    pub struct FetchHistoryRequest {
        pub channel_id: String,
        pub cursor: Option<String>,
        /// Objects per page.
        pub limit: f64,
    }

    /// What `fetchMessages` is asked for: specific messages by id.
    #[napi(object, object_to_js = false, object_from_js = false)]
    pub struct FetchMessagesRequest {
        pub channel_id: String,
        /// The messages wanted.
        pub message_ids: Vec<String>,
        /// Objects per page.
        pub limit: f64,
    }

    /// What a fetcher is asked for. `cursor` is set for pages after the first.
    #[napi(object, object_to_js = false, object_from_js = false)]
    pub struct FetchRequest {
        pub channel_id: String,
        /// `fetchThread`: the thread (Slack `thread_ts`).
        pub thread_id: Option<String>,
        /// `fetchMessages`: the messages wanted.
        pub message_ids: Option<Vec<String>>,
        pub cursor: Option<String>,
        /// Objects per page.
        pub limit: f64,
    }

    /// What `fetchMedia` is asked for.
    #[napi(object, object_to_js = false, object_from_js = false)]
    pub struct FetchMediaRequest {
        pub artifact_id: String,
        /// Slack's `url_private_download` / `url_private` (needs the bot token).
        #[napi(ts_type = "string | null")]
        pub url: Option<String>,
        pub media_type: String,
        #[napi(ts_type = "string | null")]
        pub filename: Option<String>,
        pub byte_length: f64,
        pub channel_id: String,
        pub message_id: String,
    }

    /// Async functions the store calls, through its rate limiter, for data it does not
    /// hold. Results are Web API bodies as Slack returns them (`{ ok, messages, has_more,
    /// response_metadata }`) or `{ messages: MessageInput[], nextCursor? }`. A rejection
    /// degrades the request (counted in `stats().failedFetches`); an error carrying
    /// `retryAfter` (seconds, as @slack/web-api's rate-limit error does), `retryAfterMs` or a
    /// `retry-after` header pauses that method for that long.
    #[napi(object, object_to_js = false, object_from_js = false)]
    pub struct ChannelFetcher {
        /// `conversations.replies`: the thread's root and replies, oldest first.
        #[napi(ts_type = "(request: FetchThreadRequest) => Promise<unknown>")]
        pub fetch_thread: Option<()>,
        /// `conversations.history`: the newest page of the channel.
        #[napi(ts_type = "(request: FetchHistoryRequest) => Promise<unknown>")]
        pub fetch_history: Option<()>,
        /// Specific messages by id (on Slack, `conversations.history` with `latest`,
        /// `inclusive` and `limit: 1`, or `conversations.replies` for a reply).
        #[napi(ts_type = "(request: FetchMessagesRequest) => Promise<unknown>")]
        pub fetch_messages: Option<()>,
        /// The bytes of a file.
        #[napi(ts_type = "(request: FetchMediaRequest) => Promise<Uint8Array | ArrayBuffer>")]
        pub fetch_media: Option<()>,
    }
}
