//! The neutral events that change what the store holds: their input shape (checked per
//! field, naming the path), the events they become, and the packed batches of the fast
//! lane decoded without JSON.

use super::*;

/// A field every applied event kind needs: `Option` to serde, so that an event of an
/// unknown kind without it is ignored rather than refused, and required in the typings
/// (an alias, which the typings generator does not read as optional).
pub type NeededByKnownKinds<T> = Option<T>;

/// A neutral channel event (platform adapters produce these; Slack payloads can go
/// straight to `ingestSlackEvent`).
#[napi(object, object_to_js = false, object_from_js = false, js_name = "ChannelEvent")]
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EventInput {
    /// `message` (new message or thread reply), `message_changed` (new `text`),
    /// `message_deleted`, `reaction_added`, `reaction_removed`. Other kinds are counted
    /// and ignored.
    #[serde(rename = "type")]
    #[napi(
        js_name = "type",
        ts_type = "'message' | 'message_changed' | 'message_deleted' | 'reaction_added' | 'reaction_removed' | (string & {})"
    )]
    pub kind: String,
    // Required in the typings (every kind the store applies needs it, and `validate`
    // says so); optional to serde, so an ignored kind without one is still just ignored.
    #[serde(default)]
    #[napi(ts_type = "string")]
    pub channel_id: NeededByKnownKinds<String>,
    /// Workspace (Slack team) of the channel, when known.
    #[serde(default)]
    pub workspace_id: Option<String>,
    /// `message`: the message (a reply has `threadId` = its root's id).
    #[serde(default)]
    pub message: Option<MessageInput>,
    /// Edits, deletions, reactions: the message concerned.
    #[serde(default)]
    pub message_id: Option<String>,
    // Accepted (Slack's `thread_ts` on edits and deletions) but not documented: the
    // store finds a message's thread itself.
    #[serde(default)]
    #[napi(skip)]
    pub thread_id: Option<String>,
    /// `message_changed`: the new text.
    #[serde(default)]
    pub text: Option<String>,
    /// Reactions: the emoji name.
    #[serde(default)]
    pub reaction: Option<String>,
    /// Reactions: who reacted.
    #[serde(default)]
    pub user_id: Option<String>,
}

/// A validated event.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A new message or thread reply (a repeat of a held message replaces it).
    Message {
        channel: String,
        workspace: Option<String>,
        message: Box<StoredMessage>,
    },
    /// New text for a held message; `edited` marks it as edited by its author
    /// (Slack also sends `message_changed` when only unfurls or reply counts change).
    Edit {
        channel: String,
        message_id: String,
        text: String,
        edited: bool,
    },
    Delete {
        channel: String,
        message_id: String,
    },
    Reaction {
        channel: String,
        message_id: String,
        name: String,
        user: Option<String>,
        added: bool,
    },
    /// A kind the store does not handle (counted in `stats().ignoredEvents`).
    Ignored {
        kind: String,
    },
}

impl Event {
    /// The channel the event is about (none for an ignored one).
    pub fn channel_mut(&mut self) -> Option<&mut String> {
        match self {
            Event::Message { channel, .. }
            | Event::Edit { channel, .. }
            | Event::Delete { channel, .. }
            | Event::Reaction { channel, .. } => Some(channel),
            Event::Ignored { .. } => None,
        }
    }
}

pub const EVENT_KINDS: [&str; 5] = [
    "message",
    "message_changed",
    "message_deleted",
    "reaction_added",
    "reaction_removed",
];

fn required(v: Option<String>, path: String) -> Result<String, InputError> {
    match v {
        Some(s) if !s.is_empty() => Ok(s),
        Some(_) => Err(InputError::type_error(path, "expected a non-empty string")),
        None => Err(InputError::type_error(path, "is required")),
    }
}

