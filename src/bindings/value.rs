//! What a JavaScript value is, as an error message names it.

use napi::{JsValue, Unknown, ValueType};

/// `typeof`-style name of a value, with `null` and arrays told apart.
pub fn describe(v: &Unknown) -> &'static str {
    match v.get_type() {
        Ok(ValueType::Undefined) => "undefined",
        Ok(ValueType::Null) => "null",
        Ok(ValueType::Boolean) => "boolean",
        Ok(ValueType::Number) => "number",
        Ok(ValueType::String) => "string",
        Ok(ValueType::Symbol) => "symbol",
        Ok(ValueType::BigInt) => "bigint",
        Ok(ValueType::Function) => "function",
        Ok(ValueType::Object) => match v.is_array() {
            Ok(true) => "array",
            _ => "object",
        },
        _ => "unknown",
    }
}

/// True for `undefined` and `null`.
pub fn is_nullish(v: &Unknown) -> bool {
    matches!(v.get_type(), Ok(ValueType::Undefined | ValueType::Null))
}
