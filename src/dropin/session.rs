//! The channel tools' guidance a runner's `before_session_create` subscriber ends its
//! section with: both tools and when to use them in a channel, the one that works in a
//! direct message (where there is no channel to search). The subscriber itself
//! (`js/dropin.js`) puts the ChannelSnapshot and the ThreadContext before it.

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

#[cfg(test)]
mod tests;
