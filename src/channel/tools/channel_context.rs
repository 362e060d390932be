//! `channel_context`: ranked search over what the store holds for one channel. No
//! platform calls: it searches the channel's window and held threads.

use super::input::ContextInput;
use crate::channel::message::StoredMessage;
use crate::channel::store::ChannelStore;
use crate::core::model::Author;
use crate::core::search::index::{Match, Query, SearchIndex, CUT_ROUNDING};
use crate::core::search::{max_boost, rank, Candidate, Ranked, Signals};
use crate::core::time::{iso_from_epoch, key_millis, ts_key, TsKey};
use serde::Serialize;

/// Newest messages considered when no keyword matches (ranked by recency and activity).
pub const FALLBACK_SCAN: usize = 500;
/// Longest `text` in a result, in characters; longer texts end in `…`.
pub const MAX_RESULT_TEXT_CHARS: usize = 2_000;

#[derive(Serialize)]
struct ThreadSummary {
    reply_count: u64,
    last_reply_ts: Option<String>,
    participant_names: Vec<String>,
}

#[derive(Serialize)]
struct ResultView<'a> {
    message_id: &'a str,
    thread_id: Option<&'a str>,
    ts: &'a str,
    author: &'a Author,
    text: String,
    thread_summary: Option<ThreadSummary>,
    relevance_signal: String,
}

#[derive(Serialize)]
struct Coverage {
    messages_scanned: u64,
    time_range: Option<[String; 2]>,
}

#[derive(Serialize)]
struct Output<'a> {
    results: Vec<ResultView<'a>>,
    coverage: Coverage,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    notes: Vec<String>,
}

/// ISO 8601 of a ts key, microsecond precision.
fn key_iso(k: TsKey) -> String {
    iso_from_epoch(k.0, &format!("{:06}", k.1 / 1_000))
}

fn fold(s: &str) -> String {
    let mut out = String::new();
    crate::core::search::tokenize::Tokenizer::new().terms(s, |_, w| {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(w);
    });
    out
}

/// Author indexes a name from the input refers to: a user id, a display name, or one
/// word of a display name (`Sam` for `Sam Reid`), case and accents aside; `@` and
/// Slack's `<@U123>` are accepted.
fn authors_named(index: &SearchIndex, name: &str) -> Vec<u32> {
    let raw = name.trim().trim_start_matches("<@").trim_end_matches('>');
    let raw = raw.trim_start_matches('@');
    let want = fold(raw);
    if want.is_empty() && raw.is_empty() {
        return Vec::new();
    }
    index.authors_where(|id, display| {
        if id.eq_ignore_ascii_case(raw) {
            return true;
        }
        let have = fold(display);
        !want.is_empty()
            && (have == want || (!want.contains(' ') && have.split(' ').any(|w| w == want)))
    })
}

/// Where a document's message is held.
fn held<'a>(
    store: &'a ChannelStore,
    channel: &str,
    key: TsKey,
    thread: Option<&str>,
) -> Option<&'a StoredMessage> {
    if let Some(t) = thread {
        let reply = store
            .held_replies(channel, t)
            .and_then(|e| e.replies.get(&key));
        if reply.is_some() {
            return reply;
        }
    }
    store.channel(channel)?.window.get(&key).map(|m| &**m)
}

/// The thread a message belongs to (a reply's thread, or the thread a root starts)
/// and its summary.
fn thread_of<'a>(
    store: &'a ChannelStore,
    channel: &str,
    m: &'a StoredMessage,
    now: u64,
) -> Option<(&'a str, ThreadSummary, u64)> {
    let (tid, root) = match m.thread_id.as_deref() {
        Some(t) => (t, store.find(channel, t)),
        None => (m.id(), Some(m)),
    };
    let summary = match root {
        Some(r) => {
            let a = store.activity(channel, r, now)?;
            let last_ms = a
                .last_reply_ts
                .as_deref()
                .and_then(ts_key)
                .map_or(0, key_millis);
            (
                ThreadSummary {
                    reply_count: a.reply_count,
                    last_reply_ts: a.last_reply_ts.as_deref().map(crate::core::time::to_iso),
                    participant_names: a.participant_names,
                },
                last_ms,
            )
        }
        None => {
            // A held reply whose root is not held: summarize what is held.
            let e = store.held_replies(channel, tid)?;
            let mut names: Vec<String> = Vec::new();
            for r in e.replies.values() {
                if !names.contains(&r.author.display_name) {
                    names.push(r.author.display_name.clone());
                }
            }
            let last = e.replies.values().next_back()?;
            (
                ThreadSummary {
                    reply_count: e.replies.len() as u64,
                    last_reply_ts: Some(last.iso_ts().to_string()),
                    participant_names: names,
                },
                key_millis(last.key),
            )
        }
    };
    Some((tid, summary.0, summary.1))
}

