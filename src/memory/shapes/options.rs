//! The options of a store: where it is (a SQLite file, or a PostgreSQL database with its
//! pool's bounds) and when its threads are compacted.

use crate::core::input::{whole_number, InputError};
use crate::memory::summary::CompactionPolicy;
use napi_derive::napi;
use serde::Deserialize;

/// `new MemoryStore(options)`.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MemoryStoreOptions {
    /// The SQLite file (created when missing; default `":memory:"`, a private database
    /// that ends with the store).
    pub path: Option<String>,
    /// A PostgreSQL database shared by several gateway hosts,
    /// `postgres://user:password@host:port/database` (opened with `MemoryStore.connect`,
    /// never the constructor: its calls wait for the network).
    pub url: Option<String>,
    /// Connections to PostgreSQL at most (default 8).
    pub pool_size: Option<f64>,
    /// How long connecting to PostgreSQL may take, in ms (default 5,000).
    pub connect_timeout_ms: Option<f64>,
    /// How long one call may wait for PostgreSQL, in ms (default 10,000).
    pub call_timeout_ms: Option<f64>,
    /// The certificates (PEM) of an authority whose server certificates are trusted
    /// besides the public roots (a server with a self-signed or private certificate);
    /// given, the connection is TLS whatever the URL's `sslmode`.
    pub tls_ca: Option<String>,
    /// When a thread is compacted and how much of it stays verbatim.
    pub compaction: Option<CompactionOptions>,
}

impl MemoryStoreOptions {
    /// The PostgreSQL options these give (`None` without a `url`).
    pub fn pg(&self) -> Result<Option<crate::core::pg::PgOptions>, InputError> {
        let Some(url) = &self.url else {
            return Ok(None);
        };
        if self.path.is_some() {
            return Err(InputError::type_error(
                "options.url",
                "give `path` (a SQLite file) or `url` (PostgreSQL), not both",
            ));
        }
        let mut o = crate::core::pg::PgOptions::new(url);
        o.tls_ca.clone_from(&self.tls_ca);
        if let Some(n) = self.pool_size {
            let n = whole_number(n, "options.poolSize", "count")?;
            if !(1..=crate::core::pg::MAX_POOL_SIZE as u64).contains(&n) {
                return Err(InputError::range_error(
                    "options.poolSize",
                    format!("must be 1 to {}", crate::core::pg::MAX_POOL_SIZE),
                ));
            }
            o.pool_size = usize::try_from(n).unwrap_or(1);
        }
        for (v, path, slot) in [
            (
                self.connect_timeout_ms,
                "options.connectTimeoutMs",
                &mut o.connect_timeout,
            ),
            (
                self.call_timeout_ms,
                "options.callTimeoutMs",
                &mut o.call_timeout,
            ),
        ] {
            if let Some(ms) = v {
                let ms = whole_number(ms, path, "duration")?;
                if ms == 0 || ms > MAX_PG_TIMEOUT_MS {
                    return Err(InputError::range_error(
                        path,
                        format!("must be 1 to {MAX_PG_TIMEOUT_MS} ms"),
                    ));
                }
                *slot = std::time::Duration::from_millis(ms);
            }
        }
        Ok(Some(o))
    }
}

/// The longest timeout a PostgreSQL store takes (10 minutes).
pub const MAX_PG_TIMEOUT_MS: u64 = 600_000;

/// Compaction thresholds per thread key; a thread is compacted when any one is passed.
#[napi(object, object_to_js = false, object_from_js = false)]
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CompactionOptions {
    /// More unsummarized messages than this (default 30).
    pub max_recent_messages: Option<f64>,
    /// More estimated tokens of unsummarized messages than this (default 2,500).
    pub max_recent_tokens: Option<f64>,
    /// The summary older than this, in ms (default 86,400,000: 24 hours).
    pub max_summary_age_ms: Option<f64>,
    /// The most messages a compaction leaves verbatim (default 10): the newest, within half
    /// of `maxRecentTokens`.
    pub keep_recent: Option<f64>,
    /// The fewest messages a compaction due by a threshold folds (default 10), so a thread
    /// of long turns compacts in steps, not after every turn.
    pub min_fold: Option<f64>,
}

impl TryFrom<Option<CompactionOptions>> for CompactionPolicy {
    type Error = InputError;

    fn try_from(o: Option<CompactionOptions>) -> Result<Self, InputError> {
        let mut p = CompactionPolicy::default();
        let Some(o) = o else { return Ok(p) };
        let count = |v: Option<f64>, name: &str| {
            v.map(|n| whole_number(n, &format!("options.compaction.{name}"), "count"))
                .transpose()
        };
        if let Some(n) = count(o.max_recent_messages, "maxRecentMessages")? {
            p.max_recent_messages = usize::try_from(n).unwrap_or(usize::MAX);
        }
        if let Some(n) = count(o.max_recent_tokens, "maxRecentTokens")? {
            p.max_recent_tokens = n;
        }
        if let Some(n) = count(o.max_summary_age_ms, "maxSummaryAgeMs")? {
            p.max_summary_age_ms = i64::try_from(n).unwrap_or(i64::MAX);
        }
        if let Some(n) = count(o.keep_recent, "keepRecent")? {
            p.keep_recent = usize::try_from(n).unwrap_or(usize::MAX);
        }
        if let Some(n) = count(o.min_fold, "minFold")? {
            p.min_fold = usize::try_from(n).unwrap_or(usize::MAX);
        }
        Ok(p)
    }
}
