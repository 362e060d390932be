//! Layered assembly: the context for one user message, from the store, in the seed's
//! order (policy, personality, thread summary, retrieved memories, recent messages of the
//! same lane, quoted reply context, user message) within a hard token budget. The
//! memories layer starts with the summaries of other lanes the message names (see
//! [`MemoryStore::named_lanes`]), then the records retrieved for it.
//!
//! When the layers do not fit, they give way in this order until they do: retrieved
//! memories (the lowest ranked first), then recent messages (the oldest first), then the
//! quoted reply, then the thread summary, then the personality. The policy and the user
//! message are never dropped; when those two alone exceed the budget, the result says so
//! (`over_budget`) rather than cutting either. An empty policy or user message has no
//! section (the caller sends it apart).
//!
//! Every layer is an XML-like section whose text is escaped (`&`, `<`, `>`), so chat text
//! cannot close a section or open another.

use super::db::MemoryError;
use super::store::{MemoryStore, RecordKind, Role};
use crate::tokens::counted;

/// What to assemble for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssembleRequest<'a> {
    pub session_id: &'a str,
    /// The lane of the user's message (see [`super::keys`]).
    pub thread_key: &'a str,
    pub policy: &'a str,
    pub personality: &'a str,
    pub user_message: &'a str,
    /// The text retrieval and lane naming go by, when not the user message (a gateway
    /// that sends the user message itself assembles the other layers around it).
    pub query: Option<&'a str>,
    /// The text of the message the user replied to, when it replied to one.
    pub quoted_reply: Option<&'a str>,
    /// Recent messages of the lane to include at most.
    pub recent: usize,
    /// Retrieved memories to include at most.
    pub memories: usize,
    /// The hard budget of the whole context, in estimated tokens.
    pub budget_tokens: u64,
}

/// Estimated tokens per layer of an assembled context (0 for a layer left out).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LayerTokens {
    pub policy: u64,
    pub personality: u64,
    pub summary: u64,
    pub memories: u64,
    pub recent: u64,
    pub quoted: u64,
    pub user: u64,
}

impl LayerTokens {
    pub fn total(&self) -> u64 {
        self.policy
            + self.personality
            + self.summary
            + self.memories
            + self.recent
            + self.quoted
            + self.user
    }
}

/// An assembled context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assembled {
    pub text: String,
    pub tokens: LayerTokens,
    /// Memories and recent messages included, after the budget.
    pub memories_included: usize,
    pub recent_included: usize,
    /// The policy and the user message alone exceed the budget.
    pub over_budget: bool,
}

/// `&`, `<` and `>` escaped, so text cannot close or open a section.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            _ => out.push(c),
        }
    }
    out
}

fn section(tag: &str, body: &str) -> String {
    format!("<{tag}>\n{}\n</{tag}>\n", escape(body.trim_end()))
}

/// Assembles the context for `req` from `store`.
pub fn assemble(store: &MemoryStore, req: &AssembleRequest<'_>) -> Result<Assembled, MemoryError> {
    // An empty policy or user message is a layer the caller sends itself: no section.
    let optional = |tag: &str, body: &str| {
        if body.is_empty() {
            String::new()
        } else {
            section(tag, body)
        }
    };
    let policy = optional("policy", req.policy);
    let query = req.query.unwrap_or(req.user_message);
    let personality =
        (!req.personality.is_empty()).then(|| section("personality", req.personality));
    let summary = store
        .record(req.session_id, RecordKind::ThreadSummary, req.thread_key)?
        .map(|r| section("thread_summary", &r.body));
    // Summaries of other lanes the message names, then the retrieved records.
    let related = store.named_lanes(req.session_id, query, req.thread_key)?;
    let mut memories: Vec<String> = Vec::new();
    for lane in &related {
        if let Some(r) = store.record(req.session_id, RecordKind::ThreadSummary, lane)? {
            memories.push(format!(
                "- summary of {}:\n{}\n",
                escape(lane),
                escape(r.body.trim_end())
            ));
        }
    }
    memories.extend(
        store
            .search(
                req.session_id,
                query,
                req.thread_key,
                req.memories,
                req.budget_tokens,
            )?
            .into_iter()
            .filter(|r| r.kind != RecordKind::ThreadSummary)
            .map(|r| format!("- {}\n", escape(&r.body))),
    );
    let recent: Vec<String> = store
        .recent(req.session_id, req.thread_key, req.recent)?
        .into_iter()
        .map(|m| {
            let who = if m.role == Role::Assistant {
                "assistant"
            } else {
                "user"
            };
            format!("[{who}] {}\n", escape(&m.text))
        })
        .collect();
    let quoted = req.quoted_reply.map(|q| section("quoted_reply_context", q));
    let user = optional("user_message", req.user_message);

    // Give way in the documented order until the layers fit.
    let mut keep_memories = memories.len();
    let mut keep_recent = recent.len();
    let mut keep_quoted = quoted.is_some();
    let mut keep_summary = summary.is_some();
    let mut keep_personality = personality.is_some();
    let cost = |m: usize, r: usize, q: bool, s: bool, p: bool| -> LayerTokens {
        // A list section: its tags and the items given.
        let list = |items: &[String], tag: &str| {
            if items.is_empty() {
                0
            } else {
                counted(&format!("<{tag}>\n</{tag}>\n"))
                    + items.iter().map(|i| counted(i)).sum::<u64>()
            }
        };
        LayerTokens {
            policy: counted(&policy),
            personality: if p {
                personality.as_deref().map_or(0, counted)
            } else {
                0
            },
            summary: if s {
                summary.as_deref().map_or(0, counted)
            } else {
                0
            },
            memories: list(&memories[..m], "memories"),
            recent: list(&recent[recent.len() - r..], "recent_messages"),
            quoted: if q {
                quoted.as_deref().map_or(0, counted)
            } else {
                0
            },
            user: counted(&user),
        }
    };
    loop {
        let t = cost(
            keep_memories,
            keep_recent,
            keep_quoted,
            keep_summary,
            keep_personality,
        );
        if t.total() <= req.budget_tokens {
            break;
        }
        if keep_memories > 0 {
            keep_memories -= 1;
        } else if keep_recent > 0 {
            keep_recent -= 1;
        } else if keep_quoted {
            keep_quoted = false;
        } else if keep_summary {
            keep_summary = false;
        } else if keep_personality {
            keep_personality = false;
        } else {
            break;
        }
    }
    let t = cost(
        keep_memories,
        keep_recent,
        keep_quoted,
        keep_summary,
        keep_personality,
    );
    let mut text = policy.clone();
    if keep_personality {
        text.push_str(personality.as_deref().unwrap_or_default());
    }
    if keep_summary {
        text.push_str(summary.as_deref().unwrap_or_default());
    }
    if keep_memories > 0 {
        text.push_str("<memories>\n");
        memories[..keep_memories]
            .iter()
            .for_each(|m| text.push_str(m));
        text.push_str("</memories>\n");
    }
    if keep_recent > 0 {
        text.push_str("<recent_messages>\n");
        recent[recent.len() - keep_recent..]
            .iter()
            .for_each(|m| text.push_str(m));
        text.push_str("</recent_messages>\n");
    }
    if keep_quoted {
        text.push_str(quoted.as_deref().unwrap_or_default());
    }
    text.push_str(&user);
    Ok(Assembled {
        text,
        tokens: t,
        memories_included: keep_memories,
        recent_included: keep_recent,
        over_budget: t.total() > req.budget_tokens,
    })
}

#[cfg(test)]
mod tests;
