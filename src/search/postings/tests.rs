use super::*;
use proptest::prelude::*;

/// Increasing slots from gaps (the first gap may be 0).
fn slots_of(gaps: &[u32]) -> Vec<u32> {
    let mut slot = 0u32;
    gaps.iter()
        .enumerate()
        .map(|(i, g)| {
            slot = slot.saturating_add(if i == 0 { *g } else { (*g).max(1) });
            slot
        })
        .collect()
}

#[test]
fn a_dense_list_takes_a_byte_a_posting() {
    let mut list = PostingList::default();
    for slot in 0..1000 {
        list.push(slot * 3, 1 + (slot % 3) as u16);
    }
    assert_eq!(list.len(), 1000);
    // Gaps of 3, frequencies 1 to 3: (3 << 2 | tf) < 128, one byte each.
    assert_eq!(list.bytes.len(), 1000);
    let got: Vec<_> = list.iter().collect();
    assert_eq!(got[..3], [(0, 1), (3, 2), (6, 3)]);
}

#[test]
fn gaps_and_frequencies_at_their_limits_come_back() {
    let mut list = PostingList::default();
    let want = [
        (0, 4),
        (31, 1),
        (32, 3),
        (u32::MAX - 1, u16::MAX),
        (u32::MAX, 65),
    ];
    for (s, tf) in want {
        list.push(s, tf);
    }
    assert_eq!(list.iter().collect::<Vec<_>>(), want);
    // (0, 4): gap 0 with the frequency after it; (31, 1): 31 << 2 | 1 = 125, one byte;
    // (32, 3): one byte.
    assert_eq!(list.bytes[..4], [0, 4, 125, (1 << 2) | 3]);
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
    fn a_list_reads_back_what_was_pushed(
        gaps in prop::collection::vec(prop_oneof![0u32..4, 0u32..200, 0u32..100_000, any::<u32>()], 0..300),
        tfs in prop::collection::vec(prop_oneof![1u16..4, any::<u16>()], 300),
    ) {
        let slots = slots_of(&gaps);
        let mut want: Vec<(u32, u16)> = Vec::new();
        let mut list = PostingList::default();
        for (i, &s) in slots.iter().enumerate() {
            if want.last().is_some_and(|&(last, _)| last >= s) {
                break; // saturated at u32::MAX
            }
            list.push(s, tfs[i]);
            want.push((s, tfs[i].max(1)));
        }
        prop_assert_eq!(list.len(), want.len());
        prop_assert_eq!(list.iter().collect::<Vec<_>>(), want.clone());

        // Dropping every third posting and renumbering the rest densely, as compaction does.
        let mut kept = 0u32;
        let mut remapped = Vec::new();
        for (i, &(_, tf)) in want.iter().enumerate() {
            if i % 3 != 1 {
                remapped.push((kept, tf));
                kept += 1;
            }
        }
        let position: std::collections::HashMap<u32, usize> =
            want.iter().enumerate().map(|(i, &(s, _))| (s, i)).collect();
        let mut next = 0u32;
        list.remap(|s| {
            let i = position[&s];
            (i % 3 != 1).then(|| {
                next += 1;
                next - 1
            })
        });
        prop_assert_eq!(list.len(), remapped.len());
        prop_assert_eq!(list.iter().collect::<Vec<_>>(), remapped);
    }
}
