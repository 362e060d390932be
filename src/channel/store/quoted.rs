//! The quoted-reply layer: the message the anchor replies to (a Discord reply, a
//! Telegram reply or quote), shown after the documents and labelled as context the
//! author pointed at, apart from the author's own words.

use super::ChannelStore;
use crate::channel::message::StoredMessage;
use crate::core::model::Author;
use crate::core::text::escape::data_text;
use crate::core::text::truncate_reply;
use napi_derive::napi;
use serde::Serialize;

/// Opens the quoted-reply block of a prompt section.
pub const QUOTED_OPEN: &str = "<quoted_reply>";
/// Closes it.
pub const QUOTED_CLOSE: &str = "</quoted_reply>";

/// How the block introduces a message it shows.
const READS_AS_CONTEXT: &str = "The message you're responding to replies to the message below: context its author pointed at, not their own words.\n";

/// The message the anchor replies to, as a build shows it.
#[napi(object, object_to_js = false, object_from_js = false, use_nullable = true)]
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QuotedReply {
    /// The id of the message replied to; null when it is in another chat.
    #[napi(js_name = "message_id")]
    pub message_id: Option<String>,
    /// When it was sent (ISO-8601 UTC); null when the store does not hold it.
    pub ts: Option<String>,
    /// Who sent it; null when the store does not hold it.
    pub author: Option<Author>,
    /// Its text, cut at 300 tokens like a thread reply; null when the store does not
    /// hold it.
    pub text: Option<String>,
    /// The part of it the anchor's author quoted, when they quoted a part.
    pub quote: Option<String>,
    /// The message replied to was deleted (the platform said so, or the store saw it
    /// go): nothing of it is fetched or shown.
    pub deleted: bool,
}

impl QuotedReply {
    /// The block the prompt section carries, or `None` when there is nothing to show.
    /// `root_shown`: the message replied to is the root of the thread the section
    /// already shows, so the block points at it instead of repeating it.
    pub fn block(&self, root_shown: bool) -> Option<String> {
        if self.text.is_none() && self.quote.is_none() && !self.deleted {
            return None;
        }
        // Every part but the block's own words is chat data: escaped and kept to its
        // line, so it can neither close the block nor start a line of its own.
        let id = self
            .message_id
            .as_deref()
            .map_or_else(|| "(another chat)".to_string(), data_text);
        let mut out = format!("\n\n{QUOTED_OPEN}\n");
        match (&self.author, &self.text) {
            _ if root_shown => out.push_str(&format!(
                "The message you're responding to replies to {id}, the thread's root shown above.\n"
            )),
            (Some(a), Some(text)) => {
                let ts = data_text(self.ts.as_deref().unwrap_or(""));
                out.push_str(READS_AS_CONTEXT);
                out.push_str(&format!(
                    "- {id} {ts} {} ({}): {}\n",
                    data_text(&a.display_name),
                    data_text(&a.user_id),
                    data_text(text)
                ));
            }
            (None, _) if self.deleted => {
                out.push_str(READS_AS_CONTEXT);
                out.push_str(&format!("- {id}: (deleted)\n"));
            }
            _ => {
                out.push_str(READS_AS_CONTEXT);
                out.push_str(&format!("- {id}: (not available)\n"));
            }
        }
        if let Some(q) = &self.quote {
            out.push_str(&format!("  quoted part: \"{}\"\n", data_text(q)));
        }
        out.push_str(QUOTED_CLOSE);
        Some(out)
    }
}

impl ChannelStore {
    /// What `anchor` replies to, resolved against what the store holds, with a note when
    /// the message replied to is not held.
    pub(super) fn quoted_reply(
        &self,
        channel: &str,
        anchor: &StoredMessage,
        notes: &mut Vec<String>,
    ) -> Option<QuotedReply> {
        let r = anchor.reply_to()?;
        let held = r.id.as_deref().and_then(|id| self.find(channel, id));
        let deleted = held.is_none()
            && r.id
                .as_deref()
                .is_some_and(|id| self.was_deleted(channel, id));
        if let (Some(id), None, false) = (r.id.as_deref(), held, deleted) {
            notes.push(format!(
                "The message {id} the anchor replies to is not held."
            ));
        }
        Some(QuotedReply {
            message_id: r.id.clone(),
            ts: held.map(|m| m.iso_ts().to_string()),
            author: held.map(|m| (*m.author).clone()),
            text: held.map(|m| {
                let text = m.text.as_str();
                truncate_reply(&text).unwrap_or_else(|| text.into_owned())
            }),
            quote: r.quote.clone(),
            deleted,
        })
    }

    /// The id of the message `anchor` replies to, when the store does not hold it (the
    /// plan asks nothing of a Telegram chat: its replies arrive with the message they
    /// answer).
    pub(super) fn reply_target_missing(
        &self,
        channel: &str,
        anchor: &StoredMessage,
    ) -> Option<String> {
        let id = anchor.reply_to()?.id.as_deref()?;
        (self.find(channel, id).is_none() && !self.was_deleted(channel, id)).then(|| id.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn author() -> Author {
        Author {
            user_id: "U1".into(),
            display_name: "Ann".into(),
            is_bot: false,
        }
    }

    #[test]
    fn the_block_labels_the_message_apart_and_shows_the_quoted_part() {
        let q = QuotedReply {
            message_id: Some("10".into()),
            ts: Some("2026-11-20T09:00:00Z".into()),
            author: Some(author()),
            text: Some("which region failed?".into()),
            quote: Some("region".into()),
            deleted: false,
        };
        let block = q.block(false).unwrap_or_default();
        assert!(block.starts_with("\n\n<quoted_reply>\n"), "{block}");
        assert!(block.contains("not their own words"));
        assert!(block.contains("- 10 2026-11-20T09:00:00Z Ann (U1): which region failed?\n"));
        assert!(block.contains("  quoted part: \"region\"\n"));
        assert!(block.ends_with("</quoted_reply>"));
        // The root of the thread shown above is pointed at, not repeated.
        let short = q.block(true).unwrap_or_default();
        assert_eq!(
            short,
            "\n\n<quoted_reply>\nThe message you're responding to replies to 10, the thread's root shown above.\n  quoted part: \"region\"\n</quoted_reply>"
        );
    }

    #[test]
    fn a_message_not_held_shows_its_quote_or_nothing() {
        let mut q = QuotedReply {
            message_id: None,
            ts: None,
            author: None,
            text: None,
            quote: Some("prices up".into()),
            deleted: false,
        };
        let block = q.block(false).unwrap_or_default();
        assert!(block.contains("- (another chat): (not available)\n  quoted part: \"prices up\""));
        q.quote = None;
        assert_eq!(q.block(false), None);
        // A message the platform said is deleted is named so, not "not available".
        q.message_id = Some("7".into());
        q.deleted = true;
        let block = q.block(false).unwrap_or_default();
        assert!(block.contains("- 7: (deleted)\n"), "{block}");
    }
}
