use super::*;
use crate::memory::assemble::{assemble, AssembleRequest};
use crate::memory::passages::fixture::{self, chat, DAY, LANE, S};
use crate::memory::store::{NewMessage, Role};
use proptest::prelude::*;

/// Topics a toy embedder knows, one dimension each: a text's vector counts the words of
/// each topic it holds (what a real model does by meaning, here by a list).
const TOPICS: [&[&str]; 4] = [
    &[
        "party", "lasagna", "cake", "food", "brought", "bring", "dinner",
    ],
    &["car", "mechanic", "engine", "fixed"],
    &["weather", "rain", "sunny", "awful"],
    &["work", "deadline", "boss", "meeting"],
];

fn embed(text: &str) -> Vec<f32> {
    let lower = text.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    TOPICS
        .iter()
        .map(|topic| {
            let n = words.iter().filter(|w| topic.contains(*w)).count();
            f32::from(u8::try_from(n).unwrap_or(u8::MAX))
        })
        .collect()
}

/// Gives every message without a vector the toy embedder's.
fn embed_all(s: &mut MemoryStore) {
    let pending = s.unembedded(S, 1_000).unwrap_or_else(|e| panic!("{e}"));
    let vectors: Vec<(String, Vec<f32>)> = pending
        .into_iter()
        .map(|(id, text)| (id, embed(&text)))
        .collect();
    let entries: Vec<(&str, &[f32])> = vectors
        .iter()
        .map(|(id, v)| (id.as_str(), v.as_slice()))
        .collect();
    let unknown = s
        .set_vectors(S, &entries)
        .unwrap_or_else(|e| panic!("{e:?}"));
    assert!(unknown.is_empty());
}

fn hit(seq: i64, score: f64) -> Hit {
    Hit {
        seq,
        score,
        terms: 1,
        weight: 2.0,
        asks: false,
    }
}

fn near(seq: i64, similarity: f64) -> Near {
    Near {
        seq,
        similarity,
        asks: false,
    }
}

#[test]
fn a_vector_is_kept_at_length_one_and_refused_when_it_is_not_one() {
    let v = unit(&[3.0, 4.0]).unwrap_or_default();
    assert!((v[0] - 0.6).abs() < 1e-6 && (v[1] - 0.8).abs() < 1e-6);
    assert_eq!(unit(&[0.0, 0.0]), Ok(vec![0.0, 0.0]));
    assert_eq!(unit(&[]), Err(VectorError::Empty));
    assert_eq!(unit(&[1.0, f32::NAN]), Err(VectorError::NotFinite(1)));
    assert_eq!(unit(&[f32::INFINITY]), Err(VectorError::NotFinite(0)));
    assert!(unit(&vec![1.0; MAX_VECTOR_DIMS]).is_ok());
    assert_eq!(
        unit(&vec![1.0; MAX_VECTOR_DIMS + 1]),
        Err(VectorError::TooLong(4_097))
    );
    assert_eq!(MAX_VECTOR_DIMS, 4_096);
}

#[test]
fn the_messages_left_to_embed_are_those_without_a_vector_newest_first() {
    let mut s = chat(&["one", "two", "three"]);
    let all = s.unembedded(S, 10).unwrap_or_default();
    assert_eq!(
        all,
        vec![
            ("2".to_string(), "three".to_string()),
            ("1".to_string(), "two".to_string()),
            ("0".to_string(), "one".to_string()),
        ]
    );
    assert_eq!(s.unembedded(S, 1).unwrap_or_default().len(), 1);
    assert!(s.unembedded(S, 0).unwrap_or_default().is_empty());
    let unknown = s
        .set_vectors(
            S,
            &[
                ("1", &[1.0, 0.0]),
                ("nope", &[1.0, 0.0]),
                ("1", &[0.0, 1.0]),
            ],
        )
        .unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(unknown, vec!["nope".to_string()]);
    let left = |s: &MemoryStore| -> Vec<String> {
        s.unembedded(S, 10)
            .unwrap_or_default()
            .into_iter()
            .map(|(id, _)| id)
            .collect()
    };
    assert_eq!(left(&s), vec!["2".to_string(), "0".to_string()]);
    // A vector given again replaces the one before and counts once.
    let unknown = s
        .set_vectors(S, &[("1", &[1.0]), ("0", &[1.0])])
        .unwrap_or_else(|e| panic!("{e:?}"));
    assert!(unknown.is_empty());
    assert_eq!(left(&s), vec!["2".to_string()]);
    let unknown = s
        .set_vectors(S, &[("2", &[1.0])])
        .unwrap_or_else(|e| panic!("{e:?}"));
    assert!(unknown.is_empty());
    assert!(left(&s).is_empty());
    // A message stored after: the only one left.
    s.ingest(&NewMessage {
        session_id: S,
        chat_id: "7",
        message_id: "3",
        role: Role::User,
        text: "four",
        ts_ms: 3 * DAY,
        topic_id: None,
        reply_to: None,
    })
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(left(&s), vec!["3".to_string()]);
    assert!(s
        .unembedded("another session", 10)
        .unwrap_or_default()
        .is_empty());
}

