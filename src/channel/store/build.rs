//! Building context from what the store holds: the ChannelSnapshot, ThreadContext and
//! prompt section once the fetches `plan` asked for are done (`build`), degrading to
//! stale data or nothing, with notes, when a fetch failed.

pub use super::activity::{Activity, ThreadStats};
use super::documents::*;
use super::fetch::Failure;
use super::render::{render_thread, ThreadLimits};
use super::request::ContextRequest;
use super::ChannelStore;
use crate::channel::message::StoredMessage;
use crate::core::compact::compact_snapshot;
use crate::core::model::Truncation;
use crate::core::model::{
    Anchor, Author, Channel, ChannelSnapshot, MediaRef, MessageView, ThreadContext,
    ThreadTelemetry, SCHEMA_VERSION,
};
use crate::core::prompt::{
    guidance_estimate, guidance_text, section_json, section_tags, SNAPSHOT_CLOSE, SNAPSHOT_OPEN,
    THREAD_CLOSE, THREAD_OPEN,
};
use crate::core::spare;
use crate::core::tokens;
use std::borrow::Cow;

/// Platform of channels nobody described.
pub const DEFAULT_PLATFORM: &str = "slack";

impl MessageView for StoredMessage {
    fn id(&self) -> &str {
        self.id()
    }
    fn ts(&self) -> &str {
        &self.ts
    }
    fn author(&self) -> Author {
        Author::clone(&self.author)
    }
    fn text(&self) -> Cow<'_, str> {
        self.text.as_str()
    }
    fn media_refs(&self) -> Vec<MediaRef> {
        self.files().iter().map(|f| f.media.clone()).collect()
    }
}

/// Token estimates of the prompt section's parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Tokens {
    pub guidance: u64,
    pub snapshot: u64,
    pub thread: u64,
    /// The quoted-reply block (0 without one).
    pub quoted_reply: u64,
    pub total: u64,
}

/// The note of a Telegram build that shows fewer messages than asked.
pub const TELEGRAM_HISTORY_NOTE: &str = "Telegram's Bot API cannot read a chat's history: this context holds only the messages the store received since it started (and what its saved file kept).";

/// Everything `buildContext` returns.
#[derive(Debug, Clone, PartialEq)]
pub struct Built {
    /// The prompt section; the two JSON documents are ranges of it.
    pub prompt: String,
    /// Where the ChannelSnapshot JSON sits in `prompt`.
    pub snapshot_range: std::ops::Range<usize>,
    /// Where the ThreadContext JSON sits in `prompt`.
    pub thread_range: Option<std::ops::Range<usize>>,
    /// The two documents as JSON when the prompt shows them in another form.
    pub documents: Option<Documents>,
    pub truncation: Option<Truncation>,
    pub telemetry: Option<ThreadTelemetry>,
    pub tokens: Tokens,
    /// The message the anchor replies to, when it replies to one.
    pub quoted_reply: Option<Box<super::quoted::QuotedReply>>,
    /// Part of the context is older than its cache TTL (a fetch failed).
    pub stale: bool,
    /// Why something is missing or stale, one sentence each.
    pub notes: Vec<String>,
}

impl Built {
    /// The ChannelSnapshot's JSON (as the prompt carries it, unless in another form).
    pub fn snapshot_json(&self) -> &str {
        if let Some(d) = &self.documents {
            return &d.snapshot;
        }
        self.prompt
            .get(self.snapshot_range.clone())
            .unwrap_or("null")
    }

    /// The ThreadContext's JSON (as the prompt carries it, unless in another form).
    pub fn thread_json(&self) -> Option<&str> {
        if let Some(d) = &self.documents {
            return d.thread.as_deref();
        }
        self.thread_range.clone().and_then(|r| self.prompt.get(r))
    }

    /// The ChannelSnapshot, read back from its JSON.
    pub fn snapshot(&self) -> Option<ChannelSnapshot> {
        serde_json::from_str(self.snapshot_json()).ok()
    }

    /// The ThreadContext, read back from its JSON.
    pub fn thread(&self) -> Option<ThreadContext> {
        self.thread_json()
            .and_then(|j| serde_json::from_str(j).ok())
    }

    /// Heap bytes held (reported to V8 as external memory).
    pub fn heap_bytes(&self) -> usize {
        self.prompt.capacity()
            + self.notes.iter().map(String::capacity).sum::<usize>()
            + self.documents.as_ref().map_or(0, |d| {
                d.snapshot.capacity() + d.thread.as_ref().map_or(0, String::capacity)
            })
    }
}

