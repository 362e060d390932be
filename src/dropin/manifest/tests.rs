use super::*;

fn rec(id: &str, hash: &str, thread: Option<&str>) -> AttachmentRecord {
    AttachmentRecord {
        artifact_id: id.into(),
        display_name: format!("{id}.png"),
        media_type: "image/png".into(),
        content_hash: hash.into(),
        source_message_id: "1.1".into(),
        source_thread_id: thread.map(String::from),
        included_at_turn: 1,
    }
}

#[test]
fn key_is_the_seed_constant() {
    assert_eq!(
        ATTACHMENT_MANIFEST_KEY,
        "openclaw:claude-sdk-attachment-manifest"
    );
}

#[test]
fn serializes_as_entries_keyed_by_artifact_in_order() {
    let m = Manifest {
        records: vec![rec("F2", "h2", None), rec("F1", "h1", Some("9.9"))],
    };
    let s = serde_json::to_string(&m).unwrap_or_default();
    assert!(
        s.starts_with(r#"{"entries":{"F2":{"artifact_id":"F2""#),
        "{s}"
    );
    let (back, dropped) = parse_manifest_data(&s).unwrap_or_default();
    assert_eq!(back, m);
    assert!(dropped.is_empty());
}

#[test]
fn check_matches_by_id_then_hash() {
    let m = Manifest {
        records: vec![rec("F1", "h1", None)],
    };
    assert_eq!(m.check("F1", Some("zz")).0, MatchKind::ArtifactId);
    assert_eq!(m.check("F9", Some("h1")).0, MatchKind::ContentHash);
    assert_eq!(
        m.check("F9", Some("h1")).1.map(|r| r.artifact_id.as_str()),
        Some("F1")
    );
    assert_eq!(m.check("F9", None).0, MatchKind::None);
    assert_eq!(m.check("F9", Some("")).0, MatchKind::None);
}

#[test]
fn invalid_records_are_dropped_one_by_one() {
    let data = r#"{"entries":{
        "F1":{"artifact_id":"F1","display_name":"a","media_type":"image/png","content_hash":"h","source_message_id":"1","source_thread_id":null,"included_at_turn":1},
        "F2":{"artifact_id":"F2","display_name":"b"},
        "F3":{"artifact_id":"OTHER","display_name":"c","media_type":"image/png","content_hash":"h","source_message_id":"1","source_thread_id":null,"included_at_turn":1},
        "F4":{"artifact_id":"F4","display_name":"","media_type":"image/png","content_hash":"h","source_message_id":"1","source_thread_id":null,"included_at_turn":1},
        "F5":{"artifact_id":"F5","display_name":"e","media_type":"image/png","content_hash":"h","source_message_id":"1","source_thread_id":"7.7","included_at_turn":-1}
    }}"#;
    let (m, dropped) = parse_manifest_data(data).unwrap_or_default();
    assert_eq!(m.records.len(), 1);
    assert_eq!(m.records[0].artifact_id, "F1");
    let keys: Vec<_> = dropped.iter().map(|d| d.key.as_str()).collect();
    assert_eq!(keys, vec!["F2", "F3", "F4", "F5"]);
}

#[test]
fn unusable_data_is_none() {
    assert!(parse_manifest_data("not json").is_none());
    assert!(parse_manifest_data("{}").is_none());
    assert!(parse_manifest_data(r#"{"entries":[]}"#).is_none());
    assert!(parse_manifest_data(r#"{"entries":{"F":1}}"#).is_none());
    assert!(parse_manifest_data(r#"{"entries":{}}"#).is_some());
}

#[test]
fn duplicate_keys_keep_first_position_last_value() {
    let a = r#"{"artifact_id":"A","display_name":"one","media_type":"t","content_hash":"h","source_message_id":"1","source_thread_id":null,"included_at_turn":1}"#;
    let a2 = a.replace("one", "two");
    let b = a.replace("\"A\"", "\"B\"");
    let data = format!(r#"{{"entries":{{"A":{a},"B":{b},"A":{a2}}}}}"#);
    let (m, _) = parse_manifest_data(&data).unwrap_or_default();
    let names: Vec<_> = m
        .records
        .iter()
        .map(|r| (r.artifact_id.as_str(), r.display_name.as_str()))
        .collect();
    assert_eq!(names, vec![("A", "two"), ("B", "one")]);
}

#[test]
fn strict_validation_names_the_record_field() {
    let ok = serde_json::to_string(&Manifest {
        records: vec![rec("F1", "h1", None)],
    })
    .unwrap_or_default();
    assert_eq!(validate_manifest_json(&ok).map(|m| m.records.len()), Ok(1));
    let bad = ok.replace("\"h1\"", "7");
    let e = validate_manifest_json(&bad).err();
    assert_eq!(
        e.map(|e| (e.kind, e.path)),
        Some((
            input::ErrorKind::Type,
            "entries.F1.content_hash".to_string()
        ))
    );
    let wrong_key = ok.replacen("\"F1\":", "\"F2\":", 1);
    let e = validate_manifest_json(&wrong_key).err();
    assert_eq!(
        e.map(|e| e.path),
        Some("entries.F2.artifact_id".to_string())
    );
    let e = validate_manifest_json("{}").err();
    assert_eq!(e.map(|e| e.path), Some("entries".to_string()));
}
