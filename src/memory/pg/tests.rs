use super::*;
use crate::core::pg::server::PgServer;
use crate::core::pg::{Pg, PgOptions};

/// A runtime for a test's calls, on the test's thread.
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// A pool on `server`'s default database, with the memory's schema.
async fn migrated(server: &PgServer) -> Pg {
    let pg = Pg::connect(&PgOptions::new(&server.url("postgres")))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    pg.migrate(COMPONENT, &MIGRATIONS)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    pg
}

#[test]
fn the_memory_schema_migrates_on_a_real_server_with_its_word_indexes() {
    let Some(server) = PgServer::start() else {
        return;
    };
    let rt = runtime();
    rt.block_on(async {
        let pg = Pg::connect(&PgOptions::new(&server.url("postgres")))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(pg.migrate(COMPONENT, &MIGRATIONS).await.ok(), Some(0));
        assert_eq!(pg.migrate(COMPONENT, &MIGRATIONS).await.ok(), Some(3));
        let client = pg.client().await.unwrap_or_else(|e| panic!("{e}"));
        let gin: Vec<String> = client
            .query(
                "SELECT indexname FROM pg_indexes
                 WHERE tablename LIKE 'memory_%' AND indexdef LIKE '%USING gin%'
                 ORDER BY 1",
                &[],
            )
            .await
            .unwrap_or_else(|e| panic!("{e}"))
            .iter()
            .map(|r| r.get(0))
            .collect();
        assert_eq!(
            gin,
            [
                "memory_messages_words",
                "memory_records_grams",
                "memory_records_words"
            ]
        );
        // Their pending lists: the records' 64 kB; the messages' set by their writer.
        let limits: Vec<(String, Option<Vec<String>>)> = client
            .query(
                "SELECT relname::text, reloptions FROM pg_class
                 WHERE relname IN ('memory_messages_words', 'memory_records_grams', 'memory_records_words')
                 ORDER BY 1",
                &[],
            )
            .await
            .unwrap_or_else(|e| panic!("{e}"))
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect();
        let limit = |kb: &str| Some(vec![format!("gin_pending_list_limit={kb}")]);
        assert_eq!(
            limits,
            [
                ("memory_messages_words".to_string(), None),
                ("memory_records_grams".to_string(), limit("64")),
                ("memory_records_words".to_string(), limit("64")),
            ]
        );
        // The word index answers a term query from the index, not a scan.
        client
            .execute(
                "INSERT INTO memory_messages
                 (session_id, message_id, thread_key, role, text, ts_ms, words)
                 VALUES ('s', '1', 'root:1', 'user', 'the boat leaves at nine', 0,
                         to_tsvector('simple', 'the boat leaves at nine'))",
                &[],
            )
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        // (With one row, the planner would scan: it is told not to, to show the index.)
        client
            .batch_execute("SET enable_seqscan = off")
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let plan: Vec<String> = client
            .query(
                "EXPLAIN SELECT seq FROM memory_messages
                 WHERE words @@ to_tsquery('simple', 'boat')",
                &[],
            )
            .await
            .unwrap_or_else(|e| panic!("{e}"))
            .iter()
            .map(|r| r.get(0))
            .collect();
        assert!(
            plan.iter().any(|l| l.contains("memory_messages_words")),
            "{plan:?}"
        );
    });
}

#[test]
fn a_word_finds_the_same_messages_of_a_lane_on_postgresql_as_in_the_sqlite_index() {
    use crate::memory::message::{NewMessage, Role};
    use crate::memory::passages::index_terms::IndexTerms;
    use crate::memory::passages::terms::{body_expression, lane_token, session_token};
    use crate::memory::store::MemoryStore;
    let Some(server) = PgServer::start() else {
        return;
    };
    let texts = [
        "We are running the migration on Friday",
        "The runner's café opened; cafés everywhere",
        "東京タワーに行きました",
        "Écoles et collèges: l'école ferme à 17h",
        "My sister's name is Ana, she moved to Denver",
        "running runs ran",
        "don't DON'T Don’t",
        "Straße strasse STRASSE",
    ];
    // Two lanes of one session, and another session with the same words.
    let placed: Vec<(String, &str, &str)> = texts
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let session = if i % 3 == 2 { "other" } else { "s" };
            (format!("m{i}"), session, *t)
        })
        .collect();
    let mut store = MemoryStore::open(":memory:").unwrap_or_else(|e| panic!("{e}"));
    let batch: Vec<NewMessage<'_>> = placed
        .iter()
        .enumerate()
        .map(|(i, (id, session, text))| NewMessage {
            session_id: session,
            chat_id: "42",
            message_id: id,
            role: Role::User,
            text,
            ts_ms: i64::try_from(i).unwrap_or(0),
            topic_id: (i % 2 == 1).then_some("7"),
            reply_to: None,
        })
        .collect();
    let lanes: Vec<String> = store
        .ingest_batch(&batch)
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .map(|i| i.thread_key)
        .collect();
    let terms = IndexTerms::new().unwrap_or_else(|e| panic!("{e}"));
    let rt = runtime();
    rt.block_on(async {
        let pg = migrated(&server).await;
        let client = pg.client().await.unwrap_or_else(|e| panic!("{e}"));
        let made = terms
            .of_messages(&texts)
            .unwrap_or_else(|e| panic!("{e}"));
        for (((id, session, text), lane), t) in placed.iter().zip(&lanes).zip(&made) {
            let scope = [session_token(session), lane_token(session, lane)];
            client
                .execute(
                    "INSERT INTO memory_messages
                     (session_id, message_id, thread_key, role, text, ts_ms, words)
                     VALUES ($1, $2, $3, 'user', $4, 0, $5::text::tsvector)",
                    &[session, id, lane, text, &words::tsvector_literal(t, &scope)],
                )
                .await
                .unwrap_or_else(|e| panic!("{e}"));
        }
        let asked = [
            "run", "running", "Runner", "cafe", "CAFÉS", "école", "ecoles", "東京", "タワ",
            "sister", "moved", "denver", "don", "t", "straße", "strasse", "friday", "nothing",
        ];
        let mut found = 0;
        for (session, lane) in placed.iter().map(|p| p.1).zip(&lanes) {
            for word in asked {
                let token = lane_token(session, lane);
                let sqlite: Vec<String> = {
                    let expr = format!("scope : \"{token}\" AND {}", body_expression(&[word.to_string()], "OR"));
                    let mut st = store
                        .sqlite()
                        .prepare(
                            "SELECT m.message_id FROM messages_index i JOIN messages m ON m.seq = i.rowid
                             WHERE messages_index MATCH ?1 ORDER BY m.seq",
                        )
                        .unwrap_or_else(|e| panic!("{e}"));
                    st.query_map([expr], |r| r.get(0))
                        .and_then(|rows| rows.collect())
                        .unwrap_or_else(|e| panic!("{e}"))
                };
                let tokens = terms.of_query_term(word).unwrap_or_else(|e| panic!("{e}"));
                let postgres: Vec<String> = match words::tsquery_literal(&token, &tokens) {
                    None => Vec::new(),
                    Some(q) => client
                        .query(
                            "SELECT message_id FROM memory_messages
                             WHERE words @@ $1::text::tsquery ORDER BY seq",
                            &[&q],
                        )
                        .await
                        .unwrap_or_else(|e| panic!("{e}"))
                        .iter()
                        .map(|r| r.get(0))
                        .collect(),
                };
                assert_eq!(postgres, sqlite, "{word:?} in {session} {lane}");
                found += postgres.len();
            }
        }
        // Not an agreement on nothing: most words are found, in their lanes only.
        assert!(found >= 40, "{found}");
    });
}

