//! Team matches end to end: parties are never split whatever the policy and
//! team-formation method (a property test over random party mixes), team
//! metrics appear only for team formats, and bad team settings are refused
//! before the run, naming the key, both by the loader and by the binary.

use mmsim::engine::{Config, Parts, Simulation};
use mmsim::metrics::TicketEnd;
use mmsim::scenario::FromScenario;
use mmsim::scenario::{from_text, Scenario};
use proptest::prelude::*;
use std::path::Path;
use std::process::Command;

fn scenario_text(team_size: usize, party_sizes: &[f64], policy: &str, teams: &str) -> String {
    let sizes: Vec<String> = party_sizes.iter().map(|w| format!("{w}")).collect();
    format!(
        r#"
[run]
name = "parties"
seed = 3
duration = "40m"
[population]
size = 3000
skill = {{ dist = "normal", mean = 1500, sd = 300 }}
tiers = [{{ tier = 9, weight = 1 }}, {{ tier = 10, weight = 1 }}]
categories = {{ main-battle-tank = 3, light-tank = 1.5, tank-destroyer = 2, armoured-fighter = 2, artillery = 1.5 }}
languages = [{{ name = "en", weight = 2 }}, {{ name = "ru", weight = 1 }}]
extra_language_prob = 0.3
win_rate = {{ mean = 0.5, sd = 0.05 }}
games = {{ dist = "uniform", min = 0, max = 500 }}
[arrivals]
rate_per_s = 2.0
party_sizes = [{}]
patience = {{ dist = "exponential", mean = "5m" }}
requeue_prob = 0.5
think_time = "30s"
[match]
teams = 2
team_size = {team_size}
[policy]
{policy}
[teams]
{teams}
[outcome]
model = "logistic"
duration = "4m"
"#,
        sizes.join(", ")
    )
}

fn load(text: &str) -> Result<Scenario, String> {
    from_text(text, Path::new("test.toml"), &[])
        .map(|l| l.scenario)
        .map_err(|e| e.to_string())
}

const POLICIES: [&str; 3] = [
    "kind = \"fixed-limit\"\nlimit = 400",
    "kind = \"widening\"\nbase = 100\nrate_per_s = 10\nmax = 600",
    "kind = \"quality\"\nthreshold = 0.7\nthreshold_floor = 0.3\nneighbours = 30",
];
const METHODS: [&str; 3] = [
    "method = \"balanced\"",
    "method = \"abba\"\nsmoothing = true",
    "method = \"accelbyte\"",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, .. ProptestConfig::default() })]

    /// Every match holds whole parties: the tickets matched into it fill it
    /// exactly, and its per-team party counts add up to its ticket count (a
    /// party split over two teams would be counted on both). The engine
    /// refuses any split that breaks a party, so no proposal is refused either.
    #[test]
    fn parties_are_never_split(
        team_size in prop::sample::select(vec![3usize, 5, 15]),
        weights in prop::collection::vec(0.0f64..1.0, 1..5),
        policy in 0usize..3,
        method in 0usize..3,
    ) {
        let mut party_sizes = weights.clone();
        party_sizes[0] += 0.5; // solos, so every mix can fill a team
        party_sizes.truncate(team_size);
        let text = scenario_text(team_size, &party_sizes, POLICIES[policy], METHODS[method]);
        let s = load(&text).expect("valid scenario");
        let mut kept = mmsim::metrics::KeepRows::default();
        let out = Simulation::new(Config::from_scenario(&s), 5, Parts::from_scenario(&s), &mut kept).run(&mut |_, _| {});
        prop_assert_eq!(out.stats.proposals_rejected, 0);
        drop(out);
        let records = kept.0;
        prop_assert!(!records.matches.is_empty());
        let mut players = vec![0u32; records.matches.len()];
        let mut tickets = vec![0u32; records.matches.len()];
        for t in &records.tickets {
            if let TicketEnd::Matched(m) = t.end {
                players[m.index()] += t.party_size;
                tickets[m.index()] += 1;
            }
        }
        for m in &records.matches {
            prop_assert_eq!(players[m.id.index()] as usize, 2 * team_size);
            prop_assert_eq!(m.team_parties.iter().sum::<u32>(), tickets[m.id.index()]);
        }
    }
}