/// Why nothing could be built.
#[derive(Debug, Clone, PartialEq)]
pub enum BuildError {
    AnchorNotFound {
        channel: String,
        anchor: String,
        notes: Vec<String>,
    },
}

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BuildError::AnchorNotFound {
                channel,
                anchor,
                notes,
            } => {
                write!(
                    f,
                    "anchor message {anchor} is not held for channel {channel}"
                )?;
                if notes.is_empty() {
                    write!(f, " and no fetcher could find it")
                } else {
                    write!(f, ": {}", notes.join(" "))
                }
            }
        }
    }
}

impl ChannelStore {
    /// Builds the context from what is held at `now`. `failed` are the fetches that did
    /// not happen; what they would have refreshed is served stale (within
    /// `stale_ms`) or left out, with a note each.
    ///
    /// The phases: the anchor and what it stands in, the adjacent messages as pieces
    /// with their costs, which fit the snapshot budget, the thread held, then both
    /// documents written into the prompt (in the form it shows), then the quoted reply
    /// and the counts.
    pub fn build(
        &mut self,
        req: &ContextRequest,
        failed: &[Failure],
        now: u64,
    ) -> Result<Built, BuildError> {
        let mut notes: Vec<String> = failed
            .iter()
            .map(|f| format!("Could not fetch {} ({}).", f.need.what(), f.reason))
            .collect();
        notes.extend(self.gate.shared_note().map(str::to_string));
        let events_only = self.events_only(&req.channel);
        let Some(at) = self.find_anchor(req) else {
            if events_only {
                notes.push(TELEGRAM_HISTORY_NOTE.to_string());
            }
            return Err(BuildError::AnchorNotFound {
                channel: req.channel.clone(),
                anchor: req.anchor_id.clone(),
                notes,
            });
        };
        let anchor = at.message();
        let quoted_reply = self
            .quoted_reply(&req.channel, anchor, &mut notes)
            .map(Box::new);
        let thread_id = self.anchor_thread(req, &at);
        let center = self.center_of(req, &at);
        let channel = self.channel_view(req);
        let near = self.nearest(&req.channel, center, anchor.id(), req.adjacent);
        if events_only && near.len() < req.adjacent {
            notes.push(TELEGRAM_HISTORY_NOTE.to_string());
        }
        let anchor_text = anchor.text.as_str();
        let anchor_view = AnchorView {
            message_id: anchor.id(),
            ts: anchor.iso_ts(),
            author: &anchor.author,
            text: &anchor_text,
            media: anchor.media_refs(),
            thread_id: anchor.thread_id.as_deref(),
        };
        let picks = self.adjacent_picks(req, &near, center, anchor.key.0, now);
        let head = section_json(
            &SnapshotHead {
                schema_version: SCHEMA_VERSION,
                channel: channel.clone(),
                anchor: anchor_view.clone(),
            },
            false,
        );
        let mut stale = false;
        let mut held = None;
        if let Some(tid) = thread_id {
            let (h, was_stale) = self.held_thread(&req.channel, &tid, now, &mut notes);
            stale = was_stale;
            held = h.map(|h| (tid, h));
        }
        let root = held.as_ref().map(|(tid, _)| tid.as_str());
        // Both documents written, within their budgets by `req`'s meters.
        let write = |req: &ContextRequest| {
            let form = snapshot_form(req, &channel, anchor, &anchor_text);
            let (keep, json_estimate) =
                within_snapshot_budget(&form, &head, &picks, req, usize::MAX);
            let docs = Docs {
                req,
                now,
                channel: &channel,
                anchor_view: &anchor_view,
                anchor_secs: anchor.key.0,
                near: &near,
                picks: &picks,
                head: &head,
                form: &form,
                thread: held.as_ref().map(|(tid, h)| (tid.as_str(), h)),
            };
            let (assembled, truncation, telemetry) = if req.prompt.pretty || req.prompt.compact {
                self.written_then_counted(&docs, keep)
            } else {
                docs.written_from_parts(&keep, json_estimate)
            };
            finish(
                assembled,
                req,
                quoted_reply.clone(),
                root,
                truncation,
                telemetry,
            )
        };
        let built = by_class(req, write);
        if stale {
            self.counters.stale_serves += 1;
        }
        Ok(Built {
            stale,
            notes,
            ..built
        })
    }
}

/// The thread's text in `b`'s prompt (`thread`), or the snapshot's.
fn section(b: &Built, thread: bool) -> Option<&str> {
    let range = if thread {
        b.thread_range.clone()
    } else {
        Some(b.snapshot_range.clone())
    };
    range.and_then(|r| b.prompt.get(r))
}

mod by_class;
mod phases;
use by_class::by_class;
use phases::{finish, snapshot_form, Docs};