/// What the ranking needs to know of a message: its reactions and its thread's reply
/// count and newest activity (counts only; the names are looked up for the results).
fn signals(store: &ChannelStore, channel: &str, m: &StoredMessage) -> Signals {
    let own = key_millis(m.key);
    let reactions = m.reactions().iter().map(|r| r.count).sum();
    let thread = match m.thread_id.as_deref() {
        None => store
            .thread_stats(channel, m)
            .map(|t| (t.reply_count, t.latest.map_or(0, |(k, _)| key_millis(k)))),
        Some(t) => match store.find(channel, t) {
            Some(root) => store
                .thread_stats(channel, root)
                .map(|t| (t.reply_count, t.latest.map_or(0, |(k, _)| key_millis(k)))),
            // A held reply whose root is not held: what is held of its thread.
            None => store.held_replies(channel, t).and_then(|e| {
                let last = e.replies.keys().next_back()?;
                Some((e.replies.len() as u64, key_millis(*last)))
            }),
        },
    };
    let (replies, last) = thread.unwrap_or((0, 0));
    Signals {
        replies,
        last_activity_ms: own.max(last),
        reactions,
        is_reply: m.is_reply(),
    }
}

fn clip(text: &str) -> String {
    match text.char_indices().nth(MAX_RESULT_TEXT_CHARS) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_string(),
    }
}

/// The ranking candidates of keyword matches.
fn candidates_of(index: &SearchIndex, matches: &[Match], named: &[u32]) -> Vec<Candidate> {
    matches
        .iter()
        .filter_map(|m| {
            let d = index.doc(m.slot)?;
            Some(Candidate {
                slot: m.slot,
                key: d.key(),
                bm25: m.bm25,
                words: m.words,
                by_named_author: named.contains(&d.author),
            })
        })
        .collect()
}

/// The best `k` candidates, with the signals of the messages the store holds.
fn rank_held(
    store: &ChannelStore,
    channel: &str,
    candidates: Vec<Candidate>,
    reference: TsKey,
    k: usize,
) -> Vec<Ranked> {
    let Some(ch) = store.channel(channel) else {
        return Vec::new();
    };
    let index = &ch.index;
    rank(candidates, reference, k, |c| {
        let d = index.doc(c.slot)?;
        let m = held(store, channel, d.key(), index.thread_of(d))?;
        Some(signals(store, channel, m))
    })
}

/// The answer when the store holds nothing of the channel: no results, the notes.
fn nothing_held(notes: Vec<String>) -> String {
    out_json(&Output {
        results: Vec::new(),
        coverage: Coverage {
            messages_scanned: 0,
            time_range: None,
        },
        notes,
    })
}

