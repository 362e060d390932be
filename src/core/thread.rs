//! ThreadContext: the root message in full plus the most recent replies that fit the
//! token budget, each reply capped at 300 tokens.
//!
//! Tokens are estimated over message text (`ceil(utf16_len / 4)`). The root counts
//! against the budget first; replies share what is left under the most-recent-first rule
//! of [`crate::core::budget`], measured after the 300-token cap. So `actual_tokens` never
//! exceeds the budget, except when the root alone, or the newest reply that is always
//! kept, is larger than it.

use crate::core::budget::most_recent_within;
use crate::core::model::{
    MessageInput, MessageView, ThreadContext, ThreadInput, ThreadReply, ThreadRoot,
    ThreadTelemetry, Truncation, SCHEMA_VERSION,
};
use crate::core::text::{
    estimate_tokens, tokens_for_units, truncate_reply, utf16_len, REPLY_MAX_TOKENS,
};
use crate::core::time::to_iso;

/// A ThreadContext with the telemetry of how it was budgeted.
#[derive(Debug, Clone, PartialEq)]
pub struct BudgetedThread {
    pub context: Option<ThreadContext>,
    pub telemetry: ThreadTelemetry,
}

/// Builds the ThreadContext, or `None` for a message that has no replies (it is not a
/// thread). `budget_tokens` is the whole thread's budget.
pub fn build_thread_context(input: &ThreadInput, budget_tokens: u64) -> BudgetedThread {
    let total_replies = input
        .total_reply_count
        .unwrap_or(0)
        .max(input.replies.len() as u64);
    let replies: Vec<&MessageInput> = input.replies.iter().collect();
    let thread_id = input
        .thread_id
        .clone()
        .unwrap_or_else(|| input.root.ts.clone());
    budget_thread(
        thread_id,
        &input.root,
        &replies,
        total_replies,
        budget_tokens,
    )
}

/// A reply as a ThreadContext shows it: over 300 tokens, cut to 1,199 units plus `…`.
pub fn thread_reply<M: MessageView + ?Sized>(r: &M) -> ThreadReply {
    let text = r.text();
    let cut = truncate_reply(&text);
    ThreadReply {
        message_id: r.id().to_string(),
        ts: to_iso(r.ts()),
        author: r.author(),
        is_truncated: cut.is_some(),
        text: cut.unwrap_or_else(|| text.into_owned()),
        media: r.media_refs(),
    }
}

/// The root as a ThreadContext shows it: always in full.
pub fn thread_root<M: MessageView + ?Sized>(root: &M) -> ThreadRoot {
    ThreadRoot {
        message_id: root.id().to_string(),
        ts: to_iso(root.ts()),
        author: root.author(),
        text: root.text().into_owned(),
        media: root.media_refs(),
    }
}

/// Tokens a reply costs after the 300-token cap (a cut reply is exactly 300).
pub fn capped_reply_tokens(text: &str) -> u64 {
    let units = utf16_len(text);
    if units > (REPLY_MAX_TOKENS * 4) as usize {
        REPLY_MAX_TOKENS
    } else {
        tokens_for_units(units)
    }
}

/// The budgeting core over any message representation: `replies` oldest first;
/// `total_replies` is what the platform reports (at least `replies.len()`). Only the
/// replies that fit are converted.
pub fn budget_thread<R: MessageView, M: MessageView>(
    thread_id: String,
    root: &R,
    replies: &[&M],
    total_replies: u64,
    budget_tokens: u64,
) -> BudgetedThread {
    let total_replies = total_replies.max(replies.len() as u64);
    if total_replies == 0 {
        return BudgetedThread {
            context: None,
            telemetry: ThreadTelemetry {
                thread_budget_tokens: budget_tokens,
                actual_tokens: 0,
                messages_truncated: 0,
            },
        };
    }

    let root_tokens = estimate_tokens(&root.text());
    let tokens: Vec<u64> = replies
        .iter()
        .map(|r| capped_reply_tokens(&r.text()))
        .collect();
    let cut = most_recent_within(&tokens, budget_tokens.saturating_sub(root_tokens));
    let omitted_range_ts = (cut.omitted() > 0).then(|| {
        (
            to_iso(replies[0].ts()),
            to_iso(replies[cut.omitted() - 1].ts()),
        )
    });
    let included: Vec<ThreadReply> = replies[cut.omitted()..]
        .iter()
        .map(|r| thread_reply(*r))
        .collect();
    // As the runner's module reported it: the replies the budget left out.
    let messages_truncated = cut.omitted() as u64;

    let context = ThreadContext {
        schema_version: SCHEMA_VERSION.to_string(),
        thread_id,
        root: thread_root(root),
        truncation: Truncation::most_recent(total_replies, included.len() as u64, omitted_range_ts),
        replies: included,
    };
    BudgetedThread {
        context: Some(context),
        telemetry: ThreadTelemetry {
            thread_budget_tokens: budget_tokens,
            actual_tokens: root_tokens + cut.used_tokens,
            messages_truncated,
        },
    }
}

#[cfg(test)]
mod tests;
