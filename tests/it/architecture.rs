//! The layering in ARCHITECTURE.md, checked: no import cycle between
//! top-level modules of `src/`, and the engine and its plug-ins do not read
//! the file schema or the layers above them. Reads `crate::` paths in the
//! source text, so a new cycle or a reach upward fails here before review.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Top-level module of a file under src/ (`engine/sim.rs` -> `engine`).
fn module_of(rel: &Path) -> String {
    let first = rel
        .components()
        .next()
        .unwrap()
        .as_os_str()
        .to_string_lossy();
    first.trim_end_matches(".rs").to_string()
}

fn files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Module -> modules it names through `crate::X`, outside test code.
fn graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut all = Vec::new();
    files(src, &mut all);
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for path in all {
        let rel = path.strip_prefix(src).unwrap();
        let from = module_of(rel);
        let name = rel.file_name().unwrap().to_string_lossy();
        if matches!(from.as_str(), "lib" | "main")
            || name == "tests.rs"
            || name.ends_with("tests.rs")
        {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        // Unit tests at the bottom of a file may reach anywhere.
        let code = text.split("#[cfg(test)]").next().unwrap();
        for (i, _) in code.match_indices("crate::") {
            let rest = &code[i + "crate::".len()..];
            let target: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !target.is_empty() && target != from {
                g.entry(from.clone()).or_default().insert(target);
            }
        }
        // `use crate::{a, b::c}` groups.
        for (i, _) in code.match_indices("use crate::{") {
            let rest = &code[i + "use crate::{".len()..];
            let group = &rest[..rest.find("};").unwrap_or(rest.len())];
            let mut depth = 0;
            let mut item = String::new();
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        add(&mut g, &from, &item);
                        item.clear();
                    }
                    _ => item.push(c),
                }
            }
            add(&mut g, &from, &item);
        }
    }
    g
}

fn add(g: &mut BTreeMap<String, BTreeSet<String>>, from: &str, item: &str) {
    let target: String = item
        .trim()
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    if !target.is_empty() && target != from && target != "self" {
        g.entry(from.to_string()).or_default().insert(target);
    }
}

/// A cycle through `start`, as a path, if any.
fn cycle(g: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        g: &BTreeMap<String, BTreeSet<String>>,
        node: &str,
        stack: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(pos) = stack.iter().position(|n| n == node) {
            let mut c = stack[pos..].to_vec();
            c.push(node.to_string());
            return Some(c);
        }
        if done.contains(node) {
            return None;
        }
        stack.push(node.to_string());
        for next in g.get(node).into_iter().flatten() {
            if let Some(c) = visit(g, next, stack, done) {
                return Some(c);
            }
        }
        stack.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    for node in g.keys() {
        if let Some(c) = visit(g, node, &mut Vec::new(), &mut done) {
            return Some(c);
        }
    }
    None
}

/// The simulation core: it works on validated domain types and returns data,
/// so it must not see the file schema (`scenario`), arguments (`cli`) or
/// rendering (`report`). Test code may.
const CORE: [&str; 7] = [
    "engine", "pool", "policy", "teams", "rating", "outcome", "ruleset",
];
const ABOVE_CORE: [&str; 3] = ["scenario", "cli", "report"];

/// (module, what it imports) pairs where a `layer` module names a `banned` one.
fn reaches(
    g: &BTreeMap<String, BTreeSet<String>>,
    layer: &[&str],
    banned: &[&str],
) -> Vec<(String, String)> {
    layer
        .iter()
        .flat_map(|m| {
            g.get(*m)
                .into_iter()
                .flatten()
                .filter(|t| banned.contains(&t.as_str()))
                .map(move |t| (m.to_string(), t.clone()))
        })
        .collect()
}

#[test]
fn the_engine_and_plug_ins_do_not_import_the_schema_cli_or_report() {
    let g = graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    assert!(
        g.get("engine").is_some_and(|e| e.contains("pool")),
        "the reader lost the engine's imports: {g:?}"
    );
    let bad = reaches(&g, &CORE, &ABOVE_CORE);
    assert!(
        bad.is_empty(),
        "the core imports a layer above it (convert in scenario/to_engine.rs instead): {bad:?}"
    );
}

#[test]
fn the_reach_finder_finds_a_planted_import() {
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    g.entry("engine".into()).or_default().insert("model".into());
    g.entry("scenario".into())
        .or_default()
        .insert("engine".into());
    assert_eq!(reaches(&g, &CORE, &ABOVE_CORE), vec![]);
    g.entry("rating".into())
        .or_default()
        .insert("report".into());
    assert_eq!(
        reaches(&g, &CORE, &ABOVE_CORE),
        vec![("rating".to_string(), "report".to_string())]
    );
}

#[test]
fn no_import_cycle_between_top_level_modules() {
    let g = graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    assert!(
        g.contains_key("engine"),
        "the reader found no imports: {g:?}"
    );
    if let Some(c) = cycle(&g) {
        panic!("import cycle: {}", c.join(" -> "));
    }
}

#[test]
fn the_cycle_finder_finds_a_planted_cycle() {
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    g.entry("a".into()).or_default().insert("b".into());
    g.entry("b".into()).or_default().insert("c".into());
    assert_eq!(cycle(&g), None);
    g.entry("c".into()).or_default().insert("a".into());
    assert_eq!(cycle(&g).unwrap(), vec!["a", "b", "c", "a"]);
}
