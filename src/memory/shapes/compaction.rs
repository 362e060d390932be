//! The shapes of compaction: its options, a plan handed out and back, its result.

use super::*;
use crate::memory::store::{Compaction, CompactionPlan, SummarySource};
use crate::memory::summary::{model_prompt, Trigger};
use napi_derive::napi;
use serde::{Deserialize, Serialize};

/// `compact` / `planCompaction` options.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CompactOptions {
    /// Compact even below the thresholds (and `minFold`), whenever there is more than the
    /// kept messages to fold.
    pub force: Option<bool>,
    /// Fold the lane's unsummarized messages up to and including the one stored under
    /// this id, whatever the thresholds say (`force` and `keepRecent` do not apply): a
    /// caller's own fold point, such as `assemble`'s `foldThrough`. Nothing is due when
    /// it is not an unsummarized message of the lane (folded already, or not this lane's).
    #[napi(ts_type = "string | null")]
    pub through: Option<String>,
    /// Epoch milliseconds (default now): the summary's `updatedAt`, and its age.
    pub now: Option<f64>,
}

/// `applyCompaction` options.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApplyCompactionOptions {
    /// The new summary from the caller's summarizer (a model): used when it has the
    /// five sections in order (`Current goals / open questions:`, `Decisions made:`,
    /// `Important facts:`, `Recent outcomes:`, `Pending actions:`), each with at most 8
    /// `- ` items of at most 160 characters; otherwise the extractive summarizer writes
    /// it, and the result says why.
    #[napi(ts_type = "string | null")]
    pub summary: Option<String>,
    pub now: Option<f64>,
    /// The fencing token of the lock the caller holds for this lane
    /// (`RedisCoordinator.lock(...).fence`): the write is refused with
    /// `ERR_MEMORY_FENCED` when the summary was last written under a newer one (this
    /// caller's lock expired and another holder wrote). Omit it, or pass null for a
    /// process-local lock, to rely on the version check alone.
    #[napi(ts_type = "number | null")]
    pub fence: Option<f64>,
}

/// Why a thread is due for compaction.
fn trigger_name(t: Trigger) -> &'static str {
    match t {
        Trigger::Messages(_) => "messages",
        Trigger::Tokens(_) => "tokens",
        Trigger::Age(_) => "age",
        Trigger::Forced => "forced",
        Trigger::Through => "through",
    }
}

/// Reads a trigger name back (`forced` for anything else: a plan's trigger is only
/// reported, never acted on).
pub fn trigger_of(name: &str) -> Trigger {
    match name {
        "messages" => Trigger::Messages(0),
        "tokens" => Trigger::Tokens(0),
        "age" => Trigger::Age(0),
        "through" => Trigger::Through,
        _ => Trigger::Forced,
    }
}

/// A compaction decided and not yet written, for a caller's summarizer: the previous
/// summary and the messages to fold into it. Hand it back to `applyCompaction` with the
/// new summary.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionPlanView {
    pub session_id: String,
    pub thread_key: String,
    #[napi(ts_type = "'messages' | 'tokens' | 'age' | 'forced'")]
    pub trigger: String,
    /// The summary the new one builds on (`null` for the first compaction).
    #[napi(ts_type = "string | null")]
    pub previous_summary: Option<String>,
    /// Its version (0 when none); the plan is stale once the stored summary moved on.
    pub previous_version: f64,
    /// The messages to fold, oldest first.
    pub messages: Vec<StoredChatMessage>,
    /// Messages left verbatim after them.
    pub kept: f64,
    /// What to ask a model for the new summary: the previous one, the messages, and the
    /// exact structure `applyCompaction` accepts (ignored when the plan is handed back).
    #[serde(default, skip_deserializing)]
    pub prompt: String,
}

impl From<&CompactionPlan> for CompactionPlanView {
    #[allow(clippy::cast_precision_loss)] // versions and counts are far below 2^53
    fn from(p: &CompactionPlan) -> Self {
        CompactionPlanView {
            session_id: p.session_id.clone(),
            thread_key: p.thread_key.clone(),
            trigger: trigger_name(p.trigger).to_string(),
            previous_summary: p.previous.as_ref().map(|r| r.body.clone()),
            previous_version: p
                .previous
                .as_ref()
                .map_or(0.0, |r| r.summary_version as f64),
            messages: p.fold.iter().map(StoredChatMessage::from).collect(),
            kept: p.kept.len() as f64,
            prompt: model_prompt(
                p.previous.as_ref().map(|r| r.body.as_str()),
                p.fold.iter().map(|m| (m.role.as_str(), m.text.as_str())),
            ),
        }
    }
}

/// What a compaction did.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionResult {
    #[napi(ts_type = "'messages' | 'tokens' | 'age' | 'forced'")]
    pub trigger: String,
    /// Messages folded into the summary (they stay stored verbatim).
    pub folded: f64,
    pub summary_version: f64,
    /// Estimated tokens of the thread's context (summary and unsummarized messages)
    /// before and after.
    pub tokens_before: f64,
    pub tokens_after: f64,
    /// Who wrote the summary: `caller`, `extractive`, or `fallback` (the caller's text
    /// was not a valid summary; `fallbackReason` says why).
    #[napi(ts_type = "'caller' | 'extractive' | 'fallback'")]
    pub summarizer: String,
    #[napi(ts_type = "string | null")]
    pub fallback_reason: Option<String>,
    /// Facts, preferences and outcomes the folded messages stated, written as records of
    /// the lane with the message each came from (found by `search`; the assembly leaves
    /// the lane's own to its retrieved messages and shows other lanes' as memories).
    pub records: f64,
}

impl From<&Compaction> for CompactionResult {
    #[allow(clippy::cast_precision_loss)] // counts are far below 2^53
    fn from(c: &Compaction) -> Self {
        let (summarizer, reason) = match c.source {
            SummarySource::Extractive => ("extractive", None),
            SummarySource::Caller => ("caller", None),
            SummarySource::Fallback(why) => ("fallback", Some(why.to_string())),
        };
        CompactionResult {
            trigger: trigger_name(c.trigger).to_string(),
            folded: c.folded as f64,
            summary_version: c.summary_version as f64,
            tokens_before: c.tokens_before as f64,
            tokens_after: c.tokens_after as f64,
            summarizer: summarizer.to_string(),
            fallback_reason: reason,
            records: c.records as f64,
        }
    }
}
