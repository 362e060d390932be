//! `MemoryStore`'s conversation history: conversations stored, the history by calendar
//! tiers, the thread status, and OpenClaw's own transcripts read back.

use super::JsMemoryStore;
use crate::bindings::errors::{coded_error, throw};
use crate::bindings::js::now_ms;
use crate::bindings::js::{create_js_string, from_js, from_js_opt, to_js};
use crate::core::input::whole_number;
use crate::memory::shapes::{
    ConversationContextInput, ConversationInput, OpenClawTranscript, ThreadStatus,
};
use crate::memory::transcript::read_openclaw;
use napi::bindgen_prelude::*;
use napi::{Env, JsString};
use napi_derive::napi;

#[napi]
impl JsMemoryStore {
    /// Stores a conversation (one session's turns in a chat, from `turns` or a JSONL
    /// `transcript`), replacing the one of the same chat and session. Returns how many
    /// text turns it kept (tool calls, tool results, thinking and system entries are
    /// dropped).
    #[napi(catch_unwind, ts_args_type = "conversation: ConversationInput")]
    pub fn put_conversation(&self, env: &Env, conversation: Unknown) -> Result<u32> {
        const F: &str = "MemoryStore.putConversation";
        let c: ConversationInput = from_js(env, F, "conversation", conversation)?;
        let c = c.to_conversation().map_err(|e| throw(env, F, &e))?;
        let kept = u32::try_from(c.turns.len()).unwrap_or(u32::MAX);
        self.with(env, F, |s| s.put_conversation(&c))?;
        Ok(kept)
    }

    /// What was said in a chat and when, for the system prompt: the conversation of the
    /// last 30 minutes in full, today's others in full when the budget allows (else their
    /// summaries), yesterday's and those that ended up to 7 × 24 hours ago as summaries,
    /// newest first within each, as `<conversation timestamp=".." relative="..">` blocks of
    /// `[human HH:MM]` / `[you HH:MM]` lines (a message's further lines indented) and
    /// `<conversation-summary>` blocks. An active conversation bigger than the budget is
    /// cut to its newest turns, said so in its block. Never another chat's. `maxTokens`
    /// (30,000) is hard. The empty string when there is nothing. Deterministic to the byte
    /// for the same store and `now`.
    #[napi(
        catch_unwind,
        ts_args_type = "options: ConversationContextInput",
        ts_return_type = "string"
    )]
    pub fn build_conversation_context<'e>(
        &self,
        env: &'e Env,
        options: Unknown,
    ) -> Result<JsString<'e>> {
        const F: &str = "MemoryStore.buildConversationContext";
        let o: ConversationContextInput = from_js(env, F, "options", options)?;
        #[allow(clippy::cast_possible_truncation)] // ms since 1970 fit an i64
        let req = o
            .history_request(now_ms() as i64, false)
            .map_err(|e| throw(env, F, &e))?;
        let text = self.with(env, F, |s| s.history_context(&req))?;
        create_js_string(env, &text)
    }

    /// Whether a message at `now` continues the chat's last conversation (it ended less
    /// than `continuationWindowMs`, 30 minutes, before), with the `<thread-status>` block
    /// that tells the model so.
    #[napi(
        catch_unwind,
        ts_args_type = "options: ConversationContextInput",
        ts_return_type = "ThreadStatus"
    )]
    pub fn thread_status<'e>(&self, env: &'e Env, options: Unknown<'e>) -> Result<Unknown<'e>> {
        const F: &str = "MemoryStore.threadStatus";
        let o: ConversationContextInput = from_js(env, F, "options", options)?;
        #[allow(clippy::cast_possible_truncation)] // ms since 1970 fit an i64
        let req = o
            .history_request(now_ms() as i64, true)
            .map_err(|e| throw(env, F, &e))?;
        let (continuation, block) = self.with(env, F, |s| s.history_status(&req))?;
        to_js(
            env,
            &ThreadStatus {
                continuation,
                block,
            },
        )
    }
}

/// Reads the conversations of an OpenClaw agent database (`openclaw-agent.sqlite`: its
/// `session_windows` and `transcript_events` tables), read-only: one per session updated
/// since `since` (epoch ms, default 0), with its user and assistant text turns. Store them
/// with `memoryStore.putConversation({ chatId, ...transcript })`. A file without those
/// tables is an `ERR_MEMORY_STORAGE` error saying which is missing.
#[napi(
    catch_unwind,
    ts_args_type = "path: string, options?: { since?: number }",
    ts_return_type = "OpenClawTranscript[]"
)]
pub fn read_open_claw_transcripts<'e>(
    env: &'e Env,
    path: Unknown<'e>,
    options: Option<Unknown<'e>>,
) -> Result<Unknown<'e>> {
    const F: &str = "readOpenClawTranscripts";
    let path = crate::bindings::js::string_arg(env, F, "path", &path)?;
    let o: SinceOptions = from_js_opt(env, F, "options", options)?.unwrap_or_default();
    let since = match o.since {
        Some(v) => whole_number(v, "options.since", "time")
            .map(|n| i64::try_from(n).unwrap_or(i64::MAX))
            .map_err(|e| throw(env, F, &e))?,
        None => 0,
    };
    let sessions = read_openclaw(&path, since)
        .map_err(|e| coded_error(env, F, "ERR_MEMORY_STORAGE", &e.to_string()))?;
    let out: Vec<OpenClawTranscript> = sessions.into_iter().map(OpenClawTranscript::from).collect();
    to_js(env, &out)
}

#[derive(serde::Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct SinceOptions {
    since: Option<f64>,
}
