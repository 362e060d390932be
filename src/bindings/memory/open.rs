//! Opening a store on PostgreSQL (`MemoryStore.connect`'s worker thread calls it), and the
//! checked options both ways of opening take.

use super::{storage_error, JsMemoryStore};
use crate::bindings::errors::throw;
use crate::bindings::js::from_js_opt;
use crate::core::input::InputError;
use crate::memory::shapes::MemoryStoreOptions;
use crate::memory::store::MemoryStore;
use crate::memory::summary::CompactionPolicy;
use napi::bindgen_prelude::*;
use napi::Env;
use napi_derive::napi;
use std::cell::RefCell;

/// The options of a store, checked, with the compaction policy they give.
pub(super) fn store_options(
    env: &Env,
    func: &str,
    options: Option<Unknown>,
) -> Result<(MemoryStoreOptions, CompactionPolicy)> {
    let mut o: MemoryStoreOptions = from_js_opt(env, func, "options", options)?.unwrap_or_default();
    let policy =
        CompactionPolicy::try_from(o.compaction.take()).map_err(|e| throw(env, func, &e))?;
    if policy.keep_recent == 0 {
        return Err(throw(
            env,
            func,
            &InputError::range_error("options.compaction.keepRecent", "must be at least 1"),
        ));
    }
    o.pg().map_err(|e| throw(env, func, &e))?;
    Ok((o, policy))
}

#[napi]
impl JsMemoryStore {
    /// The store on the PostgreSQL database `options.url` names, connected and migrated
    /// before it returns: called on the worker thread of `MemoryStore.connect`, never on
    /// the main thread (it waits for the network).
    #[napi(factory, js_name = "_connectBlocking", skip_typescript, catch_unwind)]
    pub fn connect_blocking(env: Env, options: Unknown) -> Result<Self> {
        const F: &str = "MemoryStore.connect";
        let (o, policy) = store_options(&env, F, Some(options))?;
        let Some(pg) = o.pg().map_err(|e| throw(&env, F, &e))? else {
            return Err(throw(
                &env,
                F,
                &InputError::type_error("options.url", "expected a postgres:// URL"),
            ));
        };
        let store = MemoryStore::connect(&pg).map_err(|e| storage_error(&env, F, &e))?;
        Ok(JsMemoryStore {
            store: RefCell::new(Some(store)),
            policy,
        })
    }
}
