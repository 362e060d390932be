use super::fetch::{Failure, Need};
use super::request::ContextRequest;
use super::*;
use crate::channel::message::{Event, StoredMessage};
use crate::core::model::Author;
use crate::core::time::ts_key;
use proptest::prelude::*;

const C: &str = "C1";
/// 2026-04-10T15:40:00Z in ms.
const T0: u64 = 1_775_835_600_000;

fn ts(sec_offset: u64) -> String {
    format!("{}.000100", T0 / 1000 + sec_offset)
}

fn msg(sec: u64, text: &str, thread: Option<u64>) -> StoredMessage {
    let author = Author {
        user_id: format!("U{}", sec % 3),
        display_name: format!("user{}", sec % 3),
        is_bot: false,
    };
    let mut m = StoredMessage::new(&ts(sec), author, text).unwrap_or_else(|| panic!("ts"));
    m.thread_id = thread.map(|t| ts(t).into());
    m
}

fn live(store: &mut ChannelStore, m: StoredMessage, now: u64) {
    store.apply(
        Event::Message {
            channel: C.into(),
            workspace: None,
            message: Box::new(m),
        },
        now,
    );
}

/// The fetch of thread `sec` in channel `C`.
fn thread_need(sec: u64) -> Need {
    Need::Thread {
        channel: C.into(),
        thread: ts(sec),
    }
}

/// The ids of the adjacent messages of a built snapshot, in order.
fn adjacent_ids(b: &build::Built) -> Vec<String> {
    b.snapshot()
        .unwrap_or_else(|| panic!("snapshot"))
        .adjacent
        .iter()
        .map(|m| m.message_id.clone())
        .collect()
}

fn held(store: &mut ChannelStore, id: &str) -> Vec<StoredMessage> {
    let mut out = Vec::new();
    store.for_each_copy(C, id, |m| out.push(m.clone()));
    out
}

#[test]
fn a_forgotten_deletion_cannot_bring_its_message_back() {
    let mut s = ChannelStore::new(StoreConfig::default());
    let n = DELETED_REMEMBERED as u64 + 5;
    for sec in 0..n {
        s.apply(
            Event::Delete {
                channel: C.into(),
                message_id: ts(sec),
            },
            T0 + 3_600_000,
        );
    }
    // The first five deletions are forgotten; the horizon covers them.
    let ch = s.channels.get(C).unwrap_or_else(|| panic!("channel"));
    assert!(!ch.was_deleted(&ts(0)));
    assert_eq!(ch.deleted_horizon(), ts_key(&ts(4)));
    // A later fetch that still includes one of them does not restore it, nor any
    // unknown message from before the horizon; newer messages and held ones are kept.
    live(&mut s, msg(2, "held before the horizon", None), T0);
    s.put_history(
        C,
        vec![
            msg(0, "deleted long ago", None),
            msg(1, "unknown, before the horizon", None),
            msg(2, "held before the horizon", None),
            msg(n + 10, "new", None),
        ],
        T0 + 3_600_000,
    );
    assert!(held(&mut s, &ts(0)).is_empty());
    assert!(held(&mut s, &ts(1)).is_empty());
    assert_eq!(held(&mut s, &ts(2)).len(), 1);
    assert_eq!(held(&mut s, &ts(n + 10)).len(), 1);
    // Remembered deletions stay bounded.
    assert_eq!(
        s.channels.get(C).map(|c| c.deleted_order.len()),
        Some(DELETED_REMEMBERED)
    );
}

#[test]
fn a_deletion_of_a_message_never_seen_is_bounded_by_its_time() {
    let mut s = ChannelStore::new(StoreConfig::default());
    for i in 0..=DELETED_REMEMBERED {
        s.apply(
            Event::Delete {
                channel: C.into(),
                message_id: format!("not-a-ts-{i}"),
            },
            T0,
        );
    }
    // The forgotten one had no ts: the deletion's own time bounds it.
    let h = s
        .channels
        .get(C)
        .and_then(super::ChannelState::deleted_horizon);
    assert_eq!(h, Some(((T0 / 1000) as i64, u32::MAX)));
    s.put_history(
        C,
        vec![msg(0, "posted at T0", None), msg(1, "after", None)],
        T0,
    );
    assert!(held(&mut s, &ts(0)).is_empty());
    assert_eq!(held(&mut s, &ts(1)).len(), 1);
}

fn req(anchor: &str) -> ContextRequest {
    let mut r = ContextRequest::new(C, anchor);
    r.adjacent = 5;
    r
}

/// A store whose channel history is loaded (no history fetch wanted).
fn warm() -> ChannelStore {
    let mut s = ChannelStore::new(StoreConfig::default());
    s.put_history(C, Vec::new(), T0);
    s
}

/// Thread 1 fetched whole, as one page: `root` and replies 2 ("a") and 3 ("b").
fn put_whole_thread(s: &mut ChannelStore, root: StoredMessage) {
    let page = vec![root, msg(2, "a", Some(1)), msg(3, "b", Some(1))];
    s.put_thread_page(C, &ts(1), page, true, true, T0);
}

/// A warm store holding a thread root, message 1.
fn warm_with_root() -> ChannelStore {
    let mut s = warm();
    live(&mut s, msg(1, "root", None), T0);
    s
}

#[test]
fn defaults_are_the_seeds_numbers() {
    let c = StoreConfig::default();
    assert_eq!(c.window_size, 1_000);
    assert_eq!(c.replies_max, 500);
    assert_eq!(c.replies_ttl_ms, 300_000);
    assert_eq!(c.starters_max, 2_000);
    assert_eq!(c.starters_ttl_ms, 21_600_000);
    assert_eq!(c.media_max_size, 50 * 1024 * 1024);
    assert_eq!(c.rate_limit.calls_per_min, 40);
}

