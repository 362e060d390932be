//! Telegram adapters: Bot API `Update`s into the store's neutral events.
//!
//! A chat is a channel (its id as text). Threads follow the chat's own structure:
//! a forum topic is a thread whose root is the topic's creation message (its id is the
//! topic's `message_thread_id`; the General topic, id 1, is the chat itself), and a
//! reply chain outside topics is a thread rooted at the message it started from, as
//! the memory store's lanes are. The message a reply answers is held with it and
//! referenced, so a build shows it apart from the user's own text.
//!
//! Telegram dates are whole seconds, so a message's ts is `"<date>.<message_id>"` with
//! the id in the nine fractional digits: messages of the same second keep their order
//! (ids grow within a chat) and each is held.
//!
//! The Bot API has no method to read a chat's history: what the store saw since it
//! started (or kept in its saved file) is all there is.

use crate::channel::message::{Event, Extras, ExtrasBox, ReplyRef, StoredFile, StoredMessage};
use crate::core::input::payload::{
    kind, nonempty, opt_object, opt_str, req_int_id, req_object, str_at,
};
use crate::core::input::InputError;
use crate::core::model::{Author, MediaRef};
use crate::core::time::ts_key;
use serde_json::Value;
use std::sync::Arc;

/// The platform name channels are tagged with.
pub const PLATFORM: &str = "telegram";

/// The General topic of a forum: its messages are the chat's own.
pub const GENERAL_TOPIC: i64 = 1;

/// The update fields that carry a message, and whether they are edits.
const MESSAGE_FIELDS: [(&str, bool); 4] = [
    ("message", false),
    ("channel_post", false),
    ("edited_message", true),
    ("edited_channel_post", true),
];

/// The ts of message `id` sent at `date` (seconds).
pub fn message_ts(date: i64, id: i64) -> String {
    format!("{date}.{:09}", id.rem_euclid(1_000_000_000))
}

/// What one update tells the store.
#[derive(Debug, Default)]
pub struct Intake {
    pub events: Vec<Event>,
    /// The chat, to name: `(id, name)`.
    pub chat: Option<(String, Option<String>)>,
}

impl Intake {
    fn ignored(kind: impl Into<String>) -> Self {
        Intake {
            events: vec![Event::Ignored { kind: kind.into() }],
            chat: None,
        }
    }
}

/// Converts an `Update`. `thread_of(chat, id)` answers the thread a held message of the
/// chat is in, so a reply to a reply stays in its chain. Updates the store has no use
/// for (`callback_query`, `my_chat_member`, ...) become one `Ignored` event.
pub fn update(
    u: &Value,
    thread_of: &dyn Fn(&str, &str) -> Option<String>,
) -> Result<Intake, InputError> {
    if !u.is_object() {
        return Err(InputError::type_error(
            "update",
            format!("expected an object, got {}", kind(u)),
        ));
    }
    for (field, edit) in MESSAGE_FIELDS {
        if let Some(m) = opt_object(u, field, "update")? {
            let path = format!("update.{field}");
            return if edit {
                edited(m, &path)
            } else {
                new_message(m, &path, thread_of)
            };
        }
    }
    if let Some(r) = opt_object(u, "message_reaction", "update")? {
        return reaction(r, "update.message_reaction");
    }
    let other = u
        .as_object()
        .and_then(|o| o.keys().find(|k| *k != "update_id").cloned())
        .unwrap_or_else(|| "unknown".to_string());
    Ok(Intake::ignored(other))
}

fn chat_of(m: &Value, path: &str) -> Result<(String, Option<String>, bool), InputError> {
    let chat = req_object(m, "chat", path)?;
    let id = req_int_id(chat, "id", &format!("{path}.chat"))?.to_string();
    let name = nonempty(chat, "title")
        .map(str::to_string)
        .or_else(|| nonempty(chat, "username").map(|u| format!("@{u}")))
        .or_else(|| full_name(chat));
    let forum = chat
        .get("is_forum")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    Ok((id, name, forum))
}

fn full_name(v: &Value) -> Option<String> {
    let first = nonempty(v, "first_name")?;
    Some(match nonempty(v, "last_name") {
        Some(last) => format!("{first} {last}"),
        None => first.to_string(),
    })
}

/// The sender: a user, or the chat a message was sent on behalf of (a channel's post,
/// an anonymous admin), signed when the post carries a signature.
fn author(m: &Value, path: &str) -> Result<Author, InputError> {
    if let Some(from) = opt_object(m, "from", path)? {
        let id = req_int_id(from, "id", &format!("{path}.from"))?.to_string();
        let is_bot = from.get("is_bot").and_then(Value::as_bool).unwrap_or(false);
        let display = full_name(from)
            .or_else(|| nonempty(from, "username").map(str::to_string))
            .unwrap_or_else(|| id.clone());
        // An anonymous admin posts as the group: the group is the author shown.
        if let Some(chat) = opt_object(m, "sender_chat", path)? {
            return sender_chat(chat, m, path);
        }
        return Ok(Author {
            user_id: id,
            display_name: display,
            is_bot,
        });
    }
    match opt_object(m, "sender_chat", path)?.or_else(|| m.get("chat")) {
        Some(chat) => sender_chat(chat, m, path),
        None => Err(InputError::type_error(
            format!("{path}.from"),
            "is required",
        )),
    }
}

