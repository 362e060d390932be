//! Shared translation between JS values and the serde types of the domain modules.
//!
//! Structured input crosses as JSON: V8's `JSON.stringify` on the way in (fast, and it
//! escapes lone surrogates), serde with field paths to read it; structured output leaves
//! as serde JSON read back by `JSON.parse`. Errors become `TypeError` / `RangeError`
//! prefixed with the export's name.

use super::errors::{clear_exception, throw, unreadable};
use crate::core::input::{self, InputError};
use napi::bindgen_prelude::*;
use napi::{Env, JsString, JsValue, ValueType};
use serde::de::DeserializeOwned;
use serde::Serialize;

pub use super::value::{describe, is_nullish};

/// Checks that `v` is a plain object (not null, not an array).
pub fn expect_object(env: &Env, func: &str, path: &str, v: &Unknown) -> Result<()> {
    match describe(v) {
        "object" => Ok(()),
        other => Err(throw(
            env,
            func,
            &InputError::type_error(path, format!("expected an object, got {other}")),
        )),
    }
}

/// Checks that `v` is an array and returns it as an object to index.
pub fn expect_array<'e>(env: &Env, func: &str, path: &str, v: &Unknown<'e>) -> Result<Object<'e>> {
    if !v.is_array()? {
        return Err(throw(
            env,
            func,
            &InputError::type_error(path, format!("expected an array, got {}", describe(v))),
        ));
    }
    // SAFETY: checked to be an array above.
    unsafe { v.cast() }
}

/// `v` as serde JSON, for values a caller hands over whole (an SDK message, a transcript
/// entry): what `JSON.stringify` cannot serialize (a cycle, a throwing `toJSON`) is
/// `null`, with the exception cleared; lone surrogates become U+FFFD.
pub fn json_value(env: &Env, v: Unknown) -> Result<serde_json::Value> {
    match stringify(env, v) {
        Ok(Some(mut text)) => {
            input::repair_lone_surrogates(&mut text);
            Ok(serde_json::from_str(&text).unwrap_or(serde_json::Value::Null))
        }
        Ok(None) => Ok(serde_json::Value::Null),
        Err(_) => {
            clear_exception(env);
            Ok(serde_json::Value::Null)
        }
    }
}

/// A new object with `src`'s own enumerable properties, in order, except `skip`, whose
/// value is returned apart.
pub fn shallow_copy_except<'e>(
    env: &'e Env,
    src: &Object<'e>,
    skip: Option<&str>,
) -> Result<(Object<'e>, Option<Unknown<'e>>)> {
    let mut copy = Object::new(env)?;
    let mut skipped = None;
    let keys = src.get_all_property_names(
        napi::KeyCollectionMode::OwnOnly,
        napi::KeyFilter::Enumerable,
        napi::KeyConversion::NumbersToStrings,
    )?;
    for k in 0..keys.get_array_length()? {
        let name: Unknown = keys.get_element(k)?;
        let value: Unknown = src.get_property(name)?;
        if let Some(skip) = skip {
            if name.get_type()? == ValueType::String
                && name.coerce_to_string()?.into_utf8()?.as_str()? == skip
            {
                skipped = Some(value);
                continue;
            }
        }
        copy.set_property(name, value)?;
    }
    Ok((copy, skipped))
}

/// Calls JavaScript function `f` through Node-API directly, with `this` undefined. An
/// exception it throws is left pending and reported as `Status::PendingException`, so
/// it reaches our caller exactly as thrown.
///
/// napi-rs's `Function::call` instead converts the exception into a Rust error by
/// calling its `toString` and reading its `cause`: JavaScript again. At the stack limit
/// (a getter, `toJSON` or clock that calls back into the same export) that throws a new
/// `RangeError`, which is converted the same way, recursively, until the native stack
/// is gone and the process dies. Every call of caller-controlled JavaScript goes
/// through here.
pub fn call_js<'e>(env: &'e Env, f: &Unknown, args: &[Unknown]) -> Result<Unknown<'e>> {
    let mut this = std::ptr::null_mut();
    let raw_args: Vec<napi::sys::napi_value> = args.iter().map(napi::JsValue::raw).collect();
    let mut out = std::ptr::null_mut();
    // SAFETY: a valid env on the JS thread; `f` and `args` are live handles of this
    // scope and `out` / `this` are locals.
    let status = unsafe {
        napi::sys::napi_get_undefined(env.raw(), &mut this);
        napi::sys::napi_call_function(
            env.raw(),
            this,
            f.raw(),
            raw_args.len(),
            raw_args.as_ptr(),
            &mut out,
        )
    };
    called(env, status, out)
}

