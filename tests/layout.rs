//! The rules of ARCHITECTURE.md that a reader of the sources can check, checked here so
//! that they stay true: the house (three wings over one core, no import cycle), where
//! `unsafe` may be, that every export catches panics, and how long a file or a function
//! may grow.

use std::path::{Path, PathBuf};

#[path = "layout/imports.rs"]
mod imports;

/// The core, the three wings over it, and the bindings over them, as `src/lib.rs` names them.
const CORE: &str = "core";
const WINGS: [&str; 3] = ["channel", "memory", "dropin"];
const BINDINGS: &str = "bindings";

/// Imports that may cross the rules (a wing into another wing, the core into a wing),
/// each `(from file, to file)`, and each named in ARCHITECTURE.md. At most one.
const CROSSINGS: [(&str, &str); 0] = [];

/// Lines a source file may have (its tests live beside it, in `tests.rs`).
const MAX_LINES: usize = 500;

/// Lines a function may have, from its signature to its closing brace (tests apart):
/// past it, a function is split into named phases.
const MAX_FN_LINES: usize = 120;

/// Files past [`MAX_LINES`] today, each with the most lines it may have: they may shrink,
/// not grow, until they are split along their seams.
const OVER_LIMIT: [(&str, usize); 0] = [];

/// Where `unsafe` may appear besides `src/bindings/`: the byte-level text modules, whose
/// unchecked UTF-8 conversions are measured (each block says why it holds).
const UNSAFE_OUTSIDE_BINDINGS: [&str; 3] = [
    "src/core/input/packed.rs",
    "src/core/packed_text.rs",
    "src/core/short_str.rs",
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
        if rel == "src/core/time.rs" || is_test_file(&rel) {
            continue;
        }
        let text = read(&p);
        assert!(
            !text.contains("SystemTime::now"),
            "{rel} reads the system clock: use crate::core::time::system_now"
        );
    }
}

/// Every non-test source file as a module of the import graph.
fn modules() -> Vec<imports::Module> {
    sources()
        .iter()
        .filter_map(|p| {
            let rel = relative(p);
            (!is_test_file(&rel)).then(|| imports::module(&rel, &read(p)))
        })
        .collect()
}

/// The part of the house a file is in: `core`, a wing, or `bindings`.
fn part(file: &str) -> &str {
    file.trim_start_matches("src/")
        .split(['/', '.'])
        .next()
        .unwrap_or("")
}

#[test]
fn lib_names_the_core_the_three_wings_and_the_bindings() {
    let lib = read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs"));
    let mut declared: Vec<&str> = lib
        .lines()
        .filter_map(|l| {
            let t = l.trim();
            let t = t.strip_prefix("pub ").unwrap_or(t);
            t.strip_prefix("mod ")?.strip_suffix(';')
        })
        .collect();
    declared.sort_unstable();
    let mut expected: Vec<&str> = WINGS.iter().copied().chain([CORE, BINDINGS]).collect();
    expected.sort_unstable();
    assert_eq!(declared, expected);
    for m in modules() {
        if m.file == "src/lib.rs" {
            continue;
        }
        assert!(
            expected.contains(&part(&m.file)),
            "{} is outside the core, the wings and the bindings",
            m.file
        );
    }
}

