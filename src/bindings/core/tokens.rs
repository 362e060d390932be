//! `tokenEstimate`, `tokenBound`, `calibrate`, `tokenCalibration`, `resetCalibration`:
//! the engine's token estimator, the bound its budgets count with, and its per-model
//! calibration (`crate::core::tokens`).

use crate::bindings::errors::throw;
use crate::bindings::js::js_string;
use crate::bindings::js::{from_js, from_js_opt, is_nullish};
use crate::core::input::InputError;
use crate::core::tokens::{
    self, with_calibration, Calibration, Counts, Meter, ModelRatio, DEFAULT_MODEL,
};
use napi::bindgen_prelude::*;
use napi::Env;
use napi_derive::napi;
use serde::Deserialize;

/// `tokenEstimate`'s options.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TokenEstimateOptions {
    /// Scale by this model's calibrated ratio (default `"default"`, what `calibrate`
    /// without a model learns).
    pub model: Option<String>,
    /// Also return what the estimate is made of.
    pub counts: Option<bool>,
}

/// A text's tokens by the engine's estimator.
#[napi(object, object_from_js = false)]
#[derive(Debug, Clone)]
pub struct TokenEstimate {
    /// The central estimate scaled by the model's ratio, rounded up (half the texts take
    /// more, half fewer).
    pub tokens: u32,
    /// The central estimate before the model's ratio, not rounded: what a caller adds up
    /// over the parts of a section and hands to `tokenBound`.
    pub estimate: f64,
    /// What budgets count for this text alone: it takes at most this many tokens (the
    /// model's meter, or the meter of the text's class once the model's usage was observed
    /// on enough texts of that class; by the reference tokenizer until calibrated). A
    /// section of several texts counts less than the sum of theirs: `tokenBound` of the
    /// summed estimates.
    pub upper_bound: u32,
    /// The model's calibrated ratio applied to `tokens` (1 until calibrated).
    pub ratio: f64,
    pub counts: Option<Counts>,
}

/// `calibrate`'s input: what was sent (its text, or the estimate of it) and the
/// `usage.input_tokens` the model reported for it.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CalibrationInput {
    /// The model (default `"default"`).
    pub model: Option<String>,
    /// What was counted: everything the request carried as text (system prompt, messages,
    /// tool definitions), or one section's text.
    pub text: Option<String>,
    /// Or: `tokenEstimate(text).tokens` of it, summed over its parts.
    pub tokens_estimated: Option<f64>,
    /// The `usage.input_tokens` (plus cache reads and writes) the Messages API returned.
    pub input_tokens: f64,
}

/// A model's calibration.
#[napi(object, object_from_js = false)]
#[derive(Debug, Clone)]
pub struct ModelCalibration {
    pub model: String,
    /// Real tokens per estimated token, between 0.8 and 2 (1 until calibrated).
    pub ratio: f64,
    /// How far the observations stray from the ratio: the largest recent absolute
    /// difference, forgotten by 5% per observation.
    pub deviation: f64,
    /// Enough observations were taken for budgets to use the ratio and its deviation
    /// instead of the margin that covers every script.
    pub trusted: bool,
    /// Observations taken.
    pub samples: u32,
    /// Observations set aside: under 200 estimated tokens, where fixed overheads the
    /// text does not show dominate.
    pub skipped: u32,
}

fn calibration(model: String, r: ModelRatio) -> ModelCalibration {
    ModelCalibration {
        model,
        ratio: r.ratio,
        deviation: r.deviation,
        trusted: r.samples >= tokens::CALIBRATION_TRUSTED,
        samples: u32::try_from(r.samples).unwrap_or(u32::MAX),
        skipped: u32::try_from(r.skipped).unwrap_or(u32::MAX),
    }
}

fn whole(n: f64) -> u32 {
    if n >= f64::from(u32::MAX) {
        u32::MAX
    } else {
        n.ceil().max(0.0) as u32
    }
}

/// Tokens of `text` by the engine's script-aware estimator (fitted against Claude's
/// reference tokenizer on chat, code, JSON, CJK and emoji): `tokens` is the central
/// estimate, `upperBound` what the engine's budgets count (by the model's calibration,
/// the class of text its usage was observed on included). The drop-in `estimateTokens` keeps `ceil(length / 4)`.
#[napi(catch_unwind, ts_args_type = "text: string, options?: TokenEstimateOptions")]
pub fn token_estimate(env: &Env, text: Unknown, options: Option<Unknown>) -> Result<TokenEstimate> {
    const F: &str = "tokenEstimate";
    let s = js_string(env, F, "text", &text)?.into_utf8()?;
    let o: TokenEstimateOptions = from_js_opt(env, F, "options", options)?.unwrap_or_default();
    let model = o.model.as_deref().unwrap_or(DEFAULT_MODEL);
    let c = Counts::of(s.as_str()?);
    let (r, meter) = with_calibration(|k| (k.ratio(model), k.meter_of(model, &c)));
    let central = c.estimate();
    Ok(TokenEstimate {
        tokens: whole(central * r.ratio),
        estimate: central,
        upper_bound: u32::try_from(meter.bound(central)).unwrap_or(u32::MAX),
        ratio: r.ratio,
        counts: o.counts.unwrap_or(false).then_some(c),
    })
}

