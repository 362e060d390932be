//! What the store holds per message (the neutral events that change it are in
//! `message/event`).

use crate::core::input::{string_of_units, InputError, PackedFields};
use crate::core::model::{Author, MediaRef, MessageInput};
use crate::core::packed_text::PackedText;
use crate::core::search::hasher::WordHash;
use crate::core::short_str::ShortStr;
use crate::core::time::{ts_key, TsKey};
use napi_derive::napi;
use serde::Deserialize;
use std::collections::HashMap;
use std::sync::Arc;

/// A reaction with its count and, when known, who reacted.
#[derive(Debug, Clone, PartialEq)]
pub struct Reaction {
    pub name: String,
    pub count: u64,
    pub users: Vec<String>,
}

/// A file attached to a message: its reference plus where to download it.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredFile {
    pub media: MediaRef,
    pub url: Option<String>,
}

/// What only some messages have: replies, reactions, files.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Extras {
    /// Replies the platform reported (history responses); the store's own count of the
    /// replies it holds takes over once it holds the thread.
    pub reply_count: u64,
    /// Newest reply ts the platform reported.
    pub latest_reply: Option<String>,
    pub reactions: Vec<Reaction>,
    pub files: Vec<StoredFile>,
    /// The message this one answers by quoting it (a Discord reply, a Telegram
    /// `reply_to_message`): not a thread, a reference shown with the message.
    pub reply_to: Option<ReplyRef>,
}

/// What a message replies to: the replied message's id in the same channel (`None`
/// when it is in another chat), and the part of it the author quoted, when they quoted
/// only a part (or the message is in another chat and the quote is all there is).
#[derive(Debug, Clone, PartialEq)]
pub struct ReplyRef {
    pub id: Option<String>,
    pub quote: Option<String>,
}

/// No replies, reactions or files.
static NO_EXTRAS: Extras = Extras {
    reply_count: 0,
    latest_reply: None,
    reactions: Vec::new(),
    files: Vec::new(),
    reply_to: None,
};

/// A message's [`Extras`], allocated only when it has some: most chat messages have
/// none, and a message then carries one pointer instead of eighty bytes. Two boxes are
/// equal when their contents are (an empty box equals none).
#[derive(Debug, Clone, Default)]
pub struct ExtrasBox(pub(crate) Option<Box<Extras>>);

impl ExtrasBox {
    /// Boxes `extras` unless there are none.
    pub fn new(extras: Extras) -> Self {
        ExtrasBox((extras != NO_EXTRAS).then(|| Box::new(extras)))
    }

    pub fn get(&self) -> &Extras {
        self.0.as_deref().unwrap_or(&NO_EXTRAS)
    }

    /// The extras to change, allocated if there were none.
    pub fn get_mut(&mut self) -> &mut Extras {
        self.0.get_or_insert_with(Box::default)
    }

    /// Frees the box once nothing is left in it.
    fn tidy(&mut self) {
        if self.0.as_deref() == Some(&NO_EXTRAS) {
            self.0 = None;
        }
    }

    fn heap_bytes(&self) -> usize {
        self.0.as_ref().map_or(0, |_| std::mem::size_of::<Extras>())
    }
}

impl PartialEq for ExtrasBox {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

/// One message as the store holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredMessage {
    /// The message's id when it is not its ts (a Slack message's id is its ts, so most
    /// messages hold no second copy of it): see [`StoredMessage::id`].
    pub(crate) other_id: Option<Box<str>>,
    /// The platform's timestamp as it was given (a Slack ts is kept inline).
    pub ts: ShortStr,
    pub key: TsKey,
    /// Shared by every message the store holds of the same author (see
    /// [`super::ChannelStore`]'s author table).
    pub author: Arc<Author>,
    /// Packed by the store when it takes the message in: read it with
    /// [`PackedText::as_str`].
    pub text: PackedText,
    /// The thread a reply belongs to (its root's id); `None` for top-level messages,
    /// thread roots included.
    pub thread_id: Option<Box<str>>,
    /// A reply that was also posted to the channel.
    pub broadcast: bool,
    pub edited: bool,
    /// Replies, reactions and files: see [`StoredMessage::extras`].
    pub(crate) extras: ExtrasBox,
    /// Cached renderings (reply JSON, snippet), dropped on edit.
    pub cache: render_cache::RenderCache,
}

impl StoredMessage {
    /// The message's id (its ts unless the platform gave another).
    pub fn id(&self) -> &str {
        self.other_id.as_deref().unwrap_or(&self.ts)
    }

    /// Sets the message's id.
    pub fn set_id(&mut self, id: &str) {
        self.other_id = (id != self.ts).then(|| id.into());
    }

    /// Its replies, reactions and files.
    pub fn extras(&self) -> &Extras {
        self.extras.get()
    }

    /// Its replies, reactions and files, to change.
    pub fn extras_mut(&mut self) -> &mut Extras {
        self.extras.get_mut()
    }

    /// Replies the platform reported (see [`Extras::reply_count`]).
    pub fn reply_count(&self) -> u64 {
        self.extras().reply_count
    }

    /// Sets the reply count; a message without extras gets none for a count of 0.
    pub fn set_reply_count(&mut self, n: u64) {
        if n != self.reply_count() {
            self.extras.get_mut().reply_count = n;
            self.extras.tidy();
        }
    }

    /// Newest reply ts the platform reported.
    pub fn latest_reply(&self) -> Option<&str> {
        self.extras().latest_reply.as_deref()
    }

    pub fn reactions(&self) -> &[Reaction] {
        &self.extras().reactions
    }

    pub fn files(&self) -> &[StoredFile] {
        &self.extras().files
    }

