//! What one `buildContext` asks for: the caller's options as JavaScript passes them, and
//! the checked request the store builds from.

use crate::core::input::{budget_tokens, whole_number, InputError};
use crate::core::prompt::{FormatInput, PromptOptions, PromptOptionsInput, ToolNamesInput};
use crate::core::text::THREAD_BUDGET_TOKENS;
use napi_derive::napi;
use serde::Deserialize;

/// Adjacent messages in a snapshot unless the caller asks otherwise.
pub const DEFAULT_ADJACENT: usize = 20;
/// Tokens the ChannelSnapshot may take (the upper figure of the design's 500-1,500),
/// counted like every engine budget (see `crate::core::tokens`).
pub const SNAPSHOT_BUDGET_TOKENS: u64 = 1_500;

/// What one `buildContext` asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextRequest {
    pub channel: String,
    pub anchor_id: String,
    /// The anchor's thread when the caller knows it (Slack's `thread_ts`).
    pub thread_hint: Option<String>,
    pub adjacent: usize,
    pub budget_tokens: u64,
    /// Tokens the ChannelSnapshot may take: adjacent messages past it are left out.
    pub snapshot_budget_tokens: u64,
    /// The model the context is for (`None`: the calibration's `"default"`).
    pub model: Option<String>,
    /// How that model counts the thread's tokens, and the snapshot's (see
    /// `crate::core::tokens::Meter`: the model's meter, or a section's class's own).
    pub meter: crate::core::tokens::Meter,
    pub snapshot_meter: crate::core::tokens::Meter,
    pub prompt: PromptOptions,
}

impl ContextRequest {
    pub fn new(channel: &str, anchor_id: &str) -> Self {
        ContextRequest {
            channel: channel.to_string(),
            anchor_id: anchor_id.to_string(),
            thread_hint: None,
            adjacent: DEFAULT_ADJACENT,
            budget_tokens: u64::from(THREAD_BUDGET_TOKENS),
            snapshot_budget_tokens: SNAPSHOT_BUDGET_TOKENS,
            model: None,
            meter: crate::core::tokens::Meter::REFERENCE,
            snapshot_meter: crate::core::tokens::Meter::REFERENCE,
            prompt: PromptOptions::default(),
        }
    }
}

/// `buildContext` options.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BuildContextOptions {
    /// The anchor's thread when known (Slack `thread_ts`): lets a reply the store does
    /// not hold be fetched with one `conversations.replies` call.
    pub thread_id: Option<String>,
    /// Adjacent messages in the snapshot (default 20), nearest to the anchor first.
    pub adjacent: Option<f64>,
    /// ThreadContext budget in tokens (default 8,000), counted by the engine's token
    /// estimator's upper bound (see `tokenEstimate`).
    pub budget_tokens: Option<f64>,
    /// ChannelSnapshot budget in tokens (default 1,500): the adjacent messages that fit,
    /// those with thread activity or reactions first, then the nearest to the anchor; the
    /// snapshot's `adjacent_omitted` counts the rest.
    pub snapshot_budget_tokens: Option<f64>,
    /// The model the context is for: its calibrated ratio (see `calibrate`) scales the
    /// token counts (default `"default"`).
    pub model: Option<String>,
    /// Prompt section for a direct message (no channel-search guidance).
    pub direct_message: Option<bool>,
    /// How the guidance names the tools: `"api"` (the default, matching
    /// `store.tools(channelId).definitions()`) or `"dotted"`.
    #[napi(ts_type = "'dotted' | 'api'")]
    pub tool_names: Option<ToolNamesInput>,
    pub pretty: Option<bool>,
    /// `"json"` (default) or `"compact"`: the prompt's two documents as compact text (the
    /// same messages, fewer tokens); `snapshot` and `thread` stay objects.
    #[napi(ts_type = "'json' | 'compact'")]
    pub format: Option<FormatInput>,
}

impl ContextRequest {
    /// The request for answering `anchor` in `channel` with the caller's `options`.
    pub fn with_options(
        channel: String,
        anchor: String,
        options: BuildContextOptions,
    ) -> Result<Self, InputError> {
        if channel.is_empty() {
            return Err(InputError::type_error(
                "channelId",
                "expected a non-empty string",
            ));
        }
        if anchor.is_empty() {
            return Err(InputError::type_error(
                "anchorMessageId",
                "expected a non-empty string",
            ));
        }
        let mut req = ContextRequest::new(&channel, &anchor);
        req.thread_hint = options.thread_id.filter(|t| !t.is_empty());
        if let Some(n) = options.adjacent {
            let n = whole_number(n, "options.adjacent", "messages")?;
            req.adjacent = usize::try_from(n).unwrap_or(usize::MAX);
        }
        if let Some(b) = options.budget_tokens {
            req.budget_tokens = budget_tokens(b, "options.budgetTokens")?;
        }
        if let Some(b) = options.snapshot_budget_tokens {
            req.snapshot_budget_tokens = budget_tokens(b, "options.snapshotBudgetTokens")?;
        }
        req.meter = crate::core::tokens::Meter::of_model(options.model.as_deref());
        req.snapshot_meter = req.meter;
        req.model = options.model;
        req.prompt = PromptOptions::from(PromptOptionsInput {
            direct_message: options.direct_message,
            tool_names: options.tool_names,
            pretty: options.pretty,
            format: options.format,
        });
        Ok(req)
    }
}
