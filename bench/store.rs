//! The store's hot paths timed in Rust, without the napi boundary: `ChannelStore::apply` (ingest)
//! and `ChannelStore::build` / `ChannelStore::plan` on a warm store (1,000 channel messages, a
//! 200-reply thread, 50 adjacent). For profiling (`perf record cargo bench --bench
//! store`); the figures users see come from `bench/channel-store.js`, through the addon.
//!
//! ```sh
//! cargo bench --bench store
//! ```

use context_engine::channel::message::{Event, StoredMessage};
use context_engine::channel::store::request::ContextRequest;
use context_engine::channel::store::{ChannelStore, StoreConfig};
use context_engine::core::model::Author;
use std::time::{Duration, Instant};

const CHANNEL: &str = "C1";
/// 2026-04-10T15:40:00Z in ms.
const T0: u64 = 1_775_835_600_000;
const WORDS: [&str; 8] = [
    "deploy",
    "rollout",
    "canary",
    "latency",
    "p99",
    "checkout",
    "service",
    "migration",
];

fn ts(sec: u64) -> String {
    format!("{}.000100", T0 / 1000 + sec)
}

/// About 200 bytes of chat-like text, different per `i`.
fn text(i: u64) -> String {
    let mut t = String::new();
    let mut k = i;
    while t.len() < 200 {
        t.push_str(WORDS[(k % 8) as usize]);
        t.push(' ');
        k = k
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407)
            >> 3;
    }
    t
}

fn message(sec: u64, text: &str, thread: Option<u64>, user: u64) -> StoredMessage {
    let author = Author {
        user_id: format!("U{user}"),
        display_name: format!("user{user}"),
        is_bot: false,
    };
    let Some(mut m) = StoredMessage::new(&ts(sec), author, text) else {
        unreachable!("the bench's timestamps are well-formed")
    };
    m.thread_id = thread.map(|t| ts(t).into());
    m
}

fn post(store: &mut ChannelStore, channel: &str, m: StoredMessage) {
    let event = Event::Message {
        channel: channel.to_string(),
        workspace: None,
        message: Box::new(m),
    };
    store.apply(event, T0);
}

fn per_call(total: Duration, n: u32) -> Duration {
    total / n
}

fn bench_ingest() {
    let n = 100_000u32;
    let body = WORDS.join(" ").repeat(4);
    let mut store = ChannelStore::new(StoreConfig::default());
    let start = Instant::now();
    for k in 0..u64::from(n) {
        post(
            &mut store,
            &format!("C{}", k % 10),
            message(k, &body, None, k % 20),
        );
    }
    println!(
        "apply (ingest):  {:?} per message, {n} messages",
        per_call(start.elapsed(), n)
    );
}

fn bench_build() {
    let mut store = ChannelStore::new(StoreConfig::default());
    store.put_history(CHANNEL, Vec::new(), T0);
    for i in 0..1_000 {
        post(&mut store, CHANNEL, message(i, &text(i), None, i % 3));
    }
    for j in 0..200 {
        post(
            &mut store,
            CHANNEL,
            message(1_000 + j, &text(j), Some(900), j % 20),
        );
    }
    let mut req = ContextRequest::new(CHANNEL, &ts(1_199));
    req.adjacent = 50;
    let now = T0 + 1_000;
    let n = 2_000u32;
    let mut bytes = 0;
    let start = Instant::now();
    for _ in 0..n {
        match store.build(&req, &[], now) {
            Ok(b) => bytes += b.prompt.len(),
            Err(e) => panic!("the anchor is held: {e}"),
        }
    }
    println!(
        "build (warm):    {:?} per call, prompt {} bytes",
        per_call(start.elapsed(), n),
        bytes / n as usize
    );
    let start = Instant::now();
    for _ in 0..n {
        std::hint::black_box(store.plan(&req, &[], now));
    }
    println!(
        "plan (warm):     {:?} per call",
        per_call(start.elapsed(), n)
    );
}

fn main() {
    bench_ingest();
    bench_build();
}