#[test]
fn window_keeps_the_newest_messages_in_ts_order() {
    let mut s = ChannelStore::new(StoreConfig {
        window_size: 3,
        ..StoreConfig::default()
    });
    for i in [5, 1, 4, 2, 3] {
        live(&mut s, msg(i, "x", None), T0);
    }
    let ids: Vec<String> = s.channels[C]
        .window
        .iter()
        .map(|m| m.id().to_string())
        .collect();
    assert_eq!(ids, vec![ts(3), ts(4), ts(5)]);
    assert!(s.channels[C].get(&ts(1)).is_none());
}

#[test]
fn a_new_thread_is_held_complete_from_its_first_reply_and_needs_no_fetch() {
    let mut s = warm_with_root();
    live(&mut s, msg(2, "r1", Some(1)), T0 + 1_000);
    live(&mut s, msg(3, "r2", Some(1)), T0 + 2_000);
    assert!(s.plan(&req(&ts(3)), &[], T0 + 3_000).is_empty());
    let b = s
        .build(&req(&ts(3)), &[], T0 + 3_000)
        .unwrap_or_else(|e| panic!("{e}"));
    let t = b.thread().unwrap_or_else(|| panic!("thread"));
    assert_eq!(t.thread_id, ts(1));
    assert_eq!(t.truncation.total_replies, 2);
    assert_eq!(
        s.channels[C].get(&ts(1)).map(StoredMessage::reply_count),
        Some(2)
    );
}

#[test]
fn replies_cache_entry_is_fresh_until_exactly_five_minutes_then_refetched() {
    let mut s = warm_with_root();
    live(&mut s, msg(2, "r1", Some(1)), T0);
    let thread_need = thread_need(1);
    assert!(s.plan(&req(&ts(2)), &[], T0 + 299_999).is_empty());
    assert_eq!(s.plan(&req(&ts(2)), &[], T0 + 300_000), vec![thread_need]);
}

#[test]
fn a_reply_to_a_thread_the_store_does_not_hold_asks_for_a_fetch() {
    let mut s = warm();
    let mut root = msg(1, "root", None);
    root.extras_mut().reply_count = 7; // known from history: replies exist that the store never saw
    s.put_history(C, vec![root], T0);
    live(&mut s, msg(9, "late reply", Some(1)), T0);
    assert_eq!(s.plan(&req(&ts(1)), &[], T0), vec![thread_need(1)]);
    assert_eq!(
        s.channels[C].get(&ts(1)).map(StoredMessage::reply_count),
        Some(8)
    );
}

#[test]
fn a_fetched_thread_keeps_replies_that_arrived_by_event_after_the_page() {
    let mut s = warm_with_root();
    live(&mut s, msg(5, "by event", Some(1)), T0);
    let mut root = msg(1, "root", None);
    root.extras_mut().reply_count = 2;
    put_whole_thread(&mut s, root);
    let e = s
        .threads
        .replies(C, &ts(1))
        .unwrap_or_else(|| panic!("entry"));
    let texts: Vec<String> = e
        .value
        .replies
        .values()
        .map(|m| m.text.as_str().into_owned())
        .collect();
    assert_eq!(texts, vec!["a", "b", "by event"]);
    assert!(e.value.complete);
}

#[test]
fn an_edit_changes_every_held_copy() {
    let mut s = warm();
    let mut root = msg(1, "root", None);
    root.extras_mut().reply_count = 1;
    s.put_thread_page(
        C,
        &ts(1),
        vec![root.clone(), msg(2, "r", Some(1))],
        true,
        true,
        T0,
    );
    live(&mut s, root, T0);
    s.apply(
        Event::Edit {
            channel: C.into(),
            message_id: ts(1),
            text: "root v2".into(),
            edited: true,
        },
        T0,
    );
    let copies = held(&mut s, &ts(1));
    assert_eq!(copies.len(), 2, "window and starter cache");
    assert!(copies.iter().all(|m| m.text == *"root v2" && m.edited));
    s.apply(
        Event::Edit {
            channel: C.into(),
            message_id: ts(2),
            text: "r v2".into(),
            edited: true,
        },
        T0,
    );
    assert_eq!(held(&mut s, &ts(2))[0].text.as_str(), "r v2");
}

#[test]
fn a_deletion_removes_every_copy_and_a_late_fetch_cannot_bring_it_back() {
    let mut s = warm();
    let mut root = msg(1, "root", None);
    root.extras_mut().reply_count = 2;
    live(&mut s, root.clone(), T0);
    s.put_thread_page(
        C,
        &ts(1),
        vec![root.clone(), msg(2, "a", Some(1)), msg(3, "b", Some(1))],
        true,
        true,
        T0,
    );
    s.apply(
        Event::Delete {
            channel: C.into(),
            message_id: ts(2),
        },
        T0,
    );
    assert!(held(&mut s, &ts(2)).is_empty());
    assert_eq!(
        s.channels[C].get(&ts(1)).map(StoredMessage::reply_count),
        Some(1)
    );
    // A fetch that started before the deletion returns the old thread.
    put_whole_thread(&mut s, root);
    assert!(held(&mut s, &ts(2)).is_empty());
    let b = s
        .build(&req(&ts(3)), &[], T0)
        .unwrap_or_else(|e| panic!("{e}"));
    let t = b.thread().unwrap_or_else(|| panic!("thread"));
    assert!(t.replies.iter().all(|r| r.message_id != ts(2)));
    // Deleting the root keeps the thread's replies; the first of them roots it.
    s.apply(
        Event::Delete {
            channel: C.into(),
            message_id: ts(1),
        },
        T0,
    );
    assert!(held(&mut s, &ts(1)).is_empty());
    assert!(s
        .threads
        .replies(C, &ts(1))
        .is_some_and(|e| e.value.rootless && !e.value.replies.is_empty()));
    let b = s
        .build(&req(&ts(3)), &[], T0)
        .unwrap_or_else(|e| panic!("{e}"));
    let t = b.thread().unwrap_or_else(|| panic!("thread"));
    assert_ne!(t.root.message_id, ts(1));
    assert!(b
        .notes
        .iter()
        .any(|n| n.contains("root message was deleted")));
}

