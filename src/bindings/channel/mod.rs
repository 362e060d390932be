//! Exports of the channel wing: `ChannelStore`, its tools, the Redis coordinator, the
//! Slack thread block.

mod coord;
mod store;
mod thread_block;
mod tools;
