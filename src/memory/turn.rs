//! One turn of a host that keeps the transcript itself (the OpenClaw engine), in one
//! call: what the store has not seen of the turn's messages is stored (the host's
//! transcript is the truth, and a message never seen must be found and kept once like
//! any other), the session is recorded as a conversation of its chat for the history,
//! and the context is assembled around the host's own messages.

use super::assemble::{assemble, AssembleRequest, Assembled, HostMessage};
use super::db::MemoryError;
use super::history::{Conversation, Turn};
use super::store::{Ingested, MemoryStore, NewMessage, RecordKind, Role};

/// A conversation without a thread summary yet is summarized by the start of its first
/// turn: this many UTF-16 code units of it (a JavaScript string's length).
pub const CONVERSATION_SUMMARY_UNITS: usize = 280;

/// The turn's messages, and the chat and session to record them as a conversation of.
#[derive(Debug, Clone, Copy)]
pub struct HostTurn<'a> {
    pub messages: &'a [NewMessage<'a>],
    /// `(chat id, session id)`; `None`: no conversation is recorded.
    pub conversation: Option<(&'a str, &'a str)>,
}

/// A host message of the assembly: its index in the turn's messages (`None`: not
/// stored, such as a tool call), whether the user wrote it, and its estimate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HostRef {
    pub message: Option<usize>,
    pub user: bool,
    pub est: f64,
}

/// What a turn stored and assembled.
#[derive(Debug, Clone)]
pub struct TurnAssembled {
    /// Where each of the turn's messages went.
    pub stored: Vec<Ingested>,
    /// The version of the lane's summary the assembly read (`None`: no summary yet).
    pub summary_version: Option<i64>,
    pub assembled: Assembled,
}

impl MemoryStore {
    /// Stores `turn`, records its conversation and assembles `req` with the host messages
    /// `host` (their ids those the turn's messages were stored under).
    pub fn assemble_turn(
        &mut self,
        turn: &HostTurn<'_>,
        host: &[HostRef],
        req: &AssembleRequest<'_>,
    ) -> Result<TurnAssembled, MemoryError> {
        let stored = self.ingest_batch(turn.messages)?;
        let summary = self.record(req.session_id, RecordKind::ThreadSummary, req.thread_key)?;
        if let (Some((chat, session)), Some(first)) = (turn.conversation, turn.messages.first()) {
            let turns: Vec<Turn> = turn
                .messages
                .iter()
                .map(|m| Turn {
                    human: m.role == Role::User,
                    text: m.text.to_string(),
                    ts_ms: Some(m.ts_ms),
                })
                .collect();
            let last = turn.messages.last().map_or(first.ts_ms, |m| m.ts_ms);
            self.put_conversation(&Conversation {
                chat_id: chat.to_string(),
                session_id: session.to_string(),
                started_at_ms: first.ts_ms,
                ended_at_ms: last.max(first.ts_ms),
                summary: summary.as_ref().map_or_else(
                    || utf16_prefix(first.text, CONVERSATION_SUMMARY_UNITS),
                    |s| s.body.clone(),
                ),
                turns,
            })?;
        }
        let ids: Vec<&str> = turn
            .messages
            .iter()
            .zip(&stored)
            .map(|(m, s)| s.stored_as.as_deref().unwrap_or(m.message_id))
            .collect();
        let hosts: Vec<HostMessage<'_>> = host
            .iter()
            .map(|h| HostMessage {
                id: h
                    .message
                    .and_then(|i| ids.get(i).copied())
                    .unwrap_or_default(),
                user: h.user,
                est: h.est,
            })
            .collect();
        let req = AssembleRequest {
            host: Some(&hosts),
            ..req.clone()
        };
        let assembled = assemble(self, &req)?;
        Ok(TurnAssembled {
            stored,
            summary_version: summary.map(|s| s.summary_version),
            assembled,
        })
    }
}

/// The first `units` UTF-16 code units of `text`, as `String.prototype.slice` takes them
/// (a pair cut in half leaves U+FFFD, as its lone half does on the way into Rust).
fn utf16_prefix(text: &str, units: usize) -> String {
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let n = c.len_utf16();
        if used + n > units {
            if used < units {
                out.push('\u{FFFD}');
            }
            break;
        }
        out.push(c);
        used += n;
    }
    out
}

#[cfg(test)]
mod tests;
