//! Rolling thread summaries, deterministic: the structure, when a lane is compacted, and
//! the extractive summarizer that folds messages into a summary without a model call.
//!
//! The extractive rules, per sentence of each folded message (a sentence ends at `.`, `!`
//! or `?` before a space, at `。！？`, or at a line break; it is kept whole up to 160
//! characters, then cut with `…`):
//! - a sentence ending in `?` from the user is an open question;
//! - one with a decision cue (`decided`, `we'll`, `we will`, `let's go with`, `going with`,
//!   `agreed`, `approved`) is a decision;
//! - one with an action cue (`todo`, `action item`, `i'll`, `i will`, `need to`,
//!   `remind me`, `follow up`) is a pending action;
//! - one with an outcome cue (`failed`, `succeeded`, `worked`, `fixed`, `rolled back`,
//!   `deployed`, `broke`, `passed`) is an outcome;
//! - one with a fact cue (`i prefer`, `prefers`, `always`, `never`, `we use`, `must`,
//!   `deadline`, `budget`) is an important fact;
//! - the first rule that matches wins, in the order decision, action, outcome, fact,
//!   question. Each section keeps [`SECTION_MAX`] items, without repeats: when full, it
//!   gives up its oldest item that names nothing specific (no number, no name), so an
//!   older decision about "Lisbon" or "v2.4" outlasts newer small talk.
//! - filler is never kept: a sentence with fewer than two words of substance and no
//!   number ("Agreed, Mel!", "I'll do that.", "You've always been there for me.", "I will
//!   build the rest of the plan around it."): the search's stop words, pleasantries and
//!   vague verbs and nouns ([`FILLER_WORDS`]) are not substance;
//! - a question is open until the other side answers: the next message from the other
//!   side (or the first of the next fold) removes the questions asked before it;
//! - a decision longer than [`ITEM_MAX_CHARS`] is kept whole, as consecutive items cut at
//!   spaces, each continued with `…`.
//!
//! Besides the summary, a compaction writes what the folded messages state as records of
//! their own ([`statements`]): preferences ("I prefer", "my favorite"), outcomes and
//! facts, each with the message it came from, once per session.
//!
//! A summary is updated incrementally: the previous summary plus the newly folded
//! messages, never rebuilt from the whole history.

use crate::core::search::tokenize::is_question_stop_word;

/// Items kept per section of a summary (the newest).
pub const SECTION_MAX: usize = 8;
/// Longest sentence kept whole, in characters.
pub const ITEM_MAX_CHARS: usize = 160;

/// When a lane is compacted, and how much of it stays verbatim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompactionPolicy {
    /// Compact when the lane has more recent (not yet summarized) messages than this.
    pub max_recent_messages: usize,
    /// Compact when the recent messages' estimated tokens exceed this.
    pub max_recent_tokens: u64,
    /// Compact when the summary is older than this (ms) and there is something to fold.
    pub max_summary_age_ms: i64,
    /// The most messages a compaction leaves verbatim: the newest, within half the token
    /// trigger (its low-water mark), so a lane of long turns gets back well under it.
    pub keep_recent: usize,
    /// The fewest messages a compaction due by a threshold folds: until it would fold this
    /// many, none is due, so a lane of any turn length compacts in steps of at least this
    /// many messages (a forced one folds whatever is beyond the kept).
    pub min_fold: usize,
}

impl Default for CompactionPolicy {
    fn default() -> Self {
        CompactionPolicy {
            max_recent_messages: 30,
            max_recent_tokens: 2_500,
            max_summary_age_ms: 24 * 3_600_000,
            keep_recent: 10,
            min_fold: 10,
        }
    }
}

/// Why a lane is due for compaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    Messages(usize),
    Tokens(u64),
    Age(i64),
    /// Asked for (a forced compaction), though no threshold was passed.
    Forced,
    /// At a fold point the caller named (`through`), such as an assembly's
    /// `fold_through`: the kept window passed its share of the budget.
    Through,
}

impl CompactionPolicy {
    /// How many of a lane's unsummarized messages a compaction leaves verbatim, given
    /// their token counts newest first: the newest, at most [`keep_recent`](Self::keep_recent)
    /// of them and within half of [`max_recent_tokens`](Self::max_recent_tokens) (the
    /// newest one always).
    pub fn kept(&self, newest_first: impl IntoIterator<Item = u64>) -> usize {
        let low_water = self.max_recent_tokens / 2;
        let mut used = 0u64;
        let mut kept = 0;
        for tokens in newest_first.into_iter().take(self.keep_recent) {
            used = used.saturating_add(tokens);
            if kept > 0 && used > low_water {
                break;
            }
            kept += 1;
        }
        kept
    }