/// Runs a `channel_context` search in `channel` at `now`; returns the result JSON.
pub fn run(store: &mut ChannelStore, channel: &str, input: &ContextInput, now: u64) -> String {
    let mut notes = Vec::new();
    let Some(index) = store.search_index_mut(channel) else {
        notes.push("No messages are held for this channel yet.".to_string());
        return nothing_held(notes);
    };
    let mut named: Vec<u32> = Vec::new();
    let mut matched_names: Vec<(String, Vec<u32>)> = Vec::new();
    for a in &input.authors {
        let ids = authors_named(index, a);
        if ids.is_empty() {
            notes.push(format!(
                "No author named {a:?} has messages held in this channel."
            ));
        }
        named.extend(&ids);
        matched_names.push((a.clone(), ids));
    }
    let query: Query = index.query(&input.intent);
    let (matches, kth) = index.score_with_cut(
        &query,
        input.since,
        Some((input.max_results, max_boost(!named.is_empty()))),
    );
    let mut fallback = false;
    let candidates: Vec<Candidate> = if matches.is_empty() {
        fallback = true;
        newest_candidates(index, input.since, &named)
    } else {
        candidates_of(index, &matches, &named)
    };
    if fallback {
        notes.push(fallback_note(&query));
    }
    let scanned = match input.since {
        None => index.len() as u64,
        Some(_) => index.keys_since(input.since).count() as u64,
    };
    let time_range = {
        let mut keys = index.keys_since(input.since);
        match (keys.next(), keys.next_back()) {
            (Some(a), Some(b)) => Some([key_iso(a.0), key_iso(b.0)]),
            (Some(a), None) => Some([key_iso(a.0), key_iso(a.0)]),
            _ => None,
        }
    };
    let reference = index
        .keys_since(None)
        .next_back()
        .map_or((0, 0), |(k, _)| k);
    let k = input.max_results;
    let mut ranked = rank_held(store, channel, candidates, reference, k);
    // The index cut is exact when the k-th score reaches the k-th bm25 it was made from,
    // less the room the cut left for rounding: every match it dropped scores below that
    // (see `SearchIndex::score_with_cut`). Otherwise rank every match. (A k-th match
    // without boost scores its bm25 unrounded, a rounding short of the f32 k-th.)
    let cut = kth.is_finite();
    let reached = kth * CUT_ROUNDING;
    if cut && (ranked.len() < k || ranked.last().is_some_and(|w| w.score < reached)) {
        if let Some(index) = store.search_index_mut(channel) {
            let (all, _) = index.score_with_cut(&query, input.since, None);
            let candidates = candidates_of(index, &all, &named);
            ranked = rank_held(store, channel, candidates, reference, k);
        }
    }
    let store: &ChannelStore = store;
    let Some(ch) = store.channel(channel) else {
        return nothing_held(notes);
    };
    let index = &ch.index;
    let mut results = Vec::with_capacity(ranked.len());
    for r in ranked {
        let Some(d) = index.doc(r.candidate.slot) else {
            continue;
        };
        let Some(m) = held(store, channel, d.key(), index.thread_of(d)) else {
            continue;
        };
        let signal = relevance_signal(&query, &r, &matched_names, d.author);
        let thread = thread_of(store, channel, m, now);
        results.push(ResultView {
            message_id: m.id(),
            thread_id: thread.as_ref().map(|t| t.0),
            ts: m.iso_ts(),
            author: &m.author,
            text: clip(&m.text.as_str()),
            thread_summary: thread.map(|t| t.1),
            relevance_signal: signal,
        });
    }
    out_json(&Output {
        results,
        coverage: Coverage {
            messages_scanned: scanned,
            time_range,
        },
        notes,
    })
}

/// The newest held messages since `since` (by the named authors, when any), for an
/// intent that matched nothing.
fn newest_candidates(index: &SearchIndex, since: Option<TsKey>, named: &[u32]) -> Vec<Candidate> {
    index
        .keys_since(since)
        .rev()
        .filter_map(|(_, slot)| index.doc(slot).map(|d| (slot, d)))
        .filter(|(_, d)| named.is_empty() || named.contains(&d.author))
        .take(FALLBACK_SCAN)
        .map(|(slot, d)| Candidate {
            slot,
            key: d.key(),
            bm25: 0.0,
            words: 0,
            by_named_author: named.contains(&d.author),
        })
        .collect()
}

/// The note saying the results are the newest messages, because the intent matched
/// nothing (or had no words to search by).
fn fallback_note(query: &Query) -> String {
    if query.words.is_empty() {
        "The intent has no searchable words; these are the channel's most recent and active messages.".to_string()
    } else {
        format!(
            "No held message matches {}; these are the channel's most recent and active messages.",
            query
                .words
                .iter()
                .map(|w| format!("{:?}", w.word))
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}

/// Why a result was chosen: the query's words it has, the named author it is by, or its
/// recent activity (also when nothing else says).
fn relevance_signal(
    query: &Query,
    r: &Ranked,
    matched_names: &[(String, Vec<u32>)],
    author: u32,
) -> String {
    let mut parts: Vec<String> = Vec::new();
    let words: Vec<&str> = query
        .words
        .iter()
        .enumerate()
        .filter(|(i, _)| r.candidate.words & (1 << i) != 0)
        .map(|(_, w)| w.word.as_str())
        .collect();
    if !words.is_empty() {
        parts.push(format!("keyword:{}", words.join(",")));
    }
    for (name, ids) in matched_names {
        if ids.contains(&author) {
            parts.push(format!("author:{name}"));
            break;
        }
    }
    if r.recent_activity || parts.is_empty() {
        parts.push("recent_activity".to_string());
    }
    parts.join("; ")
}

fn out_json(o: &Output<'_>) -> String {
    serde_json::to_string(o).unwrap_or_else(|e| {
        format!(
            "{{\"error\":{{\"code\":\"internal\",\"message\":{:?}}}}}",
            e.to_string()
        )
    })
}
