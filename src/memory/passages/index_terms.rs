//! The terms the message index holds for a text, made by the index's own tokenizer: SQLite's
//! FTS5 `porter` over `unicode61` with diacritics removed, run on a private in-memory
//! table. A store that keeps its word index elsewhere (PostgreSQL's `tsvector`) writes these
//! terms, so a search finds there exactly the messages FTS5 finds in the SQLite file: the
//! same case folding, the same stems, the same character pairs of unsegmented scripts
//! ([`super::terms::index_text`]), by construction rather than by a second tokenizer.

use super::terms::index_text;
use crate::memory::db::MemoryError;
use rusqlite::Connection;

/// The message index's tokenizer, as its schema step names it (`crate::core::db`).
pub const INDEX_TOKENIZER: &str = "porter unicode61 remove_diacritics 2";
/// The record word index's tokenizer (`records_words`).
pub const RECORD_WORDS_TOKENIZER: &str = "unicode61 remove_diacritics 2";
/// The record trigram index's tokenizer (`records_trigrams`).
pub const RECORD_TRIGRAMS_TOKENIZER: &str = "trigram";

/// A text's terms with the positions FTS5 gives them (0 for the first token).
pub type Terms = Vec<(String, u32)>;

/// A private FTS5 table to tokenize with.
#[derive(Debug)]
pub struct IndexTerms {
    conn: Connection,
}

impl IndexTerms {
    /// The message index's terms.
    pub fn new() -> Result<Self, MemoryError> {
        Self::with(INDEX_TOKENIZER)
    }

