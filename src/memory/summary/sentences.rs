//! A message read sentence by sentence: its sentences and their pieces (what the
//! extractive summary files under its headings).

use super::*;

/// `sentence` whole, as items of at most [`ITEM_MAX_CHARS`] characters cut at spaces (a
/// cut item ends with `…`, the next begins with it).
pub(super) fn pieces(sentence: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut cur = String::new();
    for word in sentence.split(' ') {
        let lead = if out.is_empty() { 0 } else { 1 };
        // Room for the word, a space before it, and the `…` a cut adds.
        if !cur.is_empty()
            && lead + cur.chars().count() + 1 + word.chars().count() + 1 > ITEM_MAX_CHARS
        {
            cur.push('…');
            out.push(if out.is_empty() {
                cur
            } else {
                format!("…{cur}")
            });
            cur = String::new();
        }
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(word);
    }
    let last = if out.is_empty() {
        cur
    } else {
        format!("…{cur}")
    };
    out.push(last);
    // A word longer than an item is cut like any other text.
    out.iter().map(|p| clip(p)).collect()
}

/// The sentences of a message, trimmed, each with its closing punctuation.
pub(super) fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\n' {
            push_sentence(&mut out, &mut cur);
            continue;
        }
        cur.push(c);
        // `.` `!` `?` end a sentence before a space or the end ("v2.4" does not end one);
        // the full-width marks always do.
        let at_break = chars.peek().is_none_or(|n| n.is_whitespace());
        if matches!(c, '。' | '！' | '？') || (matches!(c, '.' | '!' | '?') && at_break) {
            push_sentence(&mut out, &mut cur);
        }
    }
    push_sentence(&mut out, &mut cur);
    out
}

fn push_sentence(out: &mut Vec<String>, cur: &mut String) {
    let s = cur.split_whitespace().collect::<Vec<_>>().join(" ");
    if s.chars().any(char::is_alphanumeric) {
        out.push(s);
    }
    cur.clear();
}

/// At most [`ITEM_MAX_CHARS`] characters, `…` marking a cut.
pub(super) fn clip(s: &str) -> String {
    if s.chars().count() <= ITEM_MAX_CHARS {
        return s.to_string();
    }
    let mut out: String = s.chars().take(ITEM_MAX_CHARS - 1).collect();
    out.push('…');
    out
}
