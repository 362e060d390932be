use super::score::{coverage, CoverageTable, WordWeights};
use super::*;

fn k(s: i64) -> TsKey {
    (s, 0)
}

fn index(texts: &[&str]) -> SearchIndex {
    let mut ix = SearchIndex::new();
    for (i, t) in texts.iter().enumerate() {
        ix.add(k(i as i64 + 1), None, "U1", "Sam", &[t]);
    }
    ix
}

fn ranked(ix: &mut SearchIndex, q: &str) -> Vec<TsKey> {
    let q = ix.query(q);
    let mut m = ix.score(&q, None, None);
    m.sort_by(|a, b| b.bm25.total_cmp(&a.bm25).then(a.slot.cmp(&b.slot)));
    m.iter().map(|m| ix.docs[m.slot as usize].key()).collect()
}

#[test]
fn bm25_matches_the_formula() {
    let mut ix = index(&["alpha beta", "alpha alpha gamma delta", "epsilon"]);
    let q = ix.query("alpha");
    let m = ix.score(&q, None, None);
    assert_eq!(m.len(), 2);
    let (n, df, avgdl) = (3.0f64, 2.0f64, 7.0f64 / 3.0);
    let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
    let s = |tf: f64, dl: f64| idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * dl / avgdl));
    assert!((m[0].bm25 - s(1.0, 2.0)).abs() < 1e-5, "{m:?}");
    assert!((m[1].bm25 - s(2.0, 4.0)).abs() < 1e-5, "{m:?}");
}

#[test]
fn rarer_terms_weigh_more() {
    let mut ix = index(&["deploy deploy", "deploy rollback", "deploy", "deploy"]);
    assert_eq!(ranked(&mut ix, "deploy rollback")[0], k(2));
}

#[test]
fn removed_and_replaced_documents_are_never_found() {
    let mut ix = index(&["the rollout plan", "payments migration"]);
    assert!(ix.remove(k(1)));
    assert!(!ix.remove(k(1)));
    assert!(ranked(&mut ix, "rollout").is_empty());
    ix.add(k(2), None, "U1", "Sam", &["edited text"]);
    assert!(ranked(&mut ix, "migration").is_empty());
    assert_eq!(ranked(&mut ix, "edited"), [k(2)]);
    assert_eq!(ix.len(), 1);
}

#[test]
fn a_sweep_keeps_results_and_frees_dead_postings() {
    let mut ix = SearchIndex::new();
    for i in 0..10_000 {
        ix.add(
            k(i),
            None,
            "U1",
            "Sam",
            &[&format!("word{} common", i % 100)],
        );
    }
    for i in 0..9_000 {
        ix.remove(k(i));
    }
    let s = ix.stats();
    assert!(s.dead_postings < s.postings, "{s:?}");
    assert_eq!(s.documents, 1_000);
    let hits = ranked(&mut ix, "word7");
    assert_eq!(hits.len(), 10);
    assert!(hits.iter().all(|h| h.0 >= 9_000 && h.0 % 100 == 7));
    // Swept: only live postings remain.
    ix.sweep();
    assert_eq!(ix.stats().postings, 2_000);
    assert_eq!(ranked(&mut ix, "common").len(), 1_000);
}

#[test]
fn since_filters_but_idf_counts_every_live_document() {
    let mut ix = index(&["deploy a", "deploy b", "deploy c"]);
    let q = ix.query("deploy");
    let all = ix.score(&q, None, None);
    let recent = ix.score(&q, Some(k(3)), None);
    assert_eq!(recent.len(), 1);
    assert_eq!(recent[0].bm25, all[2].bm25);
}

#[test]
fn the_cut_keeps_every_match_that_could_reach_the_top() {
    let texts: Vec<String> = (0..200)
        .map(|i| format!("deploy {}", "filler ".repeat(i % 17)))
        .collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let mut ix = index(&refs);
    let q = ix.query("deploy");
    let all = ix.score(&q, None, None);
    let mut best: Vec<f64> = all.iter().map(|m| m.bm25).collect();
    best.sort_by(|a, b| b.total_cmp(a));
    let kth = best[7];
    let cut = ix.score(&q, None, Some((8, 1.6)));
    assert!(cut.len() < all.len());
    let expect: Vec<Match> = all
        .iter()
        .copied()
        .filter(|m| m.bm25 * 1.6 >= kth)
        .collect();
    assert_eq!(cut, expect);
    // Few matches: nothing is cut.
    assert_eq!(ix.score(&q, None, Some((100, 1.6))), all);
}

#[test]
fn query_words_map_to_their_terms() {
    let mut ix = index(&["we deployed it"]);
    let q = ix.query("Deploying the deployment unknownword");
    assert_eq!(
        q.words.iter().map(|w| w.word.as_str()).collect::<Vec<_>>(),
        ["deploying", "the", "deployment", "unknownword"]
    );
    assert_eq!(q.unknown_terms, 2);
    let m = ix.score(&q, None, None);
    assert_eq!(m[0].words, 0b101);
}