    /// The terms FTS5's `tokenizer` (as a schema names it) makes.
    pub fn with(tokenizer: &str) -> Result<Self, MemoryError> {
        let conn = Connection::open_in_memory()?;
        conn.execute_batch(&format!(
            "CREATE VIRTUAL TABLE scratch USING fts5 (
                 body, content = '', contentless_delete = 1, tokenize = '{tokenizer}');
             CREATE VIRTUAL TABLE scratch_terms USING fts5vocab (scratch, 'instance');"
        ))?;
        Ok(IndexTerms { conn })
    }

    /// The terms of each of `texts` as they are (no [`index_text`]), in token order.
    pub fn of_texts(&self, texts: &[&str]) -> Result<Vec<Terms>, MemoryError> {
        self.tokenize(texts)
    }

    /// The terms of each of `texts`, as indexed (after [`index_text`]), in token order.
    pub fn of_messages(&self, texts: &[&str]) -> Result<Vec<Terms>, MemoryError> {
        let indexed: Vec<String> = texts.iter().map(|t| index_text(t)).collect();
        self.tokenize(&indexed.iter().map(String::as_str).collect::<Vec<_>>())
    }

    /// The terms FTS5 makes of `term` in a query (quoted, as the searches write it): one
    /// stem for a word, more for a string the tokenizer splits (searched as a phrase).
    pub fn of_query_term(&self, term: &str) -> Result<Vec<String>, MemoryError> {
        Ok(self.of_query_terms(&[term])?.pop().unwrap_or_default())
    }

    /// [`IndexTerms::of_query_term`] of each of `terms`, in one pass.
    pub fn of_query_terms(&self, terms: &[&str]) -> Result<Vec<Vec<String>>, MemoryError> {
        Ok(self
            .tokenize(terms)?
            .into_iter()
            .map(|t| t.into_iter().map(|(t, _)| t).collect())
            .collect())
    }

    fn tokenize(&self, texts: &[&str]) -> Result<Vec<Terms>, MemoryError> {
        let tx = self.conn.unchecked_transaction()?;
        {
            let mut insert =
                tx.prepare_cached("INSERT INTO scratch (rowid, body) VALUES (?1, ?2)")?;
            for (i, text) in texts.iter().enumerate() {
                insert.execute(rusqlite::params![
                    i64::try_from(i).unwrap_or(i64::MAX),
                    text
                ])?;
            }
        }
        let mut out: Vec<Terms> = vec![Vec::new(); texts.len()];
        {
            let mut read = tx.prepare_cached(
                // In the index's order (by term): sorted here, faster than by SQLite.
                "SELECT doc, term, offset FROM scratch_terms",
            )?;
            let rows = read.query_map([], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, i64>(2)?,
                ))
            })?;
            for row in rows {
                let (doc, term, offset) = row?;
                if let Some(terms) = usize::try_from(doc).ok().and_then(|d| out.get_mut(d)) {
                    terms.push((term, u32::try_from(offset).unwrap_or(u32::MAX)));
                }
            }
        }
        for terms in &mut out {
            terms.sort_by_key(|t| t.1);
        }
        tx.execute("INSERT INTO scratch (scratch) VALUES ('delete-all')", [])?;
        tx.commit()?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The rows of a real message index (the schema's own) holding `term`, over `texts`.
    fn fts5_rows(texts: &[String], term: &str) -> Vec<i64> {
        let conn = Connection::open_in_memory().unwrap_or_else(|e| panic!("{e}"));
        conn.execute_batch(&format!(
            "CREATE VIRTUAL TABLE idx USING fts5 (body, content = '', tokenize = '{INDEX_TOKENIZER}')"
        ))
        .unwrap_or_else(|e| panic!("{e}"));
        for (i, t) in texts.iter().enumerate() {
            conn.execute(
                "INSERT INTO idx (rowid, body) VALUES (?1, ?2)",
                rusqlite::params![i64::try_from(i).unwrap_or(0), index_text(t)],
            )
            .unwrap_or_else(|e| panic!("{e}"));
        }
        let mut st = conn
            .prepare("SELECT rowid FROM idx WHERE idx MATCH ?1 ORDER BY rowid")
            .unwrap_or_else(|e| panic!("{e}"));
        let expr = format!("body : {}", crate::memory::passages::terms::fts_quote(term));
        st.query_map([expr], |r| r.get(0))
            .and_then(|rows| rows.collect())
            .unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn the_indexes_are_made_with_these_tokenizers() {
        let made = |table: &str, tokenizer: &str| {
            crate::core::db::MIGRATIONS.iter().any(|m| {
                m.split("CREATE VIRTUAL TABLE ").any(|t| {
                    t.starts_with(&format!("{table} USING fts5"))
                        && t.split(';')
                            .next()
                            .is_some_and(|d| d.contains(&format!("tokenize = '{tokenizer}'")))
                })
            })
        };
        assert!(made("messages_index", INDEX_TOKENIZER));
        assert!(made("records_words", RECORD_WORDS_TOKENIZER));
        assert!(made("records_trigrams", RECORD_TRIGRAMS_TOKENIZER));
    }

    #[test]
    fn stems_folds_and_pairs_as_the_index_does() {
        let t = IndexTerms::new().unwrap_or_else(|e| panic!("{e}"));
        let terms = t
            .of_messages(&["Running ÉCOLES, the runner's café", "東京タワー", ""])
            .unwrap_or_else(|e| panic!("{e}"));
        let words = |i: usize| terms[i].iter().map(|(w, _)| w.as_str()).collect::<Vec<_>>();
        assert_eq!(words(0), ["run", "ecol", "the", "runner", "s", "cafe"]);
        assert_eq!(words(1), ["東京", "京タ", "タワ", "ワー"]);
        assert!(terms[2].is_empty());
        assert_eq!(
            t.of_query_term("Running").ok(),
            Some(vec!["run".to_string()])
        );
        assert_eq!(
            t.of_query_term("cafés").ok(),
            Some(vec!["cafe".to_string()])
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Over any texts, the messages holding a word of them, as a search asks for it,
        /// by the terms made here, are those the message index itself finds.
        #[test]
        fn a_words_messages_are_the_ones_the_index_finds(
            texts in proptest::collection::vec(
                "([a-zA-Z]{1,9}|[àéîõüÉÇß]{1,3}|[東京タワー大阪]{1,4}|[0-9]{1,4}|[ ,.'?!-]{1,2}){0,12}",
                1..8,
            ),
            pick in 0usize..64,
        ) {
            let t = IndexTerms::new().map_err(|e| TestCaseError::fail(e.to_string()))?;
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            let terms = t.of_messages(&refs).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let words: Vec<&str> = texts
                .iter()
                .flat_map(|x| x.split(|c: char| !c.is_alphanumeric()))
                .filter(|w| !w.is_empty())
                .collect();
            if words.is_empty() {
                return Ok(());
            }
            let word = words[pick % words.len()];
            let asked = t.of_query_term(word).map_err(|e| TestCaseError::fail(e.to_string()))?;
            // Every token of the word, in order (a phrase; a word is mostly one token).
            let holds = |ts: &Terms| {
                ts.windows(asked.len().max(1)).any(|w| {
                    w.iter().zip(&asked).all(|((t, _), a)| t == a)
                        && w.windows(2).all(|p| p[1].1 == p[0].1 + 1)
                })
            };
            let ours: Vec<i64> = terms
                .iter()
                .enumerate()
                .filter(|(_, ts)| !asked.is_empty() && holds(ts))
                .map(|(i, _)| i64::try_from(i).unwrap_or(0))
                .collect();
            prop_assert_eq!(ours, fts5_rows(&texts, word));
        }
    }
}
