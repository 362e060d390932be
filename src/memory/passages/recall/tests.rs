use super::*;
use crate::memory::passages::fixture::{chat, DAY, LANE, S};
use crate::memory::store::NewMessage;

fn first_id(s: &MemoryStore, question: &str, now_ms: i64) -> String {
    first_id_at(s, question, now_ms, &[])
}

#[test]
fn a_second_round_finds_a_turn_that_shares_no_word_with_the_question() {
    let s = chat(&[
        "Are you coming to the party on Saturday?",
        "Yes! I'm bringing my grandmother's lasagna to the party.",
        "The weather was awful all week.",
        "That lasagna recipe takes four hours, grandmother never measured anything.",
        "Did the car get fixed?",
        "Still waiting on the mechanic.",
    ]);
    let recall = s
        .recall(S, "What food was brought to the party?", 10 * DAY, &[])
        .unwrap_or_else(|e| panic!("{e}"));
    let (first, _) = s
        .weighted_hits(
            &HitScope::lane(S, LANE),
            &recall.terms,
            &recall.added,
            5,
            &recall.signals,
        )
        .unwrap_or_else(|e| panic!("{e}"));
    let (second, _) = s
        .recall_hits(&HitScope::lane(S, LANE), &recall, 5)
        .unwrap_or_else(|e| panic!("{e}"));
    let ids = |hits: &[Hit]| -> Vec<String> {
        hits.iter()
            .filter_map(|h| s.message_in(S, h.seq).ok().flatten())
            .map(|m| m.message_id)
            .collect()
    };
    // The first round finds only the turns saying "party"; the second also the recipe,
    // through the words the best of them lend ("lasagna", "grandmother").
    assert!(!ids(&first).contains(&"3".to_string()), "{:?}", ids(&first));
    assert!(
        ids(&second).contains(&"3".to_string()),
        "{:?}",
        ids(&second)
    );
    // A hit the question's words did not find holds none of them.
    let recipe = second.iter().find(|h| {
        s.message_in(S, h.seq)
            .ok()
            .flatten()
            .is_some_and(|m| m.message_id == "3")
    });
    assert_eq!(recipe.map(|h| (h.terms, h.weight)), Some((0, 0.0)));
}

#[test]
fn a_question_of_one_word_gathers_the_turns_its_best_matches_are_about() {
    let s = chat(&[
        "What do you do when you are free?",
        "Bouldering at the quarry, every weekend if I can.",
        "That sounds fun.",
        "Bouldering at the gym yesterday was brutal, my arms still hurt.",
        "The weather was awful all week.",
        "Still raining here too.",
    ]);
    assert_eq!(SPARSE_TERMS, 1);
    let speakers = [("ann".to_string(), Role::Assistant)];
    let recall = s
        .recall(S, "What does Ann do on weekends?", 10 * DAY, &speakers)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(recall.terms, ["weekends"]);
    assert!(!recall.preference);
    let scope = HitScope::lane(S, LANE);
    let ids = |hits: &[Hit]| -> Vec<String> {
        hits.iter()
            .filter_map(|h| s.message_in(S, h.seq).ok().flatten())
            .map(|m| m.message_id)
            .collect()
    };
    let (first, _) = s
        .weighted_hits(&scope, &recall.terms, &recall.added, 5, &recall.signals)
        .unwrap_or_else(|e| panic!("{e}"));
    // The best match holds the question's one word: complete, yet only one of Ann's turns
    // about what she does.
    assert_eq!(ids(&first), ["1"]);
    let (second, _) = s
        .recall_hits(&scope, &recall, 5)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ids(&second)[0], "1");
    assert!(
        ids(&second).contains(&"3".to_string()),
        "{:?}",
        ids(&second)
    );
}

#[test]
fn a_question_about_what_someone_likes_gets_no_second_round_for_its_one_word() {
    // Its second round is what they said they like (`super::stated`), not the words the
    // turns with its verb lend.
    let s = chat(&[
        "What do you do on weekends?",
        "I enjoy the quarry, every weekend if I can.",
        "That sounds fun.",
        "The quarry gym yesterday was brutal, my arms still hurt.",
    ]);
    let speakers = [("ann".to_string(), Role::Assistant)];
    let recall = s
        .recall(S, "What does Ann enjoy?", 10 * DAY, &speakers)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(recall.terms, ["enjoy"]);
    assert!(recall.preference);
    let (hits, _) = s
        .recall_hits(&HitScope::lane(S, LANE), &recall, 5)
        .unwrap_or_else(|e| panic!("{e}"));
    let found: Vec<String> = hits
        .iter()
        .filter_map(|h| s.message_in(S, h.seq).ok().flatten())
        .map(|m| m.message_id)
        .collect();
    assert_eq!(found, ["1"]);
}

#[test]
fn a_question_asking_when_prefers_the_turn_that_tells_a_time() {
    let s = chat(&[
        "I finally signed up for a pottery class last week, something just for me!",
        "A pottery class sounds relaxing.",
        "Bowls mostly.",
    ]);
    // On the question's words alone the shorter, newer turn wins; a question asking when
    // prefers the one that says when.
    assert_eq!(
        first_id(&s, "Tell me about the pottery class", 10 * DAY),
        "1"
    );
    assert_eq!(
        first_id(&s, "When did the pottery class start?", 10 * DAY),
        "0"
    );
    let plain = s
        .recall(S, "Tell me about the pottery class", 10 * DAY, &[])
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(plain.added.is_empty());
}

