//! A tool call's input as a JavaScript caller hands it (an object, or a string holding
//! one) read into JSON for [`crate::core::tool`]'s readers.

use crate::bindings::errors::clear_exception;
use crate::bindings::js::stringify;
use crate::core::tool::ToolError;
use napi::{Env, JsValue, Unknown, ValueType};
use serde_json::Value;

/// The tool input as JSON: an object, or a string holding one.
/// Parses tool input JSON: lone surrogates in text are folded to U+FFFD, in an id field
/// (`thread_id`, `message_ids`, ...) they are an error, since folding would turn the id
/// into another one.
fn parse_input(mut text: String) -> std::result::Result<Value, ToolError> {
    let fixes = crate::core::input::repair_lone_surrogates(&mut text);
    if let Some((_, key)) = crate::core::input::id_with_lone_surrogate(&text, &fixes) {
        return Err(ToolError::invalid(
            key,
            format!(
                "{key} {}.",
                crate::core::input::lone_surrogate_error(key).message
            ),
        ));
    }
    serde_json::from_str(&text)
        .map_err(|e| ToolError::invalid("", format!("The input is not valid JSON: {e}.")))
}

pub(crate) fn read_input(env: &Env, input: Unknown) -> std::result::Result<Value, ToolError> {
    if input.get_type().ok() == Some(ValueType::String) {
        let text = input
            .coerce_to_string()
            .and_then(napi::JsString::into_utf8)
            .and_then(napi::JsStringUtf8::into_owned)
            .map_err(|e| ToolError::invalid("", e.reason))?;
        return parse_input(text);
    }
    match stringify(env, input) {
        Ok(Some(text)) => parse_input(text),
        Ok(None) => Err(ToolError::invalid(
            "",
            "The input must be a JSON object, not undefined.",
        )),
        Err(e) => {
            clear_exception(env);
            Err(ToolError::invalid(
                "",
                format!("The input cannot be read as JSON: {}", e.reason),
            ))
        }
    }
}
