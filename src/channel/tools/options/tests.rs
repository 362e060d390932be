use super::*;

#[test]
fn the_defaults_are_api_names_and_five_megabytes() {
    let c = ToolsConfig::try_from(ToolsOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(c, ToolsConfig::default());
    assert_eq!((c.dotted, c.max_media_bytes), (false, 5 * 1024 * 1024));
}

#[test]
fn names_and_sizes_are_checked_by_field() {
    let of = |tool_names: Option<&str>, max: Option<f64>| {
        ToolsConfig::try_from(ToolsOptions {
            tool_names: tool_names.map(str::to_string),
            max_media_bytes: max,
        })
    };
    assert!(of(Some("dotted"), Some(0.0)).is_ok_and(|c| c.dotted && c.max_media_bytes == 0));
    let bad = of(Some("snake"), None).err().map(|e| e.path);
    assert_eq!(bad.as_deref(), Some("options.toolNames"));
    for n in [-1.0, 1.5, f64::NAN] {
        let bad = of(None, Some(n)).err().map(|e| e.path);
        assert_eq!(bad.as_deref(), Some("options.maxMediaBytes"), "{n}");
    }
}
