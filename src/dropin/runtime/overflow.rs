//! E. The overflow retry policy.
//!
//! The Claude SDK compacts server-side; the runner must not compact locally. A retry
//! after a context overflow can only succeed when something changed: compaction was
//! observed during the attempt (`compact_boundary`, or `status: "compacting"`), or the
//! caller's own state moved (its `stateKey`). Identical hard-size errors with nothing
//! changed end at once with remediation text instead of burning attempts.
//!
//! Errors are told apart by a fingerprint of their structure: overflow kind, HTTP status,
//! API error type, code, and the sizes quoted in the message (`215000 tokens > 200000`),
//! hashed. Request ids, UUIDs and dates do not enter it, so two identical failures share
//! a fingerprint and a compaction that shrank the prompt changes it.

use super::error::{numbers, ErrorInfo};
use crate::core::sha256::sha256_hex;
use serde::Serialize;

/// Attempts per turn before an overflow is final, whatever the signals.
pub const DEFAULT_MAX_ATTEMPTS: u32 = 3;

/// What kind of size failure an error is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OverflowKind {
    /// The API's `prompt is too long: N tokens > M maximum`.
    PromptTooLong,
    /// HTTP 413 / `request_too_large`: the request body, not the tokens.
    RequestTooLarge,
    /// Input plus `max_tokens` over the window, or the SDK's context-limit wording.
    ContextWindowExceeded,
}

impl OverflowKind {
    pub fn as_str(self) -> &'static str {
        match self {
            OverflowKind::PromptTooLong => "prompt_too_long",
            OverflowKind::RequestTooLarge => "request_too_large",
            OverflowKind::ContextWindowExceeded => "context_window_exceeded",
        }
    }
}

/// The overflow kind of an error, `None` when it is not a size failure.
pub fn classify_overflow(e: &ErrorInfo) -> Option<OverflowKind> {
    let h = e.haystack();
    if e.status == Some(413)
        || h.contains("request_too_large")
        || h.contains("request too large")
        || h.contains("request exceeds the maximum size")
        || h.contains("payload too large")
    {
        return Some(OverflowKind::RequestTooLarge);
    }
    if h.contains("prompt is too long") || h.contains("prompt too long") {
        return Some(OverflowKind::PromptTooLong);
    }
    const WINDOW: [&str; 7] = [
        "context window",
        "context_window",
        "context length",
        "context_length_exceeded",
        "exceed context limit",
        "context limit reached",
        "maximum context length",
    ];
    WINDOW
        .iter()
        .any(|p| h.contains(p))
        .then_some(OverflowKind::ContextWindowExceeded)
}

/// A 16-hex-digit fingerprint of an overflow error's structure (see the module docs).
pub fn fingerprint(e: &ErrorInfo, kind: OverflowKind) -> String {
    let sizes: Vec<String> = numbers(&e.message).iter().map(u64::to_string).collect();
    let canon = format!(
        "v1|{}|{}|{}|{}|{}",
        kind.as_str(),
        e.status.map(|s| s.to_string()).unwrap_or_default(),
        e.error_type.as_deref().unwrap_or(""),
        e.code.as_deref().unwrap_or(""),
        sizes.join(",")
    );
    sha256_hex(canon.as_bytes())[..16].to_string()
}

/// One failed attempt of a turn, as the policy needs it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OverflowAttempt {
    /// `None` when the attempt failed for another reason.
    pub kind: Option<OverflowKind>,
    pub fingerprint: Option<String>,
    /// Sizes quoted in the error (`[215000, 200000]`).
    pub sizes: Vec<u64>,
    /// A `compact_boundary` arrived during the attempt.
    pub compaction_observed: bool,
    /// `status: "compacting"` was the last status seen (compaction still running).
    pub compacting: bool,
    /// The caller's own state marker (e.g. its transcript length); a change counts as a
    /// state change.
    pub state_key: Option<String>,
}

