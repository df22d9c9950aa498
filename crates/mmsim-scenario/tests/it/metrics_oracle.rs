//! The streaming collector against this oracle, on real runs: every
//! count and every wait figure to the bit, sketched figures within their
//! stated error.
//!
//! Moved from mmsim-core's `metrics/oracle.rs`: these checks build their world from
//! scenario text, which only this crate reads.

#![allow(unused_imports)]
use mmsim_core::metrics::dist::Sketch;
use mmsim_core::metrics::oracle::*;
use mmsim_scenario::from_text;
use mmsim_scenario::FromScenario;
use serde_json::Value;
use std::path::Path;

/// Walks two summaries side by side. Paths under an exact prefix must be
/// equal to the bit; other numbers within the sketch's relative error.
fn agree(path: &str, oracle: &Value, streamed: &Value, bad: &mut Vec<String>) {
    const EXACT: &[&str] = &["wait_s", "queue_time_s", "wait_s_by_skill_decile"];
    match (oracle, streamed) {
        (Value::Object(a), Value::Object(b)) => {
            let (ka, kb): (Vec<_>, Vec<_>) = (a.keys().collect(), b.keys().collect());
            if ka != kb {
                bad.push(format!("{path}: keys {ka:?} vs {kb:?}"));
                return;
            }
            for (k, v) in a {
                agree(&format!("{path}.{k}"), v, &b[k], bad);
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                agree(&format!("{path}[{i}]"), x, y, bad);
            }
        }
        (Value::Number(x), Value::Number(y)) if x.is_f64() || y.is_f64() => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            let exact = EXACT.iter().any(|p| path[1..].starts_with(p));
            let tol = if exact {
                0.0
            } else {
                // Means are sums in another order: a few ulps.
                2.0 * Sketch::REL_ERR * x.abs() + Sketch::ZERO
            };
            if (x - y).abs() > tol {
                bad.push(format!("{path}: oracle {x} streamed {y}"));
            }
        }
        (a, b) if a == b => {}
        (a, b) => bad.push(format!("{path}: oracle {a} streamed {b}")),
    }
}

/// A preset from `scenarios/` with `--set` overrides, run on seed 11
/// with every record kept.
pub(crate) fn kept_preset(
    file: &str,
    sets: &[&str],
) -> (mmsim_scenario::Scenario, mmsim_scenario::run::KeptRun) {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../scenarios")
            .join(file),
    )
    .unwrap();
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let s = from_text(&text, Path::new(file), &sets).unwrap().scenario;
    let kept = mmsim_scenario::run::run_keeping(&s, 11);
    (s, kept)
}

/// The kept run's tickets and matches after warm-up: what the
/// summary's sections cover.
pub(crate) fn after_warmup(
    kept: &mmsim_scenario::run::KeptRun,
) -> (
    Vec<&mmsim_core::metrics::TicketRecord>,
    Vec<&mmsim_core::metrics::MatchRecord>,
) {
    let r = &kept.records;
    (
        r.tickets.iter().filter(|t| !t.in_warmup).collect(),
        r.matches.iter().filter(|m| !m.in_warmup).collect(),
    )
}

fn check(file: &str, sets: &[&str]) {
    let (_, kept) = kept_preset(file, sets);
    let typed = &kept.output.summary;
    let meta = mmsim_core::metrics::RunMeta {
        scenario: &typed.scenario,
        seed: typed.seed,
        policy: &typed.policy,
        rating_system: &typed.rating_system,
        duration_s: typed.duration_s,
        warmup_s: typed.warmup_s,
        arrivals_blocked: typed.arrivals_blocked,
    };
    let oracle = summarize_records(
        &meta,
        &kept.records,
        &kept.output.players,
        typed.rating_skill_rank_corr,
    );
    let mut bad = Vec::new();
    // The oracle folds one queue; a run with modes has its `modes` block
    // checked on its own (`ladders_agree`), the rest as any run's.
    let mut streamed = kept.summary.clone();
    if let Some(modes) = streamed.as_object_mut().and_then(|o| o.remove("modes")) {
        ladders_agree(&kept, &modes, &mut bad);
    }
    agree("", &oracle, &streamed, &mut bad);
    assert!(bad.is_empty(), "{file}: {}", bad.join("\n"));
    assert!(typed.tickets > 1000, "{file}: too small to tell");
}

