//! `mmsim compare` through the real binary: the pairing verdict for runs of
//! one world on common seeds, for different worlds on the same seed, for
//! replicated runs, and the files it writes.

use crate::common::{mmsim, short_run as run, stderr};
use serde_json::Value;
use std::path::Path;

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn compare_json(args: &[&str]) -> Value {
    let mut all = vec!["compare"];
    all.extend_from_slice(args);
    all.push("--json");
    let o = mmsim(&all);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn metric<'a>(pair: &'a Value, key: &str) -> &'a Value {
    pair["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["key"] == key)
        .unwrap_or_else(|| panic!("{key} missing from {pair}"))
}

#[test]
fn different_worlds_are_unpaired_even_on_the_same_seed() {
    let tmp = tempfile::tempdir().unwrap();
    let (aw, dota) = (tmp.path().join("aw"), tmp.path().join("dota"));
    run("armored-warfare-15v15.toml", &aw, &["--seed", "5"]);
    run("dota2-5v5.toml", &dota, &["--seed", "5"]);
    let out = tmp.path().join("cmp");
    let o = mmsim(&["compare", p(&aw), p(&dota), "--out", p(&out)]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(text.starts_with("unpaired comparison"), "{text}");
    assert!(
        text.contains("different populations or match formats"),
        "{text}"
    );
    assert!(!text.contains("not from seed noise"), "{text}");
    // One seed a side: no interval, no verdict of better or worse.
    let row = text.lines().find(|l| l.starts_with("wait_s.p90")).unwrap();
    assert!(row.ends_with("one seed: cannot tell from noise"), "{row}");
    for f in ["compare.html", "compare.json", "plots/compare-wait-cdf.png"] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    let html = std::fs::read_to_string(out.join("compare.html")).unwrap();
    assert!(html.contains("B against A:</b> unpaired"));
    assert!(!html.contains("NaN"));
}

#[test]
fn one_world_on_one_seed_is_paired_but_claims_nothing_beyond_it() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b, c) = (
        tmp.path().join("a"),
        tmp.path().join("b"),
        tmp.path().join("c"),
    );
    run("smoke.toml", &a, &[]);
    run("smoke.toml", &b, &["--set", "policy.rate_per_s=1"]);
    run("smoke.toml", &c, &["--seed", "8"]);
    let out = tmp.path().join("cmp");
    let v = compare_json(&[p(&a), p(&b), p(&c), "--out", p(&out)]);
    let pairs = v["comparisons"].as_array().unwrap();
    assert_eq!(pairs.len(), 2);
    assert_eq!(pairs[0]["paired"], true, "{}", pairs[0]);
    assert_eq!(pairs[0]["common_seeds"], serde_json::json!([7]));
    assert!(pairs[0]["note"]
        .as_str()
        .unwrap()
        .contains("may still be seed noise"));
    assert_eq!(pairs[1]["paired"], false, "{}", pairs[1]);
    assert!(pairs[1]["unpaired_reason"]
        .as_str()
        .unwrap()
        .contains("share no seed"));
    let m = metric(&pairs[0], "wait_s.p90");
    assert_eq!(m["verdict"], "one seed: cannot tell from noise");
    assert!(m["diff_ci95_low"].is_null());
    let html = std::fs::read_to_string(out.join("compare.html")).unwrap();
    assert!(html.contains("C against A:</b> unpaired") && html.contains("B against A:</b> paired"));
}