/// Calls method `name` of `obj` (a method the package's JS layer defines) with `args`.
/// A missing method means the addon was loaded without that layer: the error says to
/// import the package rather than the `.node` file.
pub fn call_method<'e>(
    env: &'e Env,
    obj: &Object,
    name: &str,
    args: &[Unknown],
) -> Result<Unknown<'e>> {
    let f: Unknown = obj.get_named_property(name)?;
    if f.get_type()? != ValueType::Function {
        return Err(Error::from_reason(format!(
            "the JavaScript layer is not loaded ({name} is missing); import the package (require('@openclaw/context-engine')), not the .node file"
        )));
    }
    let raw_args: Vec<napi::sys::napi_value> = args.iter().map(napi::JsValue::raw).collect();
    let mut out = std::ptr::null_mut();
    // SAFETY: a valid env on the JS thread; `obj`, `f` and `args` are live handles of
    // this scope and `out` is a local.
    let status = unsafe {
        napi::sys::napi_call_function(
            env.raw(),
            obj.raw(),
            f.raw(),
            raw_args.len(),
            raw_args.as_ptr(),
            &mut out,
        )
    };
    called(env, status, out)
}

/// The result of a `napi_call_function`: its value, the exception it left pending, or
/// the failure status.
fn called<'e>(
    env: &'e Env,
    status: napi::sys::napi_status,
    out: napi::sys::napi_value,
) -> Result<Unknown<'e>> {
    match status {
        napi::sys::Status::napi_ok => {
            // SAFETY: napi returned a value handle of this scope.
            Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), out) })
        }
        napi::sys::Status::napi_pending_exception => {
            Err(Error::from_status(Status::PendingException))
        }
        other => Err(Error::new(
            Status::from(other),
            "calling a JavaScript function failed",
        )),
    }
}

/// The bytes of a `Uint8Array` (or other typed array), `Buffer` or `ArrayBuffer`, copied;
/// `None` for any other value.
pub fn bytes_of(data: &Unknown) -> Result<Option<Vec<u8>>> {
    Ok(if data.is_typedarray()? {
        // SAFETY: checked to be a typed array just above.
        let a: Uint8Array = unsafe { data.cast()? };
        Some(a.to_vec())
    } else if data.is_buffer()? {
        // SAFETY: checked to be a Buffer just above.
        let b: Buffer = unsafe { data.cast()? };
        Some(b.to_vec())
    } else if data.is_arraybuffer()? {
        // SAFETY: checked to be an ArrayBuffer just above.
        let ab: ArrayBuffer = unsafe { data.cast()? };
        Some(ab.to_vec())
    } else {
        None
    })
}

fn json<'e>(env: &'e Env) -> Result<Object<'e>> {
    env.get_global()?
        .get_named_property_unchecked::<Object>("JSON")
}

/// `JSON.stringify(v)`; a value it cannot serialize (a cycle, a BigInt) throws its own
/// `TypeError`, which is passed on.
pub fn stringify(env: &Env, v: Unknown) -> Result<Option<String>> {
    Ok(stringify_keep(env, v)?.map(|(_, text)| text))
}

/// [`stringify`], also returning the JS string itself so a caller can hand it back
/// without building a new one.
pub fn stringify_keep<'e>(env: &'e Env, v: Unknown<'e>) -> Result<Option<(JsString<'e>, String)>> {
    let f: Unknown = json(env)?.get_named_property_unchecked("stringify")?;
    let out = call_js(env, &f, &[v])?;
    match out.get_type()? {
        ValueType::String => {
            // SAFETY: this arm is for strings.
            let s: JsString = unsafe { out.cast()? };
            let text = s.into_utf8()?.into_owned()?;
            // SAFETY: checked to be a string above.
            let s: JsString = unsafe { out.cast()? };
            Ok(Some((s, text)))
        }
        _ => Ok(None),
    }
}

/// `JSON.stringify` of a non-finite-revealing replacer: NaN and ±Infinity become
/// [`input::NON_FINITE_MARKER`] strings instead of `null`.
fn stringify_revealing_non_finite(env: &Env, v: Unknown) -> Result<Option<String>> {
    let replacer: Unknown = env.run_script(
        "(function (k, v) { return typeof v === 'number' && !Number.isFinite(v) ? '\\u0000non-finite:' + String(v) : v })",
    )?;
    let f: Unknown = json(env)?.get_named_property_unchecked("stringify")?;
    let out = call_js(env, &f, &[v, replacer])?;
    match out.get_type()? {
        ValueType::String => {
            // SAFETY: this arm is for strings.
            let s: JsString = unsafe { out.cast()? };
            Ok(Some(s.into_utf8()?.into_owned()?))
        }
        _ => Ok(None),
    }
}

