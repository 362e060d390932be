//! `@openclaw/context-engine`: the context a Claude agent gets when it answers in a chat
//! channel, assembled deterministically within a token budget.
//!
//! The domain modules are plain Rust over serde types. A struct that crosses to
//! JavaScript carries a typings-only `#[napi(object, object_to_js = false,
//! object_from_js = false)]`, so its TypeScript shape is declared where it is read and
//! written; only [`bindings`] converts values and defines exports (see ARCHITECTURE.md).

pub mod budget;
pub mod cache;
pub mod compact;
pub mod coord;
pub mod discord;
pub mod dropin;
pub mod fetch_run;
pub mod input;
pub mod manifest;
pub mod memory;
pub mod model;
pub mod packed_text;
pub mod persist;
pub mod prompt;
pub mod ratelimit;
pub mod runtime;
pub mod search;
pub mod sha256;
pub mod short_str;
pub mod slack;
pub mod snapshot;
pub mod sorted_deque;
pub mod spare;
pub mod store;
pub mod telegram;
pub mod text;
pub mod thread;
pub mod thread_block;
pub mod time;
pub mod tokens;
pub mod tools;

// Under `cargo test` napi registers nothing, so the exports look unused there.
#[cfg_attr(test, allow(dead_code))]
mod bindings;