fn sender_chat(chat: &Value, m: &Value, path: &str) -> Result<Author, InputError> {
    let id = req_int_id(chat, "id", &format!("{path}.sender_chat"))?.to_string();
    let title = nonempty(chat, "title").unwrap_or(&id).to_string();
    let display = match nonempty(m, "author_signature") {
        Some(sig) => format!("{title} ({sig})"),
        None => title,
    };
    Ok(Author {
        user_id: id,
        display_name: display,
        is_bot: false,
    })
}

/// The media of a message, by the file id the media fetcher passes to `getFile`.
fn files(m: &Value) -> Vec<StoredFile> {
    let mut out = Vec::new();
    let mut push = |f: &Value, default_type: &str, name: Option<&str>| {
        let Some(file_id) = nonempty(f, "file_id") else {
            return;
        };
        out.push(StoredFile {
            media: MediaRef {
                artifact_id: file_id.to_string(),
                media_type: nonempty(f, "mime_type").unwrap_or(default_type).to_string(),
                filename: nonempty(f, "file_name").or(name).map(str::to_string),
                byte_length: f.get("file_size").and_then(Value::as_u64).unwrap_or(0),
            },
            url: None,
        });
    };
    // A photo comes in several sizes, smallest first: the largest is the photo.
    if let Some(Value::Array(sizes)) = m.get("photo") {
        if let Some(p) = sizes.last() {
            push(p, "image/jpeg", None);
        }
    }
    for (field, default_type) in [
        ("document", "application/octet-stream"),
        ("voice", "audio/ogg"),
        ("audio", "audio/mpeg"),
        ("video", "video/mp4"),
        ("video_note", "video/mp4"),
        ("animation", "video/mp4"),
        ("sticker", "image/webp"),
    ] {
        if let Some(f) = m.get(field).filter(|f| f.is_object()) {
            push(f, default_type, None);
        }
    }
    out
}

/// The text of a message: its text or caption; a sticker by its emoji; a new topic by
/// its name.
fn text_of(m: &Value, path: &str) -> Result<Option<String>, InputError> {
    let text = opt_str(m, "text", path)?;
    let caption = opt_str(m, "caption", path)?;
    if let Some(t) = text.or(caption) {
        return Ok(Some(t.to_string()));
    }
    if let Some(topic) = m.get("forum_topic_created") {
        let name = nonempty(topic, "name").unwrap_or("");
        return Ok(Some(format!("[topic created: {name}]")));
    }
    if let Some(s) = m.get("sticker") {
        return Ok(Some(format!(
            "[sticker {}]",
            nonempty(s, "emoji").unwrap_or("")
        )));
    }
    Ok(None)
}

/// Where a message is held: the thread (`None`: the chat itself), and whether it also
/// shows in the chat (a reply chain's messages do; a forum topic's do not).
#[derive(Debug, Clone, Default)]
struct Placed {
    thread: Option<String>,
    in_chat: bool,
}

/// One Telegram message, placed as `at`.
fn message(
    m: &Value,
    path: &str,
    at: Placed,
    reply_to: Option<ReplyRef>,
) -> Result<StoredMessage, InputError> {
    let id = req_int_id(m, "message_id", path)?;
    let date = req_int_id(m, "date", path)?;
    let ts = message_ts(date, id);
    let key = ts_key(&ts).ok_or_else(|| {
        InputError::range_error(format!("{path}.date"), format!("not a Unix time: {date}"))
    })?;
    let files = files(m);
    let text = text_of(m, path)?.unwrap_or_default();
    let id = id.to_string();
    let thread_id = at.thread.filter(|t| *t != id);
    Ok(StoredMessage {
        other_id: Some(id.as_str().into()),
        key,
        author: Arc::new(author(m, path)?),
        text: text.into(),
        broadcast: at.in_chat && thread_id.is_some(),
        thread_id: thread_id.map(Into::into),
        extras: ExtrasBox::new(Extras {
            reply_count: 0,
            latest_reply: None,
            reactions: Vec::new(),
            files,
            reply_to,
        }),
        edited: m.get("edit_date").is_some_and(|d| !d.is_null()),
        ts: ts.as_str().into(),
        cache: Default::default(),
    })
}

/// The forum topic a message is in (`None` for the General topic and other chats).
fn topic_of(m: &Value, forum: bool) -> Option<String> {
    let topic = m.get("message_thread_id").and_then(Value::as_i64)?;
    let in_topic = m
        .get("is_topic_message")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    (forum && in_topic && topic != GENERAL_TOPIC).then(|| topic.to_string())
}

