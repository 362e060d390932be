//! The shared rate limiter (`options.redis`) in the fetch runtime: `_acquireShared` asks
//! Redis off the JS thread, `_sharedVerdict` turns its answer into call / wait / refuse
//! (in [`crate::store::fetch`]), and a Retry-After one worker is given is passed on to
//! the others.

use super::ChannelStore;
use crate::coord::{Coordinator, SharedGrant};
use crate::ratelimit::WINDOW_MS;
use napi::bindgen_prelude::*;
use napi::Env;
use napi_derive::napi;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The shared limiter's answer with the time it was asked at (the verdict is about that
/// moment), handed to JS and back as JSON.
#[derive(Serialize, Deserialize)]
struct Answer {
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
impl ChannelStore {
    /// Internal (fetch runtime): asks the shared limiter for a slot for `method` on behalf
    /// of `channelId`; resolves to its answer (JSON, handed back to `_sharedVerdict`), or
    /// null without `options.redis`.
    #[napi(catch_unwind, js_name = "_acquireShared", skip_typescript)]
    pub fn acquire_shared<'e>(
        &self,
        env: &'e Env,
        method: String,
        channel_id: String,
    ) -> Result<PromiseRaw<'e, Option<String>>> {
        let now = self.now(env)?;
        let Some(coord) = self.coord.clone() else {
            return env.spawn_future(async { Ok(None) });
        };
        let (workspace, limit) = {
            let core = self.core()?;
            (
                core.workspace_of(&channel_id),
                core.config().rate_limit.limit_for(&method),
            )
        };
        env.spawn_future(async move {
            let grant = coord
                .acquire(&workspace, &method, limit, WINDOW_MS, now)
                .await;
            serde_json::to_string(&Answer { grant, now })
                .map(Some)
                .map_err(|e| Error::from_reason(e.to_string()))
        })
    }

    /// Internal (fetch runtime): what to do with the shared limiter's `answer` after
    /// `waitedMs` of waiting: `{ wait }` (0: call now) or `{ refused }`.
    #[napi(catch_unwind, js_name = "_sharedVerdict", skip_typescript)]
    pub fn shared_verdict<'e>(
        &self,
        env: &'e Env,
        method: String,
        answer: String,
        waited_ms: f64,
    ) -> Result<Unknown<'e>> {
        let Answer { grant, now } = serde_json::from_str(&answer)
            .map_err(|e| Error::from_reason(format!("_sharedVerdict: {e}")))?;
        let note = self.coord.as_ref().and_then(|c| c.degraded_note());
        // A whole, non-negative number of milliseconds the runtime waited.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let waited = waited_ms.max(0.0) as u64;
        let slot = self
            .core()?
            .shared_verdict(&method, grant, waited, note, now);
        super::to_js(env, &slot)
    }

    /// Passes the Retry-After pause now in force on `method` (for `channel_id`) to the
    /// other workers, in the background.
    pub(super) fn share_pause(&self, env: &Env, method: &str, channel_id: &str) -> Result<()> {
        let Some(coord) = self.coord.clone() else {
            return Ok(());
        };
        let now = self.now(env)?;
        let Some((workspace, until)) = self.core()?.pause_of(method, channel_id, now) else {
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
