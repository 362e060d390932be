//! The store's renderings: each held message's reply JSON and snippet are computed once
//! and kept on the message until its text changes, so a warm `buildContext` mostly copies
//! bytes; and the ThreadContext is budgeted over what it costs in the prompt (each
//! reply's JSON object), not over bare text, so the thread section fits its budget.

use crate::channel::message::render_cache::{Fragment, RenderCache, Renderings};
use crate::channel::message::StoredMessage;
use crate::core::compact::{plain_name, relative, thread_head, Authors, ReplyLine};
use crate::core::model::STRATEGY_MOST_RECENT;
use crate::core::model::{ThreadRoot, ThreadTelemetry, Truncation, SCHEMA_VERSION};
use crate::core::prompt::section_json;
use crate::core::text::truncate_snippet;
use crate::core::thread::{thread_reply, thread_root};
use crate::core::time::to_iso;
use crate::core::tokens;

impl StoredMessage {
    fn rc(&self) -> &Renderings {
        self.cache.get()
    }

    /// This message as a ThreadContext reply (escaped JSON object).
    pub fn reply_fragment(&self) -> &Fragment {
        self.rc().reply.get_or_init(|| {
            let r = thread_reply(self);
            Fragment::new(section_json(&r, false), r.is_truncated)
        })
    }

    /// This message as a ThreadContext root (escaped JSON object, full text).
    pub fn root_fragment(&self) -> &Fragment {
        self.rc()
            .root
            .get_or_init(|| Fragment::new(section_json(&thread_root(self), false), false))
    }

    /// The central estimate of this reply's entry in the compact thread, without its
    /// time (which depends on the anchor) and under its author's plain name.
    pub fn compact_reply_estimate(&self) -> f64 {
        *self.rc().compact_reply.get_or_init(|| {
            let r = thread_reply(self);
            let mut line = String::new();
            ReplyLine {
                message_id: &r.message_id,
                when: "",
                name: &plain_name(&r.author),
                cut: r.is_truncated,
                media: &r.media,
                text: &r.text,
            }
            .write(&mut line);
            tokens::estimate(&line)
        })
    }

    /// The estimate of this message's entry in the compact snapshot without thread
    /// activity, without its time, `compute`d on first use.
    pub fn compact_adjacent_estimate(&self, compute: impl FnOnce(&Self) -> f64) -> f64 {
        *self.rc().compact_adjacent.get_or_init(|| compute(self))
    }

    /// The adjacent-message snippet of this message.
    pub fn snippet(&self) -> &str {
        self.rc()
            .snippet
            .get_or_init(|| truncate_snippet(&self.text.as_str()))
    }

    /// The message's ts as ISO-8601.
    pub fn iso_ts(&self) -> &str {
        self.rc().iso.get_or_init(|| to_iso(&self.ts))
    }

    /// This message as an adjacent message without thread activity, rendered by
    /// `render` on first use.
    pub fn adjacent_fragment(&self, render: impl FnOnce(&Self) -> String) -> &Fragment {
        self.rc()
            .adjacent
            .get_or_init(|| Fragment::new(render(self), false))
    }

    /// Forgets the renderings (after an edit or a reaction).
    pub fn invalidate(&mut self) {
        self.cache = RenderCache::default();
    }
}

/// What rendering a thread produced (its JSON is appended to the caller's buffer).
#[derive(Debug, Clone, PartialEq)]
pub struct RenderedThread {
    /// The token estimate of the JSON written (the sum of its parts' estimates).
    pub estimate: f64,
    pub truncation: Truncation,
    pub telemetry: ThreadTelemetry,
}

/// How much of a thread [`render_thread`] shows.
#[derive(Debug, Clone, Copy)]
pub struct ThreadLimits {
    pub budget_tokens: u64,
    /// How the model counts tokens (see `crate::core::tokens::Meter`).
    pub meter: tokens::Meter,
    pub max_replies: usize,
    /// The thread is shown in the compact form, with times relative to this moment (the
    /// anchor's, in seconds): replies are chosen by what their compact entries cost.
    pub compact_anchor: Option<i64>,
}

/// What the compact entries of a thread's replies cost, as they are chosen: the entry and
/// its time, and the authors line's entry of an author not seen before.
struct CompactCost {
    anchor: i64,
    authors: Authors,
}

impl CompactCost {
    fn of(&mut self, r: &StoredMessage) -> f64 {
        let when = relative(r.key.0 - self.anchor);
        let author = self.authors.cost(&r.author);
        self.authors.name(&r.author);
        r.compact_reply_estimate() + tokens::estimate(&when) + author
    }
}

