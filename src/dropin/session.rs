//! The system-prompt section a runner's `before_session_create` subscriber adds for a
//! channel turn: the ChannelSnapshot and the ThreadContext as JSON, then how to use the
//! channel tools (one tool in a direct message, where there is no channel to search).
//!
//! The JSON is indented and written as the prompt section writes it (`<`, `>`, `&` and
//! backticks inside strings escaped), so no message can close the code fence it sits in.

use super::{channel_snapshot, thread_context, StructuredContextInput};
use crate::prompt::section_json;
use crate::text::THREAD_BUDGET_TOKENS;

/// Guidance for a channel or group conversation: both tools, and when to use them.
const CHANNEL_TOOLS: &str = "\
### Channel Tools
Two tools let you look further into this channel when what is above is not enough:

- **channel.context** searches the channel's messages by keywords or by what you are looking for. Use it for background, for the story behind something a message refers to, or whenever you are not sure you know enough to answer well.
- **channel.messages** fetches a thread or particular messages by their IDs. Use it when the snapshot shows a thread you want to read in full.

When to use them:
- A message refers to something (\"the rollout\", \"that PR\", \"last week's incident\") you have no details of: search with channel.context.
- You are asked about a thread and have only its root message: call channel.messages with its thread_id.
- Earlier turns of this conversation were compacted and something seems to be missing: rebuild it with channel.context instead of guessing.
- A fact you are unsure of is probably in the channel's recent history: a quick channel.context lookup beats a hedged answer.

An answer grounded in a tool call is better than a vague one that makes the user ask again.";

/// Guidance for a direct message: threads can be fetched, there is nothing to search.
const DIRECT_TOOLS: &str = "\
### Channel Tools
In this direct message one tool lets you look further:

- **channel.messages** fetches a thread by its ID. Use it when a message points to a thread you want to read in full.

**channel.context** is registered too, but it returns empty results in DMs: a direct message has no adjacent-message snapshot to search. Use channel.messages for threads.";

/// The section for `input`: its channel context, its thread context when it has a thread
/// (within the default 8,000-token thread budget), and the channel tools' guidance.
pub fn session_context_section(input: &StructuredContextInput) -> String {
    let snapshot = section_json(&channel_snapshot(input), true);
    let mut out = String::with_capacity(snapshot.len() + 2_048);
    out.push_str("### Channel Context\n```json\n");
    out.push_str(&snapshot);
    out.push_str("\n```\n");
    if let Some(t) = &input.thread {
        let (context, _) = thread_context(t, u64::from(THREAD_BUDGET_TOKENS));
        out.push_str("\n### Thread Context\n```json\n");
        out.push_str(&section_json(&context, true));
        out.push_str("\n```\n");
    }
    out.push('\n');
    out.push_str(if input.channel_type.as_deref() == Some("direct") {
        DIRECT_TOOLS
    } else {
        CHANNEL_TOOLS
    });
    out
}

#[cfg(test)]
mod tests;
