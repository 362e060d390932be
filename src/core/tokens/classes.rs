//! Calibration by class of text: what a model's usage taught about one kind of text is
//! trusted for that kind alone.
//!
//! A text's [`Profile`] is what each counted part (ASCII words, punctuation, emoji, other
//! non-ASCII letters, ...) adds to its estimate, as shares of it, with the CJK part split by
//! script (Han, kana, Hangul, and Han written with a simplified radical): JSON, code,
//! English chat, European languages, simplified and traditional Chinese, Japanese, Korean
//! and emoji each have their own. A model keeps its last
//! [`OBSERVATIONS_PER_MODEL`] observations (a profile and what the model counted against the
//! estimate); a section is counted by the [`CLASS_NEIGHBOURS`] observations nearest its own
//! profile, each weighing the more the nearer it lies (nothing past [`CLASS_RADIUS`]), when
//! it lies within [`CLASS_HULL`] of a mixture of theirs: a text's ratio of real to
//! estimated tokens is its parts' ratios mixed by its profile, so the section is counted by
//! their ratios in the mixture nearest it, plus a margin of how much they varied and of how
//! far that mixture lies. A section with too little weight near it, or outside every
//! mixture of it (a part, or a proportion of parts, no observation held), keeps the bound
//! that holds for every script. Observations are not
//! grouped ahead of the section: sections of one kind spread (a thread of a few long code
//! messages lies 0.05 to 0.2 from another), and classes drawn around the first ones split
//! that spread into many classes too small to trust; nor pooled over all within reach: on
//! mixed traffic the further ones are of another kind. What the profile cannot tell apart,
//! two languages of one script whose parts weigh alike (Spanish and Italian, Portuguese and
//! Spanish), shares its neighbours.

use super::{Counts, Meter, RATIO_RANGE, SUM_OFFSET, WEIGHTS};

/// Where [`Counts::to_array`] puts the CJK count.
const CJK: usize = 11;
/// Where a [`Profile`] puts the shares taken out of the CJK one: kana, Hangul, and Han
/// written with a simplified radical.
const KANA: usize = 17;
const HANGUL: usize = 18;
const SIMPLIFIED: usize = 19;
/// The share of a text's Han written with simplified radicals from which its Han counts as
/// simplified Chinese in a [`Profile`] (below it, that share of it): simplified Chinese
/// writes 5-12% of its Han (with CJK punctuation) so, traditional Chinese 0.3%, Japanese
/// 1.5% (TypeScript's messages, 40 at a time). Taken as it is, the share spreads the
/// sections of simplified Chinese apart as their words change; taken whole from here on,
/// they lie together, and as far from traditional as they can.
pub const SIMPLIFIED_FULL: f64 = 0.03;

/// The L1 distance between profiles past which an observation says nothing of a section
/// (shares sum to 1, so 2 is the most two profiles can differ); an observation weighs
/// `1 - distance / CLASS_RADIUS`.
pub const CLASS_RADIUS: f64 = 0.3;
/// Observations a model keeps (the oldest is forgotten): on traffic of several languages or
/// layouts, each section of one, 128 held about two of each section of each of nine
/// languages, too few to count one (`bench/budget-fill.js --several-sources`: 54 of 217
/// sections at 90% or more with 128, 106 with 512, 0 over either way). The more are kept,
/// the nearer an unseen language lies to those of its script observed: calibrated for 48
/// rounds on every kind but Italian, an Italian JSON snapshot reads 99.5% of its budget
/// (92% at most with 128).
pub const OBSERVATIONS_PER_MODEL: usize = 512;
/// The weight of the [`CLASS_NEIGHBOURS`] nearest observations before their ratio is
/// trusted for a section (four observations of its very profile; six of them no further
/// than 0.1 on average).
pub const CLASS_TRUSTED: f64 = 4.0;
/// The L1 distance from the nearest mixture of its neighbours' profiles past which a
/// section is not trusted to them: it holds parts, or proportions of parts, that they
/// did not.
pub const CLASS_HULL: f64 = 0.08;
/// Steps taken towards the nearest mixture of the neighbours' profiles (each step moves
/// it towards one of them; a few more than the neighbours).
pub const HULL_STEPS: usize = 32;
/// Mean deviations of the neighbours' ratios the margin adds above their ratio.
pub const CLASS_DEVIATIONS: f64 = 2.0;
/// The nearest observations a section is counted by (the others, further, say less of it
/// than these do: on mixed traffic they are of another kind of section or language).
pub const CLASS_NEIGHBOURS: usize = 12;
/// The margin, as a share of the ratio, per unit of L1 distance between the section and
/// the nearest mixture of its neighbours: the further from what was seen, the less the
/// evidence is trusted.
pub const CLASS_DISTANCE: f64 = 0.75;
/// The least margin above the neighbours' ratio, as a share of it.
pub const CLASS_FLOOR: f64 = 0.05;
/// The square-root term of a section's bound, times the ratio: the error of a sum of a
/// few parts, which the ratios of large sections do not show.
pub const CLASS_SPREAD: f64 = 0.5;