#[test]
fn a_batch_with_one_bad_vector_keeps_none() {
    let mut s = chat(&["one", "two"]);
    let out = s.set_vectors(S, &[("0", &[1.0]), ("1", &[f32::NAN])]);
    assert!(matches!(
        out,
        Err(VectorsError::Invalid(1, VectorError::NotFinite(0)))
    ));
    assert_eq!(s.unembedded(S, 10).unwrap_or_default().len(), 2);
}

#[test]
fn the_nearest_are_by_cosine_within_the_scope_and_of_the_question_s_length() {
    let mut s = chat(&["a", "b", "c", "d?", "e"]);
    let unknown = s
        .set_vectors(
            S,
            &[
                ("0", &[1.0, 0.0]),
                ("1", &[0.6, 0.8]),
                ("2", &[0.0, 1.0, 0.0]),
                ("3", &[2.0, 0.1]),
                ("4", &[-1.0, 0.0]),
            ],
        )
        .unwrap_or_else(|e| panic!("{e:?}"));
    assert!(unknown.is_empty());
    let scope = HitScope::lane(S, LANE);
    let got = s.nearest(&scope, &[1.0, 0.0], 10).unwrap_or_default();
    let seqs: Vec<i64> = got.iter().map(|n| n.seq).collect();
    // Message "2" is of another length (another model's), "4" points away: passed over.
    assert_eq!(seqs, vec![1, 4, 2]);
    assert!((got[0].similarity - 1.0).abs() < 1e-6);
    assert!((got[2].similarity - 0.6).abs() < 1e-6);
    assert!(got[1].asks && !got[0].asks);
    assert_eq!(
        s.nearest(&scope, &[1.0, 0.0], 1).unwrap_or_default().len(),
        1
    );
    let below = HitScope {
        below_seq: 2,
        ..scope
    };
    assert_eq!(
        s.nearest(&below, &[1.0, 0.0], 10)
            .unwrap_or_default()
            .iter()
            .map(|n| n.seq)
            .collect::<Vec<_>>(),
        vec![1]
    );
    let window = HitScope {
        from_ms: Some(DAY),
        ..scope
    };
    assert_eq!(
        s.nearest(&window, &[1.0, 0.0], 10)
            .unwrap_or_default()
            .len(),
        2
    );
    assert!(s
        .nearest(&HitScope::lane(S, "another"), &[1.0, 0.0], 10)
        .unwrap_or_default()
        .is_empty());
    assert!(s
        .nearest(&scope, &[f32::NAN, 0.0], 10)
        .unwrap_or_default()
        .is_empty());
}

#[test]
fn fusion_ranks_what_both_lists_hold_first_and_keeps_what_the_words_say() {
    assert!((RRF_K - 60.0).abs() < f64::EPSILON);
    let words = [hit(10, 8.0), hit(11, 5.0), hit(12, 1.0)];
    let nearest = [near(20, 0.9), near(12, 0.8)];
    let fused = fuse(&words, &nearest, 1.0, 0.0, 10);
    let seqs: Vec<i64> = fused.iter().map(|h| h.seq).collect();
    // 12 is third by its words and second by its vector: 1/63 + 1/62 beats 1/61, the
    // score of 10 and of 20, each first in one list (the newer first).
    assert_eq!(seqs, vec![12, 20, 10, 11]);
    let only_near = fused.iter().find(|h| h.seq == 20).copied();
    assert_eq!(only_near.map(|h| (h.terms, h.weight)), Some((0, 0.0)));
    assert_eq!(fused[0].terms, 1);
    // First in both: the words' best score.
    let both = fuse(&[hit(1, 8.0)], &[near(1, 0.5)], 1.0, 0.0, 10);
    assert!((both[0].score - 8.0).abs() < 1e-9);
    // Without words, a message first in both would score 1.
    let alone = fuse(&[], &[near(5, 0.5), near(6, 0.4)], 1.0, 0.0, 1);
    assert_eq!(alone.len(), 1);
    assert!((alone[0].score - 0.5).abs() < 1e-9);
}

