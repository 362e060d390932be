//! Discord message markup into plain text: mentions read by name, custom emoji by name,
//! timestamps as dates.
//!
//! - `<@id>` and `<@!id>`: the user's name (from the message's `mentions`, else the
//!   names the store knows), as `@name`;
//! - `<#id>`: the channel's name, as `#name`;
//! - `<@&id>`: a role, as `@name` (the names `GUILD_CREATE` and the role dispatches
//!   told the store), else `@role`;
//! - `<:name:id>` and `<a:name:id>`: a custom emoji, as `:name:`;
//! - `<t:seconds>` and `<t:seconds:style>`: the time, ISO-8601 UTC;
//! - `</name:id>`: a slash command, as `/name`.
//!
//! Anything else between angle brackets is kept as written.

use crate::channel::slack::Names;
use crate::core::input::payload::nonempty;
use serde_json::Value;

/// The display name of user `id` as the message's `mentions` list gives it.
fn mentioned(message: &Value, id: &str) -> Option<String> {
    let Some(Value::Array(list)) = message.get("mentions") else {
        return None;
    };
    let u = list.iter().find(|u| nonempty(u, "id") == Some(id))?;
    u.get("member")
        .and_then(|m| nonempty(m, "nick"))
        .or_else(|| nonempty(u, "global_name"))
        .or_else(|| nonempty(u, "username"))
        .map(str::to_string)
}

fn is_id(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// What one `<...>` token reads as, or `None` to keep it as written.
fn token(inner: &str, message: &Value, names: &dyn Names) -> Option<String> {
    if let Some(rest) = inner.strip_prefix("@&") {
        if !is_id(rest) {
            return None;
        }
        let name = names.role(rest);
        let name = name.as_deref().map(|n| n.trim_start_matches('@'));
        return Some(format!(
            "@{}",
            name.filter(|n| !n.is_empty()).unwrap_or("role")
        ));
    }
    if let Some(rest) = inner.strip_prefix('@') {
        let id = rest.strip_prefix('!').unwrap_or(rest);
        if !is_id(id) {
            return None;
        }
        let name = mentioned(message, id)
            .or_else(|| names.user(id).map(|(n, _)| n))
            .unwrap_or_else(|| id.to_string());
        return Some(format!("@{name}"));
    }
    if let Some(id) = inner.strip_prefix('#') {
        if !is_id(id) {
            return None;
        }
        return Some(format!(
            "#{}",
            names.channel(id).unwrap_or_else(|| id.to_string())
        ));
    }
    if let Some(rest) = inner.strip_prefix("t:") {
        let secs = rest.split(':').next().unwrap_or("");
        let secs: i64 = secs.parse().ok()?;
        return Some(crate::core::time::iso_from_epoch(secs, ""));
    }
    if let Some(rest) = inner.strip_prefix('/') {
        let (name, id) = rest.rsplit_once(':')?;
        return is_id(id).then(|| format!("/{name}"));
    }
    let emoji = inner
        .strip_prefix("a:")
        .or_else(|| inner.strip_prefix(':'))?;
    let (name, id) = emoji.rsplit_once(':')?;
    (is_id(id) && !name.is_empty()).then(|| format!(":{name}:"))
}

/// `content` of `message` as plain text.
pub fn plain_text(content: &str, message: &Value, names: &dyn Names) -> String {
    if !content.contains('<') {
        return content.to_string();
    }
    let mut out = String::with_capacity(content.len());
    let mut rest = content;
    while let Some(open) = rest.find('<') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.find('>') {
            Some(close) => match token(&after[..close], message, names) {
                Some(text) => {
                    out.push_str(&text);
                    rest = &after[close + 1..];
                }
                None => {
                    out.push('<');
                    rest = after;
                }
            },
            None => {
                out.push_str(&rest[open..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}
