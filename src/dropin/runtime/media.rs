//! B. The media attachment planner: for each piece of media in a turn, the cheapest way
//! to give it to the model, and what it learns from the SDK's `files_persisted` messages.
//!
//! Preference, highest first:
//! 1. already attached: in the caller's attachment manifest (by artifact id or content
//!    hash), or earlier in the same turn: a text reference, no bytes;
//! 2. a persisted file (`file_id` known for this content hash in this provider and
//!    session): a `file` source;
//! 3. a durable URL given by the caller (https, images and PDFs): a `url` source;
//! 4. inline base64, only under the inline threshold, for media not persisted yet, or as
//!    the fallback while persistence is failing (with a diagnostic marker and a retry
//!    backoff per hash). Never over the API's own limits (5 MB per image, 32 MB per
//!    request for PDFs): such media is omitted with a note instead.
//!
//! File ids are keyed by (provider, session), so an id never reaches a session or a
//! provider that cannot use it. The map persists as a session custom entry
//! (`{ type: "custom", customType: MEDIA_FILE_IDS_KEY, data }`) and reloads from the
//! newest usable one, dropping malformed records one at a time.

use crate::core::input::InputError;
use crate::core::sha256::sha256_hex;
use crate::dropin::manifest::{Manifest, MatchKind};
use lru::LruCache;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::{HashMap, HashSet};
use std::num::NonZeroUsize;

/// Custom-entry type the file-id map is persisted under.
pub const MEDIA_FILE_IDS_KEY: &str = "openclaw:claude-sdk-media-file-ids";
/// Default inline threshold: media at or under it may always go inline.
pub const DEFAULT_INLINE_MAX_BYTES: u64 = 256 * 1024;
/// The Messages API's limit for one base64 image.
pub const MAX_INLINE_IMAGE_BYTES: u64 = 5 * 1024 * 1024;
/// The Messages API's request size limit, which bounds an inline PDF or text file.
pub const MAX_INLINE_DOCUMENT_BYTES: u64 = 32 * 1024 * 1024;
/// First retry delay after a persistence failure; doubles per failure.
pub const PERSIST_BACKOFF_BASE_MS: f64 = 30_000.0;
/// Longest retry delay.
pub const PERSIST_BACKOFF_MAX_MS: f64 = 3_600_000.0;
/// Sessions whose media state is held (least recently used dropped first).
pub const MAX_SESSIONS: usize = 4096;
/// File ids (and failure records) kept per session; past it, new ones are not recorded
/// (the media then goes inline or by URL, as if never persisted).
pub const MAX_FILES_PER_SESSION: usize = 10_000;
/// Inline media awaiting `files_persisted`, per session; past it, new names are not
/// tracked.
pub const MAX_PENDING_PER_SESSION: usize = 1_000;

/// One piece of media in a turn.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MediaItem {
    #[serde(default)]
    pub artifact_id: Option<String>,
    #[serde(default)]
    pub filename: Option<String>,
    pub media_type: String,
    /// SHA-256 hex of the bytes (computed from `data` when the caller passes bytes).
    #[serde(default)]
    pub content_hash: String,
    #[serde(default)]
    pub byte_length: u64,
    /// A URL the model can fetch for as long as the session lives.
    #[serde(default)]
    pub durable_url: Option<String>,
    /// Set by the binding when bytes were passed.
    #[serde(skip)]
    pub has_data: bool,
}

impl MediaItem {
    /// Completes an item a caller described: with its bytes, their hash (unless given)
    /// and length; without them, the content hash must be given. Every item names its
    /// media type. `path` names the item in errors.
    pub fn complete(&mut self, bytes: Option<&[u8]>, path: &str) -> Result<(), InputError> {
        if let Some(b) = bytes {
            if self.content_hash.is_empty() {
                self.content_hash = sha256_hex(b);
            }
            self.byte_length = b.len() as u64;
            self.has_data = true;
        } else if self.content_hash.is_empty() {
            return Err(InputError::type_error(
                format!("{path}.contentHash"),
                "required when data is not given",
            ));
        }
        if self.media_type.is_empty() {
            return Err(InputError::range_error(
                format!("{path}.mediaType"),
                "must be a non-empty string",
            ));
        }
        Ok(())
    }
}

