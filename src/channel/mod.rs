//! The channel wing: `ChannelStore`, the state of a chat channel kept from events and
//! fetched pages (Slack, Discord, Telegram), its rate limits and Redis coordination,
//! fetching as steps, the scoped tools over it, and saving it to SQLite.

pub mod coord;
pub mod discord;
pub mod fetch_run;
pub mod message;
pub mod persist;
pub mod ratelimit;
pub mod slack;
pub mod store;
pub mod telegram;
pub mod thread_block;
pub mod tools;
