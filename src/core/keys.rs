//! Sessions and thread keys: which conversation lane a chat message belongs to.
//!
//! A session is one chat (`telegram:chat:<chatId>`, or a gateway's own session key). Inside
//! it, a thread key names the lane a message continues, chosen topic first, then reply,
//! then the chat's root lane:
//!
//! - `topic:<chatId>:<topicId>` for a message in a forum topic;
//! - `reply:<chatId>:<messageId>` for a reply, keyed by the message that started the
//!   chain: a reply to a message that is itself in a `reply:` or `topic:` lane stays in
//!   that lane, so a conversation does not splinter into one lane per reply;
//! - `root:<chatId>` for everything else.

/// How a new message relates to the chat, as far as its thread key is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placement<'a> {
    pub chat_id: &'a str,
    /// The forum topic the message was posted in (Telegram `message_thread_id`).
    pub topic_id: Option<&'a str>,
    /// The message it replies to (Telegram `reply_to_message.message_id`).
    pub reply_to: Option<&'a str>,
}

/// The session of a Telegram chat.
pub fn telegram_session(chat_id: &str) -> String {
    format!("telegram:chat:{chat_id}")
}

/// The root lane of a chat.
pub fn root_key(chat_id: &str) -> String {
    format!("root:{chat_id}")
}

/// The thread key of a message placed as `p`. `lane_of` answers the thread key of an
/// earlier message of the same chat by id (`None` when it is not stored), so that a reply
/// inherits the lane of the message it answers.
pub fn thread_key(p: &Placement<'_>, lane_of: impl Fn(&str) -> Option<String>) -> String {
    if let Some(topic) = p.topic_id.filter(|t| !t.is_empty()) {
        return format!("topic:{}:{topic}", p.chat_id);
    }
    if let Some(parent) = p.reply_to.filter(|r| !r.is_empty()) {
        return match lane_of(parent) {
            Some(key) if key.starts_with("reply:") || key.starts_with("topic:") => key,
            _ => format!("reply:{}:{parent}", p.chat_id),
        };
    }
    root_key(p.chat_id)
}

#[cfg(test)]
mod tests;
