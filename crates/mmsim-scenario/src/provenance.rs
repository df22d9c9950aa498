//! Where an output came from: the mmsim version and a hash of the scenario
//! that was run, so a result can be traced to its input and results of
//! different inputs are never mixed (`merge`) or compared unawares.

use super::Scenario;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The version of this build, as `Cargo.toml` gives it.
pub const MMSIM_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The block written into `summary.json`, `perf.json` and shard tables.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Provenance {
    pub mmsim_version: String,
    /// SHA-256 of the scenario's canonical form (`canonical`), hex.
    pub scenario_sha256: String,
}

impl Provenance {
    pub fn of(scenario: &Scenario) -> Provenance {
        Provenance {
            mmsim_version: MMSIM_VERSION.to_owned(),
            scenario_sha256: scenario_sha256(scenario),
        }
    }
}

/// The validated scenario as JSON: every section with its defaults filled
/// in, fields in schema order, durations in seconds. Two files that differ
/// only in comments, layout, key order or how a duration is written (`2h`,
/// `120m`) have the same canonical form; any value that changes a run
/// changes it. The sweep section is kept as written (its order fixes the
/// settings' order). `run.seed` and `run.replications` are left out: they
/// say which runs were made, not what a run is, and every output records
/// its seeds beside the hash, so seed 8 of a replication and `run --seed 8`
/// carry the same hash, as they carry the same numbers.
pub fn canonical(scenario: &Scenario) -> Value {
    let mut v = serde_json::to_value(scenario).expect("a validated scenario serializes");
    if let Some(run) = v.get_mut("run").and_then(Value::as_object_mut) {
        run.shift_remove("seed");
        run.shift_remove("replications");
    }
    // A trace is part of what was run: its bytes' hash, not its name, counts.
    if let (Some(sha), Some(a)) = (
        &scenario.arrivals.trace_sha256,
        v.get_mut("arrivals").and_then(Value::as_object_mut),
    ) {
        a.insert("trace_sha256".into(), Value::String(sha.clone()));
    }
    // So is a loaded ladder.
    if let (Some(sha), Some(p)) = (
        &scenario.population.ratings_sha256,
        v.get_mut("population").and_then(Value::as_object_mut),
    ) {
        p.insert("ratings_sha256".into(), Value::String(sha.clone()));
    }
    // So is a ruleset: its bytes' hash in place of its path, so the same
    // file named relative to a scenario or by `--ruleset` (absolute) hashes
    // the same.
    if let (Some(sha), Some(r)) = (
        scenario.ruleset.as_ref().and_then(|r| r.sha256.as_ref()),
        v.get_mut("ruleset").and_then(Value::as_object_mut),
    ) {
        r.shift_remove("file");
        r.insert("sha256".into(), Value::String(sha.clone()));
    }
    v
}

/// SHA-256 of the canonical form's compact JSON bytes. serde_json writes
/// floats by shortest round-trip digits, so the bytes, and the hash, are the
/// same on every platform and run.
pub fn scenario_sha256(scenario: &Scenario) -> String {
    let bytes = serde_json::to_vec(&canonical(scenario)).expect("JSON serializes");
    hex(&Sha256::digest(&bytes))
}

