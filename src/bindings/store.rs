//! `ChannelStore`: the Rust-owned store behind a JS class.
//!
//! State and every decision (what to fetch, whether the rate limiter allows a call, what
//! to serve when a fetch failed) live in [`crate::store`]. Awaiting the caller's async
//! fetcher happens in `js/store.js`, the store's fetch runtime: when `buildContext` or
//! `getMedia` needs a fetch, it hands over to that runtime, which calls the fetcher and
//! feeds the results back through the hidden `_`-prefixed methods below. When nothing
//! needs fetching (the steady state), the result is built here and the promise is
//! resolved at once.

use super::js::named;
use super::js::{
    call_js, clear_exception, describe, expect_object, from_js, from_js_opt, id_arg, input_json,
    is_nullish, parse_json, rejected, stringify, throw, to_js,
};
use crate::hash::sha256_hex;
use crate::input::{self, InputError};
use crate::model::MessageInput;
use crate::prompt::{PromptOptions, PromptOptionsInput};
use crate::ratelimit::{Grant, Overflow, RateLimitConfig, Refusal};
use crate::slack::{self, Page, ResponseError};
use crate::store::context::{fetch_key, BuildError, Built, ContextRequest, Failure, Need};
use crate::store::message::{Event, EventInput, StoredMessage};
use crate::store::{FileLocation, MediaItem, Store, StoreConfig};
use napi::bindgen_prelude::*;
use napi::{Env, JsString, JsValue, ValueType};
use napi_derive::napi;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::cell::RefCell;
use std::collections::HashMap;

const FETCHERS: [&str; 4] = ["fetchThread", "fetchHistory", "fetchMessages", "fetchMedia"];

thread_local! {
    /// The fetch runtime installed by `js/store.js` (`{ buildContext, getMedia }`).
    static RUNTIME: RefCell<Option<ObjectRef<false>>> = const { RefCell::new(None) };
}

/// Installs the fetch runtime (called once by the package entry point).
#[napi(js_name = "__setStoreRuntime", skip_typescript)]
pub fn set_store_runtime(runtime: Object) -> Result<()> {
    let r = runtime.create_ref::<false>()?;
    RUNTIME.with(|cell| {
        if let Some(old) = cell.borrow_mut().replace(r) {
            // The previous runtime object is no longer needed; its reference leaks
            // harmlessly if it cannot be released (this happens once per load).
            drop(old);
        }
    });
    Ok(())
}

/// A runtime entry point: `(store, a, b, c, d) => Promise`.
pub(crate) type RuntimeFn<'e> = Unknown<'e>;

/// Calls runtime entry point `run` as `run(store, a, b, c, d)`.
pub(crate) fn call_runtime<'e>(
    env: &'e Env,
    run: &RuntimeFn<'e>,
    store: Object<'e>,
    args: [Unknown<'e>; 4],
) -> Result<Unknown<'e>> {
    let [a, b, c, d] = args;
    call_js(env, run, &[store.to_unknown(), a, b, c, d])
}

pub(crate) fn runtime_fn<'e>(env: &'e Env, name: &str) -> Result<RuntimeFn<'e>> {
    let obj = RUNTIME.with(|cell| -> Result<Option<Object<'e>>> {
        match cell.borrow().as_ref() {
            Some(r) => Ok(Some(r.get_value(env)?)),
            None => Ok(None),
        }
    })?;
    let Some(obj) = obj else {
        return Err(Error::from_reason(
            "ChannelStore: the fetch runtime is not loaded; import the package (require('@openclaw/context-engine')), not the .node file",
        ));
    };
    obj.get_named_property(name)
}

