//! Reading the fields of a platform's payload (a Slack event, a Discord Gateway
//! dispatch, a Telegram update) with errors that name the field's path.

use super::InputError;
use serde_json::Value;

/// The JSON type of `v`, as an error message names it.
pub fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The string at `key`, if it is one.
pub fn str_at<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// The string at `key`, if it is a non-empty one.
pub fn nonempty<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    str_at(v, key).filter(|s| !s.is_empty())
}

/// The error for a required field `path.key` that is absent.
fn missing(key: &str, path: &str) -> InputError {
    InputError::type_error(format!("{path}.{key}"), "is required")
}

/// The error for field `path.key` holding `v` where `expected` belongs.
fn wrong(key: &str, path: &str, expected: &str, v: &Value) -> InputError {
    InputError::type_error(
        format!("{path}.{key}"),
        format!("expected {expected}, got {}", kind(v)),
    )
}

/// The non-empty string at `key`, or an error naming `path.key`.
pub fn req_str(v: &Value, key: &str, path: &str) -> Result<String, InputError> {
    match v.get(key) {
        Some(Value::String(s)) if !s.is_empty() => Ok(s.clone()),
        Some(Value::String(_)) => Err(InputError::type_error(
            format!("{path}.{key}"),
            "expected a non-empty string",
        )),
        Some(other) => Err(wrong(key, path, "a string", other)),
        None => Err(missing(key, path)),
    }
}

/// The object at `key`, or an error naming `path.key`.
pub fn req_object<'a>(v: &'a Value, key: &str, path: &str) -> Result<&'a Value, InputError> {
    match v.get(key) {
        Some(o) if o.is_object() => Ok(o),
        Some(other) => Err(wrong(key, path, "an object", other)),
        None => Err(missing(key, path)),
    }
}

/// The object at `key` when there is one; an error naming `path.key` when the field
/// holds something else (null counts as absent, as the platforms send it).
pub fn opt_object<'a>(
    v: &'a Value,
    key: &str,
    path: &str,
) -> Result<Option<&'a Value>, InputError> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(o) if o.is_object() => Ok(Some(o)),
        Some(other) => Err(wrong(key, path, "an object", other)),
    }
}

/// The string at `key` when there is one; an error naming `path.key` when the field
/// holds something else (null counts as absent).
pub fn opt_str<'a>(v: &'a Value, key: &str, path: &str) -> Result<Option<&'a str>, InputError> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(wrong(key, path, "a string", other)),
    }
}

/// An id at `key` that a platform sends as a whole number (Telegram's chat and message
/// ids), as its decimal text; an error naming `path.key` otherwise.
pub fn req_int_id(v: &Value, key: &str, path: &str) -> Result<i64, InputError> {
    match v.get(key) {
        Some(Value::Number(n)) => n.as_i64().ok_or_else(|| {
            InputError::type_error(
                format!("{path}.{key}"),
                format!("expected a whole number, got {n}"),
            )
        }),
        Some(other) => Err(wrong(key, path, "a number", other)),
        None => Err(missing(key, path)),
    }
}
