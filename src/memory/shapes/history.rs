//! The shapes of the conversation history: conversations stored, the history asked
//! for, the thread status, and OpenClaw's transcripts read back.

use crate::core::input::{whole_number, InputError};
use crate::memory::history::{Conversation, HistoryOptions, HistoryRequest, Turn, Zone};
use crate::memory::transcript::{parse_jsonl, OpenClawSession};
use napi_derive::napi;
use serde::{Deserialize, Serialize};

/// One turn of a conversation, as `putConversation` takes it.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConversationTurn {
    #[napi(ts_type = "'user' | 'assistant'")]
    pub role: String,
    pub text: String,
    /// Epoch ms.
    #[napi(ts_type = "number | null")]
    pub ts: Option<f64>,
}

/// A conversation to store: one session's turns in a chat, given as `turns` or as a
/// JSONL `transcript` (Claude Code or Pi / OpenClaw entries; only user and assistant text
/// is kept).
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConversationInput {
    pub chat_id: String,
    pub session_id: String,
    /// Epoch ms (default: the first turn's time).
    pub started_at: Option<f64>,
    /// Epoch ms (default: the last turn's time).
    pub ended_at: Option<f64>,
    /// Shown for the conversation when it is summarized (default none: it is then left
    /// out of the summary tiers).
    pub summary: Option<String>,
    pub turns: Option<Vec<ConversationTurn>>,
    pub transcript: Option<String>,
}

fn epoch_ms(v: f64, path: &str) -> Result<i64, InputError> {
    if !v.is_finite() {
        return Err(InputError::range_error(
            path,
            format!("expected a finite number of ms, got {v}"),
        ));
    }
    #[allow(clippy::cast_possible_truncation)] // finite; saturates
    Ok(v as i64)
}

impl ConversationInput {
    /// The domain conversation, checked.
    pub fn to_conversation(&self) -> Result<Conversation, InputError> {
        for (name, v) in [("chatId", &self.chat_id), ("sessionId", &self.session_id)] {
            if v.is_empty() {
                return Err(InputError::type_error(
                    format!("conversation.{name}"),
                    "expected a non-empty string",
                ));
            }
        }
        let mut turns = match &self.transcript {
            Some(t) => parse_jsonl(t),
            None => Vec::new(),
        };
        for (i, t) in self.turns.iter().flatten().enumerate() {
            let human = match t.role.as_str() {
                "user" => true,
                "assistant" => false,
                other => {
                    return Err(InputError::type_error(
                        format!("conversation.turns[{i}].role"),
                        format!("expected 'user' or 'assistant', got {other:?}"),
                    ))
                }
            };
            let ts_ms =
                t.ts.map(|v| epoch_ms(v, &format!("conversation.turns[{i}].ts")))
                    .transpose()?;
            turns.push(Turn {
                human,
                text: t.text.clone(),
                ts_ms,
            });
        }
        let first = turns.iter().find_map(|t| t.ts_ms);
        let last = turns.iter().rev().find_map(|t| t.ts_ms);
        let started = match self.started_at {
            Some(v) => epoch_ms(v, "conversation.startedAt")?,
            None => first.ok_or_else(|| {
                InputError::type_error("conversation.startedAt", "required when no turn has a time")
            })?,
        };
        let ended = match self.ended_at {
            Some(v) => epoch_ms(v, "conversation.endedAt")?,
            None => last.unwrap_or(started),
        };
        if ended < started {
            return Err(InputError::range_error(
                "conversation.endedAt",
                "must not be before startedAt",
            ));
        }
        Ok(Conversation {
            chat_id: self.chat_id.clone(),
            session_id: self.session_id.clone(),
            started_at_ms: started,
            ended_at_ms: ended,
            summary: self.summary.clone().unwrap_or_default(),
            turns,
        })
    }
}

/// A UTC offset from an instant on.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UtcOffset {
    /// Epoch ms from which the offset holds.
    pub from: f64,
    /// Minutes east of UTC (`60` for UTC+01:00).
    pub minutes: f64,
}