// ------------------------------------------------------------------ options

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct TtlCacheOptions {
    max: Option<f64>,
    ttl: Option<f64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct MediaCacheOptions {
    max_size: Option<f64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RateLimitOptions {
    preset: Option<String>,
    max_calls_per_min: Option<f64>,
    per_method: Option<HashMap<String, f64>>,
    overflow_strategy: Option<String>,
    max_queue: Option<f64>,
    queue_timeout: Option<f64>,
    stale_serve_ttl: Option<f64>,
    page_size: Option<f64>,
    max_pages: Option<f64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct StoreOptions {
    window_size: Option<f64>,
    thread_replies: Option<TtlCacheOptions>,
    thread_starters: Option<TtlCacheOptions>,
    media: Option<MediaCacheOptions>,
    rate_limit: Option<RateLimitOptions>,
    workspace_id: Option<String>,
    fetch_timeout: Option<f64>,
    max_replies_per_thread: Option<f64>,
    // Functions vanish in JSON; these are read from the object itself.
    #[allow(dead_code)]
    fetcher: Option<Value>,
    #[allow(dead_code)]
    clock: Option<Value>,
}

/// A whole number in `0..=2^53`, or a RangeError naming `path`.
fn count(v: Option<f64>, path: &str, what: &str) -> std::result::Result<Option<u64>, InputError> {
    match v {
        None => Ok(None),
        Some(n)
            if n.is_finite() && n >= 0.0 && n.fract() == 0.0 && n <= 9_007_199_254_740_992.0 =>
        {
            Ok(Some(n as u64))
        }
        Some(n) => Err(InputError::range_error(
            path,
            format!("expected a non-negative whole number of {what}, got {n}"),
        )),
    }
}

fn config_from(o: StoreOptions) -> std::result::Result<StoreConfig, InputError> {
    let mut c = StoreConfig::default();
    let usize_of = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
    if let Some(n) = count(o.window_size, "options.windowSize", "messages")? {
        if n == 0 {
            return Err(InputError::range_error(
                "options.windowSize",
                "must be at least 1",
            ));
        }
        c.window_size = usize_of(n);
    }
    let r = o.thread_replies.unwrap_or_default();
    if let Some(n) = count(r.max, "options.threadReplies.max", "threads")? {
        c.replies_max = usize_of(n);
    }
    if let Some(n) = count(r.ttl, "options.threadReplies.ttl", "milliseconds")? {
        c.replies_ttl_ms = n;
    }
    let s = o.thread_starters.unwrap_or_default();
    if let Some(n) = count(s.max, "options.threadStarters.max", "entries")? {
        c.starters_max = usize_of(n);
    }
    if let Some(n) = count(s.ttl, "options.threadStarters.ttl", "milliseconds")? {
        c.starters_ttl_ms = n;
    }
    if let Some(n) = count(
        o.media.unwrap_or_default().max_size,
        "options.media.maxSize",
        "bytes",
    )? {
        c.media_max_size = n;
    }
    if let Some(w) = o.workspace_id {
        if w.is_empty() {
            return Err(InputError::type_error(
                "options.workspaceId",
                "expected a non-empty string",
            ));
        }
        c.default_workspace = w;
    }
    if let Some(n) = count(o.fetch_timeout, "options.fetchTimeout", "milliseconds")? {
        if n == 0 {
            return Err(InputError::range_error(
                "options.fetchTimeout",
                "must be at least 1",
            ));
        }
        c.fetch_timeout_ms = n;
    }
    if let Some(n) = count(
        o.max_replies_per_thread,
        "options.maxRepliesPerThread",
        "replies",
    )? {
        if n == 0 {
            return Err(InputError::range_error(
                "options.maxRepliesPerThread",
                "must be at least 1",
            ));
        }
        c.max_thread_replies = usize_of(n);
    }
    let rl = o.rate_limit.unwrap_or_default();
    let mut rate = match rl.preset.as_deref() {
        None | Some("default") => RateLimitConfig::default(),
        Some("slack-non-marketplace") => RateLimitConfig::slack_non_marketplace(),
        Some(other) => {
            return Err(InputError::range_error(
                "options.rateLimit.preset",
                format!("expected \"default\" or \"slack-non-marketplace\", got {other:?}"),
            ))
        }
    };
    let u32_of = |n: u64| u32::try_from(n).unwrap_or(u32::MAX);
    if let Some(n) = count(
        rl.max_calls_per_min,
        "options.rateLimit.maxCallsPerMin",
        "calls",
    )? {
        rate.calls_per_min = u32_of(n);
    }
    for (method, v) in rl.per_method.unwrap_or_default() {
        let path = format!("options.rateLimit.perMethod[{method:?}]");
        if let Some(n) = count(Some(v), &path, "calls")? {
            rate.per_method.insert(method, u32_of(n));
        }
    }
    match rl.overflow_strategy.as_deref() {
        None => {}
        Some("queue") => rate.overflow = Overflow::Queue,
        Some("degrade") => rate.overflow = Overflow::Degrade,
        Some(other) => {
            return Err(InputError::range_error(
                "options.rateLimit.overflowStrategy",
                format!("expected \"queue\" or \"degrade\", got {other:?}"),
            ))
        }
    }
    if let Some(n) = count(rl.max_queue, "options.rateLimit.maxQueue", "calls")? {
        rate.max_queue = u32_of(n);
    }
    if let Some(n) = count(
        rl.queue_timeout,
        "options.rateLimit.queueTimeout",
        "milliseconds",
    )? {
        rate.queue_timeout_ms = n;
    }
    if let Some(n) = count(
        rl.stale_serve_ttl,
        "options.rateLimit.staleServeTtl",
        "milliseconds",
    )? {
        rate.stale_serve_ttl_ms = n;
    }
    if let Some(n) = count(rl.page_size, "options.rateLimit.pageSize", "objects")? {
        if n == 0 {
            return Err(InputError::range_error(
                "options.rateLimit.pageSize",
                "must be at least 1",
            ));
        }
        rate.page_size = u32_of(n);
    }
    if let Some(n) = count(rl.max_pages, "options.rateLimit.maxPages", "pages")? {
        if n == 0 {
            return Err(InputError::range_error(
                "options.rateLimit.maxPages",
                "must be at least 1",
            ));
        }
        rate.max_pages = u32_of(n);
    }
    c.rate_limit = rate;
    Ok(c)
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct BuildOptions {
    thread_id: Option<String>,
    adjacent: Option<f64>,
    budget_tokens: Option<f64>,
    direct_message: Option<bool>,
    tool_names: Option<crate::prompt::ToolNamesInput>,
    pretty: Option<bool>,
}

fn request_from(
    channel: String,
    anchor: String,
    o: BuildOptions,
) -> std::result::Result<ContextRequest, InputError> {
    if channel.is_empty() {
        return Err(InputError::type_error(
            "channelId",
            "expected a non-empty string",
        ));
    }
    if anchor.is_empty() {
        return Err(InputError::type_error(
            "anchorMessageId",
            "expected a non-empty string",
        ));
    }
    let mut req = ContextRequest::new(&channel, &anchor);
    req.thread_hint = o.thread_id.filter(|t| !t.is_empty());
    if let Some(n) = count(o.adjacent, "options.adjacent", "messages")? {
        req.adjacent = usize::try_from(n).unwrap_or(usize::MAX);
    }
    if let Some(b) = o.budget_tokens {
        req.budget_tokens = input::budget_tokens(b, "options.budgetTokens")?;
    }
    req.prompt = PromptOptions::from(PromptOptionsInput {
        direct_message: o.direct_message,
        tool_names: o.tool_names,
        pretty: o.pretty,
    });
    Ok(req)
}

// ------------------------------------------------------------------ needs as JS sees them

/// A fetch as the runtime sees it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct NeedJs {
    key: String,
    kind: String,
    method: String,
    fetch: String,
    channel_id: String,
    #[serde(default)]
    thread_id: Option<String>,
    #[serde(default)]
    message_ids: Option<Vec<String>>,
    #[serde(default)]
    artifact_id: Option<String>,
    page_size: u32,
    max_pages: u32,
    /// The argument passed to the fetcher (without cursor).
    request: Value,
}

#[derive(Debug, Clone, Deserialize)]
struct FailureJs {
    need: NeedJs,
    reason: String,
}

pub(crate) fn need_js(need: &Need, rate: &RateLimitConfig) -> NeedJs {
    let (kind, fetch, thread_id, message_ids) = match need {
        Need::History { .. } => ("history", "fetchHistory", None, None),
        Need::Thread { thread, .. } => ("thread", "fetchThread", Some(thread.clone()), None),
        Need::Messages { ids, .. } => ("messages", "fetchMessages", None, Some(ids.clone())),
    };
    let mut request = json!({ "channelId": need.channel() });
    if let Some(t) = &thread_id {
        request["threadId"] = json!(t);
    }
    if let Some(ids) = &message_ids {
        request["messageIds"] = json!(ids);
    }
    NeedJs {
        key: need.key(),
        kind: kind.to_string(),
        method: need.method().to_string(),
        fetch: fetch.to_string(),
        channel_id: need.channel().to_string(),
        thread_id,
        message_ids,
        artifact_id: None,
        page_size: rate.page_size,
        max_pages: if matches!(need, Need::Thread { .. }) {
            rate.max_pages
        } else {
            1
        },
        request,
    }
}

fn need_from_js(n: &NeedJs) -> Option<Need> {
    let channel = n.channel_id.clone();
    match n.kind.as_str() {
        "history" => Some(Need::History { channel }),
        "thread" => n
            .thread_id
            .clone()
            .map(|thread| Need::Thread { channel, thread }),
        "messages" => n
            .message_ids
            .clone()
            .map(|ids| Need::Messages { channel, ids }),
        _ => None,
    }
}

/// Reads one page of a fetch result: a Slack Web API body, or the neutral
/// `{ messages: MessageInput[], nextCursor? }`.
fn page_from_body(
    body: &Value,
    dir: slack::Directory<'_>,
) -> std::result::Result<Page, ResponseError> {
    let neutral = body.get("ok").is_none()
        && body
            .get("messages")
            .and_then(Value::as_array)
            .is_some_and(|a| a.first().is_some_and(|m| m.get("author").is_some()));
    if !neutral {
        return slack::response_page(body, "result", dir);
    }
    let list = body
        .get("messages")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut messages = Vec::with_capacity(list.len());
    for (i, m) in list.into_iter().enumerate() {
        let path = format!("result.messages[{i}]");
        let input: MessageInput = serde_json::from_value(m)
            .map_err(|e| ResponseError::Malformed(InputError::type_error(&path, e.to_string())))?;
        messages.push(StoredMessage::from_input(input, &path).map_err(ResponseError::Malformed)?);
    }
    let next_cursor = body
        .get("nextCursor")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string);
    Ok(Page {
        messages,
        next_cursor,
    })
}

// ------------------------------------------------------------------ the class

/// Rust-owned channel state fed by events, with the seed's caches (thread replies: 5 min,
/// 500 threads; thread starters: 6 h, 2,000 entries; media: 50 MB LRU), per-workspace,
/// per-method rate limiting (40 calls/min by default) and an async fetcher supplied from
/// JS for what the store does not hold.
///
/// ```ts
/// const store = new ChannelStore({ fetcher: { fetchThread, fetchHistory } })
/// store.ingestSlackEvent(payload)            // every Events API payload, as Slack sends it
/// const ctx = await store.buildContext('C07ROLLOUT', '1775835630.000300')
/// ctx.promptSection                          // the system-prompt section
/// ```
#[napi]
pub struct ChannelStore {
    core: RefCell<Store>,
    clock: Option<FunctionRef<(), f64>>,
    /// Which fetcher functions were supplied.
    fetchers: [bool; 4],
    users: RefCell<HashMap<String, (String, bool)>>,
}

/// Users remembered for display names.
const USERS_REMEMBERED: usize = 100_000;

fn system_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

fn func_err(env: &Env, func: &str, e: &InputError) -> Error {
    throw(env, func, e)
}

#[napi]
impl ChannelStore {
    /// Creates an empty store. Every option is optional; defaults are the seed's numbers.
    #[napi(
        constructor,
        catch_unwind,
        ts_args_type = "options?: ChannelStoreOptions"
    )]
    pub fn new(env: Env, options: Option<Unknown>) -> Result<Self> {
        named(
            &env,
            "ChannelStore",
            "options",
            (|| -> Result<Self> {
                const F: &str = "ChannelStore";
                let mut clock = None;
                let mut fetchers = [false; 4];
                if let Some(o) = options.as_ref().filter(|o| !is_nullish(o)) {
                    expect_object(&env, F, "options", o)?;
                    let obj: Object = unsafe { o.cast()? };
                    let c: Unknown = obj.get_named_property("clock")?;
                    if !is_nullish(&c) {
                        if c.get_type()? != ValueType::Function {
                            return Err(func_err(
                                &env,
                                F,
                                &InputError::type_error(
                                    "options.clock",
                                    format!(
                                        "expected a function returning epoch milliseconds, got {}",
                                        describe(&c)
                                    ),
                                ),
                            ));
                        }
                        let f: Function<(), f64> = unsafe { c.cast()? };
                        clock = Some(f.create_ref()?);
                    }
                    let fe: Unknown = obj.get_named_property("fetcher")?;
                    if !is_nullish(&fe) {
                        expect_object(&env, F, "options.fetcher", &fe)?;
                        let fo: Object = unsafe { fe.cast()? };
                        for (i, name) in FETCHERS.iter().enumerate() {
                            let f: Unknown = fo.get_named_property(name)?;
                            if is_nullish(&f) {
                                continue;
                            }
                            if f.get_type()? != ValueType::Function {
                                return Err(func_err(
                                    &env,
                                    F,
                                    &InputError::type_error(
                                        format!("options.fetcher.{name}"),
                                        format!("expected an async function, got {}", describe(&f)),
                                    ),
                                ));
                            }
                            fetchers[i] = true;
                        }
                    }
                }
                let opts: StoreOptions =
                    from_js_opt(&env, F, "options", options)?.unwrap_or_default();
                let config = config_from(opts).map_err(|e| func_err(&env, F, &e))?;
                Ok(ChannelStore {
                    core: RefCell::new(Store::new(config)),
                    clock,
                    fetchers,
                    users: RefCell::new(HashMap::new()),
                })
            })(),
        )
    }

    pub(crate) fn core(&self) -> Result<std::cell::RefMut<'_, Store>> {
        self.core
            .try_borrow_mut()
            .map_err(|_| Error::from_reason("ChannelStore: re-entered from inside its own call (a clock or fetcher called back into the store synchronously)"))
    }

    pub(crate) fn has_fetcher(&self, name: &str) -> bool {
        FETCHERS
            .iter()
            .position(|f| *f == name)
            .is_some_and(|i| self.fetchers[i])
    }

    /// The store's time in epoch milliseconds: the `clock` option, or the system clock.
    #[napi(js_name = "now")]
    pub fn now_ms(&self, env: &Env) -> Result<f64> {
        Ok(self.now(env)? as f64)
    }

    pub(crate) fn now(&self, env: &Env) -> Result<u64> {
        let Some(c) = &self.clock else {
            return Ok(system_now());
        };
        let f = c.borrow_back(env)?.to_unknown();
        let out = call_js(env, &f, &[])?;
        let v = if out.get_type()? == ValueType::Number {
            // SAFETY: checked to be a number just above.
            unsafe { out.cast::<f64>()? }
        } else {
            f64::NAN
        };
        if !v.is_finite() || v < 0.0 {
            return Err(Error::new(Status::InvalidArg, format!("ChannelStore: options.clock returned {v}; expected epoch milliseconds (a finite, non-negative number)")));
        }
        Ok(v as u64)
    }

    fn directory(&self) -> impl Fn(&str) -> Option<(String, bool)> + '_ {
        move |id: &str| self.users.borrow().get(id).cloned()
    }

    fn apply_all(&self, env: &Env, events: Vec<Event>) -> Result<u32> {
        let now = self.now(env)?;
        let mut core = self.core()?;
        let mut applied = 0u32;
        for e in events {
            if !matches!(e, Event::Ignored { .. }) {
                applied += 1;
            }
            core.apply(e, now);
        }
        Ok(applied)
    }

    /// Applies one neutral event: `message` (a new message or thread reply),
    /// `message_changed`, `message_deleted`, `reaction_added`, `reaction_removed`.
    /// Unknown kinds are counted (`stats().ignoredEvents`) and ignored. A malformed event
    /// throws a `TypeError` naming the field and changes nothing. Returns 1 when the
    /// event was applied, 0 when ignored.
    #[napi(catch_unwind, ts_args_type = "event: ChannelEvent")]
    pub fn ingest(&self, env: &Env, event: Unknown) -> Result<u32> {
        let e: EventInput = from_js(env, "ingest", "event", event)?;
        let e = e
            .validate("event")
            .map_err(|e| func_err(env, "ingest", &e))?;
        self.apply_all(env, vec![e])
    }

    /// Internal (`ingestMany` in `js/store.js`): a batch of plain messages packed as
    /// UTF-16 fields, which skips building and parsing JSON per object.
    #[napi(js_name = "_ingestPacked", skip_typescript)]
    pub fn ingest_packed(
        &self,
        env: &Env,
        strings: JsString,
        lens: Uint32Array,
        kinds: Uint8Array,
    ) -> Result<u32> {
        const F: &str = "ingestMany";
        let units = strings.into_utf16()?;
        // napi's buffer ends with a NUL terminator, which is not part of the text.
        let units = units.as_slice().split_last().map_or(&[][..], |(_, t)| t);
        let events = crate::store::message::decode_packed(units, &lens, &kinds)
            .map_err(|e| func_err(env, F, &e))?;
        self.apply_all(env, events)
    }

    /// Applies a batch of events in order, as one crossing of the JS/Rust boundary.
    /// Every event is validated first: one malformed event throws (naming
    /// `events[i]` and the field) and none is applied. Returns how many were applied.
    #[napi(catch_unwind, ts_args_type = "events: ChannelEvent[]")]
    pub fn ingest_many(&self, env: &Env, events: Unknown) -> Result<u32> {
        const F: &str = "ingestMany";
        if !events.is_array()? {
            return Err(func_err(
                env,
                F,
                &InputError::type_error(
                    "events",
                    format!("expected an array, got {}", describe(&events)),
                ),
            ));
        }
        let Some(text) = input_json(env, F, "events", events)? else {
            return Err(func_err(
                env,
                F,
                &InputError::type_error("events", "expected an array"),
            ));
        };
        let list: Vec<EventInput> =
            input::parse(&text, "events").map_err(|e| func_err(env, F, &e))?;
        let mut out = Vec::with_capacity(list.len());
        for (i, e) in list.into_iter().enumerate() {
            out.push(
                e.validate(&format!("events[{i}]"))
                    .map_err(|e| func_err(env, F, &e))?,
            );
        }
        self.apply_all(env, out)
    }

    /// Applies an Events API payload exactly as Slack sends it (the `event_callback`
    /// envelope, or its `event`): `message` and its subtypes `bot_message`,
    /// `thread_broadcast`, `file_share`, `message_changed`, `message_deleted`;
    /// `reaction_added`, `reaction_removed`. Other payloads (`url_verification`,
    /// `channel_join`, ...) are counted and ignored. Returns 1 when applied, 0 when ignored.
    #[napi(catch_unwind, ts_args_type = "payload: Record<string, unknown>")]
    pub fn ingest_slack_event(&self, env: &Env, payload: Unknown) -> Result<u32> {
        const F: &str = "ingestSlackEvent";
        let v: Value = from_js(env, F, "payload", payload)?;
        self.learn_users(&v);
        let dir = self.directory();
        let e = slack::event_payload(&v, &dir).map_err(|e| func_err(env, F, &e))?;
        drop(dir);
        self.apply_all(env, vec![e])
    }

    /// Ingests a Web API response body as Slack returns it: `conversations.history`
    /// (without `threadId`) or `conversations.replies` (with `threadId`; pass
    /// `firstPage: false` for the pages after the first). Returns the next cursor
    /// (`response_metadata.next_cursor` when `has_more`), or null. An `ok: false` body
    /// throws an Error with Slack's error code.
    #[napi(
        catch_unwind,
        ts_args_type = "channelId: string, response: Record<string, unknown>, options?: { threadId?: string; firstPage?: boolean }",
        ts_return_type = "string | null"
    )]
    pub fn ingest_slack_response(
        &self,
        env: &Env,
        channel_id: Unknown,
        response: Unknown,
        options: Option<Unknown>,
    ) -> Result<Option<String>> {
        const F: &str = "ingestSlackResponse";
        let channel = id_arg(env, F, "channelId", &channel_id)?;
        let body: Value = from_js(env, F, "response", response)?;
        #[derive(Deserialize, Default)]
        #[serde(rename_all = "camelCase", deny_unknown_fields)]
        struct O {
            thread_id: Option<String>,
            first_page: Option<bool>,
        }
        let o: O = from_js_opt(env, F, "options", options)?.unwrap_or_default();
        self.learn_users(&body);
        let dir = self.directory();
        let page = match slack::response_page(&body, "response", &dir) {
            Ok(p) => p,
            Err(ResponseError::Malformed(e)) => return Err(func_err(env, F, &e)),
            Err(e @ ResponseError::Slack(_)) => {
                return Err(Error::from_reason(format!("{F}: {e}")))
            }
        };
        drop(dir);
        let now = self.now(env)?;
        let next = page.next_cursor.clone();
        let mut core = self.core()?;
        match o.thread_id {
            Some(t) => core.put_thread_page(
                &channel,
                &t,
                page.messages,
                o.first_page.unwrap_or(true),
                next.is_none(),
                now,
            ),
            None => core.put_history(&channel, page.messages, now),
        }
        Ok(next)
    }

    fn learn_users(&self, v: &Value) {
        let mut users = self.users.borrow_mut();
        let mut learn = |m: &Value| {
            let (Some(id), Some(p)) =
                (m.get("user").and_then(Value::as_str), m.get("user_profile"))
            else {
                return;
            };
            let name = p
                .get("display_name")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .or_else(|| {
                    p.get("real_name")
                        .and_then(Value::as_str)
                        .filter(|s| !s.is_empty())
                });
            if let Some(name) = name {
                if users.len() < USERS_REMEMBERED || users.contains_key(id) {
                    users.insert(
                        id.to_string(),
                        (
                            name.to_string(),
                            p.get("is_bot").and_then(Value::as_bool).unwrap_or(false),
                        ),
                    );
                }
            }
        };
        if let Some(e) = v.get("event") {
            learn(e);
            if let Some(m) = e.get("message") {
                learn(m);
            }
        }
        learn(v);
        if let Some(Value::Array(ms)) = v.get("messages") {
            ms.iter().for_each(&mut learn);
        }
    }

    /// Sets display names for user ids (Slack events carry only ids). Later payloads
    /// use these names; messages already held keep theirs.
    #[napi(
        catch_unwind,
        ts_args_type = "users: Array<{ userId: string; displayName: string; isBot?: boolean }>"
    )]
    pub fn set_users(&self, env: &Env, users: Unknown) -> Result<()> {
        named(
            env,
            "setUsers",
            "users",
            (|| -> Result<()> {
                #[derive(Deserialize)]
                #[serde(rename_all = "camelCase")]
                struct U {
                    user_id: String,
                    display_name: String,
                    #[serde(default)]
                    is_bot: bool,
                }
                if !users.is_array()? {
                    return Err(func_err(
                        env,
                        "setUsers",
                        &InputError::type_error(
                            "users",
                            format!("expected an array, got {}", describe(&users)),
                        ),
                    ));
                }
                let Some(text) = stringify(env, users)? else {
                    return Ok(());
                };
                let list: Vec<U> =
                    input::parse(&text, "users").map_err(|e| func_err(env, "setUsers", &e))?;
                let mut dir = self.users.borrow_mut();
                for u in list {
                    if dir.len() < USERS_REMEMBERED || dir.contains_key(&u.user_id) {
                        dir.insert(u.user_id, (u.display_name, u.is_bot));
                    }
                }
                Ok(())
            })(),
        )
    }

    /// Describes a channel: its name and platform (shown in the ChannelSnapshot) and the
    /// workspace whose rate limits its fetches count against. Unset fields keep their value.
    #[napi(
        catch_unwind,
        ts_args_type = "channel: { id: string; name?: string; platform?: string; workspaceId?: string }"
    )]
    pub fn set_channel(&self, env: &Env, channel: Unknown) -> Result<()> {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase", deny_unknown_fields)]
        struct C {
            id: String,
            name: Option<String>,
            platform: Option<String>,
            workspace_id: Option<String>,
        }
        let c: C = from_js(env, "setChannel", "channel", channel)?;
        if c.id.is_empty() {
            return Err(func_err(
                env,
                "setChannel",
                &InputError::type_error("channel.id", "expected a non-empty string"),
            ));
        }
        self.core()?
            .set_channel(&c.id, c.name, c.platform, c.workspace_id);
        Ok(())
    }

    /// A held message by id (from the channel window, a held thread or the starter
    /// cache), or null. Deleted messages are never returned.
    #[napi(
        catch_unwind,
        ts_args_type = "channelId: string, messageId: string",
        ts_return_type = "StoredMessageView | null"
    )]
    pub fn get_message<'e>(
        &self,
        env: &'e Env,
        channel_id: Unknown,
        message_id: Unknown,
    ) -> Result<Unknown<'e>> {
        let channel = id_arg(env, "getMessage", "channelId", &channel_id)?;
        let id = id_arg(env, "getMessage", "messageId", &message_id)?;
        let mut found = None;
        self.core()?.for_each_copy(&channel, &id, |m| {
            if found.is_none() {
                found = Some(message_view(m));
            }
        });
        match found {
            Some(v) => to_js(env, &v),
            None => Null.into_unknown(env),
        }
    }

    /// Thread activity of a held message, computed from what the store holds: reply
    /// count, replies in the last hour (store clock), newest reply ts and the repliers'
    /// names. Null when the message has no replies or is not held.
    #[napi(
        catch_unwind,
        ts_args_type = "channelId: string, messageId: string",
        ts_return_type = "ThreadSummary | null"
    )]
    pub fn thread_activity<'e>(
        &self,
        env: &'e Env,
        channel_id: Unknown,
        message_id: Unknown,
    ) -> Result<Unknown<'e>> {
        let channel = id_arg(env, "threadActivity", "channelId", &channel_id)?;
        let id = id_arg(env, "threadActivity", "messageId", &message_id)?;
        let now = self.now(env)?;
        let core = self.core()?;
        let msg = core
            .channels
            .get(&channel)
            .and_then(|c| c.get(&id).cloned())
            .or_else(|| {
                core.starters
                    .peek(&crate::store::thread_key(&channel, &id))
                    .map(|e| e.value.clone())
            });
        let act = msg.and_then(|m| core.activity(&channel, &m, now));
        match act {
            Some(a) => to_js(
                env,
                &json!({
                    "reply_count": a.reply_count,
                    "replies_last_1h": a.replies_last_1h,
                    "last_reply_ts": a.last_reply_ts.as_deref().map(crate::time::to_iso),
                    "participant_names": a.participant_names,
                }),
            ),
            None => Null.into_unknown(env),
        }
    }

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
        self.build_context_inner(env, this, channel_id, anchor_message_id, options)
            .or_else(|e| rejected(env, e))
    }

    fn build_context_inner<'e>(
        &self,
        env: &'e Env,
        this: This<'e>,
        channel_id: Unknown<'e>,
        anchor_message_id: Unknown<'e>,
        options: Option<Unknown<'e>>,
    ) -> Result<Unknown<'e>> {
        const F: &str = "buildContext";
        let channel = id_arg(env, F, "channelId", &channel_id)?;
        let anchor = id_arg(env, F, "anchorMessageId", &anchor_message_id)?;
        let opts: BuildOptions = from_js_opt(env, F, "options", options)?.unwrap_or_default();
        let req = request_from(channel, anchor, opts).map_err(|e| func_err(env, F, &e))?;
        let now = self.now(env)?;
        let mut failures = Vec::new();
        let needs = self.plan_fetchable(&req, &mut failures, now)?;
        if needs.is_empty() {
            let built = self.core()?.build(&req, &failures, now);
            return match built {
                Ok(b) => {
                    PromiseRaw::resolve(env, BuiltContext::new(env, b, 0)).map(|p| p.to_unknown())
                }
                Err(e) => {
                    PromiseRaw::<()>::reject(env, anchor_error(env, &e)?).map(|p| p.to_unknown())
                }
            };
        }
        let rate = self.core()?.config.rate_limit.clone();
        let failures_js = failures_json(&failures, &rate);
        let run = runtime_fn(env, "buildContext")?;
        let options = options.unwrap_or(().into_unknown(env)?);
        let payload = to_js(env, &json!({ "needs": needs, "failures": failures_js }))?;
        call_runtime(
            env,
            &run,
            this.object,
            [channel_id, anchor_message_id, options, payload],
        )
    }

    /// The fetches `req` still needs that the fetcher can make; needs without a fetcher
    /// function are added to `failures`.
    fn plan_fetchable(
        &self,
        req: &ContextRequest,
        failures: &mut Vec<Failure>,
        now: u64,
    ) -> Result<Vec<NeedJs>> {
        let mut core = self.core()?;
        let rate = core.config.rate_limit.clone();
        loop {
            let (fetchable, missing): (Vec<Need>, Vec<Need>) = core
                .plan(req, failures, now)
                .into_iter()
                .partition(|n| self.has_fetcher(fetcher_name(n)));
            if missing.is_empty() {
                return Ok(fetchable.iter().map(|n| need_js(n, &rate)).collect());
            }
            for n in missing {
                let name = fetcher_name(&n);
                failures.push(Failure {
                    need: n,
                    reason: format!("no {name} in the fetcher"),
                });
            }
        }
    }

    /// Internal (fetch runtime): the fetches still needed after `failures`.
    #[napi(js_name = "_plan", skip_typescript)]
    pub fn plan_js<'e>(
        &self,
        env: &'e Env,
        channel_id: String,
        anchor: String,
        options: Option<Unknown>,
        failures: Unknown,
    ) -> Result<Unknown<'e>> {
        let opts: BuildOptions =
            from_js_opt(env, "buildContext", "options", options)?.unwrap_or_default();
        let req = request_from(channel_id, anchor, opts)
            .map_err(|e| func_err(env, "buildContext", &e))?;
        let mut failures = failures_from_js(env, failures)?;
        let known = failures.len();
        let now = self.now(env)?;
        let needs = self.plan_fetchable(&req, &mut failures, now)?;
        let rate = self.core()?.config.rate_limit.clone();
        let added = failures_json(&failures[known..], &rate);
        to_js(env, &json!({ "needs": needs, "failures": added }))
    }

    /// Internal (fetch runtime): builds the result after the fetches.
    #[napi(js_name = "_build", skip_typescript)]
    pub fn build_js(
        &self,
        env: &Env,
        channel_id: String,
        anchor: String,
        options: Option<Unknown>,
        failures: Unknown,
        api_calls: u32,
    ) -> Result<BuiltContext> {
        let opts: BuildOptions =
            from_js_opt(env, "buildContext", "options", options)?.unwrap_or_default();
        let req = request_from(channel_id, anchor, opts)
            .map_err(|e| func_err(env, "buildContext", &e))?;
        let failures = failures_from_js(env, failures)?;
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

    /// Internal (fetch runtime): asks the rate limiter for a slot for `need`.
    /// `{ wait: ms }` (0 = now) or `{ refused: reason }`.
    #[napi(js_name = "_acquire", skip_typescript)]
    pub fn acquire_js<'e>(
        &self,
        env: &'e Env,
        method: String,
        channel_id: String,
    ) -> Result<Unknown<'e>> {
        let now = self.now(env)?;
        let mut core = self.core()?;
        let ws = core.workspace_of(&channel_id);
        let grant = core.limiter.acquire(&ws, &method, now);
        let out = match grant {
            Grant::Now => json!({ "wait": 0 }),
            Grant::At(t) => json!({ "wait": t - now }),
            Grant::Refused(r) => {
                core.counters.rate_limited += 1;
                json!({ "refused": refusal_text(&method, r, now) })
            }
        };
        drop(core);
        to_js(env, &out)
    }

    /// Internal (fetch runtime): after a queued wait, whether a Retry-After pause now
    /// forbids the call (the reason), or null.
    #[napi(js_name = "_pausedReason", skip_typescript)]
    pub fn paused_reason(
        &self,
        env: &Env,
        method: String,
        channel_id: String,
    ) -> Result<Option<String>> {
        let now = self.now(env)?;
        let mut core = self.core()?;
        let ws = core.workspace_of(&channel_id);
        Ok(core.limiter.paused_until(&ws, &method, now).map(|until| {
            core.counters.rate_limited += 1;
            format!(
                "{method} is paused by Retry-After for {}s more",
                (until - now).div_ceil(1000)
            )
        }))
    }

    /// Internal (fetch runtime): counts a call about to be made.
    #[napi(js_name = "_countCall", skip_typescript)]
    pub fn count_call(&self, method: String) -> Result<()> {
        self.core()?.count_call(&method);
        Ok(())
    }

    /// Internal (fetch runtime): a fetch failed. Counts it, applies a Retry-After pause
    /// (`retryAfterMs`), and returns the reason to report.
    #[napi(js_name = "_fetchFailed", skip_typescript)]
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
        let mut core = self.core()?;
        core.counters.failed_fetches += 1;
        if timed_out == Some(true) {
            core.counters.timed_out_fetches += 1;
        }
        let mut reason = format!("{method} failed: {message}");
        if let Some(ms) = retry_after_ms.filter(|m| !m.is_nan() && *m > 0.0) {
            // Infinity and absurd values are cut to the documented maximum.
            let max = crate::ratelimit::MAX_RETRY_AFTER_MS;
            let capped = ms > max as f64;
            let ms = if capped { max } else { ms.ceil() as u64 };
            if capped {
                core.counters.retry_after_capped += 1;
            }
            let ws = core.workspace_of(&channel_id);
            core.limiter
                .pause(&ws, &method, now.saturating_add(ms), now);
            reason.push_str(&format!(
                "; paused for {}s (Retry-After{})",
                ms.div_ceil(1000),
                if capped { ", capped at 1 hour" } else { "" }
            ));
        }
        Ok(reason)
    }

    /// Internal (fetch runtime): a fetch begins; returns the event number it began at,
    /// to pass to `_ingestPage`.
    #[napi(js_name = "_fetchBegin", skip_typescript)]
    pub fn fetch_begin(&self) -> Result<f64> {
        Ok(self.core()?.recent.begin_fetch() as f64)
    }

    /// Internal (fetch runtime): a fetch that `_fetchBegin` started has ended.
    #[napi(js_name = "_fetchEnd", skip_typescript)]
    pub fn fetch_end(&self) -> Result<()> {
        self.core()?.recent.end_fetch();
        Ok(())
    }

    /// Internal (fetch runtime): milliseconds one fetcher call may take.
    #[napi(js_name = "_fetchTimeout", skip_typescript)]
    pub fn fetch_timeout(&self) -> Result<f64> {
        Ok(self.core()?.config.fetch_timeout_ms as f64)
    }

    /// Internal (fetch runtime): ingests one page of a fetch result. Returns
    /// `{ nextCursor }` or `{ error }` (a malformed body or `ok: false`, counted as a
    /// failed fetch).
    #[napi(js_name = "_ingestPage", skip_typescript)]
    pub fn ingest_page<'e>(
        &self,
        env: &'e Env,
        need: Unknown,
        body: Unknown,
        first_page: bool,
        since: Option<f64>,
    ) -> Result<Unknown<'e>> {
        let need: NeedJs = from_js(env, "buildContext", "need", need)?;
        // The event number the fetch began at: events after it are newer than the page.
        let since = since
            .filter(|n| n.is_finite() && *n >= 0.0)
            .map(|n| n as u64);
        // Whatever the fetcher resolved with is data: a value JSON cannot hold makes
        // the page unusable (reported below), never an exception.
        let body: Value = match stringify(env, body) {
            Ok(Some(mut text)) => {
                let fixes = input::repair_lone_surrogates(&mut text);
                match input::id_with_lone_surrogate(&text, &fixes) {
                    // Ids the store cannot keep exactly make the page unusable.
                    Some((_, key)) => {
                        let reason = format!(
                            "{} returned an unusable result: {}",
                            need.fetch,
                            input::lone_surrogate_error(key)
                        );
                        self.core()?.counters.failed_fetches += 1;
                        return to_js(env, &json!({ "error": reason }));
                    }
                    None => serde_json::from_str(&text).unwrap_or(Value::Null),
                }
            }
            Ok(None) => Value::Null,
            Err(_) => {
                clear_exception(env);
                Value::Null
            }
        };
        self.learn_users(&body);
        let dir = self.directory();
        let page = page_from_body(&body, &dir);
        drop(dir);
        let now = self.now(env)?;
        let mut core = self.core()?;
        let out = match page {
            Err(e) => {
                core.counters.failed_fetches += 1;
                json!({ "error": format!("{} returned an unusable result: {e}", need.fetch) })
            }
            Ok(mut page) => {
                let mut next = page.next_cursor.clone();
                // A page holds at most what was asked (a thread's first page may add
                // its root); the rest is dropped and the thread stays incomplete.
                let asked = need.page_size as usize + usize::from(need.kind == "thread");
                if page.messages.len() > asked {
                    core.counters.replies_dropped += (page.messages.len() - asked) as u64;
                    page.messages.truncate(asked);
                    if next.is_none() && need.kind == "thread" {
                        next = Some(String::new());
                    }
                }
                let since = since.unwrap_or_else(|| core.recent.seq());
                core.with_fetch_since(since, |core| match need_from_js(&need) {
                    Some(Need::History { channel }) => {
                        core.put_history(&channel, page.messages, now)
                    }
                    Some(Need::Thread { channel, thread }) => core.put_thread_page(
                        &channel,
                        &thread,
                        page.messages,
                        first_page,
                        next.is_none(),
                        now,
                    ),
                    Some(Need::Messages { channel, .. }) => {
                        for m in page.messages {
                            let m = core.merge_fetched(&channel, m);
                            if let Some(t) = m.thread_id.clone() {
                                // A reply: remember its thread so the next plan fetches it.
                                core.channels
                                    .entry(channel.clone())
                                    .or_default()
                                    .reply_threads
                                    .insert(m.id.clone(), t);
                            }
                            core.put_message(&channel, m, false, now);
                        }
                    }
                    None => {}
                });
                json!({ "nextCursor": next })
            }
        };
        drop(core);
        to_js(env, &out)
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
        self.get_media_inner(env, this, artifact_id, channel_id)
            .or_else(|e| rejected(env, e))
    }

    fn get_media_inner<'e>(
        &self,
        env: &'e Env,
        this: This<'e>,
        artifact_id: Unknown<'e>,
        channel_id: Option<Unknown<'e>>,
    ) -> Result<Unknown<'e>> {
        const F: &str = "getMedia";
        let id = id_arg(env, F, "artifactId", &artifact_id)?;
        let channel = match channel_id {
            Some(c) if !is_nullish(&c) => Some(id_arg(env, F, "channelId", &c)?),
            _ => None,
        };
        let mut core = self.core()?;
        let loc = match &channel {
            Some(c) => core.file_in(c, &id).cloned(),
            None => core.newest_file(&id).cloned(),
        };
        if let Some(loc) = &loc {
            if let Some(item) = core.cached_media(&loc.channel, &id).cloned() {
                drop(core);
                let v = media_content(env, Some(&item), &id, None, true, 0)?;
                return PromiseRaw::resolve(env, v).map(|p| p.to_unknown());
            }
        }
        let rate = core.config.rate_limit.clone();
        drop(core);
        let loc = match (loc, self.has_fetcher("fetchMedia")) {
            (None, _) => Err(match &channel {
                Some(c) => format!(
                    "File {id} is not referenced by any message the store holds for channel {c}."
                ),
                None => format!("File {id} is not referenced by any message the store holds."),
            }),
            (Some(_), false) => Err("no fetchMedia in the fetcher".to_string()),
            (Some(loc), true) => Ok(loc),
        };
        let loc = match loc {
            Ok(loc) => loc,
            Err(note) => {
                let v = media_content(env, None, &id, Some(&note), false, 0)?;
                return PromiseRaw::resolve(env, v).map(|p| p.to_unknown());
            }
        };
        let need = media_need(&id, &loc, &rate);
        let run = runtime_fn(env, "getMedia")?;
        let payload = to_js(env, &need)?;
        let undef = ().into_unknown(env)?;
        call_runtime(env, &run, this.object, [artifact_id, payload, undef, undef])
    }

    /// Internal (fetch runtime): caches downloaded bytes and returns the MediaContent.
    #[napi(js_name = "_putMedia", skip_typescript)]
    pub fn put_media<'e>(
        &self,
        env: &'e Env,
        need: Unknown,
        data: Unknown,
        api_calls: u32,
    ) -> Result<Unknown<'e>> {
        let need: NeedJs = from_js(env, "getMedia", "need", need)?;
        let id = need.artifact_id.clone().unwrap_or_default();
        let bytes: Vec<u8> = if data.is_typedarray()? {
            let a: Uint8Array = unsafe { data.cast()? };
            a.to_vec()
        } else if data.is_buffer()? {
            let b: Buffer = unsafe { data.cast()? };
            b.to_vec()
        } else if data.is_arraybuffer()? {
            let ab: ArrayBuffer = unsafe { data.cast()? };
            ab.to_vec()
        } else {
            let note = format!(
                "fetchMedia returned {} instead of bytes (a Uint8Array, Buffer or ArrayBuffer)",
                describe(&data)
            );
            self.core()?.counters.failed_fetches += 1;
            return media_content(env, None, &id, Some(&note), false, api_calls);
        };
        let now = self.now(env)?;
        let media_type = need
            .request
            .get("mediaType")
            .and_then(Value::as_str)
            .unwrap_or("application/octet-stream")
            .to_string();
        let filename = need
            .request
            .get("filename")
            .and_then(Value::as_str)
            .map(str::to_string);
        let item = MediaItem {
            channel: need.channel_id.clone(),
            content_hash: sha256_hex(&bytes),
            artifact_id: id.clone(),
            media_type,
            filename,
            bytes,
            fetched_at: now,
        };
        let held = self.core()?.put_media(item.clone());
        media_content(env, Some(&item), &id, None, held, api_calls)
    }

    /// Internal (fetch runtime): a media download that failed or was refused.
    #[napi(js_name = "_mediaFailed", skip_typescript)]
    pub fn media_failed<'e>(
        &self,
        env: &'e Env,
        artifact_id: String,
        reason: String,
        api_calls: u32,
    ) -> Result<Unknown<'e>> {
        media_content(env, None, &artifact_id, Some(&reason), false, api_calls)
    }

    /// Counters and sizes: calls per API method; hits, misses, evictions and
    /// expirations per cache; bytes held by the media cache; queued calls, stale serves,
    /// failed fetches, rate-limited requests and ignored events.
    #[napi(catch_unwind, ts_return_type = "StoreStats")]
    pub fn stats<'e>(&self, env: &'e Env) -> Result<Unknown<'e>> {
        let now = self.now(env)?;
        let core = self.core()?;
        let ttl = |c: &crate::cache::CacheCounters, size: usize, max: usize| json!({ "hits": c.hits, "misses": c.misses, "evictions": c.evictions, "expirations": c.expirations, "size": size, "max": max });
        let m = &core.media.counters;
        let v = json!({
            "calls": core.counters.calls,
            "caches": {
                "threadReplies": ttl(&core.replies.counters, core.replies.len(), core.replies.max()),
                "threadStarters": ttl(&core.starters.counters, core.starters.len(), core.starters.max()),
                "media": { "hits": m.hits, "misses": m.misses, "evictions": m.evictions, "size": core.media.len(), "bytes": core.media.size(), "maxSize": core.media.max_size() },
            },
            "channels": core.channels.len(),
            "messages": core.window_messages(),
            "messageBytes": core.message_heap_bytes(),
            "queuedCalls": core.limiter.queued(now),
            "staleServes": core.counters.stale_serves,
            "failedFetches": core.counters.failed_fetches,
            "rateLimited": core.counters.rate_limited,
            "timedOutFetches": core.counters.timed_out_fetches,
            "retryAfterCapped": core.counters.retry_after_capped,
            "repliesDropped": core.counters.replies_dropped,
            "ingestedEvents": core.counters.ingested_events,
            "ignoredEvents": core.counters.ignored_events,
            "search": search_stats(&core),
        });
        drop(core);
        to_js(env, &v)
    }
}

