//! The compact rendering of the ChannelSnapshot and the ThreadContext: the same facts as
//! their JSON in fewer tokens. Authors are listed once (name and id) and lines carry the
//! name; times are relative to the anchor, whose time is given once; there are no keys,
//! quotes or `\u003c`-style escapes. User text stays data: a line break in it continues
//! the line indented (so it cannot start an entry of its own) and `</` is written `<\/`
//! (so it cannot close the section).

use crate::model::{Author, ChannelSnapshot, MediaRef, ThreadContext};
use crate::time::parse_iso;
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

/// User text as data: `</` cannot close the section, a line break continues the line.
fn text(out: &mut String, t: &str) {
    let mut lines = t.trim_end().split('\n').map(|l| l.trim_end_matches('\r'));
    if let Some(first) = lines.next() {
        out.push_str(&first.replace("</", "<\\/"));
    }
    for l in lines {
        out.push_str("\n  ");
        out.push_str(&l.replace("</", "<\\/"));
    }
}

/// The display names of authors, unique (a second `Sam` is `Sam#2`), in order of
/// appearance; and the authors line.
#[derive(Default)]
struct Authors {
    list: Vec<(String, Author)>,
}

impl Authors {
    fn name(&mut self, a: &Author) -> String {
        if let Some((n, _)) = self.list.iter().find(|(_, x)| x.user_id == a.user_id) {
            return n.clone();
        }
        let base = if a.display_name.is_empty() {
            &a.user_id
        } else {
            &a.display_name
        };
        let taken = self
            .list
            .iter()
            .filter(|(_, x)| x.display_name == a.display_name)
            .count();
        let name = if taken == 0 {
            base.clone()
        } else {
            format!("{base}#{}", taken + 1)
        };
        self.list.push((name.clone(), a.clone()));
        name
    }

    fn line(&self) -> String {
        let mut out = String::from("authors:");
        for (i, (name, a)) in self.list.iter().enumerate() {
            out.push_str(if i == 0 { " " } else { ", " });
            out.push_str(name);
            if *name != a.user_id {
                out.push(' ');
                out.push_str(&a.user_id);
            }
            if a.is_bot {
                out.push_str(" (bot)");
            }
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
        out.push_str(&m.artifact_id);
        if let Some(f) = &m.filename {
            let _ = write!(out, " {}", f.replace("</", "<\\/"));
        }
        let _ = write!(out, " ({}, {} bytes)", m.media_type, m.byte_length);
    }
    out.push(']');
}

/// The ChannelSnapshot in compact form (without its tags).
pub fn compact_snapshot(s: &ChannelSnapshot) -> String {
    let mut authors = Authors::default();
    let anchor_name = authors.name(&s.anchor.author);
    let mut body = String::with_capacity(256 + s.adjacent.len() * 120);
    let _ = write!(body, "anchor {} {anchor_name}", s.anchor.message_id);
    if let Some(t) = &s.anchor.thread_id {
        let _ = write!(body, " in thread {t}");
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
    for a in &s.adjacent {
        let when = seconds_between(&s.anchor.ts, &a.ts).map_or_else(|| a.ts.clone(), relative);
        let name = authors.name(&a.author);
        let _ = write!(body, "\n- {} {when} {name}: ", a.message_id);
        text(&mut body, &a.snippet);
        if let Some(t) = &a.thread_activity {
            let _ = write!(
                body,
                " [thread: {} replies, {} in the last hour",
                t.reply_count, t.replies_last_1h
            );
            if let Some(last) = &t.last_reply_ts {
                let when =
                    seconds_between(&s.anchor.ts, last).map_or_else(|| last.clone(), relative);
                let _ = write!(body, ", last {when}");
            }
            body.push(']');
        }
        if !a.reactions.is_empty() {
            let _ = write!(body, " [reactions: {}]", a.reactions.join(", "));
        }
        if a.has_media {
            body.push_str(" [media]");
        }
    }
    let c = &s.channel;
    format!(
        "#{} ({}, {}); times are relative to the anchor, {}.\n{}\n{body}",
        c.name.replace("</", "<\\/"),
        c.id,
        c.platform,
        s.anchor.ts,
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
        t.root.message_id,
        when(&t.root.ts)
    );
    media(&mut body, &t.root.media);
    body.push_str(":\n  ");
    text(&mut body, &t.root.text);
    for r in &t.replies {
        let name = authors.name(&r.author);
        let _ = write!(body, "\n- {} {} {name}", r.message_id, when(&r.ts));
        if r.is_truncated {
            body.push_str(" (cut)");
        }
        media(&mut body, &r.media);
        body.push_str(": ");
        text(&mut body, &r.text);
    }
    let mut head = format!(
        "thread {}: {} replies, the {} most recent shown",
        t.thread_id, tr.total_replies, tr.included_replies
    );
    if let Some((from, to)) = &tr.omitted_range_ts {
        let _ = write!(
            head,
            "; {} left out, from {from} to {to}",
            tr.total_replies.saturating_sub(tr.included_replies)
        );
    }
    format!("{head}\n{}\n{body}", authors.line())
}

#[cfg(test)]
mod tests;
