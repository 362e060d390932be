//! The prompt section's documents as the store writes them: the ChannelSnapshot
//! serialized from held messages, chosen to fit its budget in the JSON or the compact
//! form, and the section assembled around the snapshot and thread.

use super::activity::Activity;
use super::request::ContextRequest;
use super::ChannelStore;
use crate::channel::message::StoredMessage;
use crate::core::compact::{
    compact_snapshot, compact_thread, plain_name, relative, AdjacentLine, Authors,
};
use crate::core::model::{
    Author, Channel, ChannelSnapshot, MediaRef, ThreadActivity, ThreadContext,
};
use crate::core::prompt::{section_json, section_tags, SNAPSHOT_CLOSE, THREAD_CLOSE};
use crate::core::snapshot::reaction_label;
use crate::core::time::{to_iso, TsKey};
use crate::core::tokens;
use serde::Serialize;
use std::borrow::Cow;

/// The documents' JSON kept beside a prompt that shows them in the compact form.
#[derive(Debug, Clone, PartialEq)]
pub struct Documents {
    pub snapshot: String,
    pub thread: Option<String>,
}

/// A ChannelSnapshot serialized straight from held messages (same fields, same order as
/// [`ChannelSnapshot`], borrowed instead of copied).
#[derive(Serialize)]
pub(super) struct SnapshotView<'a> {
    pub(super) schema_version: &'static str,
    pub(super) channel: Channel,
    pub(super) anchor: AnchorView<'a>,
    pub(super) adjacent: Vec<AdjacentView<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) adjacent_omitted: Option<u32>,
}

/// An adjacent message rendered for the snapshot, and what choosing it depends on.
pub(super) struct AdjacentPick<'a> {
    pub(super) json: Cow<'a, str>,
    pub(super) estimate: f64,
    /// The estimate of its compact entry (0 when the JSON is shown).
    pub(super) compact: f64,
    pub(super) author: &'a Author,
    /// It has thread activity or reactions.
    pub(super) signal: bool,
    /// Microseconds from the anchor's position.
    pub(super) distance: u128,
}

/// A ts key in microseconds.
pub(super) fn micros(k: TsKey) -> i128 {
    i128::from(k.0) * 1_000_000 + i128::from(k.1)
}

/// What the snapshot costs in the form the prompt shows, beside its adjacent messages.
pub(super) enum SnapshotForm<'a> {
    /// The unindented JSON.
    Json,
    /// The compact form: the estimate of its text without adjacent messages (at its
    /// widest), and the anchor's author, whom the authors line names already.
    Compact {
        head: f64,
        anchor_author: &'a Author,
    },
}

/// Which of `picks` the snapshot keeps within its budget, at most `max_keep`: messages
/// with signal first, then the nearest, each kept while the whole still fits in the form
/// shown (a larger one is skipped for smaller ones after it). Also returns the estimate
/// of the JSON as written.
pub(super) fn within_snapshot_budget(
    form: &SnapshotForm,
    head: &str,
    picks: &[AdjacentPick],
    req: &ContextRequest,
    max_keep: usize,
) -> (Vec<bool>, f64) {
    let mut order: Vec<usize> = (0..picks.len()).collect();
    order.sort_by_key(|&i| (!picks[i].signal, picks[i].distance));
    let comma = tokens::estimate(",");
    let head_estimate = tokens::estimate(head);
    let allowance = req.snapshot_meter.allowance(req.snapshot_budget_tokens);
    let fits = |e: f64| e <= allowance;
    let mut authors = Authors::default();
    let mut used = match form {
        // The frame: `,"adjacent":[]` and the widest `,"adjacent_omitted":N`.
        SnapshotForm::Json => {
            head_estimate
                + tokens::estimate(",\"adjacent\":[]")
                + tokens::estimate(",\"adjacent_omitted\":99999")
        }
        SnapshotForm::Compact {
            head,
            anchor_author,
        } => {
            authors.name(anchor_author);
            *head
        }
    };
    let mut keep = vec![false; picks.len()];
    let mut kept = 0.0;
    let mut count = 0usize;
    for i in order {
        if count >= max_keep {
            break;
        }
        let p = &picks[i];
        let cost = match form {
            SnapshotForm::Json => p.estimate + comma,
            SnapshotForm::Compact { .. } => p.compact + authors.cost(p.author),
        };
        if fits(used + cost) {
            used += cost;
            kept += p.estimate;
            count += 1;
            keep[i] = true;
            if matches!(form, SnapshotForm::Compact { .. }) {
                authors.name(p.author);
            }
        }
    }
    // The estimate of the JSON as written: the parts meet at punctuation.
    let omitted = picks.len() - count;
    let mut written = head_estimate
        + tokens::estimate(",\"adjacent\":[]")
        + kept
        + comma * count.saturating_sub(1) as f64;
    if omitted > 0 {
        written += tokens::estimate(&format!(",\"adjacent_omitted\":{omitted}"));
    }
    (keep, written)
}

