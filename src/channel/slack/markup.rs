//! Slack's message markup read into the text a person sees, before the store keeps it.
//!
//! Slack sends message text with `&`, `<` and `>` escaped as `&amp;`, `&lt;`, `&gt;`, and
//! with references in angle brackets: `<@U123>` (a user), `<#C123|general>` (a channel),
//! `<!here>` (a special mention), `<!subteam^S1|@oncall>` (a user group),
//! `<!date^1700000000^{date}|Nov 14>` (a date) and `<https://x.y|label>` (a link). The
//! store keeps the readable form: `@Alice`, `#general`, `@here`, `@oncall`, `Nov 14`,
//! `label`, and the three characters themselves. Whatever renders the text for the model
//! then escapes it once, for its own format.
//!
//! Names come from the reference's own label, else from the store's directories, else the
//! id stands (`@U123`, `#C123`).

/// Where names come from: users' display names (and bot flags) and channels' names, by id.
pub trait Names {
    fn user(&self, id: &str) -> Option<(String, bool)>;
    fn channel(&self, id: &str) -> Option<String>;
    /// The name of a (Discord) role; none known by default.
    fn role(&self, _id: &str) -> Option<String> {
        None
    }
}

/// No names known: every reference reads by its label or id.
pub struct NoNames;

impl Names for NoNames {
    fn user(&self, _: &str) -> Option<(String, bool)> {
        None
    }
    fn channel(&self, _: &str) -> Option<String> {
        None
    }
}

/// Slack's three entities decoded (`&amp;`, `&lt;`, `&gt;`); any other `&` stays.
pub fn decode_entities(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    push_decoded(&mut out, text);
    out
}

/// Appends `text` to `out` with Slack's three entities decoded.
fn push_decoded(out: &mut String, text: &str) {
    let mut rest = text;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        let (ch, len) = if rest.starts_with("&amp;") {
            ('&', 5)
        } else if rest.starts_with("&lt;") {
            ('<', 4)
        } else if rest.starts_with("&gt;") {
            ('>', 4)
        } else {
            ('&', 1)
        };
        out.push(ch);
        rest = &rest[len..];
    }
    out.push_str(rest);
}

/// One reference (what was between `<` and `>`) as it reads.
fn reference(inner: &str, names: &dyn Names) -> String {
    let (target, label) = match inner.split_once('|') {
        Some((t, l)) => (t, Some(decode_entities(l)).filter(|l| !l.trim().is_empty())),
        None => (inner, None),
    };
    if let Some(id) = target.strip_prefix('@') {
        let name = names.user(id).map(|(n, _)| n).or(label);
        return match name {
            Some(n) if n.starts_with('@') => n,
            Some(n) => format!("@{n}"),
            None => format!("@{id}"),
        };
    }
    if let Some(id) = target.strip_prefix('#') {
        let name = names.channel(id).or(label);
        return match name {
            Some(n) if n.starts_with('#') => n,
            Some(n) => format!("#{n}"),
            None => format!("#{id}"),
        };
    }
    if let Some(special) = target.strip_prefix('!') {
        if let Some(label) = label {
            return label;
        }
        let word = special.split('^').next().unwrap_or(special);
        return match word {
            "here" | "channel" | "everyone" => format!("@{word}"),
            "subteam" => format!("@{}", special.split('^').nth(1).unwrap_or(word)),
            _ => decode_entities(special),
        };
    }
    // A link: its label when it has one, else the address itself.
    label.unwrap_or_else(|| decode_entities(target))
}

/// Slack message text as it reads: references by name or label, entities decoded.
pub fn plain_text(raw: &str, names: &dyn Names) -> String {
    if !raw.contains(['<', '&']) {
        return raw.to_string();
    }
    let mut out = String::with_capacity(raw.len());
    let mut rest = raw;
    while let Some(open) = rest.find('<') {
        push_decoded(&mut out, &rest[..open]);
        let after = &rest[open + 1..];
        match after.find('>') {
            // Slack escapes every literal `<`: one without a closing `>` is kept as sent.
            None => {
                out.push('<');
                rest = after;
            }
            Some(close) => {
                out.push_str(&reference(&after[..close], names));
                rest = &after[close + 1..];
            }
        }
    }
    push_decoded(&mut out, rest);
    out
}

#[cfg(test)]
mod tests;
