//! Drop-in exports of the attachment manifest, plus `checkAttachment`.
//!
//! The manifest stays a plain JS object (`{ entries: { [artifact_id]: record } }`) that
//! callers may read, spread and `JSON.stringify`; these functions read and mutate it in
//! place, as the module they replace did. Loading and strict serialization go through the
//! pure functions of [`crate::dropin::manifest`].

use crate::bindings::errors::named;
use crate::bindings::errors::{clear_exception, throw};
use crate::bindings::js::{
    expect_object, from_js, id_arg, is_nullish, parse_json, string_arg, to_js,
};
use crate::core::input::InputError;
use crate::dropin::manifest::{
    parse_manifest_data, validate_manifest_json, AttachmentRecord, Manifest, MatchKind,
};
use napi::bindgen_prelude::*;
use napi::{Env, JsString, JsValue, KeyCollectionMode, KeyConversion, KeyFilter, ValueType};
use napi_derive::napi;

/// The session custom-entry type the manifest is persisted under:
/// `"openclaw:claude-sdk-attachment-manifest"`.
#[napi]
pub const ATTACHMENT_MANIFEST_KEY: &str = crate::dropin::manifest::ATTACHMENT_MANIFEST_KEY;

/// The canonical persisted text of a manifest, as a pattern `js/dropin/manifest.js` compiles
/// (see `crate::dropin::manifest::CANONICAL_TEXT_PATTERN`).
#[napi(skip_typescript)]
pub const CANONICAL_MANIFEST_TEXT: &str = crate::dropin::manifest::CANONICAL_TEXT_PATTERN;

/// The `entries` object of a manifest argument, or a `TypeError`.
fn entries<'e>(env: &Env, func: &str, manifest: &Unknown<'e>) -> Result<Object<'e>> {
    expect_object(env, func, "manifest", manifest)?;
    // SAFETY: checked to be an object by `expect_object` above.
    let m: Object = unsafe { manifest.cast()? };
    let entries: Unknown = m.get_named_property("entries")?;
    expect_object(env, func, "manifest.entries", &entries)?;
    // SAFETY: checked to be an object by `expect_object` above.
    unsafe { entries.cast() }
}

fn string_value(v: &Unknown) -> Result<Option<String>> {
    if v.get_type()? != ValueType::String {
        return Ok(None);
    }
    // SAFETY: checked to be a string above.
    let s: JsString = unsafe { v.cast()? };
    Ok(Some(s.into_utf8()?.into_owned()?))
}

/// Own enumerable string-keyed records of `entries`, in property order.
fn records<'e>(entries: &Object<'e>) -> Result<Vec<Unknown<'e>>> {
    let keys = entries.get_all_property_names(
        KeyCollectionMode::OwnOnly,
        KeyFilter::Enumerable,
        KeyConversion::NumbersToStrings,
    )?;
    let n = keys.get_array_length()?;
    let mut out = Vec::with_capacity(n as usize);
    for i in 0..n {
        let key: Unknown = keys.get_element(i)?;
        if key.get_type()? != ValueType::String {
            continue;
        }
        // SAFETY: checked to be a string above.
        let key: JsString = unsafe { key.cast()? };
        out.push(entries.get_property(key)?);
    }
    Ok(out)
}

/// A record's string field, `None` when absent, `null` or not a string.
fn record_field(record: &Unknown, name: &str) -> Result<Option<String>> {
    if record.get_type()? != ValueType::Object {
        return Ok(None);
    }
    // SAFETY: checked to be an object above.
    let o: Object = unsafe { record.cast()? };
    let v: Unknown = o.get_named_property(name)?;
    string_value(&v)
}

/// A new, empty manifest: `{ entries: {} }`.
#[napi(catch_unwind, ts_return_type = "AttachmentManifest")]
pub fn create_attachment_manifest(env: &Env) -> Result<Object<'_>> {
    let mut m = Object::new(env)?;
    m.set_named_property("entries", Object::new(env)?)?;
    Ok(m)
}

