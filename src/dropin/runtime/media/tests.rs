use super::*;
use crate::dropin::manifest::AttachmentRecord;
use proptest::prelude::*;

fn scope(provider: &str, session: &str) -> MediaSession {
    MediaSession {
        provider: provider.into(),
        session: session.into(),
    }
}

fn image(name: &str, hash: &str, bytes: u64) -> MediaItem {
    MediaItem {
        artifact_id: Some(format!("F-{name}")),
        filename: Some(name.into()),
        media_type: "image/png".into(),
        content_hash: hash.into(),
        byte_length: bytes,
        durable_url: None,
        has_data: false,
    }
}

fn opts(now: f64) -> PlanOptions<'static> {
    PlanOptions {
        inline_max_bytes: DEFAULT_INLINE_MAX_BYTES,
        file_refs: true,
        manifest: None,
        now_ms: now,
    }
}

#[test]
fn limits_are_the_documented_numbers() {
    assert_eq!(DEFAULT_INLINE_MAX_BYTES, 262_144);
    assert_eq!(MAX_INLINE_IMAGE_BYTES, 5 * 1024 * 1024);
    assert_eq!(MAX_INLINE_DOCUMENT_BYTES, 32 * 1024 * 1024);
    assert_eq!(MEDIA_FILE_IDS_KEY, "openclaw:claude-sdk-media-file-ids");
    assert_eq!(backoff(1), 30_000.0);
    assert_eq!(backoff(2), 60_000.0);
    assert_eq!(backoff(40), 3_600_000.0);
}

// The same image across turns: inline first, the persisted id afterwards.
#[test]
fn reused_media_goes_inline_once_then_by_file_id() {
    let mut m = MediaState::default();
    let s = scope("anthropic", "s1");
    let big = image("chart.png", "h1", 900_000);
    let p = m.plan(&s, std::slice::from_ref(&big), &opts(0.0));
    assert_eq!(
        (p[0].mode, p[0].reason, p[0].persist),
        (MediaMode::Inline, "not_persisted_yet", true)
    );
    assert_eq!(p[0].block["source"]["type"], "base64");
    let out = m.persisted(&s, &[("chart.png".into(), "file_abc".into())], &[], 1.0);
    assert_eq!((out.learned, out.unmatched), (1, 0));
    let p = m.plan(&s, &[big], &opts(2.0));
    assert_eq!(
        (p[0].mode, p[0].reason),
        (MediaMode::File, "persisted_file")
    );
    assert_eq!(
        p[0].block,
        json!({"type": "image", "source": {"type": "file", "file_id": "file_abc"}})
    );
    assert_eq!(p[0].transcript["reference"], "file");
    assert_eq!(p[0].transcript["file_id"], "file_abc");
}

// Persistence failure: inline fallback with a marker and a backoff.
#[test]
fn a_persistence_failure_falls_back_inline_with_a_marker() {
    let mut m = MediaState::default();
    let s = scope("anthropic", "s1");
    let item = image("scan.png", "h2", 700_000);
    m.plan(&s, std::slice::from_ref(&item), &opts(0.0));
    let out = m.persisted(
        &s,
        &[],
        &[("scan.png".into(), "quota exceeded".into())],
        1_000.0,
    );
    assert_eq!(out.failed.len(), 1);
    assert!(out.failed[0].contains("quota exceeded"));
    let p = m.plan(&s, std::slice::from_ref(&item), &opts(2_000.0));
    assert_eq!(
        (p[0].mode, p[0].reason, p[0].persist),
        (MediaMode::Inline, "persist_failed_fallback", false)
    );
    assert_eq!(p[0].retry_at, Some(31_000.0));
    assert!(p[0]
        .marker
        .as_deref()
        .unwrap_or("")
        .contains("quota exceeded"));
    // After the backoff the file path is tried again.
    let p = m.plan(&s, std::slice::from_ref(&item), &opts(31_001.0));
    assert_eq!((p[0].reason, p[0].persist), ("persist_retry", true));
    // A second failure doubles the delay.
    m.persisted(
        &s,
        &[],
        &[("scan.png".into(), "quota exceeded".into())],
        40_000.0,
    );
    let p = m.plan(&s, &[item], &opts(40_001.0));
    assert_eq!(p[0].retry_at, Some(100_000.0));
}

