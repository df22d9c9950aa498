//! Vendors' rulesets through the real binary: every shipped example loads,
//! is explained and runs; a run keeps the rules it was given (checked on its
//! own tickets table); what mmsim cannot simulate exits 2 naming it.

use crate::common::{mmsim, scenario, stderr};
use polars::prelude::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn json_files(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    out.sort();
    out
}

fn short_run(scenario: &str, out: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "run",
        scenario,
        "--quiet",
        "--out",
        out.to_str().unwrap(),
        "--set",
        "run.duration=\"25m\"",
        "--set",
        "run.warmup=\"0s\"",
    ];
    args.extend_from_slice(extra);
    mmsim(&args)
}

fn summary(dir: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(dir.join("summary.json")).unwrap()).unwrap()
}

#[test]
fn every_shipped_example_ruleset_is_explained_and_runs_in_its_scenario() {
    let base = root().join("scenarios/rulesets");
    let scenarios: Vec<PathBuf> = std::fs::read_dir(&base)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    let texts: Vec<String> = scenarios
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    let tmp = tempfile::tempdir().unwrap();
    let mut ran = 0;
    for vendor in ["flexmatch", "accelbyte"] {
        let files = json_files(&base.join(vendor));
        assert!(!files.is_empty(), "no {vendor} examples");
        for f in files {
            let name = f.file_name().unwrap().to_string_lossy().into_owned();
            let o = mmsim(&["explain-ruleset", f.to_str().unwrap()]);
            assert_eq!(o.status.code(), Some(0), "{name}: {}", stderr(&o));
            let text = String::from_utf8_lossy(&o.stdout);
            assert!(
                text.contains("rules:") && text.contains("becomes:"),
                "{text}"
            );
            let rel = format!("{vendor}/{name}");
            let at = texts
                .iter()
                .position(|t| t.contains(&format!("file = \"{rel}\"")))
                .unwrap_or_else(|| panic!("no scenario in scenarios/rulesets runs {rel}"));
            let out = tmp.path().join(&name);
            let o = short_run(scenarios[at].to_str().unwrap(), &out, &["--tables", "none"]);
            assert_eq!(o.status.code(), Some(0), "{rel}: {}", stderr(&o));
            let s = summary(&out);
            assert!(
                s["matches"].as_u64().unwrap() > 20,
                "{rel}: {} matches",
                s["matches"]
            );
            ran += 1;
        }
    }
    assert!(ran >= 4);
}

fn table(path: &Path) -> DataFrame {
    let f = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    ParquetReader::new(f).finish().unwrap()
}

