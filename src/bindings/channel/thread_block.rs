//! `formatSlackThreadContext`: the thread-history block (`crate::channel::thread_block`).

use crate::bindings::errors::throw;
use crate::bindings::js::{create_js_string, from_js};
use crate::channel::thread_block::{thread_block, ThreadBlockInput, DEFAULT_LIMIT};
use crate::core::input::whole_number;
use napi::bindgen_prelude::*;
use napi::{Env, JsString};
use napi_derive::napi;

/// The `<slack_thread_context>` block for pronoun resolution: one `Name: text` line per
/// earlier message of the thread (bot messages included), the newest `limit` (15), oldest
/// first, then `Current question: ...`; the empty string when there is no earlier message.
/// Text is escaped and kept on one line. `ChannelStore.threadContextBlock` builds it from
/// the store's thread.
#[napi(catch_unwind, ts_args_type = "input: ThreadBlockInput", ts_return_type = "string")]
pub fn format_slack_thread_context<'e>(env: &'e Env, input: Unknown) -> Result<JsString<'e>> {
    const F: &str = "formatSlackThreadContext";
    let i: ThreadBlockInput = from_js(env, F, "input", input)?;
    let limit = match i.limit {
        Some(v) => whole_number(v, "input.limit", "messages")
            .map(|n| usize::try_from(n).unwrap_or(usize::MAX))
            .map_err(|e| throw(env, F, &e))?,
        None => DEFAULT_LIMIT,
    };
    create_js_string(
        env,
        &thread_block(&i.messages, i.current_question.as_deref(), limit),
    )
}