#[test]
fn no_file_imports_another_that_imports_it_back() {
    let g = imports::graph(&modules());
    let edges: usize = g.values().map(std::collections::BTreeSet::len).sum();
    assert!(
        edges > 300,
        "only {edges} imports were read: the reader is broken"
    );
    let cycles = imports::cycles(&g);
    assert!(
        cycles.is_empty(),
        "import cycles (each group of files reaches itself):\n{}",
        cycles
            .iter()
            .map(|c| c.join(" <-> "))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn a_wing_imports_the_core_and_its_own_files_and_the_core_imports_no_wing() {
    let g = imports::graph(&modules());
    let architecture = read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("ARCHITECTURE.md"));
    for (from, to) in CROSSINGS {
        assert!(
            architecture.contains(from) && architecture.contains(to),
            "the crossing {from} -> {to} is not named in ARCHITECTURE.md"
        );
    }
    let mut wrong = Vec::new();
    for (from, targets) in &g {
        for to in targets {
            let (a, b) = (part(from), part(to));
            let allowed = match a {
                "bindings" => true,
                "core" => b == CORE,
                wing => b == CORE || b == wing,
            };
            if !allowed && !CROSSINGS.contains(&(from.as_str(), to.as_str())) {
                wrong.push(format!("{from} -> {to}"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports across the house (a wing imports the core and itself, the core only itself):\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_import_reader_finds_what_it_is_shown() {
    let a = imports::module(
        "src/channel/store/mod.rs",
        "//! crate::memory::x in a comment\nmod build;\nuse crate::core::text::{escape::escape, estimate};\nuse build::Built;\nfn f() { let s = \"crate::dropin::x\"; super::message::M::new(); }\n#[cfg(test)]\nmod tests {\n    use crate::memory::y;\n}\n",
    );
    let files = [
        ("src/channel/store/build.rs", ""),
        ("src/channel/message.rs", ""),
        ("src/core/text.rs", ""),
        ("src/core/text/escape.rs", ""),
        ("src/memory/mod.rs", ""),
        ("src/dropin/mod.rs", ""),
    ];
    let mut all: Vec<imports::Module> = files.iter().map(|(f, t)| imports::module(f, t)).collect();
    all.push(a);
    let g = imports::graph(&all);
    let got: Vec<&str> = g["src/channel/store/mod.rs"]
        .iter()
        .map(String::as_str)
        .collect();
    assert_eq!(
        got,
        [
            "src/channel/message.rs",
            "src/channel/store/build.rs",
            "src/core/text.rs",
            "src/core/text/escape.rs"
        ]
    );
    let mut looped = g.clone();
    looped
        .entry("src/channel/store/build.rs".into())
        .or_default()
        .insert("src/channel/store/mod.rs".into());
    assert_eq!(
        imports::cycles(&looped),
        [vec![
            "src/channel/store/build.rs".to_string(),
            "src/channel/store/mod.rs".to_string()
        ]]
    );
}

/// Each function of `text` (cut before its inline test module) as its name, first line
/// (1-based) and length in lines: from a line that starts an item `fn` to the first line
/// after it holding only a `}` at the signature's indentation.
fn functions(text: &str) -> Vec<(String, usize, usize)> {
    let code = text.split("#[cfg(test)]\nmod tests").next().unwrap_or(text);
    let lines: Vec<&str> = code.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let body = line.trim_start();
        let indent = &line[..line.len() - body.len()];
        let mut rest = body;
        for prefix in [
            "pub(crate) ",
            "pub(super) ",
            "pub ",
            "const ",
            "async ",
            "unsafe ",
        ] {
            rest = rest.strip_prefix(prefix).unwrap_or(rest);
        }
        let Some(sig) = rest.strip_prefix("fn ") else {
            continue;
        };
        let name: String = sig
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if line.contains('{') && line.matches('{').count() == line.matches('}').count() {
            out.push((name, i + 1, 1));
            continue;
        }
        let close = format!("{indent}}}");
        let end = lines[i + 1..]
            .iter()
            .position(|l| *l == close)
            .map(|k| i + 1 + k);
        // A declaration without a body (a trait's) ends at its `;` before any `{`.
        let declared_only = lines[i..]
            .iter()
            .find(|l| l.contains('{') || l.trim_end().ends_with(';'))
            .is_some_and(|l| !l.contains('{'));
        if let (Some(end), false) = (end, declared_only) {
            out.push((name, i + 1, end - i + 1));
        }
    }
    out
}

#[test]
fn no_function_is_longer_than_a_reader_follows() {
    let mut long = Vec::new();
    let mut seen = 0;
    for p in sources() {
        let rel = relative(&p);
        if is_test_file(&rel) {
            continue;
        }
        for (name, line, n) in functions(&read(&p)) {
            seen += 1;
            if n > MAX_FN_LINES {
                long.push(format!("{rel}:{line} {name}: {n} lines"));
            }
        }
    }
    assert!(
        seen > 1_000,
        "only {seen} functions were found: the reader is broken"
    );
    assert!(
        long.is_empty(),
        "functions over {MAX_FN_LINES} lines (split them into named phases):\n{}",
        long.join("\n")
    );
}

#[test]
fn the_function_reader_measures_what_it_is_shown() {
    let text = "impl A {\n    pub fn a(&self) -> u8 {\n        if x {\n        }\n        1\n    }\n    fn b(&self);\n}\nfn c() {}\nfn d()\nwhere T: X,\n{\n}\n#[cfg(test)]\nmod tests {\n    fn t() {\n    }\n}\n";
    assert_eq!(
        functions(text),
        [
            ("a".to_string(), 2, 5),
            ("c".to_string(), 9, 1),
            ("d".to_string(), 10, 4)
        ]
    );
}

#[test]
fn one_word_one_meaning() {
    // "scope" is what a memory search or tool reaches; "store" is a ChannelStore or a
    // MemoryStore (ARCHITECTURE.md, "One meaning per word").
    for m in modules() {
        for line in m.code.lines() {
            let t = line.trim_start();
            let t = t.strip_prefix("pub ").unwrap_or(t);
            let Some(name) = t
                .strip_prefix("struct ")
                .or_else(|| t.strip_prefix("enum "))
                .map(|r| {
                    r.split(|c: char| !c.is_alphanumeric() && c != '_')
                        .next()
                        .unwrap_or("")
                })
            else {
                continue;
            };
            assert!(
                !name.contains("Scope") || m.file.starts_with("src/memory/"),
                "{}: {name}: a scope is the memory's (a session and perhaps one lane)",
                m.file
            );
            assert!(
                name != "Store",
                "{}: a bare Store: say which (ChannelStore, MemoryStore)",
                m.file
            );
        }
    }
    // "lane" is a thread key: the batches read without JSON take the packed path.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut texts: Vec<PathBuf> = sources();
    for dir in [
        "js",
        "js/core",
        "js/channel",
        "js/memory",
        "js/dropin",
        "docs",
        "openclaw",
        "scripts",
        "__test__",
    ] {
        if let Ok(entries) = std::fs::read_dir(root.join(dir)) {
            texts.extend(entries.flatten().map(|e| e.path()).filter(|p| p.is_file()));
        }
    }
    texts.extend(["README.md", "ARCHITECTURE.md"].map(|f| root.join(f)));
    for p in texts {
        let text = std::fs::read_to_string(&p)
            .unwrap_or_default()
            .to_lowercase();
        for phrase in ["fast lane", "packed lane", "json lane"] {
            assert!(
                !text.contains(phrase),
                "{}: \"{phrase}\": a lane is a thread key; say the packed path",
                relative(&p)
            );
        }
    }
}

#[test]
fn the_js_layer_keeps_the_house_too() {
    // `js/<part>/*.js` require only their own part and `js/core/`.
    let js = Path::new(env!("CARGO_MANIFEST_DIR")).join("js");
    let mut seen = 0;
    for part in ["core", "channel", "memory", "dropin"] {
        let Ok(entries) = std::fs::read_dir(js.join(part)) else {
            panic!("js/{part}/ is missing");
        };
        for e in entries.flatten() {
            let p = e.path();
            let text = read(&p);
            for (at, _) in text.match_indices("require('") {
                let target = text[at + 9..].split('\'').next().unwrap_or("");
                if target.starts_with("node:") {
                    continue;
                }
                seen += 1;
                let allowed = target.starts_with("./")
                    || target.starts_with("../core/")
                    || (part == "core" && target.starts_with("./"));
                assert!(
                    allowed,
                    "{}: requires {target}: a part of js/ requires itself and js/core/",
                    relative(&p)
                );
            }
        }
    }
    assert!(seen >= 8, "only {seen} requires read");
    // Nothing is left at the top of js/ but the typings header.
    for e in std::fs::read_dir(&js).into_iter().flatten().flatten() {
        let p = e.path();
        assert!(
            p.is_dir() || p.file_name().is_some_and(|n| n == "header.d.ts"),
            "{}: a JS file belongs in js/<part>/",
            relative(&p)
        );
    }
}
