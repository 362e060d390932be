//! How the assembled layers are written: escaped sections, and messages as lines under
//! day headings.

use crate::core::text::escape::{data_text, escape, escape_message, push_indented};
use crate::core::time::civil_from_days;
use crate::memory::history::Zone;
use crate::memory::store::{ChatMessage, Role};
use std::collections::{BTreeMap, HashMap};

pub(super) fn section(tag: &str, body: &str) -> String {
    format!("<{tag}>\n{}\n</{tag}>\n", escape(body.trim_end()))
}

/// A section holding what someone else wrote (the quoted reply): escaped like any
/// section, and every line after the first indented so none poses as a heading.
pub(super) fn data_section(tag: &str, body: &str) -> String {
    format!("<{tag}>\n{}\n</{tag}>\n", data_text(body))
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

/// A message chosen for the context, rendered.
#[derive(Debug, Clone)]
pub(super) struct Line {
    pub(super) message: ChatMessage,
    pub(super) text: String,
    pub(super) est: f64,
    pub(super) day: i64,
    /// What the heading of its day (and lane) takes, when it is the first under it.
    pub(super) heading_est: f64,
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
    pub(super) fn cost(&self, line: &Line, frame_est: f64) -> f64 {
        let mut c = line.est;
        if !self
            .headings
            .contains_key(&(line.day, line.message.thread_key.clone()))
        {
            c += line.heading_est;
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

    pub(super) fn remove(&mut self, seq: i64, frame_est: f64) -> Option<Line> {
        let line = self.lines.remove(&seq)?;
        let key = (line.day, line.message.thread_key.clone());
        let mut freed = line.est;
        if let Some(n) = self.headings.get_mut(&key) {
            *n -= 1;
            if *n == 0 {
                self.headings.remove(&key);
                freed += line.heading_est;
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