/// Caller input as JSON text, checked: a value `JSON.stringify` cannot read (a cycle, a
/// BigInt, a revoked Proxy, a throwing getter or `toJSON`) is a `TypeError` naming the
/// export and `root`; NaN and ±Infinity (which JSON would turn into `null`, silently
/// choosing a default) are a `RangeError` naming the field; a lone surrogate in an id
/// field is a `TypeError` (see [`checked_ids`]). `None` for `undefined` and functions.
pub fn input_json(env: &Env, func: &str, root: &str, v: Unknown) -> Result<Option<String>> {
    let path = if root.is_empty() { "input" } else { root };
    let mut text = match stringify(env, v) {
        Ok(Some(t)) => t,
        Ok(None) => return Ok(None),
        // A cycle, a BigInt, a revoked Proxy or a throwing getter / `toJSON`; running out
        // of stack stays the RangeError it is, as plain JS would throw it.
        Err(e) => return Err(unreadable(env, func, path, "cannot be read as JSON", e)),
    };
    // NaN and ±Infinity come out as `null`: only where such a `null` may be one, look
    // closer (an ordinary `threadId: null` costs nothing more).
    if input::may_hide_non_finite(&text) {
        match stringify_revealing_non_finite(env, v) {
            Ok(Some(revealed)) => {
                if let Some(e) = input::non_finite_error(&revealed, root) {
                    return Err(throw(env, func, &e));
                }
            }
            Ok(None) => {}
            Err(_) => clear_exception(env),
        }
    }
    checked_ids(env, func, root, &mut text)?;
    Ok(Some(text))
}

/// Reads `v` into `T` by way of JSON, naming bad fields relative to `root` (empty for the
/// main argument, whose fields are then named bare: `adjacentMessages[3].ts`).
pub fn from_js<T: DeserializeOwned>(env: &Env, func: &str, root: &str, v: Unknown) -> Result<T> {
    let path = if root.is_empty() { "input" } else { root };
    expect_object(env, func, path, &v)?;
    let Some(text) = input_json(env, func, root, v)? else {
        return Err(throw(
            env,
            func,
            &InputError::type_error(path, "expected an object"),
        ));
    };
    input::parse(&text, root).map_err(|e| throw(env, func, &e))
}

/// Folds lone surrogates in `text` (JSON from `JSON.stringify`) to U+FFFD, and throws a
/// `TypeError` when one sat in an id field, which folding would merge with another id.
pub fn checked_ids(env: &Env, func: &str, root: &str, text: &mut String) -> Result<()> {
    let fixes = input::repair_lone_surrogates(text);
    if let Some((at, _)) = input::id_with_lone_surrogate(text, &fixes) {
        let path = input::path_at(text, at, root);
        return Err(throw(env, func, &input::lone_surrogate_error(path)));
    }
    Ok(())
}

/// Reads an array argument into `Vec<T>` by way of JSON, as [`from_js`] reads an
/// object: anything but an array is a `TypeError` naming `root`.
pub fn array_arg<T: DeserializeOwned>(
    env: &Env,
    func: &str,
    root: &str,
    v: Unknown,
) -> Result<Vec<T>> {
    expect_array(env, func, root, &v)?;
    let Some(text) = input_json(env, func, root, v)? else {
        return Err(throw(
            env,
            func,
            &InputError::type_error(root, "expected an array"),
        ));
    };
    input::parse(&text, root).map_err(|e| throw(env, func, &e))
}

/// Like [`from_js`] for an optional argument: `undefined` and `null` give `None`.
pub fn from_js_opt<T: DeserializeOwned>(
    env: &Env,
    func: &str,
    root: &str,
    v: Option<Unknown>,
) -> Result<Option<T>> {
    match v {
        Some(v) if !is_nullish(&v) => from_js(env, func, root, v).map(Some),
        _ => Ok(None),
    }
}

/// Builds the JS value of `value` (`JSON.parse` of its serde JSON).
pub fn to_js<'e, T: Serialize>(env: &'e Env, value: &T) -> Result<Unknown<'e>> {
    let text =
        serde_json::to_string(value).map_err(|e| Error::from_reason(format!("serialize: {e}")))?;
    parse_json(env, &text)
}

