use super::*;

const DAY: i64 = 86_400;

fn cand(slot: u32, secs: i64, bm25: f64) -> Candidate {
    Candidate {
        slot,
        key: (secs, 0),
        bm25,
        words: 1,
        by_named_author: false,
    }
}

#[test]
fn recency_halves_every_week() {
    let now = (100 * DAY, 0);
    assert_eq!(recency(now, now), 1.0);
    assert!((recency((93 * DAY, 0), now) - 0.5).abs() < 1e-12);
    assert!((recency((86 * DAY, 0), now) - 0.25).abs() < 1e-12);
}

#[test]
fn activity_saturates_and_weighs_recent_threads() {
    let r = (10 * DAY, 0);
    let quiet = Signals::default();
    assert_eq!(activity(&quiet, r), 0.0);
    let busy = Signals {
        replies: 50,
        last_activity_ms: key_millis(r),
        reactions: 20,
        is_reply: false,
    };
    assert!((activity(&busy, r) - 1.0).abs() < 1e-12);
    let huge = Signals {
        replies: 5_000,
        reactions: 900,
        ..busy
    };
    assert!((activity(&huge, r) - 1.0).abs() < 1e-12);
    let old = Signals {
        last_activity_ms: key_millis(r) - 2 * RECENT_ACTIVITY_MS,
        ..busy
    };
    assert!((activity(&old, r) - 0.8).abs() < 1e-12);
    let reply = Signals {
        is_reply: true,
        reactions: 0,
        ..old
    };
    assert!((activity(&reply, r) - 0.3).abs() < 1e-12);
}

#[test]
fn ranking_is_exact_despite_pruning() {
    let reference = (100 * DAY, 0);
    let cands: Vec<Candidate> = (0..500)
        .map(|i| cand(i, 50 * DAY + i64::from(i) * 600, 1.0 + f64::from(i % 7)))
        .collect();
    let sig = |c: &Candidate| {
        Some(Signals {
            replies: u64::from(c.slot % 13),
            last_activity_ms: key_millis(c.key),
            reactions: u64::from(c.slot % 3),
            is_reply: false,
        })
    };
    let mut looked = 0;
    let top = rank(cands.clone(), reference, 8, |c| {
        looked += 1;
        sig(c)
    });
    assert!(looked < 500, "pruning looked at {looked}");
    assert_eq!(top, brute_force(&cands, reference, 8, sig));
}

/// Every candidate scored and sorted: what `rank` must equal.
fn brute_force(
    cands: &[Candidate],
    reference: TsKey,
    k: usize,
    sig: impl Fn(&Candidate) -> Option<Signals>,
) -> Vec<Ranked> {
    let mut all: Vec<Ranked> = cands
        .iter()
        .filter_map(|c| {
            let s = sig(c)?;
            let (score, recent_activity) = score(c, &s, reference);
            Some(Ranked {
                candidate: *c,
                score,
                signals: s,
                recent_activity,
            })
        })
        .collect();
    all.sort_by(better);
    all.truncate(k);
    all
}

proptest::proptest! {
    #[test]
    fn rank_equals_scoring_everything(
        raw in proptest::collection::vec(
            (0i64..60, 0u32..6, proptest::bool::ANY, 0u64..80, 0u64..30, 0u8..12),
            0..300,
        ),
        k in 1usize..20,
    ) {
        let reference = (60 * DAY, 0);
        let cands: Vec<Candidate> = raw
            .iter()
            .enumerate()
            .map(|(i, &(day, b, named, ..))| Candidate {
                slot: i as u32,
                // Distinct keys: ties broken by key are then total.
                key: (day * DAY, i as u32),
                bm25: f64::from(b) * 0.75,
                words: 1,
                by_named_author: named,
            })
            .collect();
        // Some candidates have no signals (no longer held); the rest vary.
        let sig = |c: &Candidate| {
            let (_, _, _, replies, reactions, gone) = raw[c.slot as usize];
            (gone != 0).then_some(Signals {
                replies,
                last_activity_ms: key_millis(c.key),
                reactions,
                is_reply: replies % 3 == 0,
            })
        };
        let top = rank(cands.clone(), reference, k, sig);
        proptest::prop_assert_eq!(top, brute_force(&cands, reference, k, sig));
    }
}

#[test]
fn ties_go_to_the_newer_message() {
    let reference = (10 * DAY, 0);
    let cands = vec![cand(0, 5 * DAY, 2.0), cand(1, 5 * DAY + 1, 2.0)];
    let top = rank(cands, reference, 2, |_| Some(Signals::default()));
    assert_eq!(top[0].candidate.slot, 1);
}

#[test]
fn named_authors_and_activity_lift_a_result() {
    let reference = (10 * DAY, 0);
    let mut by_sam = cand(0, 9 * DAY, 1.0);
    by_sam.by_named_author = true;
    let other = cand(1, 9 * DAY, 1.2);
    let top = rank(vec![by_sam, other], reference, 2, |_| {
        Some(Signals::default())
    });
    assert_eq!(top[0].candidate.slot, 0);
    let busy = cand(2, 9 * DAY, 1.0);
    let top = rank(vec![busy, cand(3, 9 * DAY, 1.1)], reference, 2, |c| {
        Some(Signals {
            replies: if c.slot == 2 { 40 } else { 0 },
            ..Signals::default()
        })
    });
    assert_eq!(top[0].candidate.slot, 2);
}

#[test]
fn candidates_without_signals_are_skipped() {
    let top = rank(vec![cand(0, 1, 1.0), cand(1, 2, 1.0)], (3, 0), 5, |c| {
        (c.slot == 0).then(Signals::default)
    });
    assert_eq!(top.len(), 1);
    assert!(rank(vec![cand(0, 1, 1.0)], (3, 0), 0, |_| None).is_empty());
}