/// The most tokens a section takes whose parts' central estimates (`tokenEstimate(part)
/// .estimate`) add up to `estimate`: the bound every budget of the engine counts with,
/// one margin for the whole rather than one per part, for `options.model`'s calibration.
#[napi(catch_unwind, ts_args_type = "estimate: number, options?: TokenBoundOptions")]
pub fn token_bound(env: &Env, estimate: f64, options: Option<Unknown>) -> Result<u32> {
    const F: &str = "tokenBound";
    if !estimate.is_finite() || estimate < 0.0 {
        let e = InputError::range_error("estimate", "expected a finite number >= 0");
        return Err(throw(env, F, &e));
    }
    let o: TokenBoundOptions = from_js_opt(env, F, "options", options)?.unwrap_or_default();
    let meter = Meter::of_model(Some(o.model.as_deref().unwrap_or(DEFAULT_MODEL)));
    Ok(u32::try_from(meter.bound(estimate)).unwrap_or(u32::MAX))
}

/// `tokenBound`'s options.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TokenBoundOptions {
    /// Count with this model's calibration (default `"default"`).
    pub model: Option<String>,
}

/// Learns from one count the model made: a response's `usage` (the whole request), or the
/// token counting endpoint's count of one section. The model's ratio of real tokens to
/// estimated ones (a moving average, each observation weighing 0.2, bounded to 0.8-2)
/// widens the budgets of a model that counts more than the reference (stores built with
/// `model`, or none for `"default"`). With `text`, the observation is also kept by the
/// text's profile, and a section among its nearest observations (weighing enough, and
/// within 0.08 of a mixture of theirs) is counted by their ratios in that mixture (tighter
/// where the model counts less); a whole request teaches no section in it,
/// so calibrate on sections to fill them (docs/tokens.md). Give `text` or
/// `tokensEstimated`, and `inputTokens`.
#[napi(catch_unwind, ts_args_type = "input: CalibrationInput")]
pub fn calibrate(env: &Env, input: Unknown) -> Result<ModelCalibration> {
    const F: &str = "calibrate";
    let i: CalibrationInput = from_js(env, F, "input", input)?;
    let counts = match (&i.text, i.tokens_estimated) {
        (Some(t), None) => Some(Counts::of(t)),
        (None, Some(n)) if n.is_finite() && n >= 0.0 => None,
        (None, Some(_)) => {
            let e =
                InputError::range_error("input.tokensEstimated", "expected a finite number >= 0");
            return Err(throw(env, F, &e));
        }
        _ => {
            let e =
                InputError::type_error("input", "expected exactly one of text and tokensEstimated");
            return Err(throw(env, F, &e));
        }
    };
    if !i.input_tokens.is_finite() || i.input_tokens < 0.0 {
        let e = InputError::range_error("input.inputTokens", "expected a finite number >= 0");
        return Err(throw(env, F, &e));
    }
    let model = i.model.unwrap_or_else(|| DEFAULT_MODEL.to_string());
    let r = with_calibration(|c| match (&counts, i.tokens_estimated) {
        (Some(counts), _) => c.observe_text(&model, counts, i.input_tokens),
        (None, estimated) => c.observe(&model, estimated.unwrap_or(0.0), i.input_tokens),
    });
    Ok(calibration(model, r))
}

/// A model's calibration so far (`"default"` without a model).
#[napi(catch_unwind, ts_args_type = "model?: string")]
pub fn token_calibration(env: &Env, model: Option<Unknown>) -> Result<ModelCalibration> {
    let model = match model {
        Some(v) if !is_nullish(&v) => js_string(env, "tokenCalibration", "model", &v)?
            .into_utf8()?
            .into_owned()?,
        _ => DEFAULT_MODEL.to_string(),
    };
    let r = with_calibration(|c| c.ratio(&model));
    Ok(calibration(model, r))
}

/// Forgets every model's calibration (ratios back to 1).
#[napi(catch_unwind)]
pub fn reset_calibration() {
    with_calibration(Calibration::clear);
}
