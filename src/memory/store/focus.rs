//! What a new message most likely refers to: the message it replies to, or the question
//! the assistant asked and is waiting for (a pending slot, with the kind of answer it
//! expects).

use super::*;

/// A question the assistant asked and is waiting for, kept in the lane's `thread_state`
/// record as `{"pending":{"questionId":"...","expects":"..."}}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingSlot {
    pub question_id: String,
    pub expects: SlotType,
}

/// What answer a pending slot waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlotType {
    /// yes / no and their common forms.
    YesNo,
    /// A number (digits, optionally signed, with a decimal point).
    Number,
    /// A date: `YYYY-MM-DD`, a weekday, today, tomorrow.
    Date,
    /// An email address.
    Email,
}

impl SlotType {
    pub fn parse(s: &str) -> Option<SlotType> {
        Some(match s {
            "yes_no" => SlotType::YesNo,
            "number" => SlotType::Number,
            "date" => SlotType::Date,
            "email" => SlotType::Email,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            SlotType::YesNo => "yes_no",
            SlotType::Number => "number",
            SlotType::Date => "date",
            SlotType::Email => "email",
        }
    }

    /// Whether `text` is an answer of this type (the whole message, not a mention inside a
    /// longer one: "no" answers a yes/no question, "no idea what the deploy did" does not).
    pub fn matches(self, text: &str) -> bool {
        let t = text
            .trim()
            .trim_end_matches(['.', '!'])
            .trim()
            .to_lowercase();
        match self {
            SlotType::YesNo => matches!(
                t.as_str(),
                "yes" | "y" | "yeah" | "yep" | "sure" | "ok" | "okay" | "no" | "n" | "nope" | "nah"
            ),
            SlotType::Number => {
                let digits = t.strip_prefix(['-', '+']).unwrap_or(&t);
                !digits.is_empty()
                    && digits
                        .chars()
                        .all(|c| c.is_ascii_digit() || c == '.' || c == ',')
                    && digits.chars().any(|c| c.is_ascii_digit())
            }
            SlotType::Date => {
                const WORDS: [&str; 9] = [
                    "today",
                    "tomorrow",
                    "monday",
                    "tuesday",
                    "wednesday",
                    "thursday",
                    "friday",
                    "saturday",
                    "sunday",
                ];
                let b = t.as_bytes();
                let iso = b.len() == 10
                    && b.iter().enumerate().all(|(i, c)| {
                        if i == 4 || i == 7 {
                            *c == b'-'
                        } else {
                            c.is_ascii_digit()
                        }
                    });
                iso || WORDS.contains(&t.as_str())
            }
            SlotType::Email => {
                let mut parts = t.split('@');
                matches!((parts.next(), parts.next(), parts.next()), (Some(a), Some(d), None)
                    if !a.is_empty() && d.contains('.') && !t.contains(char::is_whitespace))
            }
        }
    }
}

/// What the user's new message most likely refers to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Focus {
    /// The message it replies to.
    ReplyTarget(String),
    /// The newest assistant message of its lane.
    LastAssistant(String),
    /// The lane's pending question, which the message answers.
    PendingSlot(PendingSlot),
}

impl MemoryStore {
    /// What `m` most likely refers to, in this order: the message it replies to; else the
    /// newest assistant message of its lane `lane`, unless the lane has a pending question
    /// that `m` answers, which then wins; a pending question never captures a message that
    /// does not answer it.
    pub fn focus_anchor(
        &self,
        m: &NewMessage<'_>,
        lane: &str,
    ) -> Result<Option<Focus>, MemoryError> {
        if let Some(target) = m.reply_to.filter(|r| !r.is_empty()) {
            return Ok(Some(Focus::ReplyTarget(target.to_string())));
        }
        if let Some(slot) = self.pending_slot(m.session_id, lane)? {
            if slot.expects.matches(m.text) {
                return Ok(Some(Focus::PendingSlot(slot)));
            }
        }
        let last: Option<String> = match &self.db {
            Backend::Lite(conn) => conn
                .query_row(
                    "SELECT message_id FROM messages
                     WHERE session_id = ?1 AND thread_key = ?2 AND role = 'assistant'
                     AND message_id != ?3 ORDER BY seq DESC LIMIT 1",
                    params![m.session_id, lane, m.message_id],
                    |r| r.get(0),
                )
                .optional()?,
            Backend::Pg(link) => on_pg!(link, "reading a lane", |c| reads::last_assistant_id(
                c,
                m.session_id,
                lane,
                m.message_id
            ))?,
        };
        Ok(last.map(Focus::LastAssistant))
    }

    /// The pending question of a lane, from its `thread_state` record.
    pub fn pending_slot(
        &self,
        session: &str,
        lane: &str,
    ) -> Result<Option<PendingSlot>, MemoryError> {
        let Some(state) = self.record(session, RecordKind::ThreadState, lane)? else {
            return Ok(None);
        };
        let v: serde_json::Value = serde_json::from_str(&state.body).unwrap_or_default();
        let pending = &v["pending"];
        let (Some(question), Some(expects)) = (
            pending["questionId"].as_str(),
            pending["expects"].as_str().and_then(SlotType::parse),
        ) else {
            return Ok(None);
        };
        Ok(Some(PendingSlot {
            question_id: question.to_string(),
            expects,
        }))
    }
}
