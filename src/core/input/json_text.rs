//! Finding things in JSON text as `JSON.stringify` wrote it, without parsing it twice:
//! lone surrogates (repaired in place, and whether one sat in an id), the field path at
//! a byte offset, and the numbers JSON cannot hold.

use super::InputError;

/// Replaces `\uD800`-style escapes of lone surrogates with `\uFFFD` in place (same
/// length), so text from a JavaScript string with a broken pair still parses. JSON
/// produced by `JSON.stringify` escapes lone surrogates this way. Returns the byte
/// offsets of the escapes it replaced (see [`id_with_lone_surrogate`]).
pub fn repair_lone_surrogates(json: &mut String) -> Vec<usize> {
    if !json.contains("\\u") {
        return Vec::new();
    }
    let mut out = std::mem::take(json).into_bytes();
    let fixes = repair_lone_surrogate_escapes(&mut out);
    // Each fix rewrites six ASCII bytes with six ASCII bytes.
    *json = String::from_utf8(out).unwrap_or_default();
    fixes
}

/// [`repair_lone_surrogates`] over JSON text as code units of any width (UTF-8 bytes, or
/// the UTF-16 units of a JavaScript string): the escapes are ASCII either way. Returns
/// the offsets (in units) of the escapes it replaced.
pub fn repair_lone_surrogate_escapes<T: Copy + Into<u32> + From<u8>>(json: &mut [T]) -> Vec<usize> {
    let unit = |i: usize| json.get(i).map(|&u| u.into());
    let hex4 = |at: usize| -> Option<u16> {
        let mut v = 0u16;
        for k in 0..4 {
            let d = char::from_u32(unit(at + k)?)?.to_digit(16)?;
            v = v * 16 + d as u16;
        }
        Some(v)
    };
    let (backslash, u) = (u32::from(b'\\'), u32::from(b'u'));
    let mut fixes: Vec<usize> = Vec::new();
    let mut i = 0;
    while i < json.len() {
        if unit(i) != Some(backslash) {
            i += 1;
            continue;
        }
        if unit(i + 1) != Some(u) {
            i += 2;
            continue;
        }
        match hex4(i + 2) {
            Some(h) if (0xD800..=0xDBFF).contains(&h) => {
                let next_is_low = unit(i + 6) == Some(backslash)
                    && unit(i + 7) == Some(u)
                    && hex4(i + 8).is_some_and(|l| (0xDC00..=0xDFFF).contains(&l));
                if next_is_low {
                    i += 12;
                } else {
                    fixes.push(i);
                    i += 6;
                }
            }
            Some(h) if (0xDC00..=0xDFFF).contains(&h) => {
                fixes.push(i);
                i += 6;
            }
            _ => i += 6,
        }
    }
    for &at in &fixes {
        for (k, b) in b"\\uFFFD".iter().enumerate() {
            json[at + k] = T::from(*b);
        }
    }
    fixes
}

/// Field names that hold ids: channel, message, thread, user, file and workspace ids,
/// in the package's own shapes, Slack's and the tools' inputs. A lone surrogate in text
/// is folded to U+FFFD; in one of these it would merge two different ids into one.
pub const ID_FIELDS: [&str; 27] = [
    "channelId",
    "messageId",
    "ts",
    "threadId",
    "userId",
    "artifactId",
    "workspaceId",
    "rootMessageId",
    "rootTs",
    "authorId",
    "rootAuthorId",
    "id",
    "channel",
    "user",
    "thread_ts",
    "team",
    "bot_id",
    "thread_id",
    "message_id",
    "message_ids",
    "media_artifact_id",
    "ids",
    "anchorMessageId",
    "deleted_ts",
    "artifact_id",
    "source_message_id",
    "source_thread_id",
];

/// Start of the JSON string whose body holds byte `at`: the offset of its opening quote.
fn string_start(b: &[u8], at: usize) -> Option<usize> {
    let mut i = at;
    while i > 0 {
        i -= 1;
        if b[i] == b'"' {
            let slashes = b[..i].iter().rev().take_while(|&&c| c == b'\\').count();
            if slashes % 2 == 0 {
                return Some(i);
            }
        }
    }
    None
}

/// The key of the member whose value starts right after `before` (exclusive end of the
/// text before the value), when that text ends in `"key":`.
fn key_before(json: &str, before: usize) -> Option<&str> {
    let b = json.as_bytes();
    let t = json[..before].trim_end();
    let t = t.strip_suffix(':')?.trim_end();
    let end = t.len().checked_sub(1)?;
    if b.get(end) != Some(&b'"') {
        return None;
    }
    let open = string_start(b, end)?;
    json.get(open + 1..end)
}