pub(super) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The first place two JSON values differ, as a dotted path and the two
/// values there (`None` where one side lacks the key): keys of `a` in
/// order, then keys only in `b`. `None` when they are equal.
pub fn first_difference(a: &Value, b: &Value) -> Option<(String, Option<Value>, Option<Value>)> {
    fn walk(path: &str, a: &Value, b: &Value) -> Option<(String, Option<Value>, Option<Value>)> {
        let join = |k: &str| {
            if path.is_empty() {
                k.to_owned()
            } else {
                format!("{path}.{k}")
            }
        };
        match (a, b) {
            (Value::Object(x), Value::Object(y)) => {
                for (k, va) in x {
                    match y.get(k) {
                        Some(vb) => {
                            if let Some(d) = walk(&join(k), va, vb) {
                                return Some(d);
                            }
                        }
                        None => return Some((join(k), Some(va.clone()), None)),
                    }
                }
                y.iter()
                    .find(|(k, _)| !x.contains_key(*k))
                    .map(|(k, vb)| (join(k), None, Some(vb.clone())))
            }
            (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
                .iter()
                .zip(y)
                .enumerate()
                .find_map(|(i, (va, vb))| walk(&format!("{path}[{i}]"), va, vb)),
            _ => (a != b).then(|| (path.to_owned(), Some(a.clone()), Some(b.clone()))),
        }
    }
    walk("", a, b)
}

/// `first_difference` as a phrase: "`policy.base` is 20 in A and 10 in B".
pub fn describe_difference(a: &Value, b: &Value, name_a: &str, name_b: &str) -> Option<String> {
    let (path, va, vb) = first_difference(a, b)?;
    let show = |v: Option<Value>| match v {
        Some(v) => format!("is {v}"),
        None => "is absent".to_owned(),
    };
    Some(format!(
        "`{path}` {} in {name_a} and {} in {name_b}",
        show(va),
        show(vb).trim_start_matches("is ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::from_text;
    use serde_json::json;
    use std::path::Path;

    const BASE: &str = r#"[run]
name = "t"
duration = "2h"

[population]
size = 100
skill = { dist = "normal", mean = 1500, sd = 300 }

[arrivals]
rate_per_s = 1.0

[policy]
kind = "fixed-limit"
limit = 150
"#;

    fn hash_of(text: &str) -> String {
        scenario_sha256(&from_text(text, Path::new("t.toml"), &[]).unwrap().scenario)
    }

    #[test]
    fn the_hash_is_sha256_in_hex() {
        // FIPS 180-2's example, so the digest and its hex are the standard ones.
        assert_eq!(
            hex(&Sha256::digest(b"abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn layout_comments_durations_and_seeds_keep_the_hash_and_values_change_it() {
        let h = hash_of(BASE);
        assert_eq!(h.len(), 64);
        assert_eq!(h, hash_of(BASE));
        let relaid = BASE
            .replace("duration = \"2h\"", "# two hours\nduration = \"120m\"")
            .replace(
                "kind = \"fixed-limit\"\nlimit = 150",
                "limit = 150\nkind = \"fixed-limit\"",
            );
        assert_eq!(h, hash_of(&relaid));
        assert_ne!(h, hash_of(&BASE.replace("limit = 150", "limit = 151")));
        assert_ne!(h, hash_of(&BASE.replace("name = \"t\"", "name = \"u\"")));
        // Which seeds were run is recorded beside the hash, not in it.
        assert_eq!(
            h,
            hash_of(&BASE.replace("name = \"t\"", "name = \"t\"\nseed = 2\nreplications = 3"))
        );
        let loaded = from_text(BASE, Path::new("t.toml"), &[]).unwrap();
        let set = loaded.with_sets(&["policy.limit=151".into()]).unwrap();
        assert_eq!(
            scenario_sha256(&set.scenario),
            hash_of(&BASE.replace("limit = 150", "limit = 151"))
        );
    }

    #[test]
    fn the_first_difference_is_named_by_its_path() {
        let a = json!({"run": {"seed": 1}, "policy": {"base": 10, "max": [1, 2]}});
        assert_eq!(first_difference(&a, &a), None);
        let b = json!({"run": {"seed": 1}, "policy": {"base": 20, "max": [1, 3]}});
        assert_eq!(
            describe_difference(&a, &b, "shard 0/2", "shard 1/2").unwrap(),
            "`policy.base` is 10 in shard 0/2 and 20 in shard 1/2"
        );
        let c = json!({"run": {"seed": 1}, "policy": {"base": 10, "max": [1, 3]}});
        assert_eq!(first_difference(&a, &c).unwrap().0, "policy.max[1]");
        let d = json!({"run": {"seed": 1}, "policy": {"base": 10, "max": [1, 2]}, "sweep": 1});
        assert_eq!(
            describe_difference(&a, &d, "A", "B").unwrap(),
            "`sweep` is absent in A and 1 in B"
        );
    }
}
