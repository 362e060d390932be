//! Slack adapters: Events API payloads and Web API responses (`conversations.history`,
//! `conversations.replies`) into the store's neutral events and messages.
//!
//! Field names are Slack's: `ts` is a message's id, `thread_ts` the id of its thread
//! (equal to `ts` on a thread's root), `subtype` tells bot messages, broadcasts, file
//! shares, edits and deletions apart. Names come from the payload (`user_profile`,
//! `username`, `bot_profile`) or from the store's user directory; a bare user id is the
//! last resort.

pub mod markup;
pub mod users;

use crate::channel::message::{Event, Extras, ExtrasBox, Reaction, StoredFile, StoredMessage};
use crate::core::input::payload::{kind, nonempty, opt_str, req_str, str_at};
use crate::core::input::InputError;
use crate::core::model::{Author, MediaRef, MessageInput};
use crate::core::time::ts_key;
use serde::Deserialize;
use serde_json::Value;

pub use markup::{Names, NoNames};

/// Message subtypes that carry a message to store.
const STORED_SUBTYPES: [&str; 5] = [
    "bot_message",
    "thread_broadcast",
    "file_share",
    "me_message",
    "reply_broadcast",
];

/// The author of a Slack message.
fn author(m: &Value, names: &dyn Names) -> Author {
    let user = nonempty(m, "user");
    let bot_id = nonempty(m, "bot_id");
    let is_bot_subtype = str_at(m, "subtype") == Some("bot_message");
    let profile = m.get("user_profile");
    let from_profile =
        profile.and_then(|p| nonempty(p, "display_name").or_else(|| nonempty(p, "real_name")));
    let bot_name =
        nonempty(m, "username").or_else(|| m.get("bot_profile").and_then(|b| nonempty(b, "name")));
    let known = user.or(bot_id).and_then(|id| names.user(id));
    let user_id = user.or(bot_id).unwrap_or("unknown").to_string();
    let is_bot = bot_id.is_some() || is_bot_subtype || known.as_ref().is_some_and(|k| k.1);
    let display_name = known
        .map(|k| k.0)
        .or_else(|| from_profile.map(str::to_string))
        .or_else(|| bot_name.map(str::to_string))
        .unwrap_or_else(|| user_id.clone());
    Author {
        user_id,
        display_name,
        is_bot,
    }
}

fn files(m: &Value) -> Vec<StoredFile> {
    let Some(Value::Array(fs)) = m.get("files") else {
        return Vec::new();
    };
    fs.iter()
        .filter(|f| !matches!(str_at(f, "mode"), Some("tombstone" | "hidden_by_limit")))
        .filter_map(|f| {
            let id = nonempty(f, "id")?;
            Some(StoredFile {
                media: MediaRef {
                    artifact_id: id.to_string(),
                    media_type: nonempty(f, "mimetype")
                        .unwrap_or("application/octet-stream")
                        .to_string(),
                    filename: nonempty(f, "name")
                        .or_else(|| nonempty(f, "title"))
                        .map(str::to_string),
                    byte_length: f.get("size").and_then(Value::as_u64).unwrap_or(0),
                },
                url: nonempty(f, "url_private_download")
                    .or_else(|| nonempty(f, "url_private"))
                    .map(str::to_string),
            })
        })
        .collect()
}

fn reactions(m: &Value) -> Vec<Reaction> {
    let Some(Value::Array(rs)) = m.get("reactions") else {
        return Vec::new();
    };
    rs.iter()
        .filter_map(|r| {
            let name = nonempty(r, "name")?;
            let users: Vec<String> = match r.get("users") {
                Some(Value::Array(us)) => us
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect(),
                _ => Vec::new(),
            };
            let count = r
                .get("count")
                .and_then(Value::as_u64)
                .unwrap_or(users.len() as u64);
            (count > 0).then(|| Reaction {
                name: name.to_string(),
                count,
                users,
            })
        })
        .collect()
}