#[test]
fn a_batch_is_placed_and_stored_once_as_the_sqlite_store_does() {
    use crate::memory::message::{NewMessage, Role};
    use crate::memory::passages::index_terms::IndexTerms;
    use crate::memory::store::MemoryStore;
    let Some(server) = PgServer::start() else {
        return;
    };
    let m = |session: &'static str,
             id: &'static str,
             text: &'static str,
             topic: Option<&'static str>,
             reply: Option<&'static str>| NewMessage {
        session_id: session,
        chat_id: "42",
        message_id: id,
        role: if id.ends_with(['1', '3', '5', '7', '9']) {
            Role::Assistant
        } else {
            Role::User
        },
        text,
        ts_ms: 1_000,
        topic_id: topic,
        reply_to: reply,
    };
    let batches = [
        vec![
            m("s", "1", "the release is on friday", None, None),
            m("s", "2", "which region first?", None, Some("1")),
            m("s", "3", "eu-west, then us-east", None, Some("2")),
            m("s", "4", "topic opener", Some("7"), None),
            m("s", "5", "a reply in the topic", None, Some("4")),
            m("s", "1", "the release is on friday", None, None),
            m("t", "1", "another session, same id", None, None),
        ],
        vec![
            // Id 2 again in another lane with other words: stored qualified; the same
            // again is a repeat of the qualified one.
            m("s", "2", "a provider reused this id", Some("9"), None),
            m("s", "2", "a provider reused this id", Some("9"), None),
            m("s", "6", "and the canary?", None, Some("3")),
            m("s", "3", "eu-west, then us-east", None, Some("2")),
            m("s", "7", "nul \0 inside", None, None),
        ],
        vec![],
    ];
    let mut sqlite = MemoryStore::open(":memory:").unwrap_or_else(|e| panic!("{e}"));
    let terms = IndexTerms::new().unwrap_or_else(|e| panic!("{e}"));
    let rt = runtime();
    rt.block_on(async {
        let pg = migrated(&server).await;
        for batch in &batches {
            let want = sqlite.ingest_batch(batch).unwrap_or_else(|e| panic!("{e}"));
            let got = messages::ingest_batch(&pg, &terms, batch)
                .await
                .unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(got, want);
        }
        let client = pg.client().await.unwrap_or_else(|e| panic!("{e}"));
        let lanes = client
            .query(
                "SELECT session_id, thread_key, messages, chars FROM memory_lane_stats ORDER BY 1, 2",
                &[],
            )
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(lanes.len(), 5, "root, reply:42:1 and two topics of s; root of t");
        for r in &lanes {
            let (session, lane): (String, String) = (r.get(0), r.get(1));
            let want: (i64, i64) = sqlite
                .sqlite()
                .query_row(
                    "SELECT messages, chars FROM lane_stats WHERE session_id = ?1 AND thread_key = ?2",
                    [&session, &lane],
                    |q| Ok((q.get(0)?, q.get(1)?)),
                )
                .unwrap_or_else(|e| panic!("{session} {lane}: {e}"));
            assert_eq!((r.get::<_, i64>(2), r.get::<_, i64>(3)), want, "{session} {lane}");
        }
        // The same rows, in the same order, in each lane.
        let rows: Vec<(String, String, String)> = client
            .query("SELECT session_id, message_id, thread_key FROM memory_messages ORDER BY seq", &[])
            .await
            .unwrap_or_else(|e| panic!("{e}"))
            .iter()
            .map(|r| (r.get(0), r.get(1), r.get(2)))
            .collect();
        let mut st = sqlite
            .sqlite()
            .prepare("SELECT session_id, message_id, thread_key FROM messages ORDER BY seq")
            .unwrap_or_else(|e| panic!("{e}"));
        let want: Vec<(String, String, String)> = st
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .and_then(|rows| rows.collect())
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(rows, want);
    });
}

#[test]
fn what_a_search_reads_is_what_the_sqlite_store_reads() {
    use crate::memory::message::{NewMessage, Role};
    use crate::memory::passages::index_terms::IndexTerms;
    use crate::memory::passages::terms::{body_expression, lane_token, session_token};
    use crate::memory::store::MemoryStore;
    let Some(server) = PgServer::start() else {
        return;
    };
    let words = [
        "release", "canary", "région", "deploy", "keys", "rotating", "東京", "Friday", "why",
    ];
    let ids: Vec<String> = (0..240).map(|i| format!("m{i}")).collect();
    let texts: Vec<String> = (0..240)
        .map(|i| {
            let w = |k: usize| words[(i * 7 + k * 3) % words.len()];
            let end = if i % 5 == 0 { "?  " } else { "." };
            format!("{} {} the {} step {i}{end}", w(0), w(1), w(2))
        })
        .collect();
    let batch: Vec<NewMessage<'_>> = (0..240)
        .map(|i| NewMessage {
            session_id: if i % 4 == 3 { "t" } else { "s" },
            chat_id: "42",
            message_id: &ids[i],
            role: if i % 2 == 0 {
                Role::User
            } else {
                Role::Assistant
            },
            text: &texts[i],
            ts_ms: 1_000 * i64::try_from(i).unwrap_or(0),
            topic_id: (i % 3 == 0).then_some("7"),
            reply_to: None,
        })
        .collect();
    let mut sqlite = MemoryStore::open(":memory:").unwrap_or_else(|e| panic!("{e}"));
    let terms = IndexTerms::new().unwrap_or_else(|e| panic!("{e}"));
    let rt = runtime();
    rt.block_on(async {
        let pg = migrated(&server).await;
        let reader = pg.client().await.unwrap_or_else(|e| panic!("{e}"));
        for chunk in batch.chunks(50) {
            sqlite.ingest_batch(chunk).unwrap_or_else(|e| panic!("{e}"));
            messages::ingest_batch(&pg, &terms, chunk)
                .await
                .unwrap_or_else(|e| panic!("{e}"));
        }
        let ok = |e: crate::core::pg::PgError| -> ! { panic!("{e}") };
        let mut found = 0;
        for (session, lane) in [("s", "root:42"), ("s", "topic:42:7"), ("t", "root:42"), ("t", "topic:42:7"), ("u", "root:42")] {
            assert_eq!(
                reads::lane_stats(&reader, session, lane).await.unwrap_or_else(|e| ok(e)),
                sqlite.lane_stats(session, lane).unwrap_or_else(|e| panic!("{e}"))
            );
            assert_eq!(
                reads::session_stats(&reader, session).await.unwrap_or_else(|e| ok(e)),
                sqlite.session_stats(session).unwrap_or_else(|e| panic!("{e}"))
            );
            for (token, in_lane) in [(lane_token(session, lane), Some(lane)), (session_token(session), None)] {
                // More words than one statement matches, each read past its own row: each
                // word's rows are those it has alone.
                let many: Vec<(Vec<String>, i64)> = (0..27)
                    .map(|k| {
                        let tokens = terms.of_query_term(words[k % words.len()]).unwrap_or_else(|e| panic!("{e}"));
                        (tokens, i64::try_from(k).unwrap_or(0) * 9)
                    })
                    .collect();
                for rows in [0, usize::MAX] {
                    let scope = super::terms::Scope { session, lane: in_lane, token: &token, rows };
                    let got = super::terms::rows_holding(&reader, &scope, &many).await.unwrap_or_else(|e| ok(e));
                    for (k, word) in many.iter().enumerate() {
                        let alone = super::terms::rows_holding(&reader, &scope, std::slice::from_ref(word))
                            .await
                            .unwrap_or_else(|e| ok(e));
                        assert_eq!(got[k], alone[0], "word {k} of 27 in {token} ({rows} rows)");
                    }
                }
                for word in words.iter().chain(&["Régions", "rotate", "nothing"]) {
                    for after in [0, 100] {
                        let expr = format!(
                            "scope : \"{token}\" AND {}",
                            body_expression(&[word.to_string()], "OR")
                        );
                        let want: Vec<i64> = sqlite
                            .sqlite()
                            .prepare("SELECT rowid FROM messages_index WHERE messages_index MATCH ?1 AND rowid > ?2 ORDER BY rowid")
                            .and_then(|mut st| st.query_map(rusqlite::params![expr, after], |r| r.get(0))?.collect())
                            .unwrap_or_else(|e| panic!("{e}"));
                        let tokens = terms.of_query_term(word).unwrap_or_else(|e| panic!("{e}"));
                        // Both ways: a scope read row by row, and through the GIN index.
                        for rows in [0, usize::MAX] {
                            let scope = super::terms::Scope { session, lane: in_lane, token: &token, rows };
                            let words = [(tokens.clone(), after), (Vec::new(), 0), (tokens.clone(), after + 50)];
                            let got = super::terms::rows_holding(&reader, &scope, &words)
                                .await
                                .unwrap_or_else(|e| ok(e));
                            assert_eq!(got[0], want, "{word} in {token} after {after} ({rows} rows)");
                            assert_eq!(got[1], Vec::<i64>::new());
                            let later: Vec<i64> = want.iter().copied().filter(|&s| s > after + 50).collect();
                            assert_eq!(got[2], later, "{word} in {token} after {} ({rows} rows)", after + 50);
                            found += got[0].len();
                        }
                    }
                }
            }
            // A lane's messages either side of a row, whole.
            for after in [false, true] {
                let got = reads::lane_messages(&reader, session, lane, 120, after, 5)
                    .await
                    .unwrap_or_else(|e| ok(e));
                let want = sqlite
                    .lane_neighbours(session, lane, 120, after, 5)
                    .unwrap_or_else(|e| panic!("{e}"));
                assert_eq!(got, want, "{session} {lane} after {after}");
            }
            // Around several rows at once.
            let at = [(lane, 120), ("root:42", 60), (lane, 200), ("topic:42:7", 7)];
            let want = sqlite.lanes_around(session, &at, 3).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(want.iter().all(|(b, a)| b.is_empty() && a.is_empty()), session == "u");
            // Each lane read whole between the rows asked around, and a few at a time.
            for anchors_at_once in [at.len(), 1] {
                let mut got = Vec::new();
                for chunk in at.chunks(anchors_at_once) {
                    let (lanes, anchors): (Vec<&str>, Vec<i64>) = chunk.iter().copied().unzip();
                    got.extend(reads::lanes_around(&reader, session, &lanes, &anchors, 3).await.unwrap_or_else(|e| ok(e)));
                }
                assert_eq!(got, want, "{session}, {anchors_at_once} at once");
            }
        }
        assert!(found > 500, "{found}");
        let seqs: Vec<i64> = (1..=240).collect();
        let ranked: std::collections::HashMap<i64, crate::memory::message::RankingRow> = reads::messages_at(&reader, &seqs)
            .await
            .unwrap_or_else(|e| ok(e))
            .iter()
            .map(|(_, m)| (m.seq, crate::memory::message::RankingRow::of(m)))
            .collect();
        let want = sqlite
            .ranking_rows(seqs.iter().copied())
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(ranked, want);
        assert_eq!(ranked.values().filter(|r| r.asks).count(), 48);
        let mut read = reads::messages_at(&reader, &seqs).await.unwrap_or_else(|e| ok(e));
        read.retain(|(session, _)| session == "s");
        read.sort_by_key(|(_, m)| m.seq);
        let read: Vec<_> = read.into_iter().map(|(_, m)| m).collect();
        assert_eq!(read, sqlite.messages_at("s", &seqs).unwrap_or_else(|e| panic!("{e}")));
    });
}

