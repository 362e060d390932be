//! The cache of renderings a held message carries. It knows nothing of messages or the
//! store (which fill it, in `render`), so `message` can hold one without a cycle.

use crate::core::text::utf16_len;
use crate::core::tokens;
use std::cell::OnceCell;

/// A JSON rendering, its length in UTF-16 units and its central token estimate.
#[derive(Debug, Clone, PartialEq)]
pub struct Fragment {
    pub json: String,
    pub units: usize,
    /// `tokens::estimate(json)`: estimates of JSON fragments joined by punctuation add up.
    pub estimate: f64,
    /// The reply was cut to 300 tokens.
    pub truncated: bool,
}

impl Fragment {
    pub(crate) fn new(json: String, truncated: bool) -> Self {
        Fragment {
            units: utf16_len(&json),
            estimate: tokens::estimate(&json),
            json,
            truncated,
        }
    }
}

/// Renderings cached on a message; dropped when its text changes. Boxed on first use,
/// so a message that is never rendered carries one pointer.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RenderCache(OnceCell<Box<Renderings>>);

/// What a message's renderings are; each is computed on first use.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Renderings {
    pub(crate) reply: OnceCell<Fragment>,
    pub(crate) root: OnceCell<Fragment>,
    pub(crate) snippet: OnceCell<String>,
    pub(crate) iso: OnceCell<String>,
    pub(crate) adjacent: OnceCell<Fragment>,
    /// The estimate of the reply's compact entry, without its time.
    pub(crate) compact_reply: OnceCell<f64>,
    /// The estimate of the message's compact snapshot entry without thread activity,
    /// without its time.
    pub(crate) compact_adjacent: OnceCell<f64>,
}

impl RenderCache {
    /// The renderings, allocated on first use.
    pub(crate) fn get(&self) -> &Renderings {
        self.0.get_or_init(Box::default)
    }
}
