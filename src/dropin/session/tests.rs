use super::*;

#[test]
fn a_channel_gets_both_tools_and_when_to_use_them_a_dm_the_one_that_works() {
    for g in [
        channel_tools_guidance(Some("group")),
        channel_tools_guidance(None),
    ] {
        assert!(g.starts_with("### Channel Tools\n"));
        assert!(g.contains("**channel.context**") && g.contains("**channel.messages**"));
        assert!(g.contains("compacted"));
    }
    let dm = channel_tools_guidance(Some("direct"));
    assert!(dm.starts_with("### Channel Tools\n"));
    assert!(dm.contains("returns empty results in DMs"));
    assert!(!dm.contains("searches the channel's messages"));
}