#[test]
fn records_are_written_superseded_and_found_as_the_sqlite_store_does() {
    use crate::memory::store::{MemoryStore, NewRecord, RecordKind};
    let Some(server) = PgServer::start() else {
        return;
    };
    let rec = |session: &'static str,
               kind: RecordKind,
               lane: &'static str,
               body: &'static str,
               range: Option<(&'static str, &'static str)>| NewRecord {
        session_id: session,
        kind,
        thread_key: lane,
        body,
        summary_version: 1,
        updated_at_ms: 5,
        message_range: range,
    };
    use RecordKind::{Fact, Outcome, Preference, SessionSummary, ThreadSummary};
    let writes = [
        rec(
            "s",
            Fact,
            "root:42",
            "My favourite colour is blue.",
            Some(("1", "1")),
        ),
        rec(
            "s",
            Fact,
            "root:42",
            "I live in Boston and work at Acme.",
            None,
        ),
        rec(
            "s",
            Fact,
            "topic:42:7",
            "The deploy key rotates on Fridays.",
            Some(("3", "3")),
        ),
        rec(
            "s",
            Preference,
            "root:42",
            "I prefer hotels with a rooftop pool.",
            None,
        ),
        rec(
            "s",
            Outcome,
            "topic:42:7",
            "We chose PostgreSQL for the memory store.",
            None,
        ),
        rec(
            "s",
            Fact,
            "topic:42:7",
            "東京タワーに行きました、とても高い",
            None,
        ),
        rec(
            "s",
            ThreadSummary,
            "root:42",
            "- Talked about colours and Boston.",
            Some(("1", "2")),
        ),
        rec(
            "s",
            ThreadSummary,
            "root:42",
            "- Talked about colours, Boston and hotels with a pool.",
            Some(("1", "4")),
        ),
        rec(
            "s",
            SessionSummary,
            "root:42",
            "- A session about moving and deploys.",
            None,
        ),
        rec(
            "t",
            Fact,
            "root:42",
            "My favourite colour is blue, said another session.",
            None,
        ),
        rec(
            "t",
            Preference,
            "root:42",
            "I prefer quiet hotels and my token is sk-ant-api03-abcdefghijklmnop",
            None,
        ),
        rec(
            "s",
            Fact,
            "root:42",
            "My favourite colour is green now.",
            None,
        ),
    ];
    let mut sqlite = MemoryStore::open(":memory:").unwrap_or_else(|e| panic!("{e}"));
    let terms = records::RecordTerms::new().unwrap_or_else(|e| panic!("{e}"));
    let rt = runtime();
    rt.block_on(async {
        let pg = migrated(&server).await;
        let reader = pg.client().await.unwrap_or_else(|e| panic!("{e}"));
        let mut marked = 0;
        for w in &writes {
            let a = sqlite.put_record(w).unwrap_or_else(|e| panic!("{e}"));
            let b = records::put_record(&pg, &terms, w)
                .await
                .unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(a, b, "{}", w.body);
            if matches!(w.kind, Fact | Preference | Outcome) {
                let x = sqlite
                    .supersede(w.session_id, w.kind, a, w.body)
                    .unwrap_or_else(|e| panic!("{e}"));
                let client = pg.client().await.unwrap_or_else(|e| panic!("{e}"));
                let y = records::supersede(&client, &terms, w.session_id, w.kind, b, w.body)
                    .await
                    .unwrap_or_else(|e| panic!("{e}"));
                assert_eq!(x, y, "{}", w.body);
                marked += y;
            }
        }
        assert_eq!(marked, 1, "green supersedes blue in s (not t's)");
        for (session, kind, lane) in [
            ("s", ThreadSummary, "root:42"),
            ("s", SessionSummary, "anything"),
            ("s", ThreadSummary, "topic:42:7"),
        ] {
            assert_eq!(
                records::record(&reader, session, kind, lane).await.ok(),
                sqlite.record(session, kind, lane).ok()
            );
        }
        for id in 1..=12 {
            assert_eq!(
                records::record_by_id(&reader, "s", id).await.ok(),
                sqlite.record_by_id("s", id).ok()
            );
        }
        let mut found = 0;
        for query in [
            "What is my favourite colour?",
            "Where does the user live?",
            "when does the deploy key rotate",
            "Can you suggest a hotel for my trip? rooftop",
            "東京タワー",
            "which database did we choose for memory",
            "colours Boston hotels",
            "what",
        ] {
            for session in ["s", "t"] {
                for lane in ["root:42", "topic:42:7"] {
                    for (k, max) in [(5, 1_000), (2, 1_000), (5, 12)] {
                        let want = sqlite
                            .search(session, query, lane, k, max)
                            .unwrap_or_else(|e| panic!("{e}"));
                        let got = records::search(&reader, &terms, session, query, lane, k, max)
                            .await
                            .unwrap_or_else(|e| panic!("{e}"));
                        assert_eq!(got, want, "{query} {session} {lane} {k} {max}");
                        found += got.len();
                        let want = sqlite
                            .search_memories(session, query, lane, k, max)
                            .unwrap_or_else(|e| panic!("{e}"));
                        let got =
                            records::search_memories(&reader, &terms, session, query, lane, k, max)
                                .await
                                .unwrap_or_else(|e| panic!("{e}"));
                        assert_eq!(got, want, "memories: {query} {session} {lane} {k} {max}");
                    }
                }
            }
        }
        assert!(found > 40, "{found}");
        // The scores themselves are SQLite's bm25(), to the bit, for both indexes.
        for (index, table, query) in [
            (
                records::Index::Words,
                "records_words",
                vec!["colour", "boston", "hotels", "pool"],
            ),
            (
                records::Index::Grams,
                "records_trigrams",
                vec!["東京タ", "タワー", "高い"],
            ),
        ] {
            let terms_of: Vec<String> = query.iter().map(ToString::to_string).collect();
            let client = pg.client().await.unwrap_or_else(|e| panic!("{e}"));
            let mut got = records::ranked(
                &client,
                &terms,
                index,
                &terms_of,
                "s",
                "$3::text IS NOT NULL",
                &"",
                100,
            )
            .await
            .unwrap_or_else(|e| panic!("{e}"))
            .into_iter()
            .map(|(score, r)| (r.id, score))
            .collect::<Vec<_>>();
            got.sort_by_key(|g| g.0);
            let expr = query
                .iter()
                .map(|q| format!("\"{q}\""))
                .collect::<Vec<_>>()
                .join(" OR ");
            let want: Vec<(i64, f64)> = sqlite
                .sqlite()
                .prepare(&format!(
                    "SELECT r.id, bm25({table}) FROM {table} JOIN records r ON r.id = {table}.rowid
                     WHERE {table} MATCH ?1 AND r.session_id = 's' ORDER BY r.id"
                ))
                .and_then(|mut st| {
                    st.query_map([&expr], |r| Ok((r.get(0)?, r.get(1)?)))?
                        .collect()
                })
                .unwrap_or_else(|e| panic!("{e}"));
            assert!(!want.is_empty());
            assert_eq!(got, want, "{table}");
        }
    });
}

