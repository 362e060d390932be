//! `MemoryStore`: the conversation memory over one SQLite file, behind a JS class. The
//! decisions live in `crate::memory`; this module only translates.

use crate::bindings::errors::{coded_error, throw};
use crate::bindings::js::now_ms;
use crate::bindings::js::{
    budget_arg, expect_array, from_js, from_js_opt, id_arg, input_json, is_nullish, to_js,
};
use crate::core::input::{self, whole_number, InputError};
use crate::memory::db::MemoryError;
use crate::memory::shapes::{
    decode_packed, record_kind, CommittedTurn, FocusAnchor, IngestedMessage, MemoryMessage,
    MemoryRecord, MemoryRecordInput, MemorySearchOptions, StoredChatMessage, MAX_BATCH,
};
use crate::memory::store::{ChatMessage, MemoryStore};
use crate::memory::summary::CompactionPolicy;
use napi::bindgen_prelude::*;
use napi::{Env, JsString};
use napi_derive::napi;
use std::cell::RefCell;

/// Conversation memory over one SQLite file (bundled in the addon, with FTS5): every
/// chat message kept verbatim by session and thread key, rolling thread summaries,
/// durable facts, preferences and outcomes, full-text retrieval, and the layered
/// context for a new message within a token budget.
///
/// ```ts
/// const memory = new MemoryStore({ path: 'memory.sqlite' })
/// const [{ threadKey }] = memory.ingest([{ sessionId, chatId, messageId, role: 'user', text, ts }])
/// memory.compact(sessionId, threadKey)            // when due: older messages into the summary
/// const { text, tokens } = memory.assemble({ sessionId, threadKey, userMessage: text, budgetTokens: 4000 })
/// memory.close()
/// ```
///
/// Storage faults throw an `Error` whose `code` is `ERR_MEMORY_STORAGE` (SQLite failed:
/// a corrupt or locked file), `ERR_MEMORY_SCHEMA` (a file from a newer version),
/// `ERR_MEMORY_STALE` (a compaction plan overtaken by another) or `ERR_MEMORY_CLOSED`;
/// a call made from inside another call of the same store throws `ERR_REENTERED`.
#[napi(js_name = "MemoryStore")]
pub struct JsMemoryStore {
    store: RefCell<Option<MemoryStore>>,
    pub(super) policy: CompactionPolicy,
}

/// Throws a storage fault as an `Error` with a `code`.
pub(super) fn storage_error(env: &Env, func: &str, e: &MemoryError) -> Error {
    let code = match e {
        MemoryError::Sqlite(_) => "ERR_MEMORY_STORAGE",
        MemoryError::NewerSchema { .. } => "ERR_MEMORY_SCHEMA",
        MemoryError::Stale { .. } => "ERR_MEMORY_STALE",
        MemoryError::Fenced { .. } => "ERR_MEMORY_FENCED",
        MemoryError::Pg(e) => e.cause.code(),
    };
    coded_error(env, func, code, &e.to_string())
}

fn input_error(env: &Env, func: &str, e: &InputError) -> Error {
    throw(env, func, e)
}

pub(super) fn now_or(env: &Env, func: &str, path: &str, v: Option<f64>) -> Result<i64> {
    match v {
        None => {
            #[allow(clippy::cast_possible_truncation)] // ms since 1970 fit an i64
            let now = now_ms() as i64;
            Ok(now)
        }
        Some(n) => whole_number(n, path, "time")
            .map(|n| i64::try_from(n).unwrap_or(i64::MAX))
            .map_err(|e| input_error(env, func, &e)),
    }
}

pub(super) fn count_or(
    env: &Env,
    func: &str,
    path: &str,
    v: Option<f64>,
    default: usize,
) -> Result<usize> {
    v.map_or(Ok(default), |n| {
        whole_number(n, path, "count")
            .map(|n| usize::try_from(n).unwrap_or(usize::MAX))
            .map_err(|e| input_error(env, func, &e))
    })
}