impl EventInput {
    /// Validates the event; `path` names it in errors (`"event"`, `"events[3]"`).
    pub fn validate(self, path: &str) -> Result<Event, InputError> {
        if !EVENT_KINDS.contains(&self.kind.as_str()) {
            return Ok(Event::Ignored { kind: self.kind });
        }
        let channel = required(self.channel_id, format!("{path}.channelId"))?;
        let event = match self.kind.as_str() {
            "message" => {
                let m = self.message.ok_or_else(|| {
                    InputError::type_error(format!("{path}.message"), "is required")
                })?;
                Event::Message {
                    channel,
                    workspace: self.workspace_id,
                    message: Box::new(StoredMessage::from_input(m, &format!("{path}.message"))?),
                }
            }
            "message_changed" => Event::Edit {
                channel,
                message_id: required(self.message_id, format!("{path}.messageId"))?,
                text: self
                    .text
                    .ok_or_else(|| InputError::type_error(format!("{path}.text"), "is required"))?,
                edited: true,
            },
            "message_deleted" => Event::Delete {
                channel,
                message_id: required(self.message_id, format!("{path}.messageId"))?,
            },
            kind => Event::Reaction {
                channel,
                message_id: required(self.message_id, format!("{path}.messageId"))?,
                name: required(self.reaction, format!("{path}.reaction"))?,
                user: self.user_id,
                added: kind == "reaction_added",
            },
        };
        Ok(event)
    }
}

/// Fields per message in a packed batch: channel id, ts, text, user id, display name,
/// thread id (empty when none), message id (empty when it is the ts).
pub const PACKED_FIELDS: usize = 7;
/// `kinds` entries of a packed batch: the author is a person or a bot.
pub const PACKED_MESSAGE: u8 = 0;
pub const PACKED_BOT_MESSAGE: u8 = 1;

/// An author's units in a packed batch: user id, display name, is a bot.
type PackedAuthor<'a> = (&'a [u16], &'a [u16], bool);

/// Decodes a packed batch (what the JS side of `ingestMany` sends when every event is a
/// plain message): `units` holds the UTF-16 text of every field back to back, `lens`
/// each field's length in units, `kinds` one entry per message. Messages come back in
/// order, validated; the first bad one is an error naming `events[i]`.
pub fn decode_packed(units: &[u16], lens: &[u32], kinds: &[u8]) -> Result<Vec<Event>, InputError> {
    let mut out = Vec::with_capacity(kinds.len());
    let mut fields = PackedFields::new(units, lens, "events");
    // A batch holds a few authors many times over: each is decoded once.
    let mut authors: HashMap<PackedAuthor, Arc<Author>, WordHash> = HashMap::default();
    for (i, &kind) in kinds.iter().enumerate() {
        let path = || format!("events[{i}]");
        if kind > PACKED_BOT_MESSAGE {
            return Err(InputError::range_error(
                "events",
                format!("unknown packed kind {kind}"),
            ));
        }
        let channel = fields.id(|| format!("events[{i}].channelId"))?;
        let ts = fields.short_id(|| format!("events[{i}].message.ts"))?;
        let text = fields.text()?;
        let user_units = fields.take()?;
        let name_units = fields.take()?;
        let is_bot = kind == PACKED_BOT_MESSAGE;
        let author = match authors.get(&(user_units, name_units, is_bot)) {
            Some(a) => Arc::clone(a),
            None => {
                let user_id = PackedFields::id_of(user_units, || {
                    format!("events[{i}].message.author.userId")
                })?;
                let a = Arc::new(Author {
                    user_id,
                    display_name: string_of_units(name_units),
                    is_bot,
                });
                authors.insert((user_units, name_units, is_bot), Arc::clone(&a));
                a
            }
        };
        let thread = fields.id(|| format!("events[{i}].message.threadId"))?;
        let id = fields.short_id(|| format!("events[{i}].message.messageId"))?;
        if channel.is_empty() {
            return Err(InputError::type_error(
                format!("{}.channelId", path()),
                "expected a non-empty string",
            ));
        }
        let key = ts_key(&ts).ok_or_else(|| {
            InputError::type_error(
                format!("{}.message.ts", path()),
                format!("expected a platform timestamp such as \"1775835600.000100\", got {ts:?}"),
            )
        })?;
        let thread_id = (!thread.is_empty() && thread != ts && thread != id).then_some(thread);
        let mut message = StoredMessage::plain(ts, key, author, text);
        if !id.is_empty() {
            message.set_id(&id);
        }
        message.thread_id = thread_id.map(Into::into);
        out.push(Event::Message {
            channel,
            workspace: None,
            message: Box::new(message),
        });
    }
    Ok(out)
}
