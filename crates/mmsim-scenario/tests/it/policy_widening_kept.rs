//! The widening policy's kept failures on real presets: the pass that keeps
//! its failed seeds between passes (`Windowed`) and the plain pass
//! (`Stateless`, its oracle) form the same matches row for row, in two
//! regional role queues with ready checks (a seasoned ladder and a fresh
//! one).

use mmsim_core::metrics::RunRecords;
use mmsim_core::policy::{Policy, PolicyConfig, Stateless};
use mmsim_scenario::from_text;
use std::path::Path;

/// Every ticket and match row of `text` run with `sets`, with the
/// scenario's own widening policy or (`oracle`) the plain pass, in every
/// data centre.
fn rows(text: &str, sets: &[&str], oracle: bool) -> RunRecords {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let s = from_text(text, Path::new("preset.toml"), &sets)
        .expect("preset is valid")
        .scenario;
    let plain = |c: &PolicyConfig| -> Box<dyn Policy> {
        let PolicyConfig::Widening(params) = c else {
            panic!("a widening preset");
        };
        Box::new(Stateless::new(params.clone()))
    };
    super::oracle_rows(&s, oracle.then_some(&plain)).0
}

#[test]
fn regions_roles_keeps_failures_and_forms_what_the_plain_pass_forms() {
    let text = include_str!("../../../../scenarios/regions-roles-5v5.toml");
    let short = ["run.duration=5h", "run.warmup=1h"];
    let kept = rows(text, &short, false);
    assert!(kept.matches.len() > 150, "{} matches", kept.matches.len());
    assert_eq!(kept, rows(text, &short, true));
}

#[test]
fn a_fresh_ladders_regional_role_queue_forms_what_the_plain_pass_forms() {
    let text = include_str!("../../../../scenarios/ci/regions-roles-fresh.toml");
    let longer = ["run.duration=3h", "run.warmup=30m"];
    let kept = rows(text, &longer, false);
    assert!(kept.matches.len() > 150, "{} matches", kept.matches.len());
    assert_eq!(kept, rows(text, &longer, true));
}
