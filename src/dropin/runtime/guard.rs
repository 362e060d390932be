//! The state between decisions: one guard per gateway process holds the media file-id
//! map, the signals of each run's current attempt, each run's overflow history and
//! resume recoveries, and the metrics every decision increments.
//!
//! A run is keyed by `labels.runId` (runs without one share the empty key). An attempt
//! ends when an overflow decision is taken or when `labels.attempt` changes; the signals
//! start afresh for the next one.

use super::error::ErrorInfo;
use super::events::{read_event, AttemptSignals, SdkEvent};
use super::integrity::{plan_resume, ResumeAction, ResumePlan};
use super::media::{MediaItem, MediaPlan, MediaSession, MediaState, PersistOutcome, PlanOptions};
use super::metrics::{Counter, Labels, Metrics, DEFAULT_MAX_SERIES};
use super::overflow::{
    decide_overflow, OverflowAction, OverflowAttempt, OverflowDecision, DEFAULT_MAX_ATTEMPTS,
};
use super::strip::{strip_thread_context, StripOutcome};
use crate::dropin::manifest::Manifest;
use lru::LruCache;
use serde_json::{json, Value};
use std::num::NonZeroUsize;

/// Runs whose state is held at once (least recently used dropped first).
pub const MAX_RUNS: usize = 1024;
/// Failed attempts remembered per run (the oldest go first); far above any attempt budget.
pub const MAX_HISTORY: usize = 64;
/// The provider assumed when labels name none.
pub const DEFAULT_PROVIDER: &str = "anthropic";

/// Guard-wide settings.
#[derive(Debug, Clone)]
pub struct GuardOptions {
    pub inline_max_bytes: u64,
    pub max_attempts: u32,
    pub max_series: usize,
    pub file_refs: bool,
}

impl Default for GuardOptions {
    fn default() -> Self {
        GuardOptions {
            inline_max_bytes: super::media::DEFAULT_INLINE_MAX_BYTES,
            max_attempts: DEFAULT_MAX_ATTEMPTS,
            max_series: DEFAULT_MAX_SERIES,
            file_refs: true,
        }
    }
}

#[derive(Debug, Default)]
struct RunState {
    attempt: Option<u32>,
    signals: AttemptSignals,
    history: Vec<OverflowAttempt>,
    recoveries: u32,
}

/// What `observe` read.
#[derive(Debug, Clone)]
pub struct Observed {
    pub kind: String,
    pub signals: AttemptSignals,
    pub persisted: Option<PersistOutcome>,
    /// Why the message was ignored, for malformed ones.
    pub ignored: Option<String>,
}

/// A decision with the structured log line it should produce.
#[derive(Debug, Clone)]
pub struct WithDiagnostic<T> {
    pub value: T,
    pub diagnostic: Option<Value>,
}

/// See the module docs.
#[derive(Debug)]
pub struct Guard {
    pub options: GuardOptions,
    pub metrics: Metrics,
    pub media: MediaState,
    runs: LruCache<String, RunState>,
}

impl Default for Guard {
    fn default() -> Self {
        Guard::new(GuardOptions::default())
    }
}

fn diagnostic(event: &str, labels: &Labels, fields: Value) -> Value {
    let mut out = json!({ "event": event });
    if let (Some(o), Ok(Value::Object(l))) = (out.as_object_mut(), serde_json::to_value(labels)) {
        o.extend(l);
        if let Value::Object(f) = fields {
            o.extend(f);
        }
    }
    out
}

/// The media scope of a call: provider (default `anthropic`) and the SDK session id, or
/// the gateway's session key while the SDK id is not known yet.
pub fn scope_of(labels: &Labels, fallback_session: Option<&str>) -> Option<MediaSession> {
    let session = labels
        .session_id
        .as_deref()
        .or(labels.session_key.as_deref())
        .or(fallback_session)
        .filter(|s| !s.is_empty())?;
    Some(MediaSession {
        provider: labels
            .provider
            .clone()
            .filter(|p| !p.is_empty())
            .unwrap_or_else(|| DEFAULT_PROVIDER.to_string()),
        session: session.to_string(),
    })
}

impl Guard {
    pub fn new(options: GuardOptions) -> Self {
        Guard {
            metrics: Metrics::new(options.max_series),
            media: MediaState::default(),
            runs: LruCache::new(NonZeroUsize::new(MAX_RUNS).unwrap_or(NonZeroUsize::MIN)),
            options,
        }
    }

    fn run(&mut self, labels: &Labels) -> &mut RunState {
        let key = labels.run_id.clone().unwrap_or_default();
        let run = self.runs.get_or_insert_mut(key, RunState::default);
        if labels.attempt.is_some() && labels.attempt != run.attempt {
            run.attempt = labels.attempt;
            run.signals = AttemptSignals::default();
        }
        run
    }

