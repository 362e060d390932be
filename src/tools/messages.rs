//! `channel_messages`: a thread, messages or a media artifact of one channel by id,
//! from the store, fetched through the rate-limited fetcher when not held.
//!
//! The call is planned (`plan`: which fetches are needed), the caller carries out the
//! fetches, then `build` answers from what the store holds, with a note for every
//! fetch that failed or was refused and for anything served stale.

use super::input::MessagesInput;
use super::media::{content_block, too_large};
use crate::cache::Lookup;
use crate::model::{Author, MediaRef, MessageView};
use crate::store::context::{Failure, Need};
use crate::store::message::StoredMessage;
use crate::store::render::render_thread;
use crate::store::{thread_key, FileLocation, MediaItem, Store};
use crate::text::THREAD_BUDGET_TOKENS;
use serde::Serialize;
use serde_json::{json, Value};

/// A media artifact the call asks for, as far as the store knows it.
#[derive(Debug, Clone, PartialEq)]
pub enum MediaPlan {
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
fn thread_for(store: &Store, channel: &str, id: &str) -> String {
    store
        .channels
        .get(channel)
        .and_then(|c| c.reply_threads.get(id))
        .cloned()
        .unwrap_or_else(|| id.to_string())
}

/// The fetches a call needs at `now`, leaving out those that already failed. Counts
/// cache hits and misses for the lookups it makes.
pub fn plan(
    store: &mut Store,
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
            .channels
            .get(channel)
            .is_some_and(|c| c.was_deleted(&thread));
        let key = thread_key(channel, &thread);
        let replies_fresh = matches!(store.replies.lookup(&key, now), Lookup::Fresh(_));
        let root = store.channels.get(channel).and_then(|c| c.get(&thread));
        // A root known to have no replies is a whole thread already.
        let no_replies =
            root.is_some_and(|r| r.reply_count == 0) && store.replies.peek(&key).is_none();
        let root_fresh =
            root.is_some() || matches!(store.starters.lookup(&key, now), Lookup::Fresh(_));
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
                && !store
                    .channels
                    .get(channel)
                    .is_some_and(|c| c.was_deleted(id))
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
pub fn media_plan(
    store: &mut Store,
    channel: &str,
    artifact_id: &str,
    max_bytes: u64,
) -> MediaPlan {
    let Some(loc) = store.file_in(channel, artifact_id).cloned() else {
        return MediaPlan::NotFound;
    };
    if store.cached_media(channel, artifact_id).is_some() {
        return MediaPlan::Cached;
    }
    if loc.media.byte_length > max_bytes {
        return MediaPlan::TooLarge(loc);
    }
    MediaPlan::Fetch(loc)
}

#[derive(Serialize)]
struct MessageOut<'a> {
    message_id: &'a str,
    thread_id: Option<&'a str>,
    ts: &'a str,
    author: &'a Author,
    text: &'a str,
    media: Vec<MediaRef>,
}

/// The media part of a call once the bytes are held or the download failed.
#[derive(Debug, Clone, PartialEq)]
pub enum MediaResult {
    /// Not asked for.
    None,
    /// Downloaded bytes (when the media cache could not keep them) or the cache.
    Bytes(Option<MediaItem>),
    /// The download failed or was refused.
    Failed(String),
}

/// Builds the result JSON from what the store holds at `now`.
#[allow(clippy::too_many_arguments)]
pub fn build(
    store: &mut Store,
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
            .channels
            .get(channel)
            .and_then(|c| c.get(&thread))
            .filter(|r| r.reply_count == 0 && !r.is_reply());
        let mut json = String::new();
        match (held, root_only) {
            (Some(h), _) => {
                render_thread(
                    &thread,
                    h.root,
                    &h.replies,
                    h.total,
                    u64::from(THREAD_BUDGET_TOKENS),
                    input.max_replies,
                    &mut json,
                );
            }
            (None, Some(root)) => {
                render_thread(
                    &thread,
                    root,
                    &[],
                    0,
                    u64::from(THREAD_BUDGET_TOKENS),
                    input.max_replies,
                    &mut json,
                );
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
        store.counters.stale_serves += 1;
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
        message_id: &m.id,
        thread_id: m.thread_id.as_deref(),
        ts: m.iso_ts(),
        author: &m.author,
        text: &m.text,
        media: m.media_refs(),
    }
}

fn media_out(
    store: &mut Store,
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
