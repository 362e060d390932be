//! Calibration by class of text: what a model's usage taught about one kind of text is
//! trusted for that kind alone.
//!
//! A text's [`Profile`] is what each counted part (ASCII words, punctuation, CJK,
//! emoji, other non-ASCII letters, ...) adds to its estimate, as shares of it: JSON, code,
//! English chat, European languages, CJK and emoji each have their own, and a section of
//! 2,000 estimated tokens lies within [`CLASS_RADIUS`] of others of its kind (measured on
//! the token corpus, `bench/token-corpus.js`). An observation made on a text joins the
//! nearest class of its model within the radius, or starts one; a section is then counted
//! with its own class's correction (its ratio of real to estimated tokens, plus a margin
//! of how much that ratio varied), and a section of a kind no observation held keeps the
//! bound that holds for every script. What the profile cannot tell apart, two languages
//! of one script whose parts weigh alike (Spanish and Italian, Korean and traditional
//! Chinese), shares a class, and the margin of its deviation.

use super::{Counts, Meter, CALIBRATION_TRUSTED, CALIBRATION_WEIGHT, RATIO_RANGE, WEIGHTS};

/// The largest L1 distance between profiles of one class (shares sum to 1, so 2 is the
/// most two profiles can differ).
pub const CLASS_RADIUS: f64 = 0.25;
/// Classes a model keeps (the least recently observed is forgotten).
pub const CLASSES_PER_MODEL: usize = 16;
/// Mean deviations of a class's observed ratio its margin adds above the ratio.
pub const CLASS_DEVIATIONS: f64 = 4.0;
/// The least margin above a class's ratio, as a share of it.
pub const CLASS_FLOOR: f64 = 0.03;
/// The square-root term of a class's bound, times its ratio: the error of a sum of a few
/// parts, which the ratios of whole sections do not show.
pub const CLASS_SPREAD: f64 = 2.0;

/// The shares of a text's estimate by counted part, in [`Counts`] order.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Profile([f64; 17]);

impl Profile {
    /// The profile of `counts`; `None` for a text that estimates to nothing.
    pub fn of(counts: &Counts) -> Option<Profile> {
        let mut shares = [0.0; 17];
        for ((s, n), w) in shares.iter_mut().zip(counts.to_array()).zip(WEIGHTS) {
            *s = f64::from(n) * w;
        }
        let total: f64 = shares.iter().sum();
        if total <= 0.0 || !total.is_finite() {
            return None;
        }
        for s in &mut shares {
            *s /= total;
        }
        Some(Profile(shares))
    }

    /// The L1 distance between two profiles (0 to 2).
    pub fn distance(&self, other: &Profile) -> f64 {
        self.0.iter().zip(other.0).map(|(a, b)| (a - b).abs()).sum()
    }

    /// Moves this profile towards `other` by `weight`.
    fn blend(&mut self, other: &Profile, weight: f64) {
        for (a, b) in self.0.iter_mut().zip(other.0) {
            *a += weight * (b - *a);
        }
    }
}

/// One class of a model's traffic: where its texts lie, and what the model counts for
/// them against the estimate.
#[derive(Debug, Clone, Copy)]
struct Class {
    centroid: Profile,
    ratio: f64,
    /// The mean absolute deviation of the observations from the ratio (moving average).
    deviation: f64,
    samples: u64,
    stamp: u64,
}

impl Class {
    /// The meter of this class, once it is trusted.
    fn meter(&self) -> Option<Meter> {
        if self.samples < CALIBRATION_TRUSTED {
            return None;
        }
        let r = self.ratio;
        Some(Meter {
            slope: (r + CLASS_DEVIATIONS * self.deviation).max(r * (1.0 + CLASS_FLOOR)),
            spread: CLASS_SPREAD * r,
            offset: super::SUM_OFFSET * r,
        })
    }
}

/// A model's classes.
#[derive(Debug, Clone, Default)]
pub struct Classes {
    list: Vec<Class>,
    clock: u64,
}

impl Classes {
    /// Takes one observation: a text of profile `p` that the model counted `seen` times
    /// its estimate.
    pub fn observe(&mut self, p: Profile, seen: f64) {
        self.clock += 1;
        let seen = seen.clamp(RATIO_RANGE.0, RATIO_RANGE.1);
        if let Some(i) = self.nearest(&p) {
            let c = &mut self.list[i];
            c.centroid.blend(&p, CALIBRATION_WEIGHT);
            c.deviation += CALIBRATION_WEIGHT * ((seen - c.ratio).abs() - c.deviation);
            c.ratio += CALIBRATION_WEIGHT * (seen - c.ratio);
            c.samples += 1;
            c.stamp = self.clock;
            return;
        }
        if self.list.len() >= CLASSES_PER_MODEL {
            if let Some(oldest) = (0..self.list.len()).min_by_key(|&i| self.list[i].stamp) {
                self.list.swap_remove(oldest);
            }
        }
        self.list.push(Class {
            centroid: p,
            ratio: seen,
            deviation: 0.0,
            samples: 1,
            stamp: self.clock,
        });
    }

    /// The meter of the trusted class a text of profile `p` belongs to, and that class's
    /// ratio, if any.
    pub fn meter(&self, p: &Profile) -> Option<(Meter, f64)> {
        self.nearest(p)
            .and_then(|i| self.list[i].meter().map(|m| (m, self.list[i].ratio)))
    }

    /// Classes observed.
    pub fn len(&self) -> usize {
        self.list.len()
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The class nearest `p` within the radius.
    fn nearest(&self, p: &Profile) -> Option<usize> {
        self.list
            .iter()
            .enumerate()
            .map(|(i, c)| (i, c.centroid.distance(p)))
            .filter(|&(_, d)| d <= CLASS_RADIUS)
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(i, _)| i)
    }
}

impl Meter {
    /// The meter of the class `text` (built within a budget by this meter) reads as, when
    /// that one counts it for more than this one does; `None` when this one holds.
    pub fn read_as(&self, model: Option<&str>, text: &str) -> Option<Meter> {
        let counts = Counts::of(text);
        let e = counts.estimate();
        let read = Meter::of_text(model, &counts);
        (read.bound(e) > self.bound(e)).then_some(read)
    }
}

/// Builds a section of `model` with the calibration's meter; where the calibration knows
/// the class of the text built, builds it again with that class's own meter and keeps
/// that one when it is within budget by the meter of the class it reads as (else builds
/// it by that one, [`CLASS_PASSES`] times at most, then keeps the first). `build` keeps
/// what it builds within its budget by the meter it is given; `text` is what it built.
pub fn by_class<T, E>(
    model: Option<&str>,
    mut build: impl FnMut(Meter) -> Result<T, E>,
    text: impl Fn(&T) -> &str,
) -> Result<T, E> {
    let meter = Meter::of_model(model);
    let first = build(meter)?;
    if !Meter::classes_of(model) {
        return Ok(first);
    }
    let mut own = Meter::of_text(model, &Counts::of(text(&first)));
    if own == meter {
        return Ok(first);
    }
    // What a class's meter lets in may read as a neighbouring class: built again by that
    // one's meter, a few times at most.
    for _ in 0..CLASS_PASSES {
        let next = build(own)?;
        match own.read_as(model, text(&next)) {
            None => return Ok(next),
            Some(read) => own = read,
        }
    }
    Ok(first)
}

/// Builds a section may take by class meters after the first (see [`by_class`]).
pub const CLASS_PASSES: usize = 3;
