use super::*;

#[test]
fn a_given_buffer_is_taken_back_empty_with_its_capacity() {
    let mut spare = Spare::new(1024);
    let mut s = String::with_capacity(600);
    s.push_str("held text");
    let ptr = s.as_ptr();
    spare.give(s);
    let again = spare.take(10);
    assert!(again.is_empty());
    assert_eq!(again.as_ptr(), ptr);
    assert!(again.capacity() >= 600);
    // Taken: the next take allocates.
    assert_eq!(spare.take(0).capacity(), 0);
}

#[test]
fn take_reserves_what_is_asked() {
    let mut spare = Spare::new(1024);
    spare.give(String::with_capacity(64));
    assert!(spare.take(500).capacity() >= 500);
    assert!(Spare::new(0).take(300).capacity() >= 300);
}

#[test]
fn a_buffer_past_the_bound_is_not_kept() {
    let mut spare = Spare::new(1024);
    spare.give(String::with_capacity(1025));
    assert_eq!(spare.take(0).capacity(), 0);
    spare.give(String::with_capacity(1024));
    assert_eq!(spare.take(0).capacity(), 1024);
}

#[test]
fn the_larger_buffer_is_kept() {
    let mut spare = Spare::new(1024);
    spare.give(String::with_capacity(800));
    spare.give(String::with_capacity(100));
    assert_eq!(spare.take(0).capacity(), 800);
}

#[test]
fn the_process_spare_hands_out_empty_strings() {
    let mut s = take(100);
    assert!(s.is_empty() && s.capacity() >= 100);
    s.push_str("prompt");
    give(s);
    assert!(take(0).is_empty());
}
