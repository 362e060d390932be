//! Errors as the runtime sees them: the structured fields of an SDK or API error, read
//! the same way whether it arrives as an `Error` instance, an Anthropic `APIError`
//! (`status`, `error: { type: "error", error: { type, message } }`), a plain object or
//! a string.

use serde_json::Value;

/// The fields the policies look at.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ErrorInfo {
    pub name: Option<String>,
    pub message: String,
    pub code: Option<String>,
    pub status: Option<u16>,
    /// The API's error type (`invalid_request_error`, `request_too_large`, ...).
    pub error_type: Option<String>,
    /// The SDK result subtype (`error_during_execution`, ...), when the error is a result.
    pub subtype: Option<String>,
}

fn str_of(v: &Value, key: &str) -> Option<String> {
    match v.get(key)? {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

impl ErrorInfo {
    /// Reads an error from its JSON form. Strings are a message; objects give `name`,
    /// `message`, `code`, `status` (or `statusCode`), `type`, `subtype`, and the nested
    /// API body under `error` (and `error.error`). Anything else is an empty error.
    pub fn from_value(v: &Value) -> Self {
        match v {
            Value::String(s) => ErrorInfo {
                message: s.clone(),
                ..ErrorInfo::default()
            },
            Value::Object(_) => {
                let mut info = ErrorInfo {
                    name: str_of(v, "name"),
                    message: str_of(v, "message").unwrap_or_default(),
                    code: str_of(v, "code"),
                    status: ["status", "statusCode"]
                        .iter()
                        .find_map(|k| v.get(*k).and_then(Value::as_u64))
                        .and_then(|s| u16::try_from(s).ok()),
                    // `type` of an SDK message (`result`) or API body (`error`) is not an error type.
                    error_type: str_of(v, "type").filter(|t| t != "error" && t != "result"),
                    subtype: str_of(v, "subtype"),
                };
                // `error` may be a string, the API body, or the body's inner error.
                let mut nested = v.get("error");
                for _ in 0..2 {
                    let Some(e) = nested else { break };
                    match e {
                        Value::String(s) if info.message.is_empty() => info.message = s.clone(),
                        Value::Object(_) => {
                            if let Some(t) = str_of(e, "type").filter(|t| t != "error") {
                                info.error_type.get_or_insert(t);
                            }
                            if let Some(m) = str_of(e, "message") {
                                if !info.message.contains(&m) {
                                    info.message = if info.message.is_empty() {
                                        m
                                    } else {
                                        format!("{} {m}", info.message)
                                    };
                                }
                            }
                        }
                        _ => {}
                    }
                    nested = e.get("error");
                }
                // `result` messages of the SDK carry their errors in `errors: string[]`.
                if let Some(Value::Array(errs)) = v.get("errors") {
                    for m in errs.iter().filter_map(Value::as_str) {
                        if !info.message.contains(m) {
                            if !info.message.is_empty() {
                                info.message.push(' ');
                            }
                            info.message.push_str(m);
                        }
                    }
                }
                info
            }
            _ => ErrorInfo::default(),
        }
    }

    /// Lower-cased message, code and type, for pattern checks.
    pub fn haystack(&self) -> String {
        let mut s = self.message.to_lowercase();
        for part in [&self.code, &self.error_type, &self.name]
            .into_iter()
            .flatten()
        {
            s.push(' ');
            s.push_str(&part.to_lowercase());
        }
        s
    }
}

/// The standalone integers of a message, in order: digit runs (thousands separators
/// allowed) not glued to letters, `_` or `-`, so request ids, UUIDs and dates add
/// nothing.
pub fn numbers(message: &str) -> Vec<u64> {
    let b = message.as_bytes();
    let glued = |c: u8| c.is_ascii_alphabetic() || c == b'_' || c == b'-';
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if !b[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        let start = i;
        let mut digits = String::new();
        while i < b.len() {
            if b[i].is_ascii_digit() {
                digits.push(b[i] as char);
            } else if b[i] == b','
                && b.get(i + 1).is_some_and(u8::is_ascii_digit)
                && !digits.is_empty()
            {
                // thousands separator
            } else {
                break;
            }
            i += 1;
        }
        let before = start.checked_sub(1).map(|j| b[j]);
        let after = b.get(i).copied();
        let dotted = after == Some(b'.') && b.get(i + 1).is_some_and(u8::is_ascii_digit);
        if before.is_some_and(glued) || after.is_some_and(glued) || dotted {
            // skip the rest of a decimal like 1.5 too
            while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.') {
                i += 1;
            }
            continue;
        }
        if let Ok(n) = digits.parse() {
            out.push(n);
        }
    }
    out
}

#[cfg(test)]
mod tests;
