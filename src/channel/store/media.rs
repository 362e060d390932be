//! Media and the file index: where each file a message references can be downloaded
//! (per channel), the bytes downloaded (a byte-bounded cache), and where a request for a
//! file is served from: the cache, a download through the fetcher, or a note saying why
//! neither.

use super::fetch::{missing_fetcher, FetchJob, FetcherFn};
use super::{ChannelStore, FileLocation};
use crate::core::cache::ByteSized;
use crate::core::sha256::sha256_hex;

/// Downloaded media bytes, held for the channel that asked for them.
#[derive(Debug, Clone, PartialEq)]
pub struct CachedMedia {
    /// The channel whose message references the file: bytes are served to that channel
    /// only (Slack shares one file id across channels; access follows the asker).
    pub channel: String,
    pub artifact_id: String,
    pub media_type: String,
    pub filename: Option<String>,
    pub bytes: Vec<u8>,
    /// SHA-256 of `bytes`, lowercase hex (the attachment manifest's `content_hash`).
    pub content_hash: String,
    pub fetched_at: u64,
}

impl ByteSized for CachedMedia {
    fn byte_size(&self) -> u64 {
        self.bytes.len() as u64
    }
}

/// Where a request for a file's bytes is served from.
#[derive(Debug, Clone, PartialEq)]
pub enum MediaSource {
    /// The media cache holds them.
    Cached(CachedMedia),
    /// A download through the caller's `fetchMedia`.
    Fetch(FetchJob),
    /// Neither: why, for the caller's note.
    Unavailable(String),
}

impl ChannelStore {
    /// Where the bytes of file `artifact_id` come from: for `channel`, only a file a
    /// message of that channel references; without it, the channel that referenced the
    /// file most recently. `can_fetch`: the caller gave a `fetchMedia`.
    pub fn media_source(
        &mut self,
        artifact_id: &str,
        channel: Option<&str>,
        can_fetch: bool,
    ) -> MediaSource {
        let loc = match channel {
            Some(c) => self.file_in(c, artifact_id).cloned(),
            None => self.newest_file(artifact_id).cloned(),
        };
        let Some(loc) = loc else {
            return MediaSource::Unavailable(match channel {
                Some(c) => format!(
                    "File {artifact_id} is not referenced by any message the store holds for channel {c}."
                ),
                None => format!(
                    "File {artifact_id} is not referenced by any message the store holds."
                ),
            });
        };
        if let Some(item) = self.cached_media(&loc.channel, artifact_id) {
            return MediaSource::Cached(item.clone());
        }
        if !can_fetch {
            return MediaSource::Unavailable(missing_fetcher(FetcherFn::Media));
        }
        let job = FetchJob::for_media(artifact_id, &loc, &self.config().rate_limit);
        MediaSource::Fetch(job.on_platform(self.platform(&loc.channel)))
    }

    /// Caches downloaded media unless it alone exceeds the bound; returns whether it
    /// is held.
    pub fn put_media(&mut self, item: CachedMedia) -> bool {
        let key = (item.channel.clone(), item.artifact_id.clone());
        self.note_media(&key);
        self.media.insert(key, item)
    }

    /// Where file `artifact_id` can be downloaded for `channel`: only a file that a
    /// message of that channel references.
    pub fn file_in(&self, channel: &str, artifact_id: &str) -> Option<&FileLocation> {
        self.files.in_channel(channel, artifact_id)
    }

    /// The newest remembered location of `artifact_id` in any channel (for callers that
    /// own the whole store and name no channel).
    pub fn newest_file(&self, artifact_id: &str) -> Option<&FileLocation> {
        self.files.newest(artifact_id)
    }

    /// Cached bytes of `artifact_id` downloaded for `channel`.
    pub fn cached_media(&mut self, channel: &str, artifact_id: &str) -> Option<&CachedMedia> {
        self.media
            .get(&(channel.to_string(), artifact_id.to_string()))
    }

    /// The note for a download that resolved with something other than bytes, counted
    /// as a failed fetch.
    pub fn not_bytes(&mut self, what: &str) -> String {
        self.counters.failed_fetches += 1;
        format!("fetchMedia returned {what} instead of bytes (a Uint8Array, Buffer or ArrayBuffer)")
    }

    /// Keeps downloaded `bytes` of file `artifact_id` for `channel` (in the media cache
    /// when they fit). Returns the item and whether the cache holds it.
    pub fn keep_download(
        &mut self,
        channel: &str,
        artifact_id: &str,
        bytes: Vec<u8>,
        now: u64,
    ) -> (CachedMedia, bool) {
        let loc = self.file_in(channel, artifact_id);
        let item = CachedMedia {
            channel: channel.to_string(),
            content_hash: sha256_hex(&bytes),
            artifact_id: artifact_id.to_string(),
            media_type: loc.map_or_else(
                || "application/octet-stream".to_string(),
                |l| l.media.media_type.clone(),
            ),
            filename: loc.and_then(|l| l.media.filename.clone()),
            bytes,
            fetched_at: now,
        };
        let held = self.put_media(item.clone());
        (item, held)
    }
}

#[cfg(test)]
mod tests;
