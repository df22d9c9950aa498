//! `mmsim catalogue` and `mmsim policies`: every plug-in family's catalogue
//! as terminal text or as the Markdown tables the docs embed, so a plug-in
//! declared in its family's `plugins!` line is listed without a hand edit
//! (`tests/it/docs_catalogue.rs` fails when a doc's table falls behind).

use crate::model::registry::Entry;

/// A plug-in family: the scenario section it fills, the key that picks a
/// member, the folder its files live in, and its catalogue.
#[derive(Clone, Copy, Debug)]
pub struct Family {
    pub name: &'static str,
    pub tag: &'static str,
    pub folder: &'static str,
    pub entries: &'static [Entry],
}

/// Every family, in pipeline order.
pub const FAMILIES: [Family; 4] = [
    Family {
        name: "policy",
        tag: crate::policy::PolicyConfig::TAG,
        folder: "crates/mmsim-core/src/policy",
        entries: crate::policy::CATALOGUE,
    },
    Family {
        name: "teams",
        tag: crate::teams::TeamsConfig::TAG,
        folder: "crates/mmsim-core/src/teams",
        entries: crate::teams::CATALOGUE,
    },
    Family {
        name: "rating",
        tag: crate::rating::RatingConfig::TAG,
        folder: "crates/mmsim-core/src/rating",
        entries: crate::rating::CATALOGUE,
    },
    Family {
        name: "outcome",
        tag: crate::outcome::OutcomeConfig::TAG,
        folder: "crates/mmsim-core/src/outcome",
        entries: crate::outcome::CATALOGUE,
    },
];

/// The family whose scenario section is `[name]`.
pub fn family(name: &str) -> Option<&'static Family> {
    FAMILIES.iter().find(|f| f.name == name)
}

/// One entry per two lines: the name and source, then the parameters.
pub fn text(f: &Family) -> String {
    f.entries
        .iter()
        .map(|e| {
            format!(
                "{:<22} {}\n{:<22} parameters: {}\n",
                e.name, e.source, "", e.parameters
            )
        })
        .collect()
}

/// The family's table as the docs embed it: one row per plug-in.
pub fn markdown(f: &Family) -> String {
    // A `|` inside a cell would end it.
    let cell = |s: &str| s.replace('|', "\\|");
    let mut out = format!(
        "| `{}` | where it comes from | parameters | file |\n|---|---|---|---|\n",
        f.tag
    );
    for e in f.entries {
        out.push_str(&format!(
            "| `{}` | {} | {} | `{}/{}` |\n",
            e.name,
            cell(e.source),
            cell(e.parameters),
            f.folder,
            e.file
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_family_lists_each_of_its_names_once_in_order() {
        let names: [&[&str]; 4] = [
            crate::policy::PolicyConfig::NAMES,
            crate::teams::TeamsConfig::NAMES,
            crate::rating::RatingConfig::NAMES,
            crate::outcome::OutcomeConfig::NAMES,
        ];
        for (f, names) in FAMILIES.iter().zip(names) {
            let listed: Vec<&str> = f.entries.iter().map(|e| e.name).collect();
            assert_eq!(listed, names, "{}", f.name);
            for e in f.entries {
                let path = format!("{}/{}/{}", env!("CARGO_MANIFEST_DIR"), f.folder, e.file);
                // A file, or a folder named with its trailing slash.
                let p = std::path::Path::new(&path);
                assert!(
                    p.is_file() || (path.ends_with('/') && p.join("mod.rs").is_file()),
                    "{path}"
                );
                assert!(
                    !e.source.is_empty() && !e.parameters.is_empty(),
                    "{}",
                    e.name
                );
            }
        }
    }

    #[test]
    fn every_key_a_plug_in_writes_is_in_its_parameters() {
        let defaults: [Vec<serde_json::Value>; 4] = [
            json(crate::policy::PolicyConfig::defaults()),
            json(crate::teams::TeamsConfig::defaults()),
            json(crate::rating::RatingConfig::defaults()),
            json(crate::outcome::OutcomeConfig::defaults()),
        ];
        for (f, values) in FAMILIES.iter().zip(defaults) {
            for (e, v) in f.entries.iter().zip(values) {
                let listed: Vec<&str> = e
                    .parameters
                    .split(',')
                    .map(|k| k.split_whitespace().next().unwrap_or(""))
                    .collect();
                for key in v.as_object().unwrap().keys().filter(|k| *k != f.tag) {
                    assert!(
                        listed.contains(&key.as_str()) || listed.contains(&&*format!("{key}.*")),
                        "{} {}: `{key}` not in PARAMETERS",
                        f.name,
                        e.name
                    );
                }
            }
        }
    }

    fn json<T: serde::Serialize>(v: Vec<T>) -> Vec<serde_json::Value> {
        v.iter().map(|x| serde_json::to_value(x).unwrap()).collect()
    }

    #[test]
    fn a_table_row_escapes_a_pipe_and_names_the_file() {
        const ENTRIES: &[Entry] = &[Entry {
            name: "x",
            source: "a | b",
            parameters: "k",
            file: "x.rs",
        }];
        let f = Family {
            name: "policy",
            tag: "kind",
            folder: "crates/mmsim-core/src/policy",
            entries: ENTRIES,
        };
        assert_eq!(
            markdown(&f),
            "| `kind` | where it comes from | parameters | file |\n|---|---|---|---|\n\
             | `x` | a \\| b | k | `crates/mmsim-core/src/policy/x.rs` |\n"
        );
        assert_eq!(
            text(&f),
            format!("x{:21} a | b\n{:22} parameters: k\n", "", "")
        );
    }
}