#[test]
fn what_a_lane_and_a_compaction_read_is_what_the_sqlite_store_reads() {
    use crate::memory::message::{NewMessage, Role};
    use crate::memory::passages::index_terms::IndexTerms;
    use crate::memory::passages::terms::{lane_token, session_token};
    use crate::memory::store::{MemoryStore, NewRecord, RecordKind};
    let Some(server) = PgServer::start() else {
        return;
    };
    let ids: Vec<String> = (0..120).map(|i| format!("m{i}")).collect();
    let texts: Vec<String> = (0..120)
        .map(|i| {
            format!(
                "step {i}: the canary {} in region {}",
                ["passed", "failed"][i % 2],
                i % 3
            )
        })
        .collect();
    let batch: Vec<NewMessage<'_>> = (0..120)
        .map(|i| NewMessage {
            session_id: if i % 5 == 4 { "t" } else { "s" },
            chat_id: "42",
            message_id: &ids[i],
            role: if i % 2 == 0 {
                Role::User
            } else {
                Role::Assistant
            },
            text: &texts[i],
            ts_ms: 1_000 * i64::try_from(i).unwrap_or(0),
            topic_id: (i % 7 == 0).then_some("7"),
            reply_to: (i % 11 == 5).then(|| ids[i - 3].as_str()),
        })
        .collect();
    let mut sqlite = MemoryStore::open(":memory:").unwrap_or_else(|e| panic!("{e}"));
    let terms = IndexTerms::new().unwrap_or_else(|e| panic!("{e}"));
    let record_terms = records::RecordTerms::new().unwrap_or_else(|e| panic!("{e}"));
    let rt = runtime();
    rt.block_on(async {
        let pg = migrated(&server).await;
        let reader = pg.client().await.unwrap_or_else(|e| panic!("{e}"));
        let mut lanes = std::collections::BTreeSet::new();
        for chunk in batch.chunks(40) {
            for i in sqlite.ingest_batch(chunk).unwrap_or_else(|e| panic!("{e}")) {
                lanes.insert(i.thread_key);
            }
            messages::ingest_batch(&pg, &terms, chunk)
                .await
                .unwrap_or_else(|e| panic!("{e}"));
        }
        assert!(lanes.len() >= 4, "{lanes:?}");
        for lane in &lanes {
            let summary = NewRecord {
                session_id: "s",
                kind: RecordKind::ThreadSummary,
                thread_key: lane,
                body: "- a summary",
                summary_version: 1,
                updated_at_ms: 1,
                message_range: Some(("m0", "m1")),
            };
            sqlite.put_record(&summary).unwrap_or_else(|e| panic!("{e}"));
            records::put_record(&pg, &record_terms, &summary)
                .await
                .unwrap_or_else(|e| panic!("{e}"));
        }
        let e = |e: crate::core::pg::PgError| -> ! { panic!("{e}") };
        for session in ["s", "t"] {
            for id in ["m0", "m8", "m16", "m27", "m119", "none"] {
                let want = sqlite.message_by_id(session, id).unwrap_or_else(|x| panic!("{x}"));
                let got = reads::message_by_id(&reader, session, id).await.unwrap_or_else(|x| e(x));
                assert_eq!(got, want, "{session} {id}");
                assert_eq!(
                    got.map(|m| m.thread_key),
                    sqlite.lane_of(session, id).unwrap_or_else(|x| panic!("{x}"))
                );
            }
            let some = ["m40", "m9", "m3", "none"];
            let oldest = reads::oldest_seq_of(&reader, session, &some).await.unwrap_or_else(|x| e(x));
            assert_eq!(oldest, sqlite.oldest_seq_of(session, &some).unwrap_or_else(|x| panic!("{x}")));
            for lane in &lanes {
                assert_eq!(
                    reads::recent(&reader, session, lane, 7).await.unwrap_or_else(|x| e(x)),
                    sqlite.recent(session, lane, 7).unwrap_or_else(|x| panic!("{x}"))
                );
                // The summaries of s cover through m1; t has none.
                let covered = match session {
                    "s" => reads::seq_of(&reader, session, "m1", None, 0)
                        .await
                        .unwrap_or_else(|x| e(x))
                        .unwrap_or(0),
                    _ => 0,
                };
                assert_eq!(
                    reads::lane_after(&reader, session, lane, covered).await.unwrap_or_else(|x| e(x)),
                    sqlite.unsummarized(session, lane).unwrap_or_else(|x| panic!("{x}"))
                );
                for after in [0, 30] {
                    let want = sqlite
                        .lane_has_between(session, lane, after, &some)
                        .unwrap_or_else(|x| panic!("{x}"));
                    let got = reads::lane_has_between(&reader, session, lane, after, oldest.unwrap_or(i64::MAX))
                        .await
                        .unwrap_or_else(|x| e(x));
                    assert_eq!(got, want, "{session} {lane} {after}");
                    for through in ["m60", "m61", "m118", "none"] {
                        let want = sqlite
                            .user_turns_through(session, lane, after, through)
                            .unwrap_or_else(|x| panic!("{x}"));
                        let got = match reads::seq_of(&reader, session, through, Some(lane), after)
                            .await
                            .unwrap_or_else(|x| e(x))
                        {
                            Some(to) => Some(
                                reads::user_turns_between(&reader, session, lane, after, to)
                                    .await
                                    .unwrap_or_else(|x| e(x)),
                            ),
                            None => None,
                        };
                        assert_eq!(got, want, "{session} {lane} {after} {through}");
                    }
                }
                for words in [vec!["canary", "failed"], vec!["region", "passed", "step"], vec!["canary", "nothing"]] {
                    let words: Vec<String> = words.iter().map(ToString::to_string).collect();
                    let want: Vec<i64> = sqlite
                        .strong_hits_elsewhere(session, lane, &words, 4)
                        .unwrap_or_else(|x| panic!("{x}"))
                        .iter()
                        .map(|m| m.seq)
                        .collect();
                    let phrases: Vec<Vec<String>> = words
                        .iter()
                        .map(|w| terms.of_query_term(w).unwrap_or_else(|x| panic!("{x}")))
                        .collect();
                    let other = reads::has_other_lanes(&reader, session, lane).await.unwrap_or_else(|x| e(x));
                    let mut got: Vec<i64> = if other {
                        reads::rows_with_all_elsewhere(&reader, &session_token(session), &lane_token(session, lane), &phrases)
                            .await
                            .unwrap_or_else(|x| e(x))
                    } else {
                        Vec::new()
                    };
                    got.reverse();
                    got.truncate(4);
                    assert_eq!(got, want, "{session} {lane} {words:?}");
                }
                let mut st = sqlite
                    .sqlite()
                    .prepare("SELECT thread_key FROM records WHERE session_id = ?1 AND kind = 'thread_summary' AND thread_key != ?2 ORDER BY thread_key")
                    .unwrap_or_else(|x| panic!("{x}"));
                let want: Vec<String> = st
                    .query_map([session, lane.as_str()], |r| r.get(0))
                    .and_then(|rows| rows.collect())
                    .unwrap_or_else(|x| panic!("{x}"));
                assert_eq!(reads::summarized_lanes(&reader, session, lane).await.unwrap_or_else(|x| e(x)), want);
            }
        }
    });
}