    /// [`strip_thread_context`], counted.
    pub fn strip<'a>(
        &mut self,
        prompt: &'a str,
        resumed: bool,
        labels: &Labels,
    ) -> StripOutcome<'a> {
        let out = strip_thread_context(prompt, resumed);
        if out.stripped {
            self.metrics.add(Counter::ThreadContextStripped, labels, 1);
            self.metrics.add(
                Counter::ThreadContextStrippedChars,
                labels,
                out.chars_removed as u64,
            );
        }
        out
    }

    /// Reads one SDK message into the run's attempt signals; `files_persisted` also
    /// teaches the media map.
    pub fn observe(&mut self, message: &Value, labels: &Labels, now_ms: f64) -> Observed {
        let ev = read_event(message);
        let mut persisted = None;
        if let SdkEvent::FilesPersisted {
            session_id,
            files,
            failed,
        } = &ev
        {
            if let Some(scope) = scope_of(labels, session_id.as_deref()) {
                let out = self.media.persisted(&scope, files, failed, now_ms);
                persisted = Some(out);
            }
            self.metrics
                .add(Counter::PersistFailures, labels, failed.len() as u64);
        }
        let run = self.run(labels);
        run.signals.apply(&ev);
        Observed {
            kind: ev.kind().to_string(),
            signals: run.signals.clone(),
            persisted,
            ignored: match ev {
                SdkEvent::Malformed(why) => Some(why),
                _ => None,
            },
        }
    }

    /// The current attempt's signals.
    pub fn signals(&mut self, labels: &Labels) -> AttemptSignals {
        self.run(labels).signals.clone()
    }

    /// Plans a turn's media in the labels' scope; `None` when the labels name no
    /// session.
    pub fn plan_media(
        &mut self,
        items: &[MediaItem],
        labels: &Labels,
        manifest: Option<&Manifest>,
        inline_max_bytes: Option<u64>,
        now_ms: f64,
    ) -> Option<Vec<MediaPlan>> {
        let scope = scope_of(labels, None)?;
        let opts = PlanOptions {
            inline_max_bytes: inline_max_bytes.unwrap_or(self.options.inline_max_bytes),
            file_refs: self.options.file_refs,
            manifest,
            now_ms,
        };
        let plans = self.media.plan(&scope, items, &opts);
        for (p, item) in plans.iter().zip(items) {
            match p.mode {
                super::media::MediaMode::Inline => {
                    self.metrics
                        .add(Counter::InlineBytesSent, labels, item.byte_length);
                }
                super::media::MediaMode::File => self.metrics.add(Counter::FileRefUsed, labels, 1),
                _ => {}
            }
        }
        Some(plans)
    }

    /// Ends the run's current attempt with `error` and decides whether to retry.
    pub fn decide_overflow(
        &mut self,
        error: &ErrorInfo,
        labels: &Labels,
        state_key: Option<String>,
    ) -> WithDiagnostic<OverflowDecision> {
        let max = self.options.max_attempts;
        let run = self.run(labels);
        let s = std::mem::take(&mut run.signals);
        let mut attempt = OverflowAttempt::from_error(error, s.compaction_observed(), s.compacting);
        attempt.state_key = state_key;
        if run.history.len() >= MAX_HISTORY {
            run.history.remove(0);
        }
        run.history.push(attempt);
        let d = decide_overflow(&run.history, max);
        let counter = match d.action {
            OverflowAction::Retry => Some(Counter::OverflowRetries),
            OverflowAction::FailFast => Some(Counter::OverflowFailFast),
            _ => None,
        };
        if let Some(c) = counter {
            self.metrics.add(c, labels, 1);
        }
        let diag = (d.action != OverflowAction::NotOverflow).then(|| {
            diagnostic(
                "claude_sdk.overflow.decision",
                labels,
                json!({"action": d.action, "reason": d.reason, "kind": d.kind,
                       "fingerprint": d.fingerprint, "attemptNumber": d.attempt,
                       "compactionObserved": s.compaction_observed()}),
            )
        });
        WithDiagnostic {
            value: d,
            diagnostic: diag,
        }
    }

    /// Plans recovery from a failed resume; the second stale failure in a run is terminal.
    pub fn plan_resume(
        &mut self,
        error: &ErrorInfo,
        labels: &Labels,
    ) -> WithDiagnostic<ResumePlan> {
        let run = self.run(labels);
        let plan = plan_resume(error, run.recoveries);
        if plan.action == ResumeAction::Recover {
            run.recoveries += 1;
            self.metrics.add(Counter::ResumeStaleRecovered, labels, 1);
        }
        let diag = (plan.action != ResumeAction::Propagate).then(|| {
            diagnostic(
                if plan.terminal {
                    "claude_sdk.resume.failed"
                } else {
                    "claude_sdk.resume.stale_recovered"
                },
                labels,
                json!({"class": plan.class, "reason": plan.reason, "error": error.message}),
            )
        });
        WithDiagnostic {
            value: plan,
            diagnostic: diag,
        }
    }

    /// Forgets a finished run.
    pub fn end_run(&mut self, labels: &Labels) -> bool {
        self.runs
            .pop(&labels.run_id.clone().unwrap_or_default())
            .is_some()
    }
}

#[cfg(test)]
mod tests;