/// How many of `n` items to keep when they came to `estimate` and `allowance` is what
/// fits: in proportion, and at least one fewer.
pub(super) fn fewer(n: usize, estimate: f64, allowance: f64) -> usize {
    let share = if estimate > 0.0 {
        allowance / estimate
    } else {
        0.0
    };
    #[allow(clippy::cast_precision_loss, clippy::cast_sign_loss)]
    let scaled = (n as f64 * share).floor() as usize;
    scaled.min(n.saturating_sub(1))
}

/// The estimate of an adjacent message's entry in the compact snapshot (its author under
/// the plain name; times relative to `anchor_secs`). Without thread activity the entry
/// but its time is the same for every anchor: its estimate is kept on the message.
pub(super) fn compact_entry_estimate(
    m: &StoredMessage,
    activity: Option<&Activity>,
    anchor_secs: i64,
) -> f64 {
    let since = |secs: i64| relative(secs - anchor_secs);
    let entry = |m: &StoredMessage, when: &str, activity: Option<&Activity>| {
        let reactions: Vec<String> = m
            .reactions()
            .iter()
            .map(|r| reaction_label(&r.name, r.count))
            .collect();
        let mut line = String::new();
        AdjacentLine {
            message_id: m.id(),
            when,
            name: &plain_name(&m.author),
            snippet: m.snippet(),
            thread: activity.map(|a| {
                (
                    a.reply_count,
                    a.replies_last_1h,
                    a.last_reply_ts
                        .as_deref()
                        .and_then(crate::core::time::ts_key)
                        .map(|k| since(k.0)),
                )
            }),
            reactions: &reactions,
            has_media: !m.files().is_empty(),
        }
        .write(&mut line);
        tokens::estimate(&line)
    };
    let when = since(m.key.0);
    match activity {
        Some(_) => entry(m, &when, activity),
        None => m.compact_adjacent_estimate(|m| entry(m, "", None)) + tokens::estimate(&when),
    }
}

/// The unindented ChannelSnapshot JSON in parts: its head (without the adjacent
/// messages) and the adjacent messages' fragments, of which those in `keep` are written.
pub(super) struct SnapshotParts<'a> {
    pub(super) head: &'a str,
    pub(super) picks: &'a [AdjacentPick<'a>],
    pub(super) keep: &'a [bool],
    pub(super) adjacent_omitted: Option<u32>,
}

