//! Runtime hardening for a Claude SDK runner: thread-context stripping on
//! resumed turns, media attachment planning, turn integrity (orphan repair, stale-resume
//! recovery), the overflow retry policy, the SDK event adapter and the metrics they feed.
//!
//! Every decision is a pure function of its inputs; [`guard::Guard`] keeps the
//! state between calls (file ids, attempt signals) and counts what the decisions did.

pub mod error;
pub mod events;
pub mod guard;
pub mod integrity;
pub mod media;
pub mod metrics;
pub mod overflow;
pub mod strip;
