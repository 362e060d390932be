use super::*;

#[test]
fn nothing_is_recorded_without_a_fetch_in_flight() {
    let mut r = Recent::default();
    let s = r.next_seq();
    r.touch("C", "1", s, None);
    assert!(r.is_empty());
    let since = r.begin_fetch();
    assert_eq!(since, 1);
    let s = r.next_seq();
    r.touch(
        "C",
        "1",
        s,
        Some(Patch::Edit {
            text: "new".into(),
            edited: true,
        }),
    );
    assert!(r.touched_after("C", "1", since));
    assert!(!r.touched_after("C", "1", s));
    assert!(!r.touched_after("D", "1", since));
    assert_eq!(r.patches_after("C", "1", since).len(), 1);
    r.end_fetch();
    assert!(r.is_empty());
}

#[test]
fn tracking_is_bounded() {
    let mut r = Recent::default();
    r.begin_fetch();
    for i in 0..RECENT_EVENTS_REMEMBERED + 10 {
        let s = r.next_seq();
        r.touch("C", &i.to_string(), s, None);
    }
    assert_eq!(r.len(), RECENT_EVENTS_REMEMBERED);
    assert!(!r.touched_after("C", "0", 0));
    assert!(r.touched_after("C", &(RECENT_EVENTS_REMEMBERED + 9).to_string(), 0));
}
