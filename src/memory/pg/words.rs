//! A message's word index on PostgreSQL: a `tsvector` literal of the terms the message index
//! makes of it ([`crate::memory::passages::index_terms`]), its positions as FTS5 gives
//! them, and its session's and lane's scope tokens at weight `A` (the words are at the
//! default weight `D`), so a search of a lane asks the GIN index for the lane's token and
//! the term together, as FTS5 is asked for `scope : lane AND body : term`. A message's is
//! sent in the type's binary form ([`TsVector`]), a record's as a literal cast
//! (`$1::tsvector`); neither goes through a text search configuration: the lexemes are
//! taken as written.

use crate::memory::passages::index_terms::Terms;
use bytes::BytesMut;
use std::collections::BTreeMap;
use std::error::Error;
use tokio_postgres::types::{to_sql_checked, IsNull, ToSql, Type};

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

/// A `tsvector`'s lexemes in byte order, each with its positions in order (at most
/// [`MAX_POSITIONS`], none past [`MAX_POSITION`]) and whether it is a scope token (weight
/// `A` at position 1; a word's positions are at the default weight `D`).
fn entries<'t>(terms: &'t Terms, scope: &'t [String]) -> BTreeMap<&'t str, (bool, Vec<u32>)> {
    let mut by_term: BTreeMap<&str, (bool, Vec<u32>)> = BTreeMap::new();
    for s in scope {
        by_term.insert(s.as_str(), (true, vec![1]));
    }
    for (term, offset) in terms.iter().filter(|(t, _)| t.len() <= MAX_LEXEME_BYTES) {
        let at = offset.saturating_add(1).min(MAX_POSITION);
        let (_, positions) = by_term.entry(term.as_str()).or_default();
        if positions.last().is_none_or(|&last| last < at) && positions.len() < MAX_POSITIONS {
            positions.push(at);
        }
    }
    by_term
}

/// The `tsvector` literal of a message's `terms` in the scopes `scope` (a session's and
/// a lane's token).
pub fn tsvector_literal(terms: &Terms, scope: &[String]) -> String {
    let out: Vec<String> = entries(terms, scope)
        .into_iter()
        .map(|(term, (scoped, positions))| {
            let list: Vec<String> = positions
                .iter()
                .map(|&p| match (scoped, p) {
                    (true, 1) => "1A".to_string(),
                    _ => p.to_string(),
                })
                .collect();
            format!("{}:{}", lexeme(term), list.join(","))
        })
        .collect();
    out.join(" ")
}

/// A `tsvector` in PostgreSQL's binary form (what `tsvector_send` writes and
/// `tsvector_recv` reads): the server takes it as it is, without parsing a literal.
#[derive(Debug, Clone)]
pub struct TsVector(Vec<u8>);

impl TsVector {
    /// The `tsvector` of a message's `terms` in the scopes `scope`, equal to the one
    /// [`tsvector_literal`] writes.
    pub fn of(terms: &Terms, scope: &[String]) -> Self {
        let entries = entries(terms, scope);
        let mut out = Vec::with_capacity(16 * entries.len() + 4);
        out.extend_from_slice(
            &u32::try_from(entries.len())
                .unwrap_or(u32::MAX)
                .to_be_bytes(),
        );
        for (term, (scoped, positions)) in entries {
            out.extend_from_slice(term.as_bytes());
            out.push(0);
            out.extend_from_slice(&u16::try_from(positions.len()).unwrap_or(0).to_be_bytes());
            for p in positions {
                // The weight in the two high bits (`A` is 3), the position in the rest.
                let weight: u16 = if scoped && p == 1 { 3 << 14 } else { 0 };
                out.extend_from_slice(&(weight | u16::try_from(p).unwrap_or(0)).to_be_bytes());
            }
        }
        TsVector(out)
    }
}

impl ToSql for TsVector {
    fn to_sql(&self, _: &Type, out: &mut BytesMut) -> Result<IsNull, Box<dyn Error + Sync + Send>> {
        out.extend_from_slice(&self.0);
        Ok(IsNull::No)
    }

    fn accepts(ty: &Type) -> bool {
        ty.name() == "tsvector"
    }

    to_sql_checked!();
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