#[test]
fn reactions_are_counted_per_user_and_removed_at_zero() {
    let mut s = warm();
    live(&mut s, msg(1, "x", None), T0);
    let react = |s: &mut ChannelStore, user: &str, added: bool| {
        s.apply(
            Event::Reaction {
                channel: C.into(),
                message_id: ts(1),
                name: "eyes".into(),
                user: Some(user.into()),
                added,
            },
            T0,
        );
    };
    react(&mut s, "U1", true);
    react(&mut s, "U1", true); // a repeat changes nothing
    react(&mut s, "U2", true);
    assert_eq!(held(&mut s, &ts(1))[0].reactions()[0].count, 2);
    react(&mut s, "U1", false);
    react(&mut s, "U2", false);
    assert!(held(&mut s, &ts(1))[0].reactions().is_empty());
}

#[test]
fn activity_counts_held_replies_in_the_last_hour_and_names_repliers() {
    let mut s = warm();
    live(&mut s, msg(0, "root", None), T0);
    live(&mut s, msg(1, "a", Some(0)), T0);
    live(&mut s, msg(2, "b", Some(0)), T0);
    live(&mut s, msg(4, "c", Some(0)), T0);
    let root = s.channels[C]
        .get(&ts(0))
        .cloned()
        .unwrap_or_else(|| panic!("root"));
    // The reply at +2s is exactly one hour old at T0 + 2s + 1h.
    let a = s
        .activity(C, &root, T0 + 2_000 + 3_600_000)
        .unwrap_or_else(|| panic!("activity"));
    assert_eq!(a.reply_count, 3);
    assert_eq!(a.replies_last_1h, 2);
    assert_eq!(a.last_reply_ts, Some(ts(4)));
    assert_eq!(a.participant_names, vec!["user1", "user2"]);
    let a = s
        .activity(C, &root, T0 + 2_001 + 3_600_000)
        .unwrap_or_else(|| panic!("activity"));
    assert_eq!(a.replies_last_1h, 1);
}

#[test]
fn adjacent_messages_are_the_nearest_with_earlier_winning_ties() {
    let mut s = warm();
    for i in 1..=9 {
        live(&mut s, msg(i, "x", None), T0);
    }
    let mut r = req(&ts(5));
    r.adjacent = 3;
    let b = s.build(&r, &[], T0).unwrap_or_else(|e| panic!("{e}"));
    let ids = adjacent_ids(&b);
    assert_eq!(ids, vec![ts(3), ts(4), ts(6)]);
    r.anchor_id = ts(9);
    let b = s.build(&r, &[], T0).unwrap_or_else(|e| panic!("{e}"));
    let ids = adjacent_ids(&b);
    assert_eq!(ids, vec![ts(6), ts(7), ts(8)]);
}

#[test]
fn a_failed_fetch_serves_the_expired_thread_stale_within_the_stale_limit_then_nothing() {
    let mut s = warm_with_root();
    live(&mut s, msg(2, "r", Some(1)), T0);
    let failed = [Failure {
        need: thread_need(1),
        reason: "conversations.replies failed: ratelimited".into(),
    }];
    let now = T0 + 600_000;
    assert!(s.plan(&req(&ts(1)), &failed, now).is_empty());
    let b = s
        .build(&req(&ts(1)), &failed, now)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(b.stale);
    assert!(b.thread().is_some());
    assert_eq!(b.notes.len(), 2, "{:?}", b.notes);
    assert_eq!(s.counters.stale_serves, 1);
    let late = T0 + 3_600_001;
    let b = s
        .build(&req(&ts(1)), &failed, late)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(b.thread().is_none());
    assert!(!b.stale);
}

#[test]
fn an_unknown_anchor_asks_for_history_first_then_the_message() {
    let mut s = ChannelStore::new(StoreConfig::default());
    let r = req("1775835999.000100");
    let history = Need::History { channel: C.into() };
    assert_eq!(s.plan(&r, &[], T0), vec![history.clone()]);
    let failed = [Failure {
        need: history,
        reason: "x".into(),
    }];
    assert_eq!(
        s.plan(&r, &failed, T0),
        vec![Need::Messages {
            channel: C.into(),
            ids: vec!["1775835999.000100".into()]
        }]
    );
    assert!(s.build(&r, &failed, T0).is_err());
}

#[test]
fn media_over_the_bound_is_never_cached() {
    let mut s = ChannelStore::new(StoreConfig {
        media_max_size: 10,
        ..StoreConfig::default()
    });
    let item = |id: &str, n: usize| CachedMedia {
        channel: C.into(),
        artifact_id: id.into(),
        media_type: "image/png".into(),
        filename: None,
        bytes: vec![0; n],
        content_hash: String::new(),
        fetched_at: T0,
    };
    assert!(!s.put_media(item("big", 11)));
    assert!(s.put_media(item("a", 6)));
    assert!(s.put_media(item("b", 6)));
    assert_eq!(s.media.size(), 6);
    assert_eq!(s.media.counters.evictions, 1);
}

