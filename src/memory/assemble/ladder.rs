//! The retrieved messages' fill: candidates offered a ladder of rooms, so what a room
//! holds, twice that room holds too.

/// Offers `n` candidates, in order, the rooms of a ladder, smallest first: `room` halved
/// until below `min_line`, each room offering every candidate not yet taken again on top
/// of what the smaller ones took (`offer(i, room)` takes candidate `i` when it fits that
/// room and says whether it did). The rooms of twice a room are its rooms and itself, so
/// what a room holds, twice that holds too: a long candidate that fits only the larger
/// room comes after what the smaller held, never in its place (as a greedy fill lets it).
pub(super) fn fill_by_ladder(
    n: usize,
    room: f64,
    min_line: f64,
    mut offer: impl FnMut(usize, f64) -> bool,
) {
    let mut rungs = Vec::new();
    let mut r = room;
    while r >= min_line && rungs.len() < 40 {
        rungs.push(r);
        r /= 2.0;
    }
    let mut taken = vec![false; n];
    for &rung in rungs.iter().rev() {
        for (i, t) in taken.iter_mut().enumerate() {
            if !*t {
                *t = offer(i, rung);
            }
        }
    }
}
