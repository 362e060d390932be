//! A tool call as the model makes it and as it is answered: the Messages API tool
//! definition, the error the model reads when a call cannot be carried out, and the
//! readers of a call's JSON input, each naming the field it refuses and saying what
//! would be accepted (`null` counts as absent). The channel's and the memory's tools both
//! read their input through these.

use napi_derive::napi;
use serde::Serialize;
use serde_json::{json, Map, Value};

/// A tool as the Messages API `tools` parameter takes it.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolDefinition {
    pub name: String,
    pub description: String,
    /// JSON Schema of the input (`type: "object"`, `additionalProperties: false`); the
    /// whole definition is assignable to `@anthropic-ai/sdk`'s `Tool`.
    #[napi(
        js_name = "input_schema",
        ts_type = "{ type: 'object'; properties: Record<string, unknown>; required?: string[]; [key: string]: unknown }"
    )]
    pub input_schema: Value,
}

/// A call the tool could not carry out, as the model reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolError {
    /// `invalid_input`, `unknown_tool`.
    pub code: &'static str,
    pub field: Option<String>,
    pub message: String,
}

impl ToolError {
    pub fn invalid(field: &str, message: impl Into<String>) -> Self {
        ToolError {
            code: "invalid_input",
            field: (!field.is_empty()).then(|| field.to_string()),
            message: message.into(),
        }
    }

    /// `{"error":{"code","tool","field","message"}}`.
    pub fn to_json(&self, tool: &str) -> String {
        let mut e = serde_json::Map::new();
        e.insert("code".into(), json!(self.code));
        e.insert("tool".into(), json!(tool));
        if let Some(f) = &self.field {
            e.insert("field".into(), json!(f));
        }
        e.insert("message".into(), json!(self.message));
        json!({ "error": e }).to_string()
    }
}

/// What kind of JSON value `v` is, as an error message names it.
pub fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

pub fn object<'a>(input: &'a Value, known: &[&str]) -> Result<&'a Map<String, Value>, ToolError> {
    let Value::Object(map) = input else {
        return Err(ToolError::invalid(
            "",
            format!("The input must be a JSON object, not {}.", kind(input)),
        ));
    };
    if let Some(k) = map.keys().find(|k| !known.contains(&k.as_str())) {
        return Err(ToolError::invalid(
            k,
            format!("Unknown field {k:?}; the fields are {}.", known.join(", ")),
        ));
    }
    Ok(map)
}

pub fn opt_str<'a>(map: &'a Map<String, Value>, field: &str) -> Result<Option<&'a str>, ToolError> {
    match map.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.trim().is_empty() => Err(ToolError::invalid(
            field,
            format!("{field} must not be empty."),
        )),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(v) => Err(ToolError::invalid(
            field,
            format!("{field} must be a string, not {}.", kind(v)),
        )),
    }
}

pub fn opt_str_array(
    map: &Map<String, Value>,
    field: &str,
    max_items: usize,
) -> Result<Option<Vec<String>>, ToolError> {
    let items = match map.get(field) {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Array(a)) => a,
        Some(v) => {
            return Err(ToolError::invalid(
                field,
                format!("{field} must be an array of strings, not {}.", kind(v)),
            ))
        }
    };
    if items.len() > max_items {
        return Err(ToolError::invalid(
            field,
            format!(
                "{field} has {} items; at most {max_items} are allowed per call.",
                items.len()
            ),
        ));
    }
    items
        .iter()
        .enumerate()
        .map(|(i, v)| match v {
            Value::String(s) if !s.trim().is_empty() => Ok(s.trim().to_string()),
            Value::String(_) => Err(ToolError::invalid(
                &format!("{field}[{i}]"),
                format!("{field}[{i}] must not be empty."),
            )),
            v => Err(ToolError::invalid(
                &format!("{field}[{i}]"),
                format!("{field}[{i}] must be a string, not {}.", kind(v)),
            )),
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

/// An integer of at least 1; values above `clamp` become `clamp`.
pub fn opt_count(
    map: &Map<String, Value>,
    field: &str,
    clamp: u64,
) -> Result<Option<u64>, ToolError> {
    opt_whole(map, field, 1, clamp)
}

/// An integer of at least `min`; values above `clamp` become `clamp`.
pub fn opt_whole(
    map: &Map<String, Value>,
    field: &str,
    min: u64,
    clamp: u64,
) -> Result<Option<u64>, ToolError> {
    let v = match map.get(field) {
        None | Some(Value::Null) => return Ok(None),
        Some(v) => v,
    };
    let bad = |what: String| {
        Err(ToolError::invalid(
            field,
            format!("{field} must be an integer of at least {min} (got {what})."),
        ))
    };
    let Value::Number(n) = v else {
        return bad(kind(v).to_string());
    };
    if let Some(u) = n.as_u64() {
        return if u < min {
            bad(n.to_string())
        } else {
            Ok(Some(u.min(clamp)))
        };
    }
    match n.as_f64() {
        Some(f) if f.fract() == 0.0 && f >= min as f64 => {
            Ok(Some(if f >= clamp as f64 { clamp } else { f as u64 }))
        }
        _ => bad(n.to_string()),
    }
}

/// A required string field of at most `max` characters: `missing` says what it should
/// hold, `too_long` what to do instead.
pub fn required_text<'a>(
    map: &'a Map<String, Value>,
    field: &str,
    max: usize,
    missing: &str,
    too_long: &str,
) -> Result<&'a str, ToolError> {
    let Some(text) = opt_str(map, field)? else {
        return Err(ToolError::invalid(
            field,
            format!("{field} is required: {missing}."),
        ));
    };
    if text.chars().count() > max {
        return Err(ToolError::invalid(
            field,
            format!("{field} is longer than {max} characters; {too_long}."),
        ));
    }
    Ok(text)
}