/// Rate-limit bucket of media downloads.
pub(crate) const MEDIA_METHOD: &str = "files.download";

pub(crate) fn fetcher_name(n: &Need) -> &'static str {
    match n {
        Need::History { .. } => "fetchHistory",
        Need::Thread { .. } => "fetchThread",
        Need::Messages { .. } => "fetchMessages",
    }
}

fn refusal_text(method: &str, r: Refusal, now: u64) -> String {
    match r {
        Refusal::Limited { next_slot } => format!(
            "{method} is rate limited; next slot in {}s",
            (next_slot - now).div_ceil(1000)
        ),
        Refusal::QueueFull => format!("{method} is rate limited and its queue is full"),
        Refusal::WaitTooLong { wait_ms } => format!(
            "{method} is rate limited; the wait of {}s exceeds the queue timeout",
            wait_ms.div_ceil(1000)
        ),
        Refusal::Paused { until } => format!(
            "{method} is paused by Retry-After for {}s more",
            (until - now).div_ceil(1000)
        ),
        Refusal::Disabled => format!("{method} is disabled (a limit of 0 calls per minute)"),
    }
}

/// The search indexes of all channels, summed.
fn search_stats(core: &Store) -> Value {
    let mut t = crate::search::index::IndexStats::default();
    for ch in core.channels.values() {
        let s = ch.index.stats();
        t.documents += s.documents;
        t.terms += s.terms;
        t.postings += s.postings;
        t.dead_postings += s.dead_postings;
        t.heap_bytes += s.heap_bytes;
    }
    json!({ "documents": t.documents, "terms": t.terms, "postings": t.postings, "deadPostings": t.dead_postings, "indexBytes": t.heap_bytes })
}

