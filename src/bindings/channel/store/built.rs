//! What `buildContext` resolves to (`BuiltContext`) and what `getMedia` resolves to.

use crate::bindings::errors::clear_exception;
use crate::bindings::js::{create_js_string, parse_json, to_js};
use crate::channel::store::build::Built;
use crate::channel::store::CachedMedia;
use crate::core::model::{ChannelSnapshot, ThreadContext, ThreadTelemetry};
use napi::bindgen_prelude::*;
use napi::{Env, JsString, Property, PropertyAttributes};
use napi_derive::napi;
use serde_json::json;

/// The `MediaContent` object of a file: its bytes and hash, or `data: null` and the note
/// saying why.
pub(super) fn media_content<'e>(
    env: &'e Env,
    item: Option<&CachedMedia>,
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

/// What `buildContext` resolves to. The documents are converted to JS objects when
/// read (each read converts anew: keep the value rather than reading it in a loop).
#[napi(custom_finalize)]
pub struct BuiltContext {
    built: Built,
    api_calls: u32,
    /// Bytes reported to V8 as external memory, so its GC sees what results hold.
    external: i64,
    /// The prompt section was handed to JS and now lives only there, as an own property
    /// of the instance; `built.prompt` is empty until a document needs it back.
    prompt_in_js: bool,
}

/// The own property the prompt section is kept in once read; it shadows the getter.
const PROMPT_PROPERTY: &str = "promptSection";

impl BuiltContext {
    pub(super) fn new(env: &Env, built: Built, api_calls: u32) -> Self {
        let mut ctx = BuiltContext {
            built,
            api_calls,
            external: 0,
            prompt_in_js: false,
        };
        ctx.report_external(env);
        ctx
    }

    /// Tells V8 what this result now holds outside its heap. Best effort: failing to
    /// report changes nothing but GC timing.
    fn report_external(&mut self, env: &Env) {
        let now = i64::try_from(self.built.heap_bytes()).unwrap_or(i64::MAX);
        if env.adjust_external_memory(now - self.external).is_ok() {
            self.external = now;
        }
    }

    /// Brings the prompt back from JS when a document (a range of it) is read after the
    /// prompt was handed over.
    fn prompt_back(&mut self, env: &Env, this: &Object) -> Result<()> {
        if self.prompt_in_js {
            let text: JsString = this.get_named_property(PROMPT_PROPERTY)?;
            self.built.prompt = text.into_utf8()?.into_owned()?;
            self.prompt_in_js = false;
            self.report_external(env);
        }
        Ok(())
    }
}

impl ObjectFinalize for BuiltContext {
    fn finalize(self, env: Env) -> Result<()> {
        crate::core::spare::give(self.built.prompt);
        if self.external > 0 {
            env.adjust_external_memory(-self.external)?;
        }
        Ok(())
    }
}

#[napi]
impl BuiltContext {
    /// The ChannelSnapshot (snake_case, `schema_version: "1.0"`).
    #[napi(catch_unwind, getter, ts_return_type = "ChannelSnapshot")]
    pub fn snapshot<'e>(&mut self, env: &'e Env, this: This<'e>) -> Result<Unknown<'e>> {
        self.prompt_back(env, &this.object)?;
        parse_json(env, self.built.snapshot_json())
    }

    /// The ThreadContext, or null when the anchor is neither in a thread nor has replies
    /// (or the thread could not be fetched; see `notes`).
    #[napi(catch_unwind, getter, ts_return_type = "ThreadContext | null")]
    pub fn thread<'e>(&mut self, env: &'e Env, this: This<'e>) -> Result<Unknown<'e>> {
        self.prompt_back(env, &this.object)?;
        match self.built.thread_json() {
            Some(t) => parse_json(env, t),
            None => Null.into_unknown(env),
        }
    }

    /// The system-prompt section: guidance, then both documents between tags (as JSON, or
    /// in the compact form with `format: 'compact'`).
    #[napi(catch_unwind, getter, ts_return_type = "string")]
    pub fn prompt_section<'e>(&mut self, env: &'e Env, this: This<'e>) -> Result<JsString<'e>> {
        let text = create_js_string(env, &self.built.prompt)?;
        // The string is kept on the instance (read-only, not enumerable), so a second
        // read costs nothing, and the Rust copy is freed now rather than at the next GC:
        // results held until then would otherwise pin every prompt's memory.
        let mut obj = this.object;
        let kept = Property::new()
            .with_utf8_name(PROMPT_PROPERTY)
            .map(|p| {
                p.with_value(&text)
                    .with_property_attributes(PropertyAttributes::empty())
            })
            .and_then(|p| obj.define_properties(&[p]));
        match kept {
            Ok(()) => {
                crate::core::spare::give(std::mem::take(&mut self.built.prompt));
                self.prompt_in_js = true;
                self.report_external(env);
            }
            // A frozen instance: it keeps the Rust copy and converts on each read.
            Err(_) => clear_exception(env),
        }
        Ok(text)
    }

