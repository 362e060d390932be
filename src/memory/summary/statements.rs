//! What a sentence plainly states that is worth a record of its own beside the summary: a
//! decision, a fact about a person or a system, a preference, a measured outcome. Read by
//! cue phrases on the sentence's words; a question, a hypothetical and someone else's words
//! quoted state nothing of the speaker's (bench/memory-records.js measures both sides).

use super::cues::*;
use super::*;

/// What a sentence states that is worth a record of its own (beside the summary).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Statement {
    /// A decision taken ("we decided to ...", "we agreed on ..."): recorded as a fact.
    Decision,
    Fact,
    Preference,
    Outcome,
}

/// `text` lowercased with its words separated by single spaces and a space at each end,
/// so that a phrase matches only whole words (`" we decided "`).
fn words(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push(' ');
    for c in text.chars().flat_map(char::to_lowercase) {
        let c = if c == '\u{2019}' { '\'' } else { c };
        if c.is_alphanumeric() || matches!(c, '\'' | '%' | '$' | '.') {
            out.push(c);
        } else if !out.ends_with(' ') {
            out.push(' ');
        }
    }
    if !out.ends_with(' ') {
        out.push(' ');
    }
    out.replace(". ", " ")
}

/// Whether `words` (as [`words`] writes them) holds one of `phrases` as whole words.
fn has(words: &str, phrases: &[&str]) -> bool {
    let bytes = words.as_bytes();
    phrases.iter().any(|p| {
        words
            .match_indices(p)
            .any(|(i, _)| i > 0 && bytes[i - 1] == b' ' && bytes.get(i + p.len()) == Some(&b' '))
    })
}

/// "I" followed, within two words from [`BETWEEN`], by a verb of [`LIKING`].
fn says_it_likes(words: &str) -> bool {
    let w: Vec<&str> = words.split_whitespace().collect();
    w.iter().enumerate().any(|(i, t)| {
        (*t == "i" || *t == "i'd")
            && w[i + 1..]
                .iter()
                .take(3)
                .take_while(|x| !LIKING.contains(x))
                .all(|x| BETWEEN.contains(x))
            && w[i + 1..].iter().take(3).any(|x| LIKING.contains(x))
    })
}

/// Whether `sentence` is quoted from someone else: a quoted line (`> ...`) or text wholly
/// in quotation marks.
fn quoted(sentence: &str) -> bool {
    let s = sentence.trim();
    s.starts_with('>')
        || matches!(
            (s.chars().next(), s.chars().last()),
            (Some('"' | '\u{201C}' | '\''), Some('"' | '\u{201D}' | '\''))
        ) && s.chars().count() > 2
}

/// What `sentence` plainly states, if anything.
pub fn statement_of(sentence: &str) -> Option<Statement> {
    let s = sentence.trim();
    if s.ends_with('?') || s.ends_with('\u{FF1F}') || quoted(s) {
        return None;
    }
    let w = words(s);
    let first = w.split_whitespace().next().unwrap_or("");
    if QUESTION_OPENERS.contains(&first) {
        return None;
    }
    if has(&w, NOT_STATED) {
        return None;
    }
    if has(&w, PREFERENCE) || says_it_likes(&w) {
        return Some(Statement::Preference);
    }
    if has(&w, DECISION) {
        return Some(Statement::Decision);
    }
    let number = s.chars().any(|c| c.is_ascii_digit());
    let measure = number && (s.contains('%') || has(&w, UNITS));
    if has(&w, OUTCOME_CUES)
        || has(&w, MORE_OUTCOMES)
        || (number && has(&w, MEASURED))
        || (measure && has(&w, TAKES))
    {
        return Some(Statement::Outcome);
    }
    if has(&w, FACT) || has(&w, FACT_VERBS) {
        return Some(Statement::Fact);
    }
    // Any other plain statement with a subject and substance: something about a person,
    // a system or the world ("Nadia heads support in Toronto").
    let subject = !NOT_A_SUBJECT.contains(&first);
    (subject && substance_words(s).count() >= if number { 2 } else { 3 }).then_some(Statement::Fact)
}

/// The decisions, facts, preferences and outcomes `text` states, each a sentence of
/// substance kept whole up to [`ITEM_MAX_CHARS`].
pub fn statements(text: &str) -> Vec<(Statement, String)> {
    sentences(text)
        .into_iter()
        .filter(|s| !is_filler(s))
        .filter_map(|s| Some((statement_of(&s)?, clip(&s))))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_statements_become_records_and_questions_hypotheticals_and_quotes_do_not() {
        let stated = [
            (
                "We decided to move the launch to March 3.",
                Statement::Decision,
            ),
            (
                "We agreed on Postgres for the billing service.",
                Statement::Decision,
            ),
            ("Dana is my manager.", Statement::Fact),
            ("Staging runs in eu-west-1.", Statement::Fact),
            ("I prefer short answers with links.", Statement::Preference),
            (
                "p99 latency dropped from 480 ms to 120 ms.",
                Statement::Outcome,
            ),
            (
                "The migration failed on the orders table.",
                Statement::Outcome,
            ),
        ];
        for (s, kind) in stated {
            assert_eq!(statement_of(s), Some(kind), "{s}");
        }
        for s in [
            "Did we decide to move the launch to March 3?",
            "Should we go with Postgres for billing",
            "If we decided to move the launch, the press would need a week.",
            "Maybe staging runs in eu-west-1 now.",
            "Priya said we decided to move the launch to March 3.",
            "> We agreed on Postgres for the billing service.",
            "\"Dana is my manager.\"",
        ] {
            assert_eq!(statement_of(s), None, "{s}");
        }
    }
}
