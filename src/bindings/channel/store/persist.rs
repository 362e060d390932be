//! A saved store's `flush()` and `close()`: waiting for the writer off the JS thread,
//! what they resolve with, and the code of each saving fault.

use super::JsChannelStore;
use crate::bindings::errors::coded_error_value;
use crate::channel::persist::{Flush, PersistError, Waiter};
use crate::channel::store::stats::PersistStats;
use napi::bindgen_prelude::*;
use napi::Env;
use napi_derive::napi;

/// Waits off the JS thread for the writer: `flush()` and `close()`. `None`: a store in
/// memory only.
pub struct PersistWait {
    wait: Option<std::result::Result<(Waiter, Flush), PersistError>>,
    close: bool,
    /// Why the wait failed, for `reject` to code.
    failed: Option<PersistError>,
}

impl PersistWait {
    pub(super) fn new(
        wait: Option<std::result::Result<(Waiter, Flush), PersistError>>,
        close: bool,
    ) -> Self {
        PersistWait {
            wait,
            close,
            failed: None,
        }
    }

    fn name(&self) -> &'static str {
        if self.close {
            "ChannelStore.close"
        } else {
            "ChannelStore.flush"
        }
    }
}

/// The code of a saving fault.
pub(super) fn persist_code(e: &PersistError) -> &'static str {
    match e {
        PersistError::Open(_) | PersistError::Write(_) => "ERR_PERSIST_STORAGE",
        PersistError::Timeout { .. } => "ERR_PERSIST_TIMEOUT",
        PersistError::Closed => "ERR_PERSIST_CLOSED",
    }
}

impl Task for PersistWait {
    type Output = Option<PersistStats>;
    type JsValue = Option<PersistStats>;

    fn compute(&mut self) -> Result<Self::Output> {
        let done = match self.wait.take() {
            None => return Ok(None),
            Some(Err(e)) => Err(e),
            Some(Ok((waiter, flush))) if self.close => waiter.wait_closed(flush),
            Some(Ok((waiter, flush))) => waiter.wait(flush),
        };
        done.map(Some).map_err(|e| {
            let err = Error::from_reason(format!("{}: {e}", self.name()));
            self.failed = Some(e);
            err
        })
    }

    fn resolve(&mut self, _env: Env, output: Self::Output) -> Result<Self::JsValue> {
        Ok(output)
    }

    fn reject(&mut self, env: Env, err: Error) -> Result<Self::JsValue> {
        match self.failed.take() {
            Some(e) => Err(coded_error_value(
                &env,
                self.name(),
                persist_code(&e),
                &e.to_string(),
            )),
            None => Err(err),
        }
    }
}

#[napi]
impl JsChannelStore {
    /// With `options.persist`: queues every change not yet written and resolves, with
    /// the writer's counters, once they are committed to the file (what a process killed
    /// after that finds on restart). Rejects when a change since the previous flush
    /// could not be written (`code` `ERR_PERSIST_STORAGE`), after `persist.flushTimeoutMs`
    /// (`ERR_PERSIST_TIMEOUT`), or once closed (`ERR_PERSIST_CLOSED`). Resolves null for
    /// a store in memory only.
    #[napi(catch_unwind, ts_return_type = "Promise<PersistStats | null>")]
    pub fn flush(&self, env: &Env) -> Result<AsyncTask<PersistWait>> {
        let wait = match &self.persist {
            Some(p) => Some(p.flush_from(&mut *self.core(env)?).map(|f| (p.waiter(), f))),
            None => None,
        };
        Ok(AsyncTask::new(PersistWait::new(wait, false)))
    }

    /// With `options.persist`: writes every change not yet written, moves the
    /// write-ahead log into the database file and stops the writer thread, resolving once
    /// it has: from then on the `.sqlite` file alone (a copy, a backup) holds the saved
    /// state. The store stays usable in memory, and later changes are not saved. Calling
    /// it again resolves at once. Rejects as `flush()` does. Resolves null for a store in
    /// memory only.
    #[napi(catch_unwind, ts_return_type = "Promise<PersistStats | null>")]
    pub fn close(&self, env: &Env) -> Result<AsyncTask<PersistWait>> {
        let wait = match &self.persist {
            Some(p) if p.stats().closed => Some(Ok((p.waiter(), p.flush_to_here()))),
            Some(p) => Some(p.close_from(&mut *self.core(env)?).map(|f| (p.waiter(), f))),
            None => None,
        };
        Ok(AsyncTask::new(PersistWait::new(wait, true)))
    }

    /// Internal (a timer in `js/channel/store.js`): queues changes that a full queue held back.
    #[napi(catch_unwind, js_name = "_persistTick", skip_typescript)]
    pub fn persist_tick(&self, env: &Env) -> Result<()> {
        self.core(env).map(drop)
    }
}
