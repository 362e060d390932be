//! Recall beyond the question's own words, read off the question and the conversation
//! itself (no model): a question often shares no word with the turn that answers it
//! ("What did Sam bring to the party?" and "I made my grandmother's lasagna for tonight").
//!
//! - Feedback ([`feedback_terms`]): the best turns of a first search lend their words to a
//!   second one (pseudo-relevance feedback), each weighing at most [`EXPANSION_WEIGHT`] of a
//!   question's word, by how well the turns that hold it matched; a word several of them
//!   share weighs more, and a name (a capitalised word inside a sentence) counts
//!   [`NAME_FACTOR`] times: the second round gathers around the people, places and things
//!   the first one found, which is what a question needing two turns needs.
//! - Time: a question asking when ([`asks_when`]) also searches for the words that tell a
//!   time ([`TIME_TERMS`], at [`TIME_WEIGHT`]), so of the turns about its subject the one
//!   that says when ranks first; a question naming a time ("in May", "last week", "in
//!   2023") ranks the turns written then higher ([`named_window`], see
//!   [`super::Signals`]).
//! - Preferences ([`asks_preference`]): a question about what someone likes also finds
//!   the turns where that person said what they like ([`super::stated`]), whatever the
//!   words ("What does Ann enjoy doing?" and "I love climbing").
//! - Names ([`name_candidates`]): the people a question names, for
//!   [`crate::memory::store::MemoryStore::recall`] to tell whose turns they are.

use crate::core::search::tokenize::is_question_stop_word;
use crate::core::time::{civil_from_days, days_from_civil};
use crate::memory::summary::LIKING;

/// The best turns of the first round that lend their words to the second.
pub const FEEDBACK_TURNS: usize = 5;
/// Words a second round adds at most.
pub const EXPANSION_TERMS: usize = 8;
/// What the best-supported added word weighs against a word of the question (each term
/// scores its idf times its weight); the others weigh less, by their support.
pub const EXPANSION_WEIGHT: f64 = 0.3;
/// How much more a name weighs than another word of the best turns when words are added.
pub const NAME_FACTOR: f64 = 2.0;
/// What a word that tells a time weighs, against a word of the question, in a search for
/// a question asking when.
pub const TIME_WEIGHT: f64 = 0.3;
/// Words that tell when something happened. "May" is left out: it is as often a verb.
pub const TIME_TERMS: &[&str] = &[
    "yesterday",
    "today",
    "tonight",
    "tomorrow",
    "ago",
    "last",
    "week",
    "weekend",
    "month",
    "year",
    "morning",
    "afternoon",
    "evening",
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
    "january",
    "february",
    "march",
    "april",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];
/// Month names, January first.
const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];
const DAY_MS: i64 = 86_400_000;

/// The words of `text` with where each starts a sentence: `(word, capitalised inside a
/// sentence)`. Words are runs of letters and digits.
fn words(text: &str) -> Vec<(&str, bool)> {
    let mut sentence_start = true;
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    for (i, c) in text
        .char_indices()
        .chain(std::iter::once((text.len(), ' ')))
    {
        if c.is_alphanumeric() {
            start.get_or_insert(i);
            continue;
        }
        if let Some(s) = start.take() {
            let w = &text[s..i];
            let capital = w.chars().next().is_some_and(char::is_uppercase);
            out.push((w, capital && !sentence_start));
            sentence_start = false;
        }
        if matches!(c, '.' | '!' | '?' | '\n' | ':' | '"') {
            sentence_start = true;
        }
    }
    out
}

/// Whether a lower-cased word could lend meaning to a search: not a stop word, not a
/// one- or two-letter word, not a bare number under 1,000 (a year is kept).
fn lends(word: &str) -> bool {
    let n = word.chars().count();
    if n < 3 || is_question_stop_word(word) {
        return false;
    }
    !(word.chars().all(|c| c.is_ascii_digit()) && n < 4)
}

