//! Where a store keeps what it stores: a SQLite file (the default, embedded) or a
//! PostgreSQL database that several gateway hosts share. The memory's logic is one for
//! both; each statement it makes has a SQLite form and a PostgreSQL form
//! ([`crate::memory::pg`]) that read and write the same things.

use crate::memory::db::MemoryError;
use crate::memory::pg::link::PgLink;
use rusqlite::Connection;

/// The database a [`super::MemoryStore`] is over.
#[derive(Debug)]
pub enum Backend {
    /// A SQLite file (or a private in-memory database).
    Lite(Connection),
    /// A PostgreSQL database, through the store's own link.
    Pg(Box<PgLink>),
}

impl Backend {
    /// The SQLite connection, for a statement only the SQLite store makes (its message
    /// index): an error on PostgreSQL, where the same work has its own statement.
    pub fn lite(&self) -> Result<&Connection, MemoryError> {
        match self {
            Backend::Lite(conn) => Ok(conn),
            Backend::Pg(_) => Err(crate::core::pg::PgError::misuse(
                "a SQLite statement was asked of a PostgreSQL store",
            )
            .into()),
        }
    }
}

/// Runs one PostgreSQL read or write (`$body`, a future using the connection `$c`) within
/// the call timeout, through the open transaction's connection, or else one taken from the
/// pool in the same wait; `$what` names it in a timeout's message.
macro_rules! on_pg {
    ($link:expr, $what:expr, |$c:ident| $body:expr) => {{
        let link = &$link;
        // The primitives' errors are PostgreSQL's or the memory's: both become the latter.
        #[allow(clippy::needless_question_mark)]
        match link.transaction() {
            Some($c) => link.call($what, async { Ok($body.await?) }),
            None => link.call($what, async {
                let held = link.pool().client().await?;
                let $c = &held;
                Ok($body.await?)
            }),
        }
    }};
}
pub(in crate::memory) use on_pg;