impl SnapshotParts<'_> {
    /// An upper bound of the JSON's length.
    pub(super) fn len(&self) -> usize {
        let body: usize = self.picks.iter().map(|p| p.json.len() + 1).sum();
        self.head.len() + body + 48
    }

    /// Appends the JSON to `out`.
    pub(super) fn write(&self, out: &mut String) {
        out.reserve(self.len());
        out.push_str(self.head.strip_suffix('}').unwrap_or(self.head));
        out.push_str(",\"adjacent\":[");
        let mut first = true;
        for (p, _) in self.picks.iter().zip(self.keep).filter(|(_, k)| **k) {
            if !first {
                out.push(',');
            }
            first = false;
            out.push_str(&p.json);
        }
        out.push(']');
        if let Some(n) = self.adjacent_omitted {
            out.push_str(",\"adjacent_omitted\":");
            out.push_str(&n.to_string());
        }
        out.push('}');
    }
}

/// Appends one document of the prompt section: `gap`, the opening tag, a line break, the
/// text `body` writes, a line break and the closing tag. Returns where the text sits.
pub(super) fn write_document(
    prompt: &mut String,
    gap: &str,
    tags: (&str, &str),
    body: impl FnOnce(&mut String),
) -> std::ops::Range<usize> {
    prompt.push_str(gap);
    prompt.push_str(tags.0);
    prompt.push('\n');
    let at = prompt.len();
    body(prompt);
    let range = at..prompt.len();
    prompt.push('\n');
    prompt.push_str(tags.1);
    range
}

/// The prompt section and where its documents sit in it.
pub(super) struct Assembled {
    pub(super) prompt: String,
    pub(super) snapshot_range: std::ops::Range<usize>,
    pub(super) thread_range: Option<std::ops::Range<usize>>,
    pub(super) documents: Option<Documents>,
    /// Token estimates of the snapshot's and the thread's text in the prompt.
    pub(super) estimates: (f64, f64),
}

/// The prompt section of a request for the compact or the indented form: the documents'
/// JSON is turned into the form the prompt shows (the compact form keeps the JSON beside
/// it; it wins when both are asked), and each text's estimate is counted.
pub(super) fn assemble_documents(
    guidance: &str,
    snapshot_json: String,
    thread_json: Option<String>,
    compact: bool,
) -> Assembled {
    let mut documents = None;
    let (snapshot_text, thread_text) = if !compact {
        // Indented: the snapshot was written so, the thread is indented here.
        let pretty = thread_json.map(|j| {
            serde_json::from_str::<serde_json::Value>(&j)
                .map(|v| section_json(&v, true))
                .unwrap_or(j)
        });
        (snapshot_json, pretty)
    } else {
        match serde_json::from_str::<ChannelSnapshot>(&snapshot_json) {
            Ok(snap) => {
                let thread_text = thread_json.as_deref().map(|j| {
                    serde_json::from_str::<ThreadContext>(j)
                        .map(|t| compact_thread(&t, &snap.anchor.ts))
                        .unwrap_or_else(|_| j.to_string())
                });
                let text = compact_snapshot(&snap);
                documents = Some(Documents {
                    snapshot: snapshot_json,
                    thread: thread_json,
                });
                (text, thread_text)
            }
            Err(_) => (snapshot_json, thread_json),
        }
    };
    let (snapshot_open, thread_open) = section_tags(documents.is_some());
    let extra = thread_text.as_ref().map_or(0, |t| t.len() + 64);
    let mut prompt = String::with_capacity(guidance.len() + snapshot_text.len() + extra + 128);
    prompt.push_str(guidance);
    let snapshot_range = write_document(&mut prompt, "\n", (snapshot_open, SNAPSHOT_CLOSE), |p| {
        p.push_str(&snapshot_text);
    });
    let thread_range = thread_text.as_deref().map(|t| {
        write_document(&mut prompt, "\n\n", (thread_open, THREAD_CLOSE), |p| {
            p.push_str(t);
        })
    });
    Assembled {
        estimates: (
            tokens::estimate(&snapshot_text),
            thread_text.as_deref().map_or(0.0, tokens::estimate),
        ),
        prompt,
        snapshot_range,
        thread_range,
        documents,
    }
}

/// The snapshot without its adjacent messages, which are appended as fragments.
#[derive(Serialize)]
pub(super) struct SnapshotHead<'a> {
    pub(super) schema_version: &'static str,
    pub(super) channel: Channel,
    pub(super) anchor: AnchorView<'a>,
}

