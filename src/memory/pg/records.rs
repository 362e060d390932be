//! Memory records on PostgreSQL with the SQLite store's rules (`crate::memory::store`'s
//! records): written redacted, one per lane for summaries and state, searched by their
//! words and by the trigrams of unsegmented text, ranked by FTS5's BM25 ([`super::bm25`])
//! over the same terms (SQLite's own tokenizers, [`IndexTerms`]), and superseded by a
//! statement that changes them. Candidates come from the GIN indexes of `words` and
//! `grams`; each index's totals (rows, tokens) are kept in `memory_record_totals` as
//! FTS5 keeps its own, in the transaction that writes the record.

use super::bm25;
use super::words::{phrase, tsvector_literal};
use crate::core::pg::{Pg, PgError};
use crate::memory::db::MemoryError;
use crate::memory::passages::index_terms::{
    IndexTerms, Terms, RECORD_TRIGRAMS_TOKENIZER, RECORD_WORDS_TOKENIZER,
};
use crate::memory::record::words::{changes, query_words, subject_words};
use crate::memory::record::{
    best_within, record_columns_of, NewRecord, Record, RecordKind, RECORD_COLUMNS,
    SUPERSEDE_CANDIDATES, SUPERSEDE_MIN_SHARED,
};
use crate::memory::secrets::redact;
use deadpool_postgres::GenericClient;
use tokio_postgres::Row;

/// The record indexes' tokenizers.
#[derive(Debug)]
pub struct RecordTerms {
    words: IndexTerms,
    grams: IndexTerms,
}

impl RecordTerms {
    pub fn new() -> Result<Self, MemoryError> {
        Ok(RecordTerms {
            words: IndexTerms::with(RECORD_WORDS_TOKENIZER)?,
            grams: IndexTerms::with(RECORD_TRIGRAMS_TOKENIZER)?,
        })
    }

    fn of(&self, index: Index, text: &str) -> Result<Terms, MemoryError> {
        let t = match index {
            Index::Words => &self.words,
            Index::Grams => &self.grams,
        };
        Ok(t.of_texts(&[text])?.pop().unwrap_or_default())
    }
}

#[derive(Debug, Clone, Copy)]
pub(super) enum Index {
    Words,
    Grams,
}

impl Index {
    fn column(self) -> &'static str {
        match self {
            Index::Words => "words",
            Index::Grams => "grams",
        }
    }
}

fn record_of(r: &Row) -> Record {
    let kind: &str = r.get(2);
    let from: Option<String> = r.get(7);
    let to: Option<String> = r.get(8);
    Record {
        id: r.get(0),
        session_id: r.get(1),
        kind: RecordKind::parse(kind).unwrap_or(RecordKind::Fact),
        thread_key: r.get(3),
        body: r.get(4),
        summary_version: r.get(5),
        updated_at_ms: r.get(6),
        message_range: from.zip(to),
        superseded_by: r.get(9),
    }
}

/// Writes a record (see `MemoryStore::put_record`) in a transaction of its own under
/// its session's lock; returns its id.
pub async fn put_record(pg: &Pg, t: &RecordTerms, r: &NewRecord<'_>) -> Result<i64, MemoryError> {
    pg.within("writing a record", async {
        let mut client = pg.client().await?;
        let tx = client.transaction().await?;
        super::lock_session(&tx, r.session_id).await?;
        let id = put_record_in(&tx, t, r).await?;
        tx.commit().await?;
        Ok(id)
    })
    .await
}

