//! Building a section again by the meter of what was built: a calibration knows a class of
//! text once the section is built, and what a class's meter lets in may read as another.
//!
//! A section is first built by its model's meter (the bound that holds for every script,
//! raised for a model that counts more). Where the calibration knows the class of what was
//! built, it is built again by that class's meter; what that lets in is kept when it is
//! within budget by the meter of the class it then reads as. A section that reads as a
//! class counting it for more is built again by the two meters widened into one, a few
//! times ([`CLASS_PASSES`]); then the meters between the class's own (which went over) and
//! the one it held by (the widened one, or the model's) are halved [`CLASS_HALVINGS`]
//! times, and the largest build that holds is kept. A section the calibration does not
//! count, with observations within [`CLASS_PROBE`] of it, is built once by the meter they
//! would give (a probe: a larger section may lie nearer them), kept if it holds. Whatever
//! is kept holds by the meter of the class it reads as, or is the first build: the search
//! only decides how much of the room between the meters a section may take.

use super::{with_calibration, Calibration, Counts, Meter, CLASS_HULL, DEFAULT_MODEL};

/// The L1 distance from the section built by the model's meter to the nearest observation
/// within which their meter is tried though they do not count it (twice [`CLASS_HULL`]:
/// further, what a larger section lets in seldom reads as theirs, and the build is lost).
pub const CLASS_PROBE: f64 = 2.0 * CLASS_HULL;
/// Builds a section may take by widened class meters after the first.
pub const CLASS_PASSES: usize = 3;
/// Builds a section may take after those, each by the meter halfway between the tightest
/// it went over by and the loosest it held by (three halvings leave an eighth of the room
/// between them untried).
pub const CLASS_HALVINGS: usize = 3;

impl Meter {
    /// When the meter of the observations around a text of `counts` (built within a budget
    /// by this meter) counts it for more than `limit` (the section's budget; `None`: what
    /// this meter counts for it), the two meters widened into one (each term the larger),
    /// to build it again by; `None` when the text holds. Widened, the meters a section is
    /// built by only grow from pass to pass, so the section only shrinks and settles where
    /// the observations around it hold it.
    pub fn read_as(
        &self,
        model: Option<&str>,
        counts: &Counts,
        limit: Option<u64>,
    ) -> Option<Meter> {
        let e = counts.estimate();
        let read = Meter::of_text(model, counts);
        (read.bound(e) > limit.unwrap_or_else(|| self.bound(e))).then(|| Meter {
            slope: self.slope.max(read.slope),
            spread: self.spread.max(read.spread),
            offset: self.offset.max(read.offset),
        })
    }

    /// The meter to build a section of `model` by again, once built with the model's meter
    /// into a text of `counts` (see [`Calibration::meter_to_try`]).
    pub fn to_try(model: Option<&str>, counts: &Counts) -> ToTry {
        with_calibration(|c| c.meter_to_try(model.unwrap_or(DEFAULT_MODEL), counts))
    }

    /// The meter halfway between this one and `other`, term by term.
    pub fn halfway(&self, other: &Meter) -> Meter {
        Meter {
            slope: (self.slope + other.slope) / 2.0,
            spread: (self.spread + other.spread) / 2.0,
            offset: (self.offset + other.offset) / 2.0,
        }
    }
}

impl Calibration {
    /// The meter to build a section of `model` by again, once built with the model's meter
    /// into a text of `counts`: its class's own ([`Calibration::meter_of`]) when that
    /// differs; else, when observations lie within [`CLASS_PROBE`] of the text though too
    /// few or too far to count it, the meter they would give on their mixture, when tighter
    /// than the model's (a larger section may lie nearer them: a snapshot of more
    /// messages, whose fixed header weighs less in it); else the model's meter (nothing to
    /// try).
    pub fn meter_to_try(&self, model: &str, counts: &Counts) -> ToTry {
        let around = self.around(model, counts);
        let read = self.meter_around(model, around.as_ref());
        let meter = Meter::of_ratio(&self.ratio(model));
        let meter = if read != meter {
            read
        } else {
            around
                .filter(|n| n.nearest <= CLASS_PROBE)
                .map(|n| n.probe())
                .filter(|probe| probe.slope < meter.slope)
                .unwrap_or(meter)
        };
        ToTry { meter, read }
    }
}

