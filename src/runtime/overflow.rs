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
use crate::sha256::sha256_hex;
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
mod tests {
    use super::*;
    use serde_json::json;

    fn err(msg: &str) -> ErrorInfo {
        ErrorInfo::from_value(
            &json!({"status": 400, "error": {"type": "error", "error": {"type": "invalid_request_error", "message": msg}}}),
        )
    }

    fn attempt(msg: &str, compaction: bool) -> OverflowAttempt {
        OverflowAttempt::from_error(&err(msg), compaction, false)
    }

    const TOO_LONG: &str = "prompt is too long: 215000 tokens > 200000 maximum";

    #[test]
    fn classifies_size_failures() {
        assert_eq!(
            classify_overflow(&err(TOO_LONG)),
            Some(OverflowKind::PromptTooLong)
        );
        let e = ErrorInfo {
            status: Some(413),
            ..ErrorInfo::default()
        };
        assert_eq!(classify_overflow(&e), Some(OverflowKind::RequestTooLarge));
        assert_eq!(
            classify_overflow(&err(
                "input length and `max_tokens` exceed context limit: 197000 + 8192 > 200000"
            )),
            Some(OverflowKind::ContextWindowExceeded)
        );
        assert_eq!(classify_overflow(&err("overloaded")), None);
    }

    #[test]
    fn fingerprints_follow_structure_not_request_ids() {
        let a = fingerprint(
            &err(&format!("{TOO_LONG} (request req_011AAA)")),
            OverflowKind::PromptTooLong,
        );
        let b = fingerprint(
            &err(&format!("{TOO_LONG} (request req_022BBB)")),
            OverflowKind::PromptTooLong,
        );
        assert_eq!(a, b);
        assert_eq!(a.len(), 16);
        let smaller = fingerprint(
            &err("prompt is too long: 201000 tokens > 200000 maximum"),
            OverflowKind::PromptTooLong,
        );
        assert_ne!(a, smaller);
        // Same text, different structure: another status is another failure.
        let mut e = err(TOO_LONG);
        e.status = Some(500);
        assert_ne!(fingerprint(&e, OverflowKind::PromptTooLong), a);
    }

    // A hard-size overflow repeating without compaction ends early.
    #[test]
    fn hard_size_without_compaction_fails_fast() {
        let d = decide_overflow(&[attempt(TOO_LONG, false)], DEFAULT_MAX_ATTEMPTS);
        assert_eq!(
            (d.action, d.reason),
            (OverflowAction::FailFast, "no_compaction_observed")
        );
        let text = d.remediation.unwrap_or_default();
        assert!(
            text.contains("215000 tokens") && text.contains("200000-token"),
            "{text}"
        );
        let d = decide_overflow(&[attempt(TOO_LONG, true), attempt(TOO_LONG, false)], 5);
        assert_eq!(
            (d.action, d.reason),
            (OverflowAction::FailFast, "repeated_without_state_change")
        );
    }

    // Compaction observed and the retry improves.
    #[test]
    fn compaction_observed_retries_and_a_smaller_error_is_new() {
        let first = attempt(TOO_LONG, true);
        let d = decide_overflow(std::slice::from_ref(&first), DEFAULT_MAX_ATTEMPTS);
        assert_eq!(
            (d.action, d.reason),
            (OverflowAction::Retry, "compaction_observed")
        );
        assert_eq!(d.remediation, None);
        let second = attempt("prompt is too long: 203000 tokens > 200000 maximum", true);
        let d = decide_overflow(&[first.clone(), second], DEFAULT_MAX_ATTEMPTS);
        assert_eq!(d.action, OverflowAction::Retry);
        // Compaction observed but the size did not move: nothing changed.
        let d = decide_overflow(&[first.clone(), first], DEFAULT_MAX_ATTEMPTS);
        assert_eq!(d.reason, "repeated_without_state_change");
    }

    #[test]
    fn compaction_in_flight_retries() {
        let a = OverflowAttempt::from_error(&err(TOO_LONG), false, true);
        assert_eq!(decide_overflow(&[a], 3).reason, "compaction_in_flight");
    }

    #[test]
    fn a_state_key_change_is_a_state_change() {
        let e = ErrorInfo {
            status: Some(413),
            ..ErrorInfo::default()
        };
        let mut a = OverflowAttempt::from_error(&e, true, false);
        a.state_key = Some("len:40".into());
        let mut b = a.clone();
        // Sizeless error, compaction observed: the same fingerprint alone is not a repeat.
        assert_eq!(
            decide_overflow(&[a.clone(), b.clone()], 5).action,
            OverflowAction::Retry
        );
        b.compaction_observed = false;
        assert_eq!(
            decide_overflow(&[a.clone(), b.clone()], 5).reason,
            "repeated_without_state_change"
        );
        b.state_key = Some("len:12".into());
        assert_eq!(decide_overflow(&[a, b], 5).reason, "no_compaction_observed");
    }

    #[test]
    fn the_attempt_budget_ends_it() {
        let h = vec![
            attempt("prompt is too long: 230000 tokens > 200000 maximum", true),
            attempt("prompt is too long: 220000 tokens > 200000 maximum", true),
            attempt(TOO_LONG, true),
        ];
        let d = decide_overflow(&h, 3);
        assert_eq!(
            (d.action, d.reason, d.attempt),
            (OverflowAction::Fail, "attempts_exhausted", 3)
        );
        assert!(d.remediation.is_some());
    }

    #[test]
    fn other_errors_and_empty_history() {
        let d = decide_overflow(&[attempt("overloaded_error", false)], 3);
        assert_eq!(
            (d.action, d.reason),
            (OverflowAction::NotOverflow, "not_overflow")
        );
        assert_eq!(decide_overflow(&[], 3).reason, "no_attempts");
    }
}
