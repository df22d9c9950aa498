//! Engine checks against theory: closed-form queueing results, the logistic
//! model, and determinism.
//!
//! Moved from mmsim-core's `engine/tests.rs`: these checks build their world from
//! scenario text, which only this crate reads.

#![allow(unused_imports)]
use mmsim_scenario::FromScenario;

use mmsim_core::metrics::TicketEnd;
use mmsim_scenario::run::run_keeping as run;
use mmsim_scenario::{from_text, Scenario};
use std::path::Path;

fn scenario(text: &str) -> Scenario {
    from_text(text, Path::new("test.toml"), &[])
        .expect("test scenario is valid")
        .scenario
}

/// An "accept anyone" 1v1 queue: Poisson arrivals at rate λ, exponential
/// patience with rate θ, no requeue, matching on every join.
fn any_opponent(lambda: f64, mean_patience_s: f64, hours: u32) -> Scenario {
    scenario(&format!(
        r#"
[run]
name = "theory"
seed = 11
duration = "{hours}h"
warmup = "10m"
[population]
size = 2000000
skill = {{ dist = "normal", mean = 1500, sd = 300 }}
[arrivals]
rate_per_s = {lambda}
patience = {{ dist = "exponential", mean = "{mean_patience_s}s" }}
requeue_prob = 0.0
[policy]
kind = "fixed-limit"
limit = 1e12
[outcome]
model = "logistic"
duration = "1m"
"#
    ))
}

/// With "accept anyone" and a match on every join, the pool holds 0 or 1
/// tickets. From 0, an arrival moves it to 1 (rate λ); from 1, an arrival
/// matches (rate λ) or the waiter abandons (rate θ), both back to 0. The
/// balance π0·λ = π1·(λ + θ) gives π0 = (λ+θ)/(2λ+θ), π1 = λ/(2λ+θ).
/// By PASTA an arrival finds the state with these probabilities:
/// - it finds someone (π1): matched at once, wait 0;
/// - it finds no one (π0): it waits min(next arrival, own patience),
///   exponential with rate λ+θ; it abandons with probability θ/(λ+θ).
///
/// Hence abandonment = π0·θ/(λ+θ) = θ/(2λ+θ); mean time in queue over all
/// tickets = π0/(λ+θ) = 1/(2λ+θ); and among matched tickets (probability
/// 2λ/(2λ+θ)) the mean wait is π0·λ/(λ+θ)² divided by that, = 1/(2(λ+θ)).
#[test]
fn any_opponent_queue_matches_its_closed_forms() {
    let (lambda, patience_s) = (0.1, 10.0);
    let theta = 1.0 / patience_s;
    let s = any_opponent(lambda, patience_s, 60);
    let out = run(&s, s.run.seed);
    let sum = &out.summary;
    let tickets = sum["tickets"].as_u64().unwrap() as f64;
    assert!(tickets > 20_000.0, "{tickets}");

    let abandon = sum["abandon_rate"].as_f64().unwrap();
    let abandon_theory = theta / (2.0 * lambda + theta); // 1/3
                                                         // Tickets alternate between waiting and matching, so successive outcomes
                                                         // are correlated; 5 binomial standard errors is still under 0.017.
    let se = (abandon_theory * (1.0 - abandon_theory) / tickets).sqrt();
    assert!(
        (abandon - abandon_theory).abs() < 5.0 * se,
        "abandon {abandon} vs {abandon_theory}"
    );

    let queue_mean = sum["queue_time_s"]["mean"].as_f64().unwrap();
    let queue_theory = 1.0 / (2.0 * lambda + theta); // 3.33 s
    assert!(
        (queue_mean / queue_theory - 1.0).abs() < 0.04,
        "queue {queue_mean} vs {queue_theory}"
    );

    let wait_mean = sum["wait_s"]["mean"].as_f64().unwrap();
    let wait_theory = 1.0 / (2.0 * (lambda + theta)); // 2.5 s
    assert!(
        (wait_mean / wait_theory - 1.0).abs() < 0.05,
        "wait {wait_mean} vs {wait_theory}"
    );

    // Half of the matched tickets waited nothing: P(find someone | matched) =
    // π1 / (2λ/(2λ+θ)) = 1/2.
    let matched: Vec<_> = out
        .records
        .tickets
        .iter()
        .filter(|t| !t.in_warmup && matches!(t.end, TicketEnd::Matched(_)))
        .collect();
    let instant =
        matched.iter().filter(|t| t.left == t.enqueued).count() as f64 / matched.len() as f64;
    assert!((instant - 0.5).abs() < 0.02, "instant share {instant}");
}

