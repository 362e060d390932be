//! The SQLite file the conversation memory and a saved ChannelStore share: opening it
//! (WAL, a busy timeout) and its schema, versioned in `PRAGMA user_version` and brought
//! forward by the migrations below, each applied once, in a transaction, in order.
//!
//! A step that needs more than SQL (indexing the messages stored before the message index
//! existed) is left as a row of `pending_steps` for the wing that owns those rows to
//! finish when it opens the file (`crate::memory::db::open`).

use rusqlite::Connection;
use std::time::{Duration, Instant};

/// The page cache per connection, in KiB (64 MiB).
pub const CACHE_KIB: i64 = 65_536;

/// WAL pages between automatic checkpoints (16,384 pages of 4 KiB: 64 MiB).
pub const WAL_CHECKPOINT_PAGES: i64 = 16_384;

/// Prepared statements kept per connection.
pub const STATEMENT_CACHE: usize = 64;

/// How long a write waits for another connection's lock before it fails.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// The schema, one step per version: step `i` takes the file from version `i` to `i + 1`.
pub const MIGRATIONS: [&str; 11] = [
    r"
CREATE TABLE messages (
    seq        INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL,
    message_id TEXT NOT NULL,
    thread_key TEXT NOT NULL,
    role       TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
    text       TEXT NOT NULL,
    ts_ms      INTEGER NOT NULL,
    reply_to   TEXT,
    UNIQUE (session_id, message_id)
);
CREATE INDEX messages_by_lane ON messages (session_id, thread_key, seq);

CREATE TABLE records (
    id              INTEGER PRIMARY KEY,
    session_id      TEXT NOT NULL,
    kind            TEXT NOT NULL CHECK (kind IN (
                        'thread_summary', 'session_summary', 'thread_state',
                        'fact', 'preference', 'outcome')),
    thread_key      TEXT NOT NULL DEFAULT '',
    body            TEXT NOT NULL,
    summary_version INTEGER NOT NULL DEFAULT 0,
    updated_at_ms   INTEGER NOT NULL,
    range_from      TEXT,
    range_to        TEXT
);
CREATE UNIQUE INDEX records_one_per_lane ON records (session_id, kind, thread_key)
    WHERE kind IN ('thread_summary', 'session_summary', 'thread_state');
CREATE INDEX records_by_session ON records (session_id, kind);

-- Word index and trigram index (CJK and other unsegmented text) over record bodies.
CREATE VIRTUAL TABLE records_words USING fts5 (
    body, content = 'records', content_rowid = 'id', tokenize = 'unicode61 remove_diacritics 2');
CREATE VIRTUAL TABLE records_trigrams USING fts5 (
    body, content = 'records', content_rowid = 'id', tokenize = 'trigram');
CREATE TRIGGER records_ai AFTER INSERT ON records BEGIN
    INSERT INTO records_words (rowid, body) VALUES (new.id, new.body);
    INSERT INTO records_trigrams (rowid, body) VALUES (new.id, new.body);
END;
CREATE TRIGGER records_ad AFTER DELETE ON records BEGIN
    INSERT INTO records_words (records_words, rowid, body) VALUES ('delete', old.id, old.body);
    INSERT INTO records_trigrams (records_trigrams, rowid, body) VALUES ('delete', old.id, old.body);
END;
CREATE TRIGGER records_au AFTER UPDATE OF body ON records BEGIN
    INSERT INTO records_words (records_words, rowid, body) VALUES ('delete', old.id, old.body);
    INSERT INTO records_trigrams (records_trigrams, rowid, body) VALUES ('delete', old.id, old.body);
    INSERT INTO records_words (rowid, body) VALUES (new.id, new.body);
    INSERT INTO records_trigrams (rowid, body) VALUES (new.id, new.body);
END;
",
    // Accepted host turns, by the key the host retries them under: a turn is written
    // once, with its messages, in one transaction.
    r"
CREATE TABLE turns (
    advancement_key TEXT PRIMARY KEY,
    session_id      TEXT NOT NULL,
    committed_at_ms INTEGER NOT NULL
);
",
    // Conversations: one session's text turns in a chat, with its times and summary.
    r"
CREATE TABLE conversations (
    id            INTEGER PRIMARY KEY,
    chat_id       TEXT NOT NULL,
    session_id    TEXT NOT NULL,
    started_at_ms INTEGER NOT NULL,
    ended_at_ms   INTEGER NOT NULL,
    summary       TEXT NOT NULL,
    turns         TEXT NOT NULL,
    UNIQUE (chat_id, session_id)
);
CREATE INDEX conversations_by_end ON conversations (chat_id, ended_at_ms);
",
    // A ChannelStore's state, when it is saved to this file (see `crate::channel::persist`):
    // messages as JSON bodies, keyed as the store keys them. `seq` keeps the order in
    // which remembered things (deletions, orphan replies, file locations, media) came.
    r"
CREATE TABLE channel_meta (
    channel        TEXT PRIMARY KEY,
    name           TEXT,
    platform       TEXT,
    workspace      TEXT,
    history_loaded INTEGER NOT NULL,
    horizon_secs   INTEGER,
    horizon_frac   INTEGER
);
CREATE TABLE channel_window (
    channel TEXT NOT NULL,
    id      TEXT NOT NULL,
    body    TEXT NOT NULL,
    PRIMARY KEY (channel, id)
) WITHOUT ROWID;
CREATE TABLE channel_orphans (
    seq     INTEGER PRIMARY KEY,
    channel TEXT NOT NULL,
    id      TEXT NOT NULL,
    body    TEXT NOT NULL,
    UNIQUE (channel, id)
);
CREATE TABLE channel_deleted (
    seq      INTEGER PRIMARY KEY,
    channel  TEXT NOT NULL,
    id       TEXT NOT NULL,
    key_secs INTEGER NOT NULL,
    key_frac INTEGER NOT NULL,
    UNIQUE (channel, id)
);
CREATE TABLE channel_threads (
    channel       TEXT NOT NULL,
    thread        TEXT NOT NULL,
    written_at_ms INTEGER NOT NULL,
    complete      INTEGER NOT NULL,
    replies       TEXT NOT NULL,
    PRIMARY KEY (channel, thread)
) WITHOUT ROWID;
CREATE TABLE channel_starters (
    channel       TEXT NOT NULL,
    thread        TEXT NOT NULL,
    written_at_ms INTEGER NOT NULL,
    body          TEXT NOT NULL,
    PRIMARY KEY (channel, thread)
) WITHOUT ROWID;
CREATE TABLE channel_files (
    seq      INTEGER PRIMARY KEY,
    channel  TEXT NOT NULL,
    artifact TEXT NOT NULL,
    body     TEXT NOT NULL,
    UNIQUE (channel, artifact)
);
CREATE TABLE channel_users (
    user_id      TEXT PRIMARY KEY,
    display_name TEXT NOT NULL,
    is_bot       INTEGER NOT NULL
);
CREATE TABLE channel_media (
    seq           INTEGER PRIMARY KEY,
    channel       TEXT NOT NULL,
    artifact      TEXT NOT NULL,
    media_type    TEXT NOT NULL,
    filename      TEXT,
    content_hash  TEXT NOT NULL,
    fetched_at_ms INTEGER NOT NULL,
    bytes         BLOB NOT NULL,
    UNIQUE (channel, artifact)
);
",
    // The fencing token of the lock holder that last wrote a summary: a holder with an
    // older token (its lock expired and another took it) cannot write over it.
    r"
ALTER TABLE records ADD COLUMN fence INTEGER NOT NULL DEFAULT 0;
",
    // The full-text index of every stored message (see `crate::memory::passages`):
    // contentless (the text is in `messages`), its rowid the message's `seq`. The messages
    // stored before it are indexed when the memory next opens the file. And each
    // lane's size and characters, the statistics its searches rank by.
    r"
CREATE VIRTUAL TABLE messages_index USING fts5 (
    scope, body, content = '', contentless_delete = 1,
    tokenize = 'porter unicode61 remove_diacritics 2');
CREATE TABLE lane_stats (
    session_id TEXT NOT NULL,
    thread_key TEXT NOT NULL,
    messages   INTEGER NOT NULL,
    chars      INTEGER NOT NULL,
    PRIMARY KEY (session_id, thread_key)
) WITHOUT ROWID;
INSERT INTO lane_stats (session_id, thread_key, messages, chars)
    SELECT session_id, thread_key, count(*), sum(length(text)) FROM messages GROUP BY 1, 2;
",
    // The message index merges its segments once two of a size exist (FTS5's default is
    // four): a search reads every segment's postings of its words, so fewer segments make
    // a common word's search faster (at 1,000,000 messages written in a random order of
    // sessions, about a quarter off `assemble`), for about the same writing cost.
    r"
INSERT INTO messages_index (messages_index, rank) VALUES ('automerge', 2);
",
    // A ChannelStore thread without a root message to show (see
    // `crate::channel::store::thread_cache::ThreadEntry::rootless`).
    r"
ALTER TABLE channel_threads ADD COLUMN rootless INTEGER NOT NULL DEFAULT 0;
",
    // The vector a host's embedder gave a message (`crate::memory::passages::vectors`),
    // by the message's row: little-endian f32, scaled to length 1; and how many messages
    // of each session have one (so a session with none left to embed is told at once).
    r"
CREATE TABLE message_vectors (
    seq INTEGER PRIMARY KEY,
    vec BLOB NOT NULL
);
CREATE TABLE vector_counts (
    session_id TEXT PRIMARY KEY,
    vectors    INTEGER NOT NULL
) WITHOUT ROWID;
",
    // The message index writes pages of about 1,000 bytes (FTS5's default is 4,050): a
    // search for a lane's or a session's rows jumps through a common word's postings page
    // by page and reads each page from its start, so a smaller page reads less per row (at
    // 1,000,000 messages whose words are each in half of them, `assemble` p50 about 2.0 to
    // 1.65 ms; 500 bytes read no less, the file grows 1%). Pages written before keep their
    // size until a merge rewrites them.
    r"
INSERT INTO messages_index (messages_index, rank) VALUES ('pgsz', 1000);
",
    // The newer record that changes what a fact or preference said (see
    // `crate::memory::store::records`): the older one no longer answers when both match.
    // And the statements by lane, with whether a compaction wrote them from a message:
    // an assembly tells at once whether any is one it shows, before it searches them.
    r"
ALTER TABLE records ADD COLUMN superseded_by INTEGER;
CREATE INDEX records_statements ON records (session_id, thread_key, range_from IS NULL)
    WHERE kind IN ('fact', 'preference', 'outcome');
",
];

