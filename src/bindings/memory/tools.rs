//! `memory.tools(scope)`: the model's tools over one chat's memory as a JS object. What
//! they do is in `crate::memory::tools`; this module only translates.

use super::vectors::query_vector;
use super::JsMemoryStore;
use crate::bindings::core::tool::read_input;
use crate::bindings::errors::throw;
use crate::bindings::js::now_ms;
use crate::bindings::js::{from_js, is_nullish, to_js};
use crate::channel::tools::ToolError;
use crate::core::input::InputError;
use crate::memory::shapes::{MemoryToolsScope, SpeakersInput};
use crate::memory::tools::{definitions, run_with, unknown_tool, Scope};
use napi::bindgen_prelude::*;
use napi::{Env, ValueType};
use napi_derive::napi;

#[napi]
impl JsMemoryStore {
    /// The tools a model uses to look further back than its context, for one chat:
    /// `conversation_search` (the chat's stored messages by their words, optionally
    /// within a time window or one lane, with the summaries and facts that match) and
    /// `conversation_expand` (a message or summary id back to the verbatim messages,
    /// within a token budget). No tool input names a chat, so the tools reach nothing of
    /// another session.
    ///
    /// ```ts
    /// const tools = memory.tools({ sessionId, threadKey })
    /// const response = await anthropic.messages.create({ model, tools: tools.definitions(), messages })
    /// // for each tool_use block:
    /// const content = tools.execute(block.name, block.input)
    /// ```
    #[napi(catch_unwind, ts_args_type = "scope: MemoryToolsScope")]
    pub fn tools(
        &self,
        reference: Reference<JsMemoryStore>,
        env: Env,
        scope: Unknown,
    ) -> Result<MemoryTools> {
        const F: &str = "MemoryStore.tools";
        let s: MemoryToolsScope = from_js(&env, F, "scope", scope)?;
        if s.session_id.is_empty() {
            return Err(throw(
                &env,
                F,
                &InputError::range_error("scope.sessionId", "must not be empty"),
            ));
        }
        let now = match s.now {
            None => None,
            Some(n) if n.is_finite() => {
                #[allow(clippy::cast_possible_truncation)] // a finite moment in ms
                Some(n.trunc() as i64)
            }
            Some(_) => {
                return Err(throw(
                    &env,
                    F,
                    &InputError::range_error("scope.now", "must be a finite number of ms"),
                ))
            }
        };
        Ok(MemoryTools {
            store: reference,
            scope: Scope {
                speakers: s
                    .speakers
                    .as_ref()
                    .map(SpeakersInput::words)
                    .unwrap_or_default(),
                session: s.session_id,
                lane: s.thread_key.filter(|l| !l.is_empty()),
            },
            now,
        })
    }
}

/// The memory tools of one chat, from `memory.tools(scope)`.
#[napi]
pub struct MemoryTools {
    store: Reference<JsMemoryStore>,
    scope: Scope,
    now: Option<i64>,
}

#[napi]
impl MemoryTools {
    /// The session these tools are scoped to.
    #[napi(catch_unwind, getter)]
    pub fn session_id(&self) -> String {
        self.scope.session.clone()
    }

    /// Name, description and JSON Schema of each tool, ready for the Messages API
    /// `tools` parameter.
    #[napi(catch_unwind, ts_return_type = "ToolDefinition[]")]
    pub fn definitions<'e>(&self, env: &'e Env) -> Result<Unknown<'e>> {
        to_js(env, &definitions())
    }

    /// Runs a tool (`conversation_search` / `conversation_expand`) on its input (an
    /// object, or its JSON text) and returns the result as a JSON string, at once (the
    /// store is local). A bad call (unknown tool, wrong type, unknown field, a time that
    /// is not one, an id not in this chat) returns `{"error":{"code","tool","field",
    /// "message"}}`; a storage fault returns `{"error":{"code":"internal",...}}`. It never
    /// throws on the model's input. With `queryVector` (the search query's vector by the
    /// host's embedder, the model that gave the messages theirs through `setVectors`), a
    /// search also finds the messages nearest it, fused with its words' matches; a
    /// `queryVector` that is not a vector throws, as `assemble`'s does.
    #[napi(
        catch_unwind,
        ts_args_type = "name: string, input: unknown, queryVector?: Float32Array | number[] | null"
    )]
    pub fn execute(
        &self,
        env: Env,
        name: Unknown,
        input: Unknown,
        vector: Option<Unknown>,
    ) -> Result<String> {
        const F: &str = "MemoryTools.execute";
        let read = match vector.filter(|v| !is_nullish(v)) {
            Some(v) => Some(query_vector(&env, F, "queryVector", &v)?),
            None => None,
        };
        let name = match name.get_type()? {
            ValueType::String => name.coerce_to_string()?.into_utf8()?.into_owned()?,
            _ => return Ok(unknown_tool("(not a string)")),
        };
        let value = match read_input(&env, input) {
            Ok(v) => v,
            Err(e) => return Ok(e.to_json(&name)),
        };
        #[allow(clippy::cast_possible_truncation)] // ms since 1970 fit an i64
        let now = self.now.unwrap_or_else(|| now_ms() as i64);
        let store: &JsMemoryStore = &self.store;
        let out = store.with(&env, F, |s| {
            run_with(s, &self.scope, &name, &value, now, read.as_deref())
        });
        Ok(out.unwrap_or_else(|e| {
            crate::bindings::errors::clear_exception(&env);
            ToolError {
                code: "internal",
                field: None,
                message: e.reason.clone(),
            }
            .to_json(&name)
        }))
    }
}

/// The definitions of the memory tools (`conversation_search`, `conversation_expand`),
/// without a store: what a host registers before any chat is open.
#[napi(catch_unwind, ts_return_type = "ToolDefinition[]")]
pub fn memory_tool_definitions(env: &Env) -> Result<Unknown<'_>> {
    to_js(env, &definitions())
}
