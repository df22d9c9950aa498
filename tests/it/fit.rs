//! `mmsim fit` end to end: logs written by mmsim from known scenarios
//! (`scenarios/fit/truth-*.toml`, through `mmsim trace --ticket-log`) are
//! fitted back, and every fitted parameter's 95% interval must cover the
//! value the scenario was run with; AIC must name the family the patience
//! was drawn from; the check must find the fitted model close to the log
//! under the log's own rules and far from it under others. Malformed logs
//! are refused with exit 2, naming the line and field, and nothing written.

use super::common::{mmsim, scenario, stderr};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Runs `truth` (with `sets`), writes its ticket log and fits it (with
/// `--check truth` when `check`). Returns fit.json, scenario.toml and the
/// fit's stdout.
/// Runs scenario `truth` (with `sets`) into `dir/run` and writes its ticket
/// log, `dir/log.csv`: a log whose generator is known.
fn ticket_log(dir: &Path, truth: &str, sets: &[&str]) -> PathBuf {
    let file = scenario(truth);
    let run = dir.join("run");
    let log = dir.join("log.csv");
    let mut args = vec![
        "run",
        &file,
        "--out",
        run.to_str().unwrap(),
        "--quiet",
        "--tables",
        "none",
    ];
    for s in sets {
        args.extend(["--set", s]);
    }
    let o = mmsim(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = mmsim(&[
        "trace",
        run.to_str().unwrap(),
        "--ticket-log",
        "--out",
        log.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    log
}

fn fit_truth(dir: &Path, truth: &str, sets: &[&str], check: bool) -> (Value, String, String) {
    let file = scenario(truth);
    let log = ticket_log(dir, truth, sets);
    let out = dir.join("fit");
    let mut args = vec!["fit", log.to_str().unwrap(), "--out", out.to_str().unwrap()];
    if check {
        args.extend(["--check", &file]);
    }
    let o = mmsim(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let json: Value =
        serde_json::from_slice(&std::fs::read(out.join("fit.json")).unwrap()).unwrap();
    let toml = std::fs::read_to_string(out.join("scenario.toml")).unwrap();
    let v = mmsim(&["validate", out.join("scenario.toml").to_str().unwrap()]);
    assert!(
        v.status.success(),
        "the fitted scenario validates: {}",
        stderr(&v)
    );
    assert!(out.join("fit.html").is_file());
    (json, toml, String::from_utf8_lossy(&o.stdout).into_owned())
}

fn est(v: &Value) -> (f64, f64, f64) {
    (
        v["value"].as_f64().unwrap(),
        v["lo"].as_f64().unwrap(),
        v["hi"].as_f64().unwrap(),
    )
}

#[track_caller]
fn covers(what: &str, v: &Value, truth: f64) {
    let (x, lo, hi) = est(v);
    assert!(
        lo <= truth && truth <= hi,
        "{what}: {x} [{lo}, {hi}] misses the truth {truth}"
    );
}

fn best(fit: &Value) -> &Value {
    &fit["patience"]["comparison"]["fits"][0]
}

fn family<'a>(fit: &'a Value, name: &str) -> &'a Value {
    fit["patience"]["comparison"]["fits"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["family"] == name)
        .unwrap()
}

/// Every key `mmsim fit` fits carries a comment line just above it
/// (looked for in `[arrivals]` first: `[policy]` may have a `rate_per_s`).
fn commented(toml: &str, keys: &[&str]) {
    let lines: Vec<&str> = toml.lines().collect();
    let arrivals = lines.iter().position(|l| *l == "[arrivals]").unwrap();
    for key in keys {
        let starts = |l: &&str| l.starts_with(&format!("{key} ="));
        let at = (lines[arrivals..]
            .iter()
            .position(starts)
            .map(|i| i + arrivals))
        .or_else(|| lines.iter().position(starts))
        .unwrap_or_else(|| panic!("{key} is in the fitted scenario:\n{toml}"));
        assert!(
            lines[at - 1].starts_with('#'),
            "{key} has a comment above it"
        );
    }
}

/// Of the hours the log covers, the share whose interval holds the truth.
fn hours_covered(fit: &Value, truth: impl Fn(usize) -> f64) -> (usize, usize) {
    let hours = fit["arrivals"]["hours"].as_array().unwrap();
    let with: Vec<&Value> = hours
        .iter()
        .filter(|h| !h["rate_per_s"].is_null())
        .collect();
    let hit = with
        .iter()
        .filter(|h| {
            let (_, lo, hi) = est(&h["rate_per_s"]);
            let t = truth(h["hour"].as_u64().unwrap() as usize);
            lo <= t && t <= hi
        })
        .count();
    (hit, with.len())
}

#[test]
fn a_1v1_log_with_exponential_patience_is_fitted_back() {
    let dir = tempfile::tempdir().unwrap();
    let (fit, toml, _) = fit_truth(dir.path(), "fit/truth-1v1.toml", &[], false);
    assert_eq!(
        best(&fit)["family"],
        "exponential",
        "AIC picks the family drawn from"
    );
    covers("patience mean", &best(&fit)["params"]["mean_s"], 120.0);
    covers(
        "Weibull shape",
        &family(&fit, "weibull")["params"]["shape"],
        1.0,
    );
    covers("rate", &fit["arrivals"]["rate_per_s"], 0.5);
    let (hit, of) = hours_covered(&fit, |_| 0.5);
    assert_eq!(of, 8);
    // Each hour's 95% interval misses now and then: 6 of 8 or better
    // happens 99.6% of the time when the rates are right.
    assert!(hit >= 6, "{hit} of {of} hourly intervals hold 0.5");
    covers("requeue_prob", &fit["returns"]["requeue_prob"], 0.4);
    covers("think time", &fit["returns"]["think_s"], 45.0);
    assert_eq!(fit["party_sizes"].as_array().unwrap().len(), 1);
    // A seasoned ladder at correlation 0.95: ratings spread 300 / 0.95.
    covers("rating mean", &fit["ratings"]["mean"], 1500.0);
    covers("rating sd", &fit["ratings"]["sd"], 300.0 / 0.95);
    let size = fit["population"]["size"].as_f64().unwrap();
    assert!((size / 20_000.0 - 1.0).abs() < 0.05, "population {size}");
    commented(
        &toml,
        &[
            "rate_per_s",
            "party_sizes",
            "patience",
            "requeue_prob",
            "think_time",
            "size",
            "skill",
            "duration",
        ],
    );
    assert!(toml.contains("patience = { dist = \"exponential\""));
}

#[test]
fn a_log_normal_patience_is_told_apart() {
    let dir = tempfile::tempdir().unwrap();
    let (fit, toml, _) = fit_truth(
        dir.path(),
        "fit/truth-1v1.toml",
        &["arrivals.patience={ dist = \"log-normal\", median = \"90s\", sigma = 0.8 }"],
        false,
    );
    assert_eq!(best(&fit)["family"], "log-normal");
    covers("median", &best(&fit)["params"]["median_s"], 90.0);
    covers("sigma", &best(&fit)["params"]["sigma"], 0.8);
    assert!(toml.contains("dist = \"log-normal\""));
}

const PROFILE: [f64; 24] = [
    0.4, 0.3, 0.25, 0.25, 0.3, 0.4, 0.6, 0.8, 0.9, 1.0, 1.0, 1.1, 1.2, 1.1, 1.0, 1.0, 1.1, 1.3,
    1.6, 1.9, 2.0, 1.7, 1.1, 0.6,
];

#[test]
fn a_5v5_day_with_parties_weibull_patience_and_a_profile_is_fitted_back_and_checks() {
    let dir = tempfile::tempdir().unwrap();
    let (fit, toml, stdout) = fit_truth(dir.path(), "fit/truth-5v5.toml", &[], true);
    assert_eq!(best(&fit)["family"], "weibull");
    covers("Weibull shape", &best(&fit)["params"]["shape"], 1.6);
    covers("Weibull scale", &best(&fit)["params"]["scale_s"], 180.0);
    for (share, truth) in fit["party_sizes"]
        .as_array()
        .unwrap()
        .iter()
        .zip([0.55, 0.2, 0.12, 0.05, 0.08])
    {
        covers(
            &format!("party size {}", share["size"]),
            &share["share"],
            truth,
        );
    }
    let mean_profile = PROFILE.iter().sum::<f64>() / 24.0;
    covers("rate", &fit["arrivals"]["rate_per_s"], 0.6 * mean_profile);
    let (hit, of) = hours_covered(&fit, |h| 0.6 * PROFILE[h]);
    assert_eq!(of, 24);
    assert!(hit >= 22, "{hit} of 24 hourly intervals hold the truth");
    covers("requeue_prob", &fit["returns"]["requeue_prob"], 0.3);
    covers("think time", &fit["returns"]["think_s"], 60.0);
    commented(
        &toml,
        &[
            "rate_per_s",
            "daily_profile",
            "party_sizes",
            "patience",
            "requeue_prob",
            "think_time",
        ],
    );
    // Under the log's own rules the fitted model reproduces its waits and
    // abandons over the day.
    let all = &fit["check"][0];
    assert!(all["hour"].is_null());
    assert_eq!(all["verdict"], "fits", "{stdout}");
    assert!(all["ks_wait"].as_f64().unwrap() < 0.03, "{all}");
    assert!(
        (all["sim_abandon"].as_f64().unwrap() - all["log_abandon"].as_f64().unwrap()).abs() < 0.02
    );
    let hours = fit["check"].as_array().unwrap();
    let fitting = hours.iter().filter(|h| h["verdict"] == "fits").count();
    assert!(
        fitting * 4 >= hours.len() * 3,
        "{fitting} of {} hours fit:\n{stdout}",
        hours.len()
    );

    // The same log as a matchmaker keeps it: from 08:00, in Unix seconds
    // (2026-11-02 00:00 UTC is 1793577600). Hours 8 to 23 are fitted as
    // before; the returns after matches before 08:00 are still returns.
    let text = std::fs::read_to_string(dir.path().join("log.csv")).unwrap();
    let mut log = mmsim::fit::log::parse_csv(&text).unwrap();
    log.tickets.retain(|t| t.enqueue_s >= 8.0 * 3600.0);
    for t in &mut log.tickets {
        t.enqueue_s += 1_793_577_600.0;
        t.leave_s += 1_793_577_600.0;
        t.match_end_s = t.match_end_s.map(|e| e + 1_793_577_600.0);
    }
    let late = dir.path().join("late.csv");
    std::fs::write(&late, log.csv()).unwrap();
    let out = dir.path().join("late");
    let o = mmsim(&[
        "fit",
        late.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let fit: Value = serde_json::from_slice(&std::fs::read(out.join("fit.json")).unwrap()).unwrap();
    assert_eq!(fit["log_start_s"], 8.0 * 3600.0);
    let (hit, of) = hours_covered(&fit, |h| 0.6 * PROFILE[h]);
    assert_eq!(of, 16);
    assert!(hit >= 14, "{hit} of 16 hourly intervals hold the truth");
    covers("Weibull shape", &best(&fit)["params"]["shape"], 1.6);
    let toml = std::fs::read_to_string(out.join("scenario.toml")).unwrap();
    assert!(toml.contains("warmup = \"8h\""), "{toml}");
}

#[test]
fn the_check_says_where_the_model_does_not_fit() {
    // The same log checked under rules it was not made with (a fixed
    // limit of 60 points, not 6): waits and abandons must be called
    // different.
    let dir = tempfile::tempdir().unwrap();
    let file = scenario("fit/truth-1v1.toml");
    let log = ticket_log(dir.path(), "fit/truth-1v1.toml", &[]);
    let wide = dir.path().join("wide.toml");
    let text = std::fs::read_to_string(&file)
        .unwrap()
        .replace("limit = 6", "limit = 60");
    std::fs::write(&wide, text).unwrap();
    let out = dir.path().join("fit");
    let o = mmsim(&[
        "fit",
        log.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--check",
        wide.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("check all hours: waits differ"), "{stdout}");
    assert!(stdout.contains("abandons"), "{stdout}");
}

#[test]
fn the_flexmatch_example_stream_is_fitted_through_the_same_path() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fit");
    let o = mmsim(&[
        "fit",
        &scenario("fit/flexmatch-events.jsonl"),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let fit: Value = serde_json::from_slice(&std::fs::read(out.join("fit.json")).unwrap()).unwrap();
    // The stream is an hour of truth-1v1 at 0.1 parties a second, re-told
    // as FlexMatch events (scripts/flexmatch-example.py): exponential
    // patience with a mean of 2 minutes.
    assert_eq!(fit["tickets"], 396);
    covers(
        "patience mean",
        &family(&fit, "exponential")["params"]["mean_s"],
        120.0,
    );
    covers("rate", &fit["arrivals"]["rate_per_s"], 0.1);
    assert_eq!(
        fit["returns"]["recognised_by"],
        "same party queueing again within 7200 s of its match"
    );
    assert!(fit["ratings"]["players"].as_u64().unwrap() > 100);
    let v = mmsim(&["validate", out.join("scenario.toml").to_str().unwrap()]);
    assert!(v.status.success(), "{}", stderr(&v));
}

#[test]
fn malformed_logs_are_refused_naming_the_line_and_field_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, &str, &str); 4] = [
        (
            "bad.csv",
            "enqueue_s,ticket,player,rating,leave_s,reason\n1.0,1,a,1500,2.0,matched\n3.0,2,b,1500,9.0,left\n",
            "line 3, field `reason`: expected matched, abandoned, waiting or timed_out, got \"left\"",
        ),
        (
            "early.csv",
            "enqueue_s,ticket,player,leave_s,reason\n1.0,1,a,2.0,matched\n5.0,2,b,4.0,abandoned\n",
            "line 3, field `leave_s`: 4 is before the ticket's enqueue_s 5",
        ),
        (
            "events.jsonl",
            "{\"time\":\"2026-11-02T00:00:05Z\",\"detail\":{\"type\":\"MatchmakingSearching\",\"tickets\":[{\"ticketId\":\"t1\",\"startTime\":\"2026-11-02T00:00:04Z\",\"players\":[{\"playerId\":\"p1\"}]}]}}\n{\"time\":\"2026-11-02T00:01:00Z\",\"detail\":{\"type\":\"MatchmakingSucceeded\",\"tickets\":[{\"ticketId\":\"t1\",\"startTime\":\"2026-11-02T00:00:04Z\",\"players\":[{\"playerId\":\"p1\"}]}]}}\n",
            "line 2, field `detail.matchId`",
        ),
        ("trunc.jsonl", "{\"time\": \"2026-11-02T00:00:05Z\", \"detail\": {\n", "line 1: not a JSON event"),
    ];
    for (name, text, want) in cases {
        let log = dir.path().join(name);
        std::fs::write(&log, text).unwrap();
        let out = dir.path().join(format!("out-{name}"));
        let o = mmsim(&["fit", log.to_str().unwrap(), "--out", out.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{name}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "{name}: {}", stderr(&o));
        assert!(!out.exists(), "{name}: nothing written");
    }
}

#[test]
fn a_log_too_short_says_what_it_fell_back_to() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("short.csv");
    std::fs::write(
        &log,
        "enqueue_s,ticket,player,leave_s,reason\n1.0,1,a,2.0,matched\n1.5,2,b,2.0,matched\n3.0,3,c,40.0,abandoned\n5.0,4,d,,waiting\n",
    )
    .unwrap();
    let out = dir.path().join("fit");
    let o = mmsim(&["fit", log.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    for want in [
        "note: arrivals.daily_profile: the log covers 1 min",
        "note: arrivals.patience: only 1 abandons (under 10): exponential only",
        "note: arrivals.requeue_prob: only",
        "note: population.skill: ratings for 0 players",
    ] {
        assert!(stdout.contains(want), "{want}:\n{stdout}");
    }
    let v = mmsim(&["validate", out.join("scenario.toml").to_str().unwrap()]);
    assert!(v.status.success(), "{}", stderr(&v));
}

/// Coverage over seeds: the 1v1 truth fitted from 100 seeds' logs; each
/// 95% interval should hold the truth in about 95 of them. Slow (about a
/// minute): `cargo test --test it fit::coverage -- --ignored --nocapture`.
#[test]
#[ignore]
fn coverage_of_the_intervals_over_100_seeds() {
    let seeds: u64 = std::env::var("FIT_COVERAGE_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100);
    let dir = tempfile::tempdir().unwrap();
    let checks: [(&str, f64); 8] = [
        ("rate_per_s", 0.5),
        ("patience exponential mean_s", 120.0),
        ("patience weibull shape", 1.0),
        ("requeue_prob", 0.4),
        ("think_s", 45.0),
        ("rating mean", 1500.0),
        ("rating sd", 300.0 / 0.95),
        ("hourly rates (8 per seed)", 0.5),
    ];
    let mut hits = [0usize; 8];
    let mut tries = [0usize; 8];
    let mut aic_right = 0;
    for seed in 1..=seeds {
        let d = dir.path().join(seed.to_string());
        let set = format!("run.seed={seed}");
        let (fit, _, _) = fit_truth(&d, "fit/truth-1v1.toml", &[&set], false);
        let got = |i: usize| -> Value {
            match i {
                0 => fit["arrivals"]["rate_per_s"].clone(),
                1 => family(&fit, "exponential")["params"]["mean_s"].clone(),
                2 => family(&fit, "weibull")["params"]["shape"].clone(),
                3 => fit["returns"]["requeue_prob"].clone(),
                4 => fit["returns"]["think_s"].clone(),
                5 => fit["ratings"]["mean"].clone(),
                _ => fit["ratings"]["sd"].clone(),
            }
        };
        for (i, (_, truth)) in checks.iter().enumerate().take(7) {
            let (_, lo, hi) = est(&got(i));
            tries[i] += 1;
            hits[i] += usize::from(lo <= *truth && *truth <= hi);
        }
        let (hit, of) = hours_covered(&fit, |_| 0.5);
        hits[7] += hit;
        tries[7] += of;
        aic_right += usize::from(best(&fit)["family"] == "exponential");
        std::fs::remove_dir_all(&d).unwrap();
    }
    println!("coverage of 95% intervals over {seeds} fits of truth-1v1:");
    for (i, (name, truth)) in checks.iter().enumerate() {
        println!(
            "  {name} (truth {truth:.4}): {} of {} ({:.1}%)",
            hits[i],
            tries[i],
            100.0 * hits[i] as f64 / tries[i] as f64
        );
    }
    println!("  AIC chose exponential: {aic_right} of {seeds}");
    for i in 0..8 {
        let share = hits[i] as f64 / tries[i] as f64;
        assert!(share >= 0.88, "{}: {share}", checks[i].0);
    }
}

#[test]
fn the_ratings_become_a_ladder_with_ladder() {
    let dir = tempfile::tempdir().unwrap();
    let log = ticket_log(dir.path(), "fit/truth-1v1.toml", &["run.duration=\"1h\""]);
    let out = dir.path().join("fit");
    let o = mmsim(&[
        "fit",
        log.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--ladder",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let toml = std::fs::read_to_string(out.join("scenario.toml")).unwrap();
    assert!(
        toml.contains("ratings_file = \"players.parquet\""),
        "{toml}"
    );
    let fit: Value = serde_json::from_slice(&std::fs::read(out.join("fit.json")).unwrap()).unwrap();
    let players = fit["population"]["distinct_players"].as_u64().unwrap();
    assert!(toml.contains(&format!("size = {players}")), "{toml}");
    assert!(out.join("players.parquet").is_file());
    let v = mmsim(&["validate", out.join("scenario.toml").to_str().unwrap()]);
    assert!(v.status.success(), "{}", stderr(&v));
    // A log without ratings cannot make a ladder: refused, nothing written.
    let bare = dir.path().join("bare.csv");
    std::fs::write(
        &bare,
        "enqueue_s,ticket,player,leave_s,reason\n1.0,1,a,2.0,matched\n",
    )
    .unwrap();
    let none = dir.path().join("none");
    let o = mmsim(&[
        "fit",
        bare.to_str().unwrap(),
        "--out",
        none.to_str().unwrap(),
        "--ladder",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--ladder"), "{}", stderr(&o));
    assert!(!none.exists());
}

/// `log` (a CSV ticket log) as Parquet, with `reason` of row `bad_row`
/// (1-based) replaced when given.
fn as_parquet(log: &mmsim::fit::TicketLog, path: &Path, bad_row: Option<usize>) {
    use polars::prelude::*;
    let mut cols: [Vec<Option<String>>; 3] = Default::default();
    let (mut enq, mut leave, mut rating, mut end) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut reason, mut requeue) = (Vec::new(), Vec::new());
    for t in &log.tickets {
        for p in &t.players {
            enq.push(t.enqueue_s);
            cols[0].push(Some(t.ticket.clone()));
            cols[1].push(Some(p.id.clone()));
            cols[2].push(t.match_id.clone());
            rating.push(p.rating);
            leave.push(t.leave_s);
            end.push(t.match_end_s);
            let bad = bad_row == Some(reason.len() + 1);
            reason.push(if bad {
                "left".to_string()
            } else {
                t.reason.label().to_string()
            });
            requeue.push(t.requeue);
        }
    }
    let [ticket, player, matched] = cols;
    let mut df = DataFrame::new_infer_height(vec![
        Column::new("enqueue_s".into(), enq),
        Column::new("ticket".into(), ticket),
        Column::new("player".into(), player),
        Column::new("rating".into(), rating),
        Column::new("leave_s".into(), leave),
        Column::new("reason".into(), reason),
        Column::new("requeue".into(), requeue),
        Column::new("match".into(), matched),
        Column::new("match_end_s".into(), end),
    ])
    .unwrap();
    let mut f = std::fs::File::create(path).unwrap();
    ParquetWriter::new(&mut f).finish(&mut df).unwrap();
}

#[test]
fn a_parquet_log_fits_as_its_csv_does_and_a_bad_row_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let log = ticket_log(dir.path(), "fit/truth-1v1.toml", &["run.duration=\"1h\""]);
    let parsed = mmsim::fit::log::parse_csv(&std::fs::read_to_string(&log).unwrap()).unwrap();
    let pq = dir.path().join("log.parquet");
    as_parquet(&parsed, &pq, None);
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    for (input, out) in [(&log, &a), (&pq, &b)] {
        let o = mmsim(&[
            "fit",
            input.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let json = |d: &Path| std::fs::read(d.join("fit.json")).unwrap();
    assert_eq!(json(&a), json(&b), "the same fit from CSV and Parquet");
    // Deterministic: the same log fitted again gives the same bytes.
    let again = dir.path().join("again");
    assert!(mmsim(&[
        "fit",
        log.to_str().unwrap(),
        "--out",
        again.to_str().unwrap()
    ])
    .status
    .success());
    for f in ["fit.json", "fit.html", "scenario.toml"] {
        assert_eq!(
            std::fs::read(a.join(f)).unwrap(),
            std::fs::read(again.join(f)).unwrap(),
            "{f}"
        );
    }
    let bad = dir.path().join("bad.parquet");
    as_parquet(&parsed, &bad, Some(5));
    let out = dir.path().join("c");
    let o = mmsim(&["fit", bad.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("row 5, field `reason`"),
        "{}",
        stderr(&o)
    );
    assert!(!out.exists());
}

/// Coverage over seeds for the 5v5 truth (Weibull patience, parties, a
/// daily profile): `FIT_COVERAGE_SEEDS` (default 50) days fitted back.
/// Slow (about three seconds a seed in a debug build):
/// `cargo test --test it fit::coverage_5v5 -- --ignored --nocapture`.
#[test]
#[ignore]
fn coverage_5v5_of_the_intervals_over_seeds() {
    let seeds: u64 = std::env::var("FIT_COVERAGE_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(50);
    let dir = tempfile::tempdir().unwrap();
    let mean_profile = PROFILE.iter().sum::<f64>() / 24.0;
    let names = [
        "Weibull shape (1.6)",
        "Weibull scale_s (180)",
        "rate_per_s (0.6 x mean profile)",
        "party shares (5 per seed)",
        "hourly rates (24 per seed)",
        "requeue_prob (0.3)",
        "think_s (60)",
    ];
    let (mut hits, mut tries) = ([0usize; 7], [0usize; 7]);
    let mut aic_right = 0;
    for seed in 1..=seeds {
        let d = dir.path().join(seed.to_string());
        let set = format!("run.seed={seed}");
        let (fit, _, _) = fit_truth(&d, "fit/truth-5v5.toml", &[&set], false);
        let mut count = |i: usize, v: &Value, truth: f64| {
            let (_, lo, hi) = est(v);
            tries[i] += 1;
            hits[i] += usize::from(lo <= truth && truth <= hi);
        };
        let w = family(&fit, "weibull");
        count(0, &w["params"]["shape"], 1.6);
        count(1, &w["params"]["scale_s"], 180.0);
        count(2, &fit["arrivals"]["rate_per_s"], 0.6 * mean_profile);
        for (share, truth) in fit["party_sizes"]
            .as_array()
            .unwrap()
            .iter()
            .zip([0.55, 0.2, 0.12, 0.05, 0.08])
        {
            count(3, &share["share"], truth);
        }
        count(5, &fit["returns"]["requeue_prob"], 0.3);
        count(6, &fit["returns"]["think_s"], 60.0);
        let (hit, of) = hours_covered(&fit, |h| 0.6 * PROFILE[h]);
        hits[4] += hit;
        tries[4] += of;
        aic_right += usize::from(best(&fit)["family"] == "weibull");
        std::fs::remove_dir_all(&d).unwrap();
    }
    println!("coverage of 95% intervals over {seeds} fits of truth-5v5:");
    for (i, name) in names.iter().enumerate() {
        println!(
            "  {name}: {} of {} ({:.1}%)",
            hits[i],
            tries[i],
            100.0 * hits[i] as f64 / tries[i] as f64
        );
    }
    println!("  AIC chose Weibull: {aic_right} of {seeds}");
    for i in 0..7 {
        let share = hits[i] as f64 / tries[i] as f64;
        assert!(share >= 0.85, "{}: {share}", names[i]);
    }
    assert_eq!(aic_right as u64, seeds);
}

#[test]
fn home_regions_pings_and_roles_are_read_from_the_log() {
    // Three hours of the regional role queue: the shares of home regions
    // and main roles among the players the log saw hold the scenario's.
    let dir = tempfile::tempdir().unwrap();
    let (fit, toml_text, _) = fit_truth(
        dir.path(),
        "ci/regions-roles-fresh.toml",
        &["run.duration=\"3h\""],
        true,
    );
    let share = |list: &str, name: &str| -> Value {
        fit[list]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == name)
            .unwrap_or_else(|| panic!("{name} in {list}"))["share"]
            .clone()
    };
    for (home, truth) in [
        ("europe", 0.40),
        ("north-america", 0.30),
        ("asia", 0.22),
        ("oceania", 0.08),
    ] {
        covers(home, &share("regions", home), truth);
    }
    for (role, truth) in [("tank", 0.15), ("healer", 0.15), ("damage", 0.70)] {
        covers(role, &share("main_roles", role), truth);
    }
    let pings = fit["mean_ping_ms"].as_array().unwrap();
    let names: Vec<&str> = pings.iter().map(|p| p[0].as_str().unwrap()).collect();
    assert_eq!(names, ["eu-west", "us-east", "ap-southeast"]);
    // Europe's players (40%) sit nearest eu-west, so it has the lowest mean.
    let mean = |i: usize| pings[i][1].as_f64().unwrap();
    assert!(mean(0) < mean(1) && mean(1) < mean(2), "{pings:?}");
    // The fitted scenario (which validates: `fit_truth` checks) runs them:
    // the homes' shares and median pings and the ping spread as the
    // scenario draws them, the roles' shares, under the rules' latency
    // rule and composition.
    let fitted: toml::Value = toml::from_str(&toml_text).unwrap();
    let regions = &fitted["regions"];
    assert_eq!(
        regions["max_ping_ms"].as_integer(),
        Some(100),
        "the rules' latency rule"
    );
    assert_eq!(
        regions["data_centres"].as_array().unwrap().len(),
        3,
        "{regions:?}"
    );
    let truth_pings = [
        ("europe", [30.0, 95.0, 180.0]),
        ("north-america", [95.0, 35.0, 210.0]),
        ("asia", [180.0, 200.0, 40.0]),
        ("oceania", [290.0, 230.0, 120.0]),
    ];
    for (home, pings) in truth_pings {
        let h = regions["homes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h["name"].as_str() == Some(home))
            .unwrap_or_else(|| panic!("home {home} in {regions:?}"));
        let got: Vec<f64> = h["ping_ms"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_integer().unwrap() as f64)
            .collect();
        // Medians of a log-normal factor with sigma 0.25: within 10% with
        // the log's hundreds of players per home (oceania's fewest).
        for (g, t) in got.iter().zip(pings) {
            assert!(
                (g / t - 1.0).abs() < 0.1,
                "{home}: {got:?} against {pings:?}"
            );
        }
    }
    let spread = regions["ping_spread"].as_float().unwrap();
    assert!((spread - 0.25).abs() < 0.02, "ping_spread {spread}");
    let roles = &fitted["roles"];
    let shares: Vec<f64> = roles["shares"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_float().unwrap())
        .collect();
    for (got, truth) in shares.iter().zip([0.15, 0.15, 0.70]) {
        assert!((got - truth).abs() < 0.04, "roles' shares {shares:?}");
    }
    let second = roles["second_prob"].as_float().unwrap();
    assert!((second - 0.1).abs() < 0.03, "second_prob {second}");
    assert!(
        toml_text.contains("median ping of its players"),
        "commented"
    );
    // Without rules that have a latency rule and a composition, the log's
    // regions and roles are not made up into one: a note says so.
    let bare = dir.path().join("bare");
    let o = mmsim(&[
        "fit",
        dir.path().join("log.csv").to_str().unwrap(),
        "--out",
        bare.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(bare.join("scenario.toml")).unwrap();
    let bare_toml: toml::Value = toml::from_str(&text).unwrap();
    assert!(bare_toml.get("regions").is_none() && bare_toml.get("roles").is_none());
    assert!(
        text.contains("# note (regions)") && text.contains("# note (roles)"),
        "{text}"
    );
    // A new TrueSkill ladder: everyone at mu, no skill prior to fit.
    assert!(fit["ratings"].is_null());
    assert!(fit["notes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n["quantity"] == "population.skill"));
}

#[test]
fn patience_outside_the_three_families_still_gives_a_scenario_that_validates() {
    // Everyone gives up after exactly 90 s: no family fits it well, the
    // Weibull's shape runs past what a scenario holds and is not offered,
    // and what AIC picks among the rest still makes a valid scenario.
    let dir = tempfile::tempdir().unwrap();
    let (fit, _, _) = fit_truth(
        dir.path(),
        "fit/truth-1v1.toml",
        &[
            "arrivals.patience={ dist = \"fixed\", after = \"90s\" }",
            "run.duration=\"2h\"",
        ],
        false,
    );
    let km = fit["patience"]["kaplan_meier"].as_array().unwrap();
    // The Kaplan-Meier curve drops to 0 at 90 s: every ticket that waited
    // that long gave up.
    let last = km.last().unwrap();
    assert_eq!(last["survival"], 0.0);
    assert!(
        (last["t_s"].as_f64().unwrap() - 90.0).abs() < 0.01,
        "{last}"
    );
    assert!(!fit["patience"]["comparison"]["fits"]
        .as_array()
        .unwrap()
        .is_empty());
}