/// The version whose step creates the message index: the messages already stored are
/// indexed by the memory when it next opens the file ([`INDEX_STEP`] in `pending_steps`).
const MESSAGE_INDEX_VERSION: usize = 5;

/// The `pending_steps` row that asks for the stored messages to be indexed.
pub const INDEX_STEP: &str = "index messages";

/// The steps left to the wing that owns their rows, one row each.
const PENDING_STEPS: &str =
    "CREATE TABLE IF NOT EXISTS pending_steps (step TEXT PRIMARY KEY) WITHOUT ROWID;";

/// The schema version this build writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// Why the file could not be opened or brought to this build's schema.
#[derive(Debug)]
pub enum DbError {
    /// The file is not a database, is corrupt, or SQLite failed otherwise.
    Sqlite(rusqlite::Error),
    /// The file was written by a newer version of this package.
    NewerSchema { found: i64, supported: i64 },
}

impl std::fmt::Display for DbError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DbError::Sqlite(e) => write!(f, "SQLite: {e}"),
            DbError::NewerSchema { found, supported } => write!(
                f,
                "the memory file has schema version {found}; this version reads up to {supported}"
            ),
        }
    }
}

impl std::error::Error for DbError {}

impl From<rusqlite::Error> for DbError {
    fn from(e: rusqlite::Error) -> Self {
        DbError::Sqlite(e)
    }
}