#[test]
fn a_question_naming_a_time_prefers_the_turns_written_then() {
    // Two trips, one written in January 1970 (day 1), the other in February (day 40).
    let mut turns = vec!["We went hiking in the mountains."; 2];
    turns.extend(std::iter::repeat_n("ok", 38));
    turns.push("We went hiking in the mountains.");
    let s = chat(&turns);
    let now = 60 * DAY;
    let recall = s
        .recall(S, "Where did we go hiking in January?", now, &[])
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(recall.signals.window.is_some());
    // Without the window, the newer turn wins (recency); with it, January's.
    assert_eq!(first_id(&s, "Where did we go hiking?", now), "40");
    assert_eq!(first_id(&s, "Where did we go hiking in January?", now), "1");
}

#[test]
fn a_name_the_other_speaker_greets_tells_whose_turns_a_question_is_about() {
    let s = chat(&[
        "Hey Ann! How was the trip?",                   // user greets Ann
        "The trip was great, Lisbon was sunny.",        // Ann (assistant)
        "Thanks, Ann. My trip to Porto got cancelled.", // user
        "Sorry to hear that.",
        "I told Zoe about the trip too.", // user, Zoe only talked about
        "Nice.",
    ]);
    assert_eq!(
        s.name_owner(S, "ann").unwrap_or_else(|e| panic!("{e}")),
        Some(Role::Assistant)
    );
    assert_eq!(
        s.name_owner(S, "zoe").unwrap_or_else(|e| panic!("{e}")),
        None
    );
    assert_eq!(
        s.name_owner(S, "nobody").unwrap_or_else(|e| panic!("{e}")),
        None
    );
    let recall = s
        .recall(S, "How was Ann's trip?", 10 * DAY, &[])
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(recall.signals.speaker, Some(Role::Assistant));
    assert_eq!(recall.terms, ["trip"]);
    // Ann's own turn, not the user's turns that greet her.
    assert_eq!(first_id(&s, "How was Ann's trip?", 10 * DAY), "1");
    // A question saying "I" or "you" goes by that.
    let mine = s
        .recall(S, "How was my trip, Ann?", 10 * DAY, &[])
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(mine.signals.speaker, Some(Role::User));
    assert!(mine.names.is_empty());
}

#[test]
fn a_short_form_of_the_name_the_conversation_greets_by_tells_the_speaker_too() {
    let s = chat(&[
        "Hey Mel! How was the trip?",                   // user greets Mel
        "The trip was great, Lisbon was sunny.",        // Mel (assistant)
        "Thanks, Mel. My trip to Porto got cancelled.", // user
        "Sorry to hear that.",
    ]);
    assert_eq!(NICKNAME_MIN_CHARS, 3);
    let owner = |name: &str| {
        s.owner_by_any_name(S, name)
            .unwrap_or_else(|e| panic!("{e}"))
    };
    assert_eq!(owner("melanie"), Some(Role::Assistant));
    assert_eq!(owner("mel"), Some(Role::Assistant));
    // Shorter than three letters, or not a start of the name: nobody.
    assert_eq!(owner("me"), None);
    assert_eq!(owner("pamela"), None);
    assert_eq!(
        s.name_owner(S, "melanie").unwrap_or_else(|e| panic!("{e}")),
        None
    );
    // Melanie's own turn, not the user's that greet her.
    assert_eq!(first_id(&s, "How was Melanie's trip?", 10 * DAY), "1");
}

#[test]
fn a_question_of_a_name_alone_searches_by_its_common_words() {
    let s = chat(&[
        "Hey Ann! Where have you been?", // user greets Ann
        "I am from Lisbon.",
        "Thanks, Ann. I missed you.",
        "What did you do last summer?",
        "Ann, look at this photo of the trip.",
        "Nice one.",
    ]);
    let recall = s
        .recall(S, "Where is Ann from?", 10 * DAY, &[])
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(recall.signals.speaker, Some(Role::Assistant));
    assert_eq!(recall.names, ["ann"]);
    assert_eq!(recall.terms, ["where", "is", "from"]);
    // Ann's turn that says where she is from, not the user's turns that name her.
    assert_eq!(first_id(&s, "Where is Ann from?", 10 * DAY), "1");
}

#[test]
fn addressing_is_a_greeting_or_a_name_standing_apart() {
    assert!(addresses("Hey Ann! How are you?", "ann"));
    assert!(addresses("hi, ann", "ann"));
    assert!(addresses("Thanks so much, Ann.", "ann"));
    assert!(addresses("Ann, look at this", "ann"));
    assert!(!addresses("I went with Ann to the park", "ann"));
    assert!(!addresses("Annie came too", "ann"));
    assert!(!addresses("Said hey. Ann came later", "ann"));
}

