//! What a fetcher resolved with from Discord's REST API: `GET /channels/{id}/messages`
//! (an array, newest first, paged with `before`) or `GET /channels/{id}/messages/{mid}`
//! (one message).

use super::message;
use crate::channel::slack::{Names, Page, ResponseError};
use crate::core::input::payload::{kind, nonempty};
use crate::core::input::InputError;
use serde_json::Value;

/// The message type of a thread's first message when the thread was started from a
/// message of its parent: it carries that message as `referenced_message`.
const THREAD_STARTER_MESSAGE: u64 = 21;

/// Whether `body` is in Discord's REST shape rather than Slack's or the neutral one.
pub fn is_discord_page(body: &Value) -> bool {
    match body {
        Value::Array(_) => true,
        Value::Object(o) => {
            (o.contains_key("id") && o.contains_key("channel_id"))
                || (o.contains_key("retry_after") && o.contains_key("message"))
        }
        _ => false,
    }
}

/// Reads one page. `thread` is the thread fetched (its messages are that thread's
/// replies; its starter message, when the page reaches it, is the root). When the page
/// holds `page_size` messages and has not reached the thread's first message, the next
/// page's cursor is the oldest id (the `before` of the next request).
pub fn fetched_page(
    body: &Value,
    thread: Option<&str>,
    page_size: usize,
    names: &dyn Names,
) -> Result<Page, ResponseError> {
    if let Some(after) = body.get("retry_after").and_then(Value::as_f64) {
        let what = nonempty(body, "message").unwrap_or("rate limited");
        return Err(ResponseError::Malformed(InputError::type_error(
            "result",
            format!("Discord answered \"{what}\" (retry after {after}s): a fetcher rejects with the 429 instead"),
        )));
    }
    let list: Vec<&Value> = match body {
        Value::Array(list) => list.iter().collect(),
        Value::Object(_) => vec![body],
        other => {
            return Err(ResponseError::Malformed(InputError::type_error(
                "result",
                format!("expected a message array, got {}", kind(other)),
            )))
        }
    };
    let mut messages = Vec::with_capacity(list.len());
    let mut oldest: Option<(usize, u64)> = None;
    // A thread's first message (the starter, or a forum post's own) ends its pages.
    let mut reached_start = false;
    for (i, m) in list.iter().enumerate() {
        let path = format!("result[{i}]");
        let id_num = nonempty(m, "id").and_then(|id| id.parse::<u64>().ok());
        if let Some(n) = id_num {
            if oldest.is_none_or(|(_, o)| n < o) {
                oldest = Some((i, n));
            }
        }
        let is_starter = m.get("type").and_then(Value::as_u64) == Some(THREAD_STARTER_MESSAGE);
        reached_start |= is_starter || (thread.is_some() && nonempty(m, "id") == thread);
        if is_starter {
            // The root lives in the parent channel: the starter carries it.
            if let Some(root) = m.get("referenced_message").filter(|r| r.is_object()) {
                let root = message(root, &format!("{path}.referenced_message"), None, names)
                    .map_err(ResponseError::Malformed)?;
                messages.push(root);
            }
            continue;
        }
        messages.push(message(m, &path, thread, names).map_err(ResponseError::Malformed)?);
    }
    let full = body.is_array() && list.len() >= page_size && page_size > 0 && !reached_start;
    let next_cursor = oldest
        .filter(|_| full)
        .and_then(|(i, _)| nonempty(list[i], "id"))
        .map(str::to_string);
    Ok(Page {
        messages,
        next_cursor,
    })
}
