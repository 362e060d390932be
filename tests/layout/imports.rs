//! The crate's import graph between files, read off the sources: which file names an item
//! of which other file, through `crate::`, `super::`, `self::` or a child module's name.
//! Tests (`tests.rs`, `tests/`, an inline `mod tests`) and comments are left out.

use std::collections::{BTreeMap, BTreeSet};

/// A source file by its module path (`core::text::escape`), with the file it is read from.
pub struct Module {
    pub path: Vec<String>,
    pub file: String,
    /// The code without comments, strings and the inline test module.
    pub code: String,
    /// The modules it declares (`mod x;`, `pub mod x;`).
    pub children: Vec<String>,
}

/// `src/core/text/escape.rs` -> `["core", "text", "escape"]`; `mod.rs` and `lib.rs` name
/// their folder.
pub fn module_path(rel: &str) -> Vec<String> {
    let inner = rel.trim_start_matches("src/").trim_end_matches(".rs");
    let mut parts: Vec<String> = inner.split('/').map(str::to_string).collect();
    if parts.last().is_some_and(|p| p == "mod" || p == "lib") {
        parts.pop();
    }
    parts
}

/// The code of a file with its comments and string literals blanked, cut before its inline
/// `#[cfg(test)] mod tests`.
pub fn code_of(text: &str) -> String {
    let cut = text.find("#[cfg(test)]\nmod tests {").unwrap_or(text.len());
    let bytes = &text.as_bytes()[..cut];
    let mut out = String::with_capacity(bytes.len());
    let mut i = 0;
    let src = &text[..cut];
    while i < bytes.len() {
        let rest = &src[i..];
        if rest.starts_with("//") {
            let end = rest.find('\n').unwrap_or(rest.len());
            i += end;
        } else if rest.starts_with("/*") {
            let end = rest.find("*/").map_or(rest.len(), |e| e + 2);
            i += end;
        } else if rest.starts_with("r\"") || rest.starts_with("r#\"") {
            let hashes = rest[1..].chars().take_while(|&c| c == '#').count();
            let close = format!("\"{}", "#".repeat(hashes));
            let body = 2 + hashes;
            let end = rest[body..]
                .find(&close)
                .map_or(rest.len(), |e| body + e + close.len());
            out.push_str("\"\"");
            i += end;
        } else if rest.starts_with('"') {
            let mut j = 1;
            let rb = rest.as_bytes();
            while j < rb.len() && rb[j] != b'"' {
                j += if rb[j] == b'\\' { 2 } else { 1 };
            }
            out.push_str("\"\"");
            i += (j + 1).min(rb.len());
        } else if rest.starts_with("'\"'") {
            i += 3;
        } else {
            let c = rest.chars().next().unwrap_or(' ');
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

fn children_of(code: &str) -> Vec<String> {
    code.lines()
        .filter_map(|l| {
            let t = l.trim();
            let t = t.strip_prefix("pub ").unwrap_or(t);
            let t = t.strip_prefix("pub(crate) ").unwrap_or(t);
            let name = t.strip_prefix("mod ")?.strip_suffix(';')?;
            (name != "tests").then(|| name.to_string())
        })
        .collect()
}

pub fn module(rel: &str, text: &str) -> Module {
    let code = code_of(text);
    Module {
        path: module_path(rel),
        file: rel.to_string(),
        children: children_of(&code),
        code,
    }
}

/// The paths a file's code names: each run of `ident::ident::...` starting at a word
/// boundary, as segments.
fn paths_in(code: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let b = code.as_bytes();
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut i = 0;
    while i < b.len() {
        if !word(b[i]) || (i > 0 && (word(b[i - 1]) || b[i - 1] == b':')) {
            i += 1;
            continue;
        }
        let mut segs = Vec::new();
        let mut j = i;
        loop {
            let s = j;
            while j < b.len() && word(b[j]) {
                j += 1;
            }
            segs.push(code[s..j].to_string());
            // `a::b`, `a::{b, c}` (the braces' first names are enough to find the files
            // they are in: every name inside is followed the same way).
            if code[j..].starts_with("::") && j + 2 < b.len() && word(b[j + 2]) {
                j += 2;
            } else {
                break;
            }
        }
        if segs.len() > 1 || code[j..].starts_with("::{") {
            out.push(segs);
            if code[j..].starts_with("::{") {
                let open = j + 2;
                if let Some(close) = matching_brace(code, open) {
                    let prefix = out.last().cloned().unwrap_or_default();
                    for item in split_top(&code[open + 1..close]) {
                        let mut p = prefix.clone();
                        p.extend(
                            item.split("::")
                                .map(|s| s.trim().trim_start_matches('{').trim().to_string())
                                .take_while(|s| !s.is_empty() && s.bytes().all(word)),
                        );
                        out.push(p);
                    }
                }
            }
        }
        i = j.max(i + 1);
    }
    out
}

fn matching_brace(code: &str, open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (k, c) in code[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(open + k);
                }
            }
            _ => {}
        }
    }
    None
}

fn split_top(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0usize, 0);
    for (k, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                out.push(&s[start..k]);
                start = k + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

/// The import graph: for each file, the other files whose items it names.
pub fn graph(modules: &[Module]) -> BTreeMap<String, BTreeSet<String>> {
    let by_path: BTreeMap<Vec<String>, &Module> =
        modules.iter().map(|m| (m.path.clone(), m)).collect();
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for m in modules {
        let edges = out.entry(m.file.clone()).or_default();
        for p in paths_in(&m.code) {
            let absolute: Vec<String> = match p[0].as_str() {
                "crate" => p[1..].to_vec(),
                "self" => m.path.iter().chain(&p[1..]).cloned().collect(),
                "super" => {
                    let ups = p.iter().take_while(|s| *s == "super").count();
                    let keep = m.path.len().saturating_sub(ups);
                    m.path[..keep].iter().chain(&p[ups..]).cloned().collect()
                }
                first if m.children.iter().any(|c| c == first) => {
                    m.path.iter().chain(&p).cloned().collect()
                }
                _ => continue,
            };
            // The deepest module file the path reaches.
            let target = (0..=absolute.len())
                .rev()
                .find_map(|n| by_path.get(&absolute[..n]).copied());
            if let Some(t) = target {
                // A child file using what its parent module declares is one module split
                // into files (Rust lets a child see its parent's private items): not an
                // import between rooms.
                let ancestor = t.path.len() < m.path.len() && m.path.starts_with(&t.path);
                if t.file != m.file && !t.path.is_empty() && !ancestor {
                    edges.insert(t.file.clone());
                }
            }
        }
    }
    out
}

/// The strongly connected groups of more than one file (Tarjan's algorithm): each is an
/// import cycle.
pub fn cycles(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'a> {
        g: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on.insert(v);
        let next: Vec<&'a str> =
            s.g.get(v)
                .map_or(Vec::new(), |e| e.iter().map(String::as_str).collect());
        for w in next {
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low[v];
                s.low.insert(v, lv.min(lw));
            } else if s.on.contains(w) {
                let iw = s.index[w];
                let lv = s.low[v];
                s.low.insert(v, lv.min(iw));
            }
        }
        if s.low[v] == s.index[v] {
            let mut group = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on.remove(w);
                group.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if group.len() > 1 {
                group.sort();
                s.out.push(group);
            }
        }
    }
    let mut s = State {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in g.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out
}
