//! A. Thread-context stripping for resumed turns.
//!
//! The gateway joins a turn's prompt from sections separated by a blank line. The thread
//! section is a marker line followed by entries:
//!
//! ```text
//! [Thread history - for context]
//! [Slack Bek (user) Fri 2026-04-10 16:32 EDT] text, possibly over several lines
//! [slack message id: 1775853170.228819 channel: C123]
//!
//! [Slack Ana (user) Fri 2026-04-10 16:35 EDT] more text
//! [slack message id: 1775853300.000100 channel: C123]
//! ```
//!
//! A resumed session already holds that history server-side, so the section is removed,
//! and only it: media notes and hook text before it, `System:` lines, untrusted-metadata
//! blocks and the user's own text after it keep every byte. The parser is strict: a
//! section is removed only when every entry ends with its message-id line and the
//! section's end is followed by a blank line or the end of the prompt. Anything else
//! (an entry with no id line, text that runs from an entry into what could be the user's
//! body) leaves the prompt untouched and says why. The section must also parse as a
//! whole: each id line names its entry's platform and the section's one channel, and no
//! id line follows the section's end. Chat text can contain a forged id line and a blank
//! line; the entry's real id line then still comes later, and the prompt is kept.

use serde::Serialize;
use std::borrow::Cow;

/// The marker of a thread-history section.
pub const THREAD_HISTORY_MARKER: &str = "[Thread history - for context]";
/// The marker of a thread-starter section.
pub const THREAD_STARTER_MARKER: &str = "[Thread starter - for context]";

/// Why a prompt was left as it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum KeepReason {
    /// Not a resumed turn: the thread context is the session's bootstrap.
    FreshSession,
    /// No marker on a line of its own at the start of a section.
    NoMarker,
    /// The only markers come after the body started (after `System:` lines or an
    /// untrusted-metadata block), where they are the user's text, not a section.
    MarkerAfterBody,
    /// The marker is not followed by an entry header (or is the last line).
    NoEntries,
    /// An entry has no message-id line before the prompt ends or before a line that
    /// starts another section: its end, and so the user's text, cannot be told apart.
    UnterminatedEntry,
    /// A message-id line is followed by text without the blank line that separates
    /// entries and sections.
    MissingSeparator,
    /// The section parses, but not as a whole: a message-id line names another platform
    /// than the entry it closes or another channel than the section's other entries, or
    /// a message-id line appears after the section's apparent end. Chat text can forge
    /// an id line followed by a blank line; the real end is then unknown.
    AmbiguousEnd,
}

impl KeepReason {
    pub fn as_str(self) -> &'static str {
        match self {
            KeepReason::FreshSession => "fresh_session",
            KeepReason::NoMarker => "no_marker",
            KeepReason::MarkerAfterBody => "marker_after_body",
            KeepReason::NoEntries => "no_entries",
            KeepReason::UnterminatedEntry => "unterminated_entry",
            KeepReason::MissingSeparator => "missing_separator",
            KeepReason::AmbiguousEnd => "ambiguous_end",
        }
    }
}

/// What [`strip_thread_context`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StripOutcome<'a> {
    /// The prompt to send: the input itself when nothing was removed.
    pub text: Cow<'a, str>,
    /// True when a thread section was removed.
    pub stripped: bool,
    /// Removed length in UTF-16 code units (JavaScript `.length`).
    pub chars_removed: usize,
    /// Thread sections removed (a starter section directly followed by a history
    /// section counts two).
    pub sections: usize,
    /// Entries in the removed sections.
    pub entries: usize,
    /// Why nothing was removed (`None` when `stripped`).
    pub reason: Option<KeepReason>,
    /// Where the parse stopped, for logs: 1-based line number and what was found.
    pub detail: Option<String>,
}

impl<'a> StripOutcome<'a> {
    fn kept(prompt: &'a str, reason: KeepReason, detail: Option<String>) -> Self {
        StripOutcome {
            text: Cow::Borrowed(prompt),
            stripped: false,
            chars_removed: 0,
            sections: 0,
            entries: 0,
            reason: Some(reason),
            detail,
        }
    }
}

/// One line: `start..end` is its content without the line break (and without a `\r`
/// before `\n`).
#[derive(Debug, Clone, Copy)]
struct Line {
    start: usize,
    end: usize,
}

fn lines(s: &str) -> Vec<Line> {
    let mut out = Vec::new();
    let mut start = 0;
    // `find` on an ASCII char is a memchr.
    while let Some(off) = s[start..].find('\n') {
        let i = start + off;
        let end = if i > start && s.as_bytes()[i - 1] == b'\r' {
            i - 1
        } else {
            i
        };
        out.push(Line { start, end });
        start = i + 1;
    }
    if start < s.len() {
        out.push(Line {
            start,
            end: s.len(),
        });
    }
    out
}

fn is_marker(l: &str) -> bool {
    l == THREAD_HISTORY_MARKER || l == THREAD_STARTER_MARKER
}

fn is_blank(l: &str) -> bool {
    l.trim().is_empty()
}

