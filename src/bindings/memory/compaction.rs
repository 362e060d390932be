//! `MemoryStore`'s compaction: the plan of a lane that is due (for a caller's own
//! summarizer), the summary handed back (under a fence when a lock was taken), and the
//! whole compaction in one call.

use super::{lane_args, now_or, JsMemoryStore};
use crate::bindings::errors::throw;
use crate::bindings::js::{from_js, from_js_opt, to_js};
use crate::core::input::{whole_number, InputError};
use crate::memory::db::MemoryError;
use crate::memory::shapes::{
    trigger_of, ApplyCompactionOptions, CompactOptions, CompactionPlanView, CompactionResult,
};
use crate::memory::store::{CompactionPlan, MemoryStore, PlannedCompaction};
use crate::memory::summary::CompactionPolicy;
use napi::bindgen_prelude::*;
use napi::Env;
use napi_derive::napi;

/// What a `planCompaction` / `compact` call asks: the lane, the time, `force`, and the
/// fold point `through`.
struct Asked {
    session: String,
    lane: String,
    now: i64,
    force: bool,
    through: Option<String>,
}

fn args(
    env: &Env,
    func: &str,
    session_id: &Unknown,
    thread_key: &Unknown,
    options: Option<Unknown>,
) -> Result<Asked> {
    let (session, lane) = lane_args(env, func, session_id, thread_key)?;
    let o: CompactOptions = from_js_opt(env, func, "options", options)?.unwrap_or_default();
    let now = now_or(env, func, "options.now", o.now)?;
    Ok(Asked {
        session,
        lane,
        now,
        force: o.force.unwrap_or(false),
        through: o.through,
    })
}

impl Asked {
    /// The plan of this call: to its fold point when it names one, else as the policy
    /// (and `force`) decide.
    fn plan(
        &self,
        s: &MemoryStore,
        policy: &CompactionPolicy,
    ) -> std::result::Result<Option<CompactionPlan>, MemoryError> {
        match &self.through {
            Some(id) => s.plan_through(&self.session, &self.lane, id),
            None => s.plan_compaction(&self.session, &self.lane, policy, self.now, self.force),
        }
    }
}

#[napi]
impl JsMemoryStore {
    /// Decides whether a lane is due for compaction (a threshold passed and at least
    /// `minFold` messages to fold; or, with `force`, anything beyond the kept messages)
    /// and returns the plan, writing nothing: for a
    /// caller's own summarizer, which then hands the new summary to `applyCompaction`.
    /// `null` when nothing is due.
    #[napi(
        catch_unwind,
        ts_args_type = "sessionId: string, threadKey: string, options?: CompactOptions",
        ts_return_type = "CompactionPlanView | null"
    )]
    pub fn plan_compaction<'e>(
        &self,
        env: &'e Env,
        session_id: Unknown<'e>,
        thread_key: Unknown<'e>,
        options: Option<Unknown<'e>>,
    ) -> Result<Unknown<'e>> {
        const F: &str = "MemoryStore.planCompaction";
        let asked = args(env, F, &session_id, &thread_key, options)?;
        let policy = self.policy;
        let plan = self.with(env, F, |s| asked.plan(s, &policy))?;
        to_js(env, &plan.as_ref().map(CompactionPlanView::from))
    }

    /// Writes a planned compaction: `summary` when it is a valid five-section summary,
    /// else the extractive summarizer's (the result says which, and why). Throws
    /// `ERR_MEMORY_STALE` when the lane's summary changed since the plan was made, and
    /// `ERR_MEMORY_FENCED` when `fence` is older than the summary's (see its option).
    #[napi(
        catch_unwind,
        ts_args_type = "plan: CompactionPlanView, options?: ApplyCompactionOptions",
        ts_return_type = "CompactionResult"
    )]
    pub fn apply_compaction<'e>(
        &self,
        env: &'e Env,
        plan: Unknown<'e>,
        options: Option<Unknown<'e>>,
    ) -> Result<Unknown<'e>> {
        const F: &str = "MemoryStore.applyCompaction";
        let p: CompactionPlanView = from_js(env, F, "plan", plan)?;
        let o: ApplyCompactionOptions =
            from_js_opt(env, F, "options", options)?.unwrap_or_default();
        let now = now_or(env, F, "options.now", o.now)?;
        let version = whole_number(p.previous_version, "plan.previousVersion", "version")
            .map_err(|e| throw(env, F, &e))?;
        let Some(last) = p.messages.last() else {
            return Err(throw(
                env,
                F,
                &InputError::type_error("plan.messages", "expected at least one message"),
            ));
        };
        let fence = o
            .fence
            .map(|f| whole_number(f, "options.fence", "fencing token"))
            .transpose()
            .map_err(|e| throw(env, F, &e))?
            .map(|f| i64::try_from(f).unwrap_or(i64::MAX));
        let planned = PlannedCompaction {
            session: &p.session_id,
            lane: &p.thread_key,
            version: i64::try_from(version).unwrap_or(i64::MAX),
            last_folded: &last.message_id,
            trigger: trigger_of(&p.trigger),
        };
        let done = self.with(env, F, |s| {
            s.apply_planned(&planned, o.summary.as_deref(), now, fence)
        })?;
        to_js(env, &CompactionResult::from(&done))
    }

    /// Compacts a lane with the extractive summarizer when it is due (or `force`d): all
    /// but the newest unsummarized messages (at most `keepRecent`, within half of
    /// `maxRecentTokens`) are folded into the thread summary, in steps of at least
    /// `minFold` messages, and its version goes up by one; the messages stay stored. `null` when
    /// nothing was due. A lane whose summary was written under a fencing token throws
    /// `ERR_MEMORY_FENCED`: compact it under its lock, with `applyCompaction`.
    #[napi(
        catch_unwind,
        ts_args_type = "sessionId: string, threadKey: string, options?: CompactOptions",
        ts_return_type = "CompactionResult | null"
    )]
    pub fn compact<'e>(
        &self,
        env: &'e Env,
        session_id: Unknown<'e>,
        thread_key: Unknown<'e>,
        options: Option<Unknown<'e>>,
    ) -> Result<Unknown<'e>> {
        const F: &str = "MemoryStore.compact";
        let asked = args(env, F, &session_id, &thread_key, options)?;
        let policy = self.policy;
        let done = self.with(env, F, |s| match asked.plan(s, &policy)? {
            Some(plan) => s.apply_compaction(&plan, None, asked.now, None).map(Some),
            None => Ok(None),
        })?;
        to_js(env, &done.as_ref().map(CompactionResult::from))
    }
}
