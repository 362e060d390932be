//! How the assembled layers are written: escaped sections, and messages as lines under
//! day headings.

use crate::memory::history::Zone;
use crate::memory::store::{ChatMessage, Role};
use crate::time::civil_from_days;
use std::collections::{BTreeMap, HashMap};

/// `&`, `<` and `>` escaped, so text cannot close or open a section.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            _ => out.push(c),
        }
    }
    out
}

/// Message text with only what could read as markup escaped: `<` before a letter, `/`,
/// `!` or `?` (a tag), and `&` before what reads as an entity (`&name;`, `&#12;`), so
/// decoding the entities gives the text back; the rest is kept as written.
pub fn escape_message(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let bytes = text.as_bytes();
    for (i, c) in text.char_indices() {
        let next = bytes.get(i + 1).copied();
        match c {
            '<' if next.is_some_and(|n| n.is_ascii_alphabetic() || b"/!?".contains(&n)) => {
                out.push_str("&lt;");
            }
            '&' if reads_as_entity(&bytes[i + 1..]) => out.push_str("&amp;"),
            _ => out.push(c),
        }
    }
    out
}

fn reads_as_entity(rest: &[u8]) -> bool {
    let name = rest
        .iter()
        .take_while(|b| b.is_ascii_alphanumeric() || **b == b'#')
        .count();
    name > 0 && rest.get(name) == Some(&b';')
}

pub(super) fn section(tag: &str, body: &str) -> String {
    format!("<{tag}>\n{}\n</{tag}>\n", escape(body.trim_end()))
}

const WEEKDAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// The heading of a day's messages: `## Wed 2 May 2018 (24 days ago)`, with the lane
/// when it is not the message's own.
pub(super) fn day_heading(day: i64, now_day: i64, lane: Option<&str>) -> String {
    let (y, m, d) = civil_from_days(day);
    let weekday = WEEKDAYS[usize::try_from(day.rem_euclid(7)).unwrap_or(0)];
    let month = MONTHS[usize::try_from(m.saturating_sub(1)).unwrap_or(0).min(11)];
    let ago = match now_day - day {
        i64::MIN..=-1 => "later".to_string(),
        0 => "today".to_string(),
        1 => "yesterday".to_string(),
        n => format!("{n} days ago"),
    };
    match lane {
        Some(l) => format!("## {weekday} {d} {month} {y} ({ago}) in {}\n", escape(l)),
        None => format!("## {weekday} {d} {month} {y} ({ago})\n"),
    }
}

/// One message as a line: `HH:MM who: text`, a line break inside it continuing indented.
pub(super) fn message_line(m: &ChatMessage, zone: &Zone) -> String {
    let who = match m.role {
        Role::User => "user",
        Role::Assistant => "assistant",
    };
    let mut out = format!("{} {who}: ", zone.clock(m.ts_ms));
    push_indented(&mut out, &escape_message(m.text.trim_end()));
    out.push('\n');
    out
}

/// What a line of text after a line break starts with, so that it cannot pose as a line
/// of its own (a turn, a heading).
pub const CONTINUATION_INDENT: &str = "  ";

/// Appends `text` with every line after the first indented by [`CONTINUATION_INDENT`]
/// (empty lines stay empty); any line break (`\n`, `\r\n`, `\r`, U+2028, U+2029) is
/// written as `\n`.
pub fn push_indented(out: &mut String, text: &str) {
    let mut lines = text
        .split("\r\n")
        .flat_map(|l| l.split(['\n', '\r', '\u{2028}', '\u{2029}']));
    out.push_str(lines.next().unwrap_or_default());
    for line in lines {
        out.push('\n');
        if !line.is_empty() {
            out.push_str(CONTINUATION_INDENT);
            out.push_str(line);
        }
    }
}

/// A message chosen for the context, rendered.
#[derive(Debug, Clone)]
pub(super) struct Line {
    pub(super) message: ChatMessage,
    pub(super) text: String,
    pub(super) est: f64,
    pub(super) day: i64,
}

/// Messages shown in one section, by lane order, with the estimate they take.
#[derive(Debug, Default)]
pub(super) struct Block {
    pub(super) lines: BTreeMap<i64, Line>,
    /// (day, lane) headings present, with how many lines each has.
    headings: HashMap<(i64, String), usize>,
    pub(super) est: f64,
}

impl Block {
    /// What adding `line` would add to the block's estimate.
    pub(super) fn cost(&self, line: &Line, heading_est: f64, frame_est: f64) -> f64 {
        let mut c = line.est;
        if !self
            .headings
            .contains_key(&(line.day, line.message.thread_key.clone()))
        {
            c += heading_est;
        }
        if self.lines.is_empty() {
            c += frame_est;
        }
        c
    }

    pub(super) fn add(&mut self, line: Line, cost: f64) {
        *self
            .headings
            .entry((line.day, line.message.thread_key.clone()))
            .or_insert(0) += 1;
        self.est += cost;
        self.lines.insert(line.message.seq, line);
    }

    pub(super) fn remove(&mut self, seq: i64, heading_est: f64, frame_est: f64) -> Option<Line> {
        let line = self.lines.remove(&seq)?;
        let key = (line.day, line.message.thread_key.clone());
        let mut freed = line.est;
        if let Some(n) = self.headings.get_mut(&key) {
            *n -= 1;
            if *n == 0 {
                self.headings.remove(&key);
                freed += heading_est;
            }
        }
        if self.lines.is_empty() {
            freed += frame_est;
        }
        self.est = (self.est - freed).max(0.0);
        Some(line)
    }

    /// The block as a section: day headings and lines in lane order.
    pub(super) fn render(&self, tag: &str, own_lane: &str, now_day: i64) -> String {
        if self.lines.is_empty() {
            return String::new();
        }
        let mut out = format!("<{tag}>\n");
        let mut current: Option<(i64, &str)> = None;
        for line in self.lines.values() {
            let key = (line.day, line.message.thread_key.as_str());
            if current != Some(key) {
                let lane = (key.1 != own_lane).then_some(key.1);
                out.push_str(&day_heading(line.day, now_day, lane));
                current = Some(key);
            }
            out.push_str(&line.text);
        }
        out.push_str(&format!("</{tag}>\n"));
        out
    }
}
