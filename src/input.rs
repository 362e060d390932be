//! Typed reading of caller input (JSON text) with errors that name the field path.
//!
//! Errors come in the two kinds JavaScript callers expect: a wrong or missing type is a
//! type error, a value of the right type outside its range is a range error. Each names
//! the path of the offending field (`adjacentMessages[3].ts`).

use crate::short_str::{self, ShortStr};
use serde::de::DeserializeOwned;
use std::fmt;

/// Which JavaScript error class an input error maps to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    Type,
    Range,
}

/// `code` of a `TypeError` for a missing or wrongly typed value (Node's own name for it).
pub const CODE_INVALID_TYPE: &str = "ERR_INVALID_ARG_TYPE";
/// `code` of a `RangeError` for a value of the right type out of range.
pub const CODE_OUT_OF_RANGE: &str = "ERR_OUT_OF_RANGE";
/// `code` of a `TypeError` for a value whose reading threw (a caller's getter or Proxy
/// trap) or that JavaScript cannot convert (a cycle, a BigInt, a revoked Proxy).
pub const CODE_UNREADABLE: &str = "ERR_UNREADABLE_INPUT";

impl ErrorKind {
    /// The `code` property of the error thrown for this kind.
    pub fn code(self) -> &'static str {
        match self {
            ErrorKind::Type => CODE_INVALID_TYPE,
            ErrorKind::Range => CODE_OUT_OF_RANGE,
        }
    }
}

/// Bad input, with the field path it was found at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError {
    pub kind: ErrorKind,
    pub path: String,
    pub message: String,
}

impl InputError {
    pub fn type_error(path: impl Into<String>, message: impl Into<String>) -> Self {
        InputError {
            kind: ErrorKind::Type,
            path: path.into(),
            message: message.into(),
        }
    }

    pub fn range_error(path: impl Into<String>, message: impl Into<String>) -> Self {
        InputError {
            kind: ErrorKind::Range,
            path: path.into(),
            message: message.into(),
        }
    }

