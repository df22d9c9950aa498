//! The ruleset policy keeps each seed's failed growth between passes; on
//! the vendors' presets (regions, roles, parties, acceptance, backfill) it
//! forms what the policy that grows every seed on every pass forms, row
//! for row, and it does spare growths there.

use mmsim_core::engine::{Config, Parts, Simulation};
use mmsim_core::metrics::{KeepRows, RunRecords};
use mmsim_core::policy::ruleset::RulesetPolicy;
use mmsim_core::policy::{Policy, PolicyConfig};
use mmsim_scenario::{load, FromScenario};
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
    let mut parts = Parts::from_scenario(&s);
    let PolicyConfig::Ruleset(params) = &s.policy else {
        panic!("a ruleset preset");
    };
    let spare = |params: &mmsim_core::policy::ruleset::RulesetParams| -> Box<dyn Policy> {
        if exhaustive {
            Box::new(RulesetPolicy::exhaustive(params.clone()))
        } else {
            Box::new(RulesetPolicy::new(params.clone()))
        }
    };
    parts.policy = spare(params);
    for p in &mut parts.regional {
        *p = spare(params);
    }
    let mut kept = KeepRows::default();
    let out = Simulation::new(Config::from_scenario(&s), s.run.seed, parts, &mut kept)
        .run(&mut |_, _| {});
    let work = out
        .stats
        .search
        .expect("the ruleset policy counts its growths");
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
    kept.0
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

#[test]
fn accelbyte_roles_forms_what_growing_every_seed_forms() {
    same(
        "rulesets/accelbyte-roles-5v5.toml",
        &["run.duration=2h", "run.warmup=30m"],
    );
}
