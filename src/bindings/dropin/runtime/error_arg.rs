//! A caller's error argument (an `Error`, an Anthropic `APIError`, a plain object or a
//! string) read into what the overflow and resume decisions look at.

use crate::bindings::errors::{clear_exception, throw};
use crate::bindings::js::{describe, json_value};
use crate::core::input::InputError;
use crate::dropin::runtime::error::ErrorInfo;
use napi::bindgen_prelude::*;
use napi::{Env, JsString, ValueType};
use serde_json::Value;

/// Reads an error argument (an `Error`, an Anthropic `APIError`, a plain object or a
/// string) into JSON, own non-enumerable `message`/`name` included. Getters that throw
/// are skipped.
fn error_value(env: &Env, v: &Unknown) -> Result<Value> {
    match v.get_type()? {
        ValueType::String => {
            // SAFETY: this arm is for strings.
            let s: JsString = unsafe { v.cast()? };
            Ok(Value::String(s.into_utf8()?.into_owned()?))
        }
        ValueType::Object => {
            // SAFETY: this arm is for objects.
            let o: Object = unsafe { v.cast()? };
            let mut m = serde_json::Map::new();
            for key in [
                "name",
                "message",
                "code",
                "status",
                "statusCode",
                "type",
                "subtype",
                "error",
                "errors",
            ] {
                let Ok(p) = o.get_named_property::<Unknown>(key) else {
                    clear_exception(env);
                    continue;
                };
                let value = match p.get_type()? {
                    ValueType::String => {
                        // SAFETY: this arm is for strings.
                        let s: JsString = unsafe { p.cast()? };
                        Value::String(s.into_utf8()?.into_owned()?)
                    }
                    ValueType::Number => {
                        // SAFETY: this arm is for numbers.
                        let n: f64 = unsafe { p.cast()? };
                        if n.fract() == 0.0 && n.abs() < 9_007_199_254_740_992.0 {
                            Value::from(n as i64)
                        } else {
                            serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number)
                        }
                    }
                    ValueType::Object => json_value(env, p)?,
                    _ => Value::Null,
                };
                if !value.is_null() {
                    m.insert(key.to_string(), value);
                }
            }
            Ok(Value::Object(m))
        }
        _ => Ok(Value::Null),
    }
}

pub(super) fn error_arg(env: &Env, func: &str, path: &str, v: &Unknown) -> Result<ErrorInfo> {
    let value = error_value(env, v)?;
    if value.is_null() {
        return Err(throw(
            env,
            func,
            &InputError::type_error(
                path,
                format!(
                    "expected an Error, an object or a string, got {}",
                    describe(v)
                ),
            ),
        ));
    }
    Ok(ErrorInfo::from_value(&value))
}
