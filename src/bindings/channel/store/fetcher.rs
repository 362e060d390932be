//! The caller's fetcher as the typings declare it: the functions a `ChannelStore` calls
//! for data it does not hold, and what each is asked for. JavaScript-only shapes (no
//! conversion code is generated for them); the store reads the functions in `mod.rs`.
#![allow(dead_code)]

use napi_derive::napi;

/// What `fetchThread` is asked for: one page of a thread (`conversations.replies`).
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct FetchThreadRequest {
    pub channel_id: String,
    /// The thread (its root's id; Slack `thread_ts`).
    pub thread_id: String,
    /// Set for pages after the first (Slack `response_metadata.next_cursor`).
    pub cursor: Option<String>,
    /// Objects per page.
    pub limit: f64,
}

/// What `fetchHistory` is asked for: the newest page of a channel
/// (`conversations.history`).
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct FetchHistoryRequest {
    pub channel_id: String,
    pub cursor: Option<String>,
    /// Objects per page.
    pub limit: f64,
}

/// What `fetchMessages` is asked for: specific messages by id.
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct FetchMessagesRequest {
    pub channel_id: String,
    /// The messages wanted.
    pub message_ids: Vec<String>,
    /// Objects per page.
    pub limit: f64,
}

/// What a fetcher is asked for. `cursor` is set for pages after the first.
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct FetchRequest {
    pub channel_id: String,
    /// `fetchThread`: the thread (Slack `thread_ts`).
    pub thread_id: Option<String>,
    /// `fetchMessages`: the messages wanted.
    pub message_ids: Option<Vec<String>>,
    pub cursor: Option<String>,
    /// Objects per page.
    pub limit: f64,
}

/// What `fetchMedia` is asked for.
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct FetchMediaRequest {
    pub artifact_id: String,
    /// Slack's `url_private_download` / `url_private` (needs the bot token).
    #[napi(ts_type = "string | null")]
    pub url: Option<String>,
    pub media_type: String,
    #[napi(ts_type = "string | null")]
    pub filename: Option<String>,
    pub byte_length: f64,
    pub channel_id: String,
    pub message_id: String,
}

/// Async functions the store calls, through its rate limiter, for data it does not
/// hold. Results are Web API bodies as Slack returns them (`{ ok, messages, has_more,
/// response_metadata }`) or `{ messages: MessageInput[], nextCursor? }`. A rejection
/// degrades the request (counted in `stats().failedFetches`); an error carrying
/// `retryAfter` (seconds, as @slack/web-api's rate-limit error does), `retryAfterMs` or a
/// `retry-after` header pauses that method for that long.
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct ChannelFetcher {
    /// `conversations.replies`: the thread's root and replies, oldest first.
    #[napi(ts_type = "(request: FetchThreadRequest) => Promise<unknown>")]
    pub fetch_thread: Option<()>,
    /// `conversations.history`: the newest page of the channel.
    #[napi(ts_type = "(request: FetchHistoryRequest) => Promise<unknown>")]
    pub fetch_history: Option<()>,
    /// Specific messages by id (on Slack, `conversations.history` with `latest`,
    /// `inclusive` and `limit: 1`, or `conversations.replies` for a reply).
    #[napi(ts_type = "(request: FetchMessagesRequest) => Promise<unknown>")]
    pub fetch_messages: Option<()>,
    /// The bytes of a file.
    #[napi(ts_type = "(request: FetchMediaRequest) => Promise<Uint8Array | ArrayBuffer>")]
    pub fetch_media: Option<()>,
}
