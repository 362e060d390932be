use super::*;
use crate::channel::slack::NoNames;
use proptest::prelude::*;
use serde_json::json;

#[test]
fn a_snowflake_reads_as_its_millisecond_and_low_bits() {
    // 2026-11-20T09:00:00Z, 7th id of that millisecond.
    let ms: u64 = 1_795_165_200_000;
    let id = ((ms - DISCORD_EPOCH_MS) << 22) | 7;
    assert_eq!(
        snowflake_ts(&id.to_string()).as_deref(),
        Some("1795165200.000000007")
    );
    assert_eq!(snowflake_ts("0").as_deref(), Some("1420070400.000000000"));
    for bad in [
        "",
        "12a",
        "-5",
        "123456789012345678901",
        "18446744073709551616",
    ] {
        assert_eq!(snowflake_ts(bad), None, "{bad}");
    }
}

proptest! {
    #[test]
    fn snowflake_order_is_ts_order_within_a_millisecond_window(a in 0u64..(1u64 << 60), b in 0u64..(1u64 << 60)) {
        let (ka, kb) = (
            ts_key(&snowflake_ts(&a.to_string()).unwrap_or_default()),
            ts_key(&snowflake_ts(&b.to_string()).unwrap_or_default()),
        );
        prop_assert!(ka.is_some() && kb.is_some());
        // Different milliseconds order by time; the same millisecond by the low digits.
        if a >> 22 != b >> 22 {
            prop_assert_eq!((a >> 22).cmp(&(b >> 22)), ka.cmp(&kb));
        } else if (a & 0x3F_FFFF) < 1_000_000 && (b & 0x3F_FFFF) < 1_000_000 {
            prop_assert_eq!(a.cmp(&b), ka.cmp(&kb));
        }
    }
}

#[test]
fn markup_reads_mentions_emoji_times_and_commands() {
    let m = json!({ "mentions": [{ "id": "42", "username": "bo", "global_name": "Bo" }] });
    let cases = [
        ("hi <@42>", "hi @Bo"),
        ("hi <@!42>", "hi @Bo"),
        ("hi <@77>", "hi @77"),
        ("in <#9>", "in #9"),
        ("<@&5> ping", "@role ping"),
        (
            "<:party_parrot:123> <a:dance:456>",
            ":party_parrot: :dance:",
        ),
        ("at <t:0:R>", "at 1970-01-01T00:00:00Z"),
        ("run </deploy:99>", "run /deploy"),
        ("a < b and <c>", "a < b and <c>"),
        ("open <", "open <"),
        ("<:bad:x>", "<:bad:x>"),
    ];
    for (raw, want) in cases {
        assert_eq!(markup::plain_text(raw, &m, &NoNames), want, "{raw}");
    }
}

#[test]
fn the_directory_forgets_the_oldest_thread_past_its_bound() {
    let mut d = ThreadDirectory::default();
    for i in 0..THREADS_REMEMBERED {
        d.open(&format!("{}", 1_000_000 + i), "P");
    }
    d.open("9999999", "Q");
    assert_eq!(d.len(), THREADS_REMEMBERED);
    assert_eq!(d.parent_of("1000000"), None);
    assert_eq!(d.parent_of("9999999"), Some("Q"));
    d.close("9999999");
    assert_eq!(d.parent_of("9999999"), None);
}

fn dispatch(t: &str, d: serde_json::Value) -> serde_json::Value {
    json!({ "op": 0, "t": t, "s": 1, "d": d })
}

#[test]
fn a_text_channel_under_a_category_is_not_a_thread() {
    let d = json!({ "id": "10", "type": 0, "name": "general", "parent_id": "3", "guild_id": "1" });
    let out = gateway_event(
        &dispatch("CHANNEL_CREATE", d),
        &ThreadDirectory::default(),
        &NoNames,
    );
    let out = out.unwrap_or_else(|e| panic!("{e}"));
    assert!(out.threads.is_empty());
    assert_eq!(
        out.channels,
        vec![("10".into(), Some("general".into()), Some("1".into()))]
    );
}

#[test]
fn a_thread_list_sync_opens_each_thread() {
    let d = json!({ "guild_id": "1", "threads": [
        { "id": "20", "type": 11, "parent_id": "10", "name": "a" },
        { "id": "21", "type": 12, "parent_id": "10", "name": "b" },
    ] });
    let out = gateway_event(
        &dispatch("THREAD_LIST_SYNC", d),
        &ThreadDirectory::default(),
        &NoNames,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        out.threads,
        vec![
            ("20".into(), Some("10".into())),
            ("21".into(), Some("10".into()))
        ]
    );
}

#[test]
fn a_forward_is_not_a_reply_and_a_started_thread_gives_its_count() {
    let m = json!({
        "id": "1175835600000000000", "channel_id": "10", "content": "fwd",
        "author": { "id": "1", "username": "a" },
        "message_reference": { "type": 1, "message_id": "5", "channel_id": "99" },
        "thread": { "id": "1175835600000000000", "message_count": 4, "last_message_id": "1175835700000000000" },
    });
    let s = message(&m, "d", None, &NoNames).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.reply_to(), None);
    assert_eq!(s.reply_count(), 4);
    assert_eq!(
        s.latest_reply(),
        snowflake_ts("1175835700000000000").as_deref()
    );
}

#[test]
fn an_update_without_content_is_partial_and_ignored() {
    let d = json!({ "id": "1175835600000000000", "channel_id": "10", "embeds": [] });
    let out = gateway_event(
        &dispatch("MESSAGE_UPDATE", d),
        &ThreadDirectory::default(),
        &NoNames,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        matches!(&out.events[..], [Event::Ignored { kind }] if kind == "MESSAGE_UPDATE/partial")
    );
}

#[test]
fn guild_create_names_channels_and_opens_active_threads() {
    let d = json!({ "id": "1", "name": "guild", "channels": [
        { "id": "10", "type": 0, "name": "general", "parent_id": "3" },
    ], "threads": [
        { "id": "20", "type": 11, "parent_id": "10", "name": "rollout" },
    ] });
    let out = gateway_event(
        &dispatch("GUILD_CREATE", d),
        &ThreadDirectory::default(),
        &NoNames,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.threads, vec![("20".into(), Some("10".into()))]);
    assert_eq!(
        out.channels[0],
        ("10".into(), Some("general".into()), Some("1".into()))
    );
}
