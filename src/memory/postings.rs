//! The rows of a scope (a session or a lane) that hold a search term, kept once read.
//!
//! A stored message is never changed or removed, and a new one gets a row above every row
//! stored before it. So the rows holding a term stay true as they were read, and the
//! only change a scope can see is rows added past the last one read: a kept list is good
//! while its scope holds the number of messages it was read at, and is brought up to date
//! by reading only the rows after its last ([`KeptPostings::get`] says which to read).
//! Another process writing to the same file changes the scope's count like this one does.

use super::kept::Weighed;

/// The most rows kept over every term (8 bytes each: 8 MiB). A term in more than an
/// eighth of them is read each time rather than push out most other terms.
pub const POSTINGS_ROWS_KEPT: usize = 1 << 20;

/// What a scope's term list needs before it can be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kept<'a> {
    /// Current: the rows holding the term, oldest first.
    Current(&'a [i64]),
    /// The scope has grown since: read the rows after this one (0 when none was kept).
    After(i64),
}

#[derive(Debug)]
struct Entry {
    count: usize,
    rows: Vec<i64>,
}

/// Term lists by scope token and term, least recently used out first once more than
/// [`POSTINGS_ROWS_KEPT`] rows are kept.
#[derive(Debug)]
pub struct KeptPostings(Weighed<(String, String), Entry>);

impl Default for KeptPostings {
    fn default() -> Self {
        KeptPostings(Weighed::new(POSTINGS_ROWS_KEPT))
    }
}

impl KeptPostings {
    /// The kept rows of `term` in `scope` when the scope still holds `count` messages, or
    /// the row to read after: the last row kept, or 0.
    pub fn get(&mut self, scope: &str, term: &str, count: usize) -> Kept<'_> {
        match self.0.get(&(scope.to_string(), term.to_string())) {
            Some(e) if e.count == count => Kept::Current(&e.rows),
            Some(e) => Kept::After(e.rows.last().copied().unwrap_or(0)),
            None => Kept::After(0),
        }
    }

    /// Adds `read`, the rows after those kept (ascending), to `term`'s list in `scope`,
    /// now good for `count` messages, and returns the whole list. A row not past the last
    /// kept one is already there (a read can see a write its count did not) and is left
    /// out.
    pub fn extend(&mut self, scope: &str, term: &str, count: usize, read: &[i64]) -> Vec<i64> {
        let key = (scope.to_string(), term.to_string());
        let mut rows = self.0.take(&key).map(|e| e.rows).unwrap_or_default();
        for &r in read {
            if rows.last().is_none_or(|&last| r > last) {
                rows.push(r);
            }
        }
        let weight = rows.len();
        self.0.put(
            key,
            Entry {
                count,
                rows: rows.clone(),
            },
            weight,
        );
        rows
    }

    /// How many rows are kept over every term.
    pub fn rows(&self) -> usize {
        self.0.total()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_is_current_at_its_count_and_read_on_from_its_last_row_after() {
        let mut kept = KeptPostings::default();
        assert_eq!(kept.get("l1", "boat", 3), Kept::After(0));
        assert_eq!(kept.extend("l1", "boat", 3, &[2, 7]), vec![2, 7]);
        assert_eq!(kept.get("l1", "boat", 3), Kept::Current(&[2, 7]));
        assert_eq!(kept.get("l1", "boat", 5), Kept::After(7));
        // A read that saw a row already kept leaves it once.
        assert_eq!(kept.extend("l1", "boat", 5, &[7, 11]), vec![2, 7, 11]);
        assert_eq!(kept.get("l1", "boat", 5), Kept::Current(&[2, 7, 11]));
        // Another scope, another term: nothing kept.
        assert_eq!(kept.get("l2", "boat", 5), Kept::After(0));
        assert_eq!(kept.get("l1", "sail", 5), Kept::After(0));
        // A term no row holds is kept as such.
        assert!(kept.extend("l1", "sail", 5, &[]).is_empty());
        assert_eq!(kept.get("l1", "sail", 5), Kept::Current(&[]));
        assert_eq!(kept.rows(), 3);
    }

    #[test]
    fn a_list_too_long_for_one_term_is_returned_and_not_kept() {
        let mut kept = KeptPostings::default();
        let long: Vec<i64> = (1..=i64::try_from(POSTINGS_ROWS_KEPT / 8 + 1).unwrap_or(0)).collect();
        assert_eq!(kept.extend("s", "the", 1, &long).len(), long.len());
        assert_eq!(kept.get("s", "the", 1), Kept::After(0));
        assert_eq!(kept.rows(), 0);
    }
}
