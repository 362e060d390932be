//! Building context from what the store holds: the ChannelSnapshot, ThreadContext and
//! prompt section once the fetches `plan` asked for are done (`build`), degrading to
//! stale data or nothing, with notes, when a fetch failed.

pub use super::activity::{Activity, ThreadStats};
pub use super::documents::Documents;
use super::documents::*;
use super::fetch::Failure;
use super::render::{render_thread, ThreadLimits};
use super::request::ContextRequest;
use super::Store;
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

impl Store {
    /// Builds the context from what is held at `now`. `failed` are the fetches that did
    /// not happen; what they would have refreshed is served stale (within
    /// `stale_ms`) or left out, with a note each.
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
        let center = match &at {
            AnchorAt::Reply { thread, .. } => self
                .channels
                .get(&req.channel)
                .and_then(|c| c.key_of(thread))
                .unwrap_or(anchor.key),
            _ => anchor.key,
        };
        let ch = self.channels.get(&req.channel);
        let channel = Channel {
            id: super::platform_id(&req.channel).to_string(),
            name: ch
                .and_then(|c| c.name.clone())
                .unwrap_or_else(|| req.channel.clone()),
            platform: ch
                .and_then(|c| c.platform.clone())
                .unwrap_or_else(|| DEFAULT_PLATFORM.to_string()),
        };
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
        // The adjacent messages as JSON objects (cached on messages without thread
        // activity), then the ones that fit the snapshot budget: those with thread
        // activity or reactions first, then the nearest in time, each while it fits.
        let anchor_secs = anchor.key.0;
        let compact_entry = |m: &StoredMessage, activity: Option<&Activity>| -> f64 {
            if req.prompt.compact {
                compact_entry_estimate(m, activity, anchor_secs)
            } else {
                0.0
            }
        };
        let picks: Vec<AdjacentPick> = near
            .iter()
            .map(|m| {
                let distance = micros(m.key).abs_diff(micros(center));
                match self.thread_activity(&req.channel, m, now, false) {
                    None => {
                        let f =
                            m.adjacent_fragment(|m| section_json(&adjacent_view(m, None), false));
                        AdjacentPick {
                            json: Cow::Borrowed(f.json.as_str()),
                            estimate: f.estimate,
                            compact: compact_entry(m, None),
                            author: &m.author,
                            signal: !m.reactions().is_empty(),
                            distance,
                        }
                    }
                    some => {
                        let compact = compact_entry(m, some.as_ref());
                        let json = section_json(&adjacent_view(m, some), false);
                        AdjacentPick {
                            estimate: tokens::estimate(&json),
                            json: Cow::Owned(json),
                            compact,
                            author: &m.author,
                            signal: true,
                            distance,
                        }
                    }
                }
            })
            .collect();
        let head = section_json(
            &SnapshotHead {
                schema_version: SCHEMA_VERSION,
                channel: channel.clone(),
                anchor: anchor_view.clone(),
            },
            false,
        );
        let form = if req.prompt.compact {
            // The compact text without adjacent messages, its note at its widest.
            let bare = ChannelSnapshot {
                schema_version: SCHEMA_VERSION.to_string(),
                channel: channel.clone(),
                anchor: Anchor {
                    message_id: anchor.id().to_string(),
                    ts: anchor.iso_ts().to_string(),
                    author: (*anchor.author).clone(),
                    text: anchor_text.to_string(),
                    media: anchor.media_refs(),
                    thread_id: anchor.thread_id.as_deref().map(str::to_string),
                },
                adjacent: Vec::new(),
                adjacent_omitted: Some(99_999),
            };
            SnapshotForm::Compact {
                head: tokens::estimate(&compact_snapshot(&bare)),
                anchor_author: &anchor.author,
            }
        } else {
            SnapshotForm::Json
        };
        let (keep, json_estimate) = within_snapshot_budget(&form, &head, &picks, req, usize::MAX);
        let omitted_of = |keep: &[bool]| {
            let omitted = keep.iter().filter(|k| !**k).count();
            (omitted > 0).then(|| u32::try_from(omitted).unwrap_or(u32::MAX))
        };
        let adjacent_omitted = omitted_of(&keep);
        let mut stale = false;
        let mut rendered = None;
        if let Some(tid) = thread_id {
            let (held, was_stale) = self.held_thread(&req.channel, &tid, now, &mut notes);
            stale = was_stale;
            rendered = held.map(|h| (tid, h.root, h.replies, h.total));
        }
        // The thread's JSON, budgeted unindented, appended to a buffer.
        let mut truncation = None;
        let mut telemetry = None;
        let render = |out: &mut String, max_replies: usize| {
            rendered.as_ref().map(|(tid, root, replies, total)| {
                render_thread(
                    tid,
                    root,
                    replies,
                    *total,
                    ThreadLimits {
                        budget_tokens: req.budget_tokens,
                        meter: req.meter,
                        max_replies,
                        compact_anchor: req.prompt.compact.then_some(anchor_secs),
                    },
                    out,
                )
            })
        };
        let guidance = guidance_text(req.prompt);
        let g_est = guidance_estimate(req.prompt);
        let snapshot_parts = SnapshotParts {
            head: &head,
            picks: &picks,
            keep: &keep,
            adjacent_omitted,
        };
        let assembled = if req.prompt.pretty || req.prompt.compact {
            // The form shown is written, then counted: while a document is over its
            // budget (the choice was made on estimates of its parts), it keeps fewer.
            let mut keep = keep;
            let mut max_replies = usize::MAX;
            loop {
                let adjacent_omitted = omitted_of(&keep);
                let snapshot_json = if req.prompt.pretty {
                    let adjacent = near
                        .iter()
                        .zip(&keep)
                        .filter(|(_, k)| **k)
                        .map(|(m, _)| self.adjacent_view(&req.channel, m, now))
                        .collect();
                    section_json(
                        &SnapshotView {
                            schema_version: SCHEMA_VERSION,
                            channel: channel.clone(),
                            anchor: anchor_view.clone(),
                            adjacent,
                            adjacent_omitted,
                        },
                        true,
                    )
                } else {
                    let mut json = String::new();
                    SnapshotParts {
                        head: &head,
                        picks: &picks,
                        keep: &keep,
                        adjacent_omitted,
                    }
                    .write(&mut json);
                    json
                };
                let mut thread_json = String::new();
                let r = render(&mut thread_json, max_replies);
                let included = r
                    .as_ref()
                    .map_or(0, |r| r.truncation.included_replies as usize);
                if let Some(r) = r {
                    truncation = Some(r.truncation);
                    telemetry = Some(r.telemetry);
                }
                let thread_json = truncation.is_some().then_some(thread_json);
                let a =
                    assemble_documents(guidance, snapshot_json, thread_json, req.prompt.compact);
                let kept = keep.iter().filter(|k| **k).count();
                let (s_est, t_est) = a.estimates;
                let snapshot_over = kept > 0 && !req.meter.fits(s_est, req.snapshot_budget_tokens);
                let thread_over = included > 1 && !req.meter.fits(t_est, req.budget_tokens);
                if !snapshot_over && !thread_over {
                    break a;
                }
                if snapshot_over {
                    let n = fewer(kept, s_est, req.meter.allowance(req.snapshot_budget_tokens));
                    keep = within_snapshot_budget(&form, &head, &picks, req, n).0;
                }
                if thread_over {
                    max_replies =
                        fewer(included, t_est, req.meter.allowance(req.budget_tokens)).max(1);
                }
            }
        } else {
            // The default form writes both documents straight into the prompt, whose
            // estimates are known from their parts.
            let mut prompt = spare::take(guidance.len() + snapshot_parts.len() + 128);
            prompt.push_str(guidance);
            let snapshot_range =
                write_document(&mut prompt, "\n", (SNAPSHOT_OPEN, SNAPSHOT_CLOSE), |p| {
                    snapshot_parts.write(p);
                });
            let mut t_est = 0.0;
            let thread_range = rendered.is_some().then(|| {
                write_document(&mut prompt, "\n\n", (THREAD_OPEN, THREAD_CLOSE), |p| {
                    if let Some(r) = render(p, usize::MAX) {
                        t_est = r.estimate;
                        truncation = Some(r.truncation);
                        telemetry = Some(r.telemetry);
                    }
                })
            });
            Assembled {
                prompt,
                snapshot_range,
                thread_range,
                documents: None,
                estimates: (json_estimate, t_est),
            }
        };
        let Assembled {
            mut prompt,
            snapshot_range,
            thread_range,
            documents,
            estimates: (s_est, t_est),
        } = assembled;
        let (snapshot_open, thread_open) = section_tags(documents.is_some());
        // Upper bounds, as budgets count them; the parts meet at tags and line breaks,
        // so the whole is bounded from the sum of their estimates and the frame's.
        let mut frame = format!("\n{snapshot_open}\n\n{SNAPSHOT_CLOSE}");
        if thread_range.is_some() {
            frame.push_str(&format!("\n\n{thread_open}\n\n{THREAD_CLOSE}"));
        }
        let frame_est = tokens::estimate(&frame);
        // The quoted reply goes last, after the documents, so their ranges stay put.
        let root = rendered.as_ref().map(|(tid, ..)| tid.as_str());
        let root_shown = thread_range.is_some()
            && quoted_reply
                .as_ref()
                .is_some_and(|q| root.is_some() && q.message_id.as_deref() == root);
        let q_est = match quoted_reply.as_deref().and_then(|q| q.block(root_shown)) {
            Some(block) => {
                prompt.push_str(&block);
                tokens::estimate(&block)
            }
            None => 0.0,
        };
        if stale {
            self.counters.stale_serves += 1;
        }
        let bound = |e: f64| req.meter.bound(e);
        // What the thread shown counts (the compact or indented form's own text).
        if let Some(t) = telemetry.as_mut() {
            t.actual_tokens = bound(t_est);
        }
        let tokens = Tokens {
            guidance: bound(g_est),
            snapshot: bound(s_est),
            thread: bound(t_est),
            quoted_reply: bound(q_est),
            total: bound(g_est + s_est + t_est + frame_est + q_est),
        };
        Ok(Built {
            prompt,
            snapshot_range,
            thread_range,
            documents,
            truncation,
            telemetry,
            tokens,
            quoted_reply,
            stale,
            notes,
        })
    }
}