    /// The message this one replies to by quoting it, when it does.
    pub fn reply_to(&self) -> Option<&ReplyRef> {
        self.extras().reply_to.as_ref()
    }

    /// A reply inside a thread (not its root).
    pub fn is_reply(&self) -> bool {
        self.thread_id.is_some()
    }

    /// Shown in the channel: top-level messages and broadcast replies.
    pub fn in_channel(&self) -> bool {
        self.thread_id.is_none() || self.broadcast
    }

    /// Approximate heap bytes held by this message (for the memory report); its author
    /// is shared, and counted by the store once.
    pub fn heap_bytes(&self) -> usize {
        let s = |x: &String| x.capacity();
        self.other_id.as_ref().map_or(0, |id| id.len())
            + self.ts.heap_bytes()
            + self.text.heap_bytes()
            + self.thread_id.as_deref().map_or(0, str::len)
            + self.extras.heap_bytes()
            + self.extras().latest_reply.as_ref().map_or(0, s)
            + self
                .reactions()
                .iter()
                .map(|r| s(&r.name) + r.users.iter().map(s).sum::<usize>() + 56)
                .sum::<usize>()
            + self
                .files()
                .iter()
                .map(|f| {
                    s(&f.media.artifact_id)
                        + s(&f.media.media_type)
                        + f.media.filename.as_ref().map_or(0, s)
                        + f.url.as_ref().map_or(0, s)
                        + 120
                })
                .sum::<usize>()
    }

    /// A plain top-level message posted at `ts` (also its id) by `author`: no thread,
    /// replies, reactions, files or edit. `None` when `ts` is not a platform timestamp.
    pub fn new(ts: &str, author: Author, text: &str) -> Option<StoredMessage> {
        Some(StoredMessage::plain(ts, ts_key(ts)?, author, text))
    }

    /// [`StoredMessage::new`] for a caller that already parsed `ts` into `key` (and may
    /// have an author shared already).
    pub fn plain(
        ts: impl Into<ShortStr>,
        key: TsKey,
        author: impl Into<Arc<Author>>,
        text: impl Into<PackedText>,
    ) -> StoredMessage {
        StoredMessage {
            other_id: None,
            key,
            ts: ts.into(),
            author: author.into(),
            text: text.into(),
            thread_id: None,
            broadcast: false,
            edited: false,
            extras: ExtrasBox::default(),
            cache: Default::default(),
        }
    }

    /// Validates a neutral message (`path` names it in errors) and converts it.
    pub fn from_input(m: MessageInput, path: &str) -> Result<StoredMessage, InputError> {
        let key = ts_key(&m.ts).ok_or_else(|| {
            InputError::type_error(
                format!("{path}.ts"),
                format!(
                    "expected a platform timestamp such as \"1775835600.000100\", got {:?}",
                    m.ts
                ),
            )
        })?;
        let id = m.message_id.as_deref().unwrap_or(&m.ts);
        if id.is_empty() {
            return Err(InputError::type_error(
                format!("{path}.messageId"),
                "expected a non-empty string",
            ));
        }
        let thread_id = m.thread_id.filter(|t| t != id && *t != m.ts);
        let other_id = (id != m.ts).then(|| id.into());
        let files = m
            .media
            .unwrap_or_default()
            .into_iter()
            .map(|f| StoredFile {
                url: f.url.clone(),
                media: MediaRef::from(&f),
            })
            .collect();
        let reactions = m
            .reactions
            .unwrap_or_default()
            .into_iter()
            .filter(|r| r.count > 0)
            .map(|r| Reaction {
                name: r.name.trim_matches(':').to_string(),
                count: r.count,
                users: r.users.unwrap_or_default(),
            })
            .collect();
        Ok(StoredMessage {
            other_id,
            key,
            author: Arc::new(Author::from(&m.author)),
            text: m.text.into(),
            broadcast: m.broadcast.unwrap_or(false) && thread_id.is_some(),
            thread_id: thread_id.map(Into::into),
            extras: ExtrasBox::new(Extras {
                reply_count: m.reply_count.unwrap_or(0),
                latest_reply: m.last_reply_ts,
                reactions,
                files,
                reply_to: None,
            }),
            edited: m.edited.unwrap_or(false),
            ts: m.ts.into(),
            cache: Default::default(),
        })
    }

    /// Applies a reaction change. Adding a user's reaction twice, or removing one that
    /// is not there, changes nothing when the users are known.
    pub fn react(&mut self, name: &str, user: Option<&str>, added: bool) {
        self.invalidate();
        let name = name.trim_matches(':');
        let pos = self.reactions().iter().position(|r| r.name == name);
        match (pos, added) {
            (None, true) => self.extras.get_mut().reactions.push(Reaction {
                name: name.to_string(),
                count: 1,
                users: user.map(|u| vec![u.to_string()]).unwrap_or_default(),
            }),
            (None, false) => {}
            (Some(i), true) => {
                let r = &mut self.extras.get_mut().reactions[i];
                if let Some(u) = user {
                    if r.users.iter().any(|x| x == u) {
                        return;
                    }
                    r.users.push(u.to_string());
                }
                r.count += 1;
            }
            (Some(i), false) => {
                let r = &mut self.extras.get_mut().reactions[i];
                if let Some(u) = user {
                    match r.users.iter().position(|x| x == u) {
                        Some(j) => {
                            r.users.remove(j);
                        }
                        None if !r.users.is_empty() => return,
                        None => {}
                    }
                }
                r.count = r.count.saturating_sub(1);
                if r.count == 0 {
                    self.extras.get_mut().reactions.remove(i);
                    self.extras.tidy();
                }
            }
        }
    }
}

mod event;
pub mod render_cache;
pub use event::*;
