//! The layering in ARCHITECTURE.md that crates cannot express. Between
//! crates the compiler enforces it: `mmsim-core` cannot name the scenario
//! schema, the reports or the command line, because it does not depend on
//! them. What is left is checked here: the modules inside `mmsim-core`
//! import only what the architecture's map allows (no cycle, plug-ins
//! below the engine), and the core crate's manifest names none of the
//! heavy crates. Reads whole files, test code included: the core's tests
//! live by the same rules as its code.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn core_src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/mmsim-core/src")
}

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

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Module -> modules it names through `crate::X` or `use crate::{X, ..}`,
/// anywhere in its files.
fn graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut all = Vec::new();
    files(src, &mut all);
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for path in all {
        let rel = path.strip_prefix(src).unwrap();
        let from = module_of(rel);
        if from == "lib" {
            continue;
        }
        let code = std::fs::read_to_string(&path).unwrap();
        g.entry(from.clone()).or_default();
        for (i, _) in code.match_indices("crate::") {
            let rest = &code[i + "crate::".len()..];
            add(&mut g, &from, rest);
        }
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

/// A cycle, as a path, if any.
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

/// ARCHITECTURE.md's "may import" column for the modules of mmsim-core.
/// The engine sits on top and may import any of them; the plug-ins and
/// metrics sit below it and never see it (a policy proposes; it does not
/// drive the loop), and `model` imports nothing of ours.
const MAY_IMPORT: [(&str, &[&str]); 9] = [
    ("model", &[]),
    ("pool", &["model"]),
    ("teams", &["model"]),
    ("rating", &["model"]),
    ("outcome", &["model"]),
    ("ruleset", &["model"]),
    ("metrics", &["model"]),
    ("policy", &["model", "pool", "teams", "ruleset"]),
    (
        "engine",
        &[
            "model", "pool", "policy", "teams", "rating", "outcome", "ruleset", "metrics",
        ],
    ),
];

/// (module, import) pairs the map does not allow; a module missing from
/// the map is reported as importing itself, so a new one must be placed.
fn forbidden(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<(String, String)> {
    let mut bad = Vec::new();
    for (m, targets) in g {
        match MAY_IMPORT.iter().find(|(k, _)| k == m) {
            None => bad.push((m.clone(), m.clone())),
            Some((_, ok)) => {
                for t in targets {
                    if !ok.contains(&t.as_str()) {
                        bad.push((m.clone(), t.clone()));
                    }
                }
            }
        }
    }
    bad
}

#[test]
fn the_core_s_modules_import_only_what_the_map_allows() {
    let g = graph(&core_src());
    assert!(
        g.get("engine").is_some_and(|e| e.contains("pool")),
        "the reader lost the engine's imports: {g:?}"
    );
    let bad = forbidden(&g);
    assert!(
        bad.is_empty(),
        "imports ARCHITECTURE.md's map does not allow (module, import): {bad:?}"
    );
}

#[test]
fn no_import_cycle_between_the_core_s_modules() {
    let g = graph(&core_src());
    if let Some(c) = cycle(&g) {
        panic!("import cycle: {}", c.join(" -> "));
    }
}

/// `mmsim-report`'s files stand in layers (number formatting, the chart
/// model, the pages' shared HTML, the plots' registry, the pages): a loop
/// between two of them is what made `plots.rs` hold everything.
#[test]
fn no_import_cycle_between_the_report_s_modules() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/mmsim-report/src");
    let g = graph(&src);
    assert!(
        g.get("html").is_some_and(|e| e.contains("chart")),
        "the reader lost the report's imports: {g:?}"
    );
    if let Some(c) = cycle(&g) {
        panic!("import cycle in mmsim-report: {}", c.join(" -> "));
    }
    // A top-level file that reaches a sibling through `super::` would hide
    // the import from the graph: siblings are named through `crate::`.
    let mut top = Vec::new();
    for e in std::fs::read_dir(&src).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "rs") {
            top.push(p);
        }
    }
    for p in top {
        let code = std::fs::read_to_string(&p).unwrap();
        let hidden = code
            .match_indices("super::")
            .filter(|(i, _)| !code[i + "super::".len()..].starts_with('*'))
            .count();
        assert_eq!(hidden, 0, "{} names a sibling through super::", p.display());
    }
}

#[test]
fn the_checks_find_a_planted_import_and_a_planted_cycle() {
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    g.entry("engine".into())
        .or_default()
        .insert("policy".into());
    g.entry("policy".into()).or_default().insert("pool".into());
    assert_eq!(forbidden(&g), vec![]);
    assert_eq!(cycle(&g), None);
    g.entry("pool".into()).or_default().insert("engine".into());
    assert_eq!(
        forbidden(&g),
        vec![("pool".to_string(), "engine".to_string())]
    );
    assert_eq!(
        cycle(&g).unwrap(),
        vec!["engine", "policy", "pool", "engine"]
    );
    g.entry("scenario".into()).or_default();
    assert!(forbidden(&g).contains(&("scenario".to_string(), "scenario".to_string())));
}

/// Crates the simulation core must never link, not even for its tests:
/// `cargo tree -p mmsim-core` shows dev-dependencies too.
const HEAVY: [&str; 13] = [
    "polars",
    "polars-parquet",
    "plotters",
    "image",
    "clap",
    "indicatif",
    "toml",
    "toml_edit",
    "rayon",
    "criterion",
    // `mmsim serve`'s HTTP: the binary's alone.
    "httparse",
    "tiny_http",
    "hyper",
];

/// The dependency names of a manifest's dependency tables, by a plain
/// read of its `[..dependencies]` sections.
fn dependency_names(manifest: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut in_deps = false;
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_deps = line
                .trim_matches(|c| c == '[' || c == ']')
                .ends_with("dependencies");
            continue;
        }
        if in_deps && !line.is_empty() && !line.starts_with('#') {
            let name: String = line
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '-' || *c == '_')
                .collect();
            names.push(name);
        }
    }
    names
}

#[test]
fn the_core_crate_names_no_heavy_dependency() {
    let manifest = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/mmsim-core/Cargo.toml"),
    )
    .unwrap();
    let names = dependency_names(&manifest);
    assert!(names.contains(&"rand".to_string()), "{names:?}");
    let heavy: Vec<&String> = names
        .iter()
        .filter(|n| HEAVY.contains(&n.as_str()))
        .collect();
    assert!(heavy.is_empty(), "mmsim-core depends on {heavy:?}");
    let planted = format!("{manifest}\n[dev-dependencies]\ntoml.workspace = true\n");
    assert!(dependency_names(&planted).contains(&"toml".to_string()));
}