/// One random operation on the store.
#[derive(Debug, Clone)]
enum Op {
    Post { sec: u64, reply_to: Option<u64> },
    Edit { sec: u64 },
    Delete { sec: u64 },
    FetchThread { root: u64, replies: Vec<u64> },
    Advance { ms: u64 },
    Build { sec: u64 },
    Media { id: u8, size: usize },
    Call { method: u8 },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0u64..40, proptest::option::of(0u64..40)).prop_map(|(sec, reply_to)| Op::Post { sec, reply_to }),
        1 => (0u64..40).prop_map(|sec| Op::Edit { sec }),
        2 => (0u64..40).prop_map(|sec| Op::Delete { sec }),
        1 => (0u64..40, proptest::collection::vec(0u64..40, 0..6)).prop_map(|(root, replies)| Op::FetchThread { root, replies }),
        1 => (0u64..200_000).prop_map(|ms| Op::Advance { ms }),
        2 => (0u64..40).prop_map(|sec| Op::Build { sec }),
        1 => (0u8..12, 0usize..60).prop_map(|(id, size)| Op::Media { id, size }),
        2 => (0u8..2).prop_map(|method| Op::Call { method }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// After every operation: no cache exceeds its entry or byte limit, no 60-second
    /// window holds more calls than the limit, and no deleted message can be found or
    /// built into a context.
    #[test]
    fn caches_stay_bounded_and_deleted_messages_never_return(ops in proptest::collection::vec(op(), 1..120)) {
        let mut s = ChannelStore::new(StoreConfig {
            window_size: 8,
            replies_max: 3,
            starters_max: 4,
            replies_ttl_ms: 100_000,
            media_max_size: 100,
            rate_limit: crate::channel::ratelimit::RateLimitConfig {
                calls_per_min: 3,
                ..Default::default()
            },
            ..StoreConfig::default()
        });
        let mut granted: Vec<(u8, u64)> = Vec::new();
        let mut now = T0;
        let mut deleted: Vec<String> = Vec::new();
        for op in ops {
            match op {
                Op::Post { sec, reply_to } => {
                    let reply_to = reply_to.filter(|r| *r < sec);
                    live(&mut s, msg(sec, "post", reply_to), now);
                }
                Op::Edit { sec } => s.apply(Event::Edit { channel: C.into(), message_id: ts(sec), text: "edited".into(), edited: true }, now),
                Op::Delete { sec } => {
                    s.apply(Event::Delete { channel: C.into(), message_id: ts(sec) }, now);
                    deleted.push(ts(sec));
                }
                Op::FetchThread { root, replies } => {
                    let mut page = vec![{ let mut r = msg(root, "root", None); r.extras_mut().reply_count = replies.len() as u64; r }];
                    page.extend(replies.iter().filter(|r| **r > root).map(|r| msg(*r, "fetched", Some(root))));
                    s.put_thread_page(C, &ts(root), page, true, true, now);
                }
                Op::Advance { ms } => now += ms,
                Op::Media { id, size } => {
                    s.put_media(CachedMedia {
                        channel: C.into(),
                        artifact_id: format!("F{id}"),
                        media_type: "image/png".into(),
                        filename: None,
                        bytes: vec![0; size],
                        content_hash: String::new(),
                        fetched_at: now,
                    });
                }
                Op::Call { method } => {
                    let name = ["conversations.replies", "conversations.history"][usize::from(method)];
                    match s.gate.acquire("T1", name, now) {
                        super::gate::Slot::Wait(ms) => granted.push((method, now + ms)),
                        super::gate::Slot::Refused(_) => {}
                    }
                }
                Op::Build { sec } => {
                    if let Ok(b) = s.build(&req(&ts(sec)), &[], now) {
                        let mut ids: Vec<String> = b.snapshot().unwrap_or_else(|| panic!("snapshot")).adjacent.iter().map(|m| m.message_id.clone()).collect();
                        ids.push(b.snapshot().unwrap_or_else(|| panic!("snapshot")).anchor.message_id.clone());
                        if let Some(t) = &b.thread() {
                            ids.push(t.root.message_id.clone());
                            ids.extend(t.replies.iter().map(|r| r.message_id.clone()));
                        }
                        for id in ids {
                            prop_assert!(!deleted.contains(&id), "deleted {} was built into a context", id);
                        }
                    }
                }
            }
            let (replies, starters) = s.threads.stats();
            prop_assert!(replies.size <= 3);
            prop_assert!(starters.size <= 4);
            prop_assert!(s.media.size() <= 100);
            for &(m, t) in &granted {
                let in_window = granted.iter().filter(|&&(m2, u)| m2 == m && u >= t && u < t + 60_000).count();
                prop_assert!(in_window <= 3, "{} calls in the minute from {}", in_window, t);
            }
            prop_assert!(s.channels.get(C).map_or(0, |c| c.window.len()) <= 8);
            for id in &deleted {
                prop_assert!(held(&mut s, id).is_empty(), "deleted {} is still held", id);
            }
            if let Err(e) = index_matches_held(&mut s) {
                prop_assert!(false, "{}", e);
            }
        }
    }
}

