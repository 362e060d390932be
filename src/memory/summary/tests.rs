use super::*;

#[test]
fn the_seeds_thresholds_are_the_defaults() {
    let p = CompactionPolicy::default();
    assert_eq!(
        (
            p.max_recent_messages,
            p.max_recent_tokens,
            p.max_summary_age_ms,
            p.keep_recent
        ),
        (30, 2_500, 86_400_000, 10)
    );
    assert_eq!(p.due(30, 100, None), None);
    assert_eq!(p.due(31, 100, None), Some(Trigger::Messages(31)));
    assert_eq!(p.due(12, 2_500, None), None);
    assert_eq!(p.due(12, 2_501, None), Some(Trigger::Tokens(2_501)));
    assert_eq!(
        p.due(12, 100, Some(86_400_001)),
        Some(Trigger::Age(86_400_001))
    );
    // Nothing beyond the ten kept verbatim: nothing to fold, whatever the size.
    assert_eq!(p.due(10, 99_999, Some(999_999_999)), None);
}

#[test]
fn extractive_rules_sort_sentences_into_the_five_sections() {
    let mut s = Summary::default();
    s.fold([
        (true, true, "Can we ship v2.4 on Thursday? Lunch was great."),
        (
            false,
            false,
            "We decided to go behind the new_checkout_pool flag.",
        ),
        (
            true,
            true,
            "I'll write the runbook. The canary failed on eu-west.",
        ),
        (true, true, "I prefer rollouts before noon UTC."),
        (false, false, "What region first?"),
        (true, true, "Which canary size for eu-west?"),
    ]);
    // The first question was answered (the other side spoke after it); the last was not.
    assert_eq!(s.goals, ["Which canary size for eu-west?"]);
    assert_eq!(
        s.decisions,
        ["We decided to go behind the new_checkout_pool flag."]
    );
    assert_eq!(s.pending, ["I'll write the runbook."]);
    assert_eq!(s.outcomes, ["The canary failed on eu-west."]);
    assert_eq!(s.facts, ["I prefer rollouts before noon UTC."]);
}

#[test]
fn a_summary_reads_back_and_grows_incrementally_within_its_bounds() {
    let mut s = Summary::default();
    s.fold([(false, false, "Agreed: freeze on Friday.")]);
    let text = s.render();
    assert!(text.starts_with(
        "Current goals / open questions:\n- (none)\nDecisions made:\n- Agreed: freeze on Friday.\n"
    ));
    let mut back = Summary::parse(&text).unwrap_or_default();
    assert_eq!(back, s);
    for i in 0..12 {
        back.fold([(true, true, format!("Deployed build {i}.").as_str())]);
    }
    back.fold([(true, true, "Deployed build 11.")]);
    assert_eq!(back.outcomes.len(), SECTION_MAX);
    assert_eq!(
        back.outcomes.last().map(String::as_str),
        Some("Deployed build 11.")
    );
    assert_eq!(
        back.outcomes.first().map(String::as_str),
        Some("Deployed build 4.")
    );
    assert_eq!(back.decisions, ["Agreed: freeze on Friday."]);
    assert_eq!(Summary::parse("free text, no structure"), None);
    // One word longer than an item is cut.
    let long = format!("We decided on {} flags.", "x".repeat(400));
    let mut c = Summary::default();
    c.fold([(false, false, long.as_str())]);
    assert!(c
        .decisions
        .iter()
        .all(|d| d.chars().count() <= ITEM_MAX_CHARS));
    assert!(c
        .decisions
        .iter()
        .any(|d| d.chars().count() == ITEM_MAX_CHARS && d.ends_with('…')));
}

#[test]
fn a_long_decision_is_kept_whole_in_items_of_the_seeds_length() {
    let decision = "We decided the database cutover happens in the Sunday 03:00-05:00 UTC window,                     with the payments team on call, the read replicas promoted first and the old                     primary kept read-only for a week in case we need to roll back.";
    let mut s = Summary::default();
    s.fold([(false, false, decision)]);
    assert!(s.decisions.len() > 1, "{:?}", s.decisions);
    assert!(s
        .decisions
        .iter()
        .all(|d| d.chars().count() <= ITEM_MAX_CHARS));
    let joined = s
        .decisions
        .iter()
        .map(|d| d.trim_start_matches('…').trim_end_matches('…'))
        .collect::<Vec<_>>()
        .join(" ");
    assert_eq!(
        joined,
        decision.split_whitespace().collect::<Vec<_>>().join(" ")
    );
    assert!(joined.contains("03:00-05:00 UTC window"));
    // What a model writes is held to the same length.
    assert!(Summary::validate(&s.render()).is_ok());
}

