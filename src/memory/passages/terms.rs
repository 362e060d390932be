//! What is indexed and what is searched for: a message's words (and the character pairs
//! of scripts written without spaces), the opaque scope tokens of a session and a lane,
//! a question's search terms and its fallback, and the FTS5 expressions over them.

use crate::core::search::tokenize::is_question_stop_word;
pub use crate::core::search::tokenize::is_unsegmented;
use sha2::{Digest, Sha256};

/// The text the index holds for a message: the message itself, with each run of an
/// unsegmented script replaced by its overlapping character pairs (a lone character stays
/// as it is), spaced so the tokenizer sees each pair as a word.
pub fn index_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let mut run: Vec<char> = Vec::new();
    for c in text.chars() {
        if is_unsegmented(c) {
            run.push(c);
            continue;
        }
        push_pairs(&mut out, &run);
        run.clear();
        out.push(c);
    }
    push_pairs(&mut out, &run);
    out
}

fn push_pairs(out: &mut String, run: &[char]) {
    match run {
        [] => {}
        [one] => {
            out.push(' ');
            out.push(*one);
            out.push(' ');
        }
        _ => {
            for pair in run.windows(2) {
                out.push(' ');
                out.push(pair[0]);
                out.push(pair[1]);
            }
            out.push(' ');
        }
    }
}

/// The scope tokens of a message of `session` in `lane`: `s` and `l` followed by the
/// first 64 bits of a SHA-256 of the session (and lane), in hex. Opaque, fixed-length,
/// one token each for the tokenizer; a search checks the stored session and lane of what
/// it finds, so a collision cannot leak another session's message.
pub fn scope_tokens(session: &str, lane: &str) -> String {
    format!("{} {}", session_token(session), lane_token(session, lane))
}

fn hex64(parts: &[&str]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p.as_bytes());
        h.update([0u8]);
    }
    h.finalize()[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

pub(crate) fn session_token(session: &str) -> String {
    format!("s{}", hex64(&[session]))
}

pub(crate) fn lane_token(session: &str, lane: &str) -> String {
    format!("l{}", hex64(&[session, lane]))
}

/// The terms a question is searched by, in the order they first appear, each once: its
/// words that are not [question stop words](is_question_stop_word) (or all its words, when each is one), lower-cased,
/// and the character pairs of its unsegmented runs.
pub fn query_terms(text: &str) -> Vec<String> {
    let (words, stops) = split_terms(text);
    if words.is_empty() {
        stops
    } else {
        words
    }
}

/// The [question stop words](is_question_stop_word) of a question that [`query_terms`] left out: what a search falls
/// back on when none of its other terms is in the lane ("Where is Sam from?" about a
/// chat where the name is never written).
pub fn fallback_terms(text: &str) -> Vec<String> {
    let (words, stops) = split_terms(text);
    if words.is_empty() {
        Vec::new()
    } else {
        stops
    }
}

fn split_terms(text: &str) -> (Vec<String>, Vec<String>) {
    let mut words: Vec<String> = Vec::new();
    let mut stops: Vec<String> = Vec::new();
    for token in text.split(|c: char| !c.is_alphanumeric()) {
        if token.is_empty() {
            continue;
        }
        let chars: Vec<char> = token.chars().collect();
        if chars.iter().any(|&c| is_unsegmented(c)) {
            // Split the token into its segmented and unsegmented runs.
            let mut i = 0;
            while i < chars.len() {
                let uns = is_unsegmented(chars[i]);
                let start = i;
                while i < chars.len() && is_unsegmented(chars[i]) == uns {
                    i += 1;
                }
                let part = &chars[start..i];
                if uns {
                    if part.len() == 1 {
                        push_once(&mut words, part[0].to_string());
                    }
                    for pair in part.windows(2) {
                        push_once(&mut words, pair.iter().collect());
                    }
                } else {
                    push_word(&mut words, &mut stops, &part.iter().collect::<String>());
                }
            }
        } else {
            push_word(&mut words, &mut stops, token);
        }
    }
    (words, stops)
}

fn push_word(words: &mut Vec<String>, stops: &mut Vec<String>, token: &str) {
    let lower = token.to_lowercase();
    if is_question_stop_word(&lower) {
        push_once(stops, lower);
    } else {
        push_once(words, lower);
    }
}

fn push_once(list: &mut Vec<String>, term: String) {
    if !list.contains(&term) {
        list.push(term);
    }
}

/// A term as an FTS5 string: quoted, so no query syntax gets through.
pub(crate) fn fts_quote(term: &str) -> String {
    format!("\"{}\"", term.replace('"', "\"\""))
}

/// An FTS5 expression over the body column: the terms, each quoted, joined by `op`.
pub(crate) fn body_expression(terms: &[String], op: &str) -> String {
    let quoted: Vec<String> = terms.iter().map(|t| fts_quote(t)).collect();
    format!("body : ({})", quoted.join(&format!(" {op} ")))
}