/// The meter to build a section by again (`meter`), and the meter the text built so far
/// reads as (`read`, [`Meter::of_text`]'s). They differ for a probe: the meter of
/// observations that do not count the text, tried once in case what it lets in reads as
/// theirs (a probe that does not hold is not widened nor halved: the section keeps what
/// it had).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ToTry {
    pub meter: Meter,
    pub read: Meter,
}

impl ToTry {
    /// Nothing to try: a section not written, by `used`.
    pub fn none(used: Meter) -> ToTry {
        ToTry {
            meter: used,
            read: used,
        }
    }

    /// Whether `meter` is a probe.
    pub fn probe(&self) -> bool {
        self.meter != self.read
    }
}

/// The search for the tightest meter a section holds by: between `tight`, a meter it went
/// over by, and `loose`, one it held by. Each step tries [`Halving::next`] and narrows the
/// room by what the section built by it did ([`Halving::settle`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Halving {
    pub tight: Meter,
    pub loose: Meter,
}

impl Halving {
    /// The meter to try next: halfway between the two.
    pub fn next(&self) -> Meter {
        self.tight.halfway(&self.loose)
    }

    /// What the build by `tried` did: it holds, and `tried` is the loosest meter known to
    /// hold; it went over, and it is the tightest known not to.
    pub fn settle(&mut self, tried: Meter, held: bool) {
        if held {
            self.loose = tried;
        } else {
            self.tight = tried;
        }
    }
}

/// Builds a section of `model` with the calibration's meter; where the calibration knows
/// the class of the text built (or observations lie near enough to probe, see
/// [`Calibration::meter_to_try`]), builds it again with that class's own meter and keeps
/// that one when it is within budget by the meter of the class it reads as (else builds
/// it by that one, [`CLASS_PASSES`] times at most, then by the meters halfway between
/// that class's and the one it last held by, [`CLASS_HALVINGS`] times, keeping the largest
/// build that held; the first when none did). `build` keeps what it builds within its
/// budget by the meter it is given; `text` is what it built.
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
    let counted = |t: &T| Counts::of(text(t));
    let counts = counted(&first);
    let to_try = Meter::to_try(model, &counts);
    let (tight, probe) = (to_try.meter, to_try.probe());
    if tight == meter {
        return Ok(first);
    }
    // The first build counts against the others when it holds by the meter it reads as.
    let e = counts.estimate();
    let first_size = if to_try.read.bound(e) <= meter.bound(e) {
        e
    } else {
        f64::NEG_INFINITY
    };
    let mut kept = Largest::new(first, first_size);
    // What a class's meter lets in may read as a neighbouring class: built again by that
    // one's meter, a few times at most.
    let mut own = tight;
    let mut loose = meter;
    for _ in 0..CLASS_PASSES {
        let next = build(own)?;
        let counts = counted(&next);
        match own.read_as(model, &counts, None) {
            None => {
                kept.offer(counts.estimate(), next);
                loose = own;
                break;
            }
            Some(_) if probe => break,
            Some(read) => own = read,
        }
    }
    // The room between the meter that let in too much and the one the section held by:
    // halved, keeping the largest build that holds.
    if loose != tight && !probe {
        let mut search = Halving { tight, loose };
        for _ in 0..CLASS_HALVINGS {
            let tried = search.next();
            let next = build(tried)?;
            let counts = counted(&next);
            let held = tried.read_as(model, &counts, None).is_none();
            if held {
                kept.offer(counts.estimate(), next);
            }
            search.settle(tried, held);
        }
    }
    Ok(kept.built)
}

/// The largest of the builds of a section that held, by their estimate, starting from the
/// first build (kept when none holds; counted against the others only when it held).
#[derive(Debug)]
pub struct Largest<T> {
    pub built: T,
    size: f64,
}

impl<T> Largest<T> {
    /// From the first build and its estimate (`f64::NEG_INFINITY` when it did not hold by
    /// the meter of the class it reads as: any build that holds replaces it).
    pub fn new(first: T, size: f64) -> Largest<T> {
        Largest { built: first, size }
    }

    /// Keeps `built`, of estimate `size`, when it is larger than the one kept.
    pub fn offer(&mut self, size: f64, built: T) {
        if size > self.size {
            self.built = built;
            self.size = size;
        }
    }
}