#[test]
fn a_name_the_host_gives_a_speaker_tells_whose_turns_a_question_is_about() {
    // Nobody is greeted: the conversation does not tell who Ann is.
    let s = chat(&[
        "Ann loves the trip stories, ask her about the trip.", // user, names Ann
        "The trip was great, Lisbon was sunny.",               // the assistant
    ]);
    let unknown = s
        .recall(S, "How was Ann's trip?", 10 * DAY, &[])
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(unknown.signals.speaker, None);
    assert_eq!(first_id_with(&s, "How was Ann's trip?", &[]), "0");
    let told = [
        ("ann".to_string(), Role::Assistant),
        ("lee".to_string(), Role::Assistant),
    ];
    let recall = s
        .recall(S, "How was Ann's trip?", 10 * DAY, &told)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(recall.signals.speaker, Some(Role::Assistant));
    assert_eq!(recall.terms, ["trip"]);
    assert_eq!(first_id_with(&s, "How was Ann's trip?", &told), "1");
}

fn first_id_with(s: &MemoryStore, question: &str, speakers: &[(String, Role)]) -> String {
    first_id_at(s, question, 10 * DAY, speakers)
}

/// The id of the best match of `question`, asked at `now_ms` with `speakers`.
fn first_id_at(
    s: &MemoryStore,
    question: &str,
    now_ms: i64,
    speakers: &[(String, Role)],
) -> String {
    let recall = s
        .recall(S, question, now_ms, speakers)
        .unwrap_or_else(|e| panic!("{e}"));
    let (hits, _) = s
        .recall_hits(&HitScope::lane(S, LANE), &recall, 5)
        .unwrap_or_else(|e| panic!("{e}"));
    hits.first()
        .and_then(|h| s.message_in(S, h.seq).ok().flatten())
        .map_or_else(String::new, |m| m.message_id)
}

#[test]
fn a_name_the_conversation_has_told_for_good_is_worked_out_once() {
    // The assistant greets the user by name: "Hey Ann" in the assistant's turns.
    let turns: Vec<String> = (0..2 * NAME_SAMPLE + 4)
        .map(|i| {
            if i % 2 == 1 {
                format!("Hey Ann, step {i} is done.")
            } else {
                format!("Thanks! On to step {i}.")
            }
        })
        .collect();
    let few: Vec<&str> = turns[..6].iter().map(String::as_str).collect();
    let s = chat(&few);
    // Fewer greetings than the sample: still open, kept only while no message is added.
    assert_eq!(s.name_owner(S, "ann").ok().flatten(), Some(Role::User));
    assert!(s.name_owners.borrow().is_empty());
    let guessed = |s: &MemoryStore| {
        s.name_guesses
            .borrow()
            .by_session
            .get(S)
            .and_then(|names| names.get("ann"))
            .copied()
    };
    assert_eq!(guessed(&s), Some(Some(Role::User)));
    let all: Vec<&str> = turns.iter().map(String::as_str).collect();
    let s = chat(&all);
    assert_eq!(s.name_owner(S, "ann").ok().flatten(), Some(Role::User));
    assert_eq!(
        s.name_owners
            .borrow()
            .get(S)
            .and_then(|names| names.get("ann"))
            .copied(),
        Some(Some(Role::User))
    );
    assert_eq!(s.name_owner(S, "ann").ok().flatten(), Some(Role::User));
}

#[test]
fn a_name_worked_out_from_a_few_messages_is_worked_out_again_once_one_is_added() {
    // "Ann" greeted by the assistant: the user's name, kept for the next question.
    let mut s = chat(&["Morning!", "Hey Ann, the report is ready."]);
    assert_eq!(s.name_owner(S, "ann").ok().flatten(), Some(Role::User));
    assert_eq!(s.name_owner(S, "bo").ok().flatten(), None);
    assert_eq!(
        s.name_guesses.borrow().by_session.get(S).map(HashMap::len),
        Some(2)
    );
    // The user greets Ann too: she is no longer the user's name, and the store says so.
    s.ingest(&NewMessage {
        session_id: S,
        chat_id: "7",
        message_id: "2",
        role: Role::User,
        text: "Thanks, Ann!",
        ts_ms: 2 * DAY,
        topic_id: None,
        reply_to: None,
    })
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.name_owner(S, "ann").ok().flatten(), None);
}

#[test]
fn a_name_the_host_gives_for_both_sides_needs_no_working_out() {
    let s = chat(&["Morning!", "Hey Ann, the report is ready."]);
    let both = [
        ("melanie".to_string(), Role::User),
        ("ava".to_string(), Role::Assistant),
    ];
    // A short form of a given name is that speaker's; a name not given is a third
    // person's, and the conversation is not read for it.
    let r = s
        .recall(S, "What did Mel say about Ann?", 30 * DAY, &both)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r.signals.speaker, Some(Role::User));
    assert!(s.name_guesses.borrow().by_session.is_empty());
    // With one side given, the other's names are still worked out.
    let r = s
        .recall(S, "What did Ann say?", 30 * DAY, &both[..1])
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r.signals.speaker, Some(Role::User));
    assert!(!s.name_guesses.borrow().by_session.is_empty());
}
