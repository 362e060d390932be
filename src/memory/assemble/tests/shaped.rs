//! The context shaped for a prompt cache around a caller's messages (`verbatim_share`):
//! verbatim while they fit, then a window from a step line that moves, and folds, in steps.

use super::host::window_step;
use super::*;

/// The window's step at `budget` for [`shaped`]'s share, the current turn weighing `turn`.
fn step_at(budget: u64, turn: f64) -> f64 {
    window_step(Meter::of_model(None), budget, turn, 0.75, 0.0)
}

/// Folds the lane's unsummarized messages through `through`, as a caller of
/// `fold_through` does; the plan's fold.
fn fold(s: &mut MemoryStore, through: &str) -> usize {
    let plan = s
        .plan_through(S, "root:42", through)
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|| panic!("{through} is unsummarized"));
    assert_eq!(plan.trigger, crate::memory::summary::Trigger::Through);
    s.apply_compaction(&plan, None, T0, None)
        .unwrap_or_else(|e| panic!("{e}"));
    plan.fold.len()
}

/// A lane of `n` messages stored as `long_lane` stores them, with the first `folded`
/// summarized (the summary's range ends at `m{folded - 1}`).
fn summarized_lane(n: usize, folded: usize) -> MemoryStore {
    let mut s = long_lane(
        n,
        Some((3, "We decided the zebrafish tank moved to room 4.")),
    );
    if folded > 0 {
        assert_eq!(fold(&mut s, &format!("m{}", folded - 1)), folded);
    }
    s
}

fn shaped<'a>(host: &'a [HostMessage<'a>], query: &'a str, budget: u64) -> AssembleRequest<'a> {
    AssembleRequest {
        host: Some(host),
        verbatim_share: Some(0.75),
        speakers: &[],
        query_vector: None,
        nearest_weight: 1.0,
        passages_min_weight: 3.0,
        ..ask(query, budget)
    }
}

#[test]
fn a_transcript_that_fits_the_share_goes_verbatim_without_the_summary_of_what_it_shows() {
    let s = summarized_lane(40, 30);
    let ids: Vec<String> = (0..40).map(|i| format!("m{i}")).collect();
    let host = host_of(40, &ids);
    let a = assemble(&s, &shaped(&host, "where is the zebrafish tank?", 180_000))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(a.verbatim);
    assert_eq!(
        a.keep_from, 0,
        "every message is kept, the summarized ones too"
    );
    assert!(!a.text.contains("<thread_summary>"), "{}", a.text);
    // The lane is whole in view: nothing is retrieved, not even the exact match.
    assert_eq!(a.passages_included, 0, "{}", a.turn);
    assert_eq!(a.fold_through, None);
    // Without the share, the same call starts after the summary and retrieves.
    let plain = assemble(
        &s,
        &AssembleRequest {
            verbatim_share: None,
            speakers: &[],
            query_vector: None,
            nearest_weight: 1.0,
            ..shaped(&host, "where is the zebrafish tank?", 180_000)
        },
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        !plain.verbatim && plain.keep_from >= 30,
        "{} {}",
        plain.verbatim,
        plain.keep_from
    );
    assert!(plain.text.contains("<thread_summary>"));
    // A summary of messages the host no longer sends stays: it says what is not in view,
    // and the transcript is not the whole lane (what a host sends back after an assembly
    // past the share kept the messages after the summary): past the share, as that was.
    let after: Vec<HostMessage<'_>> = host[30..].to_vec();
    let a = assemble(&s, &shaped(&after, "where is the zebrafish tank?", 180_000))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        !a.verbatim && a.text.contains("<thread_summary>"),
        "{}",
        a.text
    );
    assert_eq!(a.keep_from, 0);
}