/// The first id field ([`ID_FIELDS`]) that held a lone surrogate, given the offsets
/// [`repair_lone_surrogates`] returned: that escape's offset and the key of the string
/// holding it, or of the array of strings it is an element of. `None` when every one
/// sat in text.
pub fn id_with_lone_surrogate<'a>(json: &'a str, fixes: &[usize]) -> Option<(usize, &'a str)> {
    let b = json.as_bytes();
    for &at in fixes {
        let Some(open) = string_start(b, at) else {
            continue;
        };
        let mut key = key_before(json, open);
        if key.is_none() {
            // An element of an array of strings: walk back over the elements before it.
            let mut i = open;
            loop {
                let t = json[..i].trim_end();
                match t.as_bytes().last() {
                    Some(b'[') => {
                        key = key_before(json, t.len() - 1);
                        break;
                    }
                    Some(b',') => {
                        let prev = t[..t.len() - 1].trim_end();
                        if !prev.ends_with('"') {
                            break;
                        }
                        match string_start(b, prev.len() - 1) {
                            Some(o) => i = o,
                            None => break,
                        }
                    }
                    _ => break,
                }
            }
        }
        if let Some(k) = key.filter(|k| ID_FIELDS.contains(k)) {
            return Some((at, k));
        }
    }
    None
}

/// The field path (`events[3].message.ts`) of the value at byte `pos` of compact JSON
/// (as `JSON.stringify` writes it), relative to `root`. A forward scan that tracks the
/// containers and keys on the way.
pub fn path_at(json: &str, pos: usize, root: &str) -> String {
    enum Frame<'a> {
        Obj(Option<&'a str>),
        Arr(usize),
    }
    let b = json.as_bytes();
    let mut stack: Vec<Frame> = Vec::new();
    let mut expect_key = false;
    let mut i = 0;
    while i < pos.min(b.len()) {
        match b[i] {
            b'"' => {
                let start = i + 1;
                let mut j = start;
                while j < b.len() && b[j] != b'"' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                if j >= pos {
                    break;
                }
                if expect_key {
                    if let Some(Frame::Obj(k)) = stack.last_mut() {
                        *k = json.get(start..j);
                    }
                    expect_key = false;
                }
                i = j + 1;
                continue;
            }
            b'{' => {
                stack.push(Frame::Obj(None));
                expect_key = true;
            }
            b'[' => stack.push(Frame::Arr(0)),
            b'}' | b']' => {
                stack.pop();
            }
            b',' => match stack.last_mut() {
                Some(Frame::Arr(n)) => *n += 1,
                Some(Frame::Obj(_)) => expect_key = true,
                None => {}
            },
            _ => {}
        }
        i += 1;
    }
    let mut out = root.to_string();
    for f in &stack {
        match f {
            Frame::Obj(Some(k)) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            Frame::Obj(None) => {}
            Frame::Arr(n) => out.push_str(&format!("[{n}]")),
        }
    }
    out
}

/// Fields whose `null` is an ordinary value in the package's inputs and never a number:
/// a `null` there cannot be a NaN or ±Infinity that `JSON.stringify` turned into `null`.
const NULLABLE_NON_NUMBERS: [&str; 37] = [
    "threadId",
    "thread_id",
    "threadContext",
    "thread",
    "filename",
    "media",
    "files",
    "source_thread_id",
    "lastReplyTs",
    "last_reply_ts",
    "latest_reply",
    "workspaceId",
    "messageId",
    "omitted_range_ts",
    "thread_activity",
    "diagnostic",
    "topicId",
    "replyTo",
    "quotedReply",
    "query",
    "summary",
    "previousSummary",
    "messageRange",
    // Discord's payloads: strings, objects or ids that are null when unset.
    "id",
    "edited_timestamp",
    "global_name",
    "avatar",
    "banner",
    "referenced_message",
    "parent_id",
    "last_message_id",
    "avatar_decoration_data",
    "premium_since",
    "communication_disabled_until",
    "icon",
    "topic",
    "primary_guild",
];

/// Whether `json` (from `JSON.stringify`) may hold a NaN or ±Infinity written as `null`:
/// a `null` in an array, or under a key not known to take `null` as an ordinary value.
/// Only then is the input read a second time to find out (see [`non_finite_error`]).
pub fn may_hide_non_finite(json: &str) -> bool {
    // One forward pass: `null` counts only outside strings.
    let b = json.as_bytes();
    let mut in_string = false;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if in_string {
            match c {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
        } else if c == b'"' {
            in_string = true;
        } else if c == b'n' && b[i..].starts_with(b"null") {
            let before = json[..i].trim_end();
            match before.as_bytes().last() {
                Some(b':') => match key_before(json, before.len()) {
                    Some(k) if NULLABLE_NON_NUMBERS.contains(&k) => {}
                    _ => return true,
                },
                _ => return true,
            }
            i += 4;
            continue;
        }
        i += 1;
    }
    false
}

/// What a JSON replacer writes for a number JSON cannot hold (NaN, ±Infinity), so the
/// field can be found and named instead of read as `null`.
pub const NON_FINITE_MARKER: &str = "\\u0000non-finite:";

/// The first number JSON cannot hold in `json` (written with [`NON_FINITE_MARKER`]), as
/// a `RangeError` naming its field.
pub fn non_finite_error(json: &str, root: &str) -> Option<InputError> {
    let at = json.find(NON_FINITE_MARKER)?;
    let rest = &json[at + NON_FINITE_MARKER.len()..];
    let what = rest.split('"').next().unwrap_or("NaN");
    Some(InputError::range_error(
        path_at(json, at, root),
        format!("expected a finite number, got {what}"),
    ))
}
