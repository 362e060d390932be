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