/// The download of a file as the runtime sees it.
pub(crate) fn media_need(id: &str, loc: &FileLocation, rate: &RateLimitConfig) -> NeedJs {
    NeedJs {
        key: fetch_key(&["media", &loc.channel, id]),
        kind: "media".to_string(),
        method: MEDIA_METHOD.to_string(),
        fetch: "fetchMedia".to_string(),
        channel_id: loc.channel.clone(),
        thread_id: None,
        message_ids: None,
        artifact_id: Some(id.to_string()),
        page_size: rate.page_size,
        max_pages: 1,
        request: json!({
            "artifactId": id,
            "url": loc.url,
            "mediaType": loc.media.media_type,
            "filename": loc.media.filename,
            "byteLength": loc.media.byte_length,
            "channelId": loc.channel,
            "messageId": loc.message_id,
        }),
    }
}

/// Failures as the runtime passes them around.
pub(crate) fn failures_json(failures: &[Failure], rate: &RateLimitConfig) -> Vec<Value> {
    failures
        .iter()
        .map(|f| json!({ "need": need_js(&f.need, rate), "reason": f.reason }))
        .collect()
}

pub(crate) fn failures_from_js(env: &Env, v: Unknown) -> Result<Vec<Failure>> {
    if is_nullish(&v) {
        return Ok(Vec::new());
    }
    let Some(text) = stringify(env, v)? else {
        return Ok(Vec::new());
    };
    let list: Vec<FailureJs> =
        input::parse(&text, "failures").map_err(|e| func_err(env, "buildContext", &e))?;
    Ok(list
        .into_iter()
        .filter_map(|f| {
            need_from_js(&f.need).map(|need| Failure {
                need,
                reason: f.reason,
            })
        })
        .collect())
}

