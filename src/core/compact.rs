//! The compact rendering of the ChannelSnapshot and the ThreadContext: the same facts as
//! their JSON in fewer tokens. Authors are listed once (name and id) and lines carry the
//! name; times are relative to the anchor, whose time is given once; there are no keys,
//! quotes or `\u003c`-style escapes. User text stays data: a line break in it continues
//! the line indented (so it cannot start an entry of its own) and what could read as a
//! tag is escaped (`&lt;/`, so it can neither close nor open a section); names, ids and
//! file names stay on their line.

use crate::core::model::{Author, ChannelSnapshot, MediaRef, ThreadContext};
use crate::core::text::escape::{escape_message, one_line, push_indented};
use crate::core::time::parse_iso;
use std::fmt::Write;

/// The opening tags of the compact sections.
pub const SNAPSHOT_OPEN: &str = "<channel_snapshot format=\"compact\">";
pub const THREAD_OPEN: &str = "<thread_context format=\"compact\">";

/// Seconds between two ISO-8601 times (`to - from`), when both parse.
fn seconds_between(from: &str, to: &str) -> Option<i64> {
    let (a, b) = (parse_iso(from)?, parse_iso(to)?);
    Some(b.0 - a.0)
}

/// `now`, `-3m`, `+2h05m`, `-1d4h`: a time relative to the anchor.
pub fn relative(seconds: i64) -> String {
    let sign = if seconds < 0 { '-' } else { '+' };
    let s = seconds.unsigned_abs();
    if s < 60 {
        return "now".to_string();
    }
    let (d, h, m) = (s / 86_400, s % 86_400 / 3_600, s % 3_600 / 60);
    match (d, h, m) {
        (0, 0, m) => format!("{sign}{m}m"),
        (0, h, 0) => format!("{sign}{h}h"),
        (0, h, m) => format!("{sign}{h}h{m:02}m"),
        (d, 0, _) => format!("{sign}{d}d"),
        (d, h, _) => format!("{sign}{d}d{h}h"),
    }
}

/// User text as data: it cannot open or close a section, a line break continues the line.
fn text(out: &mut String, t: &str) {
    push_indented(out, &escape_message(t.trim_end()));
}

/// The display names of authors, unique (a second `Sam` is `Sam#2`), in order of
/// appearance; and the authors line.
#[derive(Default)]
pub struct Authors {
    list: Vec<(String, Author)>,
}

impl Authors {
    /// The name `a` goes by in the document, naming it on first appearance.
    pub fn name(&mut self, a: &Author) -> String {
        if let Some((n, _)) = self.list.iter().find(|(_, x)| x.user_id == a.user_id) {
            return n.clone();
        }
        let base = plain_name(a);
        let taken = self
            .list
            .iter()
            .filter(|(_, x)| x.display_name == a.display_name)
            .count();
        let name = if taken == 0 {
            base.to_string()
        } else {
            format!("{base}#{}", taken + 1)
        };
        self.list.push((name.clone(), a.clone()));
        name
    }

    /// The estimate of what the authors line grows by when `a` is named (under its plain
    /// name): 0 once it is.
    pub fn cost(&self, a: &Author) -> f64 {
        if self.list.iter().any(|(_, x)| x.user_id == a.user_id) {
            0.0
        } else {
            crate::core::tokens::estimate(&author_entry(&plain_name(a), a))
        }
    }

    fn line(&self) -> String {
        let mut out = String::from("authors:");
        for (i, (name, a)) in self.list.iter().enumerate() {
            let entry = author_entry(name, a);
            // The first entry without its separating comma.
            out.push_str(if i == 0 { &entry[1..] } else { &entry });
        }
        out
    }
}

fn media(out: &mut String, media: &[MediaRef]) {
    if media.is_empty() {
        return;
    }
    out.push_str(" [media:");
    for (i, m) in media.iter().enumerate() {
        out.push_str(if i == 0 { " " } else { ", " });
        out.push_str(&one_line(&m.artifact_id));
        if let Some(f) = &m.filename {
            let _ = write!(out, " {}", one_line(f));
        }
        let _ = write!(
            out,
            " ({}, {} bytes)",
            one_line(&m.media_type),
            m.byte_length
        );
    }
    out.push(']');
}

/// One adjacent message's entry in the compact snapshot, with its time and author already
/// told in the compact form's terms (relative to the anchor; the author's unique name).
pub struct AdjacentLine<'a> {
    pub message_id: &'a str,
    pub when: &'a str,
    pub name: &'a str,
    pub snippet: &'a str,
    /// Replies, replies in the last hour, and when the last one was (relative).
    pub thread: Option<(u64, u64, Option<String>)>,
    pub reactions: &'a [String],
    pub has_media: bool,
}

impl AdjacentLine<'_> {
    /// Appends the entry (a line break first).
    pub fn write(&self, body: &mut String) {
        let _ = write!(
            body,
            "\n- {} {} {}: ",
            one_line(self.message_id),
            one_line(self.when),
            self.name
        );
        text(body, self.snippet);
        if let Some((replies, last_hour, last)) = &self.thread {
            let _ = write!(
                body,
                " [thread: {replies} replies, {last_hour} in the last hour"
            );
            if let Some(when) = last {
                let _ = write!(body, ", last {when}");
            }
            body.push(']');
        }
        if !self.reactions.is_empty() {
            let _ = write!(
                body,
                " [reactions: {}]",
                one_line(&self.reactions.join(", "))
            );
        }
        if self.has_media {
            body.push_str(" [media]");
        }
    }
}

