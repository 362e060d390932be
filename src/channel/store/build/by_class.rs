//! The documents written again by the meters of the classes of text they hold.
//!
//! The thread and the snapshot are written first with the model's meters. Where its
//! calibration knows the class of a section written (or observations lie near enough to
//! try their meter, `tokens::ToTry`), the documents are written again with those meters,
//! and a writing is kept when each section is within its budget by the meter of the class
//! it then reads as. A section that reads as a class counting it for more is written again
//! by the two meters widened into one, a few times; then by the meters halfway between its
//! class's and the one it held by (`tokens::Halving`). The largest writing in which both
//! sections hold is kept; the first when none does.

use super::super::request::ContextRequest;
use super::{section, Built};
use crate::core::tokens::{self, Counts, Meter, ToTry};

/// A meter per section: the thread's, then the snapshot's.
type Meters = (Meter, Meter);

pub(super) fn by_class(req: &ContextRequest, write: impl Fn(&ContextRequest) -> Built) -> Built {
    let first = write(req);
    let w = Writer {
        req,
        model: req.model.as_deref(),
        write,
    };
    if !Meter::classes_of(w.model) {
        return first;
    }
    let counts = counts(&first);
    let to_try = (
        w.to_try(counts.0.as_ref(), req.meter),
        w.to_try(counts.1.as_ref(), req.snapshot_meter),
    );
    if (to_try.0.meter, to_try.1.meter) == w.models() {
        return first;
    }
    let first_size = if w.holds(counts, to_try) {
        size(counts)
    } else {
        f64::NEG_INFINITY
    };
    let mut kept = tokens::Largest::new(first, first_size);
    let loose = w.passes(to_try, &mut kept);
    w.halve(to_try, loose, &mut kept);
    kept.built
}

/// What each section of `b` counts (the thread's, then the snapshot's; `None`: not written).
fn counts(b: &Built) -> (Option<Counts>, Option<Counts>) {
    let of = |thread| section(b, thread).map(Counts::of);
    (of(true), of(false))
}

/// What was written, by size: the two sections' estimates.
fn size(counts: (Option<Counts>, Option<Counts>)) -> f64 {
    [counts.0, counts.1]
        .iter()
        .flatten()
        .map(|c| c.estimate())
        .sum()
}

struct Writer<'a, W> {
    req: &'a ContextRequest,
    model: Option<&'a str>,
    write: W,
}

impl<W: Fn(&ContextRequest) -> Built> Writer<'_, W> {
    /// The model's meters.
    fn models(&self) -> Meters {
        (self.req.meter, self.req.snapshot_meter)
    }

    /// What to write a section of `counts` (`None`: not written), written by `used`, by
    /// again.
    fn to_try(&self, counts: Option<&Counts>, used: Meter) -> ToTry {
        counts.map_or(ToTry::none(used), |c| Meter::to_try(self.model, c))
    }

    /// Whether both sections of the first writing, of `counts`, hold by the meters of the
    /// classes they read as (a class the model counts more of than its meter allows may
    /// not).
    fn holds(&self, counts: (Option<Counts>, Option<Counts>), to_try: (ToTry, ToTry)) -> bool {
        let limits = (self.req.budget_tokens, self.req.snapshot_budget_tokens);
        [
            (counts.0, to_try.0, limits.0),
            (counts.1, to_try.1, limits.1),
        ]
        .into_iter()
        .all(|(counts, t, limit)| counts.is_none_or(|c| t.read.bound(c.estimate()) <= limit))
    }

    /// The documents written by `meters`, for each section the meter to write it by again
    /// when it does not hold by the meter of the class it reads as (a section counted by
    /// the model's meter is as the first writing counted it), and their size.
    fn written(&self, meters: Meters) -> (Built, Option<Meter>, Option<Meter>, f64) {
        let req = self.req;
        let b = (self.write)(&ContextRequest {
            meter: meters.0,
            snapshot_meter: meters.1,
            ..req.clone()
        });
        let counts = counts(&b);
        let read = |counts: Option<&Counts>, used: Meter, model_meter: Meter, limit: u64| {
            if used == model_meter {
                return None;
            }
            used.read_as(self.model, counts?, Some(limit))
        };
        let t = read(counts.0.as_ref(), meters.0, req.meter, req.budget_tokens);
        let s = read(
            counts.1.as_ref(),
            meters.1,
            req.snapshot_meter,
            req.snapshot_budget_tokens,
        );
        (b, t, s, size(counts))
    }

    /// Written again by the meters to try, widened while a section reads as a class that
    /// counts it for more, a few times at most; a section that still moves then (or a probe
    /// that did not hold) keeps the model's meter. The meters the kept writing held by (the
    /// model's when none held).
    fn passes(&self, to_try: (ToTry, ToTry), kept: &mut tokens::Largest<Built>) -> Meters {
        let models = self.models();
        let mut meters = (to_try.0.meter, to_try.1.meter);
        for pass in 0..=tokens::CLASS_PASSES {
            let (b, t, s, size) = self.written(meters);
            if t.is_none() && s.is_none() {
                kept.offer(size, b);
                return meters;
            }
            let last = pass + 1 >= tokens::CLASS_PASSES;
            // A section that held stays; one that did not is widened, or takes the
            // model's meter on the last pass and after a probe.
            let again = |over: Option<Meter>, used: Meter, t: ToTry, model: Meter| match over {
                None => used,
                Some(_) if last || t.probe() => model,
                Some(widened) => widened,
            };
            meters = (
                again(t, meters.0, to_try.0, models.0),
                again(s, meters.1, to_try.1, models.1),
            );
            if meters == models {
                break;
            }
        }
        models
    }

    /// Each section that did not hold by the meter it was written by again (a probe
    /// apart): the room between that meter and the one it held by (`loose`), halved; a
    /// writing in which both hold is offered to `kept`.
    fn halve(&self, to_try: (ToTry, ToTry), loose: Meters, kept: &mut tokens::Largest<Built>) {
        let search = |t: ToTry, loose: Meter| {
            (t.meter != loose && !t.probe()).then_some(tokens::Halving {
                tight: t.meter,
                loose,
            })
        };
        let mut searches = (search(to_try.0, loose.0), search(to_try.1, loose.1));
        if searches == (None, None) {
            return;
        }
        for _ in 0..tokens::CLASS_HALVINGS {
            let tried = (
                searches.0.map_or(loose.0, |h| h.next()),
                searches.1.map_or(loose.1, |h| h.next()),
            );
            let (b, t, s, size) = self.written(tried);
            if let Some(h) = &mut searches.0 {
                h.settle(tried.0, t.is_none());
            }
            if let Some(h) = &mut searches.1 {
                h.settle(tried.1, s.is_none());
            }
            if t.is_none() && s.is_none() {
                kept.offer(size, b);
            }
        }
    }
}
