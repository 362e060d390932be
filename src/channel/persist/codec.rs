//! How a held message is written to the file: a JSON object with short, optional fields
//! (absent when empty), read back with its sort key recomputed from its ts.

use crate::channel::message::{Extras, ExtrasBox, Reaction, ReplyRef, StoredFile, StoredMessage};
use crate::core::model::{Author, MediaRef};
use crate::core::packed_text::PackedText;
use crate::core::short_str::ShortStr;
use crate::core::time::ts_key;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::sync::Arc;

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A message as saved: borrowed from a held message when written, owned when read.
/// Renderings are not saved: they are rebuilt on first use.
#[derive(Debug, Serialize, Deserialize)]
struct Saved<'a> {
    id: Cow<'a, str>,
    ts: Cow<'a, str>,
    author: Cow<'a, Author>,
    text: Cow<'a, str>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    thread: Option<Cow<'a, str>>,
    #[serde(default, skip_serializing_if = "is_false")]
    broadcast: bool,
    #[serde(default, skip_serializing_if = "is_zero")]
    replies: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    latest: Option<Cow<'a, str>>,
    /// `[name, count, users]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    reactions: Vec<(Cow<'a, str>, u64, Cow<'a, [String]>)>,
    /// `[media, url]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    files: Vec<(Cow<'a, MediaRef>, Option<Cow<'a, str>>)>,
    #[serde(default, skip_serializing_if = "is_false")]
    edited: bool,
    /// The id of the message this one replies to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    reply: Option<Cow<'a, str>>,
    /// The part of it quoted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    quote: Option<Cow<'a, str>>,
}

impl<'a> From<&'a StoredMessage> for Saved<'a> {
    fn from(m: &'a StoredMessage) -> Self {
        Saved {
            id: Cow::Borrowed(m.id()),
            ts: Cow::Borrowed(&m.ts),
            author: Cow::Borrowed(&m.author),
            text: m.text.as_str(),
            thread: m.thread_id.as_deref().map(Cow::Borrowed),
            broadcast: m.broadcast,
            replies: m.reply_count(),
            latest: m.latest_reply().map(Cow::Borrowed),
            reactions: m
                .reactions()
                .iter()
                .map(|r| {
                    (
                        Cow::Borrowed(r.name.as_str()),
                        r.count,
                        Cow::Borrowed(&r.users[..]),
                    )
                })
                .collect(),
            files: m
                .files()
                .iter()
                .map(|f| (Cow::Borrowed(&f.media), f.url.as_deref().map(Cow::Borrowed)))
                .collect(),
            edited: m.edited,
            reply: m
                .reply_to()
                .and_then(|r| r.id.as_deref())
                .map(Cow::Borrowed),
            quote: m
                .reply_to()
                .and_then(|r| r.quote.as_deref())
                .map(Cow::Borrowed),
        }
    }
}

/// Why a saved body could not be read back.
#[derive(Debug, Clone, PartialEq)]
pub struct CorruptRow(pub String);

impl std::fmt::Display for CorruptRow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The JSON body of a message.
pub fn encode(m: &StoredMessage) -> String {
    // Strings, numbers and booleans only: serialising cannot fail.
    serde_json::to_string(&Saved::from(m)).unwrap_or_default()
}

/// The JSON body of several messages (a thread's replies), as one array.
pub fn encode_all(ms: &[StoredMessage]) -> String {
    let saved: Vec<Saved> = ms.iter().map(Saved::from).collect();
    serde_json::to_string(&saved).unwrap_or_default()
}