/// The search index holds exactly the held messages (window and held threads), and a
/// word finds exactly the held messages whose text has it.
fn index_matches_held(s: &mut ChannelStore) -> Result<(), String> {
    let mut held: Vec<(crate::core::time::TsKey, String)> = Vec::new();
    if let Some(ch) = s.channels.get(C) {
        held.extend(
            ch.window
                .iter()
                .map(|m| (m.key, m.text.as_str().into_owned())),
        );
    }
    for (k, e) in s.threads.held() {
        if k.0 == C {
            held.extend(
                e.value
                    .replies
                    .values()
                    .map(|m| (m.key, m.text.as_str().into_owned())),
            );
        }
    }
    held.sort();
    // Two held copies under one ts with different texts (a message that is both a
    // reply and a channel message): either text may be indexed.
    let ambiguous: Vec<crate::core::time::TsKey> = held
        .windows(2)
        .filter(|w| w[0].0 == w[1].0 && w[0].1 != w[1].1)
        .map(|w| w[0].0)
        .collect();
    held.dedup_by_key(|h| h.0);
    let Some(ch) = s.channels.get_mut(C) else {
        return if held.is_empty() {
            Ok(())
        } else {
            Err("no channel".into())
        };
    };
    let indexed: Vec<crate::core::time::TsKey> =
        ch.index.keys_since(None).map(|(k, _)| k).collect();
    let want: Vec<crate::core::time::TsKey> = held.iter().map(|h| h.0).collect();
    if indexed != want {
        return Err(format!("index {indexed:?} != held {want:?}"));
    }
    for word in ["edited", "post", "fetched"] {
        let q = ch.index.query(word);
        let mut found: Vec<crate::core::time::TsKey> = ch
            .index
            .score(&q, None, None)
            .iter()
            .filter_map(|m| {
                ch.index
                    .doc(m.slot)
                    .map(crate::core::search::index::Doc::key)
            })
            .collect();
        found.sort();
        found.retain(|k| !ambiguous.contains(k));
        let want: Vec<crate::core::time::TsKey> = held
            .iter()
            .filter(|h| h.1.contains(word) && !ambiguous.contains(&h.0))
            .map(|h| h.0)
            .collect();
        if found != want {
            return Err(format!("'{word}' finds {found:?}, held with it: {want:?}"));
        }
    }
    Ok(())
}