/// True when the manifest holds a record for `artifactId`. Matches by id only, as the
/// module it replaces did; use `checkAttachment` to also catch re-uploads by content hash.
#[napi(
    catch_unwind,
    ts_args_type = "manifest: AttachmentManifest, artifactId: string, contentHash?: string | null"
)]
pub fn is_already_attached(
    env: &Env,
    manifest: Unknown,
    artifact_id: Unknown,
    _content_hash: Option<Unknown>,
) -> Result<bool> {
    named(env, "isAlreadyAttached", "manifest", || -> Result<bool> {
        const F: &str = "isAlreadyAttached";
        let entries = entries(env, F, &manifest)?;
        let id = id_arg(env, F, "artifactId", &artifact_id)?;
        entries.has_own_property(&id)
    })
}

/// Adds (or replaces) the record for its artifact id, mutating `manifest` in place (the
/// record is stored in snake_case: read it as
/// `manifest.entries[artifactId]`). Returns nothing, as the runner's module did. Accepts
/// the record in snake_case, or camelCase with the turn as `turn` (the runner's params)
/// or `includedAtTurn`.
#[napi(
    catch_unwind,
    ts_args_type = "manifest: AttachmentManifest, record: AttachmentRecord | AttachmentRecordInput",
    ts_return_type = "void"
)]
pub fn record_attachment<'e>(
    env: &'e Env,
    manifest: Unknown<'e>,
    record: Unknown<'e>,
) -> Result<()> {
    named(env, "recordAttachment", "manifest", || -> Result<()> {
        const F: &str = "recordAttachment";
        let mut entries = entries(env, F, &manifest)?;
        let parsed: AttachmentRecord = from_js(env, F, "record", record)?;
        parsed
            .check()
            .map_err(|msg| throw(env, F, &InputError::range_error("record", msg)))?;
        if parsed.artifact_id == "__proto__" {
            // Assigning it would replace the entries object's prototype, not add a record.
            return Err(throw(
                env,
                F,
                &InputError::range_error("record.artifact_id", "cannot be \"__proto__\""),
            ));
        }
        let value = to_js(env, &parsed)?;
        // A JS string key: ids may hold any character, NUL included.
        entries.set_property(env.create_string(&parsed.artifact_id)?, value)?;
        Ok(())
    })
}

/// Records attached from one thread (`source_thread_id === threadId`; `null` selects
/// top-level messages), in insertion order. The objects are the manifest's own.
#[napi(
    catch_unwind,
    ts_args_type = "manifest: AttachmentManifest, threadId: string | null",
    ts_return_type = "AttachmentRecord[]"
)]
pub fn get_thread_attachments<'e>(
    env: &'e Env,
    manifest: Unknown<'e>,
    thread_id: Option<Unknown<'e>>,
) -> Result<Array<'e>> {
    thread_records(env, "getThreadAttachments", &manifest, thread_id)
}

fn thread_records<'e>(
    env: &'e Env,
    func: &str,
    manifest: &Unknown<'e>,
    thread_id: Option<Unknown<'e>>,
) -> Result<Array<'e>> {
    named(env, func, "manifest", || -> Result<Array<'e>> {
        let entries = entries(env, func, manifest)?;
        let wanted = match thread_id {
            Some(v) if !is_nullish(&v) => Some(id_arg(env, func, "threadId", &v)?),
            _ => None,
        };
        let mut out = env.create_array(0)?;
        for record in records(&entries)? {
            if record.get_type()? != ValueType::Object {
                continue;
            }
            if record_field(&record, "source_thread_id")? == wanted {
                out.insert(record)?;
            }
        }
        Ok(out)
    })
}

/// After a compaction: the media of the current thread to attach again, once, with the
/// text to put before it (`"[Post-compaction context recovery: re-attaching N media items
/// from this thread]"`); `null` when the thread has none. Media of other threads is not
/// included (the model can fetch it with the channel tools), and the manifest is left
/// as it is: these are re-inclusions, not new attachments.
#[napi(
    catch_unwind,
    ts_args_type = "manifest: AttachmentManifest, threadId: string | null",
    ts_return_type = "{ preamble: string; items: AttachmentRecord[] } | null"
)]
pub fn post_compaction_recovery<'e>(
    env: &'e Env,
    manifest: Unknown<'e>,
    thread_id: Option<Unknown<'e>>,
) -> Result<Unknown<'e>> {
    let items = thread_records(env, "postCompactionRecovery", &manifest, thread_id)?;
    let n = items.len() as usize;
    if n == 0 {
        return Null.into_unknown(env);
    }
    let mut out = Object::new(env)?;
    out.set_named_property("preamble", crate::dropin::manifest::recovery_preamble(n))?;
    out.set_named_property("items", items)?;
    Ok(out.to_unknown())
}

