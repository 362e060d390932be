//! Discord adapters: Gateway dispatches (`{ t, d }`, as the Gateway sends them with
//! opcode 0) into the store's neutral events.
//!
//! A Discord thread is a channel of its own whose `parent_id` is the channel it hangs
//! off. The store keeps one model for every platform, so a thread's messages are held
//! in the parent channel as the replies of a thread whose id is the thread channel's id:
//! a thread started from a message has that message's id (the message is its root), and
//! a forum post's first message has the post's id. Which channels are threads is learnt
//! from `GUILD_CREATE` (sent on every connect), `THREAD_CREATE`, `THREAD_UPDATE`,
//! `THREAD_LIST_SYNC` and `CHANNEL_CREATE`.
//!
//! A message's time is read from its id (a snowflake holds its creation time in
//! milliseconds); the id's low bits are kept as the sub-millisecond digits of its ts, so
//! that two messages of the same millisecond keep their order and both are held.

mod directory;
mod events;
pub mod markup;
mod page;
pub use directory::{RoleNames, ThreadDirectory, ROLES_REMEMBERED, THREADS_REMEMBERED};
pub use page::{fetched_page, is_discord_page};

use crate::channel::message::{Event, Extras, ExtrasBox, ReplyRef, StoredFile, StoredMessage};
use crate::channel::slack::Names;
use crate::core::input::payload::{kind, nonempty, opt_object, opt_str, req_object, req_str};
use crate::core::input::InputError;
use crate::core::model::{Author, MediaRef};
use crate::core::time::ts_key;
use serde_json::Value;
use std::sync::Arc;

/// Discord's epoch (2015-01-01T00:00:00Z) in Unix milliseconds: a snowflake's top 42
/// bits count milliseconds from it.
pub const DISCORD_EPOCH_MS: u64 = 1_420_070_400_000;

/// Channel types that are threads (announcement, public and private threads).
const THREAD_TYPES: [u64; 3] = [10, 11, PRIVATE_THREAD];
/// A private thread: created without a starter message, always.
const PRIVATE_THREAD: u64 = 12;

/// Message types that carry what a person or bot said: default, reply, slash command
/// and context-menu command. Joins, pins, boosts and the like are counted and ignored.
const STORED_TYPES: [u64; 4] = [0, 19, 20, 23];

/// The platform name channels are tagged with.
pub const PLATFORM: &str = "discord";

/// The platform ts of a snowflake id: `"<seconds>.<milliseconds><6 digits of the id's
/// low bits>"`, or `None` when `id` is not a snowflake.
pub fn snowflake_ts(id: &str) -> Option<String> {
    if id.is_empty() || id.len() > 20 || !id.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u64 = id.parse().ok()?;
    let ms = (n >> 22).checked_add(DISCORD_EPOCH_MS)?;
    let low = (n & 0x3F_FFFF) % 1_000_000;
    Some(format!("{}.{:03}{low:06}", ms / 1000, ms % 1000))
}

/// What one dispatch tells the store.
#[derive(Debug, Default)]
pub struct Intake {
    pub events: Vec<Event>,
    /// Channels (threads included) to name: `(id, name, guild)`.
    pub channels: Vec<(String, Option<String>, Option<String>)>,
    /// Threads opened (`Some(parent)`) or deleted (`None`).
    pub threads: Vec<(String, Option<String>)>,
    /// Threads created just now (`THREAD_CREATE` with `newly_created`): `(thread,
    /// parent, private)`. They have no reply yet, so every reply from now on is held; a
    /// private thread (type 12) never has a starter message.
    pub created: Vec<(String, String, bool)>,
    /// Roles named (`Some(name)`) or deleted (`None`).
    pub roles: Vec<(String, Option<String>)>,
}

impl Intake {
    fn one(event: Event) -> Self {
        Intake {
            events: vec![event],
            ..Intake::default()
        }
    }

    fn ignored(kind: impl Into<String>) -> Self {
        Intake::one(Event::Ignored { kind: kind.into() })
    }
}

/// Where a Discord channel's messages are held: `(channel, thread)`.
fn place(channel_id: &str, threads: &ThreadDirectory) -> (String, Option<String>) {
    match threads.parent_of(channel_id) {
        Some(parent) => (parent.to_string(), Some(channel_id.to_string())),
        None => (channel_id.to_string(), None),
    }
}