#[test]
fn replicated_runs_on_the_same_seeds_are_paired_with_intervals_over_seeds() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    run("smoke.toml", &a, &["--replications", "4"]);
    run(
        "smoke.toml",
        &b,
        &["--replications", "4", "--set", "policy.rate_per_s=1"],
    );
    // The replicated run has its report with banded plots.
    for f in [
        "report.html",
        "plots/wait_cdf_band.svg",
        "plots/wait_by_decile_band.png",
        "replications/seed-9/wait_quantiles.json",
    ] {
        assert!(a.join(f).is_file(), "{f} missing");
    }
    let page = std::fs::read_to_string(a.join("report.html")).unwrap();
    assert!(!page.contains("-0,") && !page.contains("[-0") && !page.contains("NaN"));
    let out = tmp.path().join("cmp");
    let o = mmsim(&["compare", p(&a), p(&b), "--out", p(&out)]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        text.starts_with("paired comparison") && text.contains("on 4 common seeds (seeds 7..10)"),
        "{text}"
    );
    let v = compare_json(&[p(&a), p(&b), "--out", p(&out)]);
    let pair = &v["comparisons"][0];
    assert_eq!(pair["paired"], true);
    // Differences are taken seed by seed from each seed's summary: check one by hand.
    let read = |dir: &Path, seed: u64| -> Value {
        let f = dir.join(format!("replications/seed-{seed}/summary.json"));
        serde_json::from_slice(&std::fs::read(f).unwrap()).unwrap()
    };
    let d: Vec<f64> = (7..=10)
        .map(|s| {
            read(&b, s)["matches"].as_f64().unwrap() - read(&a, s)["matches"].as_f64().unwrap()
        })
        .collect();
    let mean = d.iter().sum::<f64>() / 4.0;
    let sd = (d.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / 3.0).sqrt();
    let half = 3.182_446_305 * sd / 2.0;
    let m = metric(pair, "matches");
    assert!((m["diff"].as_f64().unwrap() - mean).abs() < 1e-9, "{m}");
    let (lo, hi) = (
        m["diff_ci95_low"].as_f64().unwrap(),
        m["diff_ci95_high"].as_f64().unwrap(),
    );
    assert!(
        (hi - lo - 2.0 * half).abs() < 1e-6,
        "{m}: width {}",
        hi - lo
    );
    let within = lo <= 0.0 && hi >= 0.0;
    assert_eq!(m["verdict"] == "within seed noise", within, "{m}");
    // The folded summary's bounds are not diffed as metrics.
    assert!(!pair["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .any(|m| m["key"].as_str().unwrap().contains("ci95")));

    // The same replicated run twice: paired, and every difference is zero.
    let v = compare_json(&[p(&a), p(&a), "--out", p(&out)]);
    let pair = &v["comparisons"][0];
    assert_eq!(pair["paired"], true);
    assert_eq!(metric(pair, "wait_s.p90")["verdict"], "same");
}

#[test]
fn compare_refuses_what_it_cannot_read_with_exit_code_2() {
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a");
    run("smoke.toml", &a, &[]);
    let out = tmp.path().join("cmp");
    let o = mmsim(&["compare", p(&a), "/nonexistent/run", "--out", p(&out)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("/nonexistent/run"), "{}", stderr(&o));
    assert!(!out.exists(), "nothing written on bad input");
    let o = mmsim(&["compare", p(&a)]);
    assert_eq!(o.status.code(), Some(2));
}

/// Issue 31: a run folder with a damaged `scenario.toml` still compared as
/// "the same players and arrivals", and a damaged `wait_quantiles.json`
/// dropped that run's wait curve silently. Both are refused, naming the
/// file; a ruleset or trace run, whose saved scenario names files beside
/// the original, still compares (its world comes from the file's schema).
#[test]
fn damaged_saved_files_are_refused_naming_them() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    run("smoke.toml", &a, &[]);
    run("smoke.toml", &b, &["--set", "policy.base=150"]);
    let cmp = tmp.path().join("cmp");
    let compare = || mmsim(&["compare", p(&a), p(&b), "--out", p(&cmp)]);
    assert!(compare().status.success(), "{}", stderr(&compare()));
    let saved = std::fs::read(b.join("scenario.toml")).unwrap();
    std::fs::write(b.join("scenario.toml"), b"[population\nsize = ").unwrap();
    let o = compare();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("scenario.toml is damaged"),
        "{}",
        stderr(&o)
    );
    std::fs::write(b.join("scenario.toml"), saved).unwrap();
    std::fs::write(a.join("wait_quantiles.json"), b"{\"not\": 1").unwrap();
    let o = compare();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("wait_quantiles.json is damaged"),
        "{}",
        stderr(&o)
    );

    // Trace runs: their saved scenario names a trace it cannot find from
    // the run folder; they still pair, on their schema's world.
    let (x, y) = (tmp.path().join("x"), tmp.path().join("y"));
    for dir in [&x, &y] {
        let o = mmsim(&[
            "run",
            &crate::common::scenario("trace-replay.toml"),
            "--tables",
            "none",
            "--quiet",
            "--out",
            p(dir),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let v = compare_json(&[p(&x), p(&y), "--out", p(&tmp.path().join("cmp2"))]);
    assert!(v.to_string().contains("\"paired\""), "{v}");
}