#[test]
fn a_turn_is_committed_once_under_its_key_as_the_sqlite_store_does() {
    use crate::memory::message::{NewMessage, Role};
    use crate::memory::passages::index_terms::IndexTerms;
    use crate::memory::store::MemoryStore;
    let Some(server) = PgServer::start() else {
        return;
    };
    let m = |id: &'static str, role, text: &'static str| NewMessage {
        session_id: "s",
        chat_id: "42",
        message_id: id,
        role,
        text,
        ts_ms: 7,
        topic_id: None,
        reply_to: None,
    };
    let turn = [
        m("u1", Role::User, "is the canary out?"),
        m("a1", Role::Assistant, "yes, since 9:00"),
    ];
    let retry = [
        m("u1", Role::User, "is the canary out?"),
        m("a1b", Role::Assistant, "a retried answer"),
    ];
    let next = [m("u2", Role::User, "and the rollback plan?")];
    let mut sqlite = MemoryStore::open(":memory:").unwrap_or_else(|e| panic!("{e}"));
    let terms = IndexTerms::new().unwrap_or_else(|e| panic!("{e}"));
    let rt = runtime();
    rt.block_on(async {
        let pg = migrated(&server).await;
        let reader = pg.client().await.unwrap_or_else(|e| panic!("{e}"));
        let mut outcomes = Vec::new();
        for (key, batch) in [("k1", &turn[..]), ("k1", &retry[..]), ("k2", &next[..])] {
            let want = sqlite
                .commit_turn(key, "s", batch, 100)
                .unwrap_or_else(|e| panic!("{e}"));
            let got = messages::commit_turn(&pg, &terms, key, "s", batch, 100)
                .await
                .unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(got, want, "{key}");
            outcomes.push(got.is_some());
        }
        assert_eq!(outcomes, [true, false, true], "the retry wrote nothing");
        let stored = reads::recent(&reader, "s", "root:42", 10)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            stored
                .iter()
                .map(|m| m.message_id.as_str())
                .collect::<Vec<_>>(),
            ["u1", "a1", "u2"]
        );
    });
}

#[test]
fn a_lanes_summary_state_is_locked_read_and_fenced_as_the_sqlite_store_keeps_it() {
    use crate::memory::message::{NewMessage, Role};
    use crate::memory::passages::index_terms::IndexTerms;
    use crate::memory::store::{MemoryStore, NewRecord, RecordKind};
    let Some(server) = PgServer::start() else {
        return;
    };
    let mut sqlite = MemoryStore::open(":memory:").unwrap_or_else(|e| panic!("{e}"));
    let ids: Vec<String> = (0..30).map(|i| format!("m{i}")).collect();
    let texts: Vec<String> = (0..30)
        .map(|i| format!("turn {i}: I prefer window seats and we decided to ship on day {i}"))
        .collect();
    let batch: Vec<NewMessage<'_>> = (0..30)
        .map(|i| NewMessage {
            session_id: "s",
            chat_id: "42",
            message_id: &ids[i],
            role: if i % 2 == 0 {
                Role::User
            } else {
                Role::Assistant
            },
            text: &texts[i],
            ts_ms: 60_000 * i64::try_from(i).unwrap_or(0),
            topic_id: None,
            reply_to: None,
        })
        .collect();
    sqlite
        .ingest_batch(&batch)
        .unwrap_or_else(|e| panic!("{e}"));
    let policy = crate::memory::summary::CompactionPolicy::default();
    let plan = sqlite
        .plan_compaction("s", "root:42", &policy, 10_000_000, true)
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|| panic!("a forced compaction has a plan"));
    sqlite
        .apply_compaction(&plan, None, 10_000_000, Some(7))
        .unwrap_or_else(|e| panic!("{e}"));
    let summary = sqlite
        .record("s", RecordKind::ThreadSummary, "root:42")
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|| panic!("a summary"));
    let terms = IndexTerms::new().unwrap_or_else(|e| panic!("{e}"));
    let record_terms = records::RecordTerms::new().unwrap_or_else(|e| panic!("{e}"));
    let rt = runtime();
    rt.block_on(async {
        let pg = migrated(&server).await;
        messages::ingest_batch(&pg, &terms, &batch)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let mut client = pg.client().await.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            compaction::summary_state(&client, "s", "root:42")
                .await
                .ok(),
            Some((0, 0))
        );
        let (from, to) = summary.message_range.clone().unwrap_or_default();
        let tx = client.transaction().await.unwrap_or_else(|e| panic!("{e}"));
        records::put_record_in(
            &tx,
            &record_terms,
            &NewRecord {
                session_id: "s",
                kind: RecordKind::ThreadSummary,
                thread_key: "root:42",
                body: &summary.body,
                summary_version: summary.summary_version,
                updated_at_ms: summary.updated_at_ms,
                message_range: Some((&from, &to)),
            },
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
        compaction::raise_fence(&tx, "s", "root:42", 7)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        compaction::raise_fence(&tx, "s", "root:42", 3)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            compaction::summary_state(&tx, "s", "root:42").await.ok(),
            Some((summary.summary_version, 7))
        );
        tx.commit().await.unwrap_or_else(|e| panic!("{e}"));
        // The fence as the SQLite store checks it: an older token is refused there.
        assert!(sqlite.check_fence("s", "root:42", Some(3)).is_err());
        assert_eq!(
            sqlite.check_fence("s", "root:42", Some(7)).ok(),
            Some(summary.summary_version)
        );
        // What the compaction stated is held in both; other words are not.
        let stated: Vec<(RecordKind, String)> = sqlite
            .sqlite()
            .prepare(
                "SELECT kind, body FROM records WHERE kind IN ('fact', 'preference', 'outcome')",
            )
            .and_then(|mut st| {
                st.query_map([], |r| {
                    let kind: String = r.get(0)?;
                    Ok((
                        RecordKind::parse(&kind).unwrap_or(RecordKind::Fact),
                        r.get(1)?,
                    ))
                })?
                .collect()
            })
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(!stated.is_empty());
        for (kind, body) in &stated {
            records::put_record(
                &pg,
                &record_terms,
                &NewRecord {
                    session_id: "s",
                    kind: *kind,
                    thread_key: "root:42",
                    body,
                    summary_version: 1,
                    updated_at_ms: 1,
                    message_range: None,
                },
            )
            .await
            .unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(
                compaction::statement_held(&client, "s", *kind, body)
                    .await
                    .ok(),
                Some(true)
            );
        }
        assert_eq!(
            compaction::statement_held(&client, "s", RecordKind::Fact, "never said")
                .await
                .ok(),
            Some(false)
        );
    });
}