/// A line that opens the part of the prompt after the thread section: a system event
/// line or an untrusted-metadata header.
fn is_body_start(l: &str) -> bool {
    l.starts_with("System: ") || l.trim_end().ends_with("(untrusted metadata):")
}

fn is_fence(l: &str) -> bool {
    l.trim_start().starts_with("```")
}

fn digits(b: &[u8]) -> bool {
    !b.is_empty() && b.iter().all(u8::is_ascii_digit)
}

/// True when `s` holds a `YYYY-MM-DD H:MM` or `YYYY-MM-DD HH:MM` timestamp. Only the
/// positions of `-` are tried, so a long line costs one byte scan.
fn has_date_time(s: &str) -> bool {
    let b = s.as_bytes();
    b.iter().enumerate().any(|(j, &c)| {
        if c != b'-' || j < 4 {
            return false;
        }
        let i = j - 4;
        let Some(d) = b.get(i..i + 11) else {
            return false;
        };
        let date = digits(&d[0..4])
            && digits(&d[5..7])
            && d[7] == b'-'
            && digits(&d[8..10])
            && d[10] == b' ';
        if !date {
            return false;
        }
        let rest = &b[i + 11..];
        let hour_len = rest.iter().take_while(|c| c.is_ascii_digit()).count();
        (1..=2).contains(&hour_len)
            && rest.get(hour_len) == Some(&b':')
            && rest.get(hour_len + 1..hour_len + 3).is_some_and(digits)
    })
}

/// The parts of a message-id line that tie it to its entry and section.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct IdLine<'a> {
    platform: &'a [u8],
    channel: Option<&'a [u8]>,
}

/// `[<platform> message id: <id>]` or `[<platform> message id: <id> channel: <id>]`.
/// Read byte by byte: this runs on every entry.
fn id_line(l: &str) -> Option<IdLine<'_>> {
    let inner = l.as_bytes().strip_prefix(b"[")?.strip_suffix(b"]")?;
    // A platform name: letters, digits, `_` (any non-ASCII letter byte counts).
    let platform = inner
        .iter()
        .take_while(|&&c| c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80)
        .count();
    if platform == 0 {
        return None;
    }
    let rest = inner[platform..].strip_prefix(b" message id: ")?;
    let token = |s: &[u8]| {
        s.iter()
            .take_while(|&&c| !(c.is_ascii_whitespace() || c == b'[' || c == b']'))
            .count()
    };
    let id = token(rest);
    if id == 0 {
        return None;
    }
    let rest = &rest[id..];
    let platform = &inner[..platform];
    if rest.is_empty() {
        return Some(IdLine {
            platform,
            channel: None,
        });
    }
    let channel = rest.strip_prefix(b" channel: ")?;
    let n = token(channel);
    (n > 0 && n == channel.len()).then_some(IdLine {
        platform,
        channel: Some(channel),
    })
}

fn is_id_line(l: &str) -> bool {
    id_line(l).is_some()
}

/// Whether an entry header (`[Slack Bek (user) ...`) names the platform of an id line
/// (`[slack message id: ...`), compared without case.
fn same_platform(header: &str, id: &IdLine<'_>) -> bool {
    header
        .as_bytes()
        .get(1..1 + id.platform.len())
        .is_some_and(|p| p.eq_ignore_ascii_case(id.platform))
        && header.as_bytes().get(1 + id.platform.len()) == Some(&b' ')
}

/// `[<Platform> <name> (<role>) <Day> YYYY-MM-DD HH:MM <TZ>] text`: a bracket that opens
/// the line, starts with a letter and holds a date and time.
fn is_entry_header(l: &str) -> bool {
    let Some(rest) = l.strip_prefix('[') else {
        return false;
    };
    let Some(close) = rest.bytes().position(|c| c == b']') else {
        return false;
    };
    let inner = &rest[..close];
    inner.chars().next().is_some_and(char::is_alphabetic) && has_date_time(inner)
}

/// The end of one thread section whose marker is line `m`.
struct Section {
    /// Entries in it.
    entries: usize,
    /// Index of the first line after it that is not blank, or `lines.len()`.
    next: usize,
}