/// Reads an array of messages (at most [`MAX_BATCH`]).
fn read_messages(env: &Env, func: &str, messages: Unknown) -> Result<Vec<MemoryMessage>> {
    let arr = expect_array(env, func, "messages", &messages)?;
    let len = arr.get_array_length()? as usize;
    if len > MAX_BATCH {
        return Err(throw(
            env,
            func,
            &InputError::range_error(
                "messages",
                format!("at most {MAX_BATCH} messages per call, got {len}"),
            ),
        ));
    }
    let Some(json) = input_json(env, func, "messages", messages)? else {
        return Err(throw(
            env,
            func,
            &InputError::type_error("messages", "expected an array"),
        ));
    };
    input::parse(&json, "messages").map_err(|e| throw(env, func, &e))
}

/// The `sessionId` and `threadKey` arguments of a lane.
pub(super) fn lane_args(
    env: &Env,
    func: &str,
    session: &Unknown,
    lane: &Unknown,
) -> Result<(String, String)> {
    Ok((
        id_arg(env, func, "sessionId", session)?,
        id_arg(env, func, "threadKey", lane)?,
    ))
}

/// Stored messages as JS objects.
fn messages_js<'e>(env: &'e Env, rows: &[ChatMessage]) -> Result<Unknown<'e>> {
    let out: Vec<StoredChatMessage> = rows.iter().map(StoredChatMessage::from).collect();
    to_js(env, &out)
}

/// The domain messages of `parsed`, each checked.
fn new_messages<'a>(
    env: &Env,
    func: &str,
    parsed: &'a [MemoryMessage],
) -> Result<Vec<crate::memory::store::NewMessage<'a>>> {
    parsed
        .iter()
        .enumerate()
        .map(|(i, m)| m.to_new(|| format!("messages[{i}]")))
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| throw(env, func, &e))
}

impl JsMemoryStore {
    /// Runs `f` on the open store, naming `func` in its errors.
    pub(super) fn with<T>(
        &self,
        env: &Env,
        func: &str,
        f: impl FnOnce(&mut MemoryStore) -> std::result::Result<T, MemoryError>,
    ) -> Result<T> {
        let Ok(mut guard) = self.store.try_borrow_mut() else {
            return Err(coded_error(
                env,
                func,
                "ERR_REENTERED",
                "the store is busy with another call (a re-entrant call)",
            ));
        };
        let Some(store) = guard.as_mut() else {
            return Err(coded_error(
                env,
                func,
                "ERR_MEMORY_CLOSED",
                "the store is closed",
            ));
        };
        f(store).map_err(|e| storage_error(env, func, &e))
    }
}

#[napi]
impl JsMemoryStore {
    /// Opens (or creates) the store: `path` of the SQLite file (default `":memory:"`),
    /// `compaction` thresholds (30 messages, 2,500 tokens, 24 hours; keep at most 10,
    /// within half the token threshold; fold at least 10).
    #[napi(constructor, catch_unwind, ts_args_type = "options?: MemoryStoreOptions")]
    pub fn new(env: Env, options: Option<Unknown>) -> Result<Self> {
        const F: &str = "MemoryStore";
        let (o, policy) = store_options(&env, F, options)?;
        if o.url.is_some() {
            return Err(throw(
                &env,
                F,
                &InputError::type_error(
                    "options.url",
                    "a PostgreSQL store is opened with `await MemoryStore.connect({ url })`: its calls wait for the network, so they return promises",
                ),
            ));
        }
        let path = o.path.unwrap_or_else(|| ":memory:".to_string());
        let store = MemoryStore::open(&path).map_err(|e| storage_error(&env, F, &e))?;
        Ok(JsMemoryStore {
            store: RefCell::new(Some(store)),
            policy,
        })
    }
}

