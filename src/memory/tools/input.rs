//! What the model may send: the tools' definitions (their names, descriptions and
//! input schemas) and the check of each input against them, naming the field at fault.

use super::{
    CURRENT_LANE, DEFAULT_AROUND, DEFAULT_EXPAND_TOKENS, DEFAULT_SEARCH_RESULTS, EXPAND_TOOL,
    MAX_AROUND, MAX_EXPAND_TOKENS, MAX_QUERY_CHARS, MAX_SEARCH_RESULTS, MIN_EXPAND_TOKENS,
    RECORD_PREFIX, SEARCH_TOOL,
};
use crate::core::time::{key_millis, parse_since};
use crate::core::tool::{object, opt_count, opt_str, opt_whole, required_text};
use crate::core::tool::{ToolDefinition, ToolError};
use serde_json::{json, Value};

/// A validated `conversation_search` input.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchInput {
    pub query: String,
    pub from_ms: Option<i64>,
    pub until_ms: Option<i64>,
    pub lane: Option<String>,
    pub max_results: usize,
}

/// A validated `conversation_expand` input.
#[derive(Debug, Clone, PartialEq)]
pub struct ExpandInput {
    pub id: String,
    pub before: usize,
    pub after: usize,
    pub max_tokens: u64,
}

/// Name, description and JSON Schema of each tool, for the Messages API `tools` parameter.
pub fn definitions() -> Vec<ToolDefinition> {
    vec![
        ToolDefinition {
            name: SEARCH_TOOL.to_string(),
            description: format!(
                "Search the stored history of this conversation: every earlier message of \
                 this chat word for word, including what is no longer in your context (older \
                 turns, earlier threads, what a summary stands for). Results are ranked by \
                 the words they share with `query` (BM25), a little by recency, each with its \
                 `id`, `lane` (the thread it is in), `role`, `date` and age; summaries and \
                 facts that match come under `memories`. Use {EXPAND_TOOL} with an id to read \
                 the messages around it. Only this chat is searched."
            ),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "query": {
                        "type": "string",
                        "minLength": 1,
                        "maxLength": MAX_QUERY_CHARS,
                        "description": "Words the messages you are looking for would contain: names, places, topics, numbers."
                    },
                    "since": {
                        "type": "string",
                        "description": "Only messages written at or after this time: an ISO 8601 date or date-time (2026-04-10, 2026-04-10T16:00:00Z) or a duration back from now (P7D, PT12H)."
                    },
                    "until": {
                        "type": "string",
                        "description": "Only messages written at or before this time: an ISO 8601 date (the whole day counts) or date-time, or a duration back from now (P1D)."
                    },
                    "lane": {
                        "type": "string",
                        "minLength": 1,
                        "description": format!("\"{CURRENT_LANE}\" to search this thread only, or a `lane` from a result to search that thread only (default: every thread of this chat).")
                    },
                    "max_results": {
                        "type": "integer",
                        "minimum": 1,
                        "description": format!("Messages to return (default {DEFAULT_SEARCH_RESULTS}; values above {MAX_SEARCH_RESULTS} are treated as {MAX_SEARCH_RESULTS}).")
                    }
                },
                "required": ["query"],
                "additionalProperties": false
            }),
        },
        ToolDefinition {
            name: EXPAND_TOOL.to_string(),
            description: format!(
                "Read stored messages of this conversation word for word. Give a message id \
                 (from {SEARCH_TOOL} or your context) to get that message with the turns \
                 before and after it in its thread, or a summary's id (`record:<n>`, from \
                 {SEARCH_TOOL}'s `memories`) to get the messages it summarizes, oldest first. \
                 At most `max_tokens` come back; `more_before` / `more_after` name the message \
                 to continue from."
            ),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "id": {
                        "type": "string",
                        "minLength": 1,
                        "description": "A message id, or a summary's `record:<n>`."
                    },
                    "before": {
                        "type": "integer",
                        "minimum": 0,
                        "description": format!("Turns before the message to include (default {DEFAULT_AROUND}, at most {MAX_AROUND}); not used for a summary.")
                    },
                    "after": {
                        "type": "integer",
                        "minimum": 0,
                        "description": format!("Turns after the message to include (default {DEFAULT_AROUND}, at most {MAX_AROUND}); not used for a summary.")
                    },
                    "max_tokens": {
                        "type": "integer",
                        "minimum": MIN_EXPAND_TOKENS,
                        "description": format!("Most tokens to return (default {DEFAULT_EXPAND_TOKENS}, at most {MAX_EXPAND_TOKENS}).")
                    }
                },
                "required": ["id"],
                "additionalProperties": false
            }),
        },
    ]
}

