//! The thread-history block: a thread's exact wording before the current message, so the
//! model can resolve "are they running?" against what was said, as
//!
//! ```text
//! <slack_thread_context>
//! Alice: is the import job stuck?
//! deploybot: Restarted 3 workers.
//! Current question: are they running?
//! </slack_thread_context>
//! ```
//!
//! One `Name: text` line per message, bot messages included, the newest
//! [`DEFAULT_LIMIT`] (15) before the current one, oldest first, then the current message
//! marked apart. Text is escaped (`&`, `<`, `>`) and kept on one line, so a message
//! cannot close the block or pass for another line.

use crate::core::text::escape::escape;
use napi_derive::napi;
use serde::Deserialize;

/// Messages before the current one shown at most, by default.
pub const DEFAULT_LIMIT: usize = 15;

/// One earlier message of the thread.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThreadLine {
    /// The author's display name.
    pub name: String,
    pub text: String,
}

/// `formatSlackThreadContext`'s input.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ThreadBlockInput {
    /// The thread's messages before the current one, oldest first.
    pub messages: Vec<ThreadLine>,
    /// The current message's text.
    #[napi(ts_type = "string | null")]
    pub current_question: Option<String>,
    /// Earlier messages shown at most, the newest (default 15).
    pub limit: Option<f64>,
}

/// Newlines and other line breaks become spaces: one message, one line.
fn one_line(text: &str) -> String {
    escape(text.trim())
        .split(['\n', '\r', '\u{2028}', '\u{2029}', '\u{85}'])
        .filter(|l| !l.trim().is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The block for `messages` (oldest first; the newest `limit` kept) and the current
/// message; the empty string when there is no earlier message (a top-level message, a
/// direct message, or the thread's first).
pub fn thread_block(messages: &[ThreadLine], current: Option<&str>, limit: usize) -> String {
    let from = messages.len().saturating_sub(limit);
    let shown = &messages[from..];
    if shown.is_empty() {
        return String::new();
    }
    let mut out = String::from("<slack_thread_context>\n");
    for m in shown {
        out.push_str(&one_line(&m.name));
        out.push_str(": ");
        out.push_str(&one_line(&m.text));
        out.push('\n');
    }
    if let Some(q) = current {
        out.push_str("Current question: ");
        out.push_str(&one_line(q));
        out.push('\n');
    }
    out.push_str("</slack_thread_context>");
    out
}

#[cfg(test)]
mod tests;