#[test]
fn at_weight_zero_the_words_keep_their_order_and_the_nearest_follow() {
    let words = [hit(10, 8.0), hit(11, 5.0), hit(12, 1.5)];
    let nearest = [near(20, 0.9), near(12, 0.8), near(21, 0.7)];
    let fused = fuse(&words, &nearest, 0.0, 0.0, 10);
    let seqs: Vec<i64> = fused.iter().map(|h| h.seq).collect();
    assert_eq!(seqs, vec![10, 11, 12, 20, 21]);
    assert_eq!(fused[..3], words);
    // Below the last of the words' (and below 1), in the nearest's order.
    assert!(fused[3].score < 1.0 && fused[4].score < fused[3].score);
    assert_eq!((fused[3].terms, fused[3].weight), (0, 0.0));
    assert_eq!(fuse(&words, &nearest, f64::NAN, 0.0, 10), fused);
    assert_eq!(then_nearest(&words, &nearest, 4).len(), 4);
    // At half weight, 20 (the nearest, holding no word) falls behind the words' 11.
    let full: Vec<i64> = fuse(&words, &nearest, 1.0, 0.0, 10)
        .iter()
        .map(|h| h.seq)
        .collect();
    assert_eq!(full, vec![12, 20, 10, 11, 21]);
    let half: Vec<i64> = fuse(&words, &nearest, 0.5, 0.0, 10)
        .iter()
        .map(|h| h.seq)
        .collect();
    assert_eq!(half, vec![12, 10, 11, 20, 21]);
}

#[test]
fn a_clear_match_of_the_words_keeps_ahead_of_what_is_only_near() {
    // 10 and 11 hold most of the question's weight; 12 one common word of it.
    let clear = |seq, score, weight| Hit {
        weight,
        ..hit(seq, score)
    };
    let words = [
        clear(10, 8.0, 6.0),
        clear(11, 5.0, 5.0),
        clear(12, 1.0, 1.0),
    ];
    let nearest = [near(20, 0.9), near(21, 0.85), near(11, 0.8)];
    let weights = [4.0, 3.0, 1.0];
    assert!((clear_weight(&weights) - 4.0).abs() < 1e-9);
    let seqs = |v: Vec<Hit>| v.iter().map(|h| h.seq).collect::<Vec<i64>>();
    // Without the bar, the nearest outrank the words' second clear match.
    assert_eq!(seqs(fuse(&words, &nearest, 1.0, 0.0, 3)), vec![11, 20, 10]);
    // With it, the clear ones first, in their fused order (11 is near too), and the
    // nearest then rank among the vague: 20 and 21 ahead of 12 by their ranks.
    let fused = fuse(&words, &nearest, 1.0, clear_weight(&weights), 10);
    assert_eq!(seqs(fused.clone()), vec![11, 10, 20, 21, 12]);
    assert!(fused.windows(2).all(|w| w[0].score >= w[1].score));
    assert_eq!(seqs(fuse(&words, &nearest, 1.0, 4.0, 2)), vec![11, 10]);
}

