//! The shared rate limiter (`options.redis`) in a fetch run: a run's ask is a promise
//! of Redis's answer (asked off the JS thread), which the run turns into call / wait /
//! refuse (in [`crate::channel::store::fetch`]); a Retry-After one worker is given is passed on
//! to the others.

use super::JsChannelStore;
use crate::channel::coord::{Coordinator, SharedGrant};
use crate::channel::fetch_run::Answer;
use crate::channel::ratelimit::WINDOW_MS;
use napi::bindgen_prelude::*;
use napi::Env;
use napi_derive::napi;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The shared limiter's answer with the time it was asked at (the verdict is about that
/// moment), as the promise `_drive` waits on resolves with it.
#[derive(Serialize, Deserialize)]
struct Asked {
    grant: SharedGrant,
    now: u64,
}

/// Starts connecting in the background, so `stats().redis` soon says whether Redis is
/// there.
pub(super) fn probe(env: &Env, coord: &Arc<Coordinator>) -> Result<()> {
    let c = Arc::clone(coord);
    env.spawn_future(async move {
        c.probe().await;
        Ok(())
    })
    .map(drop)
}

#[napi]
impl JsChannelStore {
    /// The shared limiter's answer for one call of `method` on behalf of `channel`, as
    /// a promise of its JSON (read back by [`ChannelStore::shared_answer`]).
    pub(super) fn ask_shared<'e>(
        &self,
        env: &'e Env,
        method: &str,
        channel: &str,
    ) -> Result<PromiseRaw<'e, Option<String>>> {
        let now = self.now(env)?;
        let Some(coord) = self.coord.clone() else {
            return env.spawn_future(async { Ok(None) });
        };
        let (workspace, limit) = {
            let core = self.core(env)?;
            (
                core.workspace_of(channel),
                core.config().rate_limit.limit_for(method),
            )
        };
        let method = method.to_string();
        env.spawn_future(async move {
            let grant = coord
                .acquire(&workspace, &method, limit, WINDOW_MS, now)
                .await;
            serde_json::to_string(&Asked { grant, now })
                .map(Some)
                .map_err(|e| Error::from_reason(e.to_string()))
        })
    }

    /// The run's answer from what the shared limiter said (`text`), or from why it
    /// could not be asked (`error`).
    pub(super) fn shared_answer(
        &self,
        env: &Env,
        text: Option<String>,
        error: Option<String>,
    ) -> Result<Answer> {
        let asked = text.and_then(|t| serde_json::from_str::<Asked>(&t).ok());
        let Asked { grant, now } = match asked {
            Some(a) => a,
            None => Asked {
                grant: SharedGrant::Unavailable {
                    reason: error.unwrap_or_else(|| "no answer from the shared limiter".into()),
                },
                now: self.now(env)?,
            },
        };
        let note = self.coord.as_ref().and_then(|c| c.degraded_note());
        Ok(Answer::Shared {
            grant,
            asked_at: now,
            note,
        })
    }

    /// Passes the Retry-After pause now in force on `method` (for `channel_id`) to the
    /// other workers, in the background.
    pub(super) fn share_pause(&self, env: &Env, method: &str, channel_id: &str) -> Result<()> {
        let Some(coord) = self.coord.clone() else {
            return Ok(());
        };
        let now = self.now(env)?;
        let Some((workspace, until)) = self.core(env)?.pause_of(method, channel_id, now) else {
            return Ok(());
        };
        let method = method.to_string();
        env.spawn_future(async move {
            // A failure is recorded in the coordinator's health; the pause holds locally.
            let _ = coord.pause(&workspace, &method, until, now).await;
            Ok(())
        })
        .map(drop)
    }
}
