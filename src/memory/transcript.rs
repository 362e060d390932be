//! Transcripts as gateways keep them, read down to their user and assistant text turns.
//!
//! A JSONL transcript holds one entry per line, in either form:
//! - Claude Code: `{"type":"user"|"assistant","message":{"role":...,"content":...},
//!   "timestamp":"<ISO 8601>"}`;
//! - Pi / OpenClaw: `{"type":"message","message":{"role":"user"|"assistant"|"toolResult",
//!   "content":...,"timestamp":<epoch ms>}}`.
//!
//! `content` is a string or a list of blocks; only `text` blocks are kept. Tool calls
//! (`tool_use`, `toolCall`), tool results (`tool_result`, `toolResult` entries), thinking,
//! images and system or custom entries carry no conversation and are dropped, so a turn
//! that only called tools leaves nothing. Lines that are not JSON are skipped.

use super::history::Turn;
use crate::time::{key_millis, parse_iso};
use serde_json::Value;

/// The text of a message's `content`: a string, or its `text` blocks joined by a newline.
fn content_text(content: &Value) -> Option<String> {
    match content {
        Value::String(s) => Some(s.clone()),
        Value::Array(blocks) => {
            let texts: Vec<&str> = blocks
                .iter()
                .filter(|b| b["type"] == "text")
                .filter_map(|b| b["text"].as_str())
                .collect();
            (!texts.is_empty()).then(|| texts.join("\n"))
        }
        _ => None,
    }
}

/// Epoch ms of an entry: the message's numeric `timestamp`, else the entry's (a number or
/// an ISO 8601 string).
fn entry_ms(entry: &Value, message: &Value) -> Option<i64> {
    let read = |v: &Value| -> Option<i64> {
        if let Some(n) = v.as_f64().filter(|n| n.is_finite()) {
            #[allow(clippy::cast_possible_truncation)] // finite; saturates
            return Some(n as i64);
        }
        v.as_str()
            .and_then(parse_iso)
            .and_then(|k| i64::try_from(key_millis(k)).ok())
    };
    read(&message["timestamp"]).or_else(|| read(&entry["timestamp"]))
}

/// One transcript entry as a turn, or `None` when it is not a user or assistant text turn.
pub fn entry_turn(entry: &Value) -> Option<Turn> {
    let message = if entry["message"].is_object() {
        &entry["message"]
    } else {
        entry
    };
    let role = message["role"]
        .as_str()
        .or_else(|| entry["type"].as_str())?;
    let human = match role {
        "user" | "human" => true,
        "assistant" => false,
        _ => return None,
    };
    let text = content_text(&message["content"])?;
    if text.trim().is_empty() {
        return None;
    }
    Some(Turn {
        human,
        text,
        ts_ms: entry_ms(entry, message),
    })
}

/// The text turns of a JSONL transcript, in order.
pub fn parse_jsonl(text: &str) -> Vec<Turn> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|e| entry_turn(&e))
        .collect()
}

#[cfg(test)]
mod tests;