/// Each ladder's figures recomputed from the match records and the
/// ladders' end state: its matches after warm-up and their Brier score,
/// its players, and its rating percentiles by nearest rank.
fn ladders_agree(kept: &mmsim_scenario::run::KeptRun, modes: &Value, bad: &mut Vec<String>) {
    let names: Vec<&str> = modes["by_mode"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["mode"].as_str().unwrap())
        .collect();
    let (_, matches) = after_warmup(kept);
    let ladders = modes["ladders"].as_array().map_or(&[][..], |v| v);
    assert_eq!(ladders.len(), kept.output.ladders.len());
    for (fig, lad) in ladders.iter().zip(&kept.output.ladders) {
        let path = format!(".modes.ladders.{}", lad.name);
        let on: Vec<u8> = fig["modes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| names.iter().position(|n| Some(*n) == m.as_str()).unwrap() as u8)
            .collect();
        let mine: Vec<_> = matches
            .iter()
            .filter(|m| m.mode.is_some_and(|x| on.contains(&x)))
            .collect();
        let finished: Vec<f64> = mine
            .iter()
            .filter_map(|m| {
                let won0 = if m.winner? == 0 { 1.0 } else { 0.0 };
                Some((m.p_team0_predicted - won0).powi(2))
            })
            .collect();
        let brier = finished.iter().sum::<f64>() / finished.len() as f64;
        let played: Vec<&mmsim_core::model::Player> = lad
            .players
            .iter()
            .zip(&lad.played)
            .filter(|(_, &n)| n > 0)
            .map(|(p, _)| p)
            .collect();
        let sorted = |f: &dyn Fn(&mmsim_core::model::Player) -> f64| {
            let mut v: Vec<f64> = played.iter().map(|p| f(p)).collect();
            v.sort_by(f64::total_cmp);
            v
        };
        let (solo, skill) = (sorted(&|p| p.rating.value), sorted(&|p| p.true_skill));
        let at =
            |v: &[f64], pct: u64| v[((v.len() - 1) as f64 * pct as f64 / 100.0).round() as usize];
        let mut oracle = serde_json::json!({
            "matches": mine.len(),
            "brier_score": brier,
            "players": played.len(),
        });
        oracle["solo"] = fig["solo"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let pct = r["pct"].as_u64().unwrap();
                serde_json::json!({"pct": pct, "rating": at(&solo, pct), "true_skill": at(&skill, pct)})
            })
            .collect();
        let streamed = serde_json::json!({
            "matches": fig["matches"],
            "brier_score": fig["brier_score"],
            "players": fig["players"],
            "solo": fig["solo"],
        });
        agree(&path, &oracle, &streamed, bad);
        if mine.len() < 100 {
            bad.push(format!("{path}: {} matches, too few to tell", mine.len()));
        }
    }
}

#[test]
fn streamed_summary_matches_the_oracle_on_a_1v1_run() {
    check("smoke.toml", &[]);
}

#[test]
fn streamed_summary_matches_the_oracle_on_a_team_run_with_survivors() {
    check(
        "armored-warfare-15v15.toml",
        &["run.duration=3h", "run.warmup=30m"],
    );
}

#[test]
fn streamed_role_figures_match_the_oracle_on_the_role_queue_preset() {
    let (_, kept) = kept_preset(
        "regions-roles-5v5.toml",
        &["run.duration=90m", "run.warmup=20m"],
    );
    let names = kept
        .output
        .view
        .roles
        .as_ref()
        .expect("a role queue")
        .names()
        .to_vec();
    let (tickets, _) = after_warmup(&kept);
    let oracle = roles_section(&tickets, &names);
    let mut bad = Vec::new();
    agree(".roles", &oracle, &kept.summary["roles"], &mut bad);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    // Enough players of every role to tell a wrong fold from a right one.
    for role in oracle["by_main_role"].as_array().unwrap() {
        assert!(role["players"].as_u64().unwrap() > 100, "{role}");
    }
}

#[test]
fn streamed_region_figures_match_the_oracle_on_the_regions_preset() {
    let (s, kept) = kept_preset("regions-5v5.toml", &["run.duration=90m", "run.warmup=20m"]);
    let r = s.regions.as_ref().expect("a regional scenario");
    let homes: Vec<String> = r.homes.iter().map(|h| h.name.clone()).collect();
    let (tickets, matches) = after_warmup(&kept);
    let oracle = regions_section(&tickets, &matches, &r.data_centres, &homes);
    let streamed = &kept.summary["regions"];
    let mut bad = Vec::new();
    for k in ["by_data_centre", "by_home_region"] {
        agree(&format!(".regions.{k}"), &oracle[k], &streamed[k], &mut bad);
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    for dc in oracle["by_data_centre"].as_array().unwrap() {
        assert!(dc["matches"].as_u64().unwrap() > 50, "{dc}");
    }
}

#[test]
fn streamed_summary_matches_the_oracle_on_a_dota_run_with_gold() {
    check("dota2-5v5.toml", &["run.duration=3h", "run.warmup=30m"]);
}
