//! The ruleset policy keeps each seed's failed growth between passes; on
//! the vendors' presets (regions, roles, parties, acceptance, backfill) it
//! forms what the policy that grows every seed on every pass forms, row
//! for row, and it does spare growths there.

use mmsim_core::metrics::RunRecords;
use mmsim_core::policy::ruleset::RulesetPolicy;
use mmsim_core::policy::{Policy, PolicyConfig};
use mmsim_scenario::load;
use std::path::Path;

/// Every ticket and match row of preset `name` run with `sets`, with the
/// scenario's own policy or (`exhaustive`) the one that keeps nothing; and
/// checks that only the keeping policy spared growths.
fn rows(name: &str, sets: &[&str], exhaustive: bool) -> RunRecords {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios")
        .join(name);
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let s = load(&path, &sets).expect("preset is valid").scenario;
    let spare = move |c: &PolicyConfig| -> Box<dyn Policy> {
        let PolicyConfig::Ruleset(params) = c else {
            panic!("a ruleset preset");
        };
        if exhaustive {
            Box::new(RulesetPolicy::exhaustive(params.clone()))
        } else {
            Box::new(RulesetPolicy::new(params.clone()))
        }
    };
    let (rows, stats) = super::oracle_rows(&s, Some(&spare));
    let work = stats.search.expect("the ruleset policy counts its growths");
    if exhaustive {
        assert_eq!(
            work.seed_visits, work.searches,
            "the exhaustive policy kept a growth"
        );
    } else {
        assert!(
            work.seed_visits > work.searches + work.seed_visits / 20,
            "kept growths spared little: {work:?}"
        );
    }
    rows
}

fn same(name: &str, sets: &[&str]) {
    let fast = rows(name, sets, false);
    let slow = rows(name, sets, true);
    assert!(fast.matches.len() > 50, "{} matches", fast.matches.len());
    assert_eq!(fast.matches.len(), slow.matches.len());
    for (a, b) in fast.matches.iter().zip(&slow.matches) {
        assert_eq!(a, b);
    }
    assert_eq!(fast, slow);
}

#[test]
fn flexmatch_three_teams_forms_what_growing_every_seed_forms() {
    same(
        "rulesets/flexmatch-three-teams.toml",
        &["run.duration=2h", "run.warmup=30m"],
    );
}

/// The whole run: past its third hour, leavers whose old matches end while
/// they wait again are rated anew (a kept growth that missed it took a
/// ticket the rules now turn down).
#[test]
fn accelbyte_roles_forms_what_growing_every_seed_forms() {
    same("rulesets/accelbyte-roles-5v5.toml", &[]);
}

/// `--explain` under a ruleset: each ticket's story lists exactly the
/// expansion steps its own wait reached, as the ruleset files state them.
#[test]
fn a_ruleset_ticket_s_story_lists_the_expansion_steps_its_wait_reached() {
    for (name, steps) in [
        (
            "rulesets/flexmatch-three-teams.toml",
            vec![
                (10.0, "FastConnection", "maxLatency", 100.0),
                (20.0, "FastConnection", "maxLatency", 150.0),
            ],
        ),
        (
            "rulesets/accelbyte-roles-5v5.toml",
            // Latency from 100 ms, 50 more every 5 s up to 300
            // (`region_expansion_*`); the mmr distance flexes at 60 s.
            vec![
                (5.0, "region expansion", "maxLatency", 150.0),
                (10.0, "region expansion", "maxLatency", 200.0),
                (15.0, "region expansion", "maxLatency", 250.0),
                (20.0, "region expansion", "maxLatency", 300.0),
                (60.0, "mmr", "maxDistance", 500.0),
            ],
        ),
    ] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../scenarios")
            .join(name);
        let sets: Vec<String> = ["run.duration=40m", "run.warmup=10m", "metrics.explain=true"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let s = load(&path, &sets).expect("preset is valid").scenario;
        let stories = mmsim_scenario::run::run_keeping(&s, s.run.seed)
            .output
            .explain
            .expect("explain was on");
        let mut reached = vec![0; steps.len() + 1];
        for story in &stories {
            let waited = story.left_s - story.enqueued_s;
            let expected: Vec<(f64, &str, &str, f64)> = steps
                .iter()
                .copied()
                .filter(|&(at, ..)| at <= waited)
                .collect();
            let got: Vec<(f64, &str, &str, f64)> = story
                .expansions
                .iter()
                .map(|e| (e.at_s, e.rule.as_str(), e.limit.as_str(), e.value))
                .collect();
            assert_eq!(got, expected, "{name}: ticket {}", story.ticket_id);
            reached[got.len()] += 1;
        }
        // Tickets that reached none, some and every step.
        assert!(reached.iter().all(|&n| n > 0), "{name}: {reached:?}");
    }
}