#[test]
fn team_metrics_appear_for_teams_and_not_for_1v1() {
    let s = load(&scenario_text(5, &[0.7, 0.2, 0.1], POLICIES[1], METHODS[0])).unwrap();
    let out = mmsim::run::run_keeping(&s, 5);
    let sum = &out.summary;
    let wr = &sum["win_rate_gap_pp"];
    let shares: f64 = ["within_1", "within_2", "3_or_more"]
        .iter()
        .map(|k| wr[*k].as_f64().unwrap())
        .sum();
    assert!((shares - 1.0).abs() < 1e-9, "{wr}");
    assert!(sum["team_rating_gap"]["p90"].as_f64().unwrap() >= 0.0);
    let eq = sum["party_count_gap"]["equal_share"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&eq));
    assert!(sum["top_player_gap_skill"]["mean"].is_number());

    let solo = load(&scenario_text(1, &[1.0], POLICIES[0], METHODS[0])).unwrap();
    let out = mmsim::run::run_keeping(&solo, 5);
    for key in [
        "team_rating_gap",
        "win_rate_gap_pp",
        "party_count_gap",
        "top_player_gap_skill",
    ] {
        assert!(out.summary.get(key).is_none(), "1v1 summary has {key}");
    }
}

#[test]
fn unfillable_party_mixes_and_misfit_methods_are_refused_naming_the_key() {
    // Pairs only cannot make a team of 5.
    let e = load(&scenario_text(5, &[0.0, 1.0], POLICIES[0], METHODS[0])).unwrap_err();
    assert!(
        e.contains("arrivals.party_sizes") && e.contains("team of 5"),
        "{e}"
    );
    // Parties of 4 cannot join a team of 3.
    let e = load(&scenario_text(
        3,
        &[0.5, 0.0, 0.0, 0.5],
        POLICIES[0],
        METHODS[0],
    ))
    .unwrap_err();
    assert!(e.contains("arrivals.party_sizes") && e.contains("4"), "{e}");
    // AccelByte's combination is for fewer than 12 players; 15v15 has 30.
    let e = load(&scenario_text(
        15,
        &[1.0],
        POLICIES[0],
        "method = \"accelbyte\"\nmode = \"combination\"",
    ))
    .unwrap_err();
    assert!(e.contains("teams.mode"), "{e}");
    // ABBA splits into exactly two teams.
    let text = scenario_text(5, &[1.0], POLICIES[0], METHODS[1]).replace("teams = 2", "teams = 3");
    let e = load(&text).unwrap_err();
    assert!(e.contains("teams.method"), "{e}");
    // A shown win rate needs games behind it.
    let text = scenario_text(5, &[1.0], POLICIES[0], METHODS[0])
        .replace("games = { dist = \"uniform\", min = 0, max = 500 }\n", "");
    let e = load(&text).unwrap_err();
    assert!(e.contains("population.win_rate"), "{e}");
    let text = scenario_text(5, &[1.0], POLICIES[0], METHODS[0])
        .replace("artillery = 1.5", "artillery = -1");
    let e = load(&text).unwrap_err();
    assert!(e.contains("population.categories.artillery"), "{e}");
}

#[test]
fn the_binary_exits_2_before_running_an_unfillable_scenario() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.toml");
    std::fs::write(
        &file,
        scenario_text(5, &[0.0, 1.0], POLICIES[0], METHODS[0]),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_mmsim"))
        .args(["run", file.to_str().unwrap(), "--quiet", "--out"])
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("arrivals.party_sizes"), "{err}");
    assert!(!dir.path().join("out").join("summary.json").exists());
    let out = Command::new(env!("CARGO_BIN_EXE_mmsim"))
        .args(["validate", file.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("arrivals.party_sizes"), "{err}");
}

#[test]
fn shipped_team_scenarios_validate() {
    for f in [
        "scenarios/armored-warfare-15v15.toml",
        "scenarios/dota2-5v5.toml",
        "scenarios/dota2-day.toml",
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_mmsim"))
            .args(["validate", f])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{f}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