/// Parts of a [`Profile`]: the counted parts of the estimate, with the CJK share split by
/// script (Han and the rest, kana, Hangul, Han of simplified radicals).
pub const PARTS: usize = 20;

/// The shares of a text's estimate by counted part, in [`Counts`] order, then the shares
/// of its CJK part that are kana, Hangul and simplified Chinese (its Han, as far as it is
/// written with simplified radicals; see [`SIMPLIFIED_FULL`]), taken out of the CJK share:
/// Japanese, Korean, simplified and traditional Chinese count alike in the estimate but
/// not in a model's tokenizer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Profile([f64; PARTS]);

impl Profile {
    /// The profile of `counts`; `None` for a text that estimates to nothing.
    pub fn of(counts: &Counts) -> Option<Profile> {
        let mut shares = [0.0; PARTS];
        for ((s, n), w) in shares.iter_mut().zip(counts.to_array()).zip(WEIGHTS) {
            *s = f64::from(n) * w;
        }
        if counts.cjk > 0 {
            let per = shares[CJK] / f64::from(counts.cjk);
            let [kana, hangul, simplified] =
                [counts.kana, counts.hangul, counts.simplified].map(f64::from);
            let han = (f64::from(counts.cjk) - kana - hangul).max(0.0);
            // How simplified the Han is, full from SIMPLIFIED_FULL of it on.
            let of_simplified = if han > 0.0 {
                (simplified / han / SIMPLIFIED_FULL).min(1.0)
            } else {
                0.0
            };
            shares[CJK] = per * han * (1.0 - of_simplified);
            shares[KANA] = per * kana;
            shares[HANGUL] = per * hangul;
            shares[SIMPLIFIED] = per * han * of_simplified;
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

    /// The shares, in the order the type's docs give.
    pub fn shares(&self) -> &[f64; PARTS] {
        &self.0
    }

    /// The L1 distance between two profiles (0 to 2).
    pub fn distance(&self, other: &Profile) -> f64 {
        self.0.iter().zip(other.0).map(|(a, b)| (a - b).abs()).sum()
    }
}

/// What the observations around a profile say.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Neighbourhood {
    /// The observations' summed weight.
    pub weight: f64,
    /// The ratio of real to estimated tokens of the mixture of them nearest the profile
    /// (their ratios mixed in the same proportions; their weighted mean when they weigh
    /// less than [`CLASS_TRUSTED`]).
    pub ratio: f64,
    /// The weighted mean absolute deviation of their ratios from their weighted mean.
    pub deviation: f64,
    /// The L1 distance from the profile to that mixture (infinite when the observations
    /// weigh less than [`CLASS_TRUSTED`]: the mixture is not sought).
    pub hull: f64,
    /// The distance to the nearest of them.
    pub nearest: f64,
}

impl Neighbourhood {
    /// The meter of a section in this neighbourhood, once its weight is trusted and the
    /// section lies within [`CLASS_HULL`] of a mixture of it.
    pub fn meter(&self) -> Option<Meter> {
        if self.weight < CLASS_TRUSTED || self.hull > CLASS_HULL {
            return None;
        }
        Some(self.meter_at(self.hull))
    }

    /// The meter these observations would give a section lying on their mixture, trusted
    /// or not: not a count of the section, but a meter to build a larger one by, which is
    /// kept only if what it lets in reads as a class that holds it (see
    /// [`super::by_class`]).
    pub fn probe(&self) -> Meter {
        self.meter_at(0.0)
    }

