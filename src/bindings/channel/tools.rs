//! `store.tools(channelId)`: the channel-scoped tools as a JS object. Validation,
//! search and answers are in `crate::channel::tools`; fetches are a run of the store, like
//! `buildContext`'s.

use super::store::JsChannelStore;
use crate::bindings::core::tool::read_input;
use crate::bindings::errors::{clear_exception, rejected, throw};
use crate::bindings::js::{create_js_string, describe, id_arg, is_nullish, to_js};
use crate::channel::fetch_run::Goal;
use crate::channel::tools::channel_messages::{start, Start};
use crate::channel::tools::input::{context_input, messages_input, MessagesInput};
use crate::channel::tools::options::{ToolsConfig, ToolsOptions};
use crate::channel::tools::{definitions, unknown_tool, Tool, ToolError};
use crate::core::input::InputError;
use napi::bindgen_prelude::*;
use napi::{Env, JsValue, ValueType};
use napi_derive::napi;

#[napi]
impl JsChannelStore {
    /// The tools for one channel: `channel_context` (ranked search) and
    /// `channel_messages` (a thread, messages or a media artifact by id). The channel
    /// is fixed here; no tool input names one, so a tool cannot reach another channel.
    #[napi(catch_unwind, ts_args_type = "channelId: string, options?: ChannelToolsOptions")]
    pub fn tools(
        &self,
        reference: Reference<JsChannelStore>,
        env: Env,
        channel_id: Unknown,
        options: Option<Unknown>,
    ) -> Result<ChannelTools> {
        let channel = id_arg(&env, "ChannelStore.tools", "channelId", &channel_id)?;
        if channel.is_empty() {
            return Err(throw(
                &env,
                "ChannelStore.tools",
                &InputError::range_error("channelId", "must not be empty"),
            ));
        }
        let opts: ToolsOptions = match options {
            Some(o) if !is_nullish(&o) => {
                crate::bindings::js::from_js(&env, "ChannelStore.tools", "options", o)?
            }
            _ => ToolsOptions::default(),
        };
        let config =
            ToolsConfig::try_from(opts).map_err(|e| throw(&env, "ChannelStore.tools", &e))?;
        Ok(ChannelTools {
            store: reference,
            channel,
            dotted: config.dotted,
            max_media_bytes: config.max_media_bytes,
        })
    }
}

/// The tools of one channel, from `store.tools(channelId)`.
#[napi]
pub struct ChannelTools {
    store: Reference<JsChannelStore>,
    channel: String,
    dotted: bool,
    max_media_bytes: u64,
}

fn resolved<'e>(env: &'e Env, text: String) -> Result<Unknown<'e>> {
    let s = create_js_string(env, &text)?;
    PromiseRaw::resolve(env, s).map(|p| p.to_unknown())
}

#[napi]
impl ChannelTools {
    /// The channel these tools are scoped to.
    #[napi(catch_unwind, getter)]
    pub fn channel_id(&self) -> String {
        self.channel.clone()
    }

    /// Name, description and JSON Schema of each tool, ready for the Messages API
    /// `tools` parameter.
    #[napi(catch_unwind, ts_return_type = "ToolDefinition[]")]
    pub fn definitions<'e>(&self, env: &'e Env) -> Result<Unknown<'e>> {
        to_js(env, &definitions(self.dotted))
    }

    /// Runs a tool (`channel_context` / `channel_messages`, or the dotted names) on its
    /// input (an object, or its JSON text) and resolves to the result as a JSON string.
    /// A bad call (unknown tool, wrong type, unknown field, out-of-range number, no
    /// selector) resolves to `{"error":{"code","tool","field","message"}}`; it never
    /// rejects.
    #[napi(
        catch_unwind,
        ts_args_type = "name: string, input: unknown",
        ts_return_type = "Promise<string>"
    )]
    pub fn execute<'e>(
        &self,
        env: &'e Env,
        name: Unknown<'e>,
        input: Unknown<'e>,
    ) -> Result<Unknown<'e>> {
        let run = || -> Result<Unknown<'e>> {
            let name_text = match name.get_type()? {
                ValueType::String => name.coerce_to_string()?.into_utf8()?.into_owned()?,
                _ => return resolved(env, unknown_tool(&format!("({})", describe(&name)))),
            };
            let Some(tool) = Tool::resolve(&name_text) else {
                return resolved(env, unknown_tool(&name_text));
            };
            let value = match read_input(env, input) {
                Ok(v) => v,
                Err(e) => return resolved(env, e.to_json(&name_text)),
            };
            let store: &JsChannelStore = &self.store;
            let now = store.now(env)?;
            match tool {
                Tool::Context => {
                    let out = match context_input(&value, now) {
                        Ok(i) => crate::channel::tools::channel_context::run(
                            &mut *store.core(env)?,
                            &self.channel,
                            &i,
                            now,
                        ),
                        Err(e) => e.to_json(&name_text),
                    };
                    resolved(env, out)
                }
                Tool::Messages => {
                    let input = match messages_input(&value) {
                        Ok(i) => i,
                        Err(e) => return resolved(env, e.to_json(&name_text)),
                    };
                    self.messages(env, store, input, now)
                }
            }
        };
        run().or_else(|e| {
            // A fault of the store or the runtime is an answer too, never a rejection.
            clear_exception(env);
            let msg = ToolError {
                code: "internal",
                field: None,
                message: e.reason.clone(),
            }
            .to_json("");
            resolved(env, msg).or_else(|e| rejected(env, e))
        })
    }

    fn messages<'e>(
        &self,
        env: &'e Env,
        store: &JsChannelStore,
        input: MessagesInput,
        now: u64,
    ) -> Result<Unknown<'e>> {
        let mut core = store.core(env)?;
        let started = start(
            &mut core,
            &self.channel,
            &input,
            store.fetchers(),
            self.max_media_bytes,
            now,
        );
        drop(core);
        let fetch = match started {
            Start::Answer(out) => return resolved(env, out),
            Start::Fetch(f) => f,
        };
        let store_obj = self.store.clone(*env)?;
        // SAFETY: a live reference to the store object, turned into a handle of this
        // scope on the JS thread.
        let store_obj: Object = unsafe {
            Object::from_napi_value(env.raw(), Reference::to_napi_value(env.raw(), store_obj)?)?
        };
        let goal = Goal::Messages {
            channel: self.channel.clone(),
            input: Box::new(input),
            media: fetch.media_result,
            max_media_bytes: self.max_media_bytes,
        };
        let jobs = fetch.jobs.into_iter().chain(fetch.media).collect();
        store.start_run(env, &store_obj, goal, jobs, fetch.failures, now)
    }
}
