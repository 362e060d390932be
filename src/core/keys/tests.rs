use super::*;
use std::collections::HashMap;

fn place<'a>(topic: Option<&'a str>, reply: Option<&'a str>) -> Placement<'a> {
    Placement {
        chat_id: "42",
        topic_id: topic,
        reply_to: reply,
    }
}

#[test]
fn topic_wins_over_reply_and_reply_over_root() {
    let none = |_: &str| None;
    assert_eq!(
        thread_key(&place(Some("7"), Some("100")), none),
        "topic:42:7"
    );
    assert_eq!(thread_key(&place(None, Some("100")), none), "reply:42:100");
    assert_eq!(thread_key(&place(None, None), none), "root:42");
    assert_eq!(thread_key(&place(Some(""), Some("")), none), "root:42");
    assert_eq!(telegram_session("42"), "telegram:chat:42");
}

#[test]
fn a_chain_of_replies_stays_in_the_lane_of_its_first_reply() {
    // 1 (root) <- 2 <- 3 <- 4: one conversation, one lane.
    let mut lanes: HashMap<String, String> = HashMap::new();
    lanes.insert("1".into(), root_key("42"));
    for (id, parent) in [("2", "1"), ("3", "2"), ("4", "3")] {
        let key = thread_key(&place(None, Some(parent)), |m| lanes.get(m).cloned());
        lanes.insert(id.into(), key);
    }
    assert_eq!(lanes["2"], "reply:42:1");
    assert_eq!(lanes["3"], "reply:42:1");
    assert_eq!(lanes["4"], "reply:42:1");
    // A reply to a message of a topic stays in the topic, even without the topic id.
    lanes.insert("9".into(), "topic:42:7".into());
    assert_eq!(
        thread_key(&place(None, Some("9")), |m| lanes.get(m).cloned()),
        "topic:42:7"
    );
    // A reply to a message that is not stored starts a lane keyed by it.
    assert_eq!(
        thread_key(&place(None, Some("77")), |m| lanes.get(m).cloned()),
        "reply:42:77"
    );
}
