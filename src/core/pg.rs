//! PostgreSQL, for what several gateway hosts share: a bounded pool of connections made
//! from a URL, every wait within a timeout, errors coded by their cause, and schemas
//! versioned in the database itself: each component's steps applied once, by whichever
//! host gets there first (under a transaction-scoped advisory lock, so two hosts starting
//! together apply them once), and a schema newer than this build knows refused.

use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, PoolError, RecyclingMethod};
use std::time::Duration;
use tokio_postgres::error::SqlState;
use tokio_postgres::NoTls;

/// Connections a pool opens at most, unless the caller says otherwise.
pub const POOL_SIZE: usize = 8;
/// The most connections a caller may ask a pool for.
pub const MAX_POOL_SIZE: usize = 256;
/// How long making a connection may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long one call (a statement, a transaction, a wait for a pooled connection) may take.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// How to reach the server, and the bounds of the pool.
#[derive(Debug, Clone)]
pub struct PgOptions {
    /// `postgres://user:password@host:port/database?...` (or the key=value form).
    pub url: String,
    pub pool_size: usize,
    pub connect_timeout: Duration,
    pub call_timeout: Duration,
    /// Certificates (PEM) of an authority whose server certificates are trusted besides
    /// the public roots; given, the connection is TLS whatever the URL's `sslmode`.
    pub tls_ca: Option<String>,
}

impl PgOptions {
    /// The defaults for `url`.
    pub fn new(url: &str) -> Self {
        PgOptions {
            url: url.to_string(),
            pool_size: POOL_SIZE,
            connect_timeout: CONNECT_TIMEOUT,
            call_timeout: CALL_TIMEOUT,
            tls_ca: None,
        }
    }
}

/// What went wrong, by cause: what a caller can tell apart and act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PgCause {
    /// The URL is not one PostgreSQL's client reads.
    BadUrl,
    /// The server refused the user or the password.
    Auth,
    /// The server has no database of that name.
    NoDatabase,
    /// The URL asks for TLS, which this build does not speak.
    Tls,
    /// No server answered at the address (refused, unreachable, closed on us).
    Unreachable,
    /// A call or a connection took longer than its timeout.
    Timeout,
    /// The database's schema was written by a newer build of this package.
    NewerSchema,
    /// The server answered with another error.
    Server,
    /// This package asked wrongly (a statement and its values disagree): a bug to report.
    Internal,
}

impl PgCause {
    /// The `code` a JavaScript error of this cause carries.
    pub fn code(self) -> &'static str {
        match self {
            PgCause::BadUrl => "PG_BAD_URL",
            PgCause::Auth => "PG_AUTH",
            PgCause::NoDatabase => "PG_NO_DATABASE",
            PgCause::Tls => "PG_TLS",
            PgCause::Unreachable => "PG_UNREACHABLE",
            PgCause::Timeout => "PG_TIMEOUT",
            PgCause::NewerSchema => "PG_NEWER_SCHEMA",
            PgCause::Server => "PG_SERVER",
            PgCause::Internal => "PG_INTERNAL",
        }
    }
}

/// An error with its cause and a message naming it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgError {
    pub cause: PgCause,
    pub message: String,
}

impl std::fmt::Display for PgError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PostgreSQL ({}): {}", self.cause.code(), self.message)
    }
}

impl std::error::Error for PgError {}

impl PgError {
    fn new(cause: PgCause, message: impl Into<String>) -> Self {
        PgError {
            cause,
            message: message.into(),
        }
    }

    /// The client could not be set up (a runtime, a thread): PostgreSQL was not reached.
    pub fn unavailable(message: &str) -> Self {
        PgError::new(PgCause::Unreachable, message)
    }

    /// This package used the connection wrongly: a bug to report.
    pub fn misuse(message: &str) -> Self {
        PgError::new(PgCause::Internal, message)
    }

    /// A timeout of `what` after `after`.
    pub fn timeout(what: &str, after: Duration) -> Self {
        PgError::new(
            PgCause::Timeout,
            format!("{what} took longer than {} ms", after.as_millis()),
        )
    }
}

impl From<tokio_postgres::Error> for PgError {
    fn from(e: tokio_postgres::Error) -> Self {
        let cause = match e.code() {
            Some(c) if *c == SqlState::INVALID_PASSWORD => PgCause::Auth,
            Some(c) if *c == SqlState::INVALID_AUTHORIZATION_SPECIFICATION => PgCause::Auth,
            Some(c) if *c == SqlState::INVALID_CATALOG_NAME => PgCause::NoDatabase,
            // The server's own end of a statement past the call timeout.
            Some(c) if *c == SqlState::QUERY_CANCELED => PgCause::Timeout,
            Some(_) => PgCause::Server,
            None if e.to_string().contains("TLS") => PgCause::Tls,
            None if e.is_closed() || io_source(&e) => PgCause::Unreachable,
            None if e.to_string().contains("connect") => PgCause::Unreachable,
            None => PgCause::Internal,
        };
        // The server's own words, not the client's "db error" wrapper.
        let message = match e.as_db_error() {
            Some(db) => db.message().to_string(),
            None => match std::error::Error::source(&e) {
                Some(src) => format!("{e}: {src}"),
                None => e.to_string(),
            },
        };
        PgError::new(cause, message)
    }
}

impl From<PoolError> for PgError {
    fn from(e: PoolError) -> Self {
        match e {
            PoolError::Backend(e) => e.into(),
            PoolError::Timeout(t) => PgError::new(
                PgCause::Timeout,
                format!("no connection from the pool in time ({t:?})"),
            ),
            other => PgError::new(PgCause::Unreachable, other.to_string()),
        }
    }
}

