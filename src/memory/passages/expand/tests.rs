use super::*;

fn terms(xs: &[&str]) -> Vec<String> {
    xs.iter().map(|s| (*s).to_string()).collect()
}

#[test]
fn feedback_lends_the_best_turns_words_weighed_by_their_support() {
    let q = terms(&["party"]);
    let turns = [
        ("I made lasagna for the party tonight", 4.0),
        ("The lasagna was my grandmother's recipe", 2.0),
    ];
    let out = feedback_terms(&q, &turns);
    // "lasagna" is in both turns: the most support, the full expansion weight.
    assert_eq!(out[0].0, "lasagna");
    assert!((out[0].1 - EXPANSION_WEIGHT).abs() < 1e-12);
    // The question's own word and stop words are not lent.
    assert!(out
        .iter()
        .all(|(t, _)| t != "party" && t != "the" && t != "for"));
    // Every other word weighs less than the best-supported one.
    assert!(out[1..].iter().all(|(_, w)| *w < EXPANSION_WEIGHT));
    assert!(out.len() <= EXPANSION_TERMS);
}

#[test]
fn feedback_weighs_a_name_inside_a_sentence_double() {
    // Same turn, same share: only the capital inside a sentence sets "Lisbon" apart
    // (the sentence-opening "Trip" is not a name).
    let out = feedback_terms(&[], &[("Trip planning for Lisbon and beaches", 1.0)]);
    let weight = |t: &str| out.iter().find(|(x, _)| x == t).map(|x| x.1);
    assert_eq!(out[0].0, "lisbon");
    let ratio = weight("lisbon").unwrap_or(0.0) / weight("beaches").unwrap_or(1.0);
    assert!((ratio - NAME_FACTOR).abs() < 1e-9, "{ratio}");
    assert_eq!(weight("trip"), weight("beaches"));
}

#[test]
fn feedback_reads_at_most_the_feedback_turns_and_keeps_at_most_the_expansion_terms() {
    let texts: Vec<String> = (0..FEEDBACK_TURNS + 2)
        .map(|i| format!("word{i}a word{i}b"))
        .collect();
    let turns: Vec<(&str, f64)> = texts.iter().map(|t| (t.as_str(), 1.0)).collect();
    let out = feedback_terms(&[], &turns);
    assert_eq!(out.len(), EXPANSION_TERMS.min(2 * FEEDBACK_TURNS));
    let late = format!("word{FEEDBACK_TURNS}a");
    assert!(out.iter().all(|(t, _)| *t != late));
    assert!(feedback_terms(&[], &[]).is_empty());
    assert!(feedback_terms(&[], &[("a to of", 1.0)]).is_empty());
}

#[test]
fn asks_when_knows_its_questions() {
    for q in [
        "When did Sam go camping?",
        "What year did Ann move?",
        "Which month was the wedding?",
        "How long ago did Bo start painting?",
        "Do you remember when we met?",
    ] {
        assert!(asks_when(q), "{q}");
    }
    for q in [
        "What did Sam bring to the party?",
        "Where is Ann from?",
        "Where does Bo work?",
    ] {
        assert!(!asks_when(q), "{q}");
    }
}

#[test]
fn asks_preference_knows_questions_about_liking() {
    assert!(LIKING.contains(&"enjoy") && LIKING.contains(&"love") && LIKING.contains(&"like"));
    for q in [
        "What does Ann enjoy doing?",
        "What does Sam love?",
        "Does Bo like jazz?",
        "What kind of music doesn't Ann like?",
        "Which one does Ann prefer?",
        "What does Bo hate about winter?",
        "Who enjoys hiking?",
        "What food has Ann loved since she was a kid?",
        "What has Bo enjoyed most this year?",
    ] {
        assert!(asks_preference(q), "{q}");
    }
    for q in [
        "What did Sam bring to the party?",
        "What is Lisbon like?",
        "What did the new house look like?",
        "Where would Ann like to go next year?",
        "What would Bo love to try?",
        "Did they fall in love in Paris?",
        "Where is Ann from?",
        "What is Ann's favorite movie?",
    ] {
        assert!(!asks_preference(q), "{q}");
    }
}

#[test]
fn time_terms_are_words_a_search_can_find() {
    assert!(!TIME_TERMS.contains(&"may"));
    assert!(TIME_TERMS
        .iter()
        .all(|t| t.chars().all(|c| c.is_ascii_lowercase())));
    assert_eq!(TIME_TERMS.len(), 31);
}

#[test]
fn name_candidates_are_the_capitalised_words() {
    assert_eq!(
        name_candidates("What did Caroline's kids paint?"),
        ["caroline"]
    );
    assert_eq!(
        name_candidates("When did Mel and Jon go to Lisbon?"),
        ["mel", "jon", "lisbon"]
    );
    assert_eq!(name_candidates("Tell me what Ann likes"), ["ann"]);
    // A sentence's first word is capitalised whatever it is; a greeting is no name.
    assert!(name_candidates("Well did Oh get sick? Thanks").is_empty());
    assert!(name_candidates("Caroline went where?").is_empty());
    assert!(name_candidates("What did I say about the trip?").is_empty());
    assert!(name_candidates("where is everyone").is_empty());
}

const DAY: i64 = 86_400_000;

#[test]
fn named_window_reads_the_times_a_question_names() {
    // 2023-05-20 12:00 UTC.
    let now = days_from_civil(2023, 5, 20) * DAY + DAY / 2;
    let may = (
        days_from_civil(2023, 5, 1) * DAY,
        days_from_civil(2023, 6, 1) * DAY - 1,
    );
    assert_eq!(named_window("What did Ann do in May?", now), Some(may));
    // A month not yet begun this year is last year's.
    let july = (
        days_from_civil(2022, 7, 1) * DAY,
        days_from_civil(2022, 8, 1) * DAY - 1,
    );
    assert_eq!(named_window("Where did Bo go in July?", now), Some(july));
    let dec21 = (
        days_from_civil(2021, 12, 1) * DAY,
        days_from_civil(2022, 1, 1) * DAY - 1,
    );
    assert_eq!(
        named_window("What happened in December 2021?", now),
        Some(dec21)
    );
    let y2022 = (
        days_from_civil(2022, 1, 1) * DAY,
        days_from_civil(2023, 1, 1) * DAY - 1,
    );
    assert_eq!(
        named_window("Where did they travel in 2022?", now),
        Some(y2022)
    );
    assert_eq!(named_window("What did Ann do last year?", now), Some(y2022));
    let april = (
        days_from_civil(2023, 4, 1) * DAY,
        days_from_civil(2023, 5, 1) * DAY - 1,
    );
    assert_eq!(
        named_window("What did Ann read last month?", now),
        Some(april)
    );
    assert_eq!(
        named_window("What did we plan last week?", now),
        Some((now - 14 * DAY, now))
    );
    let yesterday = days_from_civil(2023, 5, 19) * DAY;
    assert_eq!(
        named_window("What did I eat yesterday?", now),
        Some((yesterday, yesterday + DAY - 1))
    );
    // "may" as a verb names nothing.
    assert_eq!(named_window("What may Ann bring?", now), None);
    assert_eq!(named_window("Where is Ann from?", now), None);
}
