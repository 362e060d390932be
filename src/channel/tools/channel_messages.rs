//! `channel_messages`: a thread, messages or a media artifact of one channel by id,
//! from the store, fetched through the rate-limited fetcher when not held.
//!
//! The call is planned (`plan`: which fetches are needed), the caller carries out the
//! fetches, then `build` answers from what the store holds, with a note for every
//! fetch that failed or was refused and for anything served stale.

use super::input::MessagesInput;
use super::media::{content_block, too_large};
use crate::channel::message::StoredMessage;
use crate::channel::store::fetch::{missing_fetcher, Failure, FetchJob, FetcherFn, Fetchers, Need};
use crate::channel::store::render::{render_thread, ThreadLimits};
use crate::channel::store::{CachedMedia, ChannelStore, FileLocation};
use crate::core::model::{Author, MediaRef, MessageView};
use crate::core::text::THREAD_BUDGET_TOKENS;
use serde::Serialize;
use serde_json::{json, Value};
use std::borrow::Cow;

/// A media artifact the call asks for, as far as the store knows it.
#[derive(Debug, Clone, PartialEq)]
pub enum MediaLookup {
    /// Not referenced by any message held for this channel.
    NotFound,
    /// Declared larger than the limit: answered with a text reference, not fetched.
    TooLarge(FileLocation),
    /// In the media cache.
    Cached,
    /// To download through the fetcher.
    Fetch(FileLocation),
}

/// The thread a `thread_id` means: itself, or the thread of a held reply.
fn thread_for(store: &ChannelStore, channel: &str, id: &str) -> String {
    store
        .channel(channel)
        .and_then(|c| c.reply_threads.get(id))
        .cloned()
        .unwrap_or_else(|| id.to_string())
}

/// The fetches a call needs at `now`, leaving out those that already failed. Counts
/// cache hits and misses for the lookups it makes.
pub fn plan(
    store: &mut ChannelStore,
    channel: &str,
    input: &MessagesInput,
    failed: &[Failure],
    now: u64,
) -> Vec<Need> {
    let has_failed = |n: &Need| failed.iter().any(|f| f.need == *n);
    let mut needs = Vec::new();
    if let Some(id) = &input.thread_id {
        let thread = thread_for(store, channel, id);
        let deleted = store
            .channel(channel)
            .is_some_and(|c| c.was_deleted(&thread));
        let replies_fresh = store.replies_fresh(channel, &thread, now);
        let root = store.channel(channel).and_then(|c| c.get(&thread));
        // A root known to have no replies is a whole thread already.
        let no_replies = root.is_some_and(|r| r.reply_count() == 0)
            && store.held_replies(channel, &thread).is_none();
        let root_held = root.is_some();
        let root_fresh = root_held || store.starter_fresh(channel, &thread, now);
        let need = Need::Thread {
            channel: channel.to_string(),
            thread,
        };
        if !deleted && !no_replies && (!replies_fresh || !root_fresh) && !has_failed(&need) {
            needs.push(need);
        }
    }
    let missing: Vec<String> = input
        .message_ids
        .iter()
        .filter(|id| {
            store.find(channel, id).is_none()
                && !store.channel(channel).is_some_and(|c| c.was_deleted(id))
        })
        .cloned()
        .collect();
    if !missing.is_empty() {
        let need = Need::Messages {
            channel: channel.to_string(),
            ids: missing,
        };
        if !has_failed(&need) {
            needs.push(need);
        }
    }
    needs
}

/// What the store can do about `media_artifact_id` (only files of this channel).
pub fn media_lookup(
    store: &mut ChannelStore,
    channel: &str,
    artifact_id: &str,
    max_bytes: u64,
) -> MediaLookup {
    let Some(loc) = store.file_in(channel, artifact_id).cloned() else {
        return MediaLookup::NotFound;
    };
    if store.cached_media(channel, artifact_id).is_some() {
        return MediaLookup::Cached;
    }
    if loc.media.byte_length > max_bytes {
        return MediaLookup::TooLarge(loc);
    }
    MediaLookup::Fetch(loc)
}

