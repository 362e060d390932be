//! The words of records: what a statement is about (what supersession compares) and what
//! a record search looks for.

use super::{SUPERSEDE_MAX_ADDED, SUPERSEDE_MAX_CHANGED, SUPERSEDE_MIN_SHARED};
use crate::core::search::tokenize::is_question_stop_word;
use crate::memory::passages::terms::{fts_quote, is_unsegmented};

/// Whether a statement of the subject words `new` changes one of `old` (see
/// `MemoryStore::supersede`).
pub fn changes(new: &[String], old: &[String]) -> bool {
    let shared = old.iter().filter(|w| new.contains(w)).count();
    let changed = old.len() - shared;
    let added = new.len() - shared;
    shared >= SUPERSEDE_MIN_SHARED
        && (1..=SUPERSEDE_MAX_CHANGED).contains(&changed)
        && (1..=SUPERSEDE_MAX_ADDED).contains(&added)
}

/// The distinct words of a statement that say what it is about: lower-cased, two
/// characters or more, stop words left out.
pub fn subject_words(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for token in text.split(|c: char| !c.is_alphanumeric()) {
        let w = token.to_lowercase();
        if w.chars().count() >= 2 && !is_question_stop_word(&w) && !out.contains(&w) {
            out.push(w);
        }
    }
    out
}

/// FTS5 queries for the words of `text` (see [`query_words`]), each term quoted so no
/// query syntax gets through, joined by OR.
pub fn fts_queries(text: &str) -> (Option<String>, Option<String>) {
    let (words, grams) = query_words(text);
    let join = |v: Vec<String>| {
        (!v.is_empty()).then(|| {
            v.iter()
                .map(|w| fts_quote(w))
                .collect::<Vec<_>>()
                .join(" OR ")
        })
    };
    (join(words), join(grams))
}

/// What a record search looks for in `text`: word terms (two characters or more) for the
/// word index, and the three-character windows of runs of unsegmented scripts for the
/// trigram index.
pub fn query_words(text: &str) -> (Vec<String>, Vec<String>) {
    let mut words: Vec<String> = Vec::new();
    let mut grams: Vec<String> = Vec::new();
    for token in text.split(|c: char| !c.is_alphanumeric()) {
        if token.chars().count() < 2 {
            continue;
        }
        let unsegmented = token.chars().any(is_unsegmented);
        if unsegmented {
            // No word boundaries to go by: every three-character window is a term, and
            // BM25 ranks the records that share the most of them first.
            let chars: Vec<char> = token.chars().collect();
            for w in chars.windows(3) {
                let gram: String = w.iter().collect();
                if !grams.contains(&gram) {
                    grams.push(gram);
                }
            }
        } else {
            let lower = token.to_lowercase();
            if !words.contains(&lower) {
                words.push(lower);
            }
        }
    }
    // The question's own words ("what", "did", "the" are in nearly every record: each
    // would have BM25 score every record of the store); all of them when that is all it has.
    if words.iter().any(|w| !is_question_stop_word(w)) {
        words.retain(|w| !is_question_stop_word(w));
    }
    (words, grams)
}