/// The words the best turns of a first round lend to a second, with what each weighs
/// against a question's word: `turns` are the first round's best, best first, with
/// their scores; a word of the question (`question_terms`) is not lent again.
///
/// A turn lends each of its words its share of the turn's score (relative to the best
/// turn's), a name [`NAME_FACTOR`] shares; the [`EXPANSION_TERMS`] words with the most
/// are kept, the first weighing [`EXPANSION_WEIGHT`] and the others in proportion. Ties
/// go to the word met first.
pub fn feedback_terms(question_terms: &[String], turns: &[(&str, f64)]) -> Vec<(String, f64)> {
    let top = turns.first().map_or(0.0, |t| t.1);
    if top <= 0.0 {
        return Vec::new();
    }
    let mut support: Vec<(String, f64)> = Vec::new();
    for &(text, score) in turns.iter().take(FEEDBACK_TURNS) {
        let mut own: Vec<(String, bool)> = Vec::new();
        for (w, name) in words(text) {
            let lower = w.to_lowercase();
            if !lends(&lower) || question_terms.contains(&lower) {
                continue;
            }
            match own.iter_mut().find(|(t, _)| *t == lower) {
                Some(e) => e.1 |= name,
                None => own.push((lower, name)),
            }
        }
        if own.is_empty() {
            continue;
        }
        #[allow(clippy::cast_precision_loss)] // a turn's words
        let share = score / top / own.len() as f64;
        for (t, name) in own {
            let w = if name { share * NAME_FACTOR } else { share };
            match support.iter_mut().find(|(s, _)| *s == t) {
                Some(e) => e.1 += w,
                None => support.push((t, w)),
            }
        }
    }
    // Stable: ties keep the order the words were met in.
    support.sort_by(|a, b| b.1.total_cmp(&a.1));
    support.truncate(EXPANSION_TERMS);
    let best = support.first().map_or(0.0, |s| s.1);
    support
        .into_iter()
        .map(|(t, w)| (t, EXPANSION_WEIGHT * w / best))
        .collect()
}

/// Whether `question` asks when something happened: it opens on "when", or asks what
/// (or which) time, date, day, week, month or year, or how long ago.
pub fn asks_when(question: &str) -> bool {
    let lower: Vec<String> = words(question)
        .into_iter()
        .map(|(w, _)| w.to_lowercase())
        .collect();
    if lower.first().is_some_and(|w| w == "when") {
        return true;
    }
    lower.windows(2).any(|p| {
        (matches!(p[0].as_str(), "what" | "which")
            && matches!(
                p[1].as_str(),
                "time" | "date" | "day" | "week" | "month" | "year"
            ))
            || (p[0] == "long" && p[1] == "ago")
    }) || lower.iter().skip(1).any(|w| w == "when")
}

/// Words before a bare "like" that make it the verb of liking ("does Ann like", "don't
/// you like"), split as [`words`] splits "doesn't". Not "would": "would like" is a wish
/// ("Where would Ann like to go?"), not a liking.
const LIKE_AUXILIARIES: &[&str] = &["do", "does", "did", "don", "doesn", "didn"];
/// Words right before "like" that make it likeness ("look like", "what is it like").
const LIKENESS: &[&str] = &[
    "look", "looks", "looked", "sound", "sounds", "feel", "feels", "seem", "seems", "taste",
    "smell", "is", "was", "are", "were", "be", "it", "that", "this",
];

/// Whether `question` asks what someone likes or dislikes: one of its words is a verb of
/// liking ([`LIKING`], the verbs the summary reads preferences by), as is or with "s",
/// "d" or "ed" ("enjoys", "loved"), but not after "would" (a wish: "Where would Ann
/// like to go?") nor "in love"; a bare "like" only after a "do" and not as likeness
/// ("What does Ann like?", not "What is Lisbon like?").
pub fn asks_preference(question: &str) -> bool {
    let lower: Vec<String> = words(question)
        .into_iter()
        .map(|(w, _)| w.to_lowercase())
        .collect();
    lower.iter().enumerate().any(|(i, w)| {
        let before = i.checked_sub(1).map(|j| lower[j].as_str());
        let verb = LIKING.iter().find(|v| {
            w == *v
                || w.strip_prefix(*v)
                    .is_some_and(|end| matches!(end, "s" | "d" | "ed"))
        });
        let wish = lower[..i]
            .iter()
            .any(|x| matches!(x.as_str(), "would" | "wouldn" | "d"));
        match verb {
            None => false,
            _ if wish => false,
            Some(&"love") if before == Some("in") => false,
            Some(&"like") if w == "like" => {
                lower[..i]
                    .iter()
                    .any(|x| LIKE_AUXILIARIES.contains(&x.as_str()))
                    && !before.is_some_and(|b| LIKENESS.contains(&b))
            }
            Some(_) => true,
        }
    })
}