// No provider/session leakage of file ids.
#[test]
fn file_ids_stay_in_their_provider_and_session() {
    let mut m = MediaState::default();
    let a = scope("anthropic", "s1");
    let item = image("logo.png", "h3", 400_000);
    m.plan(&a, std::slice::from_ref(&item), &opts(0.0));
    m.persisted(&a, &[("logo.png".into(), "file_1".into())], &[], 1.0);
    for other in [scope("anthropic", "s2"), scope("bedrock", "s1")] {
        let p = m.plan(&other, std::slice::from_ref(&item), &opts(2.0));
        assert_eq!(p[0].mode, MediaMode::Inline, "{other:?}");
        assert_eq!(p[0].file_id, None);
        assert!(!p[0].block.to_string().contains("file_1"));
    }
    assert_eq!(m.file_id(&a, "h3").as_deref(), Some("file_1"));
}

#[test]
fn preference_order_and_reasons() {
    let mut m = MediaState::default();
    let s = scope("anthropic", "s1");
    let small = image("dot.png", "h4", 1_000);
    let mut url = image("map.png", "h5", 2_000_000);
    url.durable_url = Some("https://cdn.example.com/map.png".into());
    let mut insecure = image("x.png", "h6", 2_000_000);
    insecure.durable_url = Some("http://example.com/x.png".into());
    let huge = image("huge.png", "h7", MAX_INLINE_IMAGE_BYTES + 1);
    let mut video = image("clip.mp4", "h8", 10);
    video.media_type = "video/mp4".into();
    let p = m.plan(
        &s,
        &[small.clone(), url, insecure, huge, video, small],
        &opts(0.0),
    );
    let got: Vec<_> = p.iter().map(|p| (p.mode, p.reason)).collect();
    assert_eq!(
        got,
        vec![
            (MediaMode::Inline, "under_threshold"),
            (MediaMode::Url, "durable_url"),
            (MediaMode::Inline, "not_persisted_yet"),
            (MediaMode::Omit, "too_large_to_inline"),
            (MediaMode::Omit, "unsupported_media_type"),
            (MediaMode::Reference, "already_attached"),
        ]
    );
    assert_eq!(
        p[1].block["source"],
        json!({"type": "url", "url": "https://cdn.example.com/map.png"})
    );
    assert!(p[3].block["text"]
        .as_str()
        .unwrap_or("")
        .contains("inline limit"));
}

#[test]
fn the_attachment_manifest_means_already_attached() {
    let mut m = MediaState::default();
    let manifest = Manifest {
        records: vec![AttachmentRecord {
            artifact_id: "F-other".into(),
            display_name: "a.png".into(),
            media_type: "image/png".into(),
            content_hash: "h9".into(),
            source_message_id: "1.1".into(),
            source_thread_id: None,
            included_at_turn: 1,
        }],
    };
    let mut o = opts(0.0);
    o.manifest = Some(&manifest);
    let p = m.plan(
        &scope("anthropic", "s"),
        &[image("[evil]\nname.png", "h9", 10)],
        &o,
    );
    assert_eq!(p[0].mode, MediaMode::Reference);
    assert_eq!(
        p[0].block["text"],
        "[Already attached in this conversation:  evil  name.png (image/png)]"
    );
}

#[test]
fn without_file_refs_media_goes_inline_and_text_uses_a_text_source() {
    let mut m = MediaState::default();
    let mut o = opts(0.0);
    o.file_refs = false;
    let mut text = image("notes.txt", "h10", 100);
    text.media_type = "text/plain; charset=utf-8".into();
    let p = m.plan(
        &scope("p", "s"),
        &[image("a.png", "h11", 900_000), text],
        &o,
    );
    assert_eq!(
        (p[0].reason, p[0].persist),
        ("file_refs_unavailable", false)
    );
    assert_eq!(
        p[1].block,
        json!({"type": "document", "source": {"type": "text", "media_type": "text/plain"}})
    );
}