/// How a candidate attachment matches the manifest: `"artifact_id"` when its id is
/// recorded, `"content_hash"` when another id with the same SHA-256 is (the same bytes
/// re-uploaded), else `"none"`; with the matching record (`null` for none).
#[napi(
    catch_unwind,
    ts_args_type = "manifest: AttachmentManifest, candidate: AttachmentCandidate",
    ts_return_type = "AttachmentCheck"
)]
pub fn check_attachment<'e>(
    env: &'e Env,
    manifest: Unknown<'e>,
    candidate: Unknown<'e>,
) -> Result<Object<'e>> {
    named(env, "checkAttachment", "input", || -> Result<Object<'e>> {
        const F: &str = "checkAttachment";
        let entries = entries(env, F, &manifest)?;
        expect_object(env, F, "candidate", &candidate)?;
        // SAFETY: checked to be an object by `expect_object` above.
        let c: Object = unsafe { candidate.cast()? };
        let id = id_arg(
            env,
            F,
            "candidate.artifactId",
            &c.get_named_property("artifactId")?,
        )?;
        let hash_value: Unknown = c.get_named_property("contentHash")?;
        let hash = if is_nullish(&hash_value) {
            None
        } else {
            Some(string_arg(env, F, "candidate.contentHash", &hash_value)?)
        };

        let mut found: Option<(MatchKind, Unknown)> = None;
        if entries.has_own_property(&id)? {
            found = Some((
                MatchKind::ArtifactId,
                entries.get_property(env.create_string(&id)?)?,
            ));
        } else if let Some(h) = hash.filter(|h| !h.is_empty()) {
            for record in records(&entries)? {
                if record_field(&record, "content_hash")?.as_deref() == Some(h.as_str()) {
                    found = Some((MatchKind::ContentHash, record));
                    break;
                }
            }
        }
        let mut out = Object::new(env)?;
        match found {
            Some((kind, record)) => {
                out.set_named_property("match", kind.as_str())?;
                out.set_named_property("record", record)?;
            }
            None => {
                out.set_named_property("match", MatchKind::None.as_str())?;
                out.set_named_property("record", Null)?;
            }
        }
        Ok(out)
    })
}

/// The persisted form of a manifest (its JSON text), after checking every record: a
/// record with a missing or mistyped field, or keyed by another id, is an error naming it
/// (`entries.F123.content_hash`) rather than a corrupt session entry.
#[napi(catch_unwind, ts_args_type = "manifest: AttachmentManifest", ts_return_type = "string")]
pub fn serialize_manifest<'e>(env: &'e Env, manifest: Unknown<'e>) -> Result<JsString<'e>> {
    named(
        env,
        "serializeManifest",
        "manifest",
        || -> Result<JsString<'e>> {
            const F: &str = "serializeManifest";
            expect_object(env, F, "manifest", &manifest)?;
            let Some((js_text, text)) = crate::bindings::js::stringify_keep(env, manifest)? else {
                return Err(throw(
                    env,
                    F,
                    &InputError::type_error("manifest", "expected an object"),
                ));
            };
            let m = validate_manifest_json(&text).map_err(|e| throw(env, F, &e))?;
            let canonical =
                serde_json::to_string(&m).map_err(|e| Error::from_reason(format!("{F}: {e}")))?;
            // Usually the caller's manifest is already in canonical form (records made by
            // recordAttachment): then the string V8 made is the answer and need not be rebuilt.
            if canonical == text {
                return Ok(js_text);
            }
            env.create_string(&canonical)
        },
    )
}

/// The manifest text held by one session entry, if it is a manifest entry.
fn entry_data(env: &Env, entry: Unknown) -> Result<Option<String>> {
    if entry.get_type()? != ValueType::Object {
        return Ok(None);
    }
    // SAFETY: checked to be an object above.
    let o: Object = unsafe { entry.cast()? };
    if record_field(&entry, "type")?.as_deref() != Some("custom")
        || record_field(&entry, "customType")?.as_deref()
            != Some(crate::dropin::manifest::ATTACHMENT_MANIFEST_KEY)
    {
        return Ok(None);
    }
    let data: Unknown = o.get_named_property("data")?;
    match data.get_type()? {
        ValueType::String => string_value(&data),
        ValueType::Object => crate::bindings::js::stringify(env, data),
        _ => Ok(None),
    }
}

