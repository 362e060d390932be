//! Token estimates that follow the text's script, for the engine's budgets.
//!
//! `ceil(length / 4)` (what the drop-in layer keeps, as the TypeScript modules did) is
//! close for English chat but counts JSON, code, CJK and emoji far too low: a budget of
//! N such "tokens" can hold 1.3 N to 3 N real ones. This estimator counts what a BPE
//! tokenizer pays for (ASCII words and the letters past a word's sixth, digits and digit
//! runs, punctuation, extra spaces, line breaks, CJK characters, characters outside the
//! Basic Multilingual Plane such as emoji, emoji joiners, other non-ASCII characters and
//! their runs) in one pass, and weighs them with constants fitted against
//! `@anthropic-ai/tokenizer` on real text (`node bench/tokens.js --fit`: chat from a
//! public corpus, the code of pinned dependencies, package.json and Slack-shaped JSON, the
//! CJK and European translations of TypeScript's messages, emoji from emojibase).
//!
//! [`upper_bound`] is what budget decisions use: on every held-out text of that corpus it
//! is at least the reference count, so a result that claims to fit N tokens does.
//! [`Calibration`] scales both by a per-model ratio learned from the `usage` the Messages
//! API returns, for models whose tokenizer counts more than the reference.

use napi_derive::napi;

mod ascii;
use std::collections::HashMap;
use std::sync::Mutex;

/// What a token estimate is made of: counts of the text's parts.
#[napi(object, object_from_js = false, js_name = "TokenCounts")]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Runs of ASCII letters.
    pub words: u32,
    /// Letters past the sixth of each run (long words split into several tokens).
    pub long_letters: u32,
    pub digits: u32,
    pub digit_runs: u32,
    /// ASCII punctuation and symbols.
    pub punctuation: u32,
    /// Spaces after the first of a run (a single space joins the next word's token).
    pub extra_spaces: u32,
    /// Line feeds, carriage returns and tabs.
    pub line_breaks: u32,
    /// Han, kana, Hangul, CJK punctuation and full-width forms.
    pub cjk: u32,
    /// Characters outside the Basic Multilingual Plane (emoji, rare Han).
    pub supplementary: u32,
    /// Zero-width joiners and variation selector 16 (parts of emoji sequences).
    pub joiners: u32,
    /// Other non-ASCII characters (accented Latin, Cyrillic, Greek, Arabic, ...).
    pub other: u32,
    /// Runs of such characters.
    pub other_runs: u32,
}

/// Tokens per counted part, in [`Counts`] order (fitted, see the module docs).
pub const WEIGHTS: [f64; 12] = [
    1.050, 0.209, 0.242, 2.382, 0.331, 0.000, 1.951, 0.990, 2.688, 1.237, 0.270, 1.640,
];
/// The upper bound's slope: `ceil(UPPER_SLOPE * estimate + UPPER_OFFSET)`.
pub const UPPER_SLOPE: f64 = 1.44;
/// The upper bound's offset per text, in tokens (short, rare words cost more than their
/// letters say).
pub const UPPER_OFFSET: f64 = 12.41;
/// The fewest and most a model's calibrated ratio may be.
pub const RATIO_RANGE: (f64, f64) = (0.8, 2.0);
/// Weight of a new observation in the calibrated ratio (an exponential moving average).
pub const CALIBRATION_WEIGHT: f64 = 0.2;
/// Requests of fewer estimated tokens than this do not calibrate (fixed overheads that
/// the caller's text does not show dominate them).
pub const CALIBRATION_MIN_TOKENS: f64 = 200.0;
/// Models remembered by a calibration (the least recently calibrated is forgotten).
pub const CALIBRATION_MAX_MODELS: usize = 64;