#[test]
fn the_map_persists_and_reloads() {
    let mut m = MediaState::default();
    let s = scope("anthropic", "s1");
    m.plan(
        &s,
        &[image("a.png", "ha", 300_000), image("b.png", "hb", 300_000)],
        &opts(0.0),
    );
    m.persisted(
        &s,
        &[("a.png".into(), "file_a".into())],
        &[("b.png".into(), "boom".into())],
        5.0,
    );
    let data = m.serialize(Some(&s));
    let entry = json!({"type": "custom", "customType": MEDIA_FILE_IDS_KEY, "data": data});
    let mut fresh = MediaState::default();
    let report = fresh.load(&[json!({"type": "message"}), entry]);
    assert_eq!((report.loaded, report.files, report.failures), (true, 1, 1));
    assert_eq!(fresh.file_id(&s, "ha").as_deref(), Some("file_a"));
    assert_eq!(fresh.serialize(None), data);
    let p = fresh.plan(&s, &[image("b.png", "hb", 300_000)], &opts(6.0));
    assert_eq!(p[0].reason, "persist_failed_fallback");
}

#[test]
fn loading_tolerates_malformed_entries_and_records() {
    let good = json!({"version": 1, "sessions": [{"provider": "anthropic", "session": "s1", "files": [
        {"content_hash": "h1", "file_id": "f1", "persisted_at": 1.0},
        {"content_hash": "", "file_id": "f2", "persisted_at": 1.0},
        {"content_hash": "h3"},
        7
    ]}, {"provider": "", "session": "x"}]});
    let entries = vec![
        json!({"type": "custom", "customType": MEDIA_FILE_IDS_KEY, "data": good}),
        json!({"type": "custom", "customType": MEDIA_FILE_IDS_KEY, "data": "{truncated"}),
        json!({"type": "custom", "customType": MEDIA_FILE_IDS_KEY, "data": {"version": 2}}),
    ];
    let mut m = MediaState::default();
    let r = m.load(&entries);
    assert!(r.loaded);
    assert_eq!(r.files, 1);
    assert_eq!(r.dropped.len(), 6, "{:?}", r.dropped);
    assert!(r.dropped[0].starts_with("entries[2]"));
    assert_eq!(
        m.file_id(&scope("anthropic", "s1"), "h1").as_deref(),
        Some("f1")
    );
    assert!(
        !MediaState::default()
            .load(&[json!(null), json!("x")])
            .loaded
    );
}

#[test]
fn per_session_records_are_bounded() {
    let mut m = MediaState::default();
    let s = scope("anthropic", "s1");
    let items: Vec<MediaItem> = (0..MAX_PENDING_PER_SESSION + 5)
        .map(|i| image(&format!("f{i}.png"), &format!("h{i}"), 300_000))
        .collect();
    m.plan(&s, &items, &opts(0.0));
    let files: Vec<(String, String)> = (0..MAX_PENDING_PER_SESSION + 5)
        .map(|i| (format!("f{i}.png"), format!("file_{i}")))
        .collect();
    let out = m.persisted(&s, &files, &[], 1.0);
    assert_eq!(out.learned as usize, MAX_PENDING_PER_SESSION);
    assert_eq!(out.unmatched, 5);
    assert_eq!(MAX_FILES_PER_SESSION, 10_000);
}

/// Cases the loader property test runs (reported in the closing note).
pub const FUZZ_CASES: u32 = 1024;

fn junk() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<f64>().prop_map(|f| json!(f)),
        "[a-z_]{0,8}".prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::vec(
                (
                    prop_oneof![
                        Just("version".to_string()),
                        Just("sessions".to_string()),
                        Just("files".to_string()),
                        Just("provider".to_string()),
                        Just("session".to_string()),
                        Just("content_hash".to_string()),
                        Just("file_id".to_string()),
                        "[a-z_]{1,6}"
                    ],
                    inner
                ),
                0..4
            )
            .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(FUZZ_CASES))]

    /// Arbitrary data under the key never panics, and what loads serializes again.
    #[test]
    fn loading_junk_is_total(data in junk(), as_text in any::<bool>()) {
        let data = if as_text { Value::String(data.to_string()) } else { data };
        let mut m = MediaState::default();
        let r = m.load(&[json!({"type": "custom", "customType": MEDIA_FILE_IDS_KEY, "data": data})]);
        let text = m.serialize(None);
        let mut again = MediaState::default();
        let r2 = again.load(&[json!({"type": "custom", "customType": MEDIA_FILE_IDS_KEY, "data": text})]);
        // Records overwritten by a later duplicate hash are not written twice.
        prop_assert!(r2.files <= r.files);
        prop_assert!(r2.dropped.is_empty());
        prop_assert_eq!(again.serialize(None), text);
    }
}
