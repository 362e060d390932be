//! Errors as JavaScript sees them: `TypeError` / `RangeError` named after the export,
//! with `code` and `path` properties; what a caller's own code threw, named the same way
//! with the original as `cause`; and rejections for async exports.

use super::value::{describe, is_nullish};
use crate::core::input::{self, ErrorKind, InputError};
use napi::bindgen_prelude::*;
use napi::{Env, JsString, JsValue, ValueType};

/// Throws `e` as a `TypeError` or `RangeError` named after `func`, with `code`
/// (`ERR_INVALID_ARG_TYPE` / `ERR_OUT_OF_RANGE`) and `path` properties, and returns the
/// error that tells napi an exception is pending.
pub fn throw(env: &Env, func: &str, e: &InputError) -> Error {
    let msg = format!("{func}: {e}");
    throw_coded(env, e.kind, e.kind.code(), &msg, &e.path)
}

/// Throws a `TypeError` / `RangeError` with `message`, `code` and `path` properties.
pub(super) fn throw_coded(
    env: &Env,
    kind: ErrorKind,
    code: &str,
    message: &str,
    path: &str,
) -> Error {
    let make = || -> Result<napi::sys::napi_value> {
        let msg = env.create_string(message.replace('\0', "\u{FFFD}"))?;
        let code_js = env.create_string(code)?;
        let mut out = std::ptr::null_mut();
        // SAFETY: a valid env on the JS thread; the handles are of this scope and `out`
        // is a local.
        let status = unsafe {
            match kind {
                ErrorKind::Type => {
                    napi::sys::napi_create_type_error(env.raw(), code_js.raw(), msg.raw(), &mut out)
                }
                ErrorKind::Range => napi::sys::napi_create_range_error(
                    env.raw(),
                    code_js.raw(),
                    msg.raw(),
                    &mut out,
                ),
            }
        };
        if status != napi::sys::Status::napi_ok {
            return Err(Error::from_status(Status::from(status)));
        }
        let mut obj = Object::from_raw(env.raw(), out);
        obj.set_named_property("path", env.create_string(path)?)?;
        Ok(out)
    };
    match make() {
        Ok(err) => {
            // SAFETY: throwing an error object of this scope.
            unsafe { napi::sys::napi_throw(env.raw(), err) };
            Error::from_status(Status::PendingException)
        }
        Err(_) => {
            clear_exception(env);
            let thrown = match kind {
                ErrorKind::Type => env.throw_type_error(message, Some(code)),
                ErrorKind::Range => env.throw_range_error(message, Some(code)),
            };
            match thrown {
                Ok(()) => Error::from_status(Status::PendingException),
                Err(err) => err,
            }
        }
    }
}

/// Runs `read` (which reads a caller's input for export `func`) and names its failure:
/// when it failed with a JavaScript exception pending that this package did not throw (a caller's getter or Proxy trap, V8's own message
/// for a cycle, a BigInt or a revoked Proxy), that exception is replaced by a
/// `TypeError` `"{func}: {path}: cannot be read (...)"` whose `cause` is the original.
/// Errors already naming `func`, and running out of stack, pass unchanged.
pub fn named<T>(env: &Env, func: &str, path: &str, read: impl FnOnce() -> Result<T>) -> Result<T> {
    read().map_err(|e| unreadable(env, func, path, "cannot be read", e))
}

