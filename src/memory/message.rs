//! A chat message as the gateway hands it to the memory and as the memory keeps it, and
//! who wrote it.

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    User,
    Assistant,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }

    /// The role a stored row names (the table holds only these two).
    pub fn parse(s: &str) -> Role {
        if s == "assistant" {
            Role::Assistant
        } else {
            Role::User
        }
    }
}

/// A chat message as the gateway hands it over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewMessage<'a> {
    pub session_id: &'a str,
    pub chat_id: &'a str,
    pub message_id: &'a str,
    pub role: Role,
    pub text: &'a str,
    pub ts_ms: i64,
    pub topic_id: Option<&'a str>,
    pub reply_to: Option<&'a str>,
}

/// The tests' plain turns: `texts` in `session` of chat 42 under `ids`, user and assistant
/// in turn from a user's, a millisecond apart from 0, in no topic and replying to none.
#[cfg(test)]
pub fn turns<'a>(session: &'a str, ids: &'a [String], texts: &'a [String]) -> Vec<NewMessage<'a>> {
    ids.iter()
        .zip(texts)
        .enumerate()
        .map(|(i, (id, text))| NewMessage {
            session_id: session,
            chat_id: "42",
            message_id: id,
            role: if i % 2 == 0 {
                Role::User
            } else {
                Role::Assistant
            },
            text,
            ts_ms: i64::try_from(i).unwrap_or(0),
            topic_id: None,
            reply_to: None,
        })
        .collect()
}

/// A message as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatMessage {
    /// Its row in the store: the order messages were stored in.
    pub seq: i64,
    pub message_id: String,
    pub thread_key: String,
    pub role: Role,
    pub text: String,
    pub ts_ms: i64,
    pub reply_to: Option<String>,
}

/// What ranking reads of a stored message besides its words.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RankingRow {
    /// Its length in characters.
    pub chars: usize,
    pub ts_ms: i64,
    pub role: Option<Role>,
    /// It asks something ([`asks`]).
    pub asks: bool,
}

impl RankingRow {
    /// What ranking reads of `m`, as the SQLite store's statement reads it of the row:
    /// its length in characters, and whether it asks something.
    pub fn of(m: &ChatMessage) -> Self {
        RankingRow {
            chars: m.text.chars().count(),
            ts_ms: m.ts_ms,
            role: Some(m.role),
            asks: asks(&m.text),
        }
    }
}

/// Question marks that end a question wherever they stand: the full-width one (Chinese,
/// Japanese), the Arabic, the Armenian and the Ethiopic.
const QUESTION_MARKS: [char; 4] = ['\u{FF1F}', '\u{061F}', '\u{055E}', '\u{1367}'];

/// What may follow a question mark that closes a sentence: a closing quote or bracket,
/// or more marks (`?!`, `??`).
const AFTER_QUESTION: [char; 11] = [
    '"', '\'', ')', ']', '}', '\u{201D}', '\u{2019}', '\u{00BB}', '?', '!', '*',
];

/// Whether a message asks something: one of its sentences is a question (a `?` after a
/// word, at the end of the text or before a space, a line break or a closing mark; or one
/// of [`QUESTION_MARKS`]), wherever it stands in the message. A long turn often asks its
/// question first and goes on ("Which one do you use? Here is how each is set up: ..."),
/// and the turn after it answers the question all the same. A `?` inside a word (a URL's
/// query) or after a space (a ternary `a ? b`) asks nothing.
pub fn asks(text: &str) -> bool {
    // A message that opens with its question mark ("?", "?? it broke") asks.
    let mut prev = '\0';
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if QUESTION_MARKS.contains(&c) {
            return true;
        }
        if c == '?' && !prev.is_whitespace() {
            match chars.peek() {
                None => return true,
                Some(&n) if n.is_whitespace() || AFTER_QUESTION.contains(&n) => return true,
                _ => {}
            }
        }
        prev = c;
    }
    false
}

/// A message from the columns `seq, message_id, thread_key, role, text, ts_ms, reply_to`.
pub(super) fn chat_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<ChatMessage> {
    Ok(ChatMessage {
        seq: r.get(0)?,
        message_id: r.get(1)?,
        thread_key: r.get(2)?,
        role: Role::parse(&r.get::<_, String>(3)?),
        text: r.get(4)?,
        ts_ms: r.get(5)?,
        reply_to: r.get(6)?,
    })
}

/// Where an ingested message went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ingested {
    /// The lane it is stored under (for a message stored before, the lane it was stored
    /// under then).
    pub thread_key: String,
    /// Whether it was written now.
    pub ingested: bool,
    /// The id it is stored under when its own was taken by a message of another lane:
    /// `<id>@<thread key>`.
    pub stored_as: Option<String>,
}

/// A scope's message count and mean length in characters, from its counts.
pub fn count_and_mean((n, chars): (i64, i64)) -> (usize, f64) {
    #[allow(clippy::cast_precision_loss)] // counts are far below 2^53
    let mean = if n > 0 { chars as f64 / n as f64 } else { 0.0 };
    (usize::try_from(n).unwrap_or(0), mean)
}

/// The rows before (newest first) and after (oldest first) a row of a lane.
pub type RowsAround = (Vec<i64>, Vec<i64>);

#[cfg(test)]
mod tests {
    use super::asks;
    use proptest::prelude::*;

    #[test]
    fn a_message_asks_when_one_of_its_sentences_is_a_question() {
        for text in [
            "Which venue did you book?",
            "Which venue did you book? I looked at three; the one by the river had the best light, and the parking was easy.",
            "Which venue did you book?\nI looked at three.",
            "Did it ship?!",
            "He asked \"why not?\" and left.",
            "?",
            "你订了哪个场地？我看了三个。",
            "هل حجزت القاعة؟ رأيت ثلاثاً.",
        ] {
            assert!(asks(text), "{text}");
        }
        for text in [
            "",
            "The venue is booked.",
            "The list is at https://example.com/search?q=venue&page=2 now.",
            "let x = ready ? 1 : 2;",
            "Well ? no.",
        ] {
            assert!(!asks(text), "{text}");
        }
    }

    proptest! {
        #[test]
        fn a_question_asks_whatever_follows_it(
            head in "[a-zA-Z][a-zA-Z ]{0,40}[a-zA-Z]",
            tail in "[a-zA-Z .,!]{0,300}",
        ) {
            let (question, asked_first) = (format!("{head}?"), format!("{head}? {tail}"));
            prop_assert!(asks(&question));
            prop_assert!(asks(&asked_first));
        }

        #[test]
        fn a_text_without_a_question_mark_asks_nothing(text in "[^?\u{FF1F}\u{061F}\u{055E}\u{1367}]{0,200}") {
            prop_assert!(!asks(&text));
        }
    }
}