/// `JSON.parse(text)`.
pub fn parse_json<'e>(env: &'e Env, text: &str) -> Result<Unknown<'e>> {
    let f: Unknown = json(env)?.get_named_property_unchecked("parse")?;
    let text = create_js_string(env, text)?.to_unknown();
    call_js(env, &f, &[text])
}

/// A large Rust string as a JS string, by the cheapest door V8 has: ASCII is copied as
/// Latin-1 bytes; anything else is converted to UTF-16 first (V8's own UTF-8 decoding is
/// slower for such text).
///
/// The UTF-16 units are written to a buffer kept by the thread between calls (up to
/// [`UTF16_SCRATCH_MAX_BYTES`]), so handing over a prompt section does not allocate, and
/// fault in, a fresh buffer of twice its size each time.
pub fn create_js_string<'e>(env: &'e Env, s: &str) -> Result<JsString<'e>> {
    if s.is_ascii() {
        return env.create_string_latin1(s.as_bytes());
    }
    if s.len() > UTF16_SCRATCH_MAX_BYTES {
        return env.create_string_utf16(crate::core::text::to_utf16(s));
    }
    UTF16_SCRATCH.with(|scratch| match scratch.try_borrow_mut() {
        Ok(mut buf) => env.create_string_utf16(crate::core::text::to_utf16_into(s, &mut buf)),
        // Not reached (V8 does not call back into the addon while it copies), but a
        // second borrow would only cost an allocation.
        Err(_) => env.create_string_utf16(crate::core::text::to_utf16(s)),
    })
}

/// The longest string (in UTF-8 bytes) whose UTF-16 conversion goes through the thread's
/// kept buffer; the buffer then holds at most twice this many bytes.
pub const UTF16_SCRATCH_MAX_BYTES: usize = 512 * 1024;

thread_local! {
    static UTF16_SCRATCH: std::cell::RefCell<Vec<u16>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Reads an id argument: a string that is well-formed Unicode (a lone surrogate would be
/// folded to U+FFFD and so merge two ids), with a `TypeError` naming `path` otherwise.
pub fn id_arg(env: &Env, func: &str, path: &str, v: &Unknown) -> Result<String> {
    let s = string_arg(env, func, path, v)?;
    if s.contains('\u{FFFD}') {
        // Only then can a lone surrogate have been folded: look at the UTF-16 units.
        // SAFETY: checked to be a string above.
        let js: JsString = unsafe { v.cast()? };
        let units = js.into_utf16()?;
        if input::has_lone_surrogate(units.as_slice()) {
            return Err(throw(env, func, &input::lone_surrogate_error(path)));
        }
    }
    Ok(s)
}

/// Reads a string argument, with a `TypeError` naming `path` otherwise.
pub fn string_arg(env: &Env, func: &str, path: &str, v: &Unknown) -> Result<String> {
    match v.get_type()? {
        ValueType::String => {
            // SAFETY: this arm is for strings.
            let s: JsString = unsafe { v.cast()? };
            Ok(s.into_utf8()?.into_owned()?)
        }
        _ => Err(throw(
            env,
            func,
            &InputError::type_error(path, format!("expected a string, got {}", describe(v))),
        )),
    }
}

/// A token budget argument: `undefined`/`null` give the default; anything but a finite,
/// non-negative number is an error.
pub fn budget_arg(
    env: &Env,
    func: &str,
    path: &str,
    v: Option<&Unknown>,
    default: u64,
) -> Result<u64> {
    let Some(v) = v else {
        return Ok(default);
    };
    // One look at the type (a budget is read on every call of the drop-in's thread path).
    match v.get_type()? {
        ValueType::Undefined | ValueType::Null => Ok(default),
        ValueType::Number => {
            // SAFETY: a number, as its type says.
            let n: f64 = unsafe { v.cast()? };
            input::budget_tokens(n, path).map_err(|e| throw(env, func, &e))
        }
        _ => Err(throw(
            env,
            func,
            &InputError::type_error(path, format!("expected a number, got {}", describe(v))),
        )),
    }
}

/// The system clock in epoch ms, as a JavaScript number.
pub(crate) fn now_ms() -> f64 {
    crate::core::time::system_now_ms() as f64
}

pub(crate) fn js_string<'e>(
    env: &Env,
    func: &str,
    path: &str,
    v: &Unknown<'e>,
) -> Result<JsString<'e>> {
    if v.get_type()? == ValueType::String {
        // SAFETY: this arm is for strings.
        return unsafe { v.cast() };
    }
    Err(throw(
        env,
        func,
        &InputError::type_error(path, format!("expected a string, got {}", describe(v))),
    ))
}