    fn meter_at(&self, hull: f64) -> Meter {
        let r = self.ratio;
        let margin = CLASS_DEVIATIONS * self.deviation + CLASS_DISTANCE * hull * r;
        Meter {
            slope: (r + margin).max(r * (1.0 + CLASS_FLOOR)),
            spread: CLASS_SPREAD * r,
            offset: SUM_OFFSET * r,
        }
    }
}

/// A model's observations on texts: a ring of [`OBSERVATIONS_PER_MODEL`], kept by column
/// (each counted part's shares side by side), so that a section's distances to all of them
/// are summed part by part over contiguous numbers, which the compiler vectorizes.
#[derive(Debug, Clone, Default)]
pub struct Classes {
    /// Per counted part, each observation's share (single precision: distances need no
    /// more than 1e-6).
    shares: [Vec<f32>; PARTS],
    /// Each observation's ratio of real to estimated tokens.
    ratios: Vec<f32>,
    /// Where the next observation goes once the ring is full: the oldest one (0 until
    /// then, when the oldest is the first).
    next: usize,
}

impl Classes {
    /// Takes one observation: a text of profile `p` that the model counted `seen` times
    /// its estimate.
    pub fn observe(&mut self, p: Profile, seen: f64) {
        let seen = seen.clamp(RATIO_RANGE.0, RATIO_RANGE.1);
        if self.ratios.len() < OBSERVATIONS_PER_MODEL {
            for (col, &x) in self.shares.iter_mut().zip(&p.0) {
                col.push(x as f32);
            }
            self.ratios.push(seen as f32);
            return;
        }
        let at = self.next;
        for (col, &x) in self.shares.iter_mut().zip(&p.0) {
            if let Some(slot) = col.get_mut(at) {
                *slot = x as f32;
            }
        }
        if let Some(slot) = self.ratios.get_mut(at) {
            *slot = seen as f32;
        }
        self.next = (at + 1) % OBSERVATIONS_PER_MODEL;
    }

    /// What the [`CLASS_NEIGHBOURS`] observations nearest `p` say, each weighing by its
    /// distance (nothing past [`CLASS_RADIUS`]); `None` when none lies within it. The
    /// distances to all the observations are summed part by part without a branch.
    pub fn around(&self, p: &Profile) -> Option<Neighbourhood> {
        let mut distances = vec![0.0f32; self.ratios.len()];
        for (col, &x) in self.shares.iter().zip(&p.0) {
            let x = x as f32;
            for (d, &y) in distances.iter_mut().zip(col) {
                *d += (y - x).abs();
            }
        }
        // The nearest within reach, kept in order, read from the newest observation back
        // (so the newer comes first among equals): (distance, slot).
        let n = self.ratios.len();
        let radius = CLASS_RADIUS as f32;
        let mut near = [(radius, usize::MAX); CLASS_NEIGHBOURS];
        for age in (0..n).rev() {
            let slot = (self.next + age) % n;
            let Some(&d) = distances.get(slot) else {
                continue;
            };
            if d < near[CLASS_NEIGHBOURS - 1].0 {
                let at = near
                    .iter()
                    .position(|&(e, _)| d < e)
                    .unwrap_or(CLASS_NEIGHBOURS - 1);
                near.copy_within(at..CLASS_NEIGHBOURS - 1, at + 1);
                near[at] = (d, slot);
            }
        }
        let found = near
            .iter()
            .take_while(|&&(_, slot)| slot != usize::MAX)
            .count();
        let first = near.first().filter(|_| found > 0)?;
        // Each neighbour's weight, ratio and profile, side by side on the stack.
        let mut weights = [0.0; CLASS_NEIGHBOURS];
        let mut ratios = [0.0; CLASS_NEIGHBOURS];
        let mut profiles = [[0.0; PARTS]; CLASS_NEIGHBOURS];
        for (((&(d, slot), k), r), q) in near
            .iter()
            .zip(&mut weights)
            .zip(&mut ratios)
            .zip(&mut profiles)
            .take(found)
        {
            *k = f64::from(1.0 - d / radius);
            *r = self.ratios.get(slot).map_or(0.0, |&r| f64::from(r));
            for (x, col) in q.iter_mut().zip(&self.shares) {
                *x = col.get(slot).map_or(0.0, |&y| f64::from(y));
            }
        }
        let (weights, ratios, profiles) = (&weights[..found], &ratios[..found], &profiles[..found]);
        let weight: f64 = weights.iter().sum();
        let mean = weights.iter().zip(ratios).map(|(k, r)| k * r).sum::<f64>() / weight;
        let deviation = weights
            .iter()
            .zip(ratios)
            .map(|(k, r)| k * (r - mean).abs())
            .sum::<f64>()
            / weight;
        // The mixture is sought only where the neighbours weigh enough to be trusted.
        let (ratio, hull) = if weight >= CLASS_TRUSTED {
            let (mix, hull) = hull(profiles, weights, &p.0);
            (
                mix.iter().zip(ratios).map(|(w, r)| w * r).sum::<f64>(),
                hull,
            )
        } else {
            (mean, f64::INFINITY)
        };
        Some(Neighbourhood {
            weight,
            ratio,
            deviation,
            hull,
            nearest: f64::from(first.0),
        })
    }

