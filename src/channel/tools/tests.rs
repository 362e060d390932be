use super::*;

#[test]
fn names_are_valid_for_the_messages_api_and_aliases_resolve() {
    let valid = |n: &str| {
        !n.is_empty()
            && n.len() <= 64
            && n.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    };
    for d in definitions(false) {
        assert!(valid(&d.name), "{}", d.name);
        assert_eq!(d.input_schema["type"], "object");
        assert_eq!(d.input_schema["additionalProperties"], false);
    }
    assert_eq!(Tool::resolve("channel.context"), Some(Tool::Context));
    assert_eq!(Tool::resolve("channel_context"), Some(Tool::Context));
    assert_eq!(Tool::resolve("channel.messages"), Some(Tool::Messages));
    assert_eq!(Tool::resolve("channel_messages"), Some(Tool::Messages));
    assert_eq!(Tool::resolve("channel_search"), None);
    assert_eq!(definitions(true)[0].name, "channel.context");
}

#[test]
fn errors_are_json_the_model_can_read() {
    let e = ToolError::invalid("max_results", "must be at least 1");
    let v: Value = serde_json::from_str(&e.to_json(CONTEXT_TOOL)).unwrap_or_default();
    assert_eq!(v["error"]["code"], "invalid_input");
    assert_eq!(v["error"]["field"], "max_results");
    let v: Value = serde_json::from_str(&unknown_tool("nope")).unwrap_or_default();
    assert_eq!(v["error"]["code"], "unknown_tool");
}

/// The tools run over a real store.
mod store;