/// How long `open` pauses before trying again when the file was busy.
const OPEN_RETRY: Duration = Duration::from_millis(25);

/// Opens (creating it when missing) the SQLite file at `path` (`:memory:` for a private
/// in-memory database) and brings its schema to [`SCHEMA_VERSION`].
///
/// Waits at most [`BUSY_TIMEOUT`] in all for other connections. SQLite answers some
/// lock conflicts at once rather than through the busy timeout (setting the journal mode
/// while another process creates the same file, for one), so a busy answer is retried
/// until the deadline.
pub fn open(path: &str) -> Result<Connection, DbError> {
    let deadline = Instant::now() + BUSY_TIMEOUT;
    loop {
        match open_by(path, deadline) {
            Err(DbError::Sqlite(e)) if is_busy(&e) && Instant::now() + OPEN_RETRY < deadline => {
                std::thread::sleep(OPEN_RETRY);
            }
            opened => return opened,
        }
    }
}

/// Whether SQLite refused for a lock another connection holds.
fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

/// One attempt at [`open`], waiting for locks until `deadline`.
fn open_by(path: &str, deadline: Instant) -> Result<Connection, DbError> {
    let mut conn = Connection::open(path)?;
    conn.busy_timeout(deadline.saturating_duration_since(Instant::now()))?;
    // WAL lets readers run beside the writer; an in-memory database stays in its own mode.
    let _mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    // Lane and id indexes grow in random order with many sessions: a page cache of
    // CACHE_KIB keeps their hot pages in memory (SQLite's default is 2 MiB).
    conn.pragma_update(None, "cache_size", -CACHE_KIB)?;
    // Checkpoint the WAL into the file every WAL_CHECKPOINT_PAGES pages instead of 1,000:
    // each checkpoint syncs the file, and batches of scattered writes reach 1,000 pages
    // every few commits.
    let _pages: i64 = conn.query_row(
        &format!("PRAGMA wal_autocheckpoint = {WAL_CHECKPOINT_PAGES}"),
        [],
        |r| r.get(0),
    )?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    // An assembly alone uses more statements than rusqlite's default cache of 16 holds.
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
    migrate(&mut conn)?;
    Ok(conn)
}

/// Applies the migrations the file has not seen yet.
///
/// The version is read inside a write transaction, so that processes opening a new file
/// at once apply each step once: the second waits for the first's (within the busy
/// timeout) and then finds the file current.
pub fn migrate(conn: &mut Connection) -> Result<(), DbError> {
    let found: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if found == SCHEMA_VERSION {
        return Ok(());
    }
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let found: i64 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if found > SCHEMA_VERSION {
        return Err(DbError::NewerSchema {
            found,
            supported: SCHEMA_VERSION,
        });
    }
    for (version, step) in MIGRATIONS
        .iter()
        .enumerate()
        .skip(usize::try_from(found).unwrap_or(0))
    {
        tx.execute_batch(step)?;
        if version == MESSAGE_INDEX_VERSION {
            tx.execute_batch(PENDING_STEPS)?;
            tx.execute(
                "INSERT OR IGNORE INTO pending_steps (step) VALUES (?1)",
                [INDEX_STEP],
            )?;
        }
    }
    tx.pragma_update(None, "user_version", SCHEMA_VERSION)?;
    tx.commit()?;
    Ok(())
}
