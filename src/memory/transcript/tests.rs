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