    /// The same error found under `root`: an `options.…` path read for one call, when
    /// the options were a field of another call's input.
    #[must_use]
    pub fn under(self, root: &str) -> Self {
        let rest = self.path.strip_prefix("options").unwrap_or(&self.path);
        InputError {
            path: format!("{root}{rest}"),
            ..self
        }
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

fn join(root: &str, rest: &str) -> String {
    match (root.is_empty(), rest.is_empty()) {
        (_, true) => root.to_string(),
        (true, false) => rest.to_string(),
        (false, false) if rest.starts_with('[') => format!("{root}{rest}"),
        (false, false) => format!("{root}.{rest}"),
    }
}

/// serde_json appends " at line L column C" to its messages; the path says more.
fn strip_position(msg: &str) -> &str {
    match msg.rfind(" at line ") {
        Some(i) => &msg[..i],
        None => msg,
    }
}

/// Replaces `\uD800`-style escapes of lone surrogates with `\uFFFD` in place (same
/// length), so text from a JavaScript string with a broken pair still parses. JSON
/// produced by `JSON.stringify` escapes lone surrogates this way. Returns the byte
/// offsets of the escapes it replaced (see [`id_with_lone_surrogate`]).
pub fn repair_lone_surrogates(json: &mut String) -> Vec<usize> {
    if !json.contains("\\u") {
        return Vec::new();
    }
    fn hex4(b: &[u8]) -> Option<u16> {
        let s = std::str::from_utf8(b.get(..4)?).ok()?;
        u16::from_str_radix(s, 16).ok()
    }
    let mut fixes: Vec<usize> = Vec::new();
    let bytes = json.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            i += 1;
            continue;
        }
        if bytes.get(i + 1) != Some(&b'u') {
            i += 2;
            continue;
        }
        let unit = hex4(&bytes[i + 2..]);
        match unit {
            Some(u) if (0xD800..=0xDBFF).contains(&u) => {
                let next_is_low = bytes.get(i + 6) == Some(&b'\\')
                    && bytes.get(i + 7) == Some(&b'u')
                    && hex4(&bytes[(i + 8).min(bytes.len())..])
                        .is_some_and(|l| (0xDC00..=0xDFFF).contains(&l));
                if next_is_low {
                    i += 12;
                } else {
                    fixes.push(i);
                    i += 6;
                }
            }
            Some(u) if (0xDC00..=0xDFFF).contains(&u) => {
                fixes.push(i);
                i += 6;
            }
            _ => i += 6,
        }
    }
    if fixes.is_empty() {
        return fixes;
    }
    // Each fix rewrites six ASCII bytes with six ASCII bytes.
    let mut out = std::mem::take(json).into_bytes();
    for &at in &fixes {
        out[at..at + 6].copy_from_slice(b"\\uFFFD");
    }
    *json = String::from_utf8(out).unwrap_or_default();
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
const NULLABLE_NON_NUMBERS: [&str; 23] = [
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

/// The error for an id that held a lone surrogate: it cannot be kept exactly, and
/// folding it would merge it with another id.
pub fn lone_surrogate_error(path: impl Into<String>) -> InputError {
    InputError::type_error(
        path,
        "contains a lone surrogate (half of a UTF-16 pair); an id must be well-formed Unicode to be kept exactly",
    )
}

/// Whether UTF-16 `units` hold a surrogate that is not part of a pair.
pub fn has_lone_surrogate(units: &[u16]) -> bool {
    // Most ids hold no surrogate at all: one compare per unit decides.
    units.iter().any(|&u| (0xD800..=0xDFFF).contains(&u))
        && char::decode_utf16(units.iter().copied()).any(|c| c.is_err())
}

/// Parses `json` into `T`, naming the failing field relative to `root`.
///
/// Valid input takes serde_json's fast path; only a failure is parsed again with path
/// tracking, to say where it failed.
pub fn parse<T: DeserializeOwned>(json: &str, root: &str) -> Result<T, InputError> {
    if let Ok(value) = serde_json::from_str(json) {
        return Ok(value);
    }
    let de = &mut serde_json::Deserializer::from_str(json);
    serde_path_to_error::deserialize(de).map_err(|err| {
        let path = err.path().to_string();
        let path = if path == "." { String::new() } else { path };
        let msg = strip_position(&err.inner().to_string()).to_string();
        classify(root, &path, &msg)
    })
}

fn classify(root: &str, path: &str, msg: &str) -> InputError {
    if let Some(field) = msg
        .strip_prefix("missing field `")
        .and_then(|m| m.strip_suffix('`'))
    {
        return InputError::type_error(join(&join(root, path), field), "is required");
    }
    let at = join(root, path);
    let at = if at.is_empty() {
        "input".to_string()
    } else {
        at
    };
    if let Some(rest) = msg.strip_prefix("invalid type: ") {
        // "integer `3`, expected a string" -> "expected a string, got integer `3`"
        return match rest.split_once(", expected ") {
            Some((got, want)) => {
                InputError::type_error(at, format!("expected {}, got {}", friendly(want), got))
            }
            None => InputError::type_error(at, rest.to_string()),
        };
    }
    if let Some(rest) = msg.strip_prefix("invalid value: ") {
        return match rest.split_once(", expected ") {
            Some((got, want)) => {
                InputError::range_error(at, format!("expected {}, got {}", friendly(want), got))
            }
            None => InputError::range_error(at, rest.to_string()),
        };
    }
    if let Some(rest) = msg.strip_prefix("unknown variant ") {
        // "`x`, expected `a` or `b`" -> "expected `a` or `b`, got `x`"
        return match rest.split_once(", expected ") {
            Some((got, want)) => InputError::range_error(at, format!("expected {want}, got {got}")),
            None => InputError::range_error(at, rest.to_string()),
        };
    }
    InputError::type_error(at, msg.to_string())
}

fn friendly(want: &str) -> String {
    match want {
        "u64" | "u32" | "usize" => "a non-negative integer".to_string(),
        "f64" => "a number".to_string(),
        "a boolean" | "a string" => want.to_string(),
        "a sequence" => "an array".to_string(),
        "a tuple of size 2" => "an array of two strings".to_string(),
        w if w.starts_with("struct ") => "an object".to_string(),
        w => w.to_string(),
    }
}

/// The largest integer a JavaScript number holds exactly (`Number.MAX_SAFE_INTEGER`).
pub const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// Checks a count given as a JavaScript number (a size, a limit, milliseconds): a
/// non-negative whole number a JavaScript number holds exactly, or a `RangeError` naming
/// `path` and saying what the number counts. The one check of its kind: every option that
/// counts something goes through here.
pub fn whole_number(value: f64, path: &str, what: &str) -> Result<u64, InputError> {
    if value.is_finite() && value >= 0.0 && value.fract() == 0.0 && value <= MAX_SAFE_INTEGER {
        // In range and whole: the conversion is exact.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        return Ok(value as u64);
    }
    Err(InputError::range_error(
        path,
        format!("expected a non-negative whole number of {what}, got {value}"),
    ))
}

/// Checks a budget given as a JavaScript number: finite, non-negative; fractions are
/// floored. Values beyond `u32::MAX` are clamped (no thread comes near it).
pub fn budget_tokens(value: f64, path: &str) -> Result<u64, InputError> {
    if !value.is_finite() {
        return Err(InputError::range_error(
            path,
            format!("must be a finite number, got {value}"),
        ));
    }
    if value < 0.0 {
        return Err(InputError::range_error(
            path,
            format!("must be >= 0, got {value}"),
        ));
    }
    Ok(value.floor().min(f64::from(u32::MAX)) as u64)
}

#[cfg(test)]
mod tests;

/// The fields of a packed batch: the UTF-16 text of every field back to back, and each
/// field's length in units (what the JS side sends instead of JSON for plain batches).
/// `root` names the batch in errors (`events`, `messages`).
pub struct PackedFields<'a> {
    units: &'a [u16],
    lens: &'a [u32],
    at: usize,
    field: usize,
    root: &'static str,
}

impl<'a> PackedFields<'a> {
    pub fn new(units: &'a [u16], lens: &'a [u32], root: &'static str) -> Self {
        PackedFields {
            units,
            lens,
            at: 0,
            field: 0,
            root,
        }
    }