#[derive(Serialize)]
struct MessageOut<'a> {
    message_id: &'a str,
    thread_id: Option<&'a str>,
    ts: &'a str,
    author: &'a Author,
    text: Cow<'a, str>,
    media: Vec<MediaRef>,
}

/// The media part of a call once the bytes are held or the download failed.
#[derive(Debug, Clone, PartialEq)]
pub enum MediaResult {
    /// Not asked for.
    None,
    /// Downloaded bytes (when the media cache could not keep them) or the cache.
    Bytes(Option<CachedMedia>),
    /// The download failed or was refused.
    Failed(String),
}

/// The fetches a `channel_messages` call waits for.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolFetch {
    pub jobs: Vec<FetchJob>,
    /// Fetches that cannot be made (no fetcher function for them).
    pub failures: Vec<Failure>,
    /// The media download, when the call asks for a file that is not cached.
    pub media: Option<FetchJob>,
    /// What the answer says of the file when there is no download (it cannot be made).
    pub media_result: MediaResult,
}

/// How a `channel_messages` call goes on.
#[derive(Debug, Clone, PartialEq)]
pub enum Start {
    /// Everything is held (or cannot be fetched): the answer.
    Answer(String),
    /// The caller's fetcher has work to do first; then [`build`] answers.
    Fetch(Box<ToolFetch>),
}

/// Starts a `channel_messages` call at `now`: what to fetch with the caller's
/// `fetchers`, or, when nothing can be fetched, the answer from what the store holds.
pub fn start(
    store: &mut ChannelStore,
    channel: &str,
    input: &MessagesInput,
    fetchers: Fetchers,
    max_media_bytes: u64,
    now: u64,
) -> Start {
    let mut failures = Vec::new();
    let needs = plan(store, channel, input, &[], now);
    let needs = fetchers.fetchable(needs, &mut failures);
    let rate = &store.config().rate_limit;
    let platform = store.platform(channel).map(str::to_string);
    let jobs: Vec<FetchJob> = needs
        .iter()
        .map(|n| FetchJob::for_need(n, rate).on_platform(platform.as_deref()))
        .collect();
    let mut media = MediaResult::None;
    let mut download = None;
    if let Some(aid) = &input.media_artifact_id {
        match media_lookup(store, channel, aid, max_media_bytes) {
            MediaLookup::Fetch(loc) if fetchers.has(FetcherFn::Media) => {
                let job = FetchJob::for_media(aid, &loc, &store.config().rate_limit);
                download = Some(job.on_platform(platform.as_deref()));
            }
            MediaLookup::Fetch(_) => media = MediaResult::Failed(missing_fetcher(FetcherFn::Media)),
            MediaLookup::Cached | MediaLookup::NotFound | MediaLookup::TooLarge(_) => {}
        }
    }
    if jobs.is_empty() && download.is_none() {
        return Start::Answer(build(
            store,
            channel,
            input,
            &failures,
            media,
            max_media_bytes,
            now,
        ));
    }
    Start::Fetch(Box::new(ToolFetch {
        jobs,
        failures,
        media: download,
        media_result: media,
    }))
}

