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
//! CJK and European translations of TypeScript's messages, emoji from emojibase, and text
//! laid out in columns: space-padded, tab-separated, box-drawn and Markdown tables).
//!
//! Budgets count a section by one bound for its total, not by a bound per part: the parts'
//! central estimates add up (they meet at punctuation and line breaks) and a [`Meter`]
//! turns the sum into the most tokens that text can take, with a margin for the
//! estimator's error at that size (a sum's error is smaller, relative to it, than one short
//! text's). The margin is fitted on the same corpus, on sums of consecutive texts of every
//! kind, and checked on held-out ones: at least the reference count on every one of them.
//! [`Calibration`] learns a model's ratio of real tokens to estimated ones, and how much it
//! varies, from the `usage` the Messages API returns; a model that counts more tokens than
//! the reference gets a margin scaled up by its ratio. That margin is never scaled down:
//! the traffic a calibration learns from need not hold every script a later section does.
//! What an observation made on its text teaches is kept with the text's class, its profile
//! (`classes`): a section is counted by the observations whose profiles lie nearest its
//! own, with their correction, tighter or looser ([`Meter::of_text`]); a section no
//! observation lies near keeps the bound above.

use napi_derive::napi;

mod ascii;
mod classes;
mod passes;
mod scripts;
pub use classes::{
    Classes, Neighbourhood, Profile, CLASS_DEVIATIONS, CLASS_DISTANCE, CLASS_FLOOR, CLASS_HULL,
    CLASS_NEIGHBOURS, CLASS_RADIUS, CLASS_SPREAD, CLASS_TRUSTED, OBSERVATIONS_PER_MODEL,
    SIMPLIFIED_FULL,
};
pub use passes::{by_class, Halving, Largest, ToTry, CLASS_HALVINGS, CLASS_PASSES, CLASS_PROBE};
use scripts::{is_cjk, is_hangul, is_kana, is_simplified};
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
    /// ASCII punctuation and symbols (backslashes apart).
    pub punctuation: u32,
    /// Backslashes: in JSON each starts an escape (`\n`, `\t`, `\"`), a token of its own
    /// that does not join the word after it.
    pub backslashes: u32,
    /// Spaces after the first of a run (a single space joins the next word's token).
    pub extra_spaces: u32,
    /// Runs of two or more spaces (a fixed-width table's padding, indentation): a run
    /// is a token of its own.
    pub space_runs: u32,
    /// Line feeds and carriage returns.
    pub line_breaks: u32,
    /// Tabs (tab-separated values, indentation).
    pub tabs: u32,
    /// Runs of tabs (one or more in a row): a run is a token of its own.
    pub tab_runs: u32,
    /// Han, kana, Hangul, CJK punctuation and full-width forms.
    pub cjk: u32,
    /// Of `cjk`: kana (hiragana, katakana, half-width katakana). Not a part of the
    /// estimate apart from `cjk`; a calibration tells Japanese from Chinese by it.
    pub kana: u32,
    /// Of `cjk`: Hangul (syllables, jamo, half-width forms). Not a part of the estimate
    /// apart from `cjk`; a calibration tells Korean from Chinese and Japanese by it.
    pub hangul: u32,
    /// Of `cjk`: Han written with a simplified radical (讠, 纟, 钅, 门, 页, 贝, 车, 马,
    /// ...: the runs of them Unicode places after each full radical's). Simplified Chinese
    /// writes them (7% of its Han in TypeScript's messages), traditional Chinese and
    /// Japanese write the full forms (0.3% and 1.5%). Not a part of the estimate apart from
    /// `cjk`; a calibration tells simplified from traditional Chinese by it.
    pub simplified: u32,
    /// Characters outside the Basic Multilingual Plane (emoji, rare Han).
    pub supplementary: u32,
    /// Zero-width joiners and variation selector 16 (parts of emoji sequences).
    pub joiners: u32,
    /// Arrows, mathematical and technical symbols, box drawing, block elements,
    /// geometric shapes, dingbats (U+2190 to U+2BFF): most take a token or two each.
    pub symbols: u32,
    /// Other non-ASCII characters (accented Latin, Cyrillic, Greek, Arabic, ...).
    pub other: u32,
    /// Runs of such characters.
    pub other_runs: u32,
}