/// One reply's entry in the compact thread, its time and author told as in [`AdjacentLine`].
pub struct ReplyLine<'a> {
    pub message_id: &'a str,
    pub when: &'a str,
    pub name: &'a str,
    pub cut: bool,
    pub media: &'a [MediaRef],
    pub text: &'a str,
}

impl ReplyLine<'_> {
    /// Appends the entry (a line break first).
    pub fn write(&self, body: &mut String) {
        let _ = write!(
            body,
            "\n- {} {} {}",
            one_line(self.message_id),
            one_line(self.when),
            self.name
        );
        if self.cut {
            body.push_str(" (cut)");
        }
        media(body, self.media);
        body.push_str(": ");
        text(body, self.text);
    }
}

/// What an author adds to the authors line the first time it appears under `name`.
fn author_entry(name: &str, a: &Author) -> String {
    let mut out = format!(", {name}");
    let id = one_line(&a.user_id);
    if name != id {
        out.push(' ');
        out.push_str(&id);
    }
    if a.is_bot {
        out.push_str(" (bot)");
    }
    out
}

/// The name the compact form gives an author before any other of the same name appears.
pub fn plain_name(a: &Author) -> std::borrow::Cow<'_, str> {
    one_line(if a.display_name.is_empty() {
        &a.user_id
    } else {
        &a.display_name
    })
}

/// The ChannelSnapshot in compact form (without its tags).
pub fn compact_snapshot(s: &ChannelSnapshot) -> String {
    let mut authors = Authors::default();
    let anchor_name = authors.name(&s.anchor.author);
    let mut body = String::with_capacity(256 + s.adjacent.len() * 120);
    let _ = write!(
        body,
        "anchor {} {anchor_name}",
        one_line(&s.anchor.message_id)
    );
    if let Some(t) = &s.anchor.thread_id {
        let _ = write!(body, " in thread {}", one_line(t));
    }
    media(&mut body, &s.anchor.media);
    body.push_str(":\n  ");
    text(&mut body, &s.anchor.text);
    body.push('\n');
    let _ = write!(body, "adjacent, {} shown", s.adjacent.len());
    if let Some(n) = s.adjacent_omitted {
        let _ = write!(body, " ({n} more left out by the budget)");
    }
    body.push(':');
    let since =
        |ts: &str| seconds_between(&s.anchor.ts, ts).map_or_else(|| ts.to_string(), relative);
    for a in &s.adjacent {
        let name = authors.name(&a.author);
        AdjacentLine {
            message_id: &a.message_id,
            when: &since(&a.ts),
            name: &name,
            snippet: &a.snippet,
            thread: a.thread_activity.as_ref().map(|t| {
                (
                    t.reply_count,
                    t.replies_last_1h,
                    t.last_reply_ts.as_deref().map(since),
                )
            }),
            reactions: &a.reactions,
            has_media: a.has_media,
        }
        .write(&mut body);
    }
    let c = &s.channel;
    format!(
        "#{} ({}, {}); times are relative to the anchor, {}.\n{}\n{body}",
        one_line(&c.name),
        one_line(&c.id),
        one_line(&c.platform),
        one_line(&s.anchor.ts),
        authors.line()
    )
}

/// The ThreadContext in compact form (without its tags); times relative to `anchor_ts`
/// (ISO-8601).
pub fn compact_thread(t: &ThreadContext, anchor_ts: &str) -> String {
    let mut authors = Authors::default();
    let when = |ts: &str| seconds_between(anchor_ts, ts).map_or_else(|| ts.to_string(), relative);
    let tr = &t.truncation;
    let mut body = String::with_capacity(256 + t.replies.len() * 160);
    let root_name = authors.name(&t.root.author);
    let _ = write!(
        body,
        "root {} {} {root_name}",
        one_line(&t.root.message_id),
        one_line(&when(&t.root.ts))
    );
    media(&mut body, &t.root.media);
    body.push_str(":\n  ");
    text(&mut body, &t.root.text);
    for r in &t.replies {
        let name = authors.name(&r.author);
        ReplyLine {
            message_id: &r.message_id,
            when: &when(&r.ts),
            name: &name,
            cut: r.is_truncated,
            media: &r.media,
            text: &r.text,
        }
        .write(&mut body);
    }
    format!(
        "{}\n{}\n{body}",
        thread_head(&t.thread_id, tr),
        authors.line()
    )
}

/// The compact thread's first line: what the budget kept and left out.
pub fn thread_head(thread_id: &str, tr: &crate::core::model::Truncation) -> String {
    let mut head = format!(
        "thread {}: {} replies, the {} most recent shown",
        one_line(thread_id),
        tr.total_replies,
        tr.included_replies
    );
    if let Some((from, to)) = &tr.omitted_range_ts {
        let _ = write!(
            head,
            "; {} left out, from {} to {}",
            tr.total_replies.saturating_sub(tr.included_replies),
            one_line(from),
            one_line(to)
        );
    }
    head
}

#[cfg(test)]
mod tests;