impl MediaItem {
    fn label(&self) -> String {
        let raw = self
            .filename
            .as_deref()
            .or(self.artifact_id.as_deref())
            .map(String::from)
            .unwrap_or_else(|| {
                format!(
                    "sha256:{}",
                    &self.content_hash[..self.content_hash.len().min(12)]
                )
            });
        // Chat users name files; a name cannot close the bracket it is shown in.
        raw.chars()
            .map(|c| {
                if matches!(c, '[' | ']' | '\n' | '\r') {
                    ' '
                } else {
                    c
                }
            })
            .collect()
    }
}

/// A media type without parameters, lower-cased (`Text/Plain; charset=utf-8` -> `text/plain`).
fn base_type(media_type: &str) -> String {
    media_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// The content-block kind a media type becomes, `None` when the API takes no such media.
pub fn block_kind(media_type: &str) -> Option<&'static str> {
    match base_type(media_type).as_str() {
        "image/jpeg" | "image/png" | "image/gif" | "image/webp" => Some("image"),
        "application/pdf" | "text/plain" => Some("document"),
        _ => None,
    }
}

/// A provider and session: where a file id is valid.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MediaSession {
    pub provider: String,
    pub session: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct FileRecord {
    content_hash: String,
    file_id: String,
    #[serde(default)]
    filename: Option<String>,
    persisted_at: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct FailureRecord {
    content_hash: String,
    filename: String,
    error: String,
    failures: u32,
    last_failed_at: f64,
    retry_at: f64,
}

#[derive(Debug, Default)]
struct SessionMedia {
    files: HashMap<String, FileRecord>,
    by_filename: HashMap<String, String>,
    failures: HashMap<String, FailureRecord>,
    /// filename -> content hash, for media sent inline and awaiting `files_persisted`.
    pending: HashMap<String, String>,
}

/// How one item goes out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MediaMode {
    Reference,
    File,
    Url,
    Inline,
    Omit,
}

/// The plan for one item.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MediaPlan {
    pub index: usize,
    pub mode: MediaMode,
    /// `already_attached`, `persisted_file`, `durable_url`, `under_threshold`,
    /// `not_persisted_yet`, `persist_retry`, `persist_failed_fallback`,
    /// `file_refs_unavailable`, `too_large_to_inline`, `unsupported_media_type`.
    pub reason: &'static str,
    pub content_hash: String,
    /// The content block to send. For `inline` its source has no `data` unless bytes
    /// were passed; the caller adds them.
    pub block: Value,
    pub file_id: Option<String>,
    /// True when the item should be persisted (uploaded) for later turns.
    pub persist: bool,
    /// A diagnostic marker for the transcript and logs (persistence failing).
    pub marker: Option<String>,
    /// Earliest time (Unix ms) persistence is worth retrying, while backing off.
    pub retry_at: Option<f64>,
    /// What the local transcript should store instead of the bytes.
    pub transcript: Value,
}

/// Options of one planning call.
#[derive(Debug, Clone)]
pub struct PlanOptions<'a> {
    pub inline_max_bytes: u64,
    /// The provider can take `file` sources.
    pub file_refs: bool,
    pub manifest: Option<&'a Manifest>,
    pub now_ms: f64,
}

/// What a `files_persisted` message taught.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PersistOutcome {
    /// Files whose id was recorded against a content hash.
    pub learned: u32,
    /// Files recorded by name only (not planned through this guard).
    pub unmatched: u32,
    /// Failures recorded, with their diagnostic markers.
    pub failed: Vec<String>,
}

