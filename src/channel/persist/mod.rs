//! A `ChannelStore` saved to a SQLite file (the memory store's file, or its own), written
//! behind the store: every call's changes are queued for a writer thread that commits them
//! in batches, so the JavaScript thread never waits on the disk. On open the saved state
//! is loaded, with the times things were fetched, so a restarted gateway answers from it
//! without calling the chat API while that data is within its TTLs.
//!
//! The queue is bounded (in rows). When it is full, a call's changes stay noted in the
//! store and go with a later call (many changes to one message are then written once);
//! `flush` queues whatever is noted and waits, with a timeout, until it is committed.

pub mod codec;
pub mod rows;

use crate::channel::store::config::PersistConfig;
use crate::channel::store::journal::Changes;
use crate::channel::store::stats::PersistStats;
use crate::channel::store::ChannelStore;
use crate::core::db;
use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Most rows one transaction commits.
pub const ROWS_PER_TRANSACTION: usize = 50_000;
/// Pause before a failed transaction is tried again (once): another process may have
/// held the file's write lock past the busy timeout.
pub const RETRY_PAUSE: Duration = Duration::from_millis(250);

/// Why saving could not start or finish.
#[derive(Debug, Clone, PartialEq)]
pub enum PersistError {
    /// The file could not be opened or read.
    Open(String),
    /// The writer did not commit in time.
    Timeout { waited_ms: u64, queued_rows: usize },
    /// A batch could not be written.
    Write(String),
    /// `close()` was called before.
    Closed,
}

impl std::fmt::Display for PersistError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PersistError::Open(e) => write!(f, "could not open the saved state: {e}"),
            PersistError::Timeout {
                waited_ms,
                queued_rows,
            } => write!(
                f,
                "the writer did not commit within {waited_ms} ms ({queued_rows} rows still queued)"
            ),
            PersistError::Write(e) => write!(f, "a batch of changes could not be written: {e}"),
            PersistError::Closed => f.write_str("the store's saving was closed"),
        }
    }
}

