//! `ChannelStore`: the Rust-owned store behind a JS class.
//!
//! State and every decision live in [`crate::channel::store`]; this file translates arguments and
//! results. Fetching (awaiting the caller's async fetcher) is the JS subclass's part, in
//! `js/channel/store.js`; it drives the runs [`fetch`] starts, and the result of
//! `buildContext` in [`built`].

mod built;
mod shared;

use persist::persist_code;

use crate::bindings::errors::{coded_error, named, throw};
use crate::bindings::js::{
    array_arg, call_js, describe, expect_object, from_js, from_js_opt, id_arg, is_nullish,
    stringify, to_js,
};
use crate::channel::coord::Coordinator;
use crate::channel::fetch_run::{EffectId, Runs};
use crate::channel::message::EventInput;
use crate::channel::persist::Persister;
use crate::channel::slack::ResponseError;
use crate::channel::store::config::ChannelStoreOptions;
use crate::channel::store::fetch::{FetcherFn, Fetchers};
use crate::channel::store::{ChannelStore, StoreConfig};
use crate::core::input::{self, InputError};
use napi::bindgen_prelude::*;
use napi::{Env, JsString, ValueType};
use napi_derive::napi;
use serde::Deserialize;
use serde_json::Value;
use std::cell::{RefCell, RefMut};
use std::collections::HashMap;
use std::sync::Arc;

/// Messages a `ChannelStore` keeps per channel unless `windowSize` says otherwise: 1000.
#[napi]
pub const DEFAULT_WINDOW_SIZE: u32 = crate::channel::store::config::DEFAULT_WINDOW_SIZE as u32;

/// Threads whose replies a `ChannelStore` caches unless `threadReplies.max` says
/// otherwise: 500.
#[napi]
pub const DEFAULT_THREAD_REPLIES_MAX: u32 =
    crate::channel::store::config::DEFAULT_REPLIES_MAX as u32;

/// Rust-owned channel state fed by events, with bounded caches (thread replies: 5 min,
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
#[napi(js_name = "ChannelStore")]
pub struct JsChannelStore {
    core: RefCell<ChannelStore>,
    clock: Option<FunctionRef<(), f64>>,
    /// Which fetcher functions were supplied.
    fetchers: Fetchers,
    /// The writer behind the store, with `options.persist`.
    persist: Option<Persister>,
    /// The Redis shared with the other workers, with `options.redis`.
    coord: Option<Arc<Coordinator>>,
    /// The fetch runs under way (see `fetch.rs`).
    runs: RefCell<Runs>,
    /// What wakes each run waiting on another's fetch, by effect id.
    joins: RefCell<HashMap<EffectId, fetch::Wake>>,
}

/// The store for the length of one call; on the way out, what the call changed is
/// queued for the writer (with `options.persist`), so no mutating path can skip it.
pub(crate) struct Core<'a> {
    store: RefMut<'a, ChannelStore>,
    persist: Option<&'a Persister>,
}

impl std::ops::Deref for Core<'_> {
    type Target = ChannelStore;
    fn deref(&self) -> &ChannelStore {
        &self.store
    }
}

impl std::ops::DerefMut for Core<'_> {
    fn deref_mut(&mut self) -> &mut ChannelStore {
        &mut self.store
    }
}

impl Drop for Core<'_> {
    fn drop(&mut self) {
        if let Some(p) = self.persist {
            p.write_behind(&mut self.store);
        }
    }
}