/// The names a question mentions: its words capitalised inside a sentence (not the
/// word a sentence opens on, capitalised whatever it is) that are neither question stop
/// words nor greetings, lower-cased, each once, at most three.
pub fn name_candidates(question: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (w, inside) in words(question) {
        let lower = w.to_lowercase();
        if !inside
            || w.chars().count() < 2
            || is_question_stop_word(&lower)
            || GREETINGS.contains(&lower.as_str())
        {
            continue;
        }
        if !out.contains(&lower) {
            out.push(lower);
        }
        if out.len() == 3 {
            break;
        }
    }
    out
}

/// Words that open a greeting or thanks addressed to someone ("Hey Ann", "Thanks Bo"),
/// and interjections: never a name.
pub const GREETINGS: &[&str] = &[
    "hey",
    "hi",
    "hello",
    "thanks",
    "thank",
    "bye",
    "congrats",
    "congratulations",
    "dear",
    "yo",
    "morning",
    "evening",
    "night",
    "welcome",
    "sorry",
    "wow",
    "aw",
    "aww",
    "omg",
    "oh",
];

/// The time `question` names, as a window `[from, until]` in ms since 1970, read at
/// `now_ms` (UTC): "yesterday", "last week" (the 14 days before now), "this week" (the 7
/// days before now), "last month"/"last year" (the calendar month or year before now's),
/// "this month"/"this year", a month after "in", "during", "since" or "of" ("in May": its
/// latest start at or before now, or the year written after it), and a year after one of
/// those words ("in 2023").
pub fn named_window(question: &str, now_ms: i64) -> Option<(i64, i64)> {
    let w: Vec<String> = words(question)
        .into_iter()
        .map(|(w, _)| w.to_lowercase())
        .collect();
    let today = now_ms.div_euclid(DAY_MS);
    let (year, month, _) = civil_from_days(today);
    let month_span = |y: i64, m: u32| {
        let (ny, nm) = if m == 12 { (y + 1, 1) } else { (y, m + 1) };
        (
            days_from_civil(y, m, 1) * DAY_MS,
            days_from_civil(ny, nm, 1) * DAY_MS - 1,
        )
    };
    let year_span = |y: i64| {
        (
            days_from_civil(y, 1, 1) * DAY_MS,
            days_from_civil(y + 1, 1, 1) * DAY_MS - 1,
        )
    };
    let year_at = |i: usize| -> Option<i64> {
        let y: i64 = w.get(i)?.parse().ok()?;
        (1970..=9999).contains(&y).then_some(y)
    };
    for (i, word) in w.iter().enumerate() {
        let next = w.get(i + 1).map(String::as_str);
        match (word.as_str(), next) {
            ("yesterday", _) => return Some(((today - 1) * DAY_MS, today * DAY_MS - 1)),
            ("last", Some("week")) => return Some((now_ms - 14 * DAY_MS, now_ms)),
            ("this", Some("week")) => return Some((now_ms - 7 * DAY_MS, now_ms)),
            ("last", Some("month")) => {
                let (y, m) = if month == 1 {
                    (year - 1, 12)
                } else {
                    (year, month - 1)
                };
                return Some(month_span(y, m));
            }
            ("this", Some("month")) => return Some(month_span(year, month)),
            ("last", Some("year")) => return Some(year_span(year - 1)),
            ("this", Some("year")) => return Some(year_span(year)),
            ("in" | "during" | "since" | "of", Some(n)) => {
                if let Some(m) = MONTHS.iter().position(|&name| name == n) {
                    let m = u32::try_from(m + 1).unwrap_or(1);
                    let y = year_at(i + 2).unwrap_or(if m <= month { year } else { year - 1 });
                    return Some(month_span(y, m));
                }
                if let Some(y) = year_at(i + 1) {
                    return Some(year_span(y));
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests;
