//! What a fetch is: the need it answers (history, a thread, messages by id), the
//! fetcher function that makes it and whether the caller gave one, and the job a fetch
//! run carries out, with its key, rate-limit bucket, request and pages.

use super::super::FileLocation;
use crate::channel::ratelimit::RateLimitConfig;
use serde_json::{json, Value};

/// Rate-limit bucket of media downloads.
pub const MEDIA_METHOD: &str = "files.download";

/// The key of one fetch (its kind, then the ids), as a JSON array: no id, whatever
/// characters it holds, can make two different fetches share a key.
pub fn fetch_key(parts: &[&str]) -> String {
    serde_json::to_string(parts).unwrap_or_default()
}

/// A fetch the store needs before it can build.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Need {
    /// The newest page of the channel's history (`conversations.history`).
    History { channel: String },
    /// A whole thread (`conversations.replies`, following pages).
    Thread { channel: String, thread: String },
    /// Specific messages by id.
    Messages { channel: String, ids: Vec<String> },
}

impl Need {
    /// The platform API method the fetch counts against.
    pub fn method(&self) -> &'static str {
        match self {
            Need::History { .. } | Need::Messages { .. } => "conversations.history",
            Need::Thread { .. } => "conversations.replies",
        }
    }

    pub fn channel(&self) -> &str {
        match self {
            Need::History { channel }
            | Need::Thread { channel, .. }
            | Need::Messages { channel, .. } => channel,
        }
    }

    /// Identifies the fetch, so concurrent requests for the same data share one call
    /// (see [`fetch_key`]).
    pub fn key(&self) -> String {
        match self {
            Need::History { channel } => fetch_key(&["history", channel]),
            Need::Thread { channel, thread } => fetch_key(&["thread", channel, thread]),
            Need::Messages { channel, ids } => {
                let mut v = vec!["messages", channel.as_str()];
                v.extend(ids.iter().map(String::as_str));
                fetch_key(&v)
            }
        }
    }

    pub fn what(&self) -> String {
        match self {
            Need::History { .. } => "channel history".to_string(),
            Need::Thread { thread, .. } => format!("thread {thread}"),
            Need::Messages { ids, .. } => format!("messages {}", ids.join(", ")),
        }
    }
}

/// A fetch that did not happen or failed, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    pub need: Need,
    pub reason: String,
}

/// The functions a caller's fetcher may supply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FetcherFn {
    Thread,
    History,
    Messages,
    Media,
}

impl FetcherFn {
    /// Every fetcher function, in the order [`Fetchers`] keeps them.
    pub const ALL: [FetcherFn; 4] = [
        FetcherFn::Thread,
        FetcherFn::History,
        FetcherFn::Messages,
        FetcherFn::Media,
    ];

    /// The function's name on the fetcher object.
    pub fn name(self) -> &'static str {
        match self {
            FetcherFn::Thread => "fetchThread",
            FetcherFn::History => "fetchHistory",
            FetcherFn::Messages => "fetchMessages",
            FetcherFn::Media => "fetchMedia",
        }
    }

    /// The function that carries out `need`.
    pub fn for_need(need: &Need) -> Self {
        match need {
            Need::History { .. } => FetcherFn::History,
            Need::Thread { .. } => FetcherFn::Thread,
            Need::Messages { .. } => FetcherFn::Messages,
        }
    }

    fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

/// Which fetcher functions the caller supplied.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Fetchers(u8);

impl Fetchers {
    /// These fetchers and `f`.
    #[must_use]
    pub fn with(self, f: FetcherFn) -> Self {
        Fetchers(self.0 | f.bit())
    }

    pub fn has(self, f: FetcherFn) -> bool {
        self.0 & f.bit() != 0
    }

    /// Keeps the needs the caller can fetch; each of the others becomes a failure
    /// saying which fetcher function is missing.
    pub fn fetchable(self, needs: Vec<Need>, failures: &mut Vec<Failure>) -> Vec<Need> {
        let mut out = Vec::with_capacity(needs.len());
        for need in needs {
            let f = FetcherFn::for_need(&need);
            if self.has(f) {
                out.push(need);
            } else {
                failures.push(Failure {
                    need,
                    reason: missing_fetcher(f),
                });
            }
        }
        out
    }
}

/// The note for a fetch the caller gave no function for.
pub fn missing_fetcher(f: FetcherFn) -> String {
    format!("no {} in the fetcher", f.name())
}

/// What a fetch is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FetchKind {
    History,
    Thread,
    Messages,
    Media,
}