#[cfg(test)]
thread_local! {
    /// Bytes counted on this thread: how much text the estimator read (tests measure the
    /// work of an algorithm by it, not by time).
    pub static SCANNED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

impl Counts {
    /// The parts of `text`. ASCII is counted up to 64 bytes at a time (see `ascii`);
    /// other characters one by one.
    pub fn of(text: &str) -> Counts {
        #[cfg(test)]
        SCANNED.with(|n| n.set(n.get() + text.len() as u64));
        let mut c = Counts::default();
        let mut runs = ascii::Runs::default();
        let mut prev_other = false;
        let bytes = text.as_bytes();
        let mut i = 0;
        while let Some(rest) = bytes.get(i..).filter(|r| !r.is_empty()) {
            let window = rest.get(..ascii::BLOCK).unwrap_or(rest);
            let n = crate::text::ascii_prefix(window);
            if n > 0 {
                ascii::count_block(&window[..n], &mut c, &mut runs);
                prev_other = false;
                i += n;
                continue;
            }
            // A multi-byte character: decode it (the text is valid UTF-8).
            let ch = text[i..].chars().next().unwrap_or('\u{FFFD}');
            i += ch.len_utf8();
            runs = ascii::Runs::default();
            prev_other = c.add_beyond_ascii(ch, prev_other);
        }
        c
    }

    /// Counts one character beyond ASCII (`prev_other`: the character before it was an
    /// "other" one); returns whether this one is.
    fn add_beyond_ascii(&mut self, ch: char, prev_other: bool) -> bool {
        let cp = u32::from(ch);
        if cp > 0xFFFF {
            self.supplementary += 1;
            false
        } else if cp == 0x200D || cp == 0xFE0F {
            self.joiners += 1;
            false
        } else if is_cjk(cp) {
            self.cjk += 1;
            false
        } else {
            self.other += 1;
            if !prev_other {
                self.other_runs += 1;
            }
            true
        }
    }

    /// The counts in [`WEIGHTS`] order.
    pub fn to_array(self) -> [u32; 12] {
        [
            self.words,
            self.long_letters,
            self.digits,
            self.digit_runs,
            self.punctuation,
            self.extra_spaces,
            self.line_breaks,
            self.cjk,
            self.supplementary,
            self.joiners,
            self.other,
            self.other_runs,
        ]
    }

    /// The estimate these counts make (tokens, not rounded).
    pub fn estimate(self) -> f64 {
        self.to_array()
            .iter()
            .zip(WEIGHTS)
            .map(|(&n, w)| f64::from(n) * w)
            .sum()
    }
}

fn is_cjk(cp: u32) -> bool {
    matches!(cp,
        0x1100..=0x11FF // Hangul Jamo
        | 0x2E80..=0x9FFF // CJK radicals, punctuation, kana, Han
        | 0xAC00..=0xD7AF // Hangul syllables
        | 0xF900..=0xFAFF // CJK compatibility ideographs
        | 0xFF00..=0xFFEF // half- and full-width forms
    )
}

/// The central estimate of `text`'s tokens (fractional; 0 for `""`).
pub fn estimate(text: &str) -> f64 {
    Counts::of(text).estimate()
}

/// Tokens `text` takes at most, by the fitted bound (0 for `""`).
pub fn upper_bound(text: &str) -> u64 {
    if text.is_empty() {
        return 0;
    }
    upper_of(estimate(text))
}

/// The upper bound of a central estimate.
pub fn upper_of(estimate: f64) -> u64 {
    (UPPER_SLOPE * estimate + UPPER_OFFSET).ceil().max(0.0) as u64
}

/// A model's learned ratio of real tokens to this estimator's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModelRatio {
    pub ratio: f64,
    /// Observations taken.
    pub samples: u64,
    /// Observations set aside (too small to tell).
    pub skipped: u64,
    stamp: u64,
}

impl Default for ModelRatio {
    fn default() -> Self {
        ModelRatio {
            ratio: 1.0,
            samples: 0,
            skipped: 0,
            stamp: 0,
        }
    }
}

/// Per-model ratios, learned online from what the model reported.
#[derive(Debug, Default)]
pub struct Calibration {
    models: HashMap<String, ModelRatio>,
    clock: u64,
}

impl Calibration {
    /// Takes one observation: the request's text was estimated at `estimated` tokens and
    /// the model counted `input_tokens`. Returns the model's ratio after it.
    pub fn observe(&mut self, model: &str, estimated: f64, input_tokens: f64) -> ModelRatio {
        self.clock += 1;
        let clock = self.clock;
        if !self.models.contains_key(model) && self.models.len() >= CALIBRATION_MAX_MODELS {
            if let Some(oldest) = self
                .models
                .iter()
                .min_by_key(|(_, r)| r.stamp)
                .map(|(k, _)| k.clone())
            {
                self.models.remove(&oldest);
            }
        }
        let entry = self.models.entry(model.to_string()).or_default();
        entry.stamp = clock;
        let usable = estimated.is_finite()
            && input_tokens.is_finite()
            && estimated >= CALIBRATION_MIN_TOKENS
            && input_tokens > 0.0;
        if !usable {
            entry.skipped += 1;
            return *entry;
        }
        let seen = (input_tokens / estimated).clamp(RATIO_RANGE.0, RATIO_RANGE.1);
        entry.ratio = if entry.samples == 0 {
            seen
        } else {
            entry.ratio + CALIBRATION_WEIGHT * (seen - entry.ratio)
        }
        .clamp(RATIO_RANGE.0, RATIO_RANGE.1);
        entry.samples += 1;
        *entry
    }

    /// The model's ratio (1 for a model never calibrated).
    pub fn ratio(&self, model: &str) -> ModelRatio {
        self.models.get(model).copied().unwrap_or_default()
    }

    pub fn clear(&mut self) {
        self.models.clear();
    }
}

/// The process's calibration, shared by every store (a gateway calibrates once per model).
pub static CALIBRATION: Mutex<Option<Calibration>> = Mutex::new(None);

/// Runs `f` on the process's calibration (a poisoned lock is recovered: the map is
/// always consistent between statements).
pub fn with_calibration<T>(f: impl FnOnce(&mut Calibration) -> T) -> T {
    let mut guard = CALIBRATION
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    f(guard.get_or_insert_with(Calibration::default))
}

/// The calibration key of callers that name no model.
pub const DEFAULT_MODEL: &str = "default";

/// The calibrated ratio of `model` (`None`: [`DEFAULT_MODEL`]); 1 until calibrated.
pub fn model_ratio(model: Option<&str>) -> f64 {
    with_calibration(|c| c.ratio(model.unwrap_or(DEFAULT_MODEL)).ratio)
}

/// What a budget counts for `text`: its upper bound scaled by `model`'s ratio.
pub fn budget_tokens(text: &str, model: Option<&str>) -> u64 {
    scale(upper_bound(text), model_ratio(model))
}

/// What a budget counts for `text` when no model is named (the `"default"` ratio): the
/// memory store's assembly, history and compaction thresholds count with it.
pub fn counted(text: &str) -> u64 {
    budget_tokens(text, None)
}

/// `tokens` scaled by a ratio, rounded up.
pub fn scale(tokens: u64, ratio: f64) -> u64 {
    if (ratio - 1.0).abs() < f64::EPSILON {
        tokens
    } else {
        (tokens as f64 * ratio).ceil() as u64
    }
}

#[cfg(test)]
mod tests;
