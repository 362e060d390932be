//! Redaction of what looks like a credential, applied to every summary and memory record
//! before it is stored (messages themselves are kept verbatim: they are the record of what
//! was said, and never leave the store except into the conversation they came from).
//!
//! What counts as a secret, each replaced by `[redacted]`:
//! - provider keys by their prefixes: `sk-` (Anthropic, OpenAI), `xoxb-` / `xoxp-` / `xoxa-` /
//!   `xoxr-` / `xoxs-` / `xapp-` (Slack), `ghp_` / `gho_` / `ghu_` / `ghs_` / `ghr_` /
//!   `github_pat_` (GitHub), `AKIA` (AWS access key ids), `AIza` (Google API keys), `glpat-`
//!   (GitLab), each followed by at least 16 key characters;
//! - JSON Web Tokens (`eyJ…` with three dot-separated base64url parts);
//! - the value after `Bearer `;
//! - the value after a credential word and `:` or `=` (`password`, `passwd`, `pwd`,
//!   `secret`, `api_key` / `api-key` / `apikey`, `token`, `access_key`, `private_key`,
//!   `client_secret`), the word itself kept;
//! - PEM private key blocks (`-----BEGIN … PRIVATE KEY-----` to its `-----END`).

/// What replaces a secret.
pub const REDACTED: &str = "[redacted]";

/// Key prefixes of well-known providers.
const PREFIXES: [&str; 15] = [
    "sk-",
    "xoxb-",
    "xoxp-",
    "xoxa-",
    "xoxr-",
    "xoxs-",
    "xapp-",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "AIza",
];
/// Shortest run of key characters after a prefix that is taken for a key.
const MIN_KEY_CHARS: usize = 16;
/// Words whose `: value` / `= value` is a credential.
const WORDS: [&str; 11] = [
    "password",
    "passwd",
    "pwd",
    "secret",
    "api_key",
    "api-key",
    "apikey",
    "token",
    "access_key",
    "private_key",
    "client_secret",
];

fn key_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_')
}

fn token_char(c: u8) -> bool {
    key_char(c) || matches!(c, b'.' | b'~' | b'+' | b'/' | b'=')
}

/// Length of the run of bytes from `at` that satisfy `ok`.
fn run(b: &[u8], at: usize, ok: impl Fn(u8) -> bool) -> usize {
    b[at..].iter().take_while(|&&c| ok(c)).count()
}

/// Starts at a word boundary: not inside a longer identifier.
fn boundary(b: &[u8], at: usize) -> bool {
    at == 0 || !key_char(b[at - 1])
}

/// The end of a secret starting at `at`, if one does; `keep` is how many bytes of it stay
/// (the credential word and its separator).
fn secret_at(text: &str, at: usize) -> Option<(usize, usize)> {
    let b = text.as_bytes();
    let rest = &text[at..];
    if !boundary(b, at) {
        return None;
    }
    for p in PREFIXES {
        if rest.starts_with(p) {
            let n = run(b, at + p.len(), key_char);
            if n >= MIN_KEY_CHARS {
                return Some((at + p.len() + n, 0));
            }
        }
    }
    if rest.starts_with("AKIA") {
        let n = run(b, at + 4, |c| c.is_ascii_uppercase() || c.is_ascii_digit());
        if n >= 16 {
            return Some((at + 4 + n, 0));
        }
    }
    if rest.starts_with("eyJ") {
        let mut end = at;
        for part in 0..3 {
            let n = run(b, end, key_char);
            if n < 10 {
                return None;
            }
            end += n;
            if part < 2 {
                if b.get(end) != Some(&b'.') {
                    return None;
                }
                end += 1;
            }
        }
        return Some((end, 0));
    }
    if rest.starts_with("-----BEGIN ") {
        let head_end = rest
            .find("-----\n")
            .or_else(|| rest[5..].find("-----").map(|i| i + 5))?;
        if rest[..head_end].ends_with("PRIVATE KEY") {
            let end = rest.find("-----END ").map(|i| {
                let tail = &rest[i + 9..];
                i + 9 + tail.find("-----").map_or(tail.len(), |j| j + 5)
            })?;
            return Some((at + end, 0));
        }
    }
    // The longest word is 14 bytes: a lowercase copy of the next 24 bytes is enough.
    let cut = (0..=rest.len().min(24))
        .rev()
        .find(|&i| rest.is_char_boundary(i))
        .unwrap_or(0);
    let lower = rest[..cut].to_ascii_lowercase();
    if lower.starts_with("bearer ") {
        let n = run(b, at + 7, token_char);
        if n >= MIN_KEY_CHARS {
            return Some((at + 7 + n, 7));
        }
    }
    for w in WORDS {
        if !lower.starts_with(w) || b.get(at + w.len()).is_some_and(|&c| key_char(c)) {
            continue;
        }
        let mut i = at + w.len();
        i += run(b, i, |c| c == b' ' || c == b'"' || c == b'\'');
        if !matches!(b.get(i), Some(b':' | b'=')) {
            continue;
        }
        i += 1;
        i += run(b, i, |c| c == b' ' || c == b'"' || c == b'\'');
        let n = run(b, i, |c| {
            !c.is_ascii_whitespace() && c != b'"' && c != b'\'' && c != b','
        });
        if n > 0 {
            return Some((i + n, i - at));
        }
    }
    None
}

/// `text` with everything that looks like a credential replaced by [`REDACTED`].
pub fn redact(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut copied = 0;
    while i < text.len() {
        if !text.is_char_boundary(i) {
            i += 1;
            continue;
        }
        if let Some((end, keep)) = secret_at(text, i) {
            out.push_str(&text[copied..i + keep]);
            out.push_str(REDACTED);
            copied = end;
            i = end;
        } else {
            i += 1;
        }
    }
    out.push_str(&text[copied..]);
    out
}

#[cfg(test)]
mod tests;
