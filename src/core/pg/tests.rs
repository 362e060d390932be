use super::server::{PgServer, PASSWORD};
use super::*;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// Steps that fail when run twice (no `IF NOT EXISTS`): a second run would show.
const STEPS: [&str; 2] = [
    "CREATE TABLE notes (id BIGSERIAL PRIMARY KEY, body TEXT NOT NULL)",
    "ALTER TABLE notes ADD COLUMN at_ms BIGINT NOT NULL DEFAULT 0",
];

fn quick(url: &str) -> PgOptions {
    PgOptions {
        connect_timeout: Duration::from_secs(2),
        call_timeout: Duration::from_secs(3),
        ..PgOptions::new(url)
    }
}

#[test]
fn a_schema_is_migrated_once_by_hosts_starting_together_and_a_newer_one_is_refused() {
    let Some(server) = PgServer::start() else {
        return;
    };
    runtime().block_on(async {
        let url = server.url("postgres");
        let opts = quick(&url);
        let (a, b) = tokio::join!(Pg::connect(&opts), Pg::connect(&opts));
        let (a, b) = (
            a.unwrap_or_else(|e| panic!("{e}")),
            b.unwrap_or_else(|e| panic!("{e}")),
        );
        let (x, y) = tokio::join!(a.migrate("notes", &STEPS), b.migrate("notes", &STEPS));
        let mut found = [
            x.unwrap_or_else(|e| panic!("{e}")),
            y.unwrap_or_else(|e| panic!("{e}")),
        ];
        found.sort_unstable();
        assert_eq!(
            found,
            [0, 2],
            "one host applied both steps, the other found them"
        );
        assert_eq!(a.migrate("notes", &STEPS).await.ok(), Some(2));
        // A step added later is applied alone.
        let more = [
            STEPS[0],
            STEPS[1],
            "CREATE INDEX notes_by_time ON notes (at_ms)",
        ];
        assert_eq!(a.migrate("notes", &more).await.ok(), Some(2));
        // A build that knows fewer steps refuses the newer schema and changes nothing.
        let e = a.migrate("notes", &STEPS[..1]).await.err();
        let e = e.unwrap_or_else(|| panic!("a newer schema was accepted"));
        assert_eq!(e.cause, PgCause::NewerSchema);
        assert!(
            e.message.contains("version 3") && e.message.contains("up to 1"),
            "{e}"
        );
        let client = a.client().await.unwrap_or_else(|e| panic!("{e}"));
        let v: i64 = client
            .query_one(
                "SELECT version FROM schema_versions WHERE component = 'notes'",
                &[],
            )
            .await
            .map(|r| r.get(0))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(v, 3);
    });
}

#[test]
fn a_bad_url_a_wrong_password_a_missing_database_and_no_server_are_told_apart_at_connect() {
    let Some(server) = PgServer::start() else {
        return;
    };
    runtime().block_on(async {
        let cause = |r: Result<Pg, PgError>| r.err().map(|e| (e.cause, e.message));
        let bad = cause(Pg::connect(&quick("postgres://host:notaport/db")).await);
        assert_eq!(bad.as_ref().map(|b| b.0), Some(PgCause::BadUrl), "{bad:?}");
        let wrong = server.url("postgres").replace(PASSWORD, "wrong-password");
        let auth = cause(Pg::connect(&quick(&wrong)).await);
        assert_eq!(auth.as_ref().map(|a| a.0), Some(PgCause::Auth), "{auth:?}");
        assert!(
            auth.as_ref()
                .is_some_and(|a| a.1.contains("password authentication failed")),
            "{auth:?}"
        );
        let missing = cause(Pg::connect(&quick(&server.url("no_such_db"))).await);
        assert_eq!(
            missing.as_ref().map(|m| m.0),
            Some(PgCause::NoDatabase),
            "{missing:?}"
        );
        assert!(
            missing.as_ref().is_some_and(|m| m.1.contains("no_such_db")),
            "{missing:?}"
        );
        let tls = cause(
            Pg::connect(&quick(&format!(
                "{}?sslmode=require",
                server.url("postgres")
            )))
            .await,
        );
        assert_eq!(tls.as_ref().map(|t| t.0), Some(PgCause::Tls), "{tls:?}");
        // Nothing listening: told within the connect timeout.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .unwrap_or(1);
        let started = std::time::Instant::now();
        let none = cause(Pg::connect(&quick(&format!("postgres://u:p@127.0.0.1:{port}/db"))).await);
        assert_eq!(
            none.as_ref().map(|n| n.0),
            Some(PgCause::Unreachable),
            "{none:?}"
        );
        assert!(started.elapsed() < Duration::from_secs(3));
    });
    // The password never appears in a message.
    assert_eq!(
        crate::core::url::redacted("postgres://me:s3cr@t@db.example:5432/x"),
        "postgres://me:***@db.example:5432/x"
    );
}