/// Tokens per counted part, in [`Counts`] order (fitted, see the module docs).
pub const WEIGHTS: [f64; 17] = [
    1.118, 0.198, 0.290, 1.783, 0.304, 1.343, 0.000, 1.390, 0.990, 0.939, 0.002, 1.045, 2.861,
    1.917, 0.508, 0.277, 1.745,
];
/// The bound of a sum of central estimates `e` before calibration:
/// `ceil(SUM_SLOPE * e + SUM_SPREAD * sqrt(e) + SUM_OFFSET)`. The slope covers the
/// script whose tokens the estimate undercounts most (a section is seldom a mix), the
/// square-root term the error of a sum of a few parts, the offset a short text's.
pub const SUM_SLOPE: f64 = 1.23;
pub const SUM_SPREAD: f64 = 4.4;
pub const SUM_OFFSET: f64 = 1.25;
/// Observations a model's calibration takes before it is reported trusted.
pub const CALIBRATION_TRUSTED: u64 = 8;
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
            let n = crate::core::text::ascii_prefix(window);
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
            self.kana += u32::from(is_kana(cp));
            self.hangul += u32::from(is_hangul(cp));
            self.simplified += u32::from(is_simplified(cp));
            false
        } else if (0x2190..=0x2BFF).contains(&cp) {
            self.symbols += 1;
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
    pub fn to_array(self) -> [u32; 17] {
        [
            self.words,
            self.long_letters,
            self.digits,
            self.digit_runs,
            self.punctuation,
            self.backslashes,
            self.extra_spaces,
            self.space_runs,
            self.line_breaks,
            self.tabs,
            self.tab_runs,
            self.cjk,
            self.supplementary,
            self.joiners,
            self.symbols,
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

/// The central estimate of `text`'s tokens (fractional; 0 for `""`).
pub fn estimate(text: &str) -> f64 {
    Counts::of(text).estimate()
}

/// Tokens `text` takes at most before calibration (0 for `""`).
pub fn upper_bound(text: &str) -> u64 {
    if text.is_empty() {
        return 0;
    }
    Meter::REFERENCE.bound(estimate(text)).max(1)
}

/// How many tokens a text of a given central estimate takes at most: the one rule every
/// budget of the package counts with, applied to a section's total (see the module docs).
/// `bound(e) = ceil(slope * e + spread * sqrt(e) + offset)`, 0 for nothing.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Meter {
    pub slope: f64,
    pub spread: f64,
    pub offset: f64,
}

impl Meter {
    /// Against the reference tokenizer, before any calibration.
    pub const REFERENCE: Meter = Meter {
        slope: SUM_SLOPE,
        spread: SUM_SPREAD,
        offset: SUM_OFFSET,
    };

    /// The meter of a model's calibration: the reference one scaled by the model's ratio
    /// when that is above 1. A calibration raises the margin for a model that counts more
    /// tokens than the reference; it never lowers it, because the traffic it learnt from
    /// need not hold the scripts a later section does (a model calibrated on English chat
    /// that is then sent Italian or traditional Chinese, which the estimate undercounts by
    /// about a fifth, would go over a tighter margin).
    pub fn of_ratio(r: &ModelRatio) -> Meter {
        let ratio = r.ratio.max(1.0);
        Meter {
            slope: SUM_SLOPE * ratio,
            spread: SUM_SPREAD * ratio,
            offset: SUM_OFFSET * ratio,
        }
    }

    /// The meter of `model` (`None`: [`DEFAULT_MODEL`]) as calibrated so far.
    pub fn of_model(model: Option<&str>) -> Meter {
        with_calibration(|c| Meter::of_ratio(&c.ratio(model.unwrap_or(DEFAULT_MODEL))))
    }

    /// The meter of a section of `model` whose parts count `counts`: its class's own when
    /// the model's usage was observed on enough texts of that class, else
    /// [`Meter::of_model`]'s.
    pub fn of_text(model: Option<&str>, counts: &Counts) -> Meter {
        with_calibration(|c| c.meter_of(model.unwrap_or(DEFAULT_MODEL), counts))
    }

    /// Whether `model`'s calibration has classes (a section may then count with a meter
    /// of its own, [`Meter::of_text`]).
    pub fn classes_of(model: Option<&str>) -> bool {
        with_calibration(|c| {
            c.classes
                .get(model.unwrap_or(DEFAULT_MODEL))
                .is_some_and(|k| !k.is_empty())
        })
    }

    /// The most tokens a text (or a section of texts) of central estimate `estimate`
    /// takes; 0 when there is nothing.
    pub fn bound(&self, estimate: f64) -> u64 {
        if estimate.is_nan() || estimate <= 0.0 {
            return 0;
        }
        let b = self.slope * estimate + self.spread * estimate.sqrt() + self.offset;
        if b >= u64::MAX as f64 {
            u64::MAX
        } else {
            b.ceil().max(0.0) as u64
        }
    }

    /// Whether a section of central estimate `estimate` fits `limit` tokens.
    pub fn fits(&self, estimate: f64, limit: u64) -> bool {
        self.bound(estimate) <= limit
    }

    /// The largest central estimate whose bound is within `limit` (0 when none is).
    pub fn allowance(&self, limit: u64) -> f64 {
        #[allow(clippy::cast_precision_loss)] // budgets are far below 2^53
        let room = limit as f64 - self.offset;
        if room <= 0.0 || self.slope <= 0.0 {
            return 0.0;
        }
        // slope * x^2 + spread * x = room, x = sqrt(e).
        let x = (-self.spread + (self.spread * self.spread + 4.0 * self.slope * room).sqrt())
            / (2.0 * self.slope);
        let mut e = x * x;
        // Rounding: step down until the bound holds.
        while e > 0.0 && !self.fits(e, limit) {
            e = (e - 1e-6 * e.max(1.0)).max(0.0);
        }
        e
    }
}

/// A model's learned ratio of real tokens to this estimator's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModelRatio {
    pub ratio: f64,
    /// The mean absolute deviation of the observations from the ratio (a moving average).
    pub deviation: f64,
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
            deviation: 0.0,
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
    /// Per model, what observations made on texts taught by class of text.
    classes: HashMap<String, Classes>,
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
                self.classes.remove(&oldest);
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
        if entry.samples == 0 {
            entry.ratio = seen;
        } else {
            let off = (seen - entry.ratio).abs();
            entry.deviation += CALIBRATION_WEIGHT * (off - entry.deviation);
            entry.ratio = (entry.ratio + CALIBRATION_WEIGHT * (seen - entry.ratio))
                .clamp(RATIO_RANGE.0, RATIO_RANGE.1);
        }
        entry.samples += 1;
        *entry
    }

    /// Takes one observation made on the request's text (its parts `counts`): the
    /// model's ratio as [`Calibration::observe`] takes it, and the class of the text.
    pub fn observe_text(&mut self, model: &str, counts: &Counts, input_tokens: f64) -> ModelRatio {
        let estimated = counts.estimate();
        let before = self.ratio(model).samples;
        let r = self.observe(model, estimated, input_tokens);
        if r.samples > before {
            if let Some(p) = Profile::of(counts) {
                let classes = self.classes.entry(model.to_string()).or_default();
                classes.observe(p, input_tokens / estimated);
            }
        }
        r
    }

    /// The meter of a section of `model` whose parts count `counts` (see
    /// [`Meter::of_text`]).
    pub fn meter_of(&self, model: &str, counts: &Counts) -> Meter {
        self.meter_around(model, self.around(model, counts).as_ref())
    }

    /// The observations of `model` around a text of `counts` (`None`: none within reach).
    pub fn around(&self, model: &str, counts: &Counts) -> Option<Neighbourhood> {
        Profile::of(counts).and_then(|p| self.classes.get(model).and_then(|k| k.around(&p)))
    }

    /// The meter of a section of `model` whose neighbourhood is `around`.
    fn meter_around(&self, model: &str, around: Option<&Neighbourhood>) -> Meter {
        let meter = Meter::of_ratio(&self.ratio(model));
        match around.and_then(|n| n.meter().map(|m| (m, n.ratio))) {
            // Tighter: the class's own correction. Looser: only for a class the model counts
            // more of than the model's meter allows for (a script the estimate undercounts
            // past the bound's slope); a class merely varied keeps the model's meter, which
            // holds for every script of the fit.
            Some((m, ratio)) if m.slope <= meter.slope || ratio > meter.slope => m,
            _ => meter,
        }
    }

    /// The observations on texts `model`'s calibration keeps (0 for none).
    pub fn classes(&self, model: &str) -> usize {
        self.classes.get(model).map_or(0, Classes::len)
    }

    /// The model's ratio (1 for a model never calibrated).
    pub fn ratio(&self, model: &str) -> ModelRatio {
        self.models.get(model).copied().unwrap_or_default()
    }

    pub fn clear(&mut self) {
        self.models.clear();
        self.classes.clear();
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

/// What a budget counts for `text` alone when no model is named (the `"default"`
/// calibration); a section of several texts is counted by the [`Meter`] of their summed
/// estimates instead.
pub fn counted(text: &str) -> u64 {
    if text.is_empty() {
        return 0;
    }
    Meter::of_model(None).bound(estimate(text)).max(1)
}

/// What a budget counts for a section made of `texts` when no model is named: one bound
/// for their summed estimates.
pub fn counted_all<'a>(texts: impl IntoIterator<Item = &'a str>) -> u64 {
    Meter::of_model(None).bound(texts.into_iter().map(estimate).sum())
}

#[cfg(test)]
mod tests;
