use super::*;
use std::collections::{HashMap, HashSet};

#[test]
fn distinct_words_rarely_collide() {
    let b = WordHash::default();
    let mut seen = HashSet::new();
    for i in 0..100_000u32 {
        seen.insert(b.hash_one(format!("word{i}").as_str()));
    }
    assert!(seen.len() >= 99_990, "{} distinct hashes", seen.len());
}

#[test]
fn works_as_a_map_hasher_and_tables_differ_in_seed() {
    let mut m: HashMap<Box<str>, u32, WordHash> = HashMap::default();
    for (i, w) in [
        "deploy",
        "déploiement",
        "デプロ",
        "",
        "a-much-longer-word-than-eight",
    ]
    .iter()
    .enumerate()
    {
        m.insert((*w).into(), i as u32);
    }
    assert_eq!(m.get("デプロ"), Some(&2));
    assert_eq!(m.get(""), Some(&3));
    assert_eq!(m.get("deplo"), None);
    let (a, b) = (WordHash::default(), WordHash::default());
    assert_ne!(a.hash_one("deploy"), b.hash_one("deploy"));
}
