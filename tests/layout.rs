//! The rules of ARCHITECTURE.md that a reader of the sources can check, checked here so
//! that they stay true: where `unsafe` may be, that every export catches panics, and how
//! long a file may grow.

use std::path::{Path, PathBuf};

/// Lines a source file may have (its tests live beside it, in `tests.rs`).
const MAX_LINES: usize = 500;

/// Files past [`MAX_LINES`] today, each with the most lines it may have: they may shrink,
/// not grow, until they are split along their seams.
const OVER_LIMIT: [(&str, usize); 0] = [];

/// Where `unsafe` may appear besides `src/bindings/`: the byte-level text modules, whose
/// unchecked UTF-8 conversions are measured (each block says why it holds).
const UNSAFE_OUTSIDE_BINDINGS: [&str; 3] = [
    "src/input/packed.rs",
    "src/packed_text.rs",
    "src/short_str.rs",
];

fn sources() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut out);
    out.sort();
    assert!(out.len() > 50, "the sources were not found");
    out
}

fn relative(p: &Path) -> String {
    p.strip_prefix(env!("CARGO_MANIFEST_DIR"))
        .unwrap_or(p)
        .display()
        .to_string()
        .replace('\\', "/")
}

fn is_test_file(rel: &str) -> bool {
    rel.ends_with("/tests.rs") || rel.contains("/tests/")
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn unsafe_is_only_in_the_bindings_and_the_byte_level_text_modules_each_block_justified() {
    for p in sources() {
        let rel = relative(&p);
        let text = read(&p);
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let code = line.split("//").next().unwrap_or_default();
            if !code.contains("unsafe {") && !code.contains("unsafe fn") {
                continue;
            }
            assert!(
                rel.starts_with("src/bindings/") || UNSAFE_OUTSIDE_BINDINGS.contains(&rel.as_str()),
                "{rel}:{}: unsafe outside src/bindings/ and the text modules",
                i + 1
            );
            let justified = lines[i.saturating_sub(8)..=i]
                .iter()
                .any(|l| l.contains("SAFETY:"));
            assert!(
                justified,
                "{rel}:{}: unsafe without a SAFETY: comment",
                i + 1
            );
        }
    }
}

#[test]
fn every_export_catches_panics() {
    let mut exports = 0;
    for p in sources() {
        let rel = relative(&p);
        let text = read(&p);
        let lines: Vec<&str> = text.lines().collect();
        let mut i = 0;
        while i < lines.len() {
            let line = lines[i].trim_start();
            if !line.starts_with("#[napi") {
                i += 1;
                continue;
            }
            // The whole attribute, over as many lines as it takes.
            let start = i;
            let mut attr = line.to_string();
            while !(attr.trim_end().ends_with(']')
                && attr.matches('(').count() == attr.matches(')').count())
            {
                i += 1;
                attr.push_str(lines.get(i).copied().unwrap_or("]"));
            }
            // What it is on: the next line that is not an attribute or a doc comment.
            let mut k = i + 1;
            while k < lines.len() {
                let t = lines[k].trim_start();
                if t.starts_with("#[") || t.starts_with("///") || t.is_empty() {
                    k += 1;
                } else {
                    break;
                }
            }
            let item = lines.get(k).map_or("", |l| l.trim_start());
            let is_fn = [
                "fn ",
                "pub fn ",
                "pub(crate) fn ",
                "pub async fn ",
                "async fn ",
            ]
            .iter()
            .any(|p| item.starts_with(p));
            if is_fn {
                exports += 1;
                assert!(
                    attr.contains("catch_unwind"),
                    "{rel}:{}: an export without catch_unwind: {attr}",
                    start + 1
                );
            }
            i += 1;
        }
    }
    assert!(exports > 100, "{exports} exports found");
}

#[test]
fn a_source_file_stays_within_what_one_reader_holds() {
    for p in sources() {
        let rel = relative(&p);
        if is_test_file(&rel) {
            continue;
        }
        let lines = read(&p).lines().count();
        let limit = OVER_LIMIT
            .iter()
            .find(|(f, _)| *f == rel)
            .map_or(MAX_LINES, |&(_, n)| n);
        assert!(
            lines <= limit,
            "{rel}: {lines} lines, past its limit of {limit}: split it along a seam"
        );
    }
    // A file listed as over the limit that is back under it leaves the list.
    for (f, _) in OVER_LIMIT {
        let lines = read(&Path::new(env!("CARGO_MANIFEST_DIR")).join(f))
            .lines()
            .count();
        assert!(
            lines > MAX_LINES,
            "{f} is within {MAX_LINES} lines now: take it off the list"
        );
    }
}

#[test]
fn the_system_clock_is_read_in_one_place() {
    for p in sources() {
        let rel = relative(&p);
        if rel == "src/time.rs" || is_test_file(&rel) {
            continue;
        }
        let text = read(&p);
        assert!(
            !text.contains("SystemTime::now"),
            "{rel} reads the system clock: use crate::time::system_now"
        );
    }
}
