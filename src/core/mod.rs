//! The core every wing stands on: text (estimates, cuts, escaping), time, the token
//! estimator, input checks and the packed text forms, ids and thread keys, caches, the
//! SQLite file, search and its BM25, the tool-call shape, and the context documents
//! (the snapshot and thread models, their budgets and their two renderings, JSON for the
//! prompt and compact text). Nothing here imports a wing.

pub mod budget;
pub mod cache;
pub mod compact;
pub mod db;
pub mod input;
pub mod keys;
pub mod model;
pub mod packed_text;
pub mod pg;
pub mod prompt;
pub mod search;
pub mod sha256;
pub mod short_str;
pub mod snapshot;
pub mod sorted_deque;
pub mod spare;
pub mod text;
pub mod thread;
pub mod time;
pub mod tokens;
pub mod tool;
pub mod url;