/// Converts a Gateway dispatch into what the store applies. Dispatches the store has no
/// use for (`TYPING_START`, `PRESENCE_UPDATE`, ...) become one `Ignored` event.
pub fn gateway_event(
    payload: &Value,
    threads: &ThreadDirectory,
    names: &dyn Names,
) -> Result<Intake, InputError> {
    if !payload.is_object() {
        return Err(InputError::type_error(
            "payload",
            format!("expected an object, got {}", kind(payload)),
        ));
    }
    let t = match payload.get("t") {
        Some(Value::String(t)) => t.as_str(),
        // Heartbeats, hello and other non-dispatch opcodes carry no `t`.
        None | Some(Value::Null) => return Ok(Intake::ignored("unknown")),
        Some(other) => {
            return Err(InputError::type_error(
                "payload.t",
                format!("expected a string, got {}", kind(other)),
            ))
        }
    };
    // Read only for a dispatch the store handles: any other is ignored as it comes.
    let d = || req_object(payload, "d", "payload");
    let path = "payload.d";
    match t {
        "MESSAGE_CREATE" => message_create(d()?, path, threads, names),
        "MESSAGE_UPDATE" => events::message_update(d()?, path, threads, names),
        "MESSAGE_DELETE" => {
            let d = d()?;
            let (channel, _) = place(&req_str(d, "channel_id", path)?, threads);
            Ok(Intake::one(Event::Delete {
                channel,
                message_id: req_str(d, "id", path)?,
            }))
        }
        "MESSAGE_DELETE_BULK" => events::delete_bulk(d()?, path, threads),
        "MESSAGE_REACTION_ADD" | "MESSAGE_REACTION_REMOVE" => {
            events::reaction(t, d()?, path, threads)
        }
        "THREAD_DELETE" => Ok(Intake {
            threads: vec![(req_str(d()?, "id", path)?, None)],
            ..Intake::default()
        }),
        "THREAD_LIST_SYNC" | "GUILD_CREATE" => events::guild_channels(t, d()?, path),
        "GUILD_ROLE_CREATE" | "GUILD_ROLE_UPDATE" => {
            let role = req_object(d()?, "role", path)?;
            Ok(Intake {
                roles: vec![role_info(role, &format!("{path}.role"))?],
                ..Intake::default()
            })
        }
        "GUILD_ROLE_DELETE" => Ok(Intake {
            roles: vec![(req_str(d()?, "role_id", path)?, None)],
            ..Intake::default()
        }),
        "THREAD_CREATE" | "THREAD_UPDATE" | "CHANNEL_CREATE" | "CHANNEL_UPDATE" => {
            events::channel_update(t, d()?, path)
        }
        // TYPING_START, PRESENCE_UPDATE, ...
        _ => Ok(Intake::ignored(t)),
    }
}

/// A role object: its id and name.
fn role_info(r: &Value, path: &str) -> Result<(String, Option<String>), InputError> {
    let id = req_str(r, "id", path)?;
    let name = opt_str(r, "name", path)?.unwrap_or("").to_string();
    Ok((id, Some(name)))
}

/// A channel object: its name, and its parent when it is a thread. `guild`: the guild
/// of a list the object came in without its own `guild_id`.
fn channel_info(
    c: &Value,
    path: &str,
    guild: Option<&str>,
    out: &mut Intake,
) -> Result<(), InputError> {
    let id = req_str(c, "id", path)?;
    let is_thread = c
        .get("type")
        .and_then(Value::as_u64)
        .is_some_and(|t| THREAD_TYPES.contains(&t));
    if is_thread {
        out.threads
            .push((id.clone(), Some(req_str(c, "parent_id", path)?)));
    }
    let name = nonempty(c, "name").map(str::to_string);
    let guild = nonempty(c, "guild_id").or(guild).map(str::to_string);
    out.channels.push((id, name, guild));
    Ok(())
}

fn message_create(
    d: &Value,
    path: &str,
    threads: &ThreadDirectory,
    names: &dyn Names,
) -> Result<Intake, InputError> {
    let message_type = d.get("type").and_then(Value::as_u64).unwrap_or(0);
    if !STORED_TYPES.contains(&message_type) {
        return Ok(Intake::ignored(format!(
            "MESSAGE_CREATE/type:{message_type}"
        )));
    }
    let channel_id = req_str(d, "channel_id", path)?;
    let (channel, thread) = place(&channel_id, threads);
    let workspace = nonempty(d, "guild_id").map(str::to_string);
    let mut events = Vec::with_capacity(2);
    // `referenced_message: null` beside a reply's reference is Discord's word that the
    // message replied to was deleted: the store remembers the deletion (nothing fetches
    // it, and the quoted reply says so).
    if d.get("referenced_message").is_some_and(Value::is_null) {
        if let Some(id) = deleted_reply_target(d, &channel_id, path)? {
            events.push(Event::Delete {
                channel: channel.clone(),
                message_id: id,
            });
        }
    }
    // The message replied to, when the event carries it: held so the reply can show it.
    if let Some(r) = opt_object(d, "referenced_message", path)? {
        let r_channel = nonempty(r, "channel_id").unwrap_or(&channel_id);
        if r_channel == channel_id {
            let rp = format!("{path}.referenced_message");
            let referenced = message(r, &rp, thread.as_deref(), names)?;
            events.push(Event::Message {
                channel: channel.clone(),
                workspace: workspace.clone(),
                message: Box::new(referenced),
            });
        }
    }
    let m = message(d, path, thread.as_deref(), names)?;
    events.push(Event::Message {
        channel,
        workspace,
        message: Box::new(m),
    });
    Ok(Intake {
        events,
        ..Intake::default()
    })
}