    /// The meter a text of profile `p` is counted by, when enough observations lie
    /// around it, and their ratio.
    pub fn meter(&self, p: &Profile) -> Option<(Meter, f64)> {
        self.around(p).and_then(|n| n.meter().map(|m| (m, n.ratio)))
    }

    /// Observations kept.
    pub fn len(&self) -> usize {
        self.ratios.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ratios.is_empty()
    }
}

/// How far `p` lies from the profiles it could be a mixture of: the weights of the mixture
/// of `profiles` nearest it (least squares, by [`HULL_STEPS`] steps of Frank and Wolfe's
/// method from their mixture by `weights`, which is kept where it is `p`) and the L1
/// distance from that mixture to `p`. A text's ratio of real to estimated tokens is its
/// parts' ratios mixed by its profile, so a mixture of observed profiles has the same
/// mixture of their ratios; a profile no mixture reaches holds parts, or proportions of
/// them, that the observations did not.
fn hull(
    profiles: &[[f64; PARTS]],
    weights: &[f64],
    p: &[f64; PARTS],
) -> ([f64; CLASS_NEIGHBOURS], f64) {
    fn dot(a: &[f64; PARTS], b: &[f64; PARTS]) -> f64 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }
    let total: f64 = weights.iter().sum();
    let mut mix = [0.0; CLASS_NEIGHBOURS];
    if profiles.is_empty() || profiles.len() != weights.len() || total <= 0.0 {
        return (mix, 2.0);
    }
    for (m, k) in mix.iter_mut().zip(weights) {
        *m = k / total;
    }
    let mut x = [0.0; PARTS];
    for (q, m) in profiles.iter().zip(&mix) {
        for (a, b) in x.iter_mut().zip(q) {
            *a += m * b;
        }
    }
    for _ in 0..HULL_STEPS {
        let mut off = [0.0; PARTS];
        for ((o, a), b) in off.iter_mut().zip(&x).zip(p) {
            *o = a - b;
        }
        // The profile towards which |x - p| falls fastest: the least q . (x - p) ...
        let Some((to, q, _)) = profiles
            .iter()
            .enumerate()
            .map(|(i, q)| (i, q, dot(q, &off)))
            .min_by(|a, b| a.2.total_cmp(&b.2))
        else {
            break;
        };
        // ... and how far to move towards it: the least |x - p| on the way.
        let mut step = [0.0; PARTS];
        for ((s, a), b) in step.iter_mut().zip(q).zip(&x) {
            *s = a - b;
        }
        let length = dot(&step, &step);
        if length < 1e-12 {
            break;
        }
        let t = (-dot(&off, &step) / length).clamp(0.0, 1.0);
        if t <= 1e-9 {
            break;
        }
        for m in &mut mix {
            *m *= 1.0 - t;
        }
        if let Some(m) = mix.get_mut(to) {
            *m += t;
        }
        for (a, s) in x.iter_mut().zip(&step) {
            *a += t * s;
        }
    }
    let l1 = |q: &[f64; PARTS]| q.iter().zip(p).map(|(a, b)| (a - b).abs()).sum::<f64>();
    let distance = l1(&x);
    // The steps close in on the nearest mixture by least squares, slowly near the end: the
    // nearest observations (by L1) may lie nearer still, and then they are the mixture,
    // each by its weight.
    let mut each = [f64::INFINITY; CLASS_NEIGHBOURS];
    for (e, q) in each.iter_mut().zip(profiles) {
        *e = l1(q);
    }
    let least = each.iter().copied().fold(f64::INFINITY, f64::min);
    if least + 1e-9 >= distance {
        return (mix, distance);
    }
    let mut only = [0.0; CLASS_NEIGHBOURS];
    for ((m, e), k) in only.iter_mut().zip(&each).zip(weights) {
        if *e <= least + 1e-9 {
            *m = *k;
        }
    }
    let sum: f64 = only.iter().sum();
    if sum > 0.0 {
        for m in &mut only {
            *m /= sum;
        }
    }
    (only, least)
}