fn anchor_error<'e>(env: &'e Env, e: &BuildError) -> Result<Unknown<'e>> {
    let mut obj = env.create_error(Error::new(Status::GenericFailure, e.to_string()))?;
    obj.set_named_property("code", "ANCHOR_NOT_FOUND")?;
    Ok(obj.to_unknown())
}

#[derive(Serialize)]
struct StoredMessageView {
    message_id: String,
    ts: String,
    author: crate::model::Author,
    text: String,
    thread_id: Option<String>,
    reply_count: u64,
    latest_reply: Option<String>,
    reactions: Vec<Value>,
    media: Vec<crate::model::MediaRef>,
    edited: bool,
    broadcast: bool,
}

fn message_view(m: &StoredMessage) -> StoredMessageView {
    StoredMessageView {
        message_id: m.id.clone(),
        ts: m.ts.clone(),
        author: m.author.clone(),
        text: m.text.clone(),
        thread_id: m.thread_id.clone(),
        reply_count: m.reply_count,
        latest_reply: m.latest_reply.clone(),
        reactions: m
            .reactions
            .iter()
            .map(|r| json!({ "name": r.name, "count": r.count, "users": r.users }))
            .collect(),
        media: m.files.iter().map(|f| f.media.clone()).collect(),
        edited: m.edited,
        broadcast: m.broadcast,
    }
}