/// One fetch as a run ([`crate::channel::fetch_run`]) carries it out: the key that lets
/// concurrent requests share it, the rate-limit bucket, the fetcher function and the
/// request to pass it, and how many pages to follow.
#[derive(Debug, Clone, PartialEq)]
pub struct FetchJob {
    pub key: String,
    pub kind: FetchKind,
    pub method: String,
    /// The fetcher function to call.
    pub fetch: String,
    pub channel_id: String,
    pub thread_id: Option<String>,
    pub message_ids: Option<Vec<String>>,
    pub artifact_id: Option<String>,
    pub page_size: u32,
    pub max_pages: u32,
    /// The argument passed to the fetcher (without `cursor` and `limit`, which the
    /// runtime adds per page).
    pub request: Value,
}

/// The API method a fetch counts against on `platform` (rate limits, `stats().calls`,
/// notes), from the Slack method it is named by: Discord reads a channel's messages, a
/// thread's and one message through one route, and serves attachments from its CDN;
/// Telegram downloads a file after `getFile`.
pub fn platform_method<'a>(platform: Option<&str>, slack_method: &'a str) -> &'a str {
    match (platform, slack_method) {
        (Some(crate::channel::discord::PLATFORM), MEDIA_METHOD) => "GET attachment",
        (Some(crate::channel::discord::PLATFORM), _) => "GET /channels/{id}/messages",
        (Some(crate::channel::telegram::PLATFORM), MEDIA_METHOD) => "getFile",
        _ => slack_method,
    }
}

impl FetchJob {
    /// This job, its method named as `platform` names it (see [`platform_method`]).
    #[must_use]
    pub fn on_platform(mut self, platform: Option<&str>) -> Self {
        let named = platform_method(platform, &self.method);
        if named != self.method {
            self.method = named.to_string();
        }
        self
    }

    /// The job that carries out `need`.
    pub fn for_need(need: &Need, rate: &RateLimitConfig) -> Self {
        let (kind, thread_id, message_ids) = match need {
            Need::History { .. } => (FetchKind::History, None, None),
            Need::Thread { thread, .. } => (FetchKind::Thread, Some(thread.clone()), None),
            Need::Messages { ids, .. } => (FetchKind::Messages, None, Some(ids.clone())),
        };
        // The platform's own id: a channel keyed `<platform>:<id>` (its id is another
        // platform's channel's too) is asked for by its id.
        let mut request =
            json!({ "channelId": crate::channel::store::platform_id(need.channel()) });
        if let Some(t) = &thread_id {
            request["threadId"] = json!(t);
        }
        if let Some(ids) = &message_ids {
            request["messageIds"] = json!(ids);
        }
        FetchJob {
            key: need.key(),
            kind,
            method: need.method().to_string(),
            fetch: FetcherFn::for_need(need).name().to_string(),
            channel_id: need.channel().to_string(),
            thread_id,
            message_ids,
            artifact_id: None,
            page_size: rate.page_size,
            // Only a thread is followed past its first page.
            max_pages: if kind == FetchKind::Thread {
                rate.max_pages
            } else {
                1
            },
            request,
        }
    }

    /// The download of file `id` from where `loc` says it is.
    pub fn for_media(id: &str, loc: &FileLocation, rate: &RateLimitConfig) -> Self {
        FetchJob {
            key: fetch_key(&["media", &loc.channel, id]),
            kind: FetchKind::Media,
            method: MEDIA_METHOD.to_string(),
            fetch: FetcherFn::Media.name().to_string(),
            channel_id: loc.channel.clone(),
            thread_id: None,
            message_ids: None,
            artifact_id: Some(id.to_string()),
            page_size: rate.page_size,
            max_pages: 1,
            request: json!({
                "artifactId": id,
                "url": loc.url,
                "mediaType": loc.media.media_type,
                "filename": loc.media.filename,
                "byteLength": loc.media.byte_length,
                "channelId": loc.channel,
                "messageId": loc.message_id,
            }),
        }
    }

    /// The need this job carries out (none for a media download).
    pub fn need(&self) -> Option<Need> {
        let channel = self.channel_id.clone();
        match self.kind {
            FetchKind::History => Some(Need::History { channel }),
            FetchKind::Thread => self
                .thread_id
                .clone()
                .map(|thread| Need::Thread { channel, thread }),
            FetchKind::Messages => self
                .message_ids
                .clone()
                .map(|ids| Need::Messages { channel, ids }),
            FetchKind::Media => None,
        }
    }
}