/// A load of the persisted map.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MediaLoad {
    pub loaded: bool,
    pub files: u32,
    pub failures: u32,
    /// Records or entries passed over, with why.
    pub dropped: Vec<String>,
}

/// The planner's state.
#[derive(Debug)]
pub struct MediaState {
    sessions: LruCache<MediaSession, SessionMedia>,
}

impl Default for MediaState {
    fn default() -> Self {
        MediaState {
            sessions: LruCache::new(NonZeroUsize::new(MAX_SESSIONS).unwrap_or(NonZeroUsize::MIN)),
        }
    }
}

fn backoff(failures: u32) -> f64 {
    let exp = failures.saturating_sub(1).min(16) as i32;
    (PERSIST_BACKOFF_BASE_MS * 2f64.powi(exp)).min(PERSIST_BACKOFF_MAX_MS)
}

fn source_block(kind: &str, source: Value) -> Value {
    json!({"type": kind, "source": source})
}

impl MediaState {
    fn session(&mut self, scope: &MediaSession) -> &mut SessionMedia {
        self.sessions
            .get_or_insert_mut(scope.clone(), SessionMedia::default)
    }

    /// The file id known for `hash` in `scope`.
    pub fn file_id(&self, scope: &MediaSession, hash: &str) -> Option<String> {
        self.sessions
            .peek(scope)?
            .files
            .get(hash)
            .map(|r| r.file_id.clone())
    }

    /// Plans `items` for one turn. The same content twice in one turn goes once; the
    /// later copies are references.
    pub fn plan(
        &mut self,
        scope: &MediaSession,
        items: &[MediaItem],
        opts: &PlanOptions,
    ) -> Vec<MediaPlan> {
        let sess = self.session(scope);
        let mut sent = HashSet::new();
        items
            .iter()
            .enumerate()
            .map(|(index, item)| plan::plan_one(sess, &mut sent, index, item, opts))
            .collect()
    }

    /// Learns from a `files_persisted` message.
    pub fn persisted(
        &mut self,
        scope: &MediaSession,
        files: &[(String, String)],
        failed: &[(String, String)],
        now_ms: f64,
    ) -> PersistOutcome {
        let sess = self.session(scope);
        let mut out = PersistOutcome::default();
        for (filename, file_id) in files {
            sess.by_filename.insert(filename.clone(), file_id.clone());
            let Some(hash) = sess.pending.remove(filename) else {
                out.unmatched += 1;
                continue;
            };
            sess.failures.remove(&hash);
            if sess.files.len() >= MAX_FILES_PER_SESSION && !sess.files.contains_key(&hash) {
                out.unmatched += 1;
                continue;
            }
            sess.files.insert(
                hash.clone(),
                FileRecord {
                    content_hash: hash,
                    file_id: file_id.clone(),
                    filename: Some(filename.clone()),
                    persisted_at: now_ms,
                },
            );
            out.learned += 1;
        }
        for (filename, error) in failed {
            let hash = sess
                .pending
                .remove(filename)
                .unwrap_or_else(|| format!("filename:{filename}"));
            if sess.failures.len() >= MAX_FILES_PER_SESSION && !sess.failures.contains_key(&hash) {
                continue;
            }
            let failures = sess.failures.get(&hash).map_or(0, |f| f.failures) + 1;
            let retry_at = now_ms + backoff(failures);
            out.failed.push(format!(
                "[media persistence failed: {filename}: {error}; inline fallback, retry after {} s]",
                (retry_at - now_ms) / 1000.0
            ));
            sess.failures.insert(
                hash.clone(),
                FailureRecord {
                    content_hash: hash,
                    filename: filename.clone(),
                    error: error.clone(),
                    failures,
                    last_failed_at: now_ms,
                    retry_at,
                },
            );
        }
        out
    }
}

mod plan;
mod saved;

#[cfg(test)]
mod tests;
