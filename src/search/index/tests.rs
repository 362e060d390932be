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
fn compaction_keeps_results_and_frees_dead_postings() {
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
    // Fully compacted: only live postings remain.
    ix.compact();
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
fn replies_keep_their_thread_through_compaction_and_dead_threads_go() {
    let mut ix = SearchIndex::new();
    for i in 0..10_000 {
        let thread = format!("root{}", i % 50);
        ix.add(k(i), Some(&thread), "U1", "Sam", &[&format!("word{i}")]);
    }
    ix.add(k(20_000), None, "U1", "Sam", &["channel message"]);
    assert_eq!(ix.threads.len(), 50, "each thread id is held once");
    // Remove every reply of threads 0..45: compaction drops their ids.
    for i in 0..10_000 {
        if i % 50 < 45 {
            ix.remove(k(i));
        }
    }
    ix.compact();
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
