//! The plug-in tables in the docs are the catalogues the `plugins!` lines
//! generate, so a new plug-in's row cannot be forgotten: each block between
//! `<!-- catalogue FAMILY ... -->` and `<!-- end catalogue -->` must equal
//! `mmsim catalogue FAMILY --markdown`. `UPDATE_DOCS=1 cargo test --test
//! docs_catalogue` rewrites the blocks in place.

use mmsim::cli::catalogue::{family, markdown, FAMILIES};
use std::path::Path;

const DOCS: [&str; 2] = ["docs/policies.md", "docs/scenarios.md"];
const OPEN: &str = "<!-- catalogue ";
const CLOSE: &str = "<!-- end catalogue -->";

/// The text with every block's body replaced by the catalogue's table, and
/// the families its blocks name (an unknown family is an error).
fn regenerate(text: &str) -> Result<(String, Vec<String>), String> {
    let mut out = String::new();
    let mut named = Vec::new();
    let mut lines = text.split_inclusive('\n');
    while let Some(line) = lines.next() {
        out.push_str(line);
        let Some(rest) = line.trim_start().strip_prefix(OPEN) else {
            continue;
        };
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '-')
            .collect();
        let f = family(&name).ok_or_else(|| format!("unknown catalogue family `{name}`"))?;
        named.push(name);
        out.push_str(&markdown(f));
        loop {
            match lines.next() {
                Some(l) if l.trim() == CLOSE => {
                    out.push_str(l);
                    break;
                }
                Some(_) => {}
                None => return Err(format!("a `{OPEN}` block without `{CLOSE}`")),
            }
        }
    }
    Ok((out, named))
}

#[test]
fn the_docs_plug_in_tables_are_the_catalogues() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let update = std::env::var_os("UPDATE_DOCS").is_some();
    let mut named = Vec::new();
    let mut stale = Vec::new();
    for doc in DOCS {
        let path = root.join(doc);
        let text = std::fs::read_to_string(&path).unwrap();
        let (fresh, families) = regenerate(&text).unwrap_or_else(|e| panic!("{doc}: {e}"));
        named.extend(families);
        if fresh != text {
            if update {
                std::fs::write(&path, fresh).unwrap();
            } else {
                stale.push(doc);
            }
        }
    }
    assert!(
        stale.is_empty(),
        "{stale:?}: a plug-in table differs from the catalogue; regenerate with \
         `UPDATE_DOCS=1 cargo test --test it docs_catalogue` (or paste `mmsim catalogue FAMILY --markdown`)"
    );
    for f in FAMILIES {
        assert!(
            named.iter().any(|n| n == f.name),
            "no doc embeds the `{}` catalogue",
            f.name
        );
    }
}

#[test]
fn a_stale_block_is_rewritten_and_the_text_around_it_kept() {
    let text = format!("before\n{OPEN}rating -->\n| old row |\n{CLOSE}\nafter\n");
    let (fresh, named) = regenerate(&text).unwrap();
    assert_eq!(named, vec!["rating"]);
    assert_eq!(
        fresh,
        format!(
            "before\n{OPEN}rating -->\n{}{CLOSE}\nafter\n",
            markdown(family("rating").unwrap())
        )
    );
    assert_ne!(fresh, text);
    assert!(regenerate(&format!("{OPEN}nope -->\n{CLOSE}\n")).is_err());
    assert!(regenerate(&format!("{OPEN}teams -->\n| row |\n")).is_err());
}
