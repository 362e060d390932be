//! A store's link to PostgreSQL: the pool, a Tokio runtime of its own, the tokenizers
//! the word indexes are written with, and the transaction open, if any. The memory's
//! logic is synchronous: a call runs on a worker thread (never Node's event loop) and
//! waits here for its statements, each wait within the call timeout. A transaction holds
//! one pooled connection from `begin` to `commit` or `rollback`, and every statement
//! between goes through it, as every statement of a SQLite transaction goes through its
//! connection.

use super::records::RecordTerms;
use crate::core::pg::{Pg, PgError, PgOptions};
use crate::memory::db::MemoryError;
use crate::memory::passages::index_terms::IndexTerms;
use deadpool_postgres::Object;

/// A link to one database (see the module docs).
pub struct PgLink {
    pg: Pg,
    rt: Option<tokio::runtime::Runtime>,
    pub terms: IndexTerms,
    pub record_terms: RecordTerms,
    tx: Option<Object>,
}

impl std::fmt::Debug for PgLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgLink")
            .field("pg", &self.pg)
            .field("in_transaction", &self.tx.is_some())
            .finish_non_exhaustive()
    }
}

impl PgLink {
    /// Connects (see [`Pg::connect`]) and brings the memory's schema up to date. Called
    /// outside any Tokio runtime (a worker thread).
    pub fn connect(opts: &PgOptions) -> Result<Self, MemoryError> {
        // Driven by the calling thread while it waits: a statement's round trip wakes no
        // other thread (on a runtime of its own, the pool's connections waited a thread
        // hand-off each way, about half of a short statement's time).
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| PgError::unavailable(&format!("no runtime for PostgreSQL: {e}")))?;
        let pg = rt.block_on(Pg::connect(opts))?;
        rt.block_on(pg.migrate(super::COMPONENT, &super::MIGRATIONS))?;
        Ok(PgLink {
            pg,
            rt: Some(rt),
            terms: IndexTerms::new()?,
            record_terms: RecordTerms::new()?,
            tx: None,
        })
    }

    /// Waits for `fut` within the call timeout (`what` names the call in a timeout's message).
    pub fn call<T>(
        &self,
        what: &str,
        fut: impl std::future::Future<Output = Result<T, MemoryError>>,
    ) -> Result<T, MemoryError> {
        match &self.rt {
            Some(rt) => rt.block_on(self.pg.within(what, fut)),
            None => Err(PgError::misuse("the link is closed").into()),
        }
    }

    /// The open transaction's connection, if any.
    pub fn transaction(&self) -> Option<&Object> {
        self.tx.as_ref()
    }

    /// The pool, for a call that opens its own transaction.
    pub fn pool(&self) -> &Pg {
        &self.pg
    }

    /// Opens a transaction on a connection held until [`PgLink::commit`] or
    /// [`PgLink::rollback`].
    pub fn begin(&mut self) -> Result<(), MemoryError> {
        if self.tx.is_some() {
            return Err(PgError::misuse("a transaction is open already").into());
        }
        let c = self.call("opening a transaction", async {
            let c = self.pg.client().await?;
            c.batch_execute("BEGIN").await?;
            Ok(c)
        })?;
        self.tx = Some(c);
        Ok(())
    }

    /// Commits the open transaction.
    pub fn commit(&mut self) -> Result<(), MemoryError> {
        self.end("COMMIT")
    }

    /// Rolls the open transaction back.
    pub fn rollback(&mut self) -> Result<(), MemoryError> {
        self.end("ROLLBACK")
    }

    fn end(&mut self, how: &'static str) -> Result<(), MemoryError> {
        let Some(c) = self.tx.take() else {
            return Err(PgError::misuse("no transaction is open").into());
        };
        let done = self.call("ending a transaction", async {
            c.batch_execute(how).await?;
            Ok(())
        });
        if done.is_err() {
            // Its state is unknown: the connection is not given back to the pool.
            let _ = Object::take(c);
        }
        done
    }
}

impl Drop for PgLink {
    /// A transaction left open is not given back to the pool (its connection closes);
    /// the runtime stops without waiting, wherever the link is dropped.
    fn drop(&mut self) {
        if let Some(c) = self.tx.take() {
            let _ = Object::take(c);
        }
        self.pg.close();
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }
}
