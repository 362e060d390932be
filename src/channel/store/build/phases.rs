//! The phases of [`ChannelStore::build`]: where the snapshot is centred and which channel it
//! names, the adjacent messages as pieces with their costs, the snapshot's form, the
//! documents written into the prompt (from their parts, or written and then counted),
//! and the counts of the whole.

use super::*;
use crate::channel::store::quoted::QuotedReply;
use crate::channel::store::render::RenderedThread;
use crate::channel::store::threads::HeldThread;
use crate::core::time::TsKey;

/// What the documents are made of, once chosen: borrowed from the build.
pub(super) struct Docs<'a> {
    pub(super) req: &'a ContextRequest,
    pub(super) now: u64,
    pub(super) channel: &'a Channel,
    pub(super) anchor_view: &'a AnchorView<'a>,
    /// The anchor's time (seconds), which the compact form counts relative times from.
    pub(super) anchor_secs: i64,
    pub(super) near: &'a [&'a StoredMessage],
    pub(super) picks: &'a [AdjacentPick<'a>],
    pub(super) head: &'a str,
    pub(super) form: &'a SnapshotForm<'a>,
    /// The thread shown, by its id.
    pub(super) thread: Option<(&'a str, &'a HeldThread<'a>)>,
}

/// The documents written into a prompt, with the thread's truncation and telemetry.
type Written = (Assembled, Option<Truncation>, Option<ThreadTelemetry>);

/// How many adjacent messages `keep` leaves out (`None`: none).
fn omitted_of(keep: &[bool]) -> Option<u32> {
    let omitted = keep.iter().filter(|k| !**k).count();
    (omitted > 0).then(|| u32::try_from(omitted).unwrap_or(u32::MAX))
}

impl Docs<'_> {
    /// Appends the thread's JSON (unindented, within its budget and `max_replies`) to
    /// `out`; `None` without a thread.
    fn render(&self, out: &mut String, max_replies: usize) -> Option<RenderedThread> {
        let req = self.req;
        self.thread.map(|(tid, h)| {
            render_thread(
                tid,
                h.root,
                &h.replies,
                h.total,
                ThreadLimits {
                    budget_tokens: req.budget_tokens,
                    meter: req.meter,
                    max_replies,
                    compact_anchor: req.prompt.compact.then_some(self.anchor_secs),
                },
                out,
            )
        })
    }

    /// The default form: both documents written straight into the prompt, their
    /// estimates known from their parts.
    pub(super) fn written_from_parts(&self, keep: &[bool], json_estimate: f64) -> Written {
        let guidance = guidance_text(self.req.prompt);
        let parts = SnapshotParts {
            head: self.head,
            picks: self.picks,
            keep,
            adjacent_omitted: omitted_of(keep),
        };
        let mut prompt = spare::take(guidance.len() + parts.len() + 128);
        prompt.push_str(guidance);
        let snapshot_range =
            write_document(&mut prompt, "\n", (SNAPSHOT_OPEN, SNAPSHOT_CLOSE), |p| {
                parts.write(p);
            });
        let (mut t_est, mut truncation, mut telemetry) = (0.0, None, None);
        let thread_range = self.thread.is_some().then(|| {
            write_document(&mut prompt, "\n\n", (THREAD_OPEN, THREAD_CLOSE), |p| {
                if let Some(r) = self.render(p, usize::MAX) {
                    t_est = r.estimate;
                    truncation = Some(r.truncation);
                    telemetry = Some(r.telemetry);
                }
            })
        });
        let assembled = Assembled {
            prompt,
            snapshot_range,
            thread_range,
            documents: None,
            estimates: (json_estimate, t_est),
        };
        (assembled, truncation, telemetry)
    }
}

impl ChannelStore {
    /// The moment the adjacent messages are nearest to: the thread's root for an anchor
    /// that is a reply, else the anchor.
    pub(super) fn center_of(&self, req: &ContextRequest, at: &AnchorAt<'_>) -> TsKey {
        let anchor = at.message();
        match at {
            AnchorAt::Reply { thread, .. } => self
                .channels
                .get(&req.channel)
                .and_then(|c| c.key_of(thread))
                .unwrap_or(anchor.key),
            _ => anchor.key,
        }
    }

    /// The channel as the snapshot names it: its platform's own id, its name (else the
    /// id) and platform.
    pub(super) fn channel_view(&self, req: &ContextRequest) -> Channel {
        let ch = self.channels.get(&req.channel);
        Channel {
            id: crate::channel::store::platform_id(&req.channel).to_string(),
            name: ch
                .and_then(|c| c.name.clone())
                .unwrap_or_else(|| req.channel.clone()),
            platform: ch
                .and_then(|c| c.platform.clone())
                .unwrap_or_else(|| DEFAULT_PLATFORM.to_string()),
        }
    }

