//! Ranking a match: BM25 ([`crate::core::search::bm25`]) on the lane's own statistics, then
//! a chat's signals (how recent the message is, whether its speaker is the one the
//! question is about, whether it was written in the time the question names).

use super::expand::named_window;
use crate::memory::message::Role;

/// Matches whose lengths are read at a time.
pub(super) const LENGTH_CHUNK: usize = 256;

/// How much more a message just written ranks than one long past: its score is raised by
/// up to this share, halving every [`RECENCY_HALF_LIFE_MS`]. Small on purpose: a chat is
/// asked about last month as often as about this morning, so the words decide, and age
/// only settles what they leave close.
pub const RECENCY_WEIGHT: f64 = 0.1;
/// How long it takes a message's recency lift to halve: a week.
pub const RECENCY_HALF_LIFE_MS: f64 = 7.0 * 86_400_000.0;
/// The factor for a message by the speaker a question is about ("what did I say…": the
/// user's messages; "what did you recommend…": the assistant's; "what did Ann say…": the
/// role whose turns Ann's are).
pub const SPEAKER_WEIGHT: f64 = 1.2;
/// The factor for a message written within the time a question names ("in May", "last
/// week"; see [`super::expand::named_window`]).
pub const WINDOW_WEIGHT: f64 = 1.5;

/// What a chat adds to a match's words when it is ranked: how old the message is, and
/// whose it is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Signals {
    /// The moment ages are counted from (ms since 1970); `None`: age is not a signal.
    pub now_ms: Option<i64>,
    /// The role whose messages the question is about, if it says.
    pub speaker: Option<Role>,
    /// The time the question names, `[from, until]` in ms since 1970, if it names one.
    pub window: Option<(i64, i64)>,
}

impl Signals {
    /// BM25 alone.
    pub const NONE: Signals = Signals {
        now_ms: None,
        speaker: None,
        window: None,
    };

    /// The signals of `question`, asked at `now_ms`: whose turns it is about when it
    /// says "I" or "you" ([`speaker_of`]), and the time it names.
    pub fn of(question: &str, now_ms: i64) -> Signals {
        Signals {
            now_ms: Some(now_ms),
            speaker: speaker_of(question),
            window: named_window(question, now_ms),
        }
    }

    /// The most [`Signals::factor`] can be.
    pub(super) fn max_factor(&self) -> f64 {
        let recency = if self.now_ms.is_some() {
            1.0 + RECENCY_WEIGHT
        } else {
            1.0
        };
        let speaker = if self.speaker.is_some() {
            SPEAKER_WEIGHT
        } else {
            1.0
        };
        let window = if self.window.is_some() {
            WINDOW_WEIGHT
        } else {
            1.0
        };
        recency * speaker * window
    }

    /// What a message written at `ts_ms` by `role` multiplies its score by.
    pub fn factor(&self, ts_ms: i64, role: Option<Role>) -> f64 {
        let mut f = 1.0;
        if let Some(now) = self.now_ms {
            #[allow(clippy::cast_precision_loss)] // ages in ms are far below 2^53
            let age = now.saturating_sub(ts_ms).max(0) as f64;
            f *= 1.0 + RECENCY_WEIGHT * (-age / RECENCY_HALF_LIFE_MS).exp2();
        }
        if self.speaker.is_some() && self.speaker == role {
            f *= SPEAKER_WEIGHT;
        }
        if self
            .window
            .is_some_and(|(from, until)| (from..=until).contains(&ts_ms))
        {
            f *= WINDOW_WEIGHT;
        }
        f
    }
}

/// Whose messages a question is about: the user's when it speaks of "I", "me", "my" and not
/// of "you"; the assistant's when it speaks of "you" and not of "I"; else nobody's.
pub fn speaker_of(question: &str) -> Option<Role> {
    const FIRST: &[&str] = &["i", "me", "my", "mine", "myself"];
    const SECOND: &[&str] = &["you", "your", "yours", "yourself"];
    let (mut first, mut second) = (false, false);
    for word in question.split(|c: char| !c.is_alphanumeric()) {
        let w = word.to_lowercase();
        first |= FIRST.contains(&w.as_str());
        second |= SECOND.contains(&w.as_str());
    }
    match (first, second) {
        (true, false) => Some(Role::User),
        (false, true) => Some(Role::Assistant),
        _ => None,
    }
}
