use super::*;

struct Known;

impl Names for Known {
    fn user(&self, id: &str) -> Option<(String, bool)> {
        (id == "U2").then(|| ("Bob".to_string(), false))
    }
    fn channel(&self, id: &str) -> Option<String> {
        (id == "C9").then(|| "deploys".to_string())
    }
}

fn names() -> Known {
    Known
}

#[test]
fn entities_are_decoded_once() {
    assert_eq!(
        decode_entities("a &lt; b &amp;&amp; c &gt; d"),
        "a < b && c > d"
    );
    // What Slack sends for a literal "&lt;" is "&amp;lt;": one decoding gives it back.
    assert_eq!(decode_entities("&amp;lt;"), "&lt;");
    assert_eq!(decode_entities("AT&T &quot; &"), "AT&T &quot; &");
    assert_eq!(
        plain_text("if a &lt; b &amp;&amp; c &gt; 0", &NoNames),
        "if a < b && c > 0"
    );
}

#[test]
fn references_read_by_the_names_the_store_knows() {
    let n = names();
    assert_eq!(plain_text("<@U2> can you look?", &n), "@Bob can you look?");
    assert_eq!(
        plain_text("<@U2|robert> hi", &n),
        "@Bob hi",
        "the directory wins"
    );
    assert_eq!(plain_text("<@U7|carol> hi", &n), "@carol hi");
    assert_eq!(plain_text("<@U7> hi", &n), "@U7 hi");
    assert_eq!(plain_text("see <#C9>", &n), "see #deploys");
    assert_eq!(plain_text("see <#C1|general>", &n), "see #general");
    assert_eq!(plain_text("see <#C1>", &n), "see #C1");
    assert_eq!(
        plain_text("<!here> <!channel> <!everyone>", &n),
        "@here @channel @everyone"
    );
    assert_eq!(
        plain_text("<!subteam^S1|@oncall> <!subteam^S2>", &n),
        "@oncall @S2"
    );
    assert_eq!(
        plain_text("due <!date^1700000000^{date}|Nov 14, 2023>", &n),
        "due Nov 14, 2023"
    );
    assert_eq!(
        plain_text(
            "<https://example.com/a?b=1&amp;c=2|the docs> and <https://x.y>",
            &n
        ),
        "the docs and https://x.y"
    );
    assert_eq!(plain_text("<mailto:a@b.co|a@b.co>", &n), "a@b.co");
    assert_eq!(plain_text("<https://x.y|R&amp;D &lt;3>", &n), "R&D <3");
}

#[test]
fn what_is_not_markup_is_kept() {
    let n = names();
    assert_eq!(plain_text("plain text", &n), "plain text");
    assert_eq!(plain_text("a < b", &n), "a < b");
    assert_eq!(plain_text("x <@U2", &n), "x <@U2");
    assert_eq!(plain_text("", &n), "");
    assert_eq!(plain_text("héllo <@U2> 日本", &n), "héllo @Bob 日本");
}