    /// The next field's units.
    pub fn take(&mut self) -> Result<&'a [u16], InputError> {
        let len = self
            .lens
            .get(self.field)
            .map(|&l| l as usize)
            .ok_or_else(|| {
                InputError::type_error(self.root, "packed batch has fewer lengths than it declares")
            })?;
        self.field += 1;
        let s = self.units.get(self.at..self.at + len).ok_or_else(|| {
            InputError::type_error(self.root, "packed batch is shorter than its lengths")
        })?;
        self.at += len;
        Ok(s)
    }

    /// The next field as text (lone surrogates become U+FFFD).
    pub fn text(&mut self) -> Result<String, InputError> {
        self.take().map(string_of_units)
    }

    /// The next field as an id, kept exactly or refused: a lone surrogate folded to U+FFFD
    /// would merge it with another id. `path` names it in the error.
    pub fn id(&mut self, path: impl FnOnce() -> String) -> Result<String, InputError> {
        Self::id_of(self.take()?, path)
    }

    /// The next field as [`PackedFields::id`] does, as a [`ShortStr`]: a timestamp or
    /// short ASCII id is copied straight into it, with no allocation.
    pub fn short_id(&mut self, path: impl FnOnce() -> String) -> Result<ShortStr, InputError> {
        let units = self.take()?;
        if units.len() <= short_str::INLINE_BYTES && units.iter().all(|&u| u < 0x80) {
            let mut bytes = [0u8; short_str::INLINE_BYTES];
            for (b, &u) in bytes.iter_mut().zip(units) {
                *b = u as u8;
            }
            // ASCII, hence UTF-8.
            let text = std::str::from_utf8(&bytes[..units.len()]).unwrap_or_default();
            return Ok(ShortStr::new(text));
        }
        Self::id_of(units, path).map(ShortStr::from)
    }