#[test]
fn a_transcript_that_lacks_unsummarized_messages_of_the_lane_is_past_the_share() {
    // What a host sends back after an assembly kept only the newest: m30 and m31 are
    // neither in the summary nor in view, so the transcript is not the lane, however
    // short: the context stays within the share, the summary shows and the left-out
    // messages can be retrieved.
    let s = summarized_lane(40, 30);
    let ids: Vec<String> = (0..40).map(|i| format!("m{i}")).collect();
    let host = host_of(40, &ids);
    let newest: Vec<HostMessage<'_>> = host[32..].to_vec();
    let a = assemble(
        &s,
        &shaped(&newest, "where is the zebrafish tank?", 180_000),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(!a.verbatim);
    assert!(a.text.contains("<thread_summary>"), "{}", a.text);
    assert_eq!(a.keep_from, 0, "all it sends still fits: {}", a.keep_from);
    // The whole lane goes verbatim.
    let b = assemble(&s, &shaped(&host, "where is the zebrafish tank?", 180_000))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(b.verbatim);
    // Without a summary too: the newest messages of a lane whose older ones are not sent.
    let unsummarized = summarized_lane(40, 0);
    let c = assemble(
        &unsummarized,
        &shaped(&newest, "where is the zebrafish tank?", 180_000),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(!c.verbatim);
    let d = assemble(
        &unsummarized,
        &shaped(&host, "where is the zebrafish tank?", 180_000),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(d.verbatim);
}

#[test]
fn past_the_share_the_context_stays_within_the_share_of_the_budget() {
    let s = summarized_lane(300, 10);
    let ids: Vec<String> = (0..300).map(|i| format!("m{i}")).collect();
    let host = host_of(300, &ids);
    for budget in [1_500, 4_000, 9_000] {
        let a = assemble(&s, &shaped(&host, "where is the zebrafish tank?", budget))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(!a.verbatim);
        #[allow(clippy::cast_precision_loss)] // small budgets
        let share = 0.75 * budget as f64;
        #[allow(clippy::cast_precision_loss)]
        let total = a.tokens.total as f64;
        assert!(total <= share, "{budget}: {total}");
        // The window holds at least a step of the messages before the current turn; the
        // rest is what the question needs (the match and its neighbours), not a fill.
        let kept: f64 = host[a.keep_from..298].iter().map(|m| m.est).sum();
        assert!(kept > step_at(budget, 20.0) - 40.0, "{budget}: {kept}");
        assert!(a.turn.contains("zebrafish"), "{budget}: {}", a.turn);
        assert!(a.passages_included <= 1 + 2 * 2, "{budget}: {}", a.turn);
    }
}

#[test]
fn past_the_share_the_window_opens_at_its_step_line_whatever_the_lanes_folds_were() {
    let ids: Vec<String> = (0..300).map(|i| format!("m{i}")).collect();
    let host = host_of(300, &ids);
    let step = step_at(4_000, 20.0);
    // Nothing folded, folded early, folded late, folded into the window itself: the same
    // messages at the same budget keep the same window.
    let from_of = |folded: usize| {
        let s = summarized_lane(300, folded);
        let a = assemble(&s, &shaped(&host, "and the build queue?", 4_000))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(!a.verbatim);
        assert!(a.tokens.total <= 4_000);
        a.keep_from
    };
    let from = from_of(10);
    for folded in [0, 150, 290] {
        assert_eq!(
            from_of(folded),
            from,
            "folded through m{}",
            folded.max(1) - 1
        );
    }
    // One to two steps of the messages before the current turn (less the turn the line
    // cuts), from a user turn's start.
    let kept: f64 = host[from..298].iter().map(|m| m.est).sum();
    assert!(
        kept > step - 40.0 && kept <= 2.0 * step,
        "{kept} of a {step} step"
    );
    assert!(host[from].user);
    // A fold is named through the message before the line; the rare word it takes into
    // the summary comes back retrieved.
    let mut s = summarized_lane(300, 10);
    let a = assemble(&s, &shaped(&host, "where is the zebrafish tank?", 4_000))
        .unwrap_or_else(|e| panic!("{e}"));
    let through = a
        .fold_through
        .clone()
        .unwrap_or_else(|| panic!("a fold is due"));
    assert_eq!(through, format!("m{}", from - 1));
    assert!(a.turn.contains("zebrafish"), "{}", a.turn);
    // After the fold, the same window and nothing more to fold.
    fold(&mut s, &through);
    let b = assemble(&s, &shaped(&host, "and the build queue?", 4_000))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((b.keep_from, b.fold_through), (from, None));
    // The window grows append-only: two more messages keep its start and the summary.
    let more: Vec<String> = (0..302).map(|i| format!("m{i}")).collect();
    let longer = host_of(302, &more);
    let c = assemble(&s, &shaped(&longer, "and the build queue?", 4_000))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((c.keep_from, &c.system), (from, &b.system));
}

#[test]
fn the_relevance_bar_keeps_out_a_lone_common_word_and_lets_a_rare_one_in() {
    let s = long_lane(300, Some((3, "the zebrafish tank moved to room 4")));
    let request = |q: &'static str, weight: f64| AssembleRequest {
        passages_min_weight: weight,
        recent: Some(4),
        ..ask(q, 4_000)
    };
    // "queue" is in every message: any match is a match without the bar, none with it.
    let loose = assemble(&s, &request("queue?", 0.0)).unwrap_or_else(|e| panic!("{e}"));
    assert!(loose.passages_included > 0);
    let barred = assemble(&s, &request("queue?", 3.0)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(barred.passages_included, 0, "{}", barred.turn);
    let rare = assemble(&s, &request("zebrafish?", 3.0)).unwrap_or_else(|e| panic!("{e}"));
    assert!(rare.turn.contains("zebrafish tank moved"), "{}", rare.turn);
}

#[test]
fn a_fold_point_that_is_not_an_unsummarized_message_plans_nothing() {
    let s = summarized_lane(40, 10);
    for id in ["m5", "nope", "m9"] {
        assert!(s
            .plan_through(S, "root:42", id)
            .unwrap_or_else(|e| panic!("{e}"))
            .is_none());
    }
    let plan = s
        .plan_through(S, "root:42", "m20")
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|| panic!("m20 is unsummarized"));
    assert_eq!((plan.fold.len(), plan.kept.len()), (11, 19));
}

#[test]
fn a_fold_waits_until_it_takes_enough_turns_and_the_window_slides_meanwhile() {
    // Long turns (400 tokens each) at a budget that holds a few of them: past the fold
    // mark after each turn, but a fold would take fewer than FOLD_MIN_TURNS turns into
    // the summary, so none is named and the window keeps the newest turns that fit.
    let s = summarized_lane(300, 0);
    let ids: Vec<String> = (0..300).map(|i| format!("m{i}")).collect();
    let long = |n: usize| host_weighing(n, &ids, 400.0);
    let few = long(2 * (FOLD_MIN_TURNS - 2));
    let a = assemble(&s, &shaped(&few, "and the build queue?", 4_000))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(!a.verbatim && a.keep_from > 0, "{}", a.keep_from);
    assert_eq!(
        a.fold_through, None,
        "a fold of fewer turns than the minimum"
    );
    assert!(a.tokens.total <= 3_000, "{:?}", a.tokens);
    // Enough turns outside the window: the fold is named, and takes at least the minimum.
    let many = long(2 * (FOLD_MIN_TURNS + 6));
    let b = assemble(&s, &shaped(&many, "and the build queue?", 4_000))
        .unwrap_or_else(|e| panic!("{e}"));
    let through = b
        .fold_through
        .clone()
        .unwrap_or_else(|| panic!("a fold is due"));
    let turns = s
        .unsummarized_turns_through(S, "root:42", &through)
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or(0);
    assert!(turns >= FOLD_MIN_TURNS, "{turns}");
}

#[test]
fn a_host_that_adds_the_prompt_to_the_budget_keeps_the_same_window_whatever_its_size() {
    let s = summarized_lane(300, 10);
    let ids: Vec<String> = (0..300).map(|i| format!("m{i}")).collect();
    // The same 298 messages before the current turn; a prompt of 30 or 600 tokens, the
    // budget raised by it (as the OpenClaw engine raises the host's).
    let from_with = |prompt: f64| {
        let mut host = host_of(299, &ids);
        host[298].est = prompt;
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let budget = 4_000 + prompt.ceil() as u64;
        let a = assemble(&s, &shaped(&host, "and the build queue?", budget))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(!a.verbatim);
        a.keep_from
    };
    let short = from_with(30.0);
    assert!(short > 10 && short < 298, "{short}");
    for prompt in [31.0, 90.0, 250.0, 600.0] {
        assert_eq!(from_with(prompt), short, "a prompt of {prompt}");
    }
}

#[test]
fn shaped_for_a_cache_the_retrieved_part_holds_what_weighs_near_the_best_match() {
    // One message holds the question's rare words; every 15th holds a common one of them.
    let texts: Vec<String> = (0..300)
        .map(|i| match i {
            3 => "the zebrafish tank moved to room 4 next to the aquarium pumps".to_string(),
            _ if i % 15 == 7 => format!("message {i}: checking the pumps again"),
            _ => format!("message {i}: the build queue is long today, step {i}"),
        })
        .collect();
    let s = lane_of(&texts);
    let ids: Vec<String> = (0..300).map(|i| format!("m{i}")).collect();
    let host = host_of(300, &ids);
    let window = &host[250..];
    let query = "where did the zebrafish tank with the pumps move?";
    let loose = AssembleRequest {
        passages_min_weight: 0.0,
        ..shaped(window, query, 8_000)
    };
    let a = assemble(&s, &loose).unwrap_or_else(|e| panic!("{e}"));
    assert!(!a.verbatim);
    assert!(a.turn.contains("zebrafish tank moved"), "{}", a.turn);
    // The lone-word matches weigh far less than the best one: not offered, however much
    // room is left.
    assert!(!a.turn.contains("checking the pumps"), "{}", a.turn);
    assert!(a.passages_included <= 1 + 2 * NEIGHBOURS, "{}", a.turn);
    // Not shaped (no share), the same question fills the room with them.
    let filled = AssembleRequest {
        verbatim_share: None,
        ..loose
    };
    let b = assemble(&s, &filled).unwrap_or_else(|e| panic!("{e}"));
    assert!(b.turn.contains("checking the pumps"), "{}", b.turn);
}