/// The clock function and the fetcher functions of the constructor's options: functions
/// do not survive JSON, so they are read from the object itself.
fn functions_of(env: &Env, o: &Unknown) -> Result<(Option<FunctionRef<(), f64>>, Fetchers)> {
    const F: &str = "ChannelStore";
    expect_object(env, F, "options", o)?;
    // SAFETY: checked to be an object just above.
    let obj: Object = unsafe { o.cast()? };
    let mut clock = None;
    let c: Unknown = obj.get_named_property("clock")?;
    if !is_nullish(&c) {
        if c.get_type()? != ValueType::Function {
            let why = format!(
                "expected a function returning epoch milliseconds, got {}",
                describe(&c)
            );
            return Err(throw(env, F, &InputError::type_error("options.clock", why)));
        }
        // SAFETY: checked to be a function just above.
        let f: Function<(), f64> = unsafe { c.cast()? };
        clock = Some(f.create_ref()?);
    }
    let mut fetchers = Fetchers::default();
    let fe: Unknown = obj.get_named_property("fetcher")?;
    if !is_nullish(&fe) {
        expect_object(env, F, "options.fetcher", &fe)?;
        // SAFETY: checked to be an object just above.
        let fo: Object = unsafe { fe.cast()? };
        for f in FetcherFn::ALL {
            let v: Unknown = fo.get_named_property(f.name())?;
            if is_nullish(&v) {
                continue;
            }
            if v.get_type()? != ValueType::Function {
                let path = format!("options.fetcher.{}", f.name());
                let why = format!("expected an async function, got {}", describe(&v));
                return Err(throw(env, F, &InputError::type_error(path, why)));
            }
            fetchers = fetchers.with(f);
        }
    }
    Ok((clock, fetchers))
}

#[napi]
impl JsChannelStore {
    /// Creates an empty store. Every option is optional; each default is documented with its option.
    #[napi(constructor, catch_unwind, ts_args_type = "options?: ChannelStoreOptions")]
    pub fn new(env: Env, options: Option<Unknown>) -> Result<Self> {
        const F: &str = "ChannelStore";
        let read = || -> Result<_> {
            let (clock, fetchers) = match options.as_ref().filter(|o| !is_nullish(o)) {
                Some(o) => functions_of(&env, o)?,
                None => (None, Fetchers::default()),
            };
            let opts: ChannelStoreOptions =
                from_js_opt(&env, F, "options", options)?.unwrap_or_default();
            let config = StoreConfig::try_from(opts).map_err(|e| throw(&env, F, &e))?;
            Ok((clock, fetchers, config))
        };
        let (clock, fetchers, config) = named(&env, F, "options", read)?;
        let persist_config = config.persist.clone();
        let coord = match config.redis.clone() {
            Some(c) => {
                let url = crate::channel::coord::redacted(&c.url);
                let coord = Coordinator::new(c).map_err(|e| {
                    Error::from_reason(format!("{F}: options.redis.url {url:?}: {e}"))
                })?;
                let coord = Arc::new(coord);
                shared::probe(&env, &coord)?;
                Some(coord)
            }
            None => None,
        };
        let mut store = ChannelStore::new(config);
        let persist = match persist_config {
            Some(c) => {
                let path = c.path.clone();
                let p = Persister::open(c, &mut store).map_err(|e| {
                    coded_error(
                        &env,
                        F,
                        persist_code(&e),
                        &format!("options.persist.path {path:?}: {e}"),
                    )
                })?;
                Some(p)
            }
            None => None,
        };
        Ok(JsChannelStore {
            core: RefCell::new(store),
            clock,
            fetchers,
            persist,
            runs: RefCell::new(Runs::new(coord.is_some())),
            joins: RefCell::default(),
            coord,
        })
    }

