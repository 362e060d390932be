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
mod tests;
