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

impl InputError {
    /// The same error with the root of its path renamed: `payload.d.id` found in the
    /// fourth item of a batch is `payloads[3].d.id`.
    #[must_use]
    pub fn rerooted(self, from: &str, to: &str) -> Self {
        let path = match self.path.strip_prefix(from) {
            Some(rest) if rest.is_empty() || rest.starts_with(['.', '[']) => format!("{to}{rest}"),
            _ => self.path,
        };
        InputError { path, ..self }
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

/// Checks a weight or a cost given as a JavaScript number: finite and non-negative.
pub fn non_negative(value: f64, path: &str) -> Result<f64, InputError> {
    if value.is_finite() && value >= 0.0 {
        Ok(value)
    } else {
        Err(InputError::range_error(
            path,
            format!("must be a finite number >= 0, got {value}"),
        ))
    }
}

/// Checks a share of a budget given as a JavaScript number: above 0, at most 1.
pub fn share(value: f64, path: &str) -> Result<f64, InputError> {
    if value.is_finite() && value > 0.0 && value <= 1.0 {
        Ok(value)
    } else {
        Err(InputError::range_error(
            path,
            format!("must be a number above 0 and at most 1, got {value}"),
        ))
    }
}

mod json_text;
mod packed;
pub mod payload;
pub use json_text::{
    id_with_lone_surrogate, may_hide_non_finite, non_finite_error, path_at,
    repair_lone_surrogate_escapes, repair_lone_surrogates, ID_FIELDS, NON_FINITE_MARKER,
};
pub use packed::{string_of_units, PackedFields};

#[cfg(test)]
mod tests;