fn media_content<'e>(
    env: &'e Env,
    item: Option<&MediaItem>,
    id: &str,
    note: Option<&str>,
    cached: bool,
    api_calls: u32,
) -> Result<Unknown<'e>> {
    let mut obj = Object::new(env)?;
    obj.set_named_property("artifactId", id)?;
    obj.set_named_property("apiCalls", api_calls)?;
    obj.set_named_property("cached", cached)?;
    match item {
        Some(m) => {
            obj.set_named_property("mediaType", m.media_type.as_str())?;
            obj.set_named_property("filename", m.filename.as_deref())?;
            obj.set_named_property("byteLength", m.bytes.len() as f64)?;
            obj.set_named_property("contentHash", m.content_hash.as_str())?;
            obj.set_named_property("data", BufferSlice::from_data(env, m.bytes.clone())?)?;
            obj.set_named_property("note", Null)?;
        }
        None => {
            obj.set_named_property("mediaType", Null)?;
            obj.set_named_property("filename", Null)?;
            obj.set_named_property("byteLength", 0)?;
            obj.set_named_property("contentHash", Null)?;
            obj.set_named_property("data", Null)?;
            obj.set_named_property("note", note)?;
        }
    }
    Ok(obj.to_unknown())
}

// ------------------------------------------------------------------ the result