    /// The adjacent messages as JSON pieces with their costs (cached on messages without
    /// thread activity), for the snapshot budget to choose from: those with thread
    /// activity or reactions first, then the nearest in time.
    pub(super) fn adjacent_picks<'a>(
        &'a self,
        req: &ContextRequest,
        near: &[&'a StoredMessage],
        center: TsKey,
        anchor_secs: i64,
        now: u64,
    ) -> Vec<AdjacentPick<'a>> {
        let compact_entry = |m: &StoredMessage, activity: Option<&Activity>| -> f64 {
            if req.prompt.compact {
                compact_entry_estimate(m, activity, anchor_secs)
            } else {
                0.0
            }
        };
        near.iter()
            .map(|&m| {
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
            .collect()
    }

    /// The indented and the compact forms: the form shown is written, then counted;
    /// while a document is over its budget (the choice was made on estimates of its
    /// parts), it keeps fewer.
    pub(super) fn written_then_counted(&self, docs: &Docs<'_>, mut keep: Vec<bool>) -> Written {
        let req = docs.req;
        let guidance = guidance_text(req.prompt);
        let (mut truncation, mut telemetry) = (None, None);
        let mut max_replies = usize::MAX;
        loop {
            let adjacent_omitted = omitted_of(&keep);
            let snapshot_json = if req.prompt.pretty {
                let adjacent = docs
                    .near
                    .iter()
                    .zip(&keep)
                    .filter(|(_, k)| **k)
                    .map(|(m, _)| self.adjacent_view(&req.channel, m, docs.now))
                    .collect();
                section_json(
                    &SnapshotView {
                        schema_version: SCHEMA_VERSION,
                        channel: docs.channel.clone(),
                        anchor: docs.anchor_view.clone(),
                        adjacent,
                        adjacent_omitted,
                    },
                    true,
                )
            } else {
                let mut json = String::new();
                SnapshotParts {
                    head: docs.head,
                    picks: docs.picks,
                    keep: &keep,
                    adjacent_omitted,
                }
                .write(&mut json);
                json
            };
            let mut thread_json = String::new();
            let r = docs.render(&mut thread_json, max_replies);
            let included = r
                .as_ref()
                .map_or(0, |r| r.truncation.included_replies as usize);
            if let Some(r) = r {
                truncation = Some(r.truncation);
                telemetry = Some(r.telemetry);
            }
            let thread_json = truncation.is_some().then_some(thread_json);
            let a = assemble_documents(guidance, snapshot_json, thread_json, req.prompt.compact);
            let kept = keep.iter().filter(|k| **k).count();
            let (s_est, t_est) = a.estimates;
            let snapshot_over =
                kept > 0 && !req.snapshot_meter.fits(s_est, req.snapshot_budget_tokens);
            let thread_over = included > 1 && !req.meter.fits(t_est, req.budget_tokens);
            if !snapshot_over && !thread_over {
                return (a, truncation, telemetry);
            }
            if snapshot_over {
                let n = fewer(
                    kept,
                    s_est,
                    req.snapshot_meter.allowance(req.snapshot_budget_tokens),
                );
                keep = within_snapshot_budget(docs.form, docs.head, docs.picks, req, n).0;
            }
            if thread_over {
                max_replies = fewer(included, t_est, req.meter.allowance(req.budget_tokens)).max(1);
            }
        }
    }
}

/// What the snapshot costs in the form shown: for the compact form, its text without
/// adjacent messages (its note at its widest).
pub(super) fn snapshot_form<'a>(
    req: &ContextRequest,
    channel: &Channel,
    anchor: &'a StoredMessage,
    anchor_text: &str,
) -> SnapshotForm<'a> {
    if !req.prompt.compact {
        return SnapshotForm::Json;
    }
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
}

/// The built context from the documents written: the quoted reply appended last (so
/// their ranges stay put; the thread's root is not repeated when the thread shows it),
/// and every part's tokens bounded as budgets count them (the parts meet at tags and
/// line breaks, so the whole is bounded from the sum of their estimates and the frame's).
/// `stale` and `notes` are the caller's to set.
pub(super) fn finish(
    assembled: Assembled,
    req: &ContextRequest,
    quoted_reply: Option<Box<QuotedReply>>,
    root: Option<&str>,
    truncation: Option<Truncation>,
    mut telemetry: Option<ThreadTelemetry>,
) -> Built {
    let Assembled {
        mut prompt,
        snapshot_range,
        thread_range,
        documents,
        estimates: (s_est, t_est),
    } = assembled;
    let (snapshot_open, thread_open) = section_tags(documents.is_some());
    let mut frame = format!("\n{snapshot_open}\n\n{SNAPSHOT_CLOSE}");
    if thread_range.is_some() {
        frame.push_str(&format!("\n\n{thread_open}\n\n{THREAD_CLOSE}"));
    }
    let frame_est = tokens::estimate(&frame);
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
    let g_est = guidance_estimate(req.prompt);
    // The thread and the snapshot by their own meters; the rest, and the whole, by the
    // model's (the whole at least what its sections count).
    let model = tokens::Meter::of_model(req.model.as_deref());
    if let Some(t) = telemetry.as_mut() {
        t.actual_tokens = req.meter.bound(t_est);
    }
    let (snapshot, thread) = (req.snapshot_meter.bound(s_est), req.meter.bound(t_est));
    let (guidance, quoted) = (model.bound(g_est), model.bound(q_est));
    let mut total = model.bound(g_est + s_est + t_est + frame_est + q_est);
    if (req.meter, req.snapshot_meter) != (model, model) {
        total = total.max(guidance + snapshot + thread + quoted);
    }
    let tokens = Tokens {
        guidance,
        snapshot,
        thread,
        quoted_reply: quoted,
        total,
    };
    Built {
        prompt,
        snapshot_range,
        thread_range,
        documents,
        truncation,
        telemetry,
        tokens,
        quoted_reply,
        stale: false,
        notes: Vec::new(),
    }
}