    /// A field's units (from [`PackedFields::take`]) as an id, as [`PackedFields::id`].
    pub fn id_of(units: &[u16], path: impl FnOnce() -> String) -> Result<String, InputError> {
        if has_lone_surrogate(units) {
            return Err(lone_surrogate_error(path()));
        }
        Ok(string_of_units(units))
    }
}

/// UTF-16 to a String (lone surrogates become U+FFFD), allocated at its exact UTF-8
/// size: the store keeps these strings for as long as it holds the message, so the
/// slack a growing buffer leaves (up to half of a non-ASCII text) would be held too.
/// ASCII, most of chat text, is found eight units at a time and narrowed a run at a
/// time; only the other characters are decoded one by one.
pub fn string_of_units(units: &[u16]) -> String {
    // One byte more: a message's text becomes a store's text by gaining one, in place
    // (see `PackedText::from_string`).
    let mut out: Vec<u8> = Vec::with_capacity(utf8_len_of_units(units) + 1);
    let mut i = 0;
    while i < units.len() {
        let run = ascii_units(&units[i..]);
        out.extend(units[i..i + run].iter().map(|&u| u as u8));
        i += run;
        if i < units.len() {
            let (c, used) = char_at(units, i);
            out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
            i += used;
        }
    }
    debug_assert!(std::str::from_utf8(&out).is_ok());
    // SAFETY: `out` holds ASCII bytes and whole characters `char::encode_utf8` wrote,
    // nothing else, so it is UTF-8 (checking it again was a tenth of a packed ingest).
    unsafe { String::from_utf8_unchecked(out) }
}

/// How many units `units` starts with that are ASCII.
#[inline]
fn ascii_units(units: &[u16]) -> usize {
    let mut n = 0;
    for block in units.chunks_exact(8) {
        if block.iter().fold(0u16, |acc, &u| acc | u) >= 0x80 {
            break;
        }
        n += 8;
    }
    n + units[n..].iter().take_while(|&&u| u < 0x80).count()
}

const HIGH_SURROGATES: std::ops::Range<u16> = 0xD800..0xDC00;
const LOW_SURROGATES: std::ops::Range<u16> = 0xDC00..0xE000;

/// The character starting at `units[i]` and how many units it takes (a lone surrogate
/// is U+FFFD, one unit).
#[inline]
fn char_at(units: &[u16], i: usize) -> (char, usize) {
    let u = units[i];
    if HIGH_SURROGATES.contains(&u) {
        if let Some(&low) = units.get(i + 1).filter(|l| LOW_SURROGATES.contains(l)) {
            let c = 0x10000 + ((u32::from(u) - 0xD800) << 10) + (u32::from(low) - 0xDC00);
            return (char::from_u32(c).unwrap_or(char::REPLACEMENT_CHARACTER), 2);
        }
    }
    (
        char::from_u32(u32::from(u)).unwrap_or(char::REPLACEMENT_CHARACTER),
        1,
    )
}

/// The UTF-8 length of `units` decoded as [`string_of_units`] decodes them: one to three
/// bytes per unit by its value (a surrogate counts three, as a lone one becomes U+FFFD),
/// less two for each high surrogate followed by a low one (one four-byte character).
fn utf8_len_of_units(units: &[u16]) -> usize {
    // Counted in 32-bit lanes (four to a 128-bit register, not two), a block at a time
    // so the counts cannot overflow.
    let mut len = 0;
    let mut surrogates = 0;
    for block in units.chunks(1 << 20) {
        len += block
            .iter()
            .map(|&u| 1 + u32::from(u >= 0x80) + u32::from(u >= 0x800))
            .sum::<u32>() as usize;
        surrogates += block
            .iter()
            .map(|&u| u32::from(u & 0xF800 == 0xD800))
            .sum::<u32>();
    }
    if surrogates == 0 {
        return len;
    }
    // Branch-free, so this loop is vectorized too.
    let pairs: usize = units
        .iter()
        .zip(units.get(1..).unwrap_or_default())
        .map(|(&a, &b)| usize::from((a & 0xFC00 == 0xD800) & (b & 0xFC00 == 0xDC00)))
        .sum();
    len - 2 * pairs
}