/// What `buildContext` resolves to. The documents are converted to JS objects when
/// read (each read converts anew: keep the value rather than reading it in a loop).
#[napi(custom_finalize)]
pub struct BuiltContext {
    built: Built,
    api_calls: u32,
    /// Bytes reported to V8 as external memory, so its GC sees what results hold.
    external: i64,
}

impl BuiltContext {
    fn new(env: &Env, built: Built, api_calls: u32) -> Self {
        let external = i64::try_from(built.heap_bytes()).unwrap_or(i64::MAX);
        // Best effort: failing to report changes nothing but GC timing.
        let external = env.adjust_external_memory(external).map_or(0, |_| external);
        BuiltContext {
            built,
            api_calls,
            external,
        }
    }
}

impl ObjectFinalize for BuiltContext {
    fn finalize(self, env: Env) -> Result<()> {
        if self.external > 0 {
            env.adjust_external_memory(-self.external)?;
        }
        Ok(())
    }
}

#[napi]
impl BuiltContext {
    /// The ChannelSnapshot (seed schema, snake_case).
    #[napi(getter, ts_return_type = "ChannelSnapshot")]
    pub fn snapshot<'e>(&self, env: &'e Env) -> Result<Unknown<'e>> {
        parse_json(env, self.built.snapshot_json())
    }

    /// The ThreadContext, or null when the anchor is neither in a thread nor has replies
    /// (or the thread could not be fetched; see `notes`).
    #[napi(getter, ts_return_type = "ThreadContext | null")]
    pub fn thread<'e>(&self, env: &'e Env) -> Result<Unknown<'e>> {
        match self.built.thread_json() {
            Some(t) => parse_json(env, t),
            None => Null.into_unknown(env),
        }
    }

    /// The system-prompt section: guidance, then both documents as JSON between tags.
    #[napi(getter, ts_return_type = "string")]
    pub fn prompt_section<'e>(&self, env: &'e Env) -> Result<JsString<'e>> {
        let p = &self.built.prompt;
        if p.is_ascii() {
            env.create_string_latin1(p.as_bytes())
        } else {
            env.create_string_utf16(crate::text::to_utf16(p))
        }
    }

    /// Estimated tokens (`ceil(UTF-16 length / 4)`) of the guidance, each document and
    /// the whole section.
    #[napi(getter)]
    pub fn tokens(&self) -> ContextTokens {
        let t = self.built.tokens;
        ContextTokens {
            guidance: t.guidance as f64,
            snapshot: t.snapshot as f64,
            thread: t.thread as f64,
            total: t.total as f64,
        }
    }

    /// How the thread budget was used (null without a thread).
    #[napi(getter, ts_return_type = "ThreadTelemetry | null")]
    pub fn telemetry<'e>(&self, env: &'e Env) -> Result<Unknown<'e>> {
        match &self.built.telemetry {
            Some(t) => to_js(env, t),
            None => Null.into_unknown(env),
        }
    }

    /// Fetcher calls made for this request (0 in the steady state).
    #[napi(getter)]
    pub fn api_calls(&self) -> u32 {
        self.api_calls
    }

    /// Part of the context was served from cache past its TTL because a fetch failed.
    #[napi(getter)]
    pub fn stale(&self) -> bool {
        self.built.stale
    }

    /// Why something is stale or missing, one sentence each (empty when complete).
    #[napi(getter)]
    pub fn notes(&self) -> Vec<String> {
        self.built.notes.clone()
    }

    /// A plain object with every field (what `JSON.stringify` writes).
    #[napi(js_name = "toJSON", ts_return_type = "BuiltContextJson")]
    pub fn to_json<'e>(&self, env: &'e Env) -> Result<Unknown<'e>> {
        let b = &self.built;
        let thread = b.thread_json().unwrap_or("null");
        let telemetry = match &b.telemetry {
            Some(t) => serde_json::to_string(t).unwrap_or_else(|_| "null".into()),
            None => "null".into(),
        };
        let rest = json!({
            "promptSection": b.prompt,
            "tokens": { "guidance": b.tokens.guidance, "snapshot": b.tokens.snapshot, "thread": b.tokens.thread, "total": b.tokens.total },
            "apiCalls": self.api_calls,
            "stale": b.stale,
            "notes": b.notes,
        });
        let rest = rest.to_string();
        let text = format!(
            "{{\"snapshot\":{},\"thread\":{},\"telemetry\":{},{}",
            b.snapshot_json(),
            thread,
            telemetry,
            rest.strip_prefix('{').unwrap_or(&rest)
        );
        parse_json(env, &text)
    }
}

/// Token estimates per part of the prompt section.
#[napi(object)]
pub struct ContextTokens {
    pub guidance: f64,
    pub snapshot: f64,
    pub thread: f64,
    pub total: f64,
}
