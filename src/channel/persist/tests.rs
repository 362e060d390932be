use super::*;
use crate::channel::message::{Event, StoredFile, StoredMessage};
use crate::channel::store::config::DEFAULT_QUEUE_MAX_ROWS;
use crate::channel::store::StoreConfig;
use crate::core::model::{Author, MediaRef};
use proptest::prelude::*;
use rusqlite::Connection;

const C: &str = "C1";
const T0: u64 = 1_775_835_600_000;

fn ts(sec: u64) -> String {
    format!("{}.000100", T0 / 1000 + sec)
}

fn msg(sec: u64, text: &str, thread: Option<u64>) -> StoredMessage {
    let author = Author {
        user_id: format!("U{}", sec % 3),
        display_name: format!("user{}", sec % 3),
        is_bot: false,
    };
    let mut m = StoredMessage::new(&ts(sec), author, text).unwrap_or_else(|| unreachable!("ts"));
    m.thread_id = thread.filter(|t| *t != sec).map(|t| ts(t).into());
    if sec.is_multiple_of(5) {
        m.extras_mut().files.push(StoredFile {
            media: MediaRef {
                artifact_id: format!("F{}", sec % 4),
                media_type: "image/png".into(),
                filename: Some(format!("f{sec}.png")),
                byte_length: sec,
            },
            url: Some(format!("https://files.example/{sec}")),
        });
    }
    m
}

/// Small bounds, so a short run evicts from every cache and window.
fn small() -> StoreConfig {
    StoreConfig {
        window_size: 5,
        replies_max: 3,
        starters_max: 3,
        max_thread_replies: 4,
        ..StoreConfig::default()
    }
}

#[derive(Debug, Clone)]
enum Op {
    Post(u64),
    Reply {
        sec: u64,
        thread: u64,
        broadcast: bool,
    },
    Edit(u64),
    React {
        sec: u64,
        added: bool,
    },
    Delete(u64),
    ThreadPage {
        thread: u64,
        replies: Vec<u64>,
        last: bool,
    },
    History(Vec<u64>),
    User(u64),
    Name(u64),
    Later(u64),
    Save,
}

fn op() -> impl Strategy<Value = Op> {
    let sec = 0u64..14;
    prop_oneof![
        4 => sec.clone().prop_map(Op::Post),
        4 => (sec.clone(), sec.clone(), any::<bool>())
            .prop_map(|(sec, thread, broadcast)| Op::Reply { sec, thread, broadcast }),
        2 => sec.clone().prop_map(Op::Edit),
        2 => (sec.clone(), any::<bool>()).prop_map(|(sec, added)| Op::React { sec, added }),
        2 => sec.clone().prop_map(Op::Delete),
        2 => (sec.clone(), proptest::collection::vec(sec.clone(), 0..6), any::<bool>())
            .prop_map(|(thread, replies, last)| Op::ThreadPage { thread, replies, last }),
        1 => proptest::collection::vec(sec.clone(), 0..6).prop_map(Op::History),
        1 => (0u64..4).prop_map(Op::User),
        1 => (0u64..3).prop_map(Op::Name),
        2 => (0u64..400_000).prop_map(Op::Later),
        3 => Just(Op::Save),
    ]
}

fn apply(store: &mut ChannelStore, op: &Op, now: &mut u64) {
    let event = |e: Event, store: &mut ChannelStore, now: u64| store.apply(e, now);
    match op.clone() {
        Op::Post(sec) => event(
            Event::Message {
                channel: C.into(),
                workspace: None,
                message: Box::new(msg(sec, "post", None)),
            },
            store,
            *now,
        ),
        Op::Reply {
            sec,
            thread,
            broadcast,
        } => {
            let mut m = msg(sec, "reply", Some(thread));
            m.broadcast = broadcast && m.thread_id.is_some();
            event(
                Event::Message {
                    channel: C.into(),
                    workspace: None,
                    message: Box::new(m),
                },
                store,
                *now,
            );
        }
        Op::Edit(sec) => event(
            Event::Edit {
                channel: C.into(),
                message_id: ts(sec),
                text: format!("edited at {now}"),
                edited: true,
            },
            store,
            *now,
        ),
        Op::React { sec, added } => event(
            Event::Reaction {
                channel: C.into(),
                message_id: ts(sec),
                name: "eyes".into(),
                user: Some("U9".into()),
                added,
            },
            store,
            *now,
        ),
        Op::Delete(sec) => event(
            Event::Delete {
                channel: C.into(),
                message_id: ts(sec),
            },
            store,
            *now,
        ),
        Op::ThreadPage {
            thread,
            replies,
            last,
        } => {
            let mut page = vec![{
                let mut root = msg(thread, "root", None);
                root.extras_mut().reply_count = replies.len() as u64;
                root
            }];
            page.extend(
                replies
                    .iter()
                    .filter(|r| **r != thread)
                    .map(|r| msg(*r, "fetched", Some(thread))),
            );
            store.put_thread_page(C, &ts(thread), page, true, last, *now);
        }
        Op::History(secs) => {
            let page = secs.iter().map(|s| msg(*s, "history", None)).collect();
            store.put_history(C, page, *now);
        }
        Op::User(n) => {
            let body = serde_json::json!({
                "event": { "user": format!("U{n}"), "user_profile": { "display_name": format!("name{n}-{now}") } }
            });
            let _ = store.ingest_slack_event(&body, *now);
        }
        Op::Name(n) => {
            store.set_channel(C, Some(format!("general-{n}")), Some("slack".into()), None);
        }
        Op::Later(ms) => *now += ms,
        Op::Save => {}
    }
}

