use super::*;

#[test]
fn base64_matches_rfc_4648_vectors() {
    for (raw, enc) in [
        ("", ""),
        ("f", "Zg=="),
        ("fo", "Zm8="),
        ("foo", "Zm9v"),
        ("foob", "Zm9vYg=="),
        ("fooba", "Zm9vYmE="),
        ("foobar", "Zm9vYmFy"),
    ] {
        assert_eq!(base64(raw.as_bytes()), enc);
    }
    assert_eq!(base64(&[0xff, 0xfe, 0xfd]), "//79");
}

#[test]
fn blocks_by_media_type() {
    let (b, inline) = content_block("F1", Some("a.png"), "image/png", b"png", 100);
    assert!(inline);
    assert_eq!(b["type"], "image");
    assert_eq!(b["source"]["data"], "cG5n");
    let (b, _) = content_block("F2", None, "application/pdf", b"%PDF", 100);
    assert_eq!(
        (b["type"].as_str(), b["source"]["type"].as_str()),
        (Some("document"), Some("base64"))
    );
    let (b, _) = content_block(
        "F3",
        Some("notes.md"),
        "text/markdown; charset=utf-8",
        "héllo".as_bytes(),
        100,
    );
    assert_eq!(b["source"]["data"], "héllo");
    assert_eq!(b["title"], "notes.md");
    let (b, inline) = content_block("F4", None, "video/mp4", b"x", 100);
    assert!(!inline);
    assert_eq!(b["type"], "text");
    let (b, inline) = content_block("F5", Some("big.png"), "image/png", &[0; 101], 100);
    assert!(!inline);
    assert!(b["text"]
        .as_str()
        .unwrap_or_default()
        .contains("larger than the 100 B limit"));
}