/// Whether an I/O error is behind `e` (refused, reset, unreachable).
fn io_source(e: &tokio_postgres::Error) -> bool {
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        if s.is::<std::io::Error>() {
            return true;
        }
        source = s.source();
    }
    false
}

/// A pool of connections to one database.
#[derive(Clone)]
pub struct Pg {
    pool: Pool,
    call_timeout: Duration,
}

impl std::fmt::Debug for Pg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pg")
            .field("status", &self.pool.status())
            .finish_non_exhaustive()
    }
}

impl Pg {
    /// A pool for `opts`, with one connection made to say at once whether the server,
    /// the user and the database are there. Runs on a Tokio runtime with I/O and time.
    pub async fn connect(opts: &PgOptions) -> Result<Pg, PgError> {
        let mut config: tokio_postgres::Config = opts.url.parse().map_err(|e| {
            PgError::new(
                PgCause::BadUrl,
                format!("{}: {e}", crate::core::url::redacted(&opts.url)),
            )
        })?;
        if opts.tls_ca.is_some() {
            config.ssl_mode(tokio_postgres::config::SslMode::Require);
        }
        config.connect_timeout(opts.connect_timeout);
        // The server ends a statement that outlives the call timeout itself: a call that
        // gave up does not leave its connection busy for the next one.
        let limit = format!("-c statement_timeout={}", opts.call_timeout.as_millis());
        let options = match config.get_options() {
            Some(given) if !given.is_empty() => format!("{given} {limit}"),
            _ => limit,
        };
        config.options(&options);
        config.application_name("openclaw-context-engine");
        let recycling = || ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        };
        // TLS only when asked for: `prefer` (the default) stays plain, as a server's
        // self-signed certificate would otherwise fail a connection that asked for nothing.
        let manager = match config.get_ssl_mode() {
            tokio_postgres::config::SslMode::Require => {
                Manager::from_config(config, tls::connector(opts.tls_ca.as_deref())?, recycling())
            }
            _ => Manager::from_config(config, NoTls, recycling()),
        };
        let pool = Pool::builder(manager)
            .max_size(opts.pool_size.max(1))
            .runtime(deadpool_postgres::Runtime::Tokio1)
            .wait_timeout(Some(opts.call_timeout))
            .create_timeout(Some(opts.connect_timeout))
            .recycle_timeout(Some(opts.call_timeout))
            .build()
            .map_err(|e| PgError::new(PgCause::BadUrl, e.to_string()))?;
        let pg = Pg {
            pool,
            call_timeout: opts.call_timeout,
        };
        drop(pg.client().await?);
        Ok(pg)
    }

    /// A connection from the pool (made when none is free, within the pool's bound).
    pub async fn client(&self) -> Result<Object, PgError> {
        Ok(self.pool.get().await?)
    }

    /// How long one call may take.
    pub fn call_timeout(&self) -> Duration {
        self.call_timeout
    }

    /// `fut` within the call timeout (`what` names the call in a timeout's message); its
    /// error is PostgreSQL's or one of the caller's that PostgreSQL's converts into.
    pub async fn within<T, E: From<PgError>>(
        &self,
        what: &str,
        fut: impl std::future::Future<Output = Result<T, E>>,
    ) -> Result<T, E> {
        match tokio::time::timeout(self.call_timeout, fut).await {
            Ok(out) => out,
            Err(_) => Err(PgError::timeout(what, self.call_timeout).into()),
        }
    }

    /// Brings `component`'s schema to `steps.len()`: each step not applied yet, in order,
    /// in one transaction holding the component's advisory lock (another host migrating
    /// at the same time waits, then finds the steps applied). Returns the version found
    /// before; a version above `steps.len()` is refused, changing nothing.
    pub async fn migrate(&self, component: &str, steps: &[&str]) -> Result<i64, PgError> {
        self.within("migrating the schema", async {
            let mut client = self.client().await?;
            let tx = client.transaction().await?;
            tx.execute(
                "SELECT pg_advisory_xact_lock(hashtext('openclaw-context-engine:' || $1))",
                &[&component],
            )
            .await?;
            tx.batch_execute(
                "CREATE TABLE IF NOT EXISTS schema_versions (
                     component TEXT PRIMARY KEY,
                     version   BIGINT NOT NULL
                 )",
            )
            .await?;
            let found: i64 = tx
                .query_opt(
                    "SELECT version FROM schema_versions WHERE component = $1",
                    &[&component],
                )
                .await?
                .map_or(0, |r| r.get(0));
            let supported = i64::try_from(steps.len()).unwrap_or(i64::MAX);
            if found > supported {
                return Err(PgError::new(
                    PgCause::NewerSchema,
                    format!(
                        "the {component} schema is at version {found}, written by a newer \
                         build of @openclaw/context-engine; this one knows up to {supported}: \
                         upgrade the package on this host"
                    ),
                ));
            }
            for step in steps.iter().skip(usize::try_from(found).unwrap_or(0)) {
                tx.batch_execute(step).await?;
            }
            tx.execute(
                "INSERT INTO schema_versions (component, version) VALUES ($1, $2)
                 ON CONFLICT (component) DO UPDATE SET version = excluded.version",
                &[&component, &supported],
            )
            .await?;
            tx.commit().await?;
            Ok(found)
        })
        .await
    }

    /// Closes the pool: calls waiting for a connection fail, and connections go as they
    /// are given back.
    pub fn close(&self) {
        self.pool.close();
    }
}

#[cfg(test)]
pub(crate) mod server;
#[cfg(test)]
mod tests;
mod tls;
