//! The channel tools' guidance a runner's `before_session_create` subscriber ends its
//! section with: both tools and when to use them in a channel, the one that works in a
//! direct message (where there is no channel to search), and the section the subscriber
//! adds (`js/dropin/context.js` builds the documents and hands their JSON to [`session_section`]).

use crate::core::prompt::escape_json_units;

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

/// The guidance for a conversation of `channel_type` (`"direct"` for a DM; anything else,
/// or nothing, is a channel, as the runner's subscriber read it).
pub fn channel_tools_guidance(channel_type: Option<&str>) -> &'static str {
    if channel_type == Some("direct") {
        DIRECT_TOOLS
    } else {
        CHANNEL_TOOLS
    }
}

/// The section a runner's `before_session_create` subscriber adds: the ChannelSnapshot's
/// and the ThreadContext's JSON (as `JSON.stringify(value, null, 2)` wrote them, in the
/// UTF-16 units of their strings), each under its heading in a fenced block, a lone
/// surrogate (which `JSON.stringify` writes as a `\uD800`-style escape) as U+FFFD as in
/// every document the engine writes, and escaped as the prompt's JSON is
/// ([`escape_json_units`]: no message can close the fence), then the tools' guidance.
pub fn session_section(
    snapshot_json: &mut [u16],
    thread_json: Option<&mut [u16]>,
    channel_type: Option<&str>,
) -> Vec<u16> {
    let mut section: Vec<u16> = "### Channel Context\n```json\n".encode_utf16().collect();
    escape_json_units(snapshot_json, &mut section);
    section.extend("\n```\n".encode_utf16());
    if let Some(thread) = thread_json {
        section.extend("\n### Thread Context\n```json\n".encode_utf16());
        escape_json_units(thread, &mut section);
        section.extend("\n```\n".encode_utf16());
    }
    section.extend("\n".encode_utf16());
    section.extend(channel_tools_guidance(channel_type).encode_utf16());
    section
}

#[cfg(test)]
mod tests;