#[napi]
impl JsMemoryStore {
    /// Stores messages verbatim, in one transaction (all or none), and returns each one's
    /// thread key; a message id stored before is left as it was (`ingested: false`).
    #[napi(
        catch_unwind,
        ts_args_type = "messages: MemoryMessage[]",
        ts_return_type = "IngestedMessage[]"
    )]
    pub fn ingest<'e>(&self, env: &'e Env, messages: Unknown<'e>) -> Result<Unknown<'e>> {
        const F: &str = "MemoryStore.ingest";
        let parsed = read_messages(env, F, messages)?;
        self.ingest_parsed(env, F, &parsed)
    }
}

impl JsMemoryStore {
    fn ingest_parsed<'e>(
        &self,
        env: &'e Env,
        func: &str,
        parsed: &[MemoryMessage],
    ) -> Result<Unknown<'e>> {
        let news = new_messages(env, func, parsed)?;
        let out = self.with(env, func, |s| s.ingest_batch(&news))?;
        to_js(env, &ingested_js(out))
    }

    /// Commits a turn (see `commitTurn`): where each message went, `None` for a duplicate.
    fn commit(
        &self,
        env: &Env,
        func: &str,
        advancement_key: &Unknown,
        messages: Unknown,
    ) -> Result<Option<Vec<crate::memory::store::Ingested>>> {
        let key = id_arg(env, func, "advancementKey", advancement_key)?;
        let parsed = read_messages(env, func, messages)?;
        let news = new_messages(env, func, &parsed)?;
        let session = news.first().map(|m| m.session_id).unwrap_or_default();
        #[allow(clippy::cast_possible_truncation)] // ms since 1970 fit an i64
        let now = now_ms() as i64;
        self.with(env, func, |s| s.commit_turn(&key, session, &news, now))
    }
}

/// Where ingested messages went, as JS sees it.
pub(super) fn ingested_js(out: Vec<crate::memory::store::Ingested>) -> Vec<IngestedMessage> {
    out.into_iter()
        .map(|i| IngestedMessage {
            thread_key: i.thread_key,
            ingested: i.ingested,
            stored_as: i.stored_as,
        })
        .collect()
}