fn new_message(
    m: &Value,
    path: &str,
    thread_of: &dyn Fn(&str, &str) -> Option<String>,
) -> Result<Intake, InputError> {
    let (chat, name, forum) = chat_of(m, path)?;
    let carries = text_of(m, path)?.is_some() || !files(m).is_empty();
    if !carries {
        // Joins, pins, title changes, ...: nothing was said.
        return Ok(Intake::ignored("message/service"));
    }
    let topic = topic_of(m, forum);
    let mut events = Vec::with_capacity(2);
    let parent = opt_object(m, "reply_to_message", path)?;
    let parent_id = parent
        .and_then(|p| p.get("message_id"))
        .and_then(Value::as_i64);
    // In a topic every message without a reply "replies" to the topic's first message.
    let replies_to_topic = topic.is_some() && parent_id.map(|p| p.to_string()) == topic;
    let quote = m
        .get("quote")
        .and_then(|q| nonempty(q, "text"))
        .map(str::to_string);
    let mut reply_to = None;
    let mut thread = topic.clone();
    if let (Some(p), Some(pid), false) = (parent, parent_id, replies_to_topic) {
        let pid = pid.to_string();
        // The chain a reply continues: its parent's, else the one the parent starts.
        let chain = || {
            thread_of(&chat, &pid)
                .or_else(|| {
                    p.get("message_thread_id")
                        .and_then(Value::as_i64)
                        .filter(|_| !forum)
                        .map(|t| t.to_string())
                })
                .unwrap_or_else(|| pid.clone())
        };
        if thread.is_none() {
            thread = Some(chain());
        }
        let parent_at = match &topic {
            Some(t) => Placed {
                thread: Some(t.clone()),
                in_chat: false,
            },
            None => Placed {
                thread: thread_of(&chat, &pid),
                in_chat: true,
            },
        };
        let held = message(p, &format!("{path}.reply_to_message"), parent_at, None)?;
        events.push(Event::Message {
            channel: chat.clone(),
            workspace: None,
            message: Box::new(held),
        });
        reply_to = Some(ReplyRef {
            id: Some(pid),
            quote,
        });
    } else if let Some(ext) = opt_object(m, "external_reply", path)? {
        // A reply to a message of another chat: the quote (or the origin) is all there is.
        let origin = ext
            .get("chat")
            .and_then(|c| nonempty(c, "title"))
            .map(|t| format!("a message in {t}"));
        reply_to = quote.or(origin).map(|q| ReplyRef {
            id: None,
            quote: Some(q),
        });
    }
    events.push(Event::Message {
        channel: chat.clone(),
        workspace: None,
        message: Box::new(message(
            m,
            path,
            Placed {
                in_chat: topic.is_none(),
                thread,
            },
            reply_to,
        )?),
    });
    Ok(Intake {
        events,
        chat: Some((chat, name)),
    })
}

fn edited(m: &Value, path: &str) -> Result<Intake, InputError> {
    let (chat, name, _) = chat_of(m, path)?;
    let id = req_int_id(m, "message_id", path)?.to_string();
    let Some(text) = text_of(m, path)? else {
        return Ok(Intake::ignored("edited_message/media"));
    };
    Ok(Intake {
        events: vec![Event::Edit {
            channel: chat.clone(),
            message_id: id,
            text,
            edited: true,
        }],
        chat: Some((chat, name)),
    })
}

/// The name a reaction is shown by.
fn reaction_name(r: &Value) -> Option<String> {
    match str_at(r, "type")? {
        "emoji" => nonempty(r, "emoji").map(str::to_string),
        "custom_emoji" => Some("custom_emoji".to_string()),
        "paid" => Some("⭐".to_string()),
        _ => None,
    }
}

fn reaction_names(r: &Value, key: &str) -> Vec<String> {
    match r.get(key) {
        Some(Value::Array(list)) => list.iter().filter_map(reaction_name).collect(),
        _ => Vec::new(),
    }
}

fn reaction(r: &Value, path: &str) -> Result<Intake, InputError> {
    let (chat, name, _) = chat_of(r, path)?;
    let id = req_int_id(r, "message_id", path)?.to_string();
    let user = r
        .get("user")
        .and_then(|u| u.get("id"))
        .and_then(Value::as_i64)
        .map(|u| u.to_string());
    let old = reaction_names(r, "old_reaction");
    let new = reaction_names(r, "new_reaction");
    // Removed first, then added: what is in one list and not the other.
    let mut events = Vec::new();
    for (from, to, added) in [(&old, &new, false), (&new, &old, true)] {
        for n in from.iter().filter(|n| !to.contains(n)) {
            events.push(Event::Reaction {
                channel: chat.clone(),
                message_id: id.clone(),
                name: n.clone(),
                user: user.clone(),
                added,
            });
        }
    }
    if events.is_empty() {
        return Ok(Intake::ignored("message_reaction/unchanged"));
    }
    Ok(Intake {
        events,
        chat: Some((chat, name)),
    })
}

#[cfg(test)]
mod tests;