#[test]
fn scratch_is_reset_between_queries() {
    let mut ix = index(&["alpha", "beta"]);
    let qa = ix.query("alpha");
    let a1 = ix.score(&qa, None, None);
    let qb = ix.query("beta");
    let _ = ix.score(&qb, None, None);
    assert_eq!(ix.score(&qa, None, None), a1);
}

#[test]
fn covering_more_query_words_beats_a_short_match_of_one() {
    // BM25 alone ranks the two-word message first for "crazy": it is short and the term
    // rare. The message holding every word of the query is what the query describes.
    let mut ix = index(&[
        "that's crazy",
        "so the odds for him to succeed with no background were crazy",
        "crazy",
    ]);
    assert_eq!(ranked(&mut ix, "with crazy for the")[0], k(2));
    let equal = [0.25; 4];
    assert_eq!(coverage(0b1111, &equal), 1.0);
    assert_eq!(coverage(0b0001, &equal), 1.0 / 64.0);
    assert_eq!(coverage(0, &[]), 1.0);
    // A rare word weighs more than a common one; a word never seen weighs the most.
    let mut w = WordWeights::new(3, 100);
    w.note(0b001, 0.2);
    w.note(0b010, 2.0);
    let shares = w.shares();
    assert!(shares[0] < shares[1] && shares[1] < shares[2]);
    assert!((shares.iter().sum::<f64>() - 1.0).abs() < 1e-12);
}

#[test]
fn stop_words_rank_what_other_words_find_and_find_alone() {
    let mut ix = index(&["the plan", "the the the", "plan b is ready"]);
    // "the" finds nothing by itself here: only messages with "plan" match.
    let found = ranked(&mut ix, "the plan");
    assert_eq!(found, [k(1), k(3)]);
    // A query of stop words alone still finds messages.
    assert_eq!(ranked(&mut ix, "the").len(), 2);
}

#[test]
fn a_posting_counts_a_term_up_to_max_tf() {
    // 70,000 occurrences of one word: counted as MAX_TF (255), still found and ranked first.
    let flood = "spam ".repeat(70_000);
    let mut ix = index(&["spam once", &flood]);
    let list = &ix.postings[ix.terms.get("spam").unwrap_or(u32::MAX) as usize];
    let tfs: Vec<u16> = list.iter().map(|(_, tf)| tf).collect();
    assert_eq!(tfs, vec![1, MAX_TF]);
    assert_eq!(ranked(&mut ix, "spam"), vec![k(2), k(1)]);
}

#[test]
fn a_document_costs_twenty_four_bytes_and_its_key_sixteen() {
    // The key map holds a key and a slot in 16 bytes (a (TsKey, u32) takes 24); a
    // document's length and liveness live in `lens` alone, its key is flattened and
    // its thread is a number in the thread table.
    assert_eq!(std::mem::size_of::<KeySlot>(), 16);
    assert_eq!(std::mem::size_of::<Doc>(), 24);
}

#[test]
fn replies_keep_their_thread_through_a_sweep_and_dead_threads_go() {
    let mut ix = SearchIndex::new();
    for i in 0..10_000 {
        let thread = format!("root{}", i % 50);
        ix.add(k(i), Some(&thread), "U1", "Sam", &[&format!("word{i}")]);
    }
    ix.add(k(20_000), None, "U1", "Sam", &["channel message"]);
    assert_eq!(ix.threads.len(), 50, "each thread id is held once");
    // Remove every reply of threads 0..45: the sweep drops their ids.
    for i in 0..10_000 {
        if i % 50 < 45 {
            ix.remove(k(i));
        }
    }
    ix.sweep();
    assert_eq!(ix.threads.len(), 5);
    for i in [45, 99, 9_999] {
        let hit = ranked(&mut ix, &format!("word{i}"));
        assert_eq!(hit, [k(i)]);
        let slot = ix.by_key.get(&k(i)).map(|e| e.slot).unwrap_or(u32::MAX);
        let d = ix.doc(slot).unwrap_or_else(|| panic!("doc {i}"));
        assert_eq!(ix.thread_of(d), Some(format!("root{}", i % 50).as_str()));
    }
    let slot = ix
        .by_key
        .get(&k(20_000))
        .map(|e| e.slot)
        .unwrap_or(u32::MAX);
    let d = ix.doc(slot).unwrap_or_else(|| panic!("channel message"));
    assert_eq!(ix.thread_of(d), None);
}