#[test]
fn packed_messages_decode_in_order_with_non_ascii_and_lone_surrogates() {
    use crate::channel::message::{decode_packed, PACKED_BOT_MESSAGE, PACKED_MESSAGE};
    let fields = [
        ["C1", "1775835600.000100", "héllo 😀", "U1", "Sam", "", "M1"],
        [
            "C1",
            "1775835601.000100",
            "reply",
            "B1",
            "deploy-bot",
            "1775835600.000100",
            "",
        ],
    ];
    let mut units: Vec<u16> = Vec::new();
    let mut lens = Vec::new();
    for f in fields.iter().flatten() {
        let u: Vec<u16> = f.encode_utf16().collect();
        lens.push(u.len() as u32);
        units.extend(u);
    }
    units[lens[0] as usize + lens[1] as usize] = 0xD800; // a lone surrogate in the first text
    let events = decode_packed(&units, &lens, &[PACKED_MESSAGE, PACKED_BOT_MESSAGE])
        .unwrap_or_else(|e| panic!("{e}"));
    let (_, _, a) = match &events[0] {
        Event::Message {
            channel,
            workspace,
            message,
        } => (channel, workspace, message),
        other => panic!("{other:?}"),
    };
    assert_eq!(a.text.as_str(), "\u{FFFD}éllo 😀");
    assert_eq!((a.id(), a.ts.as_str()), ("M1", "1775835600.000100"));
    match &events[1] {
        Event::Message { message, .. } => {
            assert_eq!(message.id(), "1775835601.000100");
            assert!(message.author.is_bot);
            assert_eq!(message.thread_id.as_deref(), Some("1775835600.000100"));
        }
        other => panic!("{other:?}"),
    }
    let mut bad = lens.clone();
    bad[8] = 0; // the second ts becomes "": not a ts
    let e = decode_packed(&units, &bad, &[PACKED_MESSAGE, PACKED_MESSAGE])
        .err()
        .unwrap_or_else(|| panic!("error"));
    assert!(
        e.to_string()
            .starts_with("events[1].message.ts: expected a platform timestamp"),
        "{e}"
    );
    assert!(decode_packed(&units, &lens[..3], &[PACKED_MESSAGE]).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// The thread section never exceeds its budget (measured on the JSON the prompt
    /// carries), unless the root alone or the always-kept newest reply is larger.
    #[test]
    fn thread_json_fits_its_budget(lens in proptest::collection::vec(0usize..3000, 1..60), budget in 0u64..6000, root_len in 0usize..400) {
        let mut s = warm();
        live(&mut s, msg(0, &"r".repeat(root_len), None), T0);
        for (i, n) in lens.iter().enumerate() {
            live(&mut s, msg(1 + i as u64, &"<é>`&\"x".repeat(n / 7 + 1), Some(0)), T0);
        }
        let mut r = req(&ts(0));
        r.budget_tokens = budget;
        let b = s.build(&r, &[], T0).unwrap_or_else(|e| panic!("{e}"));
        let json = b.thread_json().unwrap_or_else(|| panic!("thread")).to_string();
        let tokens = crate::core::tokens::upper_bound(&json);
        let t = b.telemetry.clone().unwrap_or_else(|| panic!("telemetry"));
        prop_assert_eq!(t.actual_tokens, tokens);
        let included = b.truncation.as_ref().map_or(0, |t| t.included_replies);
        if included > 1 {
            prop_assert!(tokens <= budget, "{} tokens over a budget of {}", tokens, budget);
        }
        prop_assert!(b.thread().is_some(), "the JSON parses back to a ThreadContext");
    }
}

#[test]
fn cached_renderings_follow_edits_and_reactions() {
    let mut s = warm();
    live(&mut s, msg(1, "before", None), T0);
    live(&mut s, msg(2, "anchor", None), T0);
    let adjacent = |s: &mut ChannelStore| {
        let b = s
            .build(&req(&ts(2)), &[], T0)
            .unwrap_or_else(|e| panic!("{e}"));
        b.snapshot().unwrap_or_else(|| panic!("snapshot")).adjacent[0].clone()
    };
    assert_eq!(adjacent(&mut s).snippet, "before");
    s.apply(
        Event::Edit {
            channel: C.into(),
            message_id: ts(1),
            text: "after   the edit".into(),
            edited: true,
        },
        T0,
    );
    s.apply(
        Event::Reaction {
            channel: C.into(),
            message_id: ts(1),
            name: "eyes".into(),
            user: Some("U1".into()),
            added: true,
        },
        T0,
    );
    let a = adjacent(&mut s);
    assert_eq!(a.snippet, "after the edit");
    assert_eq!(a.reactions, vec![":eyes: 1"]);
}

#[test]
fn a_replys_snapshot_is_centred_on_its_root_and_shows_it() {
    let mut s = warm();
    for i in 1..=5 {
        live(&mut s, msg(i, "x", None), T0);
    }
    live(&mut s, msg(10, "reply", Some(3)), T0);
    let mut r = req(&ts(10));
    r.adjacent = 3;
    let b = s.build(&r, &[], T0).unwrap_or_else(|e| panic!("{e}"));
    let ids = adjacent_ids(&b);
    assert_eq!(ids, vec![ts(2), ts(3), ts(4)]);
}

#[test]
fn an_unheld_anchor_in_a_thread_is_looked_for_in_its_thread_first_when_no_adjacent_are_wanted() {
    let cold = || ChannelStore::new(StoreConfig::default());
    let history = Need::History { channel: C.into() };
    let in_thread = |anchor: u64, adjacent: usize| {
        let mut r = ContextRequest::new(C, &ts(anchor));
        r.thread_hint = Some(ts(1));
        r.adjacent = adjacent;
        r
    };
    // The root itself, then a reply: the thread's page holds both.
    for anchor in [1, 5] {
        assert_eq!(
            cold().plan(&in_thread(anchor, 0), &[], T0),
            vec![thread_need(1)]
        );
        // Adjacent messages wanted: the history brings them and may hold the anchor.
        assert_eq!(
            cold().plan(&in_thread(anchor, 5), &[], T0),
            vec![history.clone()]
        );
    }
    // The thread failed: the history is the next place to look, then the message itself.
    let failed = [Failure {
        need: thread_need(1),
        reason: "down".into(),
    }];
    assert_eq!(
        cold().plan(&in_thread(5, 0), &failed, T0),
        vec![history.clone()]
    );
}

#[test]
fn live_replies_keep_a_thread_held_whole_fresh_and_silence_lets_it_expire() {
    let mut s = warm_with_root();
    put_whole_thread(&mut s, msg(1, "root", None));
    // A reply every two minutes: twenty minutes on, still no fetch needed.
    for i in 0..10u64 {
        let at = T0 + (i + 1) * 120_000;
        live(&mut s, msg(10 + i, "live reply", Some(1)), at);
        assert!(
            s.plan(&req(&ts(10 + i)), &[], at + 1).is_empty(),
            "reply {i}"
        );
    }
    // Then five minutes of silence: the thread is refetched.
    let last = T0 + 10 * 120_000;
    assert!(s.plan(&req(&ts(19)), &[], last + 299_999).is_empty());
    assert_eq!(
        s.plan(&req(&ts(19)), &[], last + 300_000),
        vec![thread_need(1)]
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// The snapshot stays within its budget, and the tokens reported for it are its JSON's
    /// upper bound, whatever the texts (their estimates add up across the JSON).
    #[test]
    fn snapshot_json_fits_its_budget(texts in proptest::collection::vec("[a-zA-Z0-9 <>&\"é😀日本\n]{0,300}", 1..40), budget in 0u64..3000) {
        let mut s = warm();
        for (i, t) in texts.iter().enumerate() {
            live(&mut s, msg(i as u64, t, None), T0);
        }
        let mut r = req(&ts(texts.len() as u64 / 2));
        r.adjacent = 40;
        r.snapshot_budget_tokens = budget;
        let b = s.build(&r, &[], T0).unwrap_or_else(|e| panic!("{e}"));
        let json = b.snapshot_json().to_string();
        prop_assert_eq!(b.tokens.snapshot, crate::core::tokens::upper_bound(&json));
        let snap = b.snapshot().unwrap_or_else(|| panic!("snapshot"));
        if !snap.adjacent.is_empty() {
            prop_assert!(b.tokens.snapshot <= budget, "{} over {}", b.tokens.snapshot, budget);
        }
        prop_assert_eq!(snap.adjacent.len() + snap.adjacent_omitted.unwrap_or(0) as usize, texts.len() - 1);
    }
}

#[test]
fn messages_of_one_author_share_one_copy_of_the_author() {
    let mut s = ChannelStore::new(StoreConfig::default());
    for sec in [0, 3, 6] {
        live(&mut s, msg(sec, "same author", None), T0);
    }
    live(&mut s, msg(9, "a reply", Some(0)), T0);
    let held: Vec<&StoredMessage> = s
        .channel(C)
        .map(|c| c.window.iter().map(|m| &**m).collect())
        .unwrap_or_default();
    // msg() names the author after sec % 3: all four are U0.
    assert_eq!(held.len(), 3);
    assert!(held
        .windows(2)
        .all(|w| Arc::ptr_eq(&w[0].author, &w[1].author)));
    let reply = s.find(C, &ts(9)).unwrap_or_else(|| panic!("reply held"));
    assert!(Arc::ptr_eq(&reply.author, &held[0].author));
    assert_eq!(s.authors.len(), 1);
}

#[test]
fn a_message_whose_id_is_its_ts_needs_no_id_entry_and_other_ids_are_found_too() {
    let mut s = ChannelStore::new(StoreConfig::default());
    // A Slack message: its id is its ts.
    live(&mut s, msg(1, "slack", None), T0);
    // A Discord-style message with an id of its own.
    let mut d = msg(2, "discord", None);
    d.set_id("1299430087154597888");
    live(&mut s, d, T0);
    // An id that reads as a ts, but not its own: found by its id, not by its ts.
    let mut odd = msg(3, "odd", None);
    odd.set_id(&ts(4));
    live(&mut s, odd, T0);
    let ch = s.channel(C).unwrap_or_else(|| panic!("channel"));
    assert_eq!(
        ch.other_ids.len(),
        2,
        "only the two ids that are not their ts"
    );
    assert_eq!(
        ch.get(&ts(1)).map(|m| m.text.as_str().into_owned()),
        Some("slack".to_string())
    );
    assert_eq!(
        ch.get("1299430087154597888")
            .map(|m| m.text.as_str().into_owned()),
        Some("discord".to_string())
    );
    assert_eq!(
        ch.get(&ts(4)).map(|m| m.text.as_str().into_owned()),
        Some("odd".to_string())
    );
    assert_eq!(ch.key_of(&ts(3)), None, "ts(3) is not an id here");
    s.delete(C, &ts(4), T0);
    let ch = s.channel(C).unwrap_or_else(|| panic!("channel"));
    assert_eq!(ch.get(&ts(4)), None);
    assert_eq!(ch.window.len(), 2);
    assert_eq!(ch.other_ids.len(), 1);
}

#[test]
fn a_plain_message_holds_no_second_id_and_no_extras() {
    // Every held message pays for this struct: one pointer stands in for replies,
    // reactions and files, an id equal to the ts is not kept twice, and the text and
    // thread id are boxed strings (no capacity field).
    assert!(
        std::mem::size_of::<StoredMessage>() <= 120,
        "{}",
        std::mem::size_of::<StoredMessage>()
    );
    let mut m = msg(1, "plain", None);
    assert!(m.other_id.is_none() && m.extras.0.is_none());
    m.set_id(&ts(1));
    assert!(m.other_id.is_none());
    m.set_id("D42");
    assert_eq!((m.id(), m.other_id.as_deref()), ("D42", Some("D42")));
    // A reaction added then taken back leaves the message as it was, unboxed.
    let before = msg(1, "plain", None);
    let mut m = before.clone();
    m.react("eyes", Some("U1"), true);
    assert_eq!(m.reactions().len(), 1);
    assert!(m.extras.0.is_some() && m != before);
    m.react("eyes", Some("U1"), false);
    assert!(m.extras.0.is_none());
    assert_eq!(m, before);
    // Removing a reaction a message never had allocates nothing.
    m.react("eyes", None, false);
    assert!(m.extras.0.is_none());
    // Nor does a reply count of 0 (a held message merged with a fetched copy of it).
    m.set_reply_count(0);
    assert!(m.extras.0.is_none());
    m.set_reply_count(3);
    assert_eq!(m.reply_count(), 3);
    m.set_reply_count(0);
    assert!(m.extras.0.is_none());
    // A message seen live, then again in a history page, stays unboxed.
    let mut s = ChannelStore::new(StoreConfig::default());
    live(&mut s, msg(1, "plain", None), T0);
    s.put_history(C, vec![msg(1, "plain", None)], T0);
    let held = s.channels[C].get(&ts(1)).unwrap_or_else(|| panic!("held"));
    assert!(held.extras.0.is_none());
}

#[test]
fn texts_taken_in_after_the_first_sixteen_kilobytes_are_packed_and_read_back_exactly() {
    let mut s = ChannelStore::new(StoreConfig {
        pack_text: true,
        ..StoreConfig::default()
    });
    let text = |i: u64| {
        format!("message {i}: the deploy of the checkout service is rolling out to the canary, p99 is fine")
    };
    for i in 1..=400 {
        live(&mut s, msg(i, &text(i), None), T0);
    }
    let ch = s.channel(C).unwrap_or_else(|| panic!("channel"));
    let raw: usize = (1..=400).map(|i| text(i).len()).sum();
    let sampled = raw.min(crate::core::packed_text::SAMPLE_BYTES);
    let packed = ch.window.iter().filter(|m| m.text.is_packed()).count();
    assert!(packed >= 200, "{packed} of 400 packed");
    for (i, m) in (1..).zip(ch.window.iter()) {
        assert_eq!(m.text.as_str(), text(i));
    }
    let bytes: usize = ch.window.iter().map(|m| m.text.heap_bytes()).sum();
    assert!(
        bytes < sampled + (raw - sampled) / 2,
        "{bytes} B held for {raw} B"
    );
    let view = s.message_view(C, &ts(400)).map(|v| v.text);
    assert_eq!(view, Some(text(400)));
    // An edit replaces the text with a packed copy of the new one.
    s.apply(
        Event::Edit {
            channel: C.into(),
            message_id: ts(400),
            text: text(4000),
            edited: true,
        },
        T0,
    );
    let edited = &held(&mut s, &ts(400))[0];
    assert!(edited.text.is_packed());
    assert_eq!(edited.text.as_str(), text(4000));
}

/// A channel of `n` chat lines a minute apart, and a thread of `replies` under its
/// middle message; the anchor is the thread's newest reply.
fn chat_channel(n: u64, replies: u64) -> (ChannelStore, ContextRequest) {
    let mut s = warm();
    let root = n / 2;
    for i in 0..n {
        let text = format!(
            "message {i}: the canary for service {} looks fine, p99 at {} ms, rolling on",
            i % 7,
            100 + i
        );
        live(&mut s, msg(i * 60, &text, None), T0);
    }
    let mut page = vec![msg(root * 60, &format!("message {root}"), None)];
    for j in 0..replies {
        let text = format!(
            "reply {j}: checked the dashboards for region {}, error budget ok",
            j % 5
        );
        page.push(msg(n * 60 + j, &text, Some(root * 60)));
    }
    let anchor = ts(n * 60 + replies - 1);
    s.put_thread_page(C, &ts(root * 60), page, true, true, T0);
    let mut r = req(&anchor);
    r.thread_hint = Some(ts(root * 60));
    r.adjacent = n as usize;
    (s, r)
}

#[test]
fn the_compact_form_is_budgeted_by_its_own_cost_and_carries_more() {
    let (mut s, mut r) = chat_channel(60, 300);
    r.budget_tokens = 2_000;
    let json = s.build(&r, &[], T0).unwrap_or_else(|e| panic!("{e}"));
    r.prompt.compact = true;
    let compact = s.build(&r, &[], T0).unwrap_or_else(|e| panic!("{e}"));
    let shown = |b: &build::Built| {
        (
            b.snapshot().map_or(0, |x| x.adjacent.len()),
            b.truncation.as_ref().map_or(0, |t| t.included_replies),
        )
    };
    let (json_adjacent, json_replies) = shown(&json);
    let (compact_adjacent, compact_replies) = shown(&compact);
    assert!(
        compact_adjacent as f64 >= json_adjacent as f64 * 1.5,
        "{compact_adjacent} vs {json_adjacent}"
    );
    assert!(
        compact_replies as f64 >= json_replies as f64 * 1.5,
        "{compact_replies} vs {json_replies}"
    );
    // Counted on the text shown, within the budgets, and nearly full.
    let meter = crate::core::tokens::Meter::REFERENCE;
    let count = |b: &build::Built, range: &std::ops::Range<usize>| {
        meter.bound(crate::core::tokens::estimate(&b.prompt[range.clone()]))
    };
    let thread_range = compact
        .thread_range
        .clone()
        .unwrap_or_else(|| panic!("thread"));
    assert_eq!(
        compact.tokens.snapshot,
        count(&compact, &compact.snapshot_range)
    );
    assert_eq!(compact.tokens.thread, count(&compact, &thread_range));
    let t = compact
        .telemetry
        .as_ref()
        .unwrap_or_else(|| panic!("telemetry"));
    assert_eq!(t.actual_tokens, compact.tokens.thread);
    for (used, budget) in [
        (compact.tokens.snapshot, 1_500),
        (compact.tokens.thread, 2_000),
    ] {
        assert!(
            used <= budget && used as f64 >= budget as f64 * 0.9,
            "{used} of {budget}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// In the compact form each document is counted on the text the prompt shows, and
    /// stays within its budget whatever the texts (unless nothing but the always-kept
    /// newest reply is left).
    #[test]
    fn compact_documents_fit_their_budgets(
        texts in proptest::collection::vec("[a-zA-Z0-9 <>&\"é😀日本\n]{0,300}", 2..30),
        replies in proptest::collection::vec("[a-zA-Z0-9 </>&é😀日本\n-]{0,400}", 1..40),
        budget in 0u64..2500,
        thread_budget in 0u64..4000,
    ) {
        let mut s = warm();
        for (i, t) in texts.iter().enumerate() {
            live(&mut s, msg(i as u64 * 60, t, None), T0);
        }
        let mut page = vec![msg(0, &texts[0], None)];
        for (j, t) in replies.iter().enumerate() {
            page.push(msg(1 + j as u64, t, Some(0)));
        }
        s.put_thread_page(C, &ts(0), page, true, true, T0);
        let mut r = req(&ts(replies.len() as u64));
        r.thread_hint = Some(ts(0));
        r.adjacent = 40;
        r.snapshot_budget_tokens = budget;
        r.budget_tokens = thread_budget;
        r.prompt.compact = true;
        let b = s.build(&r, &[], T0).unwrap_or_else(|e| panic!("{e}"));
        let meter = crate::core::tokens::Meter::REFERENCE;
        let snapshot = meter.bound(crate::core::tokens::estimate(&b.prompt[b.snapshot_range.clone()]));
        prop_assert_eq!(b.tokens.snapshot, snapshot);
        let snap = b.snapshot().unwrap_or_else(|| panic!("snapshot"));
        if !snap.adjacent.is_empty() {
            prop_assert!(snapshot <= budget, "snapshot {} over {}", snapshot, budget);
        }
        let range = b.thread_range.clone().unwrap_or_else(|| panic!("thread"));
        let thread = meter.bound(crate::core::tokens::estimate(&b.prompt[range]));
        prop_assert_eq!(b.tokens.thread, thread);
        if b.truncation.as_ref().is_some_and(|t| t.included_replies > 1) {
            prop_assert!(thread <= thread_budget, "thread {} over {}", thread, thread_budget);
        }
    }
}
