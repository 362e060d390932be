//! FTS5's `bm25()` as SQLite computes it, for a store that finds its candidates elsewhere:
//! each phrase's IDF over the whole index (`ln((N - n + 0.5) / (n + 0.5))`, at least
//! 1e-6), its count in the row, the row's length in tokens against the index's mean,
//! `k1` 1.2 and `b` 0.75, the same operations in the same order, negated (lower is better).
//! Given the same counts it gives the same number to the last bit.

use crate::memory::passages::index_terms::Terms;

/// BM25's `k1`, as FTS5 fixes it.
pub const K1: f64 = 1.2;
/// BM25's `b`, as FTS5 fixes it.
pub const B: f64 = 0.75;
/// The least IDF a phrase gets (one in more than half of the rows would go below zero).
pub const MIN_IDF: f64 = 1e-6;

/// The IDF of a phrase `hits` of the index's `rows` rows hold.
pub fn idf(rows: i64, hits: i64) -> f64 {
    #[allow(clippy::cast_precision_loss)] // counts are far below 2^53
    let idf = ((rows - hits) as f64 + 0.5) / (hits as f64 + 0.5);
    let idf = idf.ln();
    if idf <= 0.0 {
        MIN_IDF
    } else {
        idf
    }
}

/// How many times `phrase` (its tokens in order, at consecutive positions) is in `row`.
pub fn occurrences(row: &Terms, phrase: &[String]) -> usize {
    let Some(first) = phrase.first() else {
        return 0;
    };
    row.iter()
        .filter(|(t, at)| {
            t == first
                && phrase.iter().enumerate().skip(1).all(|(k, p)| {
                    let want = at.saturating_add(u32::try_from(k).unwrap_or(u32::MAX));
                    row.iter().any(|(t2, at2)| t2 == p && *at2 == want)
                })
        })
        .count()
}

/// The score of `row` for `phrases` with their `idfs`, in an index whose rows hold
/// `avgdl` tokens on average: FTS5's `bm25()` to the bit.
pub fn score(row: &Terms, phrases: &[Vec<String>], idfs: &[f64], avgdl: f64) -> f64 {
    #[allow(clippy::cast_precision_loss)] // a row's token count is far below 2^53
    let d = row.len() as f64;
    let mut score = 0.0;
    for (phrase, idf) in phrases.iter().zip(idfs) {
        #[allow(clippy::cast_precision_loss)]
        let f = occurrences(row, phrase) as f64;
        score += idf * ((f * (K1 + 1.0)) / (f + K1 * (1.0 - B + B * d / avgdl)));
    }
    -score
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::passages::index_terms::{IndexTerms, RECORD_WORDS_TOKENIZER};
    use proptest::prelude::*;
    use rusqlite::Connection;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        /// Over any rows and any query of words, the scores here are SQLite's own.
        #[test]
        fn scores_are_sqlites_bm25_to_the_bit(
            rows in proptest::collection::vec("([a-e]{1,2}|Ça|çà|über)( ([a-e]{1,2}|Ça|çà|über)){0,14}", 1..12),
            words in proptest::collection::vec("[a-e]{1,2}|ca|uber", 1..4),
        ) {
            let conn = Connection::open_in_memory().map_err(|e| TestCaseError::fail(e.to_string()))?;
            conn.execute_batch(&format!(
                "CREATE VIRTUAL TABLE t USING fts5 (body, tokenize = '{RECORD_WORDS_TOKENIZER}')"
            )).map_err(|e| TestCaseError::fail(e.to_string()))?;
            for (i, r) in rows.iter().enumerate() {
                conn.execute("INSERT INTO t (rowid, body) VALUES (?1, ?2)",
                    rusqlite::params![i64::try_from(i).unwrap_or(0), r])
                    .map_err(|e| TestCaseError::fail(e.to_string()))?;
            }
            let query = words.iter().map(|w| format!("\"{w}\"")).collect::<Vec<_>>().join(" OR ");
            let mut st = conn.prepare("SELECT rowid, bm25(t) FROM t WHERE t MATCH ?1 ORDER BY rowid")
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            let sqlite: Vec<(i64, f64)> = st.query_map([&query], |r| Ok((r.get(0)?, r.get(1)?)))
                .and_then(|rows| rows.collect())
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            let tok = IndexTerms::with(RECORD_WORDS_TOKENIZER).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let refs: Vec<&str> = rows.iter().map(String::as_str).collect();
            let terms = tok.of_texts(&refs).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let phrases: Vec<Vec<String>> = words
                .iter()
                .map(|w| tok.of_texts(&[w]).map(|mut t| t.pop().unwrap_or_default().into_iter().map(|(s, _)| s).collect()))
                .collect::<Result<_, _>>()
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            let n = i64::try_from(rows.len()).unwrap_or(0);
            let total: usize = terms.iter().map(Vec::len).sum();
            #[allow(clippy::cast_precision_loss)]
            let avgdl = total as f64 / n as f64;
            let idfs: Vec<f64> = phrases
                .iter()
                .map(|p| idf(n, i64::try_from(terms.iter().filter(|t| occurrences(t, p) > 0).count()).unwrap_or(0)))
                .collect();
            let ours: Vec<(i64, f64)> = terms
                .iter()
                .enumerate()
                .filter(|(_, t)| phrases.iter().any(|p| occurrences(t, p) > 0))
                .map(|(i, t)| (i64::try_from(i).unwrap_or(0), score(t, &phrases, &idfs, avgdl)))
                .collect();
            prop_assert_eq!(ours, sqlite);
        }
    }
}
