//! Validating a tool call's input against the published schema, with errors that name
//! the field and say what would be accepted. `null` counts as absent.

use super::*;
use crate::time::{parse_since, TsKey};
use serde_json::Map;

/// A validated `channel_context` input.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextInput {
    pub intent: String,
    pub since: Option<TsKey>,
    pub authors: Vec<String>,
    pub max_results: usize,
}

/// A validated `channel_messages` input.
#[derive(Debug, Clone, PartialEq)]
pub struct MessagesInput {
    pub thread_id: Option<String>,
    pub message_ids: Vec<String>,
    pub media_artifact_id: Option<String>,
    pub max_replies: usize,
}

pub(crate) fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

pub(crate) fn object<'a>(
    input: &'a Value,
    known: &[&str],
) -> Result<&'a Map<String, Value>, ToolError> {
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

pub(crate) fn opt_str<'a>(
    map: &'a Map<String, Value>,
    field: &str,
) -> Result<Option<&'a str>, ToolError> {
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

fn opt_str_array(
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
pub(crate) fn opt_count(
    map: &Map<String, Value>,
    field: &str,
    clamp: u64,
) -> Result<Option<u64>, ToolError> {
    opt_whole(map, field, 1, clamp)
}

/// An integer of at least `min`; values above `clamp` become `clamp`.
pub(crate) fn opt_whole(
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
pub(crate) fn required_text<'a>(
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

/// Validates a `channel_context` input; `now_ms` resolves a duration in `since`.
pub fn context_input(input: &Value, now_ms: u64) -> Result<ContextInput, ToolError> {
    let map = object(input, &["intent", "since", "authors", "max_results"])?;
    let intent = required_text(
        map,
        "intent",
        MAX_INTENT_CHARS,
        "describe what you are looking for",
        "describe what you need more briefly",
    )?;
    let since = match opt_str(map, "since")? {
        None => None,
        Some(s) => Some(parse_since(s, now_ms).ok_or_else(|| {
            ToolError::invalid(
                "since",
                format!("since {s:?} is not a time: give an ISO 8601 date or date-time (2026-04-10, 2026-04-10T16:00:00Z), a Slack ts (1775853170.228819) or an ISO 8601 duration (P7D)."),
            )
        })?),
    };
    let authors = opt_str_array(map, "authors", MAX_AUTHORS)?.unwrap_or_default();
    let max_results =
        opt_count(map, "max_results", MAX_RESULTS_LIMIT)?.unwrap_or(DEFAULT_MAX_RESULTS);
    Ok(ContextInput {
        intent: intent.to_string(),
        since,
        authors,
        max_results: max_results as usize,
    })
}

/// Validates a `channel_messages` input.
pub fn messages_input(input: &Value) -> Result<MessagesInput, ToolError> {
    let map = object(
        input,
        &[
            "thread_id",
            "message_ids",
            "media_artifact_id",
            "max_replies",
        ],
    )?;
    let thread_id = opt_str(map, "thread_id")?.map(|s| s.trim().to_string());
    let message_ids = opt_str_array(map, "message_ids", MAX_MESSAGE_IDS)?;
    if message_ids.as_ref().is_some_and(Vec::is_empty) {
        return Err(ToolError::invalid(
            "message_ids",
            "message_ids must list at least one id.",
        ));
    }
    let media_artifact_id = opt_str(map, "media_artifact_id")?.map(|s| s.trim().to_string());
    let max_replies =
        opt_count(map, "max_replies", MAX_REPLIES_LIMIT)?.unwrap_or(DEFAULT_MAX_REPLIES);
    if thread_id.is_none() && message_ids.is_none() && media_artifact_id.is_none() {
        return Err(ToolError::invalid(
            "",
            "Give at least one of thread_id, message_ids or media_artifact_id.",
        ));
    }
    Ok(MessagesInput {
        thread_id,
        message_ids: message_ids.unwrap_or_default(),
        media_artifact_id,
        max_replies: max_replies as usize,
    })
}

#[cfg(test)]
mod tests;