fn memory_file() -> Connection {
    db::open(":memory:").unwrap_or_else(|e| panic!("open: {e}"))
}

fn save(conn: &mut Connection, changes: &Changes) {
    let tx = conn.transaction().unwrap_or_else(|e| panic!("tx: {e}"));
    rows::write(&tx, changes, 0).unwrap_or_else(|e| panic!("write: {e}"));
    tx.commit().unwrap_or_else(|e| panic!("commit: {e}"));
}

fn reopened(conn: &Connection, config: StoreConfig) -> ChannelStore {
    let loaded = rows::load(conn, 0).unwrap_or_else(|e| panic!("load: {e}"));
    assert_eq!(loaded.corrupt, Vec::new());
    let mut s = ChannelStore::new(config);
    s.track_changes();
    s.restore(loaded.state);
    s
}

fn indexed(s: &ChannelStore) -> u64 {
    s.channel(C).map_or(0, |c| c.index.stats().documents)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// Whatever a store went through, and however its saves fell between the changes,
    /// the file holds exactly the store: a store reopened from it holds the same
    /// messages, threads (with their write times), starters, deletions, orphan replies,
    /// file locations and users, and indexes the same messages.
    #[test]
    fn a_reopened_store_holds_what_the_saved_one_held(ops in proptest::collection::vec(op(), 1..60)) {
        let mut store = ChannelStore::new(small());
        store.track_changes();
        let mut conn = memory_file();
        let mut now = T0 + 60_000;
        for op in &ops {
            apply(&mut store, op, &mut now);
            if matches!(op, Op::Save) {
                save(&mut conn, &store.take_changes());
            }
        }
        save(&mut conn, &store.take_changes());
        let back = reopened(&conn, small());
        prop_assert_eq!(back.dump(), store.dump());
        prop_assert_eq!(indexed(&back), indexed(&store));
        prop_assert!(!back.has_changes(), "a restore that fits its bounds changes nothing");
    }
}

#[test]
fn a_smaller_store_keeps_what_fits_and_the_file_follows() {
    let mut store = ChannelStore::new(StoreConfig::default());
    store.track_changes();
    let mut now = T0;
    for sec in 0..10 {
        apply(&mut store, &Op::Post(sec), &mut now);
    }
    let mut conn = memory_file();
    save(&mut conn, &store.take_changes());
    // Reopened with a window of 5: the five oldest are dropped, and the next save
    // removes them from the file.
    let mut back = reopened(&conn, small());
    assert_eq!(back.window_messages(), 5);
    let trimmed = back.take_changes();
    assert_eq!(
        trimmed.window.iter().filter(|(_, m)| m.is_none()).count(),
        5
    );
    save(&mut conn, &trimmed);
    let again = reopened(&conn, small());
    assert_eq!(again.dump(), back.dump());
}

#[test]
fn a_corrupt_row_is_skipped_and_named() {
    let mut store = ChannelStore::new(StoreConfig::default());
    store.track_changes();
    let mut now = T0;
    for sec in 0..3 {
        apply(&mut store, &Op::Post(sec), &mut now);
    }
    let mut conn = memory_file();
    save(&mut conn, &store.take_changes());
    conn.execute(
        "UPDATE channel_window SET body = '{' WHERE id = ?1",
        [ts(1)],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let loaded = rows::load(&conn, 0).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(loaded.corrupt.len(), 1);
    assert!(loaded.corrupt[0]
        .0
        .starts_with(&format!("window message {:?} of \"C1\"", ts(1))));
    assert_eq!(loaded.state.window.len(), 2);
}

fn temp_path(name: &str) -> String {
    let p = std::env::temp_dir().join(format!("context-engine-{}-{name}.db", std::process::id()));
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", p.display()));
    }
    p.display().to_string()
}

