//! The thread budgeting rule, factored out so it can be tuned or replaced on its own.
//!
//! Start from the most recent reply and walk back, keeping replies while the running
//! total stays within the budget; stop at the first reply that does not fit, so what is
//! kept is always a contiguous newest run. The newest reply is kept even when it alone is
//! over the budget (a thread context without the message being answered is useless).

/// The outcome of budgeting `n` replies: replies `first_included..n` are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BudgetCut {
    /// Index of the oldest kept reply; `0` when nothing was omitted.
    pub first_included: usize,
    /// Tokens of the kept replies.
    pub used_tokens: u64,
}

impl BudgetCut {
    /// Number of omitted (older) replies.
    pub fn omitted(&self) -> usize {
        self.first_included
    }
}

/// Applies the most-recent-first rule to replies with the given token counts (oldest
/// first, as the thread is ordered).
pub fn most_recent_within(tokens: &[u64], budget: u64) -> BudgetCut {
    let mut used: u64 = 0;
    let mut first = tokens.len();
    for (i, &t) in tokens.iter().enumerate().rev() {
        let next = used.saturating_add(t);
        if next > budget && first != tokens.len() {
            break;
        }
        used = next;
        first = i;
    }
    BudgetCut {
        first_included: first,
        used_tokens: used,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn empty_thread_keeps_nothing() {
        assert_eq!(
            most_recent_within(&[], 100),
            BudgetCut {
                first_included: 0,
                used_tokens: 0
            }
        );
    }

    #[test]
    fn everything_fits() {
        let cut = most_recent_within(&[10, 20, 30], 60);
        assert_eq!(
            cut,
            BudgetCut {
                first_included: 0,
                used_tokens: 60
            }
        );
    }

    #[test]
    fn stops_at_first_reply_that_does_not_fit() {
        // 30 + 20 = 50 fits, + 40 would be 90 > 60; the older 1-token reply is not
        // skipped-to: the kept run stays contiguous.
        let cut = most_recent_within(&[1, 40, 20, 30], 60);
        assert_eq!(
            cut,
            BudgetCut {
                first_included: 2,
                used_tokens: 50
            }
        );
        assert_eq!(cut.omitted(), 2);
    }

    #[test]
    fn newest_is_kept_even_when_over_budget() {
        let cut = most_recent_within(&[5, 500], 100);
        assert_eq!(
            cut,
            BudgetCut {
                first_included: 1,
                used_tokens: 500
            }
        );
        let cut = most_recent_within(&[5, 5], 0);
        assert_eq!(
            cut,
            BudgetCut {
                first_included: 1,
                used_tokens: 5
            }
        );
    }

    proptest! {
        #[test]
        fn kept_run_is_maximal_and_within_budget(tokens in proptest::collection::vec(0u64..2000, 0..60), budget in 0u64..20_000) {
            let cut = most_recent_within(&tokens, budget);
            let n = tokens.len();
            prop_assert!(cut.first_included <= n);
            let sum: u64 = tokens[cut.first_included..].iter().sum();
            prop_assert_eq!(sum, cut.used_tokens);
            if n > 0 {
                prop_assert!(cut.first_included < n, "newest reply always kept");
                if n - cut.first_included > 1 {
                    prop_assert!(cut.used_tokens <= budget);
                }
                if cut.first_included > 0 {
                    prop_assert!(cut.used_tokens + tokens[cut.first_included - 1] > budget);
                }
            }
        }
    }
}
