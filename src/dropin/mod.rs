//! The drop-in wing: what a Claude SDK runner calls in place of its own modules: the
//! structured context (snapshot, thread, the session's prompt section), the attachment
//! manifest, and the runtime hardening of its turns.

pub mod context;
pub mod manifest;
pub mod runtime;
pub mod session;
