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
//! times, and the largest build that holds is kept. Whatever is kept holds by the meter
//! of the class it reads as: the search only decides how much of the room between the
//! two meters a section may take.

use super::{Counts, Meter};

/// Builds a section may take by widened class meters after the first.
pub const CLASS_PASSES: usize = 3;
/// Builds a section may take after those, each by the meter halfway between the tightest
/// it went over by and the loosest it held by (three halvings leave an eighth of the room
/// between them untried).
pub const CLASS_HALVINGS: usize = 3;

impl Meter {
    /// When the meter of the observations around `text` (built within a budget by this
    /// meter) counts it for more than `limit` (the section's budget; `None`: what this
    /// meter counts for it), the two meters widened into one (each term the larger), to
    /// build it again by; `None` when the text holds. Widened, the meters a section is
    /// built by only grow from pass to pass, so the section only shrinks and settles where
    /// the observations around it hold it.
    pub fn read_as(&self, model: Option<&str>, text: &str, limit: Option<u64>) -> Option<Meter> {
        let counts = Counts::of(text);
        let e = counts.estimate();
        let read = Meter::of_text(model, &counts);
        (read.bound(e) > limit.unwrap_or_else(|| self.bound(e))).then(|| Meter {
            slope: self.slope.max(read.slope),
            spread: self.spread.max(read.spread),
            offset: self.offset.max(read.offset),
        })
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
/// the class of the text built, builds it again with that class's own meter and keeps
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
    let tight = Meter::of_text(model, &Counts::of(text(&first)));
    if tight == meter {
        return Ok(first);
    }
    // What a class's meter lets in may read as a neighbouring class: built again by that
    // one's meter, a few times at most.
    let mut own = tight;
    let mut held = None;
    for _ in 0..CLASS_PASSES {
        let next = build(own)?;
        match own.read_as(model, text(&next), None) {
            None => {
                held = Some(next);
                break;
            }
            Some(read) => own = read,
        }
    }
    let (mut best, loose) = match held {
        Some(built) => (built, own),
        None => (first, meter),
    };
    if loose == tight {
        return Ok(best);
    }
    // The room between the class's own meter, which let in too much, and the one the
    // section held by: halved, keeping the largest build that holds.
    let mut search = Halving { tight, loose };
    let mut size = Counts::of(text(&best)).estimate();
    for _ in 0..CLASS_HALVINGS {
        let tried = search.next();
        let next = build(tried)?;
        let holds = tried.read_as(model, text(&next), None).is_none();
        let e = Counts::of(text(&next)).estimate();
        if holds && e > size {
            best = next;
            size = e;
        }
        search.settle(tried, holds);
    }
    Ok(best)
}