fn newest_manifest(env: &Env, entries: &Unknown) -> Result<Manifest> {
    if !entries.is_array()? {
        return Ok(Manifest::default());
    }
    // SAFETY: checked to be an array above.
    let list: Object = unsafe { entries.cast()? };
    let n = list.get_array_length()?;
    for i in (0..n).rev() {
        let data = list
            .get_element::<Unknown>(i)
            .and_then(|entry| entry_data(env, entry));
        let data = match data {
            Ok(d) => d,
            Err(_) => {
                clear_exception(env);
                None
            }
        };
        if let Some((m, _dropped)) = data.as_deref().and_then(parse_manifest_data) {
            return Ok(m);
        }
    }
    Ok(Manifest::default())
}

/// Restores the manifest from session log entries: the newest
/// `{ type: "custom", customType: ATTACHMENT_MANIFEST_KEY, data }` entry that holds a
/// usable manifest wins (a malformed newer one falls back to an older one); records in it
/// that fail validation are dropped one by one. Never throws: anything unusable gives an
/// empty manifest.
#[napi(
    catch_unwind,
    ts_args_type = "entries: ReadonlyArray<SessionEntry | unknown>",
    ts_return_type = "AttachmentManifest"
)]
pub fn load_manifest_from_entries<'e>(env: &'e Env, entries: Unknown<'e>) -> Result<Unknown<'e>> {
    let manifest = newest_manifest(env, &entries).unwrap_or_else(|_| {
        clear_exception(env);
        Manifest::default()
    });
    match serde_json::to_string(&manifest) {
        Ok(text) => parse_json(env, &text),
        Err(_) => parse_json(env, "{\"entries\":{}}"),
    }
}

// ------------------------------------------------------------------ typings
//
// Shapes this file reads or builds by hand, declared for the typings only (no
// conversion code is generated for them).

#[allow(dead_code)]
mod typings {
    use super::AttachmentRecord;
    use napi_derive::napi;

    /// Media already sent to a conversation, keyed by artifact id. A plain object:
    /// `JSON.stringify(manifest)` is its persisted form.
    #[napi(object, object_to_js = false, object_from_js = false)]
    pub struct AttachmentManifest {
        #[napi(ts_type = "Record<string, AttachmentRecord>")]
        pub entries: String,
    }

    /// `checkAttachment`'s result: the kind of match and the record matched (`null` for none).
    #[napi(object, object_to_js = false, object_from_js = false)]
    pub struct AttachmentCheck {
        /// `"artifact_id"` (same id recorded), `"content_hash"` (same bytes re-uploaded under
        /// a new id) or `"none"`.
        #[napi(js_name = "match", ts_type = "'artifact_id' | 'content_hash' | 'none'")]
        pub match_kind: String,
        #[napi(ts_type = "AttachmentRecord | null")]
        pub record: AttachmentRecord,
    }

    /// A session log entry as `loadManifestFromEntries` reads it; entries of other types are
    /// skipped. `data` is the manifest's JSON text (or the manifest object itself).
    #[napi(object, object_to_js = false, object_from_js = false)]
    pub struct SessionEntry {
        #[napi(js_name = "type")]
        pub kind: String,
        pub custom_type: Option<String>,
        #[napi(ts_type = "unknown")]
        pub data: Option<String>,
    }

    /// A record to add with `recordAttachment`: the snake_case `AttachmentRecord`, or
    /// the same fields in camelCase, the turn as `includedAtTurn` or, as the runner's
    /// `recordAttachment` params name it, `turn`.
    #[napi(object, object_to_js = false, object_from_js = false)]
    pub struct AttachmentRecordInput {
        pub artifact_id: String,
        pub display_name: String,
        pub media_type: String,
        pub content_hash: String,
        pub source_message_id: String,
        #[napi(ts_type = "string | null")]
        pub source_thread_id: Option<String>,
        #[napi(ts_type = "number")]
        pub included_at_turn: Option<f64>,
        /// The runner's name for `includedAtTurn`; give one of the two.
        pub turn: Option<f64>,
    }

    /// A candidate for `checkAttachment`.
    #[napi(object, object_to_js = false, object_from_js = false)]
    pub struct AttachmentCandidate {
        pub artifact_id: String,
        /// SHA-256 hex of the bytes, when known; enables re-upload detection.
        #[napi(ts_type = "string | null")]
        pub content_hash: Option<String>,
    }
}
