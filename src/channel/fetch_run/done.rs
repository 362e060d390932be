//! What a finished run resolves to, made from the store once every fetch has ended.

use super::{Goal, JobEnd, Run, State};
use crate::channel::store::build::{BuildError, Built};
use crate::channel::store::fetch::FetchKind;
use crate::channel::store::{CachedMedia, ChannelStore};
use crate::channel::tools::channel_messages::{self, MediaResult};

/// What a finished run resolves to.
#[derive(Debug)]
pub enum Done {
    /// The built context (or why the anchor could not be found) and the fetcher calls
    /// made.
    Context(Result<Built, BuildError>, u32),
    /// A file: its bytes (`None` with `note` saying why), whether the media cache holds
    /// them, and the calls made.
    Media {
        artifact_id: String,
        item: Option<CachedMedia>,
        note: Option<String>,
        held: bool,
        calls: u32,
    },
    /// The tool's answer (JSON text).
    Messages(String),
}

/// The answer of a run whose fetches have all ended.
pub(super) fn finish_run(store: &mut ChannelStore, run: Run, now: u64) -> Done {
    let Run {
        goal,
        jobs,
        failures,
        calls,
        ..
    } = run;
    let download = jobs.into_iter().find_map(|j| match j.state {
        State::Done(end) if j.job.kind == FetchKind::Media => Some(end),
        _ => None,
    });
    match goal {
        Goal::Context(req) => Done::Context(store.build(&req, &failures, now), calls),
        Goal::Media { artifact_id } => {
            let end = download.unwrap_or_default();
            let (item, held) = match end.media {
                Some((item, held)) => (Some(item), held),
                None => (None, false),
            };
            let note = match (&item, end.failure) {
                (None, Some(reason)) => Some(reason),
                (None, None) => Some(format!("{artifact_id}: the download gave nothing")),
                _ => None,
            };
            Done::Media {
                artifact_id,
                item,
                note,
                held,
                calls,
            }
        }
        Goal::Messages {
            channel,
            input,
            media,
            max_media_bytes,
        } => {
            let media = match download {
                Some(JobEnd {
                    media: Some((item, _)),
                    ..
                }) => MediaResult::Bytes(Some(item)),
                Some(JobEnd {
                    failure: Some(reason),
                    ..
                }) => MediaResult::Failed(reason),
                _ => media,
            };
            Done::Messages(channel_messages::build(
                store,
                &channel,
                &input,
                &failures,
                media,
                max_media_bytes,
                now,
            ))
        }
    }
}