#[test]
fn what_names_preferences_and_focus_read_is_what_the_sqlite_store_reads() {
    use crate::memory::message::{NewMessage, Role};
    use crate::memory::passages::index_terms::IndexTerms;
    use crate::memory::passages::terms::{body_expression, session_token};
    use crate::memory::store::{MemoryStore, NewRecord, RecordKind};
    let Some(server) = PgServer::start() else {
        return;
    };
    let ids: Vec<String> = (0..90).map(|i| format!("m{i}")).collect();
    let texts: Vec<String> = (0..90)
        .map(|i| match i % 3 {
            0 => format!("Hi Mel, turn {i} here"),
            1 => format!("thanks, Caroline! answer {i}"),
            _ => format!("I prefer tea in the morning, note {i}"),
        })
        .collect();
    let batch: Vec<NewMessage<'_>> = (0..90)
        .map(|i| NewMessage {
            session_id: "s",
            chat_id: "42",
            message_id: &ids[i],
            role: if i % 2 == 0 {
                Role::User
            } else {
                Role::Assistant
            },
            text: &texts[i],
            ts_ms: 1_000 * i64::try_from(i).unwrap_or(0),
            topic_id: (i % 4 == 0).then_some("7"),
            reply_to: None,
        })
        .collect();
    let mut sqlite = MemoryStore::open(":memory:").unwrap_or_else(|e| panic!("{e}"));
    sqlite
        .ingest_batch(&batch)
        .unwrap_or_else(|e| panic!("{e}"));
    let terms = IndexTerms::new().unwrap_or_else(|e| panic!("{e}"));
    let record_terms = records::RecordTerms::new().unwrap_or_else(|e| panic!("{e}"));
    let rt = runtime();
    rt.block_on(async {
        let pg = migrated(&server).await;
        let reader = pg.client().await.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(reads::messages_version(&reader).await.ok(), Some(0));
        messages::ingest_batch(&pg, &terms, &batch)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(reads::messages_version(&reader).await.ok(), Some(90));
        for i in (2..90).step_by(6) {
            let pref = NewRecord {
                session_id: "s",
                kind: RecordKind::Preference,
                thread_key: "root:42",
                body: &texts[i],
                summary_version: 1,
                updated_at_ms: 1,
                message_range: Some((&ids[i], &ids[i])),
            };
            sqlite.put_record(&pref).unwrap_or_else(|e| panic!("{e}"));
            records::put_record(&pg, &record_terms, &pref)
                .await
                .unwrap_or_else(|e| panic!("{e}"));
        }
        for (name, limit) in [("Mel", 64), ("caroline", 5), ("Nobody", 64)] {
            let expr = format!(
                "scope : \"{}\" AND {}",
                session_token("s"),
                body_expression(&[name.to_string()], "OR")
            );
            let want: Vec<i64> = sqlite
                .sqlite()
                .prepare(&format!(
                    "SELECT rowid FROM messages_index WHERE messages_index MATCH ?1 LIMIT {limit}"
                ))
                .and_then(|mut st| st.query_map([&expr], |r| r.get(0))?.collect())
                .unwrap_or_else(|e| panic!("{e}"));
            let tokens = terms.of_query_term(name).unwrap_or_else(|e| panic!("{e}"));
            let got = reads::first_rows(&reader, &session_token("s"), &tokens, limit)
                .await
                .unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(got, want, "{name}");
        }
        for below in [i64::MAX, 40] {
            let want: Vec<(i64, String, Role, i64)> = sqlite
                .sqlite()
                .prepare(
                    "SELECT m.seq, m.thread_key, m.role, m.ts_ms FROM records r
                     JOIN messages m ON m.session_id = r.session_id AND m.message_id = r.range_from
                     WHERE r.session_id = 's' AND r.kind = 'preference' AND m.seq < ?1
                     ORDER BY r.id DESC",
                )
                .and_then(|mut st| {
                    st.query_map([below], |r| {
                        let role: String = r.get(2)?;
                        Ok((r.get(0)?, r.get(1)?, Role::parse(&role), r.get(3)?))
                    })?
                    .collect()
                })
                .unwrap_or_else(|e| panic!("{e}"));
            assert!(!want.is_empty());
            let got = reads::stated_preference_rows(&reader, "s", below)
                .await
                .unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(got, want, "{below}");
        }
        for (lane, except) in [
            ("root:42", "m89"),
            ("root:42", "m1"),
            ("topic:42:7", "m0"),
            ("none", "m0"),
        ] {
            let want: Option<String> = sqlite
                .sqlite()
                .query_row(
                    "SELECT message_id FROM messages WHERE session_id = 's' AND thread_key = ?1
                     AND role = 'assistant' AND message_id != ?2 ORDER BY seq DESC LIMIT 1",
                    [lane, except],
                    |r| r.get(0),
                )
                .ok();
            let got = reads::last_assistant_id(&reader, "s", lane, except)
                .await
                .unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(got, want, "{lane} {except}");
        }
    });
}

#[test]
fn conversations_are_stored_replaced_and_read_back_as_the_sqlite_store_does() {
    use crate::memory::history::{Conversation, Turn};
    use crate::memory::store::MemoryStore;
    let Some(server) = PgServer::start() else {
        return;
    };
    let conv = |session: &str, end: i64, summary: &str| Conversation {
        chat_id: "chat#1".into(),
        session_id: session.into(),
        started_at_ms: end - 3_600_000,
        ended_at_ms: end,
        summary: summary.into(),
        turns: vec![
            Turn {
                human: true,
                text: format!("hello from {session}"),
                ts_ms: Some(end - 60_000),
            },
            Turn {
                human: false,
                text: "hi! \"quoted\" \u{1F600}".into(),
                ts_ms: None,
            },
        ],
    };
    let day = 86_400_000;
    let stored = [
        conv("b", 10 * day, "Booked the venue."),
        conv(
            "a",
            10 * day,
            "Same end, other session; key sk-ant-api03-abcdefghijklmnopqrst",
        ),
        conv("c", 3 * day, "An old one."),
        conv("b", 11 * day, "Booked the venue, then moved it."),
    ];
    let mut sqlite = MemoryStore::open(":memory:").unwrap_or_else(|e| panic!("{e}"));
    let rt = runtime();
    rt.block_on(async {
        let pg = migrated(&server).await;
        let client = pg.client().await.unwrap_or_else(|e| panic!("{e}"));
        for c in &stored {
            sqlite.put_conversation(c).unwrap_or_else(|e| panic!("{e}"));
            conversations::put_conversation(&client, c)
                .await
                .unwrap_or_else(|e| panic!("{e}"));
        }
        for (since, until, turns_since) in [
            (0, 20 * day, 0),
            (4 * day, 20 * day, 11 * day),
            (0, 10 * day, 20 * day),
        ] {
            let want = sqlite
                .conversations("chat#1", since, until, turns_since)
                .unwrap_or_else(|e| panic!("{e}"));
            let got = conversations::conversations(&client, "chat#1", since, until, turns_since)
                .await
                .unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(got, want, "{since} {until} {turns_since}");
        }
        for until in [2 * day, 10 * day, 20 * day] {
            assert_eq!(
                conversations::last_conversation_end(&client, "chat#1", until)
                    .await
                    .ok(),
                sqlite.last_conversation_end("chat#1", until).ok()
            );
        }
    });
}

