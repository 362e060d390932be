//! Okapi BM25, the one scoring of the package's two searches: the channel's search index
//! (`super::index`) and the memory's message passages (`crate::memory::passages`, whose
//! postings SQLite's FTS5 keeps).
//!
//! ```text
//! score(d, q) = Σ_t idf(t) · tf(t,d) · (K1 + 1) / (tf(t,d) + K1 · norm(d))
//! norm(d)     = 1 - B + B · |d| / avgdl
//! idf(t)      = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))
//! ```

/// Term-frequency saturation: how quickly more occurrences of a word stop adding.
pub const K1: f64 = 1.2;
/// Length normalization: 0 ignores a document's length, 1 divides by it.
pub const B: f64 = 0.75;

/// The inverse document frequency of a term found in `df` of `n` documents (never
/// negative).
pub fn idf(n: usize, df: usize) -> f64 {
    #[allow(clippy::cast_precision_loss)] // document counts are far below 2^53
    let (n, df) = (n as f64, df as f64);
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}

/// A document's length against the mean, as its terms' scores divide by it:
/// `1 - B + B · len / avgdl`.
pub fn length_norm(len: f64, avgdl: f64) -> f64 {
    1.0 - B + B * len / avgdl
}

/// How much one term found `tf` times lifts a document of `norm` ([`length_norm`]),
/// before its idf: `tf · (K1 + 1) / (tf + K1 · norm)`.
pub fn saturation(tf: f64, norm: f64) -> f64 {
    tf * (K1 + 1.0) / (tf + K1 * norm)
}

/// The most [`saturation`] of one occurrence can be: its value for a document of no
/// length, `(K1 + 1) / (1 + K1 (1 - B))`.
pub const MAX_LIFT: f64 = (K1 + 1.0) / (1.0 + K1 * (1.0 - B));

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_usual_constants_and_their_shapes() {
        assert_eq!((K1, B), (1.2, 0.75));
        // A term in every document still counts a little; a rare one counts more.
        assert!(idf(100, 100) > 0.0);
        assert!(idf(100, 1) > idf(100, 10));
        assert!((idf(100, 1) - (1.0 + 99.5 / 1.5_f64).ln()).abs() < 1e-12);
        // A document of mean length is divided by 1; of no length, the most it can lift.
        assert!((length_norm(10.0, 10.0) - 1.0).abs() < 1e-12);
        assert!((saturation(1.0, length_norm(0.0, 10.0)) - MAX_LIFT).abs() < 1e-12);
        assert!(saturation(3.0, 1.0) > saturation(1.0, 1.0));
        assert!(saturation(1_000.0, 1.0) < K1 + 1.0);
    }
}