/// The error for a value of export `func` at `path` whose reading failed with `e`: the
/// pending exception passes unchanged when it already names `func` or the stack ran out
/// (its message says so, or cannot even be read); anything else becomes a `TypeError`
/// `"{func}: {path}: {what} (...)"` (`ERR_UNREADABLE_INPUT`) whose `cause` is the original.
pub(super) fn unreadable(env: &Env, func: &str, path: &str, what: &str, e: Error) -> Error {
    let mut raw = std::ptr::null_mut();
    // SAFETY: a valid env on the JS thread; the out pointer is a local.
    let status = unsafe { napi::sys::napi_get_and_clear_last_exception(env.raw(), &mut raw) };
    let taken = status == napi::sys::Status::napi_ok && !raw.is_null();
    // SAFETY: `raw` is the exception napi just handed over on this thread.
    let thrown = taken.then(|| unsafe { Unknown::from_raw_unchecked(env.raw(), raw) });
    let mut is_error = false;
    if taken {
        // SAFETY: valid handles of this scope; `is_error` is a local.
        unsafe { napi::sys::napi_is_error(env.raw(), raw, &mut is_error) };
    }
    // The message as data: an Error's `message`, or a thrown string. Nothing else runs
    // JavaScript while an error unwinds.
    let message = thrown.as_ref().and_then(|t| {
        let m = if is_error {
            // SAFETY: `napi_is_error` said the thrown value is an Error object.
            let o: Object = unsafe { t.cast().ok()? };
            o.get_named_property::<Unknown>("message").ok()?
        } else {
            *t
        };
        let text = (m.get_type().ok() == Some(ValueType::String))
            .then(|| {
                // SAFETY: checked to be a string just above.
                let s: JsString = unsafe { m.cast().ok()? };
                s.into_utf8().ok()?.into_owned().ok()
            })
            .flatten();
        clear_exception(env);
        text
    });
    if let Some(t) = &thrown {
        let ours = message
            .as_deref()
            .is_some_and(|m| m.starts_with(&format!("{func}: ")));
        let overflow = message
            .as_deref()
            .is_some_and(|m| m.contains("Maximum call stack size exceeded"));
        if ours || overflow || (is_error && message.is_none()) {
            // SAFETY: throwing the exception we took restores it.
            unsafe { napi::sys::napi_throw(env.raw(), t.raw()) };
            return Error::from_status(Status::PendingException);
        }
    }
    let why = match (&message, &thrown) {
        (Some(m), _) => m.clone(),
        (None, Some(t)) => format!("threw {}", describe(t)),
        (None, None) if !e.reason.is_empty() => e.reason.clone(),
        (None, None) => format!("{:?}", e.status),
    };
    let text = format!("{func}: {path}: {what} ({why})");
    let err = throw_coded(env, ErrorKind::Type, input::CODE_UNREADABLE, &text, path);
    if let Some(t) = thrown {
        // The cause is what the caller's code threw.
        let mut raw_err = std::ptr::null_mut();
        // SAFETY: a valid env on the JS thread; the out pointer is a local.
        let st = unsafe { napi::sys::napi_get_and_clear_last_exception(env.raw(), &mut raw_err) };
        if st == napi::sys::Status::napi_ok && !raw_err.is_null() {
            let mut obj = Object::from_raw(env.raw(), raw_err);
            let _ = obj.set_named_property("cause", t);
            clear_exception(env);
            // SAFETY: throwing the error object just taken back.
            unsafe { napi::sys::napi_throw(env.raw(), raw_err) };
        }
    }
    err
}

/// Throws an `Error` of export `func` with `code` (a storage fault, not an input error).
pub fn coded_error(env: &Env, func: &str, code: &str, message: &str) -> Error {
    match env.throw_error(&format!("{func}: {message}"), Some(code)) {
        Ok(()) => Error::from_status(Status::PendingException),
        Err(e) => e,
    }
}

/// An `Error` of export `func` with `code`, as a value (for a promise to reject with).
pub fn coded_error_value(env: &Env, func: &str, code: &str, message: &str) -> Error {
    let made = env
        .create_error(Error::from_reason(format!("{func}: {message}")))
        .and_then(|mut e| {
            e.set_named_property("code", code)?;
            Ok(Error::from(e.to_unknown()))
        });
    made.unwrap_or_else(|e| e)
}

/// For an async export: runs `start` (which returns the export's promise) and turns its
/// error, thrown or returned, into a rejected promise, so callers see one failure channel.
pub fn promised<'e>(
    env: &'e Env,
    start: impl FnOnce() -> Result<Unknown<'e>>,
) -> Result<Unknown<'e>> {
    start().or_else(|e| rejected(env, e))
}

/// For an async export: turns an error (thrown JS exception or Rust error) into a
/// rejected promise, so callers see one failure channel.
pub fn rejected<'e>(env: &'e Env, err: Error) -> Result<Unknown<'e>> {
    let mut raw = std::ptr::null_mut();
    // SAFETY: a valid env on the JS thread; the out pointer is a local.
    let status = unsafe { napi::sys::napi_get_and_clear_last_exception(env.raw(), &mut raw) };
    let pending = status == napi::sys::Status::napi_ok && !raw.is_null();
    let reason: Unknown = if pending {
        // SAFETY: `raw` is the exception value napi just handed over on this thread.
        let v = unsafe { Unknown::from_raw_unchecked(env.raw(), raw) };
        if is_nullish(&v) && err.status != Status::PendingException {
            env.create_error(err)?.to_unknown()
        } else {
            v
        }
    } else {
        env.create_error(err)?.to_unknown()
    };
    PromiseRaw::<()>::reject(env, reason).map(|p| p.to_unknown())
}

/// Takes the pending JavaScript exception, if any (to read it before throwing it again).
pub fn take_exception(env: &Env) -> Option<Unknown<'_>> {
    let mut raw = std::ptr::null_mut();
    // SAFETY: a valid env on the JS thread; the out pointer is a local.
    let status = unsafe { napi::sys::napi_get_and_clear_last_exception(env.raw(), &mut raw) };
    if status != napi::sys::Status::napi_ok || raw.is_null() {
        return None;
    }
    // SAFETY: `raw` is the exception value napi just handed over on this thread.
    Some(unsafe { Unknown::from_raw_unchecked(env.raw(), raw) })
}

/// Drops any exception a hostile getter or `toJSON` left pending.
pub fn clear_exception(env: &Env) {
    let mut ignored = std::ptr::null_mut();
    // SAFETY: a valid env on the JS thread; the out pointer is a local.
    unsafe {
        napi::sys::napi_get_and_clear_last_exception(env.raw(), &mut ignored);
    }
}