    /// Tokens of the guidance, each document and the whole section, as the engine's
    /// budgets count them (the token estimator's upper bound, scaled by the model's
    /// calibrated ratio).
    #[napi(catch_unwind, getter)]
    pub fn tokens(&self) -> ContextTokens {
        let t = self.built.tokens;
        ContextTokens {
            guidance: t.guidance as f64,
            snapshot: t.snapshot as f64,
            thread: t.thread as f64,
            quoted_reply: t.quoted_reply as f64,
            total: t.total as f64,
        }
    }

    /// The message the anchor replies to (a Discord reply, a Telegram reply or quote),
    /// which the prompt section shows after the documents, labelled apart from the
    /// anchor's own text; null when the anchor replies to nothing.
    #[napi(catch_unwind, getter, ts_return_type = "QuotedReply | null")]
    pub fn quoted_reply<'e>(&self, env: &'e Env) -> Result<Unknown<'e>> {
        match &self.built.quoted_reply {
            Some(q) => to_js(env, q),
            None => Null.into_unknown(env),
        }
    }

    /// How the thread budget was used (null without a thread).
    #[napi(catch_unwind, getter, ts_return_type = "ThreadTelemetry | null")]
    pub fn telemetry<'e>(&self, env: &'e Env) -> Result<Unknown<'e>> {
        match &self.built.telemetry {
            Some(t) => to_js(env, t),
            None => Null.into_unknown(env),
        }
    }

    /// Fetcher calls made for this request (0 in the steady state).
    #[napi(catch_unwind, getter)]
    pub fn api_calls(&self) -> u32 {
        self.api_calls
    }

    /// Part of the context was served from cache past its TTL because a fetch failed.
    #[napi(catch_unwind, getter)]
    pub fn stale(&self) -> bool {
        self.built.stale
    }

    /// Why something is stale or missing, one sentence each (empty when complete).
    #[napi(catch_unwind, getter)]
    pub fn notes(&self) -> Vec<String> {
        self.built.notes.clone()
    }

    /// A plain object with every field (what `JSON.stringify` writes).
    #[napi(catch_unwind, js_name = "toJSON", ts_return_type = "BuiltContextJson")]
    pub fn json_object<'e>(&mut self, env: &'e Env, this: This<'e>) -> Result<Unknown<'e>> {
        self.prompt_back(env, &this.object)?;
        let b = &self.built;
        let thread = b.thread_json().unwrap_or("null");
        let telemetry = match &b.telemetry {
            Some(t) => serde_json::to_string(t).unwrap_or_else(|_| "null".into()),
            None => "null".into(),
        };
        let rest = json!({
            "promptSection": b.prompt,
            "tokens": { "guidance": b.tokens.guidance, "snapshot": b.tokens.snapshot, "thread": b.tokens.thread, "quotedReply": b.tokens.quoted_reply, "total": b.tokens.total },
            "quotedReply": b.quoted_reply,
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
    /// The quoted-reply block (0 without one).
    pub quoted_reply: f64,
    pub total: f64,
}

// ------------------------------------------------------------------ typings
//
// Shapes this file reads or builds by hand, declared for the typings only (no
// conversion code is generated for them).

#[allow(dead_code)]
mod typings {
    use super::{ChannelSnapshot, ThreadContext, ThreadTelemetry};
    use napi_derive::napi;

    /// `BuiltContext` as a plain object (`ctx.toJSON()`).
    #[napi(object, object_to_js = false, object_from_js = false)]
    pub struct BuiltContextJson {
        pub snapshot: ChannelSnapshot,
        #[napi(ts_type = "ThreadContext | null")]
        pub thread: Option<ThreadContext>,
        #[napi(ts_type = "ThreadTelemetry | null")]
        pub telemetry: Option<ThreadTelemetry>,
        pub prompt_section: String,
        #[napi(ts_type = "ContextTokens")]
        pub tokens: (),
        pub api_calls: f64,
        #[napi(ts_type = "QuotedReply | null")]
        pub quoted_reply: (),
        pub stale: bool,
        pub notes: Vec<String>,
    }

    /// Bytes of a file, or why there are none.
    #[napi(object, object_to_js = false, object_from_js = false)]
    pub struct MediaContent {
        pub artifact_id: String,
        #[napi(ts_type = "string | null")]
        pub media_type: Option<String>,
        #[napi(ts_type = "string | null")]
        pub filename: Option<String>,
        pub byte_length: f64,
        /// SHA-256 of the bytes (lowercase hex): the manifest's `content_hash`.
        #[napi(ts_type = "string | null")]
        pub content_hash: Option<String>,
        #[napi(ts_type = "Buffer | null")]
        pub data: Option<()>,
        /// The bytes are held by the media cache (false for items over its bound).
        pub cached: bool,
        /// Fetcher calls made for this request.
        pub api_calls: f64,
        /// Why `data` is null.
        #[napi(ts_type = "string | null")]
        pub note: Option<String>,
    }
}