#[test]
fn winners_follow_the_logistic_model_per_probability_bin() {
    let s = any_opponent(0.5, 60.0, 24);
    let out = run(&s, 5);
    let mut bins = [(0.0f64, 0.0f64, 0usize); 10];
    for m in out.records.matches.iter().filter(|m| m.winner.is_some()) {
        let p = m.p_team0.expect("finished matches were played");
        let b = ((p * 10.0) as usize).min(9);
        bins[b].0 += p;
        bins[b].1 += f64::from(m.winner == Some(0));
        bins[b].2 += 1;
    }
    let mut checked = 0;
    for (predicted, won, n) in bins {
        if n < 500 {
            continue;
        }
        let p = predicted / n as f64;
        let rate = won / n as f64;
        let se = (p * (1.0 - p) / n as f64).sqrt();
        assert!(
            (rate - p).abs() < 4.0 * se + 1e-3,
            "bin at {p:.3}: realised {rate:.3} over {n}"
        );
        checked += 1;
    }
    assert!(checked >= 6, "only {checked} bins had data");
}

#[test]
fn same_seed_same_summary_other_seed_other_numbers() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/smoke.toml"
    ))
    .unwrap();
    let s = scenario(&text);
    let a = run(&s, 7);
    let b = run(&s, 7);
    let c = run(&s, 8);
    let bytes = |v: &serde_json::Value| serde_json::to_vec_pretty(v).unwrap();
    assert_eq!(bytes(&a.summary), bytes(&b.summary));
    assert_eq!(a.records, b.records);
    assert_ne!(a.summary["wait_s"], c.summary["wait_s"]);
}

#[test]
fn two_policies_on_one_seed_see_the_same_fresh_arrivals() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/smoke.toml"
    ))
    .unwrap();
    let widening = scenario(&text);
    let fixed_text = text.replace(
        "kind = \"widening\"\nbase = 100\nrate_per_s = 5\nmax = 400",
        "kind = \"fixed-limit\"\nlimit = 150",
    );
    assert_ne!(
        fixed_text, text,
        "smoke.toml's policy block changed; update this test"
    );
    let fixed = scenario(&fixed_text);
    let a = run(&widening, 3);
    let b = run(&fixed, 3);
    let fresh = |o: &mmsim_scenario::run::KeptRun| -> Vec<(u64, u32)> {
        o.records
            .tickets
            .iter()
            .filter(|t| !t.requeue)
            .map(|t| (t.enqueued.as_ms(), t.lead.0))
            .take(200)
            .collect()
    };
    // Early on nobody is busy yet, so the first fresh arrivals are identical.
    assert_eq!(fresh(&a), fresh(&b));
    assert_ne!(a.summary["wait_s"], b.summary["wait_s"]);
}

/// A role queue's whole run: every match holds exactly its teams'
/// composition (two tanks, two healers, six damage for 2 x 1/1/3), each
/// player in a role they accept; no match is ever formed without its tanks.
/// Damage is over-represented among main roles, so damage mains wait longer.
#[test]
fn a_role_queue_run_never_forms_a_match_without_its_tanks() {
    let s = scenario(
        r#"
[run]
name = "roles"
seed = 3
duration = "3h"
warmup = "30m"
[population]
size = 2000
skill = { dist = "normal", mean = 1500, sd = 300 }
[arrivals]
rate_per_s = 0.5
party_sizes = [0.7, 0.2, 0.1]
patience = { dist = "exponential", mean = "10m" }
requeue_prob = 0.8
think_time = "1m"
[match]
teams = 2
team_size = 5
[roles]
names = ["tank", "healer", "damage"]
shares = [0.15, 0.15, 0.7]
second_prob = 0.1
composition = { tank = 1, healer = 1, damage = 3 }
[policy]
kind = "widening"
base = 150
rate_per_s = 5
max = 1500
[outcome]
model = "logistic"
duration = "20m"
"#,
    );
    let out = run(&s, s.run.seed);
    let mut by_match: std::collections::BTreeMap<u32, [u32; 3]> = Default::default();
    for t in &out.records.tickets {
        let roles = t.roles.as_ref().expect("a role queue records roles");
        assert_eq!(roles.main.len(), t.party_size as usize);
        if let TicketEnd::Matched(m) = t.end {
            assert_eq!(roles.assigned.len(), roles.main.len());
            let counts = by_match.entry(m.0).or_default();
            for (&role, &accepted) in roles.assigned.iter().zip(&roles.accepted) {
                assert!(accepted & (1 << role) != 0, "{roles:?}");
                counts[role as usize] += 1;
            }
        } else {
            assert!(roles.assigned.is_empty());
        }
    }
    assert!(by_match.len() > 200, "{} matches", by_match.len());
    for (m, counts) in &by_match {
        assert_eq!(counts, &[2, 2, 6], "match {m}");
    }
    let roles = &out.summary["roles"]["by_main_role"];
    let p50 = |i: usize| roles[i]["wait_s"]["p50"].as_f64().unwrap();
    assert!(p50(2) > p50(0) && p50(2) > p50(1), "{roles}");
}
