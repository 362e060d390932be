use super::*;

#[test]
fn stop_words_are_sorted_for_binary_search() {
    assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
    assert!(STOP_KEYS.windows(2).all(|w| w[0] < w[1]));
    assert!(STOP_WORDS.iter().all(|w| w.len() <= 8 && is_stop_word(w)));
    for w in [
        "th", "thee", "the\0", "them1", "abouts", "", "über", "theirs",
    ] {
        assert!(!is_stop_word(w), "{w:?}");
    }
}

#[test]
fn ascii_words_are_lowercased_and_split_on_punctuation() {
    assert_eq!(
        terms("Rollout PLAN: v2.4, p99!"),
        ["rollout", "plan", "v2", "p99"]
    );
}

#[test]
fn possessives_and_inflections_meet_their_stem() {
    for w in [
        "deploy",
        "deploys",
        "deploying",
        "deployed",
        "deployment",
        "deployments",
    ] {
        assert_eq!(terms(w), ["deploy"], "{w}");
    }
    assert_eq!(terms("the rollout's plan"), ["the", "rollout", "plan"]);
    for w in ["release", "releases", "released", "releasing"] {
        assert_eq!(terms(w), ["releas"], "{w}");
    }
    assert_eq!(terms("planned"), terms("plan"));
    assert_eq!(terms("replies"), terms("reply"));
    assert_eq!(terms("caching"), terms("cache"));
    assert_eq!(terms("rolling"), ["roll"]);
    assert_eq!(terms("status redis"), ["status", "redis"]);
}

#[test]
fn accents_are_folded() {
    assert_eq!(terms("Déploiement"), terms("deploiement"));
    assert_eq!(terms("migración"), ["migracion"]);
    assert_eq!(terms("migraciones"), terms("migración"));
    assert_eq!(terms("Größe Straße"), terms("grosse strasse"));
    // Decomposed input (e + combining acute) folds the same as precomposed.
    assert_eq!(terms("de\u{301}ploiement"), terms("déploiement"));
    assert_eq!(terms("ＡＰＩ"), ["api"]);
    assert_eq!(terms("Œuvre"), ["oeuvr"]);
}

#[test]
fn cjk_runs_become_bigrams() {
    assert_eq!(terms("デプロイ"), ["デプ", "プロ", "ロイ"]);
    let doc = terms("auth-gatewayのデプロイが完了しました");
    for t in terms("デプロイ") {
        assert!(doc.contains(&t), "{t}");
    }
    assert_eq!(terms("障"), ["障"]);
    assert_eq!(&terms("auth-gatewayの")[..2], ["auth", "gateway"]);
}

#[test]
fn single_letters_and_long_blobs_are_dropped_stop_words_kept() {
    assert_eq!(
        terms("what is the plan for a b c"),
        ["what", "is", "the", "plan", "for"]
    );
    assert!(is_stop_word("the") && !is_stop_word("would") && !is_stop_word("war"));
    assert!(terms(&"x".repeat(65)).is_empty());
    assert_eq!(terms(&"y".repeat(64)).len(), 1);
    assert!(terms("").is_empty());
    assert!(terms("  ,;; ").is_empty());
}

#[test]
fn source_words_are_reported_before_stemming() {
    let mut seen = Vec::new();
    Tokenizer::new().terms("Deploying デプロイ", |t, w| {
        seen.push((t.to_string(), w.to_string()));
    });
    assert_eq!(seen[0], ("deploy".to_string(), "deploying".to_string()));
    assert_eq!(seen[1].1, "デプロイ");
}

proptest::proptest! {
    #[test]
    fn any_text_tokenizes_without_panicking(s in ".{0,200}") {
        for t in terms(&s) {
            proptest::prop_assert!(!t.is_empty());
            proptest::prop_assert!(t.len() <= MAX_WORD_BYTES);
        }
    }

    #[test]
    fn tokenizing_is_case_insensitive_for_ascii(s in "[a-zA-Z ]{0,80}") {
        proptest::prop_assert_eq!(terms(&s), terms(&s.to_lowercase()));
    }
}

/// The tokenizer as first written, a character at a time: the byte-level reading of
/// ASCII runs must give the same terms and words.
fn reference(text: &str) -> Vec<(String, String)> {
    let mut t = Tokenizer::new();
    let mut out = Vec::new();
    let mut emit = |a: &str, b: &str| out.push((a.to_string(), b.to_string()));
    for c in text.chars() {
        if c.is_ascii() {
            if c.is_ascii_alphanumeric() {
                t.flush_cjk(&mut emit);
                t.word.push(c.to_ascii_lowercase());
            } else {
                t.flush_word(&mut emit);
                t.flush_cjk(&mut emit);
            }
        } else {
            t.fold(c, &mut emit);
        }
    }
    t.flush_word(&mut emit);
    t.flush_cjk(&mut emit);
    out
}

fn pairs(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    Tokenizer::new().terms(text, |a, b| out.push((a.to_string(), b.to_string())));
    out
}

#[test]
fn ascii_runs_join_the_letters_around_them() {
    assert_eq!(terms("DÉPLOIEMENTs"), ["deploi"]);
    assert_eq!(terms("Straße2go"), ["strasse2go"]);
    assert_eq!(
        terms("abcデプロイxyz"),
        ["abc", "デプ", "プロ", "ロイ", "xyz"]
    );
}

proptest::proptest! {
    #[test]
    fn reads_as_the_character_at_a_time_reference(
        s in "([a-zA-Z0-9]{0,12}[ .'_\\-]?(é|É|ß|ｱ|ＡＰＩ|デプロイ|🚀|Ü|ı|\u{301})?){0,12}"
    ) {
        proptest::prop_assert_eq!(pairs(&s), reference(&s));
    }
}

#[test]
fn question_words_are_sorted_and_add_to_the_stop_words() {
    assert!(QUESTION_WORDS.windows(2).all(|w| w[0] < w[1]));
    assert!(QUESTION_WORDS.iter().all(|w| !is_stop_word(w)));
    for w in ["the", "and", "what", "why", "you", "yeah", "de", "und"] {
        assert!(is_question_stop_word(w), "{w}");
    }
    for w in ["venue", "lisbon", "deploy", "sam"] {
        assert!(!is_question_stop_word(w), "{w}");
    }
}

#[test]
fn one_rule_says_which_scripts_are_written_without_spaces() {
    for c in ['デ', '漢', '한', 'ก', 'ｱ', '𠀀'] {
        assert!(is_unsegmented(c), "{c}");
    }
    for c in ['a', 'é', 'я', '1', ' '] {
        assert!(!is_unsegmented(c), "{c}");
    }
}