fn parse_section(s: &str, ls: &[Line], m: usize) -> Result<Section, (KeepReason, Option<String>)> {
    let text = |i: usize| &s[ls[i].start..ls[i].end];
    let at = |i: usize, what: &str| Some(format!("line {}: {what}", i + 1));
    let n = ls.len();
    let mut i = m + 1;
    if i >= n || !is_entry_header(text(i)) {
        let detail = if i >= n {
            at(m, "the marker is the last line")
        } else {
            at(i, "expected an entry header after the marker")
        };
        return Err((KeepReason::NoEntries, detail));
    }
    let mut entries = 0;
    let mut channel: Option<Option<&[u8]>> = None;
    loop {
        // `i` is an entry header: find its message-id line.
        let mut j = i + 1;
        let mut after_blank = false;
        loop {
            if j >= n {
                return Err((
                    KeepReason::UnterminatedEntry,
                    at(
                        i,
                        "entry has no message id line before the end of the prompt",
                    ),
                ));
            }
            let l = text(j);
            if let Some(id) = id_line(l) {
                if !same_platform(text(i), &id) {
                    return Err((
                        KeepReason::AmbiguousEnd,
                        at(j, "message id line names another platform than its entry"),
                    ));
                }
                if channel.is_some_and(|c| c != id.channel) {
                    return Err((
                        KeepReason::AmbiguousEnd,
                        at(j, "message id line names another channel than the section"),
                    ));
                }
                channel = Some(id.channel);
                break;
            }
            if is_blank(l) {
                after_blank = true;
            } else if is_marker(l) || is_body_start(l) || is_entry_header(l) {
                let what = if after_blank {
                    "entry has no message id line before the next section"
                } else {
                    "entry has no message id line before the next entry or section"
                };
                return Err((KeepReason::UnterminatedEntry, at(i, what)));
            }
            j += 1;
        }
        entries += 1;
        let k = j + 1;
        if k >= n {
            return Ok(Section { entries, next: n });
        }
        if !is_blank(text(k)) {
            return Err((
                KeepReason::MissingSeparator,
                at(k, "text follows a message id line without a blank line"),
            ));
        }
        let p = (k..n).find(|&p| !is_blank(text(p))).unwrap_or(n);
        if p < n && is_entry_header(text(p)) {
            i = p;
            continue;
        }
        return Ok(Section { entries, next: p });
    }
}

/// Removes the thread-context section from a resumed turn's prompt; see the module docs.
/// On a fresh session (`resumed == false`) the prompt is returned unchanged.
pub fn strip_thread_context(prompt: &str, resumed: bool) -> StripOutcome<'_> {
    if !resumed {
        return StripOutcome::kept(prompt, KeepReason::FreshSession, None);
    }
    let ls = lines(prompt);
    let text = |i: usize| &prompt[ls[i].start..ls[i].end];
    let mut fenced = false;
    let mut body = false;
    let mut late_marker = None;
    // The first well-formed section before the body wins. A marker line with no entry
    // after it (a hook quoting the marker) is skipped and kept as text; any other parse
    // failure stops here, since the section's end cannot be known.
    let mut found = None;
    let mut refused = None;
    for i in 0..ls.len() {
        let l = text(i);
        if is_fence(l) {
            fenced = !fenced;
            continue;
        }
        let section_start = i == 0 || is_blank(text(i - 1));
        if fenced || !section_start {
            continue;
        }
        if is_marker(l) {
            if body {
                late_marker.get_or_insert(i);
                continue;
            }
            match parse_section(prompt, &ls, i) {
                Ok(sec) => {
                    found = Some((i, sec));
                    break;
                }
                Err((KeepReason::NoEntries, detail)) => {
                    refused.get_or_insert((KeepReason::NoEntries, detail));
                }
                Err(e) => {
                    refused = Some(e);
                    break;
                }
            }
        } else if is_body_start(l) {
            body = true;
        }
    }
    let Some((m, first)) = found else {
        if let Some((reason, detail)) = refused {
            return StripOutcome::kept(prompt, reason, detail);
        }
        return match late_marker {
            Some(i) => StripOutcome::kept(
                prompt,
                KeepReason::MarkerAfterBody,
                Some(format!("line {}: marker after the body started", i + 1)),
            ),
            None => StripOutcome::kept(prompt, KeepReason::NoMarker, None),
        };
    };
    // A starter section directly followed by a history section (or the reverse) is
    // one block of thread context.
    let mut entries = first.entries;
    let mut next = first.next;
    let mut sections = 1;
    while next < ls.len() && is_marker(text(next)) {
        match parse_section(prompt, &ls, next) {
            Ok(sec) => {
                entries += sec.entries;
                next = sec.next;
                sections += 1;
            }
            Err(_) => break,
        }
    }
    // The section must parse as a whole: a message-id line after its apparent end means
    // an entry's text forged an id line and the real one closes it further down. Fences
    // do not count here: the forged text may have opened one.
    if let Some(j) = (next..ls.len()).find(|&j| is_id_line(text(j))) {
        return StripOutcome::kept(
            prompt,
            KeepReason::AmbiguousEnd,
            Some(format!(
                "line {}: message id line after the section's end (line {})",
                j + 1,
                next + 1
            )),
        );
    }
    let start = ls[m].start;
    let (head, tail) = if next < ls.len() {
        (&prompt[..start], &prompt[ls[next].start..])
    } else {
        // The section was last: drop the separator before it too.
        let keep = (0..m)
            .rev()
            .find(|&i| !is_blank(text(i)))
            .map_or(0, |i| ls[i].end);
        (&prompt[..keep], "")
    };
    let removed = prompt.len() - head.len() - tail.len();
    let removed_text = &prompt[head.len()..head.len() + removed];
    StripOutcome {
        text: Cow::Owned(format!("{head}{tail}")),
        stripped: true,
        chars_removed: if removed_text.is_ascii() {
            removed_text.len()
        } else {
            removed_text.chars().map(char::len_utf16).sum()
        },
        sections,
        entries,
        reason: None,
        detail: None,
    }
}

#[cfg(test)]
mod tests;