/// Builds the result JSON from what the store holds at `now`.
#[allow(clippy::too_many_arguments)]
pub fn build(
    store: &mut ChannelStore,
    channel: &str,
    input: &MessagesInput,
    failed: &[Failure],
    media: MediaResult,
    max_media_bytes: u64,
    now: u64,
) -> String {
    let mut notes: Vec<String> = failed
        .iter()
        .map(|f| format!("Could not fetch {} ({}).", f.need.what(), f.reason))
        .collect();
    let mut not_found: Vec<String> = Vec::new();
    let mut out = String::from("{");
    let mut stale = false;
    if let Some(id) = &input.thread_id {
        let thread = thread_for(store, channel, id);
        let (held, was_stale) = store.held_thread(channel, &thread, now, &mut notes);
        stale = was_stale;
        let root_only = store
            .channel(channel)
            .and_then(|c| c.get(&thread))
            .filter(|r| r.reply_count() == 0 && !r.is_reply());
        let mut json = String::new();
        let limits = ThreadLimits {
            budget_tokens: u64::from(THREAD_BUDGET_TOKENS),
            meter: crate::core::tokens::Meter::of_model(None),
            max_replies: input.max_replies,
            compact_anchor: None,
        };
        match (held, root_only) {
            (Some(h), _) => {
                render_thread(&thread, h.root, &h.replies, h.total, limits, &mut json);
            }
            (None, Some(root)) => {
                render_thread(&thread, root, &[], 0, limits, &mut json);
            }
            (None, None) => not_found.push(id.clone()),
        }
        if !json.is_empty() {
            out.push_str("\"thread\":");
            out.push_str(&json);
        }
    }
    if !input.message_ids.is_empty() {
        let mut list = Vec::new();
        for id in &input.message_ids {
            match store.find(channel, id) {
                Some(m) => list.push(message_out(m)),
                None => not_found.push(id.clone()),
            }
        }
        push_field(
            &mut out,
            "messages",
            &serde_json::to_string(&list).unwrap_or_else(|_| "[]".into()),
        );
    }
    if let Some(aid) = &input.media_artifact_id {
        let v = media_out(store, channel, aid, media, max_media_bytes, &mut notes);
        match v {
            Some(v) => push_field(&mut out, "media", &v.to_string()),
            None => not_found.push(aid.clone()),
        }
    }
    if stale {
        store.count_stale_serve();
    }
    if !not_found.is_empty() {
        push_field(&mut out, "not_found", &json!(not_found).to_string());
    }
    if !notes.is_empty() {
        push_field(&mut out, "notes", &json!(notes).to_string());
    }
    out.push('}');
    out
}

fn push_field(out: &mut String, name: &str, json: &str) {
    if out.len() > 1 {
        out.push(',');
    }
    out.push('"');
    out.push_str(name);
    out.push_str("\":");
    out.push_str(json);
}

fn message_out(m: &StoredMessage) -> MessageOut<'_> {
    MessageOut {
        message_id: m.id(),
        thread_id: m.thread_id.as_deref(),
        ts: m.iso_ts(),
        author: &m.author,
        text: m.text.as_str(),
        media: m.media_refs(),
    }
}

fn media_out(
    store: &mut ChannelStore,
    channel: &str,
    aid: &str,
    media: MediaResult,
    max_bytes: u64,
    notes: &mut Vec<String>,
) -> Option<Value> {
    let loc = store.file_in(channel, aid).cloned()?;
    let cached = store.cached_media(channel, aid).cloned();
    let item = match (cached, media) {
        (Some(item), _) => Some(item),
        (None, MediaResult::Bytes(item)) => item,
        (None, MediaResult::Failed(reason)) => {
            notes.push(format!("Could not download file {aid} ({reason})."));
            None
        }
        (None, MediaResult::None) => None,
    };
    let filename = loc.media.filename.as_deref();
    let (content, inline) = match &item {
        Some(item) => content_block(aid, filename, &item.media_type, &item.bytes, max_bytes),
        None if loc.media.byte_length > max_bytes => (
            too_large(
                aid,
                filename,
                &loc.media.media_type,
                loc.media.byte_length,
                max_bytes,
            ),
            false,
        ),
        None => (
            json!({"type": "text", "text": format!("[File {aid} could not be retrieved; it is not attached.]")}),
            false,
        ),
    };
    let mut v = json!({
        "artifact_id": aid,
        "media_type": item.as_ref().map_or(loc.media.media_type.as_str(), |i| i.media_type.as_str()),
        "filename": filename,
        "byte_length": item.as_ref().map_or(loc.media.byte_length, |i| i.bytes.len() as u64),
        "inline": inline,
        "content": content,
    });
    if let Some(i) = &item {
        v["content_hash"] = json!(i.content_hash);
    }
    Some(v)
}