#[test]
fn filler_is_never_summarized() {
    let mut s = Summary::default();
    s.fold([
        (true, true, "Agreed, Mel!"),
        (false, false, "I'll do that."),
        (true, true, "You've always been there for me."),
        (false, false, "I will build the rest of the plan around it."),
        (true, true, "Thanks so much, that sounds great!"),
        (false, false, "How are you?"),
        (true, true, "Okay, sure."),
    ]);
    assert_eq!(s, Summary::default(), "{}", s.render());
    // Substance stays: two words of it, or a number.
    s.fold([
        (false, false, "I'll write the runbook."),
        (true, true, "We agreed on 3 replicas."),
        (false, false, "Deployed build 11."),
    ]);
    assert_eq!(s.pending, ["I'll write the runbook."]);
    assert_eq!(s.decisions, ["We agreed on 3 replicas."]);
    assert_eq!(s.outcomes, ["Deployed build 11."]);
}

#[test]
fn a_question_leaves_the_open_questions_once_the_other_side_answers() {
    let mut s = Summary::default();
    s.fold([
        (true, true, "Which region goes first for the canary?"),
        (false, false, "Eu-west, then us-east."),
        (true, true, "Who owns the rollback runbook?"),
    ]);
    assert_eq!(s.goals, ["Who owns the rollback runbook?"]);
    // Answered at the start of the next fold.
    s.fold([(false, false, "Priya owns it."), (true, true, "Thanks!")]);
    assert!(s.goals.is_empty(), "{:?}", s.goals);
    // The assistant's own questions are not the user's open questions.
    s.fold([(false, false, "Should I page the payments team?")]);
    assert!(s.goals.is_empty());
}

#[test]
fn validate_takes_the_five_sections_in_order_and_says_what_is_wrong() {
    let ok = Summary {
        goals: vec!["Ship v2".into()],
        pending: vec!["Write the notes".into()],
        ..Summary::default()
    };
    assert_eq!(Summary::validate(&ok.render()), Ok(ok.clone()));
    let cases = [
        ("", "sections missing, repeated or out of order"),
        ("Here you go:\n", "text before the first section"),
        (
            "Decisions made:\n- x\n",
            "sections missing, repeated or out of order",
        ),
    ];
    for (text, why) in cases {
        assert_eq!(Summary::validate(text), Err(why), "{text:?}");
    }
    let prose = ok.render().replace("- Ship v2", "We want to ship v2");
    assert_eq!(
        Summary::validate(&prose),
        Err("a line that is neither a heading nor a \"- \" item")
    );
    let long = ok
        .render()
        .replace("Ship v2", &"x".repeat(ITEM_MAX_CHARS + 1));
    assert_eq!(
        Summary::validate(&long),
        Err("an item longer than 160 characters")
    );
    let many = ok.render().replace(
        "- Ship v2\n",
        &(0..=SECTION_MAX)
            .map(|i| format!("- goal {i}\n"))
            .collect::<String>(),
    );
    assert_eq!(
        Summary::validate(&many),
        Err("a section with more than 8 items")
    );
}

#[test]
fn a_full_section_keeps_its_older_specific_items() {
    let mut s = Summary::default();
    s.fold([(false, false, "We decided to book the Lisbon venue for May.")]);
    for i in 0..10 {
        let filler = [
            "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
            "juliet",
        ][i];
        s.fold([(
            false,
            false,
            format!("We decided the {filler} review stays weekly.").as_str(),
        )]);
    }
    assert_eq!(s.decisions.len(), SECTION_MAX);
    // The oldest decision names a place: it stays; the oldest unspecific ones went.
    assert_eq!(
        s.decisions[0],
        "We decided to book the Lisbon venue for May."
    );
    assert_eq!(
        s.decisions.last().map(String::as_str),
        Some("We decided the juliet review stays weekly.")
    );
    assert!(!s.decisions.iter().any(|d| d.contains("alpha")));
    // When every item is specific, the oldest goes.
    let mut t = Summary::default();
    for i in 0..10 {
        t.fold([(true, true, format!("Deployed build {i}.").as_str())]);
    }
    assert_eq!(
        t.outcomes.first().map(String::as_str),
        Some("Deployed build 2.")
    );
    assert!(is_specific("Ship v2.4 on Friday") && is_specific("we pick Lisbon"));
    assert!(!is_specific("We decided the review stays weekly.") && !is_specific("Then I'll do it"));
}
