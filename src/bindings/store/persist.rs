//! Waiting for a saved store's writer off the JS thread: what `flush()` and `close()`
//! resolve with, and the code of each saving fault.

use crate::bindings::errors::coded_error_value;
use crate::persist::{Flush, PersistError, PersistStats, Waiter};
use napi::bindgen_prelude::*;
use napi::Env;

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