#[napi]
impl JsMemoryStore {
    /// Internal (`ingest` in `js/memory/memory.js`): a batch of plain messages packed as UTF-16
    /// fields, which skips building and parsing JSON per object.
    #[napi(js_name = "_ingestPacked", skip_typescript, catch_unwind)]
    pub fn ingest_packed<'e>(
        &self,
        env: &'e Env,
        strings: JsString,
        lens: Uint32Array,
        roles: Uint8Array,
        ts: Float64Array,
    ) -> Result<Unknown<'e>> {
        const F: &str = "MemoryStore.ingest";
        let units = strings.into_utf16()?;
        // napi's buffer ends with a NUL terminator, which is not part of the text.
        let units = units.as_slice().split_last().map_or(&[][..], |(_, t)| t);
        let parsed = decode_packed(units, &lens, &roles, &ts).map_err(|e| throw(env, F, &e))?;
        self.ingest_parsed(env, F, &parsed)
    }

    /// Stores one accepted turn of a host under the key the host retries it with, in one
    /// transaction: `"committed"` the first time, `"duplicate"` (and nothing written) when
    /// that key was committed before. The messages' session is the turn's session.
    #[napi(
        catch_unwind,
        ts_args_type = "advancementKey: string, messages: MemoryMessage[]",
        ts_return_type = "'committed' | 'duplicate'"
    )]
    pub fn commit_turn(
        &self,
        env: &Env,
        advancement_key: Unknown,
        messages: Unknown,
    ) -> Result<&'static str> {
        let fresh = self.commit(env, "MemoryStore.commitTurn", &advancement_key, messages)?;
        Ok(if fresh.is_some() {
            "committed"
        } else {
            "duplicate"
        })
    }

    /// `commitTurn`, also saying where each message went (as `ingest` does): a message
    /// whose id another lane's message holds is stored under `<id>@<threadKey>`
    /// (`storedAs`). `messages` is empty for a duplicate.
    #[napi(
        catch_unwind,
        ts_args_type = "advancementKey: string, messages: MemoryMessage[]",
        ts_return_type = "CommittedTurn"
    )]
    pub fn commit_turn_report<'e>(
        &self,
        env: &'e Env,
        advancement_key: Unknown<'e>,
        messages: Unknown<'e>,
    ) -> Result<Unknown<'e>> {
        let fresh = self.commit(
            env,
            "MemoryStore.commitTurnReport",
            &advancement_key,
            messages,
        )?;
        let report = CommittedTurn {
            status: if fresh.is_some() {
                "committed"
            } else {
                "duplicate"
            }
            .to_string(),
            messages: ingested_js(fresh.unwrap_or_default()),
        };
        to_js(env, &report)
    }

    /// The newest `limit` (default 10) messages of a lane, oldest first.
    #[napi(
        catch_unwind,
        ts_args_type = "sessionId: string, threadKey: string, limit?: number",
        ts_return_type = "StoredChatMessage[]"
    )]
    pub fn recent<'e>(
        &self,
        env: &'e Env,
        session_id: Unknown<'e>,
        thread_key: Unknown<'e>,
        limit: Option<Unknown<'e>>,
    ) -> Result<Unknown<'e>> {
        const F: &str = "MemoryStore.recent";
        let (session, lane) = lane_args(env, F, &session_id, &thread_key)?;
        let n =
            usize::try_from(budget_arg(env, F, "limit", limit.as_ref(), 10)?).unwrap_or(usize::MAX);
        let rows = self.with(env, F, |s| s.recent(&session, &lane, n))?;
        messages_js(env, &rows)
    }

    /// The messages of a lane its summary does not cover yet, oldest first.
    #[napi(
        catch_unwind,
        ts_args_type = "sessionId: string, threadKey: string",
        ts_return_type = "StoredChatMessage[]"
    )]
    pub fn unsummarized<'e>(
        &self,
        env: &'e Env,
        session_id: Unknown<'e>,
        thread_key: Unknown<'e>,
    ) -> Result<Unknown<'e>> {
        const F: &str = "MemoryStore.unsummarized";
        let (session, lane) = lane_args(env, F, &session_id, &thread_key)?;
        let rows = self.with(env, F, |s| s.unsummarized(&session, &lane))?;
        messages_js(env, &rows)
    }

    /// What a new message most likely refers to: the message it replies to; else its
    /// lane's pending question when the message is the kind of answer it expects (yes/no,
    /// a number, a date, an email); else the newest assistant message of its lane; `null`
    /// when none. A pending question never captures a message that does not answer it.
    #[napi(
        catch_unwind,
        ts_args_type = "message: MemoryMessage, threadKey: string",
        ts_return_type = "FocusAnchor | null"
    )]
    pub fn focus_anchor<'e>(
        &self,
        env: &'e Env,
        message: Unknown<'e>,
        thread_key: Unknown<'e>,
    ) -> Result<Unknown<'e>> {
        const F: &str = "MemoryStore.focusAnchor";
        let m: MemoryMessage = from_js(env, F, "message", message)?;
        let lane = id_arg(env, F, "threadKey", &thread_key)?;
        let new = m
            .to_new(|| "message".to_string())
            .map_err(|e| throw(env, F, &e))?;
        let focus = self.with(env, F, |s| s.focus_anchor(&new, &lane))?;
        to_js(env, &focus.map(FocusAnchor::from))
    }

    /// Writes a memory record (its body redacted of anything that looks like a
    /// credential) and returns its id. Thread summaries, session summaries and thread
    /// state replace the lane's previous one; facts, preferences and outcomes add up. A
    /// thread state `{"pending":{"questionId":"q1","expects":"yes_no"}}` marks a pending
    /// question (`yes_no`, `number`, `date`, `email`).
    #[napi(catch_unwind, ts_args_type = "record: MemoryRecordInput")]
    pub fn put_record(&self, env: &Env, record: Unknown) -> Result<f64> {
        const F: &str = "MemoryStore.putRecord";
        let r: MemoryRecordInput = from_js(env, F, "record", record)?;
        #[allow(clippy::cast_possible_truncation)] // ms since 1970 fit an i64
        let new = r.to_new(now_ms() as i64).map_err(|e| throw(env, F, &e))?;
        let id = self.with(env, F, |s| s.put_record(&new))?;
        #[allow(clippy::cast_precision_loss)] // row ids are far below 2^53
        Ok(id as f64)
    }

    /// The one record of a single kind (a summary or thread state) of a session and lane
    /// (`threadKey` is ignored for a session summary); `null` when there is none.
    #[napi(
        catch_unwind,
        ts_args_type = "sessionId: string, kind: MemoryRecordKind, threadKey?: string",
        ts_return_type = "MemoryRecord | null"
    )]
    pub fn record<'e>(
        &self,
        env: &'e Env,
        session_id: Unknown<'e>,
        kind: Unknown<'e>,
        thread_key: Option<Unknown<'e>>,
    ) -> Result<Unknown<'e>> {
        const F: &str = "MemoryStore.record";
        let session = id_arg(env, F, "sessionId", &session_id)?;
        let kind = id_arg(env, F, "kind", &kind)?;
        let kind = record_kind(&kind, "kind").map_err(|e| throw(env, F, &e))?;
        let lane = match thread_key.filter(|v| !is_nullish(v)) {
            Some(v) => id_arg(env, F, "threadKey", &v)?,
            None => String::new(),
        };
        let rec = self.with(env, F, |s| s.record(&session, kind, &lane))?;
        to_js(env, &rec.as_ref().map(MemoryRecord::from))
    }

    /// The session's records that match the words of `query`, best first (BM25 over a
    /// word index and a trigram index, so Chinese, Japanese and Korean are found too):
    /// facts, preferences, outcomes, and the summary of `threadKey` only. At most `k`
    /// (default 5), within `maxTokens` (default 1,000) estimated tokens.
    #[napi(
        catch_unwind,
        ts_args_type = "sessionId: string, query: string, options?: MemorySearchOptions",
        ts_return_type = "MemoryRecord[]"
    )]
    pub fn search<'e>(
        &self,
        env: &'e Env,
        session_id: Unknown<'e>,
        query: Unknown<'e>,
        options: Option<Unknown<'e>>,
    ) -> Result<Unknown<'e>> {
        const F: &str = "MemoryStore.search";
        let session = id_arg(env, F, "sessionId", &session_id)?;
        let query = crate::bindings::js::string_arg(env, F, "query", &query)?;
        let o: MemorySearchOptions = from_js_opt(env, F, "options", options)?.unwrap_or_default();
        let k = count_or(env, F, "options.k", o.k, 5)?;
        let cap = count_or(env, F, "options.maxTokens", o.max_tokens, 1_000)? as u64;
        let lane = o.thread_key.unwrap_or_default();
        let hits = self.with(env, F, |s| s.search(&session, &query, &lane, k, cap))?;
        let out: Vec<MemoryRecord> = hits.iter().map(MemoryRecord::from).collect();
        to_js(env, &out)
    }

    /// Closes the SQLite file (committed data is on disk already). Later calls throw
    /// `ERR_MEMORY_CLOSED`; closing twice does nothing.
    #[napi(catch_unwind)]
    pub fn close(&self, env: &Env) -> Result<()> {
        match self.store.try_borrow_mut() {
            Ok(mut s) => {
                s.take();
                Ok(())
            }
            Err(_) => Err(coded_error(
                env,
                "MemoryStore.close",
                "ERR_REENTERED",
                "the store is busy with another call (a re-entrant call)",
            )),
        }
    }
}

// The class's other methods, by concern (declared after the class, so that the typings
// generator has met the class when it reads them).
mod assemble;
mod compaction;
mod history;
mod open;
use open::store_options;
mod tools;
mod vectors;