/// `buildConversationContext` / `threadStatus` options.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConversationContextInput {
    pub chat_id: String,
    /// The hard budget in estimated tokens (default 30,000).
    pub max_tokens: Option<f64>,
    /// Epoch ms (default now).
    pub now: Option<f64>,
    /// An IANA time zone for calendar days and clock times (default `"UTC"`; never the
    /// machine's zone).
    pub time_zone: Option<String>,
    /// The zone as UTC offsets over time, for a zone `Intl` does not know (`timeZone` is
    /// turned into these).
    pub utc_offsets: Option<Vec<UtcOffset>>,
    /// Conversations that ended less than this long ago are the active one, in full and
    /// `just now` (default 1,800,000: 30 minutes).
    pub active_window_ms: Option<f64>,
    /// A message this soon after the last conversation's end continues it (default
    /// 1,800,000).
    pub continuation_window_ms: Option<f64>,
    /// A session to leave out of the history (the one whose messages the model gets
    /// anyway).
    pub exclude_session_id: Option<String>,
}

impl ConversationContextInput {
    /// The history these options ask for (with the `<thread-status>` block when
    /// `status`); `now_ms` stands in for a missing `now`.
    pub fn history_request(
        &self,
        now_ms: i64,
        status: bool,
    ) -> Result<HistoryRequest<'_>, InputError> {
        let now = self
            .now
            .map(|v| epoch_ms(v, "options.now"))
            .transpose()?
            .unwrap_or(now_ms);
        let zone = match &self.utc_offsets {
            None => Zone::utc(),
            Some(spans) => {
                let mut out = Vec::with_capacity(spans.len());
                for (i, s) in spans.iter().enumerate() {
                    let minutes =
                        whole_minutes(s.minutes, &format!("options.utcOffsets[{i}].minutes"))?;
                    out.push((
                        epoch_ms(s.from, &format!("options.utcOffsets[{i}].from"))?,
                        minutes,
                    ));
                }
                Zone::from_spans(out).ok_or_else(|| {
                    InputError::range_error(
                        "options.utcOffsets",
                        "expected at least one offset, each within ±18 hours",
                    )
                })?
            }
        };
        let mut opts = HistoryOptions::default();
        if let Some(v) = self.max_tokens {
            opts.max_tokens = whole_number(v, "options.maxTokens", "tokens")?;
        }
        if let Some(v) = self.active_window_ms {
            opts.active_window_ms =
                i64::try_from(whole_number(v, "options.activeWindowMs", "ms")?).unwrap_or(i64::MAX);
        }
        if let Some(v) = self.continuation_window_ms {
            opts.continuation_window_ms =
                i64::try_from(whole_number(v, "options.continuationWindowMs", "ms")?)
                    .unwrap_or(i64::MAX);
        }
        Ok(HistoryRequest {
            chat_id: &self.chat_id,
            now_ms: now,
            zone,
            opts,
            exclude_session: self.exclude_session_id.as_deref(),
            status,
        })
    }
}

fn whole_minutes(v: f64, path: &str) -> Result<i32, InputError> {
    if !v.is_finite() || v.fract() != 0.0 || v.abs() > 18.0 * 60.0 {
        return Err(InputError::range_error(
            path,
            format!("expected whole minutes within ±1,080, got {v}"),
        ));
    }
    #[allow(clippy::cast_possible_truncation)] // whole and within ±1,080
    Ok(v as i32)
}

/// Whether a new message continues the chat's last conversation.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, Serialize)]
pub struct ThreadStatus {
    pub continuation: bool,
    /// The `<thread-status>` block that tells the model so.
    pub block: String,
}

/// One session of an OpenClaw agent database, as `readOpenClawTranscripts` returns it:
/// ready for `putConversation` with the chat id of your choice.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenClawTranscript {
    pub session_id: String,
    pub session_key: String,
    pub started_at: f64,
    pub ended_at: f64,
    /// Its user and assistant text turns (tool calls, tool results, thinking and custom
    /// entries dropped).
    pub turns: Vec<ConversationTurn>,
    /// Events OpenClaw stored compressed, skipped (this package has no zstd decoder).
    pub compressed_skipped: f64,
}

impl From<OpenClawSession> for OpenClawTranscript {
    #[allow(clippy::cast_precision_loss)] // ms since 1970 and counts are far below 2^53
    fn from(s: OpenClawSession) -> Self {
        OpenClawTranscript {
            session_id: s.session_id,
            session_key: s.session_key,
            started_at: s.started_at_ms as f64,
            ended_at: s.ended_at_ms as f64,
            turns: s
                .turns
                .into_iter()
                .map(|t| ConversationTurn {
                    role: if t.human { "user" } else { "assistant" }.to_string(),
                    text: t.text,
                    ts: t.ts_ms.map(|ms| ms as f64),
                })
                .collect(),
            compressed_skipped: s.compressed_skipped as f64,
        }
    }
}
