use super::*;
use crate::memory::assemble::{assemble, AssembleRequest};
use crate::memory::passages::fixture::{chat, request, DAY, LANE, S};
use crate::memory::summary::CompactionPolicy;

/// Ann (the user) says what she likes twice, Bo (the assistant) once, in words the
/// question "What does Ann enjoy doing?" does not use; one turn says "enjoy" about
/// something else. Folded by a compaction, which keeps the preferences as records.
fn likes() -> MemoryStore {
    let mut s = chat(&[
        "I love climbing, mostly bouldering at the old quarry.",
        "I really like baking bread on Sundays.",
        "The weather was awful all week.",
        "Still raining here too, the garden is a swamp.",
        "I really like hiking when the leaves turn.",
        "Did you enjoy the concert last night?",
        "It was loud, the band played for three hours straight.",
        "The parking was a mess as well.",
        "Work starts early tomorrow.",
        "Same here, a long meeting at nine.",
        "Good night then.",
        "Good night!",
    ]);
    let policy = CompactionPolicy {
        keep_recent: 2,
        ..CompactionPolicy::default()
    };
    s.compact(S, LANE, &policy, 20 * DAY, true)
        .unwrap_or_else(|e| panic!("{e}"));
    s
}

fn ids(s: &MemoryStore, hits: &[Hit]) -> Vec<String> {
    hits.iter()
        .filter_map(|h| s.message_in(S, h.seq).ok().flatten())
        .map(|m| m.message_id)
        .collect()
}

const ANN: &str = "What does Ann enjoy doing?";

fn speakers() -> [(String, Role); 1] {
    [("ann".to_string(), Role::User)]
}

#[test]
fn a_question_about_what_someone_likes_gets_what_they_said_they_like() {
    let s = likes();
    let recall = s
        .recall(S, ANN, 30 * DAY, &speakers())
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(recall.preference);
    assert_eq!(recall.signals.speaker, Some(Role::User));
    let scope = HitScope::lane(S, LANE);
    let (words, _) = s
        .recall_hits(&scope, &recall, 10)
        .unwrap_or_else(|e| panic!("{e}"));
    // The words alone find the concert, not what Ann likes.
    let by_words = ids(&s, &words);
    assert!(by_words.contains(&"5".to_string()), "{by_words:?}");
    assert!(!by_words.contains(&"0".to_string()), "{by_words:?}");
    assert!(!by_words.contains(&"4".to_string()), "{by_words:?}");
    let with = s
        .with_stated(&scope, &recall, words, 10)
        .unwrap_or_else(|e| panic!("{e}"));
    let found = ids(&s, &with);
    assert!(found.contains(&"0".to_string()), "{found:?}");
    assert!(found.contains(&"4".to_string()), "{found:?}");
    assert!(found.contains(&"5".to_string()), "{found:?}");
    // Bo's bread is Bo's.
    assert!(!found.contains(&"1".to_string()), "{found:?}");
    // Fused by reciprocal rank: the best of each list lead, at the same weight.
    assert!((STATED_WEIGHT - 1.0).abs() < f64::EPSILON);
    assert_eq!(&found[..2], ["5", "4"], "{found:?}");
}

#[test]
fn the_assembled_context_holds_what_the_person_said_they_like() {
    let s = likes();
    let speakers = speakers();
    let req = AssembleRequest {
        budget_tokens: 400,
        speakers: &speakers,
        ..request(ANN)
    };
    let a = assemble(&s, &req).unwrap_or_else(|e| panic!("{e}"));
    assert!(a.text.contains("I love climbing"), "{}", a.text);
    assert!(a.text.contains("I really like hiking"), "{}", a.text);
    // A question about something else gets no preference it does not ask for.
    let other = AssembleRequest {
        user_message: "What did Ann say about the weather?",
        ..req
    };
    let a = assemble(&s, &other).unwrap_or_else(|e| panic!("{e}"));
    assert!(!a.text.contains("I love climbing"), "{}", a.text);
}

#[test]
fn stated_preferences_keep_to_the_scope_and_the_speaker() {
    let s = likes();
    let scope = HitScope::lane(S, LANE);
    let all = s
        .stated_preferences(&scope, None, 10)
        .unwrap_or_else(|e| panic!("{e}"));
    // Newest first, each message once.
    assert_eq!(ids(&s, &all), ["4", "1", "0"]);
    assert!(all.iter().all(|h| h.terms == 0 && !h.asks));
    let bo = s
        .stated_preferences(&scope, Some(Role::Assistant), 10)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ids(&s, &bo), ["1"]);
    let two = s
        .stated_preferences(&scope, None, 2)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ids(&s, &two), ["4", "1"]);
    let seq_of_4 = all[0].seq;
    let older = HitScope {
        below_seq: seq_of_4,
        ..scope
    };
    let older = s
        .stated_preferences(&older, None, 10)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ids(&s, &older), ["1", "0"]);
    let window = HitScope {
        from_ms: Some(DAY),
        until_ms: Some(3 * DAY),
        ..scope
    };
    let window = s
        .stated_preferences(&window, None, 10)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ids(&s, &window), ["1"]);
    let elsewhere = s
        .stated_preferences(&HitScope::lane(S, "root:8"), None, 10)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(elsewhere.is_empty());
    assert!(s
        .stated_preferences(&scope, None, 0)
        .unwrap_or_else(|e| panic!("{e}"))
        .is_empty());
}