/// Writes a record through `c`, a transaction holding the record's session lock (the
/// record and its index's totals change together).
pub async fn put_record_in<C: GenericClient>(
    c: &C,
    t: &RecordTerms,
    r: &NewRecord<'_>,
) -> Result<i64, MemoryError> {
    let body = redact(r.body).replace('\0', "\u{FFFD}");
    let (words, grams) = (t.of(Index::Words, &body)?, t.of(Index::Grams, &body)?);
    let (from, to) = r.message_range.unzip();
    let lane = r.kind.lane_key(r.thread_key);
    let kind = r.kind.as_str();
    let before = if r.kind.single() {
        c.query_opt(
            "SELECT id, body FROM memory_records
             WHERE session_id = $1 AND kind = $2 AND thread_key = $3",
            &[&r.session_id, &kind, &lane],
        )
        .await?
        .map(|row| (row.get::<_, i64>(0), row.get::<_, String>(1)))
    } else {
        None
    };
    let (w, g) = (tsvector_literal(&words, &[]), tsvector_literal(&grams, &[]));
    let (id, rows, old_words, old_grams) = match before {
        Some((id, old)) => {
            c.execute(
                "UPDATE memory_records SET body = $2, summary_version = $3,
                     updated_at_ms = $4, range_from = $5, range_to = $6,
                     words = $7::text::tsvector, grams = $8::text::tsvector
                 WHERE id = $1",
                &[
                    &id,
                    &body,
                    &r.summary_version,
                    &r.updated_at_ms,
                    &from,
                    &to,
                    &w,
                    &g,
                ],
            )
            .await?;
            let old_w = t.of(Index::Words, &old)?.len();
            let old_g = t.of(Index::Grams, &old)?.len();
            (id, 0i64, old_w, old_g)
        }
        None => {
            let row = c
                .query_one(
                    "INSERT INTO memory_records (session_id, kind, thread_key, body,
                         summary_version, updated_at_ms, range_from, range_to, words, grams)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::text::tsvector,
                             $10::text::tsvector)
                     RETURNING id",
                    &[
                        &r.session_id,
                        &kind,
                        &lane,
                        &body,
                        &r.summary_version,
                        &r.updated_at_ms,
                        &from,
                        &to,
                        &w,
                        &g,
                    ],
                )
                .await?;
            (row.get(0), 1i64, 0, 0)
        }
    };
    for (index, new, old) in [
        ("words", words.len(), old_words),
        ("grams", grams.len(), old_grams),
    ] {
        let delta = i64::try_from(new).unwrap_or(0) - i64::try_from(old).unwrap_or(0);
        c.execute(
            "UPDATE memory_record_totals SET rows = rows + $2, tokens = tokens + $3
             WHERE index_name = $1",
            &[&index, &rows, &delta],
        )
        .await?;
    }
    Ok(id)
}

/// The one record of a single kind for a session and lane.
pub async fn record<C: GenericClient>(
    c: &C,
    session: &str,
    kind: RecordKind,
    lane: &str,
) -> Result<Option<Record>, PgError> {
    let lane = kind.lane_key(lane);
    let sql = format!(
        "SELECT {RECORD_COLUMNS} FROM memory_records
         WHERE session_id = $1 AND kind = $2 AND thread_key = $3 ORDER BY id DESC LIMIT 1"
    );
    let rows = super::rows(c, &sql, &[&session, &kind.as_str(), &lane]).await?;
    Ok(rows.first().map(record_of))
}

/// The record of `session` whose id is `id`.
pub async fn record_by_id<C: GenericClient>(
    c: &C,
    session: &str,
    id: i64,
) -> Result<Option<Record>, PgError> {
    let sql =
        format!("SELECT {RECORD_COLUMNS} FROM memory_records WHERE id = $1 AND session_id = $2");
    let rows = super::rows(c, &sql, &[&id, &session]).await?;
    Ok(rows.first().map(record_of))
}

/// The records of `session` matching any of `terms` in `index` that `kept` (a condition on
/// `r`, with `$2` the session and `$3` what it names) keeps, each with its BM25 score,
/// best first (ties by id), at most `limit`: what FTS5's `ORDER BY bm25 LIMIT` gives.
#[allow(clippy::too_many_arguments)]
pub(super) async fn ranked<C: GenericClient>(
    c: &C,
    t: &RecordTerms,
    index: Index,
    terms: &[String],
    session: &str,
    kept: &str,
    third: &(dyn tokio_postgres::types::ToSql + Sync),
    limit: usize,
) -> Result<Vec<(f64, Record)>, MemoryError> {
    let phrases: Vec<Vec<String>> = terms
        .iter()
        .map(|w| Ok(t.of(index, w)?.into_iter().map(|(s, _)| s).collect()))
        .collect::<Result<_, MemoryError>>()?;
    // Each word as a phrase (its index terms in order); a word without one finds nothing
    // but still counts among the query's phrases, as in FTS5.
    let all: Vec<String> = phrases.iter().map(|p| phrase(p)).collect();
    let any = all
        .iter()
        .filter(|q| !q.is_empty())
        .map(|q| format!("({q})"))
        .collect::<Vec<_>>()
        .join(" | ");
    if any.is_empty() {
        return Ok(Vec::new());
    }
    let col = index.column();
    let cols = record_columns_of("r");
    let found = super::rows(
        c,
        &format!(
            "SELECT {cols} FROM memory_records r
             WHERE r.{col} @@ $1::text::tsquery AND r.session_id = $2 AND ({kept})"
        ),
        &[&any, &session, third],
    )
    .await?;
    if found.is_empty() {
        return Ok(Vec::new());
    }
    let counts = c
        .query(
            &format!(
                "SELECT (SELECT rows FROM memory_record_totals WHERE index_name = $2),
                        (SELECT tokens FROM memory_record_totals WHERE index_name = $2),
                        array(SELECT CASE WHEN q = '' THEN 0 ELSE
                                  (SELECT count(*) FROM memory_records WHERE {col} @@ q::tsquery) END
                              FROM unnest($1::text[]) WITH ORDINALITY AS u (q, i) ORDER BY i)"
            ),
            &[&all, &col],
        )
        .await?;
    let Some(c) = counts.first() else {
        return Ok(Vec::new());
    };
    let (rows, tokens, hits): (i64, i64, Vec<i64>) = (c.get(0), c.get(1), c.get(2));
    #[allow(clippy::cast_precision_loss)]
    let avgdl = tokens as f64 / rows.max(1) as f64;
    let idfs: Vec<f64> = hits.iter().map(|&n| bm25::idf(rows, n)).collect();
    let mut scored = Vec::with_capacity(found.len());
    for row in &found {
        let rec = record_of(row);
        let terms = t.of(index, &rec.body)?;
        scored.push((bm25::score(&terms, &phrases, &idfs, avgdl), rec));
    }
    scored.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.id.cmp(&b.1.id)));
    scored.truncate(limit);
    Ok(scored)
}

