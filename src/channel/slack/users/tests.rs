use super::*;
use serde_json::json;

#[test]
fn learns_display_names_then_real_names_from_every_place_a_body_carries_them() {
    let mut d = UserDirectory::default();
    d.learn(&json!({
        "event": {
            "user": "U1", "user_profile": { "display_name": "ana" },
            "message": { "user": "U2", "user_profile": { "display_name": "", "real_name": "Bo Real" } }
        },
        "messages": [ { "user": "U3", "user_profile": { "real_name": "Cy", "is_bot": true } } ]
    }));
    assert_eq!(d.lookup("U1"), Some(("ana".into(), false)));
    assert_eq!(d.lookup("U2"), Some(("Bo Real".into(), false)));
    assert_eq!(d.lookup("U3"), Some(("Cy".into(), true)));
    assert_eq!(d.lookup("U4"), None);
}

#[test]
fn a_profile_without_a_name_teaches_nothing() {
    let mut d = UserDirectory::default();
    d.learn(&json!({ "user": "U1", "user_profile": { "display_name": "" } }));
    assert!(d.is_empty());
}

#[test]
fn holds_at_most_the_bound_but_keeps_updating_known_users() {
    let mut d = UserDirectory::default();
    for i in 0..USERS_REMEMBERED + 5 {
        d.set(&format!("U{i}"), "n", false);
    }
    assert_eq!(d.len(), USERS_REMEMBERED);
    d.set("U0", "renamed", true);
    assert_eq!(d.lookup("U0"), Some(("renamed".into(), true)));
    assert_eq!(d.lookup(&format!("U{}", USERS_REMEMBERED + 1)), None);
}
