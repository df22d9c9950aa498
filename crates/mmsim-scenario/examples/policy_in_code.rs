//! The library without the command line: load a scenario, swap its policy
//! for ones built in code, run each, and read the typed summaries. This is
//! the loop a designer's own tool (a notebook kernel, a tuning script) would
//! write around `mmsim-scenario`.
//!
//! `cargo run -p mmsim-scenario --example policy_in_code` prints a table;
//! `cargo test` runs it as a test (`test = true` in the manifest), checking
//! that a tighter rating limit makes fairer but slower matches.

use mmsim_core::metrics::Summary;
use mmsim_core::policy::{fixed_limit::FixedLimitParams, PolicyConfig};
use mmsim_scenario::{from_text, run::run_summary, Scenario};
use std::path::Path;

/// The repository's smoke scenario: two hours of a 1v1 queue.
const SMOKE: &str = include_str!("../../../scenarios/smoke.toml");

/// `base` with a fixed rating limit of `limit` points, checked as a file's
/// would be.
fn with_limit(base: &Scenario, limit: f64) -> Scenario {
    let mut s = base.clone();
    s.policy = PolicyConfig::FixedLimit(FixedLimitParams {
        limit,
        ..FixedLimitParams::default()
    });
    s.validate().expect("a valid scenario");
    s
}

/// (limit, summary) for each limit, same seed, so the arrivals are the same.
fn sweep(limits: &[f64]) -> Vec<(f64, Summary)> {
    let base = from_text(SMOKE, Path::new("smoke.toml"), &[])
        .expect("smoke.toml loads")
        .scenario;
    limits
        .iter()
        .map(|&limit| {
            let out = run_summary(&with_limit(&base, limit), 7, &mut |_, _| {});
            (limit, out.summary)
        })
        .collect()
}

fn main() {
    println!("limit  matches  wait p50 s  spread mean");
    for (limit, s) in sweep(&[50.0, 400.0]) {
        println!(
            "{limit:5}  {:7}  {:10.1}  {:11.1}",
            s.matches,
            s.wait_s.p50.unwrap_or(f64::NAN),
            s.spread_rating.mean.unwrap_or(f64::NAN)
        );
    }
}

#[test]
fn a_tighter_limit_makes_fairer_slower_matches() {
    let runs = sweep(&[50.0, 400.0]);
    let (tight, loose) = (&runs[0].1, &runs[1].1);
    assert!(tight.matches > 100 && loose.matches > 100);
    let spread = |s: &Summary| s.spread_rating.mean.unwrap();
    let wait = |s: &Summary| s.wait_s.mean.unwrap();
    assert!(spread(tight) < 50.0 && spread(loose) > spread(tight));
    assert!(
        wait(tight) > wait(loose),
        "{} vs {}",
        wait(tight),
        wait(loose)
    );
}