proptest! {
    #[test]
    fn fusion_holds_each_message_once_best_first_within_the_limit(
        words in proptest::collection::vec(0i64..40, 0..30),
        nearest in proptest::collection::vec(0i64..40, 0..30),
        limit in 0usize..50,
        weight in prop_oneof![Just(0.0), Just(0.5), Just(1.0), Just(3.0)],
    ) {
        let mut seen = std::collections::HashSet::new();
        let words: Vec<Hit> = words.into_iter().filter(|s| seen.insert(*s)).map(|s| hit(s, 1.0)).collect();
        let mut seen = std::collections::HashSet::new();
        let nearest: Vec<Near> = nearest.into_iter().filter(|s| seen.insert(*s)).map(|s| near(s, 0.5)).collect();
        let fused = fuse(&words, &nearest, weight, 0.0, limit);
        let union: std::collections::HashSet<i64> = words.iter().map(|h| h.seq).chain(nearest.iter().map(|n| n.seq)).collect();
        prop_assert_eq!(fused.len(), union.len().min(limit));
        let ids: std::collections::HashSet<i64> = fused.iter().map(|h| h.seq).collect();
        prop_assert_eq!(ids.len(), fused.len());
        prop_assert!(ids.is_subset(&union));
        prop_assert!(fused.windows(2).all(|w| w[0].score >= w[1].score));
    }

    #[test]
    fn a_clear_match_is_never_pushed_out_by_the_nearest(
        words in proptest::collection::vec((0i64..40, 0.0f64..10.0), 0..30),
        nearest in proptest::collection::vec(0i64..40, 0..30),
        limit in 0usize..50,
        bar in 0.5f64..10.0,
    ) {
        let mut seen = std::collections::HashSet::new();
        let words: Vec<Hit> = words.into_iter().filter(|(s, _)| seen.insert(*s))
            .map(|(s, w)| Hit { weight: w, ..hit(s, 1.0) }).collect();
        let mut seen = std::collections::HashSet::new();
        let nearest: Vec<Near> = nearest.into_iter().filter(|s| seen.insert(*s)).map(|s| near(s, 0.5)).collect();
        let fused = fuse(&words, &nearest, 1.0, bar, limit);
        let clear: Vec<i64> = words.iter().filter(|h| h.weight >= bar).map(|h| h.seq).collect();
        let ids: std::collections::HashSet<i64> = fused.iter().map(|h| h.seq).collect();
        // As many clear matches as the limit holds, each ahead of every other message.
        prop_assert_eq!(clear.iter().filter(|s| ids.contains(s)).count(), clear.len().min(limit));
        let first_vague = fused.iter().position(|h| h.weight < bar).unwrap_or(fused.len());
        prop_assert!(fused[first_vague..].iter().all(|h| h.weight < bar));
    }
}

fn request<'a>(question: &'a str, vector: Option<&'a [f32]>) -> AssembleRequest<'a> {
    AssembleRequest {
        query_vector: vector,
        ..fixture::request(question)
    }
}

#[test]
fn with_the_question_s_vector_a_turn_in_other_words_is_retrieved() {
    let mut s = chat(&[
        "How was your weekend?",
        "I made my grandmother's lasagna for tonight, everyone loved it.",
        "The weather was awful all week, so much rain.",
        "My car is at the mechanic again, the engine this time.",
        "Work is busy, a deadline every day and my boss keeps calling meetings.",
        "Same here, the meetings never end.",
        "Did you see the game?",
    ]);
    embed_all(&mut s);
    let question = "What did Sam bring to the party?";
    let words_only = assemble(&s, &request(question, None)).unwrap_or_else(|e| panic!("{e}"));
    assert!(!words_only.text.contains("lasagna"), "{}", words_only.text);
    let vector = embed(question);
    let with = assemble(&s, &request(question, Some(&vector))).unwrap_or_else(|e| panic!("{e}"));
    assert!(with.text.contains("grandmother's lasagna"), "{}", with.text);
    assert!(!with.over_budget);
}

#[test]
fn a_caller_asking_for_clear_matches_gets_only_the_nearest_few() {
    let turns: Vec<String> = (0..30)
        .map(|i| format!("dinner number {i} was food again"))
        .chain(std::iter::once("the end".to_string()))
        .collect();
    let refs: Vec<&str> = turns.iter().map(String::as_str).collect();
    let mut s = chat(&refs);
    embed_all(&mut s);
    let vector = embed("party food");
    let mut req = request("party food", Some(&vector));
    req.budget_tokens = 4_000;
    req.passages_min_weight = 100.0;
    let clear = assemble(&s, &req).unwrap_or_else(|e| panic!("{e}"));
    // No match by words clears a bar that high: the nearest few only.
    assert_eq!(clear.passages_included, CLEAR_NEAREST);
    assert_eq!(CLEAR_NEAREST, 8);
    req.passages_min_weight = 0.0;
    let any = assemble(&s, &req).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(any.passages_included, 30);
}