/// Converts one Slack message object (from an event or a Web API response).
pub fn message(m: &Value, path: &str, names: &dyn Names) -> Result<StoredMessage, InputError> {
    if !m.is_object() {
        return Err(InputError::type_error(
            path,
            format!("expected a message object, got {}", kind(m)),
        ));
    }
    let ts = req_str(m, "ts", path)?;
    let key = ts_key(&ts).ok_or_else(|| {
        InputError::type_error(
            format!("{path}.ts"),
            format!("expected a Slack ts such as \"1775835600.000100\", got {ts:?}"),
        )
    })?;
    let thread_id = nonempty(m, "thread_ts")
        .filter(|t| *t != ts)
        .map(str::to_string);
    let subtype = str_at(m, "subtype");
    Ok(StoredMessage {
        other_id: None,
        key,
        author: std::sync::Arc::new(author(m, names)),
        text: markup::plain_text(opt_str(m, "text", path)?.unwrap_or(""), names).into(),
        broadcast: thread_id.is_some()
            && matches!(subtype, Some("thread_broadcast" | "reply_broadcast")),
        thread_id: thread_id.map(Into::into),
        extras: ExtrasBox::new(Extras {
            reply_count: m.get("reply_count").and_then(Value::as_u64).unwrap_or(0),
            latest_reply: nonempty(m, "latest_reply").map(str::to_string),
            reactions: reactions(m),
            files: files(m),
            reply_to: None,
        }),
        edited: m.get("edited").is_some_and(Value::is_object),
        ts: ts.into(),
        cache: Default::default(),
    })
}

/// The workspace a payload belongs to.
fn team(payload: &Value, event: &Value) -> Option<String> {
    nonempty(payload, "team_id")
        .or_else(|| nonempty(event, "team"))
        .or_else(|| nonempty(event, "user_team"))
        .map(str::to_string)
}

/// Converts an Events API payload (the `event_callback` envelope, or a bare event) into
/// store events. Payloads the store has no use for (`url_verification`, `channel_join`,
/// reactions to files, ...) become one `Ignored` event.
pub fn event_payload(payload: &Value, names: &dyn Names) -> Result<Event, InputError> {
    if !payload.is_object() {
        return Err(InputError::type_error(
            "payload",
            format!("expected an object, got {}", kind(payload)),
        ));
    }
    let envelope = str_at(payload, "type").unwrap_or("");
    let (event, path) = if envelope == "event_callback" {
        match payload.get("event") {
            Some(e) if e.is_object() => (e, "payload.event"),
            Some(e) => {
                return Err(InputError::type_error(
                    "payload.event",
                    format!("expected an object, got {}", kind(e)),
                ))
            }
            None => return Err(InputError::type_error("payload.event", "is required")),
        }
    } else {
        (payload, "payload")
    };
    let kind_of = str_at(event, "type").unwrap_or("").to_string();
    match kind_of.as_str() {
        "message" => message_event(payload, event, path, names),
        "reaction_added" | "reaction_removed" => {
            let item = match event.get("item") {
                Some(i) if i.is_object() => i,
                _ => {
                    return Err(InputError::type_error(
                        format!("{path}.item"),
                        "is required",
                    ))
                }
            };
            if str_at(item, "type") != Some("message") {
                return Ok(Event::Ignored {
                    kind: format!("{kind_of}/{}", str_at(item, "type").unwrap_or("unknown")),
                });
            }
            Ok(Event::Reaction {
                channel: req_str(item, "channel", &format!("{path}.item"))?,
                message_id: req_str(item, "ts", &format!("{path}.item"))?,
                name: req_str(event, "reaction", path)?,
                user: nonempty(event, "user").map(str::to_string),
                added: kind_of == "reaction_added",
            })
        }
        "" => Ok(Event::Ignored {
            kind: if envelope.is_empty() {
                "unknown".to_string()
            } else {
                envelope.to_string()
            },
        }),
        _ => Ok(Event::Ignored { kind: kind_of }),
    }
}