#[test]
fn vectors_are_kept_counted_and_read_as_the_sqlite_store_does() {
    use crate::memory::message::{NewMessage, Role};
    use crate::memory::passages::index_terms::IndexTerms;
    use crate::memory::passages::vectors::{to_blob, unit};
    use crate::memory::store::MemoryStore;
    let Some(server) = PgServer::start() else {
        return;
    };
    let ids: Vec<String> = (0..20).map(|i| format!("m{i}")).collect();
    let texts: Vec<String> = (0..20).map(|i| format!("message {i}")).collect();
    let batch: Vec<NewMessage<'_>> = (0..20)
        .map(|i| NewMessage {
            session_id: "s",
            chat_id: "42",
            message_id: &ids[i],
            role: Role::User,
            text: &texts[i],
            ts_ms: i64::try_from(i).unwrap_or(0),
            topic_id: (i % 3 == 0).then_some("7"),
            reply_to: None,
        })
        .collect();
    let vector = |i: usize| -> Vec<f32> {
        #[allow(clippy::cast_precision_loss)]
        let x = i as f32;
        vec![x, 1.0, -x / 3.0, 0.5]
    };
    let rounds: [Vec<(String, Vec<f32>)>; 2] = [
        (0..12)
            .map(|i| (ids[i].clone(), vector(i)))
            .chain([("nope".into(), vector(1))])
            .collect(),
        [3, 15, 15, 19]
            .iter()
            .map(|&i| (ids[i].clone(), vector(i + 1)))
            .collect(),
    ];
    let mut sqlite = MemoryStore::open(":memory:").unwrap_or_else(|e| panic!("{e}"));
    sqlite
        .ingest_batch(&batch)
        .unwrap_or_else(|e| panic!("{e}"));
    let terms = IndexTerms::new().unwrap_or_else(|e| panic!("{e}"));
    let rt = runtime();
    rt.block_on(async {
        let pg = migrated(&server).await;
        messages::ingest_batch(&pg, &terms, &batch)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let client = pg.client().await.unwrap_or_else(|e| panic!("{e}"));
        for round in &rounds {
            let entries: Vec<(&str, &[f32])> = round.iter().map(|(id, v)| (id.as_str(), v.as_slice())).collect();
            let want = sqlite.set_vectors("s", &entries).unwrap_or_else(|e| panic!("{e:?}"));
            let blobs: Vec<(&str, Vec<u8>)> = round
                .iter()
                .map(|(id, v)| (id.as_str(), to_blob(&unit(v).unwrap_or_else(|e| panic!("{e:?}")))))
                .collect();
            let got = vectors::put_vectors(&client, "s", &blobs)
                .await
                .unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(got, want);
            for limit in [0, 3, 50] {
                assert_eq!(
                    vectors::unembedded(&client, "s", limit).await.ok(),
                    sqlite.unembedded("s", limit).ok(),
                    "{limit}"
                );
            }
        }
        for (below, lane) in [(i64::MAX, None), (10, None), (i64::MAX, Some("topic:42:7"))] {
            let want: Vec<(i64, Vec<u8>, i64)> = sqlite
                .sqlite()
                .prepare(
                    "SELECT v.seq, v.vec, m.ts_ms FROM messages m JOIN message_vectors v ON v.seq = m.seq
                     WHERE m.session_id = 's' AND m.seq < ?1 AND (?2 IS NULL OR m.thread_key = ?2)
                     ORDER BY v.seq",
                )
                .and_then(|mut st| st.query_map(rusqlite::params![below, lane], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?.collect())
                .unwrap_or_else(|e| panic!("{e}"));
            assert!(!want.is_empty());
            let got = vectors::scope_vectors(&client, "s", below, lane)
                .await
                .unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(got, want, "{below} {lane:?}");
        }
        let counted: Vec<(String, i64)> = super::rows(&client, "SELECT session_id, vectors FROM memory_vector_counts", &[])
            .await
            .unwrap_or_else(|e| panic!("{e}"))
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect();
        let want: (String, i64) = sqlite
            .sqlite()
            .query_row("SELECT session_id, vectors FROM vector_counts", [], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(counted, [want]);
    });
}

#[test]
fn two_hosts_storing_one_session_at_once_store_each_message_once() {
    use crate::memory::message::{NewMessage, Role};
    use crate::memory::passages::index_terms::IndexTerms;
    let Some(server) = PgServer::start() else {
        return;
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    rt.block_on(async {
        let url = server.url("postgres");
        let (a, b) = (
            Pg::connect(&PgOptions::new(&url))
                .await
                .unwrap_or_else(|e| panic!("{e}")),
            Pg::connect(&PgOptions::new(&url))
                .await
                .unwrap_or_else(|e| panic!("{e}")),
        );
        a.migrate(COMPONENT, &MIGRATIONS)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        // Each host stores the same 200 messages in batches of 10, one in order and the
        // other from the end: half of what each sends the other has stored already.
        let ids: Vec<String> = (0..200).map(|i| format!("m{i}")).collect();
        let texts: Vec<String> = (0..200)
            .map(|i| format!("message {i} of the shared session"))
            .collect();
        let host = |pg: Pg, reverse: bool| {
            let (ids, texts) = (ids.clone(), texts.clone());
            async move {
                let terms = IndexTerms::new().unwrap_or_else(|e| panic!("{e}"));
                let mut order: Vec<usize> = (0..20).collect();
                if reverse {
                    order.reverse();
                }
                let mut stored = 0;
                for chunk in order {
                    let batch: Vec<NewMessage<'_>> = (chunk * 10..chunk * 10 + 10)
                        .map(|i| NewMessage {
                            session_id: "shared",
                            chat_id: "42",
                            message_id: &ids[i],
                            role: Role::User,
                            text: &texts[i],
                            ts_ms: i64::try_from(i).unwrap_or(0),
                            topic_id: None,
                            reply_to: None,
                        })
                        .collect();
                    let out = messages::ingest_batch(&pg, &terms, &batch)
                        .await
                        .unwrap_or_else(|e| panic!("{e}"));
                    stored += out.iter().filter(|i| i.ingested).count();
                }
                stored
            }
        };
        // One task, two connections: while one host waits for the session's lock, the
        // other goes on.
        let (x, y) = tokio::join!(host(a.clone(), false), host(b.clone(), true));
        assert_eq!(x + y, 200, "each message stored once: {x} + {y}");
        let client = a.client().await.unwrap_or_else(|e| panic!("{e}"));
        let rows = super::rows(
            &client,
            "SELECT count(*), count(DISTINCT message_id) FROM memory_messages
             WHERE session_id = 'shared'",
            &[],
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
        let (n, distinct): (i64, i64) = (rows[0].get(0), rows[0].get(1));
        assert_eq!((n, distinct), (200, 200));
        let stats = reads::lane_stats(&client, "shared", "root:42")
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(stats.0, 200, "the lane counts what was stored, once");
    });
}

#[test]
fn a_lanes_summary_state_is_taken_in_turns_by_two_transactions() {
    use crate::memory::passages::index_terms::IndexTerms;
    use crate::memory::store::{NewRecord, RecordKind};
    let Some(server) = PgServer::start() else {
        return;
    };
    let _ = IndexTerms::new();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    rt.block_on(async {
        let pg = migrated(&server).await;
        let terms = records::RecordTerms::new().unwrap_or_else(|e| panic!("{e}"));
        let summary = |version| NewRecord {
            session_id: "s",
            kind: RecordKind::ThreadSummary,
            thread_key: "root:42",
            body: "- a summary",
            summary_version: version,
            updated_at_ms: 1,
            message_range: Some(("m0", "m1")),
        };
        records::put_record(&pg, &terms, &summary(1))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        // A checks and holds the row; B's check waits until A has written version 2 and
        // committed, then sees it (and would find its own plan stale).
        let mut first = pg.client().await.unwrap_or_else(|e| panic!("{e}"));
        let tx = first.transaction().await.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            compaction::summary_state(&tx, "s", "root:42").await.ok(),
            Some((1, 0))
        );
        let second = {
            let pg = pg.clone();
            tokio::spawn(async move {
                let mut c = pg.client().await.unwrap_or_else(|e| panic!("{e}"));
                let tx = c.transaction().await.unwrap_or_else(|e| panic!("{e}"));
                let seen = compaction::summary_state(&tx, "s", "root:42").await.ok();
                tx.commit().await.unwrap_or_else(|e| panic!("{e}"));
                (seen, std::time::Instant::now())
            })
        };
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        records::put_record_in(&tx, &terms, &summary(2))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let committed = std::time::Instant::now();
        tx.commit().await.unwrap_or_else(|e| panic!("{e}"));
        let (seen, at) = second.await.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(seen, Some((2, 0)), "B saw what A wrote");
        assert!(at >= committed, "B's check ended after A committed");
    });
}

#[test]
fn a_links_transaction_holds_its_writes_until_commit_and_a_slow_call_times_out() {
    use crate::memory::pg::link::PgLink;
    use crate::memory::store::{on_pg, NewRecord, RecordKind};
    let Some(server) = PgServer::start() else {
        return;
    };
    // Called as the store calls it: from a plain thread, outside any runtime.
    let opts = PgOptions {
        call_timeout: std::time::Duration::from_millis(800),
        ..PgOptions::new(&server.url("postgres"))
    };
    let mut link = PgLink::connect(&opts).unwrap_or_else(|e| panic!("{e}"));
    let summary = |version| NewRecord {
        session_id: "s",
        kind: RecordKind::ThreadSummary,
        thread_key: "root:42",
        body: "- a summary",
        summary_version: version,
        updated_at_ms: 1,
        message_range: None,
    };
    let state = |link: &PgLink| {
        on_pg!(link, "state", |c| compaction::summary_state(
            c, "s", "root:42"
        ))
        .unwrap_or_else(|e| panic!("{e}"))
    };
    for (version, keep) in [(1, false), (2, true)] {
        link.begin().unwrap_or_else(|e| panic!("{e}"));
        on_pg!(link, "writing", |c| records::put_record_in(
            c,
            &link.record_terms,
            &summary(version)
        ))
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(state(&link), (version, 0), "seen inside the transaction");
        match keep {
            true => link.commit(),
            false => link.rollback(),
        }
        .unwrap_or_else(|e| panic!("{e}"));
    }
    assert_eq!(
        state(&link),
        (2, 0),
        "the rolled back write is gone, the committed one stays"
    );
    assert!(link.commit().is_err(), "no transaction is open");
    link.begin().unwrap_or_else(|e| panic!("{e}"));
    assert!(link.begin().is_err(), "one transaction at a time");
    link.rollback().unwrap_or_else(|e| panic!("{e}"));
    // A call past its timeout ends with PG_TIMEOUT, and the link goes on.
    let started = std::time::Instant::now();
    let slow = on_pg!(link, "sleeping", |c| c.batch_execute("SELECT pg_sleep(3)"));
    match slow {
        Err(crate::memory::db::MemoryError::Pg(e)) => {
            assert_eq!(e.cause, crate::core::pg::PgCause::Timeout, "{e}");
        }
        other => panic!("{other:?}"),
    }
    assert!(started.elapsed() < std::time::Duration::from_secs(2));
    assert_eq!(state(&link), (2, 0));
}

#[test]
fn a_tsvector_sent_whole_is_the_one_the_server_parses_from_its_literal() {
    use super::words::{tsvector_literal, TsVector};
    use crate::memory::passages::index_terms::IndexTerms;
    use crate::memory::passages::terms::{lane_token, session_token};
    let Some(server) = PgServer::start() else {
        return;
    };
    let terms = IndexTerms::new().unwrap_or_else(|e| panic!("{e}"));
    let many: Vec<String> = (0..17_000).map(|i| format!("w{}", i % 50)).collect();
    let texts = [
        String::new(),
        "We are running the migration on Friday".to_string(),
        "東京タワーに行きました, Straße, l'école, O'Brien's \\ back\\slash".to_string(),
        "again ".repeat(300),
        many.join(" "),
        format!("{} short", "a".repeat(3_000)),
        "scope scope word".to_string(),
    ];
    let scopes = [
        vec![session_token("s"), lane_token("s", "root:1")],
        vec!["scope".to_string()],
        Vec::new(),
    ];
    let rt = runtime();
    rt.block_on(async {
        let pg = Pg::connect(&PgOptions::new(&server.url("postgres")))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let c = pg.client().await.unwrap_or_else(|e| panic!("{e}"));
        for text in &texts {
            let made = terms.of_messages(&[text]).unwrap_or_else(|e| panic!("{e}"));
            for scope in &scopes {
                let row = c
                    .query_one(
                        "SELECT $1::tsvector::text, $2::text::tsvector::text",
                        &[
                            &TsVector::of(&made[0], scope),
                            &tsvector_literal(&made[0], scope),
                        ],
                    )
                    .await
                    .unwrap_or_else(|e| panic!("{e}"));
                let (sent, parsed): (String, String) = (row.get(0), row.get(1));
                assert_eq!(sent, parsed, "{text:.60} in {scope:?}");
            }
        }
    });
}

#[test]
fn a_large_batch_leaves_the_word_index_merged_and_its_rows_in_order() {
    use crate::memory::passages::index_terms::IndexTerms;
    let Some(server) = PgServer::start() else {
        return;
    };
    let ids: Vec<String> = (0..1_000).map(|i| format!("m{i}")).collect();
    let texts: Vec<String> = (0..1_000)
        .map(|i| {
            format!(
                "turn {i} about w{} and w{} with w{}",
                i % 97,
                i % 89,
                i * 7 % 1_009
            )
        })
        .collect();
    let batch = crate::memory::message::turns("s", &ids, &texts);
    let terms = IndexTerms::new().unwrap_or_else(|e| panic!("{e}"));
    let rt = runtime();
    rt.block_on(async {
        let pg = migrated(&server).await;
        let got = messages::ingest_batch(&pg, &terms, &batch)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(got.iter().all(|i| i.ingested));
        let c = pg.client().await.unwrap_or_else(|e| panic!("{e}"));
        c.batch_execute("CREATE EXTENSION IF NOT EXISTS pgstattuple")
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        // Written 4 MB at a time but for the last rows, whose write merged the list: what
        // is left pending is under the 64 kB a turn's rows see (8 pages).
        let pending: i32 = c
            .query_one(
                "SELECT pending_pages FROM pgstatginindex('memory_messages_words')",
                &[],
            )
            .await
            .unwrap_or_else(|e| panic!("{e}"))
            .get(0);
        assert!(pending <= 9, "{pending} pages pending");
        // The rows are numbered in the batch's order, each with its own words.
        let rows: Vec<(String, bool)> = c
            .query(
                "SELECT message_id, words @@ ('w' || (substr(message_id, 2)::int % 97))::tsquery
                 FROM memory_messages ORDER BY seq",
                &[],
            )
            .await
            .unwrap_or_else(|e| panic!("{e}"))
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect();
        assert_eq!(rows.len(), 1_000);
        for (i, (id, holds)) in rows.iter().enumerate() {
            assert_eq!((id.as_str(), *holds), (ids[i].as_str(), true));
        }
    });
}
