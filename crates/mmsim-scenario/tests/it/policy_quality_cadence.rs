//! The quality policy's search cadence on real presets: the incremental
//! policy and the from-scratch oracle, both with the same `research`
//! cadence, form the same matches row for row; and the cadence is not a
//! no-op there (the exact policy forms others).

use mmsim_core::metrics::RunRecords;
use mmsim_core::policy::quality::QualityOracle;
use mmsim_core::policy::{Policy, PolicyConfig};
use mmsim_scenario::from_text;
use std::path::Path;

/// Every ticket and match row of `text` run with `sets`, with the
/// scenario's own policy or (`oracle`) the quality oracle of the same
/// parameters.
fn rows(text: &str, sets: &[&str], oracle: bool) -> RunRecords {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let s = from_text(text, Path::new("preset.toml"), &sets)
        .expect("preset is valid")
        .scenario;
    let from_scratch = |c: &PolicyConfig| -> Box<dyn Policy> {
        let PolicyConfig::Quality(params) = c else {
            panic!("a quality preset");
        };
        Box::new(QualityOracle::new(params.clone()))
    };
    super::oracle_rows(&s, oracle.then_some(&from_scratch)).0
}

#[test]
fn dota2_with_a_cadence_forms_what_the_oracle_with_that_cadence_forms() {
    let text = include_str!("../../../../scenarios/dota2-one-queue.toml");
    let short = ["run.duration=3h", "run.warmup=30m"];
    let cadenced = [short[0], short[1], "policy.research=10s"];
    let fast = rows(text, &cadenced, false);
    let slow = rows(text, &cadenced, true);
    assert!(fast.matches.len() > 300, "{} matches", fast.matches.len());
    assert_eq!(fast.matches.len(), slow.matches.len());
    for (a, b) in fast.matches.iter().zip(&slow.matches) {
        assert_eq!(a, b);
    }
    assert_eq!(fast, slow);
    let exact = rows(text, &short, false);
    assert_ne!(
        exact.matches, fast.matches,
        "a 10 s cadence changed nothing"
    );
}

#[test]
fn dota2_exact_forms_what_the_oracle_forms() {
    let text = include_str!("../../../../scenarios/dota2-one-queue.toml");
    let short = ["run.duration=2h", "run.warmup=30m"];
    assert_eq!(rows(text, &short, false), rows(text, &short, true));
}
