use super::*;
use proptest::prelude::*;

#[test]
fn a_posting_takes_five_bytes_and_counts_up_to_max_tf() {
    assert_eq!(std::mem::size_of::<Posting>(), 5);
    let mut list = PostingList::default();
    for (slot, tf) in [(0, 0), (7, 1), (9, 254), (10, 255), (u32::MAX, u16::MAX)] {
        list.push(slot, tf);
    }
    let want = [(0, 1), (7, 1), (9, 254), (10, MAX_TF), (u32::MAX, MAX_TF)];
    assert_eq!(list.iter().collect::<Vec<_>>(), want);
    assert!(list.heap_bytes() >= 5 * 5);
}

#[test]
fn a_single_posting_is_held_inline_in_the_lists_24_bytes() {
    assert_eq!(std::mem::size_of::<PostingList>(), 24);
    let mut list = PostingList::default();
    assert!(list.is_empty());
    list.push(42, 3);
    assert_eq!((list.len(), list.heap_bytes()), (1, 0));
    assert_eq!(list.iter().collect::<Vec<_>>(), [(42, 3)]);
    // A second posting moves both to the heap, in order.
    list.push(50, 1);
    assert_eq!(list.iter().collect::<Vec<_>>(), [(42, 3), (50, 1)]);
    assert!(list.heap_bytes() >= 10);
    // Remapped down to one, it is inline again; down to none, empty.
    list.remap(|s| (s == 50).then_some(7));
    assert_eq!(
        (list.iter().collect::<Vec<_>>(), list.heap_bytes()),
        (vec![(7, 1)], 0)
    );
    list.remap(|_| None);
    assert!(list.is_empty());
    assert_eq!(list.heap_bytes(), 0);
    list.push(0, 1);
    assert_eq!(list.iter().collect::<Vec<_>>(), [(0, 1)]);
}

/// A debug build stops at a slot out of order...
#[test]
#[cfg(debug_assertions)]
#[should_panic(expected = "posting slots must increase")]
fn a_slot_out_of_order_fails_a_debug_build() {
    let mut list = PostingList::default();
    list.push(5, 1);
    list.push(5, 1);
}

/// ...and a release build drops it, so the list stays in order.
#[test]
#[cfg(not(debug_assertions))]
fn a_slot_out_of_order_is_dropped() {
    let mut list = PostingList::default();
    list.push(5, 1);
    list.push(5, 2);
    list.push(4, 1);
    assert_eq!(list.iter().collect::<Vec<_>>(), [(5, 1)]);
}

proptest! {
    #[test]
    fn a_list_reads_back_what_was_pushed_and_remaps(
        mut slots in prop::collection::btree_set(any::<u32>(), 0..300),
        tfs in prop::collection::vec(any::<u16>(), 300),
        drop_every in 2usize..5,
    ) {
        let slots: Vec<u32> = std::mem::take(&mut slots).into_iter().collect();
        let mut list = PostingList::default();
        for (&s, &tf) in slots.iter().zip(&tfs) {
            list.push(s, tf);
        }
        let want: Vec<(u32, u16)> =
            slots.iter().zip(&tfs).map(|(&s, &tf)| (s, tf.clamp(1, MAX_TF))).collect();
        prop_assert_eq!(list.len(), want.len());
        prop_assert_eq!(list.iter().collect::<Vec<_>>(), want.clone());

        // Dropping some postings and renumbering the rest densely, as a sweep does.
        let position: std::collections::HashMap<u32, usize> =
            slots.iter().enumerate().map(|(i, &s)| (s, i)).collect();
        let kept: Vec<u16> =
            want.iter().enumerate().filter(|(i, _)| i % drop_every != 1).map(|(_, &(_, tf))| tf).collect();
        let mut next = 0u32;
        list.remap(|s| {
            (position[&s] % drop_every != 1).then(|| {
                next += 1;
                next - 1
            })
        });
        let remapped: Vec<(u32, u16)> = kept.into_iter().enumerate().map(|(i, tf)| (i as u32, tf)).collect();
        prop_assert_eq!(list.iter().collect::<Vec<_>>(), remapped);
    }
}

proptest! {
    /// Seeking increasing slots finds exactly the postings a scan finds, whatever the
    /// gaps, and leaves the position at the first posting not before the slot.
    #[test]
    fn seeking_increasing_slots_agrees_with_a_scan(
        gaps in proptest::collection::vec((1u32..50, 1u16..300), 0..200),
        probes in proptest::collection::vec(0u32..6_000, 0..100),
    ) {
        let mut list = PostingList::default();
        let mut slot = 0;
        for &(gap, tf) in &gaps {
            slot += gap;
            list.push(slot, tf);
        }
        let all: Vec<(u32, u16)> = list.iter().collect();
        let mut probes = probes;
        probes.sort_unstable();
        probes.dedup();
        let mut at = 0;
        for p in probes {
            let want = all.iter().find(|&&(s, _)| s == p).map(|&(_, tf)| tf);
            prop_assert_eq!(list.seek(&mut at, p), want);
            prop_assert_eq!(at, all.partition_point(|&(s, _)| s < p));
        }
    }
}