/// Appends the ThreadContext JSON to `out`: the root in full, then the newest replies whose JSON
/// fits `budget_tokens` (the thread's whole JSON counted by the model's meter, so the
/// section never exceeds the budget, unless the root
/// alone or the newest reply, which is always kept, is larger), at most `max_replies` of
/// them. `replies` are oldest first; `total` is the thread's reply count (at least
/// `replies.len()`).
pub fn render_thread(
    thread_id: &str,
    root: &StoredMessage,
    replies: &[&StoredMessage],
    total: u64,
    limits: ThreadLimits,
    out: &mut String,
) -> RenderedThread {
    let ThreadLimits {
        budget_tokens,
        meter,
        max_replies,
        compact_anchor,
    } = limits;
    let total = total.max(replies.len() as u64);
    let head = format!(
        "{{\"schema_version\":\"{SCHEMA_VERSION}\",\"thread_id\":{},\"root\":",
        section_json(&thread_id, false)
    );
    let root_frag = root.root_fragment();
    const MID: &str = ",\"replies\":[";
    const TAIL_OPEN: &str = "],\"truncation\":";
    // Estimates of the parts add up (they meet at JSON punctuation). The truncation
    // object is counted at its longest: every count as wide as `total`, and an omitted
    // range of two timestamps shaped like the oldest reply's (ISO forms of platform ts
    // of one length have the same digit runs).
    let iso = replies.first().map(|r| to_iso(&r.ts)).unwrap_or_default();
    let truncation_widest = format!(
        "{{\"total_replies\":{total},\"included_replies\":{total},\"strategy\":\"{STRATEGY_MOST_RECENT}\",\"omitted_range_ts\":[\"{iso}\",\"{iso}\"]}}"
    );
    let widest_estimate = tokens::estimate(&truncation_widest);
    let json_fixed = tokens::estimate(&head)
        + root_frag.estimate
        + tokens::estimate(MID)
        + tokens::estimate(TAIL_OPEN)
        + widest_estimate
        + tokens::estimate("}");
    let mut compact = compact_anchor.map(|anchor| CompactCost {
        anchor,
        authors: Authors::default(),
    });
    // The compact form: its head at its widest, the authors line, the root's entry.
    let fixed = match compact.as_mut() {
        None => json_fixed,
        Some(c) => {
            let widest = Truncation {
                total_replies: total,
                included_replies: total,
                strategy: String::new(),
                omitted_range_ts: Some((iso.clone(), iso.clone())),
            };
            tokens::estimate(&thread_head(thread_id, &widest))
                + tokens::estimate("\nauthors:\nroot ")
                + c.of(root)
        }
    };
    // The most the estimate may come to (the bound is monotone: one solve, then compares).
    let allowance = meter.allowance(budget_tokens);
    let (first, used) = newest_within(replies, fixed, allowance, max_replies, &mut compact);
    let included = &replies[first..];
    let omitted_range_ts =
        (first > 0).then(|| (to_iso(&replies[0].ts), to_iso(&replies[first - 1].ts)));
    let truncation = Truncation::most_recent(total, included.len() as u64, omitted_range_ts);
    let truncation_json = section_json(&truncation, false);
    let body: usize = included
        .iter()
        .map(|r| r.reply_fragment().json.len() + 1)
        .sum();
    out.reserve(head.len() + root_frag.json.len() + body + truncation_json.len() + 32);
    out.push_str(&head);
    out.push_str(&root_frag.json);
    out.push_str(MID);
    for (k, r) in included.iter().enumerate() {
        if k > 0 {
            out.push(',');
        }
        out.push_str(&r.reply_fragment().json);
    }
    out.push_str(TAIL_OPEN);
    out.push_str(&truncation_json);
    out.push('}');
    // What was written, from its parts: the truncation object as it came out (the
    // compact form's own estimate is taken on its text by the caller).
    let json_used = if compact.is_some() {
        let comma = tokens::estimate(",");
        json_fixed
            + included
                .iter()
                .map(|r| r.reply_fragment().estimate)
                .sum::<f64>()
            + comma * included.len().saturating_sub(1) as f64
    } else {
        used
    };
    let estimate = json_used - widest_estimate + tokens::estimate(&truncation_json);
    let actual = meter.bound(estimate);
    let messages_truncated = included
        .iter()
        .filter(|r| r.reply_fragment().truncated)
        .count() as u64;
    RenderedThread {
        estimate,
        telemetry: ThreadTelemetry {
            thread_budget_tokens: budget_tokens,
            actual_tokens: actual,
            messages_truncated,
        },
        truncation,
    }
}

/// The newest replies that fit `allowance` after `fixed`, at most `max_replies` (the
/// newest always kept): the index of the oldest kept and the estimate with them. A reply
/// costs its JSON and the comma before it, or its compact entry.
fn newest_within(
    replies: &[&StoredMessage],
    fixed: f64,
    allowance: f64,
    max_replies: usize,
    compact: &mut Option<CompactCost>,
) -> (usize, f64) {
    let comma_cost = if compact.is_some() {
        0.0
    } else {
        tokens::estimate(",")
    };
    let mut used = fixed;
    let mut first = replies.len();
    for (i, r) in replies.iter().enumerate().rev() {
        if replies.len() - first >= max_replies.max(1) {
            break;
        }
        let comma = if first != replies.len() {
            comma_cost
        } else {
            0.0
        };
        let cost = match compact.as_mut() {
            Some(c) => c.of(r),
            None => r.reply_fragment().estimate + comma,
        };
        if first != replies.len() && used + cost > allowance {
            break;
        }
        used += cost;
        first = i;
    }
    (first, used)
}

/// The root as the thread's JSON shows it (for callers that want the struct).
pub fn root_of(root: &StoredMessage) -> ThreadRoot {
    thread_root(root)
}