#[test]
fn tls_is_spoken_when_asked_for_and_the_servers_certificate_is_checked() {
    let Some(server) = PgServer::start() else {
        return;
    };
    let ca = server.enable_tls();
    let url = format!("{}?sslmode=require", server.url("postgres"));
    runtime().block_on(async {
        // Trusted through the authority given: the session is encrypted.
        let with_ca = PgOptions {
            tls_ca: Some(ca.clone()),
            ..quick(&url)
        };
        let pg = Pg::connect(&with_ca)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let c = pg.client().await.unwrap_or_else(|e| panic!("{e}"));
        let ssl: bool = c
            .query_one(
                "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
                &[],
            )
            .await
            .unwrap_or_else(|e| panic!("{e}"))
            .get(0);
        assert!(ssl);
        // The authority alone asks for TLS, whatever the URL says.
        let plain_url = PgOptions {
            tls_ca: Some(ca.clone()),
            ..quick(&server.url("postgres"))
        };
        assert!(Pg::connect(&plain_url).await.is_ok());
        // A self-signed certificate nobody vouches for is refused, as PG_TLS.
        let untrusted = Pg::connect(&quick(&url)).await.err();
        assert_eq!(
            untrusted.as_ref().map(|e| e.cause),
            Some(PgCause::Tls),
            "{untrusted:?}"
        );
        let garbage = PgOptions {
            tls_ca: Some("not a certificate".into()),
            ..quick(&url)
        };
        let bad = Pg::connect(&garbage).await.err();
        assert_eq!(bad.as_ref().map(|e| e.cause), Some(PgCause::Tls), "{bad:?}");
        // Not asked for: plain, as before.
        assert!(Pg::connect(&quick(&server.url("postgres"))).await.is_ok());
    });
}

#[test]
fn a_server_killed_mid_run_fails_calls_within_the_timeout_and_is_used_again_once_back() {
    let Some(server) = PgServer::start() else {
        return;
    };
    runtime().block_on(async {
        let pg = Pg::connect(&quick(&server.url("postgres")))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let ask = || async {
            pg.within::<_, PgError>("a query", async {
                let c = pg.client().await?;
                let n: i32 = c.query_one("SELECT 41 + 1", &[]).await?.get(0);
                Ok(n)
            })
            .await
        };
        assert_eq!(ask().await.ok(), Some(42));
        server.kill();
        let started = std::time::Instant::now();
        let down = ask()
            .await
            .err()
            .unwrap_or_else(|| panic!("answered while down"));
        assert!(
            matches!(down.cause, PgCause::Unreachable | PgCause::Timeout),
            "{down}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(4),
            "{:?}",
            started.elapsed()
        );
        server.up();
        // The pool drops the dead connection and makes a new one.
        let mut back = ask().await;
        if back.is_err() {
            back = ask().await;
        }
        assert_eq!(back.ok(), Some(42));
    });
}
