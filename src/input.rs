//! Typed reading of caller input (JSON text) with errors that name the field path.
//!
//! Errors come in the two kinds JavaScript callers expect: a wrong or missing type is a
//! type error, a value of the right type outside its range is a range error. Each names
//! the path of the offending field (`adjacentMessages[3].ts`).

use serde::de::DeserializeOwned;
use std::fmt;

/// Which JavaScript error class an input error maps to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    Type,
    Range,
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
/// produced by `JSON.stringify` escapes lone surrogates this way.
pub fn repair_lone_surrogates(json: &mut String) {
    if !json.contains("\\u") {
        return;
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
        return;
    }
    // Each fix rewrites six ASCII bytes with six ASCII bytes.
    let mut out = std::mem::take(json).into_bytes();
    for at in fixes {
        out[at..at + 6].copy_from_slice(b"\\uFFFD");
    }
    *json = String::from_utf8(out).unwrap_or_default();
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
mod tests {
    use super::*;
    use crate::model::ChannelSnapshotInput;

    fn err(json: &str) -> InputError {
        match parse::<ChannelSnapshotInput>(json, "") {
            Ok(_) => panic!("expected an error for {json}"),
            Err(e) => e,
        }
    }

    const OK_MSG: &str = r#"{"ts":"1.1","author":{"userId":"U","displayName":"S"},"text":"t"}"#;

    #[test]
    fn wrong_type_names_the_path() {
        let bad = r#"{"ts":3,"author":{"userId":"U","displayName":"S"},"text":"t"}"#;
        let json = format!(
            r#"{{"channel":{{"id":"C","name":"n","platform":"slack"}},"anchor":{OK_MSG},"adjacentMessages":[{OK_MSG},{OK_MSG},{OK_MSG},{bad}]}}"#
        );
        let e = err(&json);
        assert_eq!(e.kind, ErrorKind::Type);
        assert_eq!(e.path, "adjacentMessages[3].ts");
        assert_eq!(e.message, "expected a string, got integer `3`");
    }

    #[test]
    fn missing_field_names_the_field() {
        let e = err(r#"{"channel":{"id":"C","name":"n"},"anchor":{}}"#);
        assert_eq!(e.kind, ErrorKind::Type);
        assert_eq!(e.path, "channel.platform");
        assert_eq!(e.message, "is required");
        let e = err(r#"{"channel":{"id":"C","name":"n","platform":"p"}}"#);
        assert_eq!(e.path, "anchor");
    }

    #[test]
    fn negative_count_is_a_range_error() {
        let bad =
            r#"{"ts":"1","author":{"userId":"U","displayName":"S"},"text":"t","replyCount":-2}"#;
        let json =
            format!(r#"{{"channel":{{"id":"C","name":"n","platform":"slack"}},"anchor":{bad}}}"#);
        let e = err(&json);
        assert_eq!(e.kind, ErrorKind::Range);
        assert_eq!(e.path, "anchor.replyCount");
    }

    #[test]
    fn root_prefixes_paths() {
        let e = parse::<ChannelSnapshotInput>("[]", "input").err();
        assert_eq!(
            e.map(|e| (e.path, e.kind)),
            Some(("input".to_string(), ErrorKind::Type))
        );
    }

    #[test]
    fn lone_surrogates_are_repaired_pairs_kept() {
        let mut s = r#"["a\ud800b","\udc00","\ud83d\ude00","\\ud800"]"#.to_string();
        repair_lone_surrogates(&mut s);
        assert_eq!(s, r#"["a\uFFFDb","\uFFFD","\ud83d\ude00","\\ud800"]"#);
        let v: Vec<String> = serde_json::from_str(&s).unwrap_or_default();
        assert_eq!(v, vec!["a\u{FFFD}b", "\u{FFFD}", "😀", "\\ud800"]);
    }

    #[test]
    fn budgets_reject_nan_infinity_and_negatives() {
        assert_eq!(budget_tokens(8000.0, "b"), Ok(8000));
        assert_eq!(budget_tokens(10.9, "b"), Ok(10));
        for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -1.0] {
            assert_eq!(
                budget_tokens(bad, "b").map_err(|e| e.kind),
                Err(ErrorKind::Range)
            );
        }
    }
}
