//! Conversation memory: every chat message kept verbatim in SQLite, organised by session
//! and thread key, with typed memory records (summaries, thread state, facts) and full-text
//! retrieval over them. The store is one SQLite file, or one PostgreSQL database several
//! gateway hosts share (`pg`), with the same behaviour.

pub mod assemble;
pub mod db;
pub mod history;
pub mod kept;
pub mod message;
pub mod passages;
pub mod pg;
pub mod postings;
pub mod record;
pub mod secrets;
pub mod shapes;
pub mod store;
pub mod summary;
pub mod tools;
pub mod transcript;
pub mod turn;