impl OverflowAttempt {
    pub fn from_error(e: &ErrorInfo, compaction_observed: bool, compacting: bool) -> Self {
        let kind = classify_overflow(e);
        OverflowAttempt {
            kind,
            fingerprint: kind.map(|k| fingerprint(e, k)),
            sizes: if kind.is_some() {
                numbers(&e.message)
            } else {
                Vec::new()
            },
            compaction_observed,
            compacting,
            state_key: None,
        }
    }
}

/// What to do after the last attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OverflowAction {
    /// Retry the turn: compaction ran, the next attempt sees a smaller context.
    Retry,
    /// Stop now with the remediation text: retrying cannot change the outcome.
    FailFast,
    /// Stop: the attempt budget is spent.
    Fail,
    /// The error is not a size failure; this policy has nothing to say.
    NotOverflow,
}

/// The decision, with why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OverflowDecision {
    pub action: OverflowAction,
    /// `compaction_observed`, `compaction_in_flight`, `repeated_without_state_change`,
    /// `no_compaction_observed`, `attempts_exhausted`, `not_overflow`, `no_attempts`.
    pub reason: &'static str,
    pub kind: Option<OverflowKind>,
    pub fingerprint: Option<String>,
    /// 1-based number of the attempt decided on.
    pub attempt: usize,
    /// What the user or operator can do, for terminal decisions.
    pub remediation: Option<String>,
}

fn remediation(kind: OverflowKind, sizes: &[u64]) -> String {
    match kind {
        OverflowKind::PromptTooLong => {
            let size = match sizes {
                [n, max, ..] => {
                    format!("The prompt is {n} tokens, over the model's {max}-token limit")
                }
                _ => "The prompt is over the model's token limit".to_string(),
            };
            format!(
                "{size}, and compaction did not bring it under. Start a fresh session (/new), \
                 remove large attachments or pasted text, or lower the context budget, then retry."
            )
        }
        OverflowKind::RequestTooLarge => "The request body is over the API's size limit, usually \
            because of inline media. Send media as file references or URLs, or remove \
            attachments, then retry."
            .to_string(),
        OverflowKind::ContextWindowExceeded => "The conversation no longer fits the model's \
            context window and compaction did not free enough room. Start a fresh session \
            (/new), or lower max_tokens or the context budget, then retry."
            .to_string(),
    }
}

/// Decides on the last attempt of `history` (oldest first).
pub fn decide_overflow(history: &[OverflowAttempt], max_attempts: u32) -> OverflowDecision {
    let n = history.len();
    let Some(last) = history.last() else {
        return OverflowDecision {
            action: OverflowAction::NotOverflow,
            reason: "no_attempts",
            kind: None,
            fingerprint: None,
            attempt: 0,
            remediation: None,
        };
    };
    let mut d = OverflowDecision {
        action: OverflowAction::NotOverflow,
        reason: "not_overflow",
        kind: last.kind,
        fingerprint: last.fingerprint.clone(),
        attempt: n,
        remediation: None,
    };
    let (Some(kind), Some(fp)) = (last.kind, last.fingerprint.as_deref()) else {
        return d;
    };
    let terminal = |mut d: OverflowDecision, action, reason| {
        d.action = action;
        d.reason = reason;
        d.remediation = Some(remediation(kind, &last.sizes));
        d
    };
    // The same failure as an earlier attempt, with nothing changed in between. When
    // the error quotes sizes, equal sizes mean compaction (if any) freed nothing.
    let repeated = history[..n - 1].iter().rev().any(|prev| {
        prev.fingerprint.as_deref() == Some(fp)
            && prev.state_key == last.state_key
            && (!last.sizes.is_empty() || !last.compaction_observed)
    });
    if repeated {
        return terminal(d, OverflowAction::FailFast, "repeated_without_state_change");
    }
    if n >= max_attempts.max(1) as usize {
        return terminal(d, OverflowAction::Fail, "attempts_exhausted");
    }
    if last.compaction_observed || last.compacting {
        d.action = OverflowAction::Retry;
        d.reason = if last.compaction_observed {
            "compaction_observed"
        } else {
            "compaction_in_flight"
        };
        return d;
    }
    terminal(d, OverflowAction::FailFast, "no_compaction_observed")
}

#[cfg(test)]
mod tests;