    /// Whether a lane with `recent` unsummarized messages of `tokens` estimated tokens,
    /// whose summary was updated `age_ms` ago (`None`: never), is due for compaction.
    /// Nothing is due when there is nothing beyond the messages kept verbatim.
    pub fn due(&self, recent: usize, tokens: u64, age_ms: Option<i64>) -> Option<Trigger> {
        if recent <= self.keep_recent {
            return None;
        }
        if recent > self.max_recent_messages {
            return Some(Trigger::Messages(recent));
        }
        if tokens > self.max_recent_tokens {
            return Some(Trigger::Tokens(tokens));
        }
        match age_ms {
            Some(age) if age > self.max_summary_age_ms => Some(Trigger::Age(age)),
            _ => None,
        }
    }
}

/// The structure of a thread summary.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    pub goals: Vec<String>,
    pub decisions: Vec<String>,
    pub facts: Vec<String>,
    pub outcomes: Vec<String>,
    pub pending: Vec<String>,
}

/// Section indexes, in the order of [`HEADINGS`].
const GOALS: usize = 0;
const DECISIONS: usize = 1;
const FACTS: usize = 2;
const OUTCOMES: usize = 3;
const PENDING: usize = 4;

/// What says an outcome: what happened to something done.
const OUTCOME_CUES: &[&str] = &[
    "failed",
    "succeeded",
    "worked",
    "fixed",
    "rolled back",
    "deployed",
    "broke",
    "passed",
];

/// The cue rules, in the order they are tried: a sentence containing one of the cues goes
/// to the section.
const RULES: [(&[&str], usize); 4] = [
    (
        &[
            "decided",
            "we'll",
            "we will",
            "let's go with",
            "going with",
            "agreed",
            "approved",
        ],
        DECISIONS,
    ),
    (
        &[
            "todo",
            "action item",
            "i'll",
            "i will",
            "need to",
            "remind me",
            "follow up",
        ],
        PENDING,
    ),
    (OUTCOME_CUES, OUTCOMES),
    (
        &[
            "i prefer", "prefers", "always", "never", "we use", "must", "deadline", "budget",
        ],
        FACTS,
    ),
];

/// Words that carry no substance in a summary item besides the words a question is not searched by ([`is_question_stop_word`])
/// (pronouns, auxiliaries, determiners): pleasantries and acknowledgements, vague verbs
/// and nouns, and the section cues themselves. A sentence needs two words outside both
/// lists (or a number) to be kept.
pub const FILLER_WORDS: &[&str] = &[
    "agree",
    "agreed",
    "always",
    "anything",
    "around",
    "awesome",
    "back",
    "build",
    "cool",
    "decided",
    "done",
    "go",
    "going",
    "good",
    "great",
    "know",
    "lets",
    "like",
    "lot",
    "love",
    "make",
    "much",
    "need",
    "never",
    "nice",
    "one",
    "plan",
    "really",
    "rest",
    "right",
    "see",
    "something",
    "sounds",
    "sure",
    "take",
    "thank",
    "thanks",
    "thing",
    "things",
    "think",
    "want",
    "way",
    "well",
    "work",
];

/// Whether an item names something specific: a number, or a capitalized word after its
/// first (a name, a place, a product). Such items outlast the others of a full section.
pub fn is_specific(item: &str) -> bool {
    item.chars().any(|c| c.is_ascii_digit())
        || item.split_whitespace().skip(1).any(|w| {
            w.trim_start_matches(|c: char| !c.is_alphanumeric())
                .starts_with(char::is_uppercase)
                && !w.starts_with("I'")
                && w != "I"
        })
}

/// Whether `sentence` is filler: fewer than two words of substance and no digit.
pub fn is_filler(sentence: &str) -> bool {
    if sentence.chars().any(|c| c.is_ascii_digit()) {
        return false;
    }
    substance_words(sentence).take(2).count() < 2
}

/// The words of `sentence` outside the stop and filler words.
pub fn substance_words(sentence: &str) -> impl Iterator<Item = &str> {
    sentence
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .filter(|w| {
            let w = w.to_lowercase();
            !is_question_stop_word(&w) && !FILLER_WORDS.contains(&w.as_str())
        })
}

const HEADINGS: [&str; 5] = [
    "Current goals / open questions:",
    "Decisions made:",
    "Important facts:",
    "Recent outcomes:",
    "Pending actions:",
];

impl Summary {
    fn sections(&self) -> [&Vec<String>; 5] {
        [
            &self.goals,
            &self.decisions,
            &self.facts,
            &self.outcomes,
            &self.pending,
        ]
    }

    fn sections_mut(&mut self) -> [&mut Vec<String>; 5] {
        [
            &mut self.goals,
            &mut self.decisions,
            &mut self.facts,
            &mut self.outcomes,
            &mut self.pending,
        ]
    }

    /// The summary as stored: each heading, then its items as `- ` lines (`- (none)` for
    /// an empty section).
    pub fn render(&self) -> String {
        let mut out = String::new();
        for (heading, items) in HEADINGS.iter().zip(self.sections()) {
            out.push_str(heading);
            out.push('\n');
            if items.is_empty() {
                out.push_str("- (none)\n");
            }
            for item in items {
                out.push_str("- ");
                out.push_str(item);
                out.push('\n');
            }
        }
        out
    }

