//! Validating a tool call's input against the published schema, with errors that name
//! the field and say what would be accepted. `null` counts as absent.

use super::*;
use crate::core::time::{parse_since, TsKey};
use crate::core::tool::{object, opt_count, opt_str, opt_str_array, required_text};

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