    pub(crate) fn core(&self, env: &Env) -> Result<Core<'_>> {
        let store = self.core.try_borrow_mut().map_err(|_| reentered(env))?;
        Ok(Core {
            store,
            persist: self.persist.as_ref(),
        })
    }

    pub(crate) fn fetchers(&self) -> Fetchers {
        self.fetchers
    }

    /// The store's time in epoch milliseconds: the `clock` option, or the system clock.
    #[napi(catch_unwind, js_name = "now")]
    pub fn now_ms(&self, env: &Env) -> Result<f64> {
        Ok(self.now(env)? as f64)
    }

    pub(crate) fn now(&self, env: &Env) -> Result<u64> {
        let Some(c) = &self.clock else {
            return Ok(crate::core::time::system_now_ms());
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
        // Finite and non-negative: epoch milliseconds fit.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        Ok(v as u64)
    }

    /// Applies one neutral event: `message` (a new message or thread reply),
    /// `message_changed`, `message_deleted`, `reaction_added`, `reaction_removed`.
    /// Unknown kinds are counted (`stats().ignoredEvents`) and ignored. A malformed event
    /// throws a `TypeError` naming the field and changes nothing. Returns 1 when the
    /// event was applied, 0 when ignored.
    #[napi(catch_unwind, ts_args_type = "event: ChannelEvent")]
    pub fn ingest(&self, env: &Env, event: Unknown) -> Result<u32> {
        let e: EventInput = from_js(env, "ChannelStore.ingest", "event", event)?;
        let e = e
            .validate("event")
            .map_err(|e| throw(env, "ChannelStore.ingest", &e))?;
        let now = self.now(env)?;
        Ok(self.core(env)?.apply_all(vec![e], now))
    }

    /// Internal (`ingestMany` in `js/channel/store.js`): a batch of plain messages packed as
    /// UTF-16 fields, which skips building and parsing JSON per object.
    #[napi(catch_unwind, js_name = "_ingestPacked", skip_typescript)]
    pub fn ingest_packed(
        &self,
        env: &Env,
        strings: JsString,
        lens: Uint32Array,
        kinds: Uint8Array,
    ) -> Result<u32> {
        let units = strings.into_utf16()?;
        // napi's buffer ends with a NUL terminator, which is not part of the text.
        let units = units.as_slice().split_last().map_or(&[][..], |(_, t)| t);
        let events = crate::channel::message::decode_packed(units, &lens, &kinds)
            .map_err(|e| throw(env, "ChannelStore.ingestMany", &e))?;
        let now = self.now(env)?;
        Ok(self.core(env)?.apply_all(events, now))
    }

    /// Applies a batch of events in order, as one crossing of the JS/Rust boundary.
    /// Every event is validated first: one malformed event throws (naming
    /// `events[i]` and the field) and none is applied. Returns how many were applied.
    #[napi(catch_unwind, ts_args_type = "events: ChannelEvent[]")]
    pub fn ingest_many(&self, env: &Env, events: Unknown) -> Result<u32> {
        const F: &str = "ChannelStore.ingestMany";
        let list: Vec<EventInput> = array_arg(env, F, "events", events)?;
        let mut out = Vec::with_capacity(list.len());
        for (i, e) in list.into_iter().enumerate() {
            out.push(
                e.validate(&format!("events[{i}]"))
                    .map_err(|e| throw(env, F, &e))?,
            );
        }
        let now = self.now(env)?;
        Ok(self.core(env)?.apply_all(out, now))
    }

    /// Applies an Events API payload exactly as Slack sends it (the `event_callback`
    /// envelope, or its `event`): `message` and its subtypes `bot_message`,
    /// `thread_broadcast`, `file_share`, `message_changed`, `message_deleted`;
    /// `reaction_added`, `reaction_removed`. Other payloads (`url_verification`,
    /// `channel_join`, ...) are counted and ignored. Returns 1 when applied, 0 when ignored.
    #[napi(catch_unwind, ts_args_type = "payload: Record<string, unknown>")]
    pub fn ingest_slack_event(&self, env: &Env, payload: Unknown) -> Result<u32> {
        const F: &str = "ChannelStore.ingestSlackEvent";
        let v: Value = from_js(env, F, "payload", payload)?;
        let now = self.now(env)?;
        let applied = self.core(env)?.ingest_slack_event(&v, now);
        applied.map_err(|e| throw(env, F, &e))
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
        const F: &str = "ChannelStore.ingestSlackResponse";
        #[derive(Deserialize, Default)]
        #[serde(rename_all = "camelCase", deny_unknown_fields)]
        struct PageOptions {
            thread_id: Option<String>,
            first_page: Option<bool>,
        }
        let channel = id_arg(env, F, "channelId", &channel_id)?;
        let body: Value = from_js(env, F, "response", response)?;
        let o: PageOptions = from_js_opt(env, F, "options", options)?.unwrap_or_default();
        let now = self.now(env)?;
        let first_page = o.first_page.unwrap_or(true);
        let next = self.core(env)?.ingest_slack_response(
            &channel,
            &body,
            o.thread_id.as_deref(),
            first_page,
            now,
        );
        match next {
            Ok(next) => Ok(next),
            Err(ResponseError::Malformed(e)) => Err(throw(env, F, &e)),
            Err(e @ ResponseError::Slack(_)) => Err(Error::from_reason(format!("{F}: {e}"))),
        }
    }

    /// Sets display names for user ids (Slack events carry only ids). Later payloads
    /// use these names; messages already held keep theirs.
    #[napi(
        catch_unwind,
        ts_args_type = "users: Array<{ userId: string; displayName: string; isBot?: boolean }>"
    )]
    pub fn set_users(&self, env: &Env, users: Unknown) -> Result<()> {
        const F: &str = "ChannelStore.setUsers";
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct User {
            user_id: String,
            display_name: String,
            #[serde(default)]
            is_bot: bool,
        }
        let read = || -> Result<()> {
            if !users.is_array()? {
                let why = format!("expected an array, got {}", describe(&users));
                return Err(throw(env, F, &InputError::type_error("users", why)));
            }
            let Some(text) = stringify(env, users)? else {
                return Ok(());
            };
            let list: Vec<User> = input::parse(&text, "users").map_err(|e| throw(env, F, &e))?;
            let mut core = self.core(env)?;
            for u in list {
                core.users_mut().set(&u.user_id, &u.display_name, u.is_bot);
            }
            Ok(())
        };
        named(env, F, "users", read)
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
        struct ChannelInfo {
            id: String,
            name: Option<String>,
            platform: Option<String>,
            workspace_id: Option<String>,
        }
        let c: ChannelInfo = from_js(env, "ChannelStore.setChannel", "channel", channel)?;
        if c.id.is_empty() {
            let e = InputError::type_error("channel.id", "expected a non-empty string");
            return Err(throw(env, "ChannelStore.setChannel", &e));
        }
        self.core(env)?
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
        let channel = id_arg(env, "ChannelStore.getMessage", "channelId", &channel_id)?;
        let id = id_arg(env, "ChannelStore.getMessage", "messageId", &message_id)?;
        let mut core = self.core(env)?;
        let channel = core.resolve_channel(&channel, &id);
        let view = core.message_view(&channel, &id);
        to_js(env, &view)
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
        let channel = id_arg(env, "ChannelStore.threadActivity", "channelId", &channel_id)?;
        let id = id_arg(env, "ChannelStore.threadActivity", "messageId", &message_id)?;
        let now = self.now(env)?;
        let core = self.core(env)?;
        let channel = core.resolve_channel(&channel, &id);
        let summary = core.thread_summary(&channel, &id, now);
        to_js(env, &summary)
    }
}

