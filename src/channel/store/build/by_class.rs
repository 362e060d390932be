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
use crate::core::tokens::{self, Meter, ToTry};

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
    let to_try = (
        w.to_try(&first, true, req.meter),
        w.to_try(&first, false, req.snapshot_meter),
    );
    if (to_try.0.meter, to_try.1.meter) == w.models() {
        return first;
    }
    let first_size = if w.holds(&first) {
        size(&first)
    } else {
        f64::NEG_INFINITY
    };
    let mut kept = tokens::Largest::new(first, first_size);
    let loose = w.passes(to_try, &mut kept);
    w.halve(to_try, loose, &mut kept);
    kept.built
}

/// What was built, by size: the two sections' estimates.
fn size(b: &Built) -> f64 {
    [true, false]
        .into_iter()
        .filter_map(|thread| section(b, thread))
        .map(|t| tokens::Counts::of(t).estimate())
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

    /// What to write the section of `b` (the thread, or the snapshot) by again.
    fn to_try(&self, b: &Built, thread: bool, used: Meter) -> ToTry {
        section(b, thread).map_or(
            ToTry {
                meter: used,
                probe: false,
            },
            |t| Meter::to_try(self.model, &tokens::Counts::of(t)),
        )
    }

    /// Whether both sections of the first writing hold by the meters of the classes they
    /// read as (a class the model counts more of than its meter allows may not).
    fn holds(&self, first: &Built) -> bool {
        let req = self.req;
        [
            (true, req.meter, req.budget_tokens),
            (false, req.snapshot_meter, req.snapshot_budget_tokens),
        ]
        .into_iter()
        .all(|(thread, used, limit)| {
            section(first, thread)
                .is_none_or(|t| used.read_as(self.model, t, Some(limit)).is_none())
        })
    }

    /// The documents written by `meters`, and for each section the meter to write it by
    /// again when it does not hold by the meter of the class it reads as (a section
    /// counted by the model's meter is as the first writing counted it).
    fn written(&self, meters: Meters) -> (Built, Option<Meter>, Option<Meter>) {
        let req = self.req;
        let b = (self.write)(&ContextRequest {
            meter: meters.0,
            snapshot_meter: meters.1,
            ..req.clone()
        });
        let read = |thread: bool, used: Meter, model_meter: Meter, limit: u64| {
            if used == model_meter {
                return None;
            }
            used.read_as(self.model, section(&b, thread)?, Some(limit))
        };
        let t = read(true, meters.0, req.meter, req.budget_tokens);
        let s = read(
            false,
            meters.1,
            req.snapshot_meter,
            req.snapshot_budget_tokens,
        );
        (b, t, s)
    }

    /// Written again by the meters to try, widened while a section reads as a class that
    /// counts it for more, a few times at most; a section that still moves then (or a probe
    /// that did not hold) keeps the model's meter. The meters the kept writing held by (the
    /// model's when none held).
    fn passes(&self, to_try: (ToTry, ToTry), kept: &mut tokens::Largest<Built>) -> Meters {
        let models = self.models();
        let mut meters = (to_try.0.meter, to_try.1.meter);
        for pass in 0..=tokens::CLASS_PASSES {
            let (b, t, s) = self.written(meters);
            if t.is_none() && s.is_none() {
                kept.offer(size(&b), b);
                return meters;
            }
            let last = pass + 1 >= tokens::CLASS_PASSES;
            if let Some(m) = t {
                meters.0 = if last || to_try.0.probe { models.0 } else { m };
            }
            if let Some(m) = s {
                meters.1 = if last || to_try.1.probe { models.1 } else { m };
            }
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
            (t.meter != loose && !t.probe).then_some(tokens::Halving {
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
            let (b, t, s) = self.written(tried);
            if let Some(h) = &mut searches.0 {
                h.settle(tried.0, t.is_none());
            }
            if let Some(h) = &mut searches.1 {
                h.settle(tried.1, s.is_none());
            }
            if t.is_none() && s.is_none() {
                kept.offer(size(&b), b);
            }
        }
    }
}