#[derive(Serialize, Clone)]
pub(super) struct AnchorView<'a> {
    pub(super) message_id: &'a str,
    pub(super) ts: &'a str,
    pub(super) author: &'a Author,
    pub(super) text: &'a str,
    pub(super) media: Vec<MediaRef>,
    pub(super) thread_id: Option<&'a str>,
}

#[derive(Serialize)]
pub(super) struct AdjacentView<'a> {
    pub(super) message_id: &'a str,
    pub(super) ts: &'a str,
    pub(super) author: &'a Author,
    pub(super) snippet: &'a str,
    pub(super) thread_activity: Option<ThreadActivity>,
    pub(super) has_media: bool,
    pub(super) reactions: Vec<String>,
}

/// An adjacent message as the snapshot shows it.
pub(super) fn adjacent_view(m: &StoredMessage, activity: Option<Activity>) -> AdjacentView<'_> {
    AdjacentView {
        message_id: m.id(),
        ts: m.iso_ts(),
        author: &m.author,
        snippet: m.snippet(),
        thread_activity: activity.map(|a| ThreadActivity {
            reply_count: a.reply_count,
            replies_last_1h: a.replies_last_1h,
            last_reply_ts: a.last_reply_ts.as_deref().map(to_iso),
        }),
        has_media: !m.files().is_empty(),
        reactions: m
            .reactions()
            .iter()
            .map(|r| reaction_label(&r.name, r.count))
            .collect(),
    }
}

/// Where the anchor was found.
pub(super) enum AnchorAt<'a> {
    Window(&'a StoredMessage),
    Reply {
        message: &'a StoredMessage,
        thread: String,
    },
    Starter(&'a StoredMessage),
}

impl<'a> AnchorAt<'a> {
    pub(super) fn message(&self) -> &'a StoredMessage {
        match self {
            AnchorAt::Window(m) | AnchorAt::Starter(m) => m,
            AnchorAt::Reply { message, .. } => message,
        }
    }
}

impl ChannelStore {
    pub(super) fn adjacent_view<'a>(
        &self,
        channel: &str,
        m: &'a StoredMessage,
        now: u64,
    ) -> AdjacentView<'a> {
        adjacent_view(m, self.thread_activity(channel, m, now, false))
    }

    /// The `n` channel messages nearest to `center` (excluding `skip`), in channel
    /// order: the message at `center` first (a reply's root), then alternately before
    /// and after, the earlier message winning at equal distance.
    pub(super) fn nearest(
        &self,
        channel: &str,
        center: TsKey,
        skip: &str,
        n: usize,
    ) -> Vec<&StoredMessage> {
        let Some(ch) = self.channels.get(channel) else {
            return Vec::new();
        };
        let mut before = ch
            .window
            .before(center)
            .rev()
            .map(|m| &**m)
            .filter(|m| m.id() != skip)
            .peekable();
        let mut after = ch
            .window
            .from(center)
            .map(|m| &**m)
            .filter(|m| m.id() != skip)
            .peekable();
        // The message at the centre (a reply's root) is nearest of all.
        let mid = match after.peek() {
            Some(m) if m.key == center && n > 0 => after.next(),
            _ => None,
        };
        let taken = usize::from(mid.is_some());
        let (mut b, mut a) = (Vec::new(), Vec::new());
        while taken + b.len() + a.len() < n {
            let take_before = b.len() <= a.len() || after.peek().is_none();
            let next = if take_before { before.next() } else { None };
            match next {
                Some(m) => b.push(m),
                None => match after.next() {
                    Some(m) => a.push(m),
                    None => match before.next() {
                        Some(m) => b.push(m),
                        None => break,
                    },
                },
            }
        }
        b.reverse();
        b.extend(mid);
        b.extend(a);
        b
    }
}
