//! The rows of a scope (a session, or one lane of it) holding each of a search's words,
//! read in one call: the store's [`crate::memory::passages`] reads them from FTS5 a word at
//! a time; here each word would be a round trip.
//!
//! Two ways give the same rows, and the cheaper is taken by the scope's size:
//! - a small scope is read through its btree (`memory_messages_by_lane`, or the session's
//!   unique key), every row's `words` matched against every word at once (`@@`, the same
//!   `tsvector` and phrase the index answers for);
//! - a larger one asks the GIN index, word by word within one statement, for the scope's
//!   token and the word together.
//!
//! A frequent word's GIN posting list is long: intersecting it with a lane's costs as much
//! as matching a hundred rows does, whatever the lane's size, and grows with the store;
//! matching a row costs the same whatever the store holds.

use super::words::{lexeme, phrase};
use crate::core::pg::PgError;
use deadpool_postgres::GenericClient;
use tokio_postgres::types::ToSql;

/// A scope is read row by row while it holds at most this many rows per word searched:
/// above it, the GIN index. On loopback (bench/memory-pg.js) a GIN search of a frequent
/// word took 0.3 to 0.9 ms and matching 100 rows against ten words about 0.4 ms.
pub const SCAN_ROWS_PER_WORD: usize = 100;

/// The words one statement matches a scope's rows against; more take further statements
/// in the same call.
const SCAN_WORDS: usize = 16;

/// Where a search looks: a session, or one lane of it; `token` is its scope token in the
/// stored `tsvector`s and `rows` how many messages it holds.
#[derive(Debug, Clone, Copy)]
pub struct Scope<'a> {
    pub session: &'a str,
    pub lane: Option<&'a str>,
    pub token: &'a str,
    pub rows: usize,
}

/// For each of `words` (a word's index terms in order, a phrase when more than one, and
/// the row to read after), the rows of `scope` after that row holding the word, oldest
/// first. A word with no index term is in no row.
pub async fn rows_holding<C: GenericClient>(
    c: &C,
    scope: &Scope<'_>,
    words: &[(Vec<String>, i64)],
) -> Result<Vec<Vec<i64>>, PgError> {
    let asked = words
        .iter()
        .filter(|(tokens, _)| !tokens.is_empty())
        .count();
    let mut out = if asked == 0 {
        vec![Vec::new(); words.len()]
    } else if scope.rows <= SCAN_ROWS_PER_WORD.saturating_mul(asked) {
        scanned(c, scope, words).await?
    } else {
        indexed(c, scope.token, words).await?
    };
    for rows in &mut out {
        rows.sort_unstable();
    }
    Ok(out)
}

/// The statement matching a scope's rows (`lane`: one lane's) against [`SCAN_WORDS`] words
/// (`NULL` for none): `$1` the session, `$2` the lane (when one), then the row to read
/// after, then the words' `tsquery` literals.
fn scan_sql(lane: bool) -> String {
    let first = if lane { 4 } else { 3 };
    let columns: Vec<String> = (1..=SCAN_WORDS)
        .map(|k| format!("m.words @@ q.w{k}"))
        .collect();
    let queries: Vec<String> = (0..SCAN_WORDS)
        .map(|k| format!("${}::text::tsquery AS w{}", first + k, k + 1))
        .collect();
    let scope = if lane {
        "m.session_id = $1 AND m.thread_key = $2 AND m.seq > $3"
    } else {
        "m.session_id = $1 AND m.seq > $2"
    };
    // The words are parsed once, in the one-row subquery, not once a row.
    format!(
        "SELECT m.seq, {} FROM (SELECT {}) q, memory_messages m WHERE {scope}",
        columns.join(", "),
        queries.join(", ")
    )
}

/// [`rows_holding`] through the scope's btree: each row matched against every word.
async fn scanned<C: GenericClient>(
    c: &C,
    scope: &Scope<'_>,
    words: &[(Vec<String>, i64)],
) -> Result<Vec<Vec<i64>>, PgError> {
    let mut out = vec![Vec::new(); words.len()];
    let after = words.iter().map(|w| w.1).min().unwrap_or(0);
    let sql = scan_sql(scope.lane.is_some());
    for (chunk_at, chunk) in words.chunks(SCAN_WORDS).enumerate() {
        let queries: Vec<Option<String>> = (0..SCAN_WORDS)
            .map(|k| {
                chunk
                    .get(k)
                    .filter(|(tokens, _)| !tokens.is_empty())
                    .map(|(tokens, _)| phrase(tokens))
            })
            .collect();
        if queries.iter().all(Option::is_none) {
            continue;
        }
        let mut params: Vec<&(dyn ToSql + Sync)> = vec![&scope.session];
        if let Some(lane) = &scope.lane {
            params.push(lane);
        }
        params.push(&after);
        params.extend(queries.iter().map(|q| q as &(dyn ToSql + Sync)));
        for r in super::rows(c, &sql, &params).await? {
            let seq: i64 = r.get(0);
            for (k, (_, word_after)) in chunk.iter().enumerate() {
                if seq > *word_after && r.get::<_, Option<bool>>(k + 1) == Some(true) {
                    out[chunk_at * SCAN_WORDS + k].push(seq);
                }
            }
        }
    }
    Ok(out)
}

/// [`rows_holding`] through the GIN index: the scope's token and each word together.
async fn indexed<C: GenericClient>(
    c: &C,
    token: &str,
    words: &[(Vec<String>, i64)],
) -> Result<Vec<Vec<i64>>, PgError> {
    let mut queries = Vec::new();
    let mut afters = Vec::new();
    let mut at = Vec::new();
    for (i, (tokens, after)) in words.iter().enumerate() {
        if !tokens.is_empty() {
            queries.push(format!("{}:A & ({})", lexeme(token), phrase(tokens)));
            afters.push(*after);
            at.push(i);
        }
    }
    // `seq + 0`: a bare `seq > after` has the planner intersect the GIN rows with the
    // primary key's rows past `after`, most of the table.
    let rows = super::rows(
        c,
        "SELECT t.i, m.seq
         FROM unnest($1::text[]::tsquery[], $2::bigint[]) WITH ORDINALITY AS t (q, after, i)
         CROSS JOIN LATERAL (
             SELECT seq FROM memory_messages WHERE words @@ t.q AND seq + 0 > t.after
         ) m",
        &[&queries, &afters],
    )
    .await?;
    let mut out = vec![Vec::new(); words.len()];
    for r in &rows {
        let i = usize::try_from(r.get::<_, i64>(0) - 1).unwrap_or(usize::MAX);
        if let Some(rows) = at.get(i).and_then(|&w| out.get_mut(w)) {
            rows.push(r.get(1));
        }
    }
    Ok(out)
}
