use super::*;
use serde_json::json;

fn reply(ts: &str, text: &str) -> serde_json::Value {
    json!({"messageId": ts, "ts": ts, "authorId": "U1", "authorName": "Sam", "authorIsBot": false, "text": text})
}

fn thread(replies: Vec<serde_json::Value>, total: u64) -> ThreadDataInput {
    serde_json::from_value(json!({
        "rootMessageId": "1.0", "rootTs": "1.0", "rootAuthorId": "U0", "rootAuthorName": "Ana",
        "rootAuthorIsBot": false, "rootText": "root", "replies": replies, "totalReplyCount": total,
    }))
    .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn the_budget_counts_reply_text_only_and_keeps_the_newest() {
    // 40 tokens each: a budget of 100 takes the newest two.
    let t = thread(
        (1..=5)
            .map(|i| reply(&format!("1.{i}"), &"x".repeat(160)))
            .collect(),
        9,
    );
    let (ctx, tel) = thread_context(&t, 100);
    assert_eq!(ctx.replies.len(), 2);
    assert_eq!(ctx.replies[0].ts, "1.4");
    assert_eq!(ctx.truncation.total_replies, 9);
    assert_eq!(
        ctx.truncation.omitted_range_ts,
        Some(("1.1".into(), "1.3".into()))
    );
    assert_eq!(
        (
            tel.actual_tokens,
            tel.messages_truncated,
            tel.thread_budget_tokens
        ),
        (80, 3, 100)
    );
    // Over budget on its own, the newest reply is still kept (and cut to 300 tokens).
    let t = thread(vec![reply("1.1", &"y".repeat(4000))], 1);
    let (ctx, tel) = thread_context(&t, 10);
    assert!(ctx.replies[0].is_truncated);
    assert_eq!(ctx.replies[0].text.encode_utf16().count(), 1200);
    assert_eq!(tel.actual_tokens, 1000);
}

#[test]
fn a_thread_without_replies_is_still_a_thread_and_ts_pass_through() {
    let (ctx, tel) = thread_context(&thread(vec![], 0), 8000);
    assert_eq!(ctx.thread_id, "1.0");
    assert_eq!(ctx.root.ts, "1.0");
    assert!(ctx.replies.is_empty());
    assert_eq!(ctx.truncation.omitted_range_ts, None);
    assert_eq!(tel.messages_truncated, 0);
}

#[test]
fn fields_the_runner_does_not_read_are_ignored_and_read_ones_still_checked() {
    // A channel message object passed as an adjacent message: extra fields, and no
    // replyCount / hasMedia / reactions.
    let m: AdjacentInput = serde_json::from_value(json!({
        "messageId": "1", "ts": "1", "authorId": "U", "authorName": "u", "authorIsBot": false,
        "text": "t", "threadId": "0.9", "files": [], "edited": true, "permalink": "https://x",
    }))
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        (m.reply_count, m.has_media, m.reactions.len()),
        (0, false, 0)
    );
    // A reply carrying the channel message's own fields.
    let r: ReplyInput = serde_json::from_value(json!({
        "messageId": "2", "ts": "2", "authorId": "U", "authorName": "u", "authorIsBot": false,
        "text": "t", "threadId": "1", "replyCount": 3, "reactions": [":eyes: 2"],
    }))
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r.text, "t");
    // A read field of the wrong type is still refused.
    let bad: Result<AdjacentInput, _> = serde_json::from_value(json!({
        "messageId": "1", "ts": "1", "authorId": "U", "authorName": "u", "authorIsBot": false,
        "text": 5,
    }));
    assert!(bad.is_err_and(|e| e.to_string().contains("invalid type")));
}

proptest::proptest! {
    /// The plan is the budget rule over the lengths' estimates: the newest kept, then
    /// newest first while the sum fits; the kept replies over 1,200 units are the cut ones.
    #[test]
    fn the_thread_plan_is_the_newest_first_rule_over_lengths(
        units in proptest::collection::vec(0usize..3_000, 0..40),
        budget in 0u64..6_000,
    ) {
        let plan = thread_plan(units.iter().copied(), budget);
        let tokens: Vec<u64> = units.iter().map(|&u| u.div_ceil(4) as u64).collect();
        let mut first = units.len();
        let mut used = 0;
        for (i, &t) in tokens.iter().enumerate().rev() {
            if first != units.len() && used + t > budget {
                break;
            }
            used += t;
            first = i;
        }
        proptest::prop_assert_eq!(plan.first, first);
        proptest::prop_assert_eq!(plan.used, used);
        let cut: Vec<usize> = (first..units.len()).filter(|&i| units[i] > 1_200).collect();
        proptest::prop_assert_eq!(plan.cut, cut);
    }
}
