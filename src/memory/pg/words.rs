//! A message's word index on PostgreSQL: a `tsvector` literal of the terms the message index
//! makes of it ([`crate::memory::passages::index_terms`]), its positions as FTS5 gives
//! them, and its session's and lane's scope tokens at weight `A` (the words are at the
//! default weight `D`), so a search of a lane asks the GIN index for the lane's token and
//! the term together, as FTS5 is asked for `scope : lane AND body : term`. Literals are
//! cast (`$1::tsvector`), never parsed by a text search configuration: the lexemes are
//! taken as written.

use crate::memory::passages::index_terms::Terms;

/// The highest position a `tsvector` holds; later tokens are kept at it.
pub const MAX_POSITION: u32 = 16_383;
/// The most positions a lexeme of a `tsvector` keeps; its later ones are left out (a
/// phrase search past them finds nothing there).
pub const MAX_POSITIONS: usize = 256;
/// The longest lexeme a `tsvector` holds, in bytes: a longer token (a run of thousands of
/// letters) is left out, and a search for it finds nothing.
pub const MAX_LEXEME_BYTES: usize = 2_046;

/// `term` as a quoted lexeme.
pub fn lexeme(term: &str) -> String {
    format!("'{}'", term.replace('\\', "\\\\").replace('\'', "''"))
}

/// The `tsvector` literal of a message's `terms` in the scopes `scope` (a session's and
/// a lane's token).
pub fn tsvector_literal(terms: &Terms, scope: &[String]) -> String {
    let mut by_term: std::collections::BTreeMap<&str, Vec<u32>> = std::collections::BTreeMap::new();
    for (term, offset) in terms.iter().filter(|(t, _)| t.len() <= MAX_LEXEME_BYTES) {
        let at = offset.saturating_add(1).min(MAX_POSITION);
        let positions = by_term.entry(term.as_str()).or_default();
        if positions.last() != Some(&at) && positions.len() < MAX_POSITIONS {
            positions.push(at);
        }
    }
    let mut out: Vec<String> = scope.iter().map(|s| format!("{}:1A", lexeme(s))).collect();
    for (term, positions) in by_term {
        let list: Vec<String> = positions.iter().map(u32::to_string).collect();
        out.push(format!("{}:{}", lexeme(term), list.join(",")));
    }
    out.join(" ")
}

/// `tokens` (one word's index terms, in order) as a `tsquery` phrase: each quoted, each
/// followed by the next; empty for none.
pub fn phrase(tokens: &[String]) -> String {
    tokens
        .iter()
        .map(|t| lexeme(t))
        .collect::<Vec<_>>()
        .join(" <-> ")
}

/// The `tsquery` literal asking for `tokens` (one word's, in order: a phrase when more
/// than one) within `scope`; `None` for a word with no token.
pub fn tsquery_literal(scope: &str, tokens: &[String]) -> Option<String> {
    if tokens.is_empty() {
        return None;
    }
    Some(format!("{}:A & ({})", lexeme(scope), phrase(tokens)))
}
