//! `mmsim rebalance` through the real binary: the three AccelByte worked
//! examples shipped in `scenarios/rebalance/` give the documented teams (with
//! the corrections the docs state), and bad input exits 2 naming the field.

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

fn mmsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mmsim"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the binary runs")
}

/// Teams as sorted lists of sorted party member lists (short names "A", "B").
fn teams_of(json: &Value) -> Vec<Vec<Vec<String>>> {
    json["teams"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let mut parties: Vec<Vec<String>> = t["parties"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| {
                    let mut m: Vec<String> = p["members"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|n| {
                            n.as_str()
                                .unwrap()
                                .trim_start_matches("Player ")
                                .to_string()
                        })
                        .collect();
                    m.sort();
                    m
                })
                .collect();
            parties.sort();
            parties
        })
        .collect()
}

fn run_json(file: &str, method: &str) -> Value {
    let out = mmsim(&["rebalance", file, "--method", method, "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("--json prints JSON")
}

fn v(names: &[&[&str]]) -> Vec<Vec<String>> {
    names
        .iter()
        .map(|p| p.iter().map(|s| s.to_string()).collect())
        .collect()
}

#[test]
fn permutation_example_keeps_the_backfilled_player_and_picks_result_6() {
    let j = run_json(
        "scenarios/rebalance/accelbyte-permutation.json",
        "accelbyte",
    );
    assert_eq!(j["method"], "permutation");
    assert_eq!(
        teams_of(&j),
        vec![v(&[&["A"], &["B"], &["C"]]), v(&[&["D", "E"]])]
    );
    assert_eq!(j["member_count_diff"], 1);
    assert!((j["distance"].as_f64().unwrap() - 20.0 / 3.0).abs() < 1e-9);
    let chosen: Vec<u64> = j["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["chosen"] == true)
        .map(|c| c["result"].as_u64().unwrap())
        .collect();
    assert_eq!(chosen, vec![6]);
}

#[test]
fn combination_example_follows_the_stated_rule_not_the_pages_result_6() {
    let j = run_json(
        "scenarios/rebalance/accelbyte-combination.json",
        "accelbyte",
    );
    assert_eq!(j["method"], "combination");
    // Result 7: the smallest distance (6.67), later of the tied 2 and 7.
    assert_eq!(
        teams_of(&j),
        vec![v(&[&["B", "C"], &["F"]]), v(&[&["A"], &["D"], &["E"]])]
    );
    assert!((j["distance"].as_f64().unwrap() - 20.0 / 3.0).abs() < 1e-9);
    // Result 6 of the page ({B,C},{E} against {A},{D},{F}) is 13.33 apart.
    let six = &j["candidates"][5];
    assert_eq!(six["result"], 6);
    assert!((six["distance"].as_f64().unwrap() - 40.0 / 3.0).abs() < 1e-9);
}

#[test]
fn greedy_example_puts_g_with_h() {
    let j = run_json("scenarios/rebalance/accelbyte-greedy.json", "accelbyte");
    assert_eq!(j["method"], "greedy");
    assert_eq!(
        teams_of(&j),
        vec![
            v(&[&["A"], &["B", "C"], &["F"], &["I", "J", "K"]]),
            v(&[&["D"], &["E"], &["G", "H"], &["L", "M", "N"]]),
        ]
    );
    assert_eq!(j["member_count_diff"], 0);
    assert!((j["distance"].as_f64().unwrap() - 10.0 / 7.0).abs() < 1e-9);
}

#[test]
fn text_output_names_the_teams_and_the_distance() {
    let out = mmsim(&[
        "rebalance",
        "scenarios/rebalance/accelbyte-combination.json",
    ]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("team 1: 3 players  {Player B, Player C} {Player F}"),
        "{text}"
    );
    assert!(text.contains("distance: 6.67"), "{text}");
    assert!(
        text.contains("7  [") && text.contains("<- chosen"),
        "{text}"
    );
}

#[test]
fn every_method_keeps_parties_whole_on_the_greedy_example() {
    for method in ["permutation", "greedy", "balanced"] {
        let j = run_json("scenarios/rebalance/accelbyte-greedy.json", method);
        let teams = teams_of(&j);
        let mut all: Vec<Vec<String>> = teams.concat();
        all.sort();
        // The example's seven parties, each intact on one team.
        assert_eq!(
            all,
            v(&[
                &["A"],
                &["B", "C"],
                &["D"],
                &["E"],
                &["F"],
                &["G", "H"],
                &["I", "J", "K"],
                &["L", "M", "N"]
            ]),
            "{method}"
        );
    }
}

#[test]
fn bad_input_exits_2_and_names_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.json");
    std::fs::write(
        &file,
        r#"[{"name": "A", "mmr": 10}, {"name": "B", "mmr": "high"}]"#,
    )
    .unwrap();
    let f = file.to_str().unwrap();
    let out = mmsim(&["rebalance", f]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("players[1].mmr"), "{err}");

    let out = mmsim(&["rebalance", f, "--method", "roulette"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--method"));

    let out = mmsim(&[
        "rebalance",
        &Path::new(f).with_extension("missing").to_string_lossy(),
    ]);
    assert_eq!(out.status.code(), Some(2));
}
