//! Players who quit and come back (`[engagement]`), through the real
//! binary: raising the churn after losses shrinks the players still
//! playing, and the summary shows it; a run without the section has no
//! `engagement` figures; the engagement-optimising policy runs beside a
//! rating-window policy on the same seed; the EOMM paper's four matchers
//! under its sequence churn model order as the paper reports.

use crate::common::{mmsim, scenario, stderr};
use serde_json::Value;

fn run(name: &str, out: &std::path::Path, sets: &[&str]) -> Value {
    // Two days keep the test near a second; whole day 1 is after warm-up.
    let all: Vec<&str> = std::iter::once("run.duration=2d")
        .chain(sets.iter().copied())
        .collect();
    run_as(name, out, &all)
}

/// One seed of scenario `name` with `sets`, its summary.
fn run_as(name: &str, out: &std::path::Path, sets: &[&str]) -> Value {
    let mut args = vec![
        "run".to_string(),
        scenario(name),
        "--out".to_string(),
        out.to_string_lossy().into_owned(),
        "--tables".to_string(),
        "none".to_string(),
        "--replications".to_string(),
        "1".to_string(),
    ];
    for s in sets {
        args.push("--set".to_string());
        args.push(s.to_string());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = mmsim(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap()
}

fn f(v: &Value, path: &str) -> f64 {
    path.split('.')
        .fold(v, |v, k| &v[k])
        .as_f64()
        .unwrap_or_else(|| panic!("{path} is not a number"))
}

#[test]
fn raising_the_churn_after_losses_shrinks_daily_active_players() {
    let dir = tempfile::tempdir().unwrap();
    let mild = run("engagement-1v1.toml", &dir.path().join("mild"), &[]);
    let harsh = run(
        "engagement-1v1.toml",
        &dir.path().join("harsh"),
        &["engagement.loss=2.5", "engagement.losing_streak=0.8"],
    );
    let (m, h) = (&mild["engagement"], &harsh["engagement"]);
    // More players stop after a match, and the result explains more of it.
    assert!(f(h, "quit_rate") > f(m, "quit_rate") + 0.05, "{m} {h}");
    assert!(f(h, "attribution.result_share") > f(m, "attribution.result_share"));
    // Fewer players are left, so fewer play each day and each hour, and
    // fewer tickets come: the queue empties with its population.
    assert!(f(h, "daily_active_mean") < 0.95 * f(m, "daily_active_mean"));
    assert!(f(h, "hourly_active_mean") < f(m, "hourly_active_mean"));
    assert!(f(h, "engaged_at_end") < f(m, "engaged_at_end"));
    assert!(f(&harsh, "tickets") < f(&mild, "tickets"));
    assert!(f(h, "arrivals_absent") > f(m, "arrivals_absent"));
    // The model's mean probability tracks the draws (thousands of them).
    for e in [m, h] {
        assert!(
            (f(e, "quit_rate") - f(e, "predicted_quit_rate")).abs() < 0.01,
            "{e}"
        );
    }
    // Every hour is counted, engaged players never exceed the population,
    // and day 1 (after the 6 h warm-up) is the one whole day.
    let hours = h["by_hour"].as_array().unwrap();
    assert_eq!(hours.len(), 48);
    assert_eq!(hours[0]["engaged_players"], 4000);
    assert!(hours
        .iter()
        .all(|x| x["engaged_players"].as_u64().unwrap() <= 4000));
    assert_eq!(
        f(h, "daily_active_mean"),
        f(&h["daily_active"][1], "active_players")
    );
    // Losers stop more than winners: the lowest decile loses most.
    let deciles = h["churn_by_skill_decile"].as_array().unwrap();
    assert!(f(&deciles[0], "quit_rate") > f(&deciles[9], "quit_rate"));
}

#[test]
fn without_the_section_there_are_no_engagement_figures_and_eomm_runs_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let o = mmsim(&[
        "run",
        &scenario("smoke.toml"),
        "--out",
        &dir.path().join("smoke").to_string_lossy(),
        "--tables",
        "none",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(dir.path().join("smoke/summary.json")).unwrap();
    assert!(!text.contains("engagement"));
    assert!(!dir.path().join("smoke/plots/active_players.png").exists());

    let w = run("engagement-1v1.toml", &dir.path().join("w"), &[]);
    let e = run("engagement-1v1-eomm.toml", &dir.path().join("e"), &[]);
    assert_eq!(e["policy"], "eomm");
    assert!(dir.path().join("e/plots/active_players.png").exists());
    // Pairing every waiting ticket each tick, EOMM waits less than the
    // widening window and accepts wider rating gaps.
    assert!(f(&e, "wait_s.p90") < f(&w, "wait_s.p90"));
    assert!(f(&e, "spread_rating.mean") > f(&w, "spread_rating.mean"));
    assert!(f(&e["engagement"], "player_matches") > 0.0);
}

/// The EOMM paper's comparison at a small size (a pool of about 100 a
/// minute for 18 hours, one seed): retention per match (1 - quit rate)
/// orders EOMM > skill > worst, and EOMM's margin over skill lies in the
/// paper's range (0.3% to 5.5%).
#[test]
fn the_paper_matchers_order_eomm_over_skill_over_worst() {
    let dir = tempfile::tempdir().unwrap();
    let small = ["run.duration=18h", "run.warmup=2h", "population.size=12000"];
    let retention = |name: &str, sets: &[&str]| {
        let all: Vec<&str> = small.iter().chain(sets).copied().collect();
        let s = run_as("engagement-eomm-paper.toml", &dir.path().join(name), &all);
        1.0 - f(&s["engagement"], "quit_rate")
    };
    let eomm = retention("eomm", &["policy.kind=eomm", "policy.graph=complete"]);
    let skill = retention("skill", &["policy.kind=skill"]);
    let random = retention("random", &["policy.kind=random"]);
    let worst = retention("worst", &["policy.kind=worst"]);
    let margin = eomm / skill - 1.0;
    assert!(
        eomm > skill && skill > worst,
        "{eomm} {skill} {random} {worst}"
    );
    assert!((0.003..0.055).contains(&margin), "margin {margin}");
    // Random pairs the weak against the strong as often as not: the weak,
    // who lose more and so stand on longer losing runs, lose more still.
    assert!(random < skill && random > worst, "{random}");
}

/// The engine draws from the table: with the same churn after every
/// sequence the predicted quit rate is that value exactly, and the drawn
/// rate lies near it; a table whose losses cost more raises both.
#[test]
fn the_sequence_table_sets_the_churn_the_engine_draws() {
    let dir = tempfile::tempdir().unwrap();
    let base = [
        "run.duration=12h",
        "run.warmup=2h",
        "population.size=12000",
        "policy.kind=skill",
    ];
    let with = |name: &str, table: &[&str]| {
        let all: Vec<&str> = base.iter().chain(table).copied().collect();
        run_as("engagement-eomm-paper.toml", &dir.path().join(name), &all)["engagement"].clone()
    };
    let flat = with(
        "flat",
        &[
            "engagement.churn.W=0.1",
            "engagement.churn.L=0.1",
            "engagement.churn.LL=0.1",
            "engagement.churn.LLL=0.1",
            "engagement.churn.LLLL=0.1",
        ],
    );
    assert!(
        (f(&flat, "predicted_quit_rate") - 0.1).abs() < 1e-9,
        "{flat}"
    );
    assert!((f(&flat, "quit_rate") - 0.1).abs() < 0.005, "{flat}");
    // Losses only: "L" = 0.3 after every loss, "W" = 0.02 after a win; skill
    // pairing makes about half the results losses, so about 0.16.
    let losses = with(
        "losses",
        &[
            "engagement.churn.W=0.02",
            "engagement.churn.L=0.3",
            "engagement.churn.LL=0.3",
            "engagement.churn.LLL=0.3",
            "engagement.churn.LLLL=0.3",
        ],
    );
    assert!((f(&losses, "quit_rate") - 0.16).abs() < 0.01, "{losses}");
    assert!(f(&losses, "attribution.result_share") > 0.8, "{losses}");
}