// The fetch protocol's methods come here, between `threadActivity` and `stats`, so the
// class reads in the typings in the order it always has.
mod fetch;
mod fetcher;

#[napi]
impl JsChannelStore {
    /// Counters and sizes: calls per API method; hits, misses, evictions and
    /// expirations per cache; bytes held by the media cache; queued calls, stale serves,
    /// failed fetches, rate-limited requests and ignored events.
    #[napi(catch_unwind, ts_return_type = "StoreStats")]
    pub fn stats<'e>(&self, env: &'e Env) -> Result<Unknown<'e>> {
        let now = self.now(env)?;
        let mut stats = self.core(env)?.stats(now);
        stats.persist = self.persist.as_ref().map(Persister::stats);
        stats.redis = self.coord.as_ref().map(|c| c.stats());
        to_js(env, &stats)
    }
}

/// The error of a call made from inside another call of the same store.
fn reentered(env: &Env) -> Error {
    coded_error(
        env,
        "ChannelStore",
        "ERR_REENTERED",
        "re-entered from inside its own call (a clock or fetcher called back into the store synchronously)",
    )
}

// `flush` and `close` come here, after `stats`, so the class reads in the typings in
// the order it always has.
mod persist;
// Declared after the class, so that the typings generator has met it when it reads the
// methods.
mod platforms;
