//! `@openclaw/context-engine`: the context a Claude agent gets when it answers in a chat
//! channel, assembled deterministically within a token budget.
//!
//! Three wings over one core (see ARCHITECTURE.md): [`core`] (text, time, tokens, input
//! checks, keys, the SQLite file, search, the context documents), then [`channel`] (the
//! `ChannelStore`), [`memory`] (the conversation memory) and [`dropin`] (the runner's
//! modules). A wing imports the core and never another wing; `tests/layout.rs` holds it.
//!
//! The domain modules are plain Rust over serde types. A struct that crosses to
//! JavaScript carries a typings-only `#[napi(object, object_to_js = false,
//! object_from_js = false)]`, so its TypeScript shape is declared where it is read and
//! written; only `bindings` converts values and defines exports.

pub mod channel;
pub mod core;
pub mod dropin;
pub mod memory;

// Under `cargo test` napi registers nothing, so the exports look unused there.
#[cfg_attr(test, allow(dead_code))]
mod bindings;