/// The id of the message a reply answers, when it is in the reply's own channel (a
/// reference of type 0, a reply; a forward, type 1, quotes another chat).
fn deleted_reply_target(
    d: &Value,
    channel_id: &str,
    path: &str,
) -> Result<Option<String>, InputError> {
    let Some(r) = opt_object(d, "message_reference", path)? else {
        return Ok(None);
    };
    let is_reply = r.get("type").and_then(Value::as_u64).unwrap_or(0) == 0;
    let same_channel = nonempty(r, "channel_id").is_none_or(|c| c == channel_id);
    Ok((is_reply && same_channel)
        .then(|| nonempty(r, "message_id").map(str::to_string))
        .flatten())
}

/// The author of a message: the guild nickname, else the global display name, else the
/// username.
fn author(m: &Value, path: &str) -> Result<Author, InputError> {
    let a = req_object(m, "author", path)?;
    let user_id = req_str(a, "id", &format!("{path}.author"))?;
    let nick = m.get("member").and_then(|mb| nonempty(mb, "nick"));
    let display = nick
        .or_else(|| nonempty(a, "global_name"))
        .or_else(|| nonempty(a, "username"))
        .unwrap_or(&user_id)
        .to_string();
    let is_bot = a.get("bot").and_then(Value::as_bool).unwrap_or(false)
        || nonempty(m, "webhook_id").is_some();
    Ok(Author {
        user_id,
        display_name: display,
        is_bot,
    })
}

fn attachments(m: &Value) -> Vec<StoredFile> {
    let Some(Value::Array(list)) = m.get("attachments") else {
        return Vec::new();
    };
    list.iter()
        .filter_map(|a| {
            let id = nonempty(a, "id")?;
            Some(StoredFile {
                media: MediaRef {
                    artifact_id: id.to_string(),
                    media_type: nonempty(a, "content_type")
                        .unwrap_or("application/octet-stream")
                        .to_string(),
                    filename: nonempty(a, "filename").map(str::to_string),
                    byte_length: a.get("size").and_then(Value::as_u64).unwrap_or(0),
                },
                url: nonempty(a, "url").map(str::to_string),
            })
        })
        .collect()
}

fn reactions(m: &Value) -> Vec<crate::channel::message::Reaction> {
    let Some(Value::Array(list)) = m.get("reactions") else {
        return Vec::new();
    };
    list.iter()
        .filter_map(|r| {
            let name = r.get("emoji").and_then(|e| nonempty(e, "name"))?;
            let count = r.get("count").and_then(Value::as_u64).unwrap_or(0);
            (count > 0).then(|| crate::channel::message::Reaction {
                name: name.to_string(),
                count,
                users: Vec::new(),
            })
        })
        .collect()
}

/// Converts one Discord message object (from the Gateway or the REST API). `thread` is
/// the thread its channel is, when it is one.
pub fn message(
    m: &Value,
    path: &str,
    thread: Option<&str>,
    names: &dyn Names,
) -> Result<StoredMessage, InputError> {
    if !m.is_object() {
        return Err(InputError::type_error(
            path,
            format!("expected a message object, got {}", kind(m)),
        ));
    }
    let id = req_str(m, "id", path)?;
    let ts = snowflake_ts(&id).ok_or_else(|| {
        InputError::type_error(
            format!("{path}.id"),
            format!("expected a snowflake such as \"1175835600000000000\", got {id:?}"),
        )
    })?;
    let key = ts_key(&ts).ok_or_else(|| {
        InputError::type_error(format!("{path}.id"), format!("not a snowflake: {id:?}"))
    })?;
    // A forum post's first message has the post's id: it is the thread's root.
    let thread_id = thread.filter(|t| *t != id).map(str::to_string);
    // A message that started a thread says how many messages the thread has.
    let started = m.get("thread").filter(|t| t.is_object());
    let reply_count = started
        .and_then(|t| t.get("message_count"))
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let latest_reply = started
        .and_then(|t| nonempty(t, "last_message_id"))
        .and_then(snowflake_ts);
    let reference = opt_object(m, "message_reference", path)?;
    // Type 0 (or absent) is a reply; 1 is a forward, which quotes nothing of this chat.
    let reply_to = reference
        .filter(|r| r.get("type").and_then(Value::as_u64).unwrap_or(0) == 0)
        .and_then(|r| nonempty(r, "message_id"))
        .map(|id| ReplyRef {
            id: Some(id.to_string()),
            quote: None,
        });
    Ok(StoredMessage {
        other_id: Some(id.as_str().into()),
        key,
        author: Arc::new(author(m, path)?),
        text: markup::plain_text(opt_str(m, "content", path)?.unwrap_or(""), m, names).into(),
        broadcast: false,
        thread_id: thread_id.map(Into::into),
        extras: ExtrasBox::new(Extras {
            reply_count,
            latest_reply,
            reactions: reactions(m),
            files: attachments(m),
            reply_to,
        }),
        edited: nonempty(m, "edited_timestamp").is_some(),
        ts: ts.as_str().into(),
        cache: Default::default(),
    })
}

#[cfg(test)]
mod tests;