fn message_event(
    payload: &Value,
    event: &Value,
    path: &str,
    names: &dyn Names,
) -> Result<Event, InputError> {
    let channel = req_str(event, "channel", path)?;
    match str_at(event, "subtype") {
        None => {}
        Some(s) if STORED_SUBTYPES.contains(&s) => {}
        Some("message_changed") => {
            let inner = match event.get("message") {
                Some(m) if m.is_object() => m,
                _ => {
                    return Err(InputError::type_error(
                        format!("{path}.message"),
                        "is required",
                    ))
                }
            };
            let p = format!("{path}.message");
            return Ok(Event::Edit {
                channel,
                message_id: req_str(inner, "ts", &p)?,
                text: markup::plain_text(str_at(inner, "text").unwrap_or(""), names),
                edited: inner.get("edited").is_some_and(Value::is_object),
            });
        }
        Some("message_deleted") => {
            return Ok(Event::Delete {
                channel,
                message_id: req_str(event, "deleted_ts", path)?,
            })
        }
        Some(other) => {
            return Ok(Event::Ignored {
                kind: format!("message/{other}"),
            })
        }
    }
    let message = message(event, path, names)?;
    Ok(Event::Message {
        channel,
        workspace: team(payload, event),
        message: Box::new(message),
    })
}

/// One page of a Web API response.
#[derive(Debug, Clone, PartialEq)]
pub struct Page {
    pub messages: Vec<StoredMessage>,
    /// Cursor of the next page, when there is one.
    pub next_cursor: Option<String>,
}

/// Why a response carried no page.
#[derive(Debug, Clone, PartialEq)]
pub enum ResponseError {
    /// `ok: false` with Slack's error code (`ratelimited`, `thread_not_found`, ...).
    Slack(String),
    Malformed(InputError),
}

impl std::fmt::Display for ResponseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ResponseError::Slack(code) => write!(f, "Slack returned error \"{code}\""),
            ResponseError::Malformed(e) => write!(f, "{e}"),
        }
    }
}

/// Reads a `conversations.history` / `conversations.replies` response body.
pub fn response_page(body: &Value, path: &str, names: &dyn Names) -> Result<Page, ResponseError> {
    if !body.is_object() {
        return Err(ResponseError::Malformed(InputError::type_error(
            path,
            format!("expected a response object, got {}", kind(body)),
        )));
    }
    if body.get("ok").and_then(Value::as_bool) == Some(false) {
        return Err(ResponseError::Slack(
            str_at(body, "error").unwrap_or("unknown_error").to_string(),
        ));
    }
    let list = match body.get("messages") {
        Some(Value::Array(a)) => a,
        Some(other) => {
            return Err(ResponseError::Malformed(InputError::type_error(
                format!("{path}.messages"),
                format!("expected an array, got {}", kind(other)),
            )))
        }
        None => {
            return Err(ResponseError::Malformed(InputError::type_error(
                format!("{path}.messages"),
                "is required",
            )))
        }
    };
    let messages = list
        .iter()
        .enumerate()
        .map(|(i, m)| message(m, &format!("{path}.messages[{i}]"), names))
        .collect::<Result<Vec<_>, _>>()
        .map_err(ResponseError::Malformed)?;
    let has_more = body
        .get("has_more")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let next_cursor = body
        .get("response_metadata")
        .and_then(|r| nonempty(r, "next_cursor"))
        .filter(|_| has_more)
        .map(str::to_string);
    Ok(Page {
        messages,
        next_cursor,
    })
}

/// Reads one page of what a fetcher resolved with: a Slack Web API body (see
/// [`response_page`]), or the neutral `{ messages: MessageInput[], nextCursor? }`, told
/// apart by its first message having an `author`.
pub fn fetched_page(body: &Value, names: &dyn Names) -> Result<Page, ResponseError> {
    let neutral = body.get("ok").is_none()
        && body
            .get("messages")
            .and_then(Value::as_array)
            .is_some_and(|a| a.first().is_some_and(|m| m.get("author").is_some()));
    if !neutral {
        return response_page(body, "result", names);
    }
    let list = body.get("messages").and_then(Value::as_array);
    let mut messages = Vec::with_capacity(list.map_or(0, Vec::len));
    for (i, m) in list.into_iter().flatten().enumerate() {
        let path = format!("result.messages[{i}]");
        let input = MessageInput::deserialize(m)
            .map_err(|e| ResponseError::Malformed(InputError::type_error(&path, e.to_string())))?;
        messages.push(StoredMessage::from_input(input, &path).map_err(ResponseError::Malformed)?);
    }
    let next_cursor = nonempty(body, "nextCursor").map(str::to_string);
    Ok(Page {
        messages,
        next_cursor,
    })
}

#[cfg(test)]
mod tests;
