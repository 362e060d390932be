use super::*;

#[test]
fn claude_code_jsonl_keeps_text_turns_and_drops_tools_thinking_and_system() {
    let mut lines = vec![
        r#"{"type":"system","subtype":"init","timestamp":"2026-11-24T10:00:00Z"}"#.to_string(),
        r#"{"type":"user","message":{"role":"user","content":"deploy it"},"timestamp":"2026-11-24T10:00:01Z"}"#.to_string(),
    ];
    // 200 tool calls and their results between the turns.
    for i in 0..200 {
        lines.push(format!(r#"{{"type":"assistant","message":{{"role":"assistant","content":[{{"type":"thinking","thinking":"hm"}},{{"type":"tool_use","id":"t{i}","name":"Bash","input":{{"command":"ls"}}}}]}},"timestamp":"2026-11-24T10:00:02Z"}}"#));
        lines.push(format!(r#"{{"type":"user","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"t{i}","content":"{}"}}]}},"timestamp":"2026-11-24T10:00:03Z"}}"#, "x".repeat(500)));
    }
    lines.push(r#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Deployed."},{"type":"tool_use","id":"z","name":"x","input":{}}]},"timestamp":"2026-11-24T10:05:00.500Z"}"#.to_string());
    lines.push("not json at all".to_string());
    let jsonl = lines.join("\n");
    let turns = parse_jsonl(&jsonl);
    assert_eq!(
        turns,
        vec![
            Turn {
                human: true,
                text: "deploy it".into(),
                ts_ms: Some(1_795_514_401_000)
            },
            Turn {
                human: false,
                text: "Deployed.".into(),
                ts_ms: Some(1_795_514_700_500)
            },
        ]
    );
    assert!(jsonl.len() > 100_000);
}

#[test]
fn pi_and_openclaw_entries_read_the_same() {
    let jsonl = [
        r#"{"type":"session","id":"s1","timestamp":"2026-11-24T10:00:00Z"}"#,
        r#"{"type":"message","message":{"role":"user","content":[{"type":"text","text":"are they running?"},{"type":"image","data":"AAAA","mimeType":"image/png"}],"timestamp":1795514401000}}"#,
        r#"{"type":"message","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"ps","arguments":{}}],"timestamp":1795514402000}}"#,
        r#"{"type":"message","message":{"role":"toolResult","toolCallId":"c1","toolName":"ps","content":[{"type":"text","text":"3 running"}],"isError":false,"timestamp":1795514403000}}"#,
        r#"{"type":"message","message":{"role":"assistant","content":[{"type":"text","text":"Yes, all three."}],"timestamp":1795514404000}}"#,
        r#"{"type":"custom","customType":"openclaw:claude-sdk-attachment-manifest","data":"{}"}"#,
    ]
    .join("\n");
    let turns = parse_jsonl(&jsonl);
    assert_eq!(
        turns
            .iter()
            .map(|t| (t.human, t.text.as_str(), t.ts_ms))
            .collect::<Vec<_>>(),
        [
            (true, "are they running?", Some(1_795_514_401_000)),
            (false, "Yes, all three.", Some(1_795_514_404_000))
        ]
    );
}

/// A database in OpenClaw's layout (the columns the reader needs, and others it ignores).
fn openclaw_db(path: &str) {
    let conn = rusqlite::Connection::open(path).unwrap_or_else(|e| panic!("{e}"));
    conn.execute_batch(
        "CREATE TABLE session_windows (session_id TEXT PRIMARY KEY, session_key TEXT NOT NULL,
             previous_session_id TEXT, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, model TEXT);
         CREATE TABLE transcript_events (session_id TEXT NOT NULL, seq INTEGER NOT NULL, event_json TEXT,
             created_at INTEGER NOT NULL, event_zstd BLOB, event_utf8_bytes INTEGER, navigation_json TEXT,
             PRIMARY KEY (session_id, seq));
         INSERT INTO session_windows VALUES ('s1', 'agent:main:slack:channel:c1:thread:1.5', NULL, 1000, 9000, 'x');
         INSERT INTO session_windows VALUES ('s0', 'agent:main:main', NULL, 10, 20, 'x');",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let mut seq = 0;
    let mut put = |json: Option<String>, zstd: bool| {
        conn.execute(
            "INSERT INTO transcript_events (session_id, seq, event_json, created_at, event_zstd) VALUES ('s1', ?1, ?2, ?3, ?4)",
            rusqlite::params![seq, json, 1000 + seq, zstd.then_some(vec![1u8, 2, 3])],
        )
        .unwrap_or_else(|e| panic!("{e}"));
        seq += 1;
    };
    put(
        Some(r#"{"type":"session","version":4,"id":"s1"}"#.into()),
        false,
    );
    put(Some(r#"{"type":"message","message":{"role":"user","content":"are they running?","timestamp":2000}}"#.into()), false);
    for i in 0..200 {
        put(
            Some(format!(
                r#"{{"type":"message","message":{{"role":"assistant","content":[{{"type":"toolCall","id":"c{i}","name":"ps","arguments":{{}}}}],"timestamp":2100}}}}"#
            )),
            false,
        );
        put(
            Some(format!(
                r#"{{"type":"message","message":{{"role":"toolResult","toolCallId":"c{i}","toolName":"ps","content":[{{"type":"text","text":"{}"}}],"isError":false,"timestamp":2200}}}}"#,
                "z".repeat(300)
            )),
            false,
        );
    }
    put(None, true);
    put(Some(r#"{"type":"message","message":{"role":"assistant","content":[{"type":"text","text":"All three are."}],"timestamp":3000}}"#.into()), false);
    put(
        Some(
            r#"{"type":"custom","customType":"openclaw:bootstrap-context:full","data":{}}"#.into(),
        ),
        false,
    );
}

#[test]
fn an_openclaw_agent_database_reads_as_one_conversation_per_session() {
    let dir = std::env::temp_dir().join(format!("openclaw-read-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap_or(());
    let path = dir.join("openclaw-agent.sqlite");
    let path = path.to_string_lossy().to_string();
    std::fs::remove_file(&path).unwrap_or(());
    openclaw_db(&path);
    let sessions = read_openclaw(&path, 0).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(sessions.len(), 2);
    let s1 = &sessions[1];
    assert_eq!(
        (
            s1.session_key.as_str(),
            s1.started_at_ms,
            s1.ended_at_ms,
            s1.compressed_skipped
        ),
        ("agent:main:slack:channel:c1:thread:1.5", 2000, 3000, 1)
    );
    assert_eq!(
        s1.turns
            .iter()
            .map(|t| (t.human, t.text.as_str()))
            .collect::<Vec<_>>(),
        [(true, "are they running?"), (false, "All three are.")]
    );
    // Only sessions updated since the given time.
    assert_eq!(read_openclaw(&path, 100).map(|s| s.len()).unwrap_or(0), 1);
    // Another program's database, or none at all.
    let other = dir.join("other.sqlite").to_string_lossy().to_string();
    rusqlite::Connection::open(&other)
        .and_then(|c| c.execute_batch("CREATE TABLE session_windows (session_id TEXT)"))
        .unwrap_or_else(|e| panic!("{e}"));
    let err = read_openclaw(&other, 0)
        .map(|_| ())
        .err()
        .map(|e| e.to_string());
    assert_eq!(
        err.as_deref(),
        Some("not an OpenClaw transcript database: no column session_windows.session_key")
    );
    let missing = dir.join("missing.sqlite").to_string_lossy().to_string();
    let err = read_openclaw(&missing, 0)
        .map(|_| ())
        .err()
        .map(|e| e.to_string());
    assert!(
        err.as_deref().is_some_and(|e| e.starts_with("SQLite: ")),
        "{err:?}"
    );
    std::fs::remove_dir_all(&dir).unwrap_or(());
}