fn restore(s: Saved) -> Result<StoredMessage, CorruptRow> {
    let key = ts_key(&s.ts)
        .ok_or_else(|| CorruptRow(format!("message {:?} has no valid ts ({:?})", s.id, s.ts)))?;
    Ok(StoredMessage {
        other_id: (s.id != s.ts).then(|| s.id.as_ref().into()),
        key,
        ts: ShortStr::new(&s.ts),
        author: Arc::new(s.author.into_owned()),
        text: PackedText::from(s.text.into_owned()),
        thread_id: s.thread.map(Into::into),
        broadcast: s.broadcast,
        extras: ExtrasBox::new(Extras {
            reply_count: s.replies,
            latest_reply: s.latest.map(Cow::into_owned),
            reactions: s
                .reactions
                .into_iter()
                .map(|(name, count, users)| Reaction {
                    name: name.into_owned(),
                    count,
                    users: users.into_owned(),
                })
                .collect(),
            files: s
                .files
                .into_iter()
                .map(|(media, url)| StoredFile {
                    media: media.into_owned(),
                    url: url.map(Cow::into_owned),
                })
                .collect(),
            reply_to: (s.reply.is_some() || s.quote.is_some()).then(|| ReplyRef {
                id: s.reply.map(Cow::into_owned),
                quote: s.quote.map(Cow::into_owned),
            }),
        }),
        edited: s.edited,
        cache: Default::default(),
    })
}

/// A message from its JSON body.
pub fn decode(body: &str) -> Result<StoredMessage, CorruptRow> {
    let s: Saved = serde_json::from_str(body).map_err(|e| CorruptRow(e.to_string()))?;
    restore(s)
}

/// Messages from a JSON array body.
pub fn decode_all(body: &str) -> Result<Vec<StoredMessage>, CorruptRow> {
    let saved: Vec<Saved> = serde_json::from_str(body).map_err(|e| CorruptRow(e.to_string()))?;
    saved.into_iter().map(restore).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full() -> StoredMessage {
        let mut m = StoredMessage::new(
            "1775835630.000300",
            Author {
                user_id: "U1".into(),
                display_name: "Ana \"A\" ✓".into(),
                is_bot: false,
            },
            "line one\nline two </thread>",
        )
        .unwrap_or_else(|| unreachable!("valid ts"));
        m.thread_id = Some("1775835600.000100".into());
        m.broadcast = true;
        m.extras_mut().reply_count = 3;
        m.extras_mut().latest_reply = Some("1775835700.000100".into());
        m.extras_mut().reactions = vec![Reaction {
            name: "eyes".into(),
            count: 2,
            users: vec!["U2".into(), "U3".into()],
        }];
        m.extras_mut().files = vec![StoredFile {
            media: MediaRef {
                artifact_id: "F1".into(),
                media_type: "image/png".into(),
                filename: Some("a.png".into()),
                byte_length: 12,
            },
            url: Some("https://files.example/F1".into()),
        }];
        m.edited = true;
        m.extras_mut().reply_to = Some(ReplyRef {
            id: Some("1775835500.000100".into()),
            quote: Some("line".into()),
        });
        m
    }

    #[test]
    fn a_reply_to_another_chat_keeps_its_quote() {
        let mut m = full();
        m.extras_mut().reply_to = Some(ReplyRef {
            id: None,
            quote: Some("prices up".into()),
        });
        assert_eq!(decode(&encode(&m)), Ok(m));
    }

    #[test]
    fn every_field_comes_back() {
        let m = full();
        assert_eq!(decode(&encode(&m)), Ok(m.clone()));
        let plain = StoredMessage::new("1.000001", Author::clone(&m.author), "")
            .unwrap_or_else(|| unreachable!());
        assert_eq!(decode(&encode(&plain)), Ok(plain));
        assert_eq!(
            decode_all(&encode_all(&[m.clone(), m.clone()])),
            Ok(vec![m.clone(), m])
        );
    }

    #[test]
    fn empty_fields_are_left_out() {
        let plain = StoredMessage::new(
            "1.000001",
            Author {
                user_id: "U".into(),
                display_name: "U".into(),
                is_bot: false,
            },
            "hi",
        )
        .unwrap_or_else(|| unreachable!());
        let body = encode(&plain);
        assert_eq!(
            body,
            r#"{"id":"1.000001","ts":"1.000001","author":{"user_id":"U","display_name":"U","is_bot":false},"text":"hi"}"#
        );
    }

    #[test]
    fn a_bad_body_is_named_not_a_panic() {
        assert!(decode("{").is_err());
        let bad_ts = r#"{"id":"x","ts":"yesterday","author":{"user_id":"U","display_name":"U","is_bot":false},"text":""}"#;
        assert_eq!(
            decode(bad_ts),
            Err(CorruptRow(
                "message \"x\" has no valid ts (\"yesterday\")".into()
            ))
        );
    }
}
