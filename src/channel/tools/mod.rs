//! The two channel-scoped tools, over the store: `channel_context` (ranked
//! search) and `channel_messages` (a thread, messages or a media artifact by id).
//!
//! A tool set is created for one channel and no input names a channel, so a tool can
//! only reach what the store holds (or fetches) for that channel. Inputs are validated
//! against the schema the definitions publish; a bad call from the model becomes a JSON
//! error it can read and correct, never an exception.

pub mod channel_context;
pub mod channel_messages;
pub mod input;
pub mod media;
pub mod options;

use serde_json::{json, Value};

/// Search tool name, valid for the Messages API (`^[a-zA-Z0-9_-]{1,64}$`).
pub const CONTEXT_TOOL: &str = "channel_context";
/// Fetch tool name, valid for the Messages API.
pub const MESSAGES_TOOL: &str = "channel_messages";
/// The dotted names of the original runner, accepted as aliases by `execute`.
pub const CONTEXT_TOOL_DOTTED: &str = "channel.context";
pub const MESSAGES_TOOL_DOTTED: &str = "channel.messages";

/// Results of `channel_context` unless `max_results` says otherwise.
pub const DEFAULT_MAX_RESULTS: u64 = 8;
/// `max_results` above this is treated as this.
pub const MAX_RESULTS_LIMIT: u64 = 50;
/// Replies of a thread unless `max_replies` says otherwise.
pub const DEFAULT_MAX_REPLIES: u64 = 50;
/// `max_replies` above this is treated as this.
pub const MAX_REPLIES_LIMIT: u64 = 1_000;
/// Message ids in one `channel_messages` call.
pub const MAX_MESSAGE_IDS: usize = 50;
/// Longest `intent`, in characters.
pub const MAX_INTENT_CHARS: usize = 2_000;
/// Names in `authors`.
pub const MAX_AUTHORS: usize = 20;
/// Media larger than this come back as a text reference instead of bytes (5 MB, the
/// Messages API's limit for one image).
pub const DEFAULT_MAX_MEDIA_BYTES: u64 = 5 * 1024 * 1024;

/// Which tool a name means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    Context,
    Messages,
}

impl Tool {
    /// The tool for an API name or its dotted alias.
    pub fn resolve(name: &str) -> Option<Tool> {
        match name {
            CONTEXT_TOOL | CONTEXT_TOOL_DOTTED => Some(Tool::Context),
            MESSAGES_TOOL | MESSAGES_TOOL_DOTTED => Some(Tool::Messages),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Tool::Context => CONTEXT_TOOL,
            Tool::Messages => MESSAGES_TOOL,
        }
    }
}

pub use crate::core::tool::{ToolDefinition, ToolError};

/// The error for a name that is neither tool.
pub fn unknown_tool(name: &str) -> String {
    ToolError {
        code: "unknown_tool",
        field: None,
        message: format!(
            "There is no tool named {name:?}; the tools are {CONTEXT_TOOL} and {MESSAGES_TOOL}."
        ),
    }
    .to_json(name)
}

/// Name, description and JSON Schema of each tool. `dotted` uses the runner's dotted names
/// (`channel.context`), which the Messages API does not accept as tool names.
pub fn definitions(dotted: bool) -> Vec<ToolDefinition> {
    let (context, messages) = if dotted {
        (CONTEXT_TOOL_DOTTED, MESSAGES_TOOL_DOTTED)
    } else {
        (CONTEXT_TOOL, MESSAGES_TOOL)
    };
    vec![
        ToolDefinition {
            name: context.to_string(),
            description: format!(
                "Search this channel's messages and threads for context beyond the snapshot. \
                 Describe what you need in `intent`; results are ranked by keyword relevance \
                 (BM25), recency and thread activity, each with a `relevance_signal` saying why \
                 it ranked and a `thread_summary` when it belongs to a thread. Use {messages} \
                 with a result's `thread_id` to read the whole thread. Only this channel is \
                 searched."
            ),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "intent": {
                        "type": "string",
                        "minLength": 1,
                        "maxLength": MAX_INTENT_CHARS,
                        "description": "What you are trying to understand or find, in your own words (any language)."
                    },
                    "since": {
                        "type": "string",
                        "description": "Only messages at or after this time: an ISO 8601 date or date-time (2026-04-10, 2026-04-10T16:00:00Z), a Slack ts (1775853170.228819), or an ISO 8601 duration back from now (P7D, PT12H)."
                    },
                    "authors": {
                        "type": "array",
                        "items": { "type": "string", "minLength": 1 },
                        "maxItems": MAX_AUTHORS,
                        "description": "Boost messages by these people (display names or user ids)."
                    },
                    "max_results": {
                        "type": "integer",
                        "minimum": 1,
                        "description": format!("Results to return (default {DEFAULT_MAX_RESULTS}; values above {MAX_RESULTS_LIMIT} are treated as {MAX_RESULTS_LIMIT}).")
                    }
                },
                "required": ["intent"],
                "additionalProperties": false
            }),
        },
        ToolDefinition {
            name: messages.to_string(),
            description: "Fetch specific content of this channel by id: a whole thread \
                 (`thread_id`, root plus the newest replies), specific messages \
                 (`message_ids`), or a media attachment as a content block \
                 (`media_artifact_id`). Give at least one of the three. Ids come from the \
                 snapshot, the thread context or channel_context results. Ids of other \
                 channels are not found."
                .replace("channel_context", context),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "thread_id": {
                        "type": "string",
                        "minLength": 1,
                        "description": "Id (ts) of a thread's root message: returns the root and replies."
                    },
                    "message_ids": {
                        "type": "array",
                        "items": { "type": "string", "minLength": 1 },
                        "minItems": 1,
                        "maxItems": MAX_MESSAGE_IDS,
                        "description": "Ids (ts) of messages to return in full."
                    },
                    "media_artifact_id": {
                        "type": "string",
                        "minLength": 1,
                        "description": "Id of a file attached to a message (media[].artifact_id)."
                    },
                    "max_replies": {
                        "type": "integer",
                        "minimum": 1,
                        "description": format!("For thread_id: the newest replies to return (default {DEFAULT_MAX_REPLIES}; values above {MAX_REPLIES_LIMIT} are treated as {MAX_REPLIES_LIMIT}); older ones are reported as omitted.")
                    }
                },
                "additionalProperties": false
            }),
        },
    ]
}

#[cfg(test)]
mod tests;