/// Documents of words drawn from a small vocabulary: a few rare words, common ones and a
/// stop word, so queries mix short and long posting lists.
fn mixed_corpus(seed: u64, docs: usize) -> SearchIndex {
    const WORDS: [(&str, u64); 9] = [
        ("zebra", 2),
        ("quokka", 3),
        ("ibis", 5),
        ("deploy", 30),
        ("service", 45),
        ("check", 55),
        ("ready", 70),
        ("the", 80),
        ("and", 60),
    ];
    let mut x = seed | 1;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut ix = SearchIndex::new();
    for i in 0..docs {
        let mut text = String::new();
        for (w, percent) in WORDS {
            for _ in 0..=(next() % 3) {
                if next() % 100 < percent {
                    text.push_str(w);
                    text.push(' ');
                }
            }
        }
        text.push_str(&"filler ".repeat((next() % 5) as usize));
        ix.add(k(i as i64 + 1), None, "U1", "Sam", &[&text]);
    }
    ix
}

/// What a cut must return, from every match: those that could reach the top `k` within
/// `headroom`, and the `k`-th score (or everything and `-inf` for few matches).
fn expected_cut(all: &[Match], k: usize, headroom: f64) -> (Vec<Match>, f64) {
    if all.len() <= 4 * k {
        return (all.to_vec(), f64::NEG_INFINITY);
    }
    let mut best: Vec<f32> = all.iter().map(|m| m.bm25 as f32).collect();
    best.sort_by(|a, b| b.total_cmp(a));
    let kth = f64::from(best[k - 1]);
    let floor = kth / headroom * (1.0 - 1e-6);
    (
        all.iter().copied().filter(|m| m.bm25 >= floor).collect(),
        kth,
    )
}

#[test]
fn common_terms_after_the_top_is_out_of_their_reach_only_rank_what_was_found() {
    let mut ix = SearchIndex::new();
    for i in 0..2_000 {
        let text = if i % 20 == 0 {
            "rare common"
        } else {
            "common filler"
        };
        ix.add(k(i + 1), None, "U1", "Sam", &[text]);
    }
    let q = ix.query("common rare");
    let all = ix.score(&q, None, None);
    assert_eq!(all.len(), 2_000);
    assert_eq!(ix.closed_queries, 0, "an uncut query ranks every match");
    let got = ix.score_with_cut(&q, None, Some((8, 1.6)));
    assert_eq!(
        ix.closed_queries, 1,
        "\"common\" only ranks what \"rare\" found"
    );
    assert_eq!(got, expected_cut(&all, 8, 1.6));
    assert_eq!(got.0.len(), 100);
}

proptest::proptest! {
    /// Whatever the corpus and the query, a cut query returns exactly the matches and
    /// k-th score the cut of every match gives, whether or not its common terms were
    /// confined to what the rarer ones found.
    #[test]
    fn a_cut_query_agrees_with_the_cut_of_every_match(
        seed in proptest::prelude::any::<u64>(),
        docs in 50usize..600,
        words in proptest::collection::vec(0usize..9, 1..5),
        k in 1usize..10,
        headroom in 1.0f64..3.0,
    ) {
        const VOCAB: [&str; 9] = ["zebra", "quokka", "ibis", "deploy", "service", "check", "ready", "the", "and"];
        let mut ix = mixed_corpus(seed, docs);
        let text: Vec<&str> = words.iter().map(|&w| VOCAB[w]).collect();
        let q = ix.query(&text.join(" "));
        let all = ix.score(&q, None, None);
        let got = ix.score_with_cut(&q, None, Some((k, headroom)));
        proptest::prop_assert_eq!(got, expected_cut(&all, k, headroom));
    }
}

#[test]
fn the_property_corpus_exercises_the_confined_terms() {
    // The property above means something only if its queries close: check that
    // a typical one does.
    let mut ix = mixed_corpus(7, 500);
    let q = ix.query("zebra ready the");
    let all = ix.score(&q, None, None);
    let got = ix.score_with_cut(&q, None, Some((2, 1.6)));
    assert_eq!(got, expected_cut(&all, 2, 1.6));
    assert_eq!(ix.closed_queries, 1);
}

#[test]
fn the_coverage_table_answers_as_the_formula() {
    for words in [
        0usize,
        1,
        3,
        CoverageTable::MAX_WORDS,
        CoverageTable::MAX_WORDS + 2,
    ] {
        let raw: Vec<f64> = (0..words).map(|i| 1.0 + i as f64 * 0.7).collect();
        let total: f64 = raw.iter().sum();
        let shares: Vec<f64> = raw.iter().map(|w| w / total).collect();
        let table = CoverageTable::new(shares.clone());
        assert_eq!(table.table.is_empty(), words > CoverageTable::MAX_WORDS);
        for mask in 0..1u32 << words {
            assert_eq!(table.get(mask).to_bits(), coverage(mask, &shares).to_bits());
        }
    }
}