/// The error for a name that is neither tool.
pub fn unknown_tool(name: &str) -> String {
    ToolError {
        code: "unknown_tool",
        field: None,
        message: format!(
            "There is no tool named {name:?}; the tools are {SEARCH_TOOL} and {EXPAND_TOOL}."
        ),
    }
    .to_json(name)
}

/// A time bound of a search input, in ms since 1970; an `until` date alone means its
/// whole day.
fn time_bound(s: &str, field: &str, now_ms: i64) -> Result<i64, ToolError> {
    let now = u64::try_from(now_ms).unwrap_or(0);
    let key = parse_since(s, now).ok_or_else(|| {
        ToolError::invalid(
            field,
            format!("{field} {s:?} is not a time: give an ISO 8601 date or date-time (2026-04-10, 2026-04-10T16:00:00Z) or an ISO 8601 duration back from now (P7D)."),
        )
    })?;
    let ms = i64::try_from(key_millis(key)).unwrap_or(i64::MAX);
    let date_only = s.trim().len() == 10 && s.trim().as_bytes().get(4) == Some(&b'-');
    Ok(if field == "until" && date_only {
        ms.saturating_add(86_399_999)
    } else {
        ms
    })
}

/// Validates a `conversation_search` input.
pub fn search_input(input: &Value, now_ms: i64) -> Result<SearchInput, ToolError> {
    let map = object(input, &["query", "since", "until", "lane", "max_results"])?;
    let query = required_text(
        map,
        "query",
        MAX_QUERY_CHARS,
        "the words the messages you are looking for would contain",
        "give the words that matter",
    )?;
    let from_ms = opt_str(map, "since")?
        .map(|s| time_bound(s, "since", now_ms))
        .transpose()?;
    let until_ms = opt_str(map, "until")?
        .map(|s| time_bound(s, "until", now_ms))
        .transpose()?;
    if let (Some(f), Some(u)) = (from_ms, until_ms) {
        if f > u {
            return Err(ToolError::invalid(
                "until",
                "until is before since: no message can be in that window.",
            ));
        }
    }
    let max_results =
        opt_count(map, "max_results", MAX_SEARCH_RESULTS)?.unwrap_or(DEFAULT_SEARCH_RESULTS);
    Ok(SearchInput {
        query: query.to_string(),
        from_ms,
        until_ms,
        lane: opt_str(map, "lane")?.map(str::to_string),
        max_results: usize::try_from(max_results).unwrap_or(usize::MAX),
    })
}

/// Validates a `conversation_expand` input.
pub fn expand_input(input: &Value) -> Result<ExpandInput, ToolError> {
    let map = object(input, &["id", "before", "after", "max_tokens"])?;
    let Some(id) = opt_str(map, "id")? else {
        return Err(ToolError::invalid(
            "id",
            format!("id is required: a message id, or a summary's {RECORD_PREFIX}<n>."),
        ));
    };
    let around = |field| {
        opt_whole(map, field, 0, MAX_AROUND)
            .map(|n| usize::try_from(n.unwrap_or(DEFAULT_AROUND)).unwrap_or(0))
    };
    Ok(ExpandInput {
        id: id.to_string(),
        before: around("before")?,
        after: around("after")?,
        max_tokens: opt_whole(map, "max_tokens", MIN_EXPAND_TOKENS, MAX_EXPAND_TOKENS)?
            .unwrap_or(DEFAULT_EXPAND_TOKENS),
    })
}