#[test]
fn an_accelbyte_run_keeps_every_match_within_its_flexed_distance() {
    // skill-5v5: mmr within 200, 400 from 30 s, 800 from 60 s of the
    // oldest ticket's wait; a ticket's rating is its party's average.
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let o = short_run(&scenario("rulesets/accelbyte-5v5.toml"), &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let t = table(&out.join("tickets.parquet"));
    let ids = t.column("match_id").unwrap().u32().unwrap().clone();
    let rating = t.column("rating").unwrap().f64().unwrap().clone();
    let wait = t.column("wait_s").unwrap().f64().unwrap().clone();
    let left = t.column("left_s").unwrap().f64().unwrap().clone();
    // Backfill joiners leave the queue after their match formed and are
    // placed by [backfill]'s window, not by the ruleset: only the tickets
    // that left when their match formed count.
    let mut formed: BTreeMap<u32, f64> = BTreeMap::new();
    for i in 0..t.height() {
        if let Some(m) = ids.get(i) {
            let e = formed.entry(m).or_insert(f64::INFINITY);
            *e = e.min(left.get(i).unwrap());
        }
    }
    let mut by_match: BTreeMap<u32, (f64, f64, f64)> = BTreeMap::new();
    for i in 0..t.height() {
        let Some(m) = ids.get(i) else { continue };
        if left.get(i).unwrap() > formed[&m] {
            continue;
        }
        let (r, w) = (rating.get(i).unwrap(), wait.get(i).unwrap());
        let e = by_match
            .entry(m)
            .or_insert((f64::INFINITY, f64::NEG_INFINITY, 0.0));
        *e = (e.0.min(r), e.1.max(r), e.2.max(w));
    }
    assert!(by_match.len() > 50, "{} matches", by_match.len());
    let mut widened = 0;
    for (m, (lo, hi, oldest)) in &by_match {
        let limit = if *oldest >= 60.0 {
            800.0
        } else if *oldest >= 30.0 {
            400.0
        } else {
            200.0
        };
        assert!(
            hi - lo <= limit + 1e-9,
            "match {m}: ratings {lo}..{hi} with the oldest waiting {oldest} s"
        );
        widened += usize::from(hi - lo > 200.0);
    }
    assert!(widened > 0, "no match needed the flexed distance");
}

#[test]
fn run_ruleset_on_any_scenario_takes_the_ruleset_s_format() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let o = short_run(
        &scenario("smoke.toml"),
        &out,
        &[
            "--tables",
            "none",
            "--ruleset",
            "scenarios/rulesets/accelbyte/skill-5v5.json",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let saved = std::fs::read_to_string(out.join("scenario.toml")).unwrap();
    assert!(
        saved.contains("skill-5v5.json") && saved.contains("ruleset"),
        "{saved}"
    );
    let s = summary(&out);
    assert!(s["matches"].as_u64().unwrap() > 20);
    // Ten players a match.
    let players = s["tickets"].as_u64().unwrap();
    assert!(players > 0);
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

#[test]
fn an_unsupported_rule_type_exits_2_naming_the_rule_and_its_type() {
    let tmp = tempfile::tempdir().unwrap();
    let f = write(
        tmp.path(),
        "sort.json",
        r#"{ "name": "s", "ruleLanguageVersion": "1.0",
             "playerAttributes": [{ "name": "skill", "type": "number" }],
             "teams": [{ "name": "p", "maxPlayers": 1, "quantity": 2 }],
             "rules": [{ "name": "SortBySkill", "type": "distanceSort", "sortAttribute": "skill" }] }"#,
    );
    let out = tmp.path().join("run");
    for args in [
        vec!["explain-ruleset", f.as_str()],
        vec![
            "run",
            &scenario("smoke.toml"),
            "--ruleset",
            f.as_str(),
            "--out",
            out.to_str().unwrap(),
        ],
    ] {
        let o = mmsim(&args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("rule `SortBySkill`") && err.contains("`distanceSort`"),
            "{err}"
        );
        assert!(!err.contains("panicked"), "{err}");
    }
    assert!(!out.exists(), "a refused run wrote its folder");
}

#[test]
fn what_the_population_cannot_supply_exits_2_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let latency = write(
        tmp.path(),
        "latency.json",
        r#"{ "ruleLanguageVersion": "1.0", "teams": [{ "name": "p", "maxPlayers": 1, "quantity": 2 }],
             "rules": [{ "name": "FastConnection", "type": "latency", "maxLatency": 50 }] }"#,
    );
    let prestige = write(
        tmp.path(),
        "prestige.json",
        r#"{ "ruleLanguageVersion": "1.0", "playerAttributes": [{ "name": "prestige" }],
             "teams": [{ "name": "p", "maxPlayers": 1, "quantity": 2 }],
             "rules": [{ "name": "Close", "type": "batchDistance", "batchAttribute": "prestige", "maxDistance": 5 }] }"#,
    );
    for (file, want) in [
        (
            latency,
            "rule `FastConnection` (latency) needs players' pings",
        ),
        (prestige, "attribute `prestige`"),
    ] {
        let o = mmsim(&[
            "validate",
            &scenario("smoke.toml"),
            "--set",
            &format!("ruleset.file={file:?}"),
            "--set",
            "policy={ kind = \"ruleset\" }",
        ]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains(want) && err.contains("ruleset.file"), "{err}");
    }
}

#[test]
fn explain_ruleset_prints_each_rule_with_its_expansion_seconds() {
    let o = mmsim(&[
        "explain-ruleset",
        "scenarios/rulesets/flexmatch/three-team-game.json",
        "--scenario",
        &scenario("rulesets/flexmatch-three-teams.toml"),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    for want in [
        "FastConnection (latency)",
        "50 ms, 100 ms from 10 s, 150 ms from 20 s",
        "OverallMedicLimit (collection)",
        "character <- the player's roles",
        "acceptance: required, timeout 30 s",
        "format: 3 teams of 5",
    ] {
        assert!(text.contains(want), "missing {want:?} in\n{text}");
    }
}

fn sha_of(args: &[&str]) -> String {
    let o = mmsim(args);
    assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    text.lines()
        .find_map(|l| l.strip_prefix("scenario_sha256 "))
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or_else(|| panic!("no hash in {text}"))
        .to_owned()
}

#[test]
fn the_scenario_hash_follows_the_ruleset_s_bytes_not_its_path() {
    let preset = scenario("rulesets/flexmatch-8v8.toml");
    let json = root().join("scenarios/rulesets/flexmatch/aliens-vs-cowboys.json");
    let relative = sha_of(&["validate", &preset]);
    let set_abs = format!("ruleset.file={:?}", json.to_string_lossy());
    let absolute = sha_of(&["validate", &preset, "--set", &set_abs]);
    assert_eq!(relative, absolute);
    let tmp = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(&json).unwrap();
    let changed = text.replacen("\"maxDistance\": 10", "\"maxDistance\": 11", 1);
    assert_ne!(text, changed);
    let copy = write(tmp.path(), "changed.json", &changed);
    let other = sha_of(&[
        "validate",
        &preset,
        "--set",
        &format!("ruleset.file={copy:?}"),
    ]);
    assert_ne!(relative, other);
}