fn config(path: &str) -> PersistConfig {
    PersistConfig {
        path: path.to_string(),
        media_max_bytes: 0,
        queue_max_rows: DEFAULT_QUEUE_MAX_ROWS,
        flush_timeout_ms: 10_000,
    }
}

#[test]
fn the_writer_thread_saves_behind_the_store_and_a_flush_waits_for_it() {
    let path = temp_path("writer");
    let mut store = ChannelStore::new(small());
    let p = Persister::open(config(&path), &mut store).unwrap_or_else(|e| panic!("{e}"));
    let mut now = T0;
    for sec in 0..8 {
        apply(&mut store, &Op::Post(sec), &mut now);
        apply(
            &mut store,
            &Op::Reply {
                sec: sec + 20,
                thread: sec,
                broadcast: false,
            },
            &mut now,
        );
        p.write_behind(&mut store);
    }
    let flush = p.flush_from(&mut store).unwrap_or_else(|e| panic!("{e}"));
    let stats = p.waiter().wait(flush).unwrap_or_else(|e| panic!("{e}"));
    assert!(stats.written_rows > 0);
    assert_eq!(stats.queued_rows, 0);
    let mut back = ChannelStore::new(small());
    let q = Persister::open(config(&path), &mut back).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(back.dump(), store.dump());
    assert!(q.stats().loaded_rows > 0);
    // Closing writes what is left and stops the writer; a closed writer takes nothing.
    apply(&mut store, &Op::Post(40), &mut now);
    let last = p.close_from(&mut store).unwrap_or_else(|e| panic!("{e}"));
    let closed = p
        .waiter()
        .wait_closed(last)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(closed.closed);
    assert_eq!(p.flush_from(&mut store), Err(PersistError::Closed));
}

#[test]
fn a_full_queue_holds_changes_back_in_the_store_until_there_is_room() {
    let path = temp_path("queue");
    let mut store = ChannelStore::new(StoreConfig::default());
    let mut c = config(&path);
    c.queue_max_rows = 10;
    let p = Persister::open(c, &mut store).unwrap_or_else(|e| panic!("{e}"));
    let mut now = T0;
    // The queue as a slow disk leaves it: full.
    p.shared.lock().rows = 10;
    for sec in 0..50 {
        apply(&mut store, &Op::Post(sec), &mut now);
        p.write_behind(&mut store);
    }
    assert_eq!(p.stats().deferred, 50);
    assert!(store.has_changes(), "the changes wait in the store");
    p.shared.lock().rows = 0;
    // One call with room queues all fifty.
    p.write_behind(&mut store);
    assert!(!store.has_changes());
    let flush = p.flush_from(&mut store).unwrap_or_else(|e| panic!("{e}"));
    let stats = p.waiter().wait(flush).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(stats.written_rows, 54, "50 messages and 4 file locations");
    let mut back = ChannelStore::new(StoreConfig::default());
    let _q = Persister::open(config(&path), &mut back).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(back.window_messages(), 50);
}

#[test]
fn an_unwritable_file_is_an_open_error_naming_it() {
    let mut store = ChannelStore::new(StoreConfig::default());
    let e = Persister::open(config("/nonexistent-dir/x/y.db"), &mut store).map(|_| ());
    match e {
        Err(PersistError::Open(why)) => assert!(why.contains("unable to open"), "{why}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn once_closed_the_database_file_alone_holds_everything() {
    let path = temp_path("alone");
    let copy = temp_path("alone-copy");
    let mut store = ChannelStore::new(StoreConfig::default());
    let p = Persister::open(config(&path), &mut store).unwrap_or_else(|e| panic!("{e}"));
    let mut now = T0;
    for sec in 0..200 {
        apply(&mut store, &Op::Post(sec), &mut now);
        p.write_behind(&mut store);
    }
    let last = p.close_from(&mut store).unwrap_or_else(|e| panic!("{e}"));
    let closed = p
        .waiter()
        .wait_closed(last)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(closed.last_error, None);
    // A backup of the .sqlite file only, without its -wal: everything is in it.
    let wal = std::fs::metadata(format!("{path}-wal")).map_or(0, |m| m.len());
    assert_eq!(wal, 0, "the log is empty (or gone)");
    std::fs::copy(&path, &copy).unwrap_or_else(|e| panic!("{e}"));
    let mut back = ChannelStore::new(StoreConfig::default());
    let _q = Persister::open(config(&copy), &mut back).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(back.window_messages(), 200);
    assert_eq!(back.dump(), store.dump());
}
