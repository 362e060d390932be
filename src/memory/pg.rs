//! The conversation memory's schema on PostgreSQL, for gateway hosts that share one
//! database: the same tables as the SQLite file (`crate::core::db`), the word indexes as
//! `tsvector` columns under GIN indexes, written from the terms SQLite's own tokenizers
//! make (the message index's, the record words' and the record trigrams', for text whose
//! words are not separated by spaces), so both stores find the same candidates and rank
//! them by the same BM25; each lane's counts and each record index's totals for ranking. Versioned under the component
//! name [`COMPONENT`] by [`crate::core::pg::Pg::migrate`].

/// The name the memory's schema version is kept under.
pub const COMPONENT: &str = "memory";

/// The schema, one step per version.
pub const MIGRATIONS: [&str; 3] = [
    r"
CREATE TABLE memory_messages (
    seq        BIGSERIAL PRIMARY KEY,
    session_id TEXT NOT NULL,
    message_id TEXT NOT NULL,
    thread_key TEXT NOT NULL,
    role       TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
    text       TEXT NOT NULL,
    ts_ms      BIGINT NOT NULL,
    reply_to   TEXT,
    words      TSVECTOR NOT NULL,
    UNIQUE (session_id, message_id)
);
CREATE INDEX memory_messages_by_lane ON memory_messages (session_id, thread_key, seq);
CREATE INDEX memory_messages_words ON memory_messages USING GIN (words);

CREATE TABLE memory_lane_stats (
    session_id TEXT NOT NULL,
    thread_key TEXT NOT NULL,
    messages   BIGINT NOT NULL,
    chars      BIGINT NOT NULL,
    PRIMARY KEY (session_id, thread_key)
);

CREATE TABLE memory_records (
    id              BIGSERIAL PRIMARY KEY,
    session_id      TEXT NOT NULL,
    kind            TEXT NOT NULL CHECK (kind IN (
                        'thread_summary', 'session_summary', 'thread_state',
                        'fact', 'preference', 'outcome')),
    thread_key      TEXT NOT NULL DEFAULT '',
    body            TEXT NOT NULL,
    summary_version BIGINT NOT NULL DEFAULT 0,
    updated_at_ms   BIGINT NOT NULL,
    range_from      TEXT,
    range_to        TEXT,
    fence           BIGINT NOT NULL DEFAULT 0,
    superseded_by   BIGINT,
    words           TSVECTOR NOT NULL,
    grams           TSVECTOR NOT NULL
);
CREATE UNIQUE INDEX memory_records_one_per_lane ON memory_records (session_id, kind, thread_key)
    WHERE kind IN ('thread_summary', 'session_summary', 'thread_state');
CREATE INDEX memory_records_by_session ON memory_records (session_id, kind);
CREATE INDEX memory_records_statements ON memory_records (session_id, thread_key, (range_from IS NULL))
    WHERE kind IN ('fact', 'preference', 'outcome');
CREATE INDEX memory_records_words ON memory_records USING GIN (words);
CREATE INDEX memory_records_grams ON memory_records USING GIN (grams);
-- What BM25 reads of each record index as a whole: its rows and tokens.
CREATE TABLE memory_record_totals (
    index_name TEXT PRIMARY KEY,
    rows       BIGINT NOT NULL,
    tokens     BIGINT NOT NULL
);
INSERT INTO memory_record_totals VALUES ('words', 0, 0), ('grams', 0, 0);

CREATE TABLE memory_turns (
    advancement_key TEXT PRIMARY KEY,
    session_id      TEXT NOT NULL,
    committed_at_ms BIGINT NOT NULL
);

CREATE TABLE memory_conversations (
    id            BIGSERIAL PRIMARY KEY,
    chat_id       TEXT NOT NULL,
    session_id    TEXT NOT NULL,
    started_at_ms BIGINT NOT NULL,
    ended_at_ms   BIGINT NOT NULL,
    summary       TEXT NOT NULL,
    turns         TEXT NOT NULL,
    UNIQUE (chat_id, session_id)
);
CREATE INDEX memory_conversations_by_end ON memory_conversations (chat_id, ended_at_ms);

CREATE TABLE memory_message_vectors (
    seq BIGINT PRIMARY KEY REFERENCES memory_messages (seq),
    vec BYTEA NOT NULL
);
CREATE TABLE memory_vector_counts (
    session_id TEXT PRIMARY KEY,
    vectors    BIGINT NOT NULL
);
",
    // 2: the word indexes' pending lists kept short. A GIN index takes new rows into a pending
    // list that every search scans whole until it is merged; with the default limit (4 MB) a
    // store fed steadily searched 100,000 messages in 4 ms a word where the merged index
    // answers in 0.2 ms. At 64 kB, the writer that fills it merges it.
    r"
ALTER INDEX memory_messages_words SET (gin_pending_list_limit = 64);
ALTER INDEX memory_records_words SET (gin_pending_list_limit = 64);
ALTER INDEX memory_records_grams SET (gin_pending_list_limit = 64);
",
    // 3: the messages' word index takes its pending list's limit from the writer (see
    // `pg::messages`): 64 kB, as before, for a turn's few rows; 4 MB while a large batch is
    // written, merged at its end. Merging 64 kB at a time cost a batch of 1,000 messages
    // 90 ms of its 150 (a frequent word's posting list rewritten every 60 rows).
    r"
ALTER INDEX memory_messages_words RESET (gin_pending_list_limit);
",
];

/// Takes `session`'s lock for the rest of the transaction `c` is in: the writes of a
/// session (messages, records, compactions) are one at a time, whichever host makes them,
/// and its rows are numbered in the order they commit.
pub async fn lock_session<C: deadpool_postgres::GenericClient>(
    c: &C,
    session: &str,
) -> Result<(), crate::core::pg::PgError> {
    lock_sessions(c, &[session]).await
}

/// Takes the locks of `sessions` (sorted, distinct: two transactions taking some of the
/// same never wait on each other in a circle) in one statement, in that order.
pub async fn lock_sessions<C: deadpool_postgres::GenericClient>(
    c: &C,
    sessions: &[&str],
) -> Result<(), crate::core::pg::PgError> {
    // The sessions are numbered and sorted by number before the locks are taken (the
    // OFFSET keeps the planner from evaluating the lock calls before the sort).
    rows(
        c,
        "SELECT pg_advisory_xact_lock(hashtext('openclaw-context-engine:memory:' || s))
         FROM (SELECT s FROM unnest($1::text[]) WITH ORDINALITY AS u (s, n) ORDER BY n OFFSET 0) q",
        &[&sessions],
    )
    .await?;
    Ok(())
}

/// The rows `sql` (prepared once per connection) gives for `params` through `c` (a pooled
/// connection, or the transaction a call runs in).
pub async fn rows<C: deadpool_postgres::GenericClient>(
    c: &C,
    sql: &str,
    params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
) -> Result<Vec<tokio_postgres::Row>, crate::core::pg::PgError> {
    let statement = c.prepare_cached(sql).await?;
    Ok(c.query(&statement, params).await?)
}

pub mod bm25;
pub mod compaction;
pub mod conversations;
pub mod link;
pub mod messages;
pub mod reads;
pub mod records;
pub mod terms;
pub mod vectors;
pub mod words;

#[cfg(test)]
mod tests;