    /// Reads a summary [`Summary::render`] wrote; `None` for text of another structure.
    pub fn parse(text: &str) -> Option<Summary> {
        let mut s = Summary::default();
        let mut section: Option<usize> = None;
        for line in text.lines() {
            if let Some(i) = HEADINGS.iter().position(|h| line.trim() == *h) {
                section = Some(i);
                continue;
            }
            let item = line.trim().strip_prefix("- ")?;
            let i = section?;
            if item != "(none)" {
                s.sections_mut()[i].push(item.to_string());
            }
        }
        section.map(|_| s)
    }

    /// Checks a summary written by someone else (a model) and reads it: all five
    /// headings, each once and in order, only `- ` items under them, at most
    /// [`SECTION_MAX`] items per section, each of at most [`ITEM_MAX_CHARS`] characters.
    /// The error says what was wrong.
    pub fn validate(text: &str) -> Result<Summary, &'static str> {
        let mut s = Summary::default();
        let mut next = 0;
        for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
            if let Some(i) = HEADINGS.iter().position(|h| line == *h) {
                if i != next {
                    return Err("sections missing, repeated or out of order");
                }
                next += 1;
                continue;
            }
            if next == 0 {
                return Err("text before the first section");
            }
            let Some(item) = line.strip_prefix("- ").or_else(|| line.strip_prefix("* ")) else {
                return Err("a line that is neither a heading nor a \"- \" item");
            };
            if item.chars().count() > ITEM_MAX_CHARS {
                return Err("an item longer than 160 characters");
            }
            let mut sections = s.sections_mut();
            let list = &mut sections[next - 1];
            if item != "(none)" {
                list.push(item.to_string());
            }
            if list.len() > SECTION_MAX {
                return Err("a section with more than 8 items");
            }
        }
        if next != HEADINGS.len() {
            return Err("sections missing, repeated or out of order");
        }
        Ok(s)
    }

    /// Removes the oldest item of the longest section (the first such section in heading
    /// order on a tie): how a summary is cut to fit a budget. False when it has none.
    pub fn drop_oldest(&mut self) -> bool {
        let sections = self.sections_mut();
        let mut longest: Option<usize> = None;
        for (i, s) in sections.iter().enumerate() {
            if !s.is_empty() && longest.is_none_or(|l| sections[l].len() < s.len()) {
                longest = Some(i);
            }
        }
        match longest {
            Some(i) => {
                sections[i].remove(0);
                true
            }
            None => false,
        }
    }

    /// How many items the summary holds in all.
    pub fn items(&self) -> usize {
        self.sections().iter().map(|s| s.len()).sum()
    }

    /// Adds `item` as the newest of `list`; a full list gives up its oldest item that
    /// names nothing specific (see [`is_specific`]), else its oldest.
    fn add(list: &mut Vec<String>, item: String) {
        list.retain(|x| *x != item);
        list.push(item);
        while list.len() > SECTION_MAX {
            let at = list[..list.len() - 1]
                .iter()
                .position(|x| !is_specific(x))
                .unwrap_or(0);
            list.remove(at);
        }
    }

    /// Folds messages (`(from_user, states_facts, text)`, oldest first) into this summary
    /// by the extractive rules of this module. `states_facts`: its sentences may be facts of
    /// the conversation (a person's turn, not an assistant's prose; see
    /// [`crate::memory::store::states_facts`]).
    pub fn fold<'a>(&mut self, messages: impl IntoIterator<Item = (bool, bool, &'a str)>) {
        // The open questions the other side's next message answers: at first, those the
        // previous summary left open (asked last before this fold).
        let mut unanswered: Vec<String> = self.goals.clone();
        for (from_user, states_facts, text) in messages {
            if !from_user && !unanswered.is_empty() {
                self.goals.retain(|g| !unanswered.contains(g));
                unanswered.clear();
            }
            for sentence in sentences(text) {
                if is_filler(&sentence) {
                    continue;
                }
                let lower = sentence.to_lowercase();
                let section = RULES
                    .iter()
                    .find(|(cues, _)| cues.iter().any(|c| lower.contains(c)))
                    .map(|&(_, section)| section)
                    .or_else(|| (from_user && sentence.ends_with('?')).then_some(GOALS))
                    // An assistant's general prose (advice, caveats: "you must always
                    // ...") states no fact of the conversation's: of its sentences only a
                    // decision, an outcome or an action it takes on is what happened.
                    .filter(|&section| states_facts || section != FACTS);
                match section {
                    Some(DECISIONS) => {
                        for piece in pieces(&sentence) {
                            Summary::add(&mut self.decisions, piece);
                        }
                    }
                    Some(section) => {
                        let item = clip(&sentence);
                        if section == GOALS {
                            unanswered.push(item.clone());
                        }
                        Summary::add(self.sections_mut()[section], item);
                    }
                    None => {}
                }
            }
        }
    }
}

mod sentences;
use sentences::{clip, pieces, sentences};
mod cues;
pub use cues::LIKING;
mod statements;
pub use statements::{statement_of, statements, Statement};

mod prompt;
pub use prompt::model_prompt;
#[cfg(test)]
mod tests;
