use super::*;

#[test]
fn provider_keys_tokens_and_credentials_are_redacted() {
    let cases = [
        (
            "use sk-ant-api03-AbCdEf0123456789xyz now",
            "use [redacted] now",
        ),
        ("slack xoxb-1234567890-abcdefghijkl", "slack [redacted]"),
        (
            "gh token ghp_0123456789abcdefghijABCDEFGHIJ0123",
            "gh token [redacted]",
        ),
        ("aws AKIAIOSFODNN7EXAMPLE key", "aws [redacted] key"),
        (
            "Authorization: Bearer abcdef0123456789abcdef",
            "Authorization: Bearer [redacted]",
        ),
        ("the password: hunter2, ok", "the password: [redacted], ok"),
        ("API_KEY=abc123def", "API_KEY=[redacted]"),
        (
            "{\"token\": \"t0k3n-value\"}",
            "{\"token\": \"[redacted]\"}",
        ),
        (
            "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36P end",
            "jwt [redacted] end",
        ),
        (
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY----- done",
            "[redacted] done",
        ),
    ];
    for (input, want) in cases {
        assert_eq!(redact(input), want, "{input}");
    }
}

#[test]
fn ordinary_text_is_left_as_it_is() {
    for text in [
        "ask the team about the sk- prefix",
        "the token bucket refills every minute",
        "passwords must be rotated quarterly",
        "deploy v2.4 to prod, then tokenize the logs",
        "xoxb- is how Slack bot tokens start",
        "日本語のテキスト、パスワード: なし",
        "",
    ] {
        assert_eq!(redact(text), text, "{text}");
    }
}

#[test]
fn redaction_is_idempotent_and_keeps_multibyte_text() {
    let text = "résumé 😀 password=s3cr3t 😀 sk-proj-ABCDEFGHIJKLMNOPQRST";
    let once = redact(text);
    assert_eq!(once, "résumé 😀 password=[redacted] 😀 [redacted]");
    assert_eq!(redact(&once), once);
}