fn count(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

#[derive(Debug, Default)]
struct Queue {
    batches: VecDeque<(u64, Changes)>,
    rows: usize,
    /// Number of the last batch queued / written (failed batches count as written).
    queued_seq: u64,
    written_seq: u64,
    /// The newest batch that failed.
    failed_seq: u64,
    /// The last batch a flush covered: a later flush reports failures after it.
    flushed_seq: u64,
    closing: bool,
    stopped: bool,
    stats: PersistStats,
}

#[derive(Debug, Default)]
struct Shared {
    queue: Mutex<Queue>,
    /// Signalled when a batch is queued or closing starts.
    work: Condvar,
    /// Signalled when the writer commits, fails or stops.
    progress: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        // The writer catches its own panics, so a poisoned lock still holds a sound queue.
        self.queue
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The batches one flush waits for: those after `from`, up to `seq`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Flush {
    from: u64,
    seq: u64,
}

/// The writer of one saved store.
#[derive(Debug)]
pub struct Persister {
    config: PersistConfig,
    shared: Arc<Shared>,
    /// Held so the thread is not detached before the store is dropped; never joined on
    /// the JS thread (the writer stops by itself once closed and drained).
    _writer: JoinHandle<()>,
}

impl Persister {
    /// Opens (or creates) the file, reads the saved state into `store` (which starts
    /// noting its changes) and starts the writer.
    pub fn open(
        config: PersistConfig,
        store: &mut ChannelStore,
    ) -> Result<Persister, PersistError> {
        let started = Instant::now();
        let conn = db::open(&config.path).map_err(|e| PersistError::Open(e.to_string()))?;
        let loaded = rows::load(&conn, config.media_max_bytes)
            .map_err(|e| PersistError::Open(e.to_string()))?;
        let loaded_rows = count(loaded.state.rows());
        let corrupt_rows = count(loaded.corrupt.len());
        let last_error = loaded
            .corrupt
            .last()
            .map(|c| format!("unreadable row: {c}"));
        store.track_changes();
        store.restore(loaded.state);
        let shared = Arc::new(Shared::default());
        {
            let mut q = shared.lock();
            q.stats = PersistStats {
                path: config.path.clone(),
                loaded_rows,
                load_ms: started.elapsed().as_secs_f64() * 1e3,
                corrupt_rows,
                last_error,
                ..PersistStats::default()
            };
        }
        let worker = Arc::clone(&shared);
        let media_max = config.media_max_bytes;
        let handle = std::thread::Builder::new()
            .name("context-engine-persist".into())
            .spawn(move || run(conn, &worker, media_max))
            .map_err(|e| PersistError::Open(format!("could not start the writer thread: {e}")))?;
        Ok(Persister {
            config,
            shared,
            _writer: handle,
        })
    }

    /// Queues what `store` noted since the last call, when the queue has room (else it
    /// stays noted and goes with a later call). Never waits.
    pub fn write_behind(&self, store: &mut ChannelStore) {
        if !store.has_changes() {
            return;
        }
        let mut q = self.shared.lock();
        if q.closing {
            return;
        }
        if q.rows >= self.config.queue_max_rows {
            q.stats.deferred += 1;
            return;
        }
        drop(q);
        self.enqueue(store.take_changes());
    }

    fn enqueue(&self, changes: Changes) -> u64 {
        let mut q = self.shared.lock();
        if changes.is_empty() {
            return q.queued_seq;
        }
        q.queued_seq += 1;
        let seq = q.queued_seq;
        q.rows += changes.rows();
        q.batches.push_back((seq, changes));
        drop(q);
        self.shared.work.notify_one();
        seq
    }

    /// Queues everything `store` noted (whatever the queue holds) and returns what to
    /// wait for with [`Waiter::wait`].
    pub fn flush_from(&self, store: &mut ChannelStore) -> Result<Flush, PersistError> {
        let from = {
            let q = self.shared.lock();
            if q.closing {
                return Err(PersistError::Closed);
            }
            q.flushed_seq
        };
        let seq = self.enqueue(store.take_changes());
        self.shared.lock().flushed_seq = seq;
        Ok(Flush { from, seq })
    }

    /// Queues everything `store` noted and stops taking changes: the writer stops once
    /// the queue is written. Wait for that with [`Waiter::wait_closed`].
    pub fn close_from(&self, store: &mut ChannelStore) -> Result<Flush, PersistError> {
        let flush = self.flush_from(store)?;
        let mut q = self.shared.lock();
        q.closing = true;
        q.stats.closed = true;
        drop(q);
        self.shared.work.notify_one();
        Ok(flush)
    }

    /// A flush of nothing new: waits for what is already queued.
    pub fn flush_to_here(&self) -> Flush {
        let q = self.shared.lock();
        Flush {
            from: q.flushed_seq,
            seq: q.queued_seq,
        }
    }

    /// A handle that waits for the writer from another thread.
    pub fn waiter(&self) -> Waiter {
        Waiter {
            shared: Arc::clone(&self.shared),
            timeout: Duration::from_millis(self.config.flush_timeout_ms),
        }
    }

    pub fn stats(&self) -> PersistStats {
        let q = self.shared.lock();
        let mut s = q.stats.clone();
        s.queued_rows = count(q.rows);
        s
    }
}

/// Waits for the writer (from any thread), up to the flush timeout.
#[derive(Debug, Clone)]
pub struct Waiter {
    shared: Arc<Shared>,
    timeout: Duration,
}

impl Waiter {
    /// Waits until `done` holds of the queue, or the timeout passes.
    fn wait_until(
        &self,
        deadline: Instant,
        done: impl Fn(&Queue) -> bool,
    ) -> Result<MutexGuard<'_, Queue>, PersistError> {
        let mut q = self.shared.lock();
        while !done(&q) {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(PersistError::Timeout {
                    waited_ms: u64::try_from(self.timeout.as_millis()).unwrap_or(u64::MAX),
                    queued_rows: q.rows,
                });
            }
            q = self
                .shared
                .progress
                .wait_timeout(q, left)
                .map(|(g, _)| g)
                .unwrap_or_else(|e| e.into_inner().0);
        }
        Ok(q)
    }

    /// Waits until the batches of `flush` are committed. An error when one of them (or
    /// one since the previous flush) could not be written, or on timeout.
    pub fn wait(&self, flush: Flush) -> Result<PersistStats, PersistError> {
        let Flush { from, seq } = flush;
        let deadline = Instant::now() + self.timeout;
        let q = self.wait_until(deadline, |q| q.written_seq >= seq || q.stopped)?;
        if q.written_seq < seq {
            return Err(PersistError::Closed);
        }
        if q.failed_seq > from && q.failed_seq <= seq {
            let e = q.stats.last_error.clone().unwrap_or_default();
            return Err(PersistError::Write(e));
        }
        let mut s = q.stats.clone();
        s.queued_rows = count(q.rows);
        Ok(s)
    }

    /// [`Waiter::wait`], then until the writer has stopped.
    pub fn wait_closed(&self, flush: Flush) -> Result<PersistStats, PersistError> {
        let deadline = Instant::now() + self.timeout;
        let written = self.wait(flush);
        let q = self.wait_until(deadline, |q| q.stopped)?;
        let mut s = q.stats.clone();
        s.queued_rows = count(q.rows);
        drop(q);
        written.map(|_| s)
    }
}