/// Marks what the new statement `id` (`body`) changes (see `MemoryStore::supersede`),
/// through `c` (the transaction that wrote it, so its totals count it).
pub async fn supersede<C: GenericClient>(
    c: &C,
    t: &RecordTerms,
    session: &str,
    kind: RecordKind,
    id: i64,
    body: &str,
) -> Result<usize, MemoryError> {
    let new = subject_words(body);
    if new.len() < SUPERSEDE_MIN_SHARED {
        return Ok(0);
    }
    let mut older = ranked(
        c,
        t,
        Index::Words,
        &new,
        session,
        &format!(
            "r.kind = '{}' AND r.id < $3 AND r.superseded_by IS NULL",
            kind.as_str()
        ),
        &id,
        usize::MAX,
    )
    .await?;
    // FTS5's order: the score, then the newer first.
    older.sort_by(|a, b| a.0.total_cmp(&b.0).then(b.1.id.cmp(&a.1.id)));
    older.truncate(SUPERSEDE_CANDIDATES);
    let mut marked = 0;
    for (_, old) in older {
        if changes(&new, &subject_words(&old.body)) {
            c.execute(
                "UPDATE memory_records SET superseded_by = $1 WHERE id = $2",
                &[&id, &old.id],
            )
            .await?;
            marked += 1;
        }
    }
    Ok(marked)
}

/// The records of `session` matching `query` for `lane` (see `MemoryStore::search`).
pub async fn search<C: GenericClient>(
    c: &C,
    t: &RecordTerms,
    session: &str,
    query: &str,
    lane: &str,
    k: usize,
    max_tokens: u64,
) -> Result<Vec<Record>, MemoryError> {
    let kept = "r.kind IN ('fact', 'preference', 'outcome')
                OR (r.kind = 'thread_summary' AND r.thread_key = $3)";
    search_where(c, t, session, query, lane, k, max_tokens, kept).await
}

/// What an assembly for `lane` shows as memories (see `MemoryStore::search_memories`).
pub async fn search_memories<C: GenericClient>(
    c: &C,
    t: &RecordTerms,
    session: &str,
    query: &str,
    lane: &str,
    k: usize,
    max_tokens: u64,
) -> Result<Vec<Record>, MemoryError> {
    let any = super::rows(
        c,
        "SELECT EXISTS (SELECT 1 FROM memory_records WHERE session_id = $1
                 AND kind IN ('fact', 'preference', 'outcome')
                 AND (thread_key <> $2 OR range_from IS NULL))",
        &[&session, &lane],
    )
    .await?;
    if !any.first().is_some_and(|r| r.get::<_, bool>(0)) {
        return Ok(Vec::new());
    }
    let kept = "r.kind IN ('fact', 'preference', 'outcome')
                AND (r.thread_key <> $3 OR r.range_from IS NULL)";
    search_where(c, t, session, query, lane, k, max_tokens, kept).await
}

#[allow(clippy::too_many_arguments)]
async fn search_where<C: GenericClient>(
    c: &C,
    t: &RecordTerms,
    session: &str,
    query: &str,
    lane: &str,
    k: usize,
    max_tokens: u64,
    kept: &str,
) -> Result<Vec<Record>, MemoryError> {
    let (words, grams) = query_words(query);
    let mut hits: Vec<(f64, Record)> = Vec::new();
    for (index, terms) in [(Index::Words, words), (Index::Grams, grams)] {
        if terms.is_empty() {
            continue;
        }
        for (score, rec) in ranked(c, t, index, &terms, session, kept, &lane, k).await? {
            if !hits.iter().any(|(_, h)| h.id == rec.id) {
                hits.push((score, rec));
            }
        }
    }
    Ok(best_within(hits, k, max_tokens))
}