impl Drop for Persister {
    fn drop(&mut self) {
        // The writer finishes what is queued and stops; nothing waits for it here (a
        // store collected by the garbage collector must not block the JS thread).
        let mut q = self.shared.lock();
        q.closing = true;
        drop(q);
        self.shared.work.notify_one();
    }
}

/// The writer thread: takes queued batches, commits them in transactions of at most
/// [`ROWS_PER_TRANSACTION`] rows, until closing and empty; then moves everything into the
/// database file itself and closes it, so that the file alone (copied, backed up) holds
/// the saved state once `close()` resolves.
fn run(mut conn: rusqlite::Connection, shared: &Shared, media_max: u64) {
    loop {
        let mut q = shared.lock();
        while q.batches.is_empty() && !q.closing {
            q = shared
                .work
                .wait(q)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        if q.batches.is_empty() {
            drop(q);
            let closed = close_file(conn);
            let mut q = shared.lock();
            if let Err(e) = closed {
                q.stats.last_error = Some(e);
            }
            q.stopped = true;
            drop(q);
            shared.progress.notify_all();
            return;
        }
        let mut taken: Vec<(u64, Changes)> = Vec::new();
        let mut rows = 0;
        while let Some((seq, c)) = q.batches.pop_front() {
            rows += c.rows();
            taken.push((seq, c));
            if rows >= ROWS_PER_TRANSACTION {
                break;
            }
        }
        drop(q);
        let last = taken.last().map_or(0, |(s, _)| *s);
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            commit(&mut conn, &taken, media_max).or_else(|_| {
                std::thread::sleep(RETRY_PAUSE);
                commit(&mut conn, &taken, media_max)
            })
        }))
        .unwrap_or_else(|_| Err("the writer panicked".to_string()));
        let mut q = shared.lock();
        q.rows = q.rows.saturating_sub(rows);
        q.written_seq = last;
        match result {
            Ok(()) => {
                q.stats.written_rows += count(rows);
                q.stats.commits += 1;
            }
            Err(e) => {
                q.failed_seq = last;
                q.stats.failed_batches += count(taken.len());
                q.stats.last_error = Some(e);
            }
        }
        drop(q);
        shared.progress.notify_all();
    }
}

/// Checkpoints the write-ahead log into the database file (and empties it), then closes
/// the connection. Another connection reading the file at that moment (a `MemoryStore`
/// on it) can hold part of the log back: the error then says how much (nothing is lost:
/// the log is still there, and the next connection to close moves it).
fn close_file(conn: rusqlite::Connection) -> Result<(), String> {
    let checkpoint = conn
        .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, i64>(2)?,
            ))
        })
        .map_err(|e| format!("could not checkpoint the file on close: {e}"));
    let closed = conn
        .close()
        .map_err(|(_, e)| format!("could not close the file: {e}"));
    match checkpoint? {
        // Busy: a reader held back part of the log; the pages this writer wrote that are
        // not in the file yet are counted.
        (1, log, moved) if log > moved => Err(format!(
            "the file was busy on close: {} of {log} log pages are not in the database file yet",
            log - moved
        )),
        _ => closed,
    }
}

fn commit(
    conn: &mut rusqlite::Connection,
    batches: &[(u64, Changes)],
    media_max: u64,
) -> Result<(), String> {
    let tx = conn.transaction().map_err(|e| e.to_string())?;
    for (_, c) in batches {
        rows::write(&tx, c, media_max).map_err(|e| e.to_string())?;
    }
    tx.commit().map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests;
