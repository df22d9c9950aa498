//! The real binary on real scenario files: outputs, determinism, and bad
//! input (exit 2, a message naming the key and line, no output folder).

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::{mmsim, scenario, short_run, stderr};

fn run_to(dir: &Path, extra: &[&str]) -> Output {
    let smoke = scenario("smoke.toml");
    let out = dir.to_string_lossy().into_owned();
    let mut args = vec!["run", smoke.as_str(), "--out", out.as_str(), "--quiet"];
    args.extend_from_slice(extra);
    mmsim(&args)
}

#[test]
fn run_writes_every_output_and_reruns_byte_identically() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b, c) = (
        tmp.path().join("a"),
        tmp.path().join("b"),
        tmp.path().join("c"),
    );
    for (dir, extra) in [(&a, vec![]), (&b, vec![]), (&c, vec!["--seed", "99"])] {
        let o = run_to(dir, &extra);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    for f in [
        "summary.json",
        "perf.json",
        "scenario.toml",
        "tickets.parquet",
        "matches.parquet",
        "queue.parquet",
        "by_hour.parquet",
        "players.parquet",
        "report.html",
        "plots/wait_hist.png",
        "plots/wait_hist.svg",
    ] {
        assert!(a.join(f).is_file(), "missing {f}");
    }
    for f in [
        "summary.json",
        "tickets.parquet",
        "matches.parquet",
        "report.html",
        "plots/wait_cdf.svg",
    ] {
        assert_eq!(
            std::fs::read(a.join(f)).unwrap(),
            std::fs::read(b.join(f)).unwrap(),
            "{f} differs between identical runs"
        );
    }
    assert_ne!(
        std::fs::read(a.join("summary.json")).unwrap(),
        std::fs::read(c.join("summary.json")).unwrap()
    );
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(a.join("summary.json")).unwrap()).unwrap();
    for key in [
        "tickets",
        "matches",
        "abandoned",
        "abandon_rate",
        "wait_s",
        "wait_s_by_skill_decile",
        "spread_rating",
        "win_prob_gap",
        "upset_rate",
        "rating_skill_rank_corr",
    ] {
        assert!(summary.get(key).is_some(), "summary.json lacks {key}");
    }
    assert_eq!(
        summary["wait_s_by_skill_decile"].as_array().unwrap().len(),
        10
    );
    for k in ["mean", "p50", "p90", "p99", "max"] {
        assert!(summary["wait_s"][k].is_number(), "wait_s.{k}");
    }
    let perf: serde_json::Value =
        serde_json::from_slice(&std::fs::read(a.join("perf.json")).unwrap()).unwrap();
    for k in [
        "wall_s",
        "events",
        "events_per_s",
        "tickets_per_s",
        "peak_rss_bytes",
    ] {
        assert!(perf.get(k).is_some(), "perf.json lacks {k}");
    }
    // Only a policy that keeps searches reports them.
    assert!(perf.get("search").is_none(), "{perf}");
    // Leftover temporaries would mean a file was not written whole.
    let partial = std::fs::read_dir(&a)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .contains(".partial")
        })
        .count();
    assert_eq!(partial, 0);
}

#[test]
fn set_overrides_a_key_and_the_effective_scenario_is_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let o = run_to(
        tmp.path(),
        &["--set", "policy.max=150", "--set", "policy.base=150"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let effective = std::fs::read_to_string(tmp.path().join("scenario.toml")).unwrap();
    assert!(effective.contains("max = 150"), "{effective}");
}

/// Writes a scenario file with one substitution applied to smoke.toml.
fn broken(tmp: &Path, from: &str, to: &str) -> PathBuf {
    let text = std::fs::read_to_string(scenario("smoke.toml")).unwrap();
    assert!(
        text.contains(from),
        "smoke.toml no longer contains {from:?}"
    );
    let path = tmp.join("broken.toml");
    std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
    path
}

fn assert_bad_input(args: &[&str], must_contain: &[&str], out_dir: &Path) {
    let o = mmsim(args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "exit code for {args:?}: {err}");
    for s in must_contain {
        assert!(err.contains(s), "{args:?}: message {err:?} lacks {s:?}");
    }
    assert!(!err.contains("panicked"), "{err}");
    assert!(!out_dir.exists(), "bad input left an output folder");
}

#[test]
fn bad_input_exits_2_naming_the_key_and_line_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let o = out.to_string_lossy().into_owned();
    let missing = tmp.path().join("nope.toml").to_string_lossy().into_owned();
    assert_bad_input(&["run", &missing, "--out", &o], &["nope.toml"], &out);

    let cases: &[(&str, &str, &[&str])] = &[
        ("[run]", "[run\n", &["broken.toml:4", "table header"]),
        (
            "requeue_prob = 0.5",
            "requeue_prob = 0.5\nrequeue_chance = 1",
            &["requeue_chance", "broken.toml:"],
        ),
        (
            "rate_per_s = 1.0",
            "rate_per_s = -1.0",
            &["arrivals.rate_per_s", "broken.toml:15", "above 0"],
        ),
        (
            "base = 100",
            "base = -5",
            &["policy.base", "broken.toml:", "zero or more"],
        ),
        (
            r#"skill = { dist = "normal", mean = 1500, sd = 350, min = 0, max = 3000 }"#,
            r#"skill = { dist = "quantiles", table = [[0.1, 1200], [0.5, 1100]] }"#,
            &["population.skill.table", "increasing", "broken.toml:12"],
        ),
        (
            "duration = \"2h\"",
            "duration = \"2 fortnights\"",
            &["unknown unit", "broken.toml:7"],
        ),
    ];
    for (from, to, expect) in cases {
        let path = broken(tmp.path(), from, to).to_string_lossy().into_owned();
        assert_bad_input(&["run", &path, "--out", &o], expect, &out);
        assert_bad_input(&["validate", &path], expect, &out);
    }
    let smoke = scenario("smoke.toml");
    assert_bad_input(
        &["run", &smoke, "--out", &o, "--set", "policy.nonsense=3"],
        &["--set policy.nonsense=3", "nonsense"],
        &out,
    );
    assert_bad_input(
        &[
            "run",
            &smoke,
            "--out",
            &o,
            "--set",
            "arrivals.rate_per_s=-2",
        ],
        &["--set arrivals.rate_per_s=-2", "above 0"],
        &out,
    );
    assert_bad_input(
        &["run", &smoke, "--out", &o, "--set", "justakey"],
        &["KEY=VALUE"],
        &out,
    );
    assert_bad_input(
        &["run", &smoke, "--out", &o, "--frobnicate"],
        &["--frobnicate"],
        &out,
    );
}

/// Issue 31: `validate` printed `over 21600.000s` and said nothing of
/// party sizes, roles, regions or replications.
#[test]
fn validate_describes_the_world_it_would_run() {
    let o = mmsim(&[
        "validate",
        &scenario("regions-roles-5v5.toml"),
        "--set",
        "run.replications=3",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    for part in [
        "over 8h (2h warm-up)",
        "parties by size: 1: 60%, 2: 18%, 3: 10%, 4: 4%, 5: 8%",
        "patience exponential, mean 10m",
        "roles: each team 3 damage + 1 healer + 1 tank",
        "regions: data centres eu-west, us-east, ap-southeast",
        "replications: 3 seeds",
    ] {
        assert!(text.contains(part), "no `{part}` in:\n{text}");
    }
    assert!(!text.contains(".000s"), "{text}");
}

/// Issue 31: `validate` estimates the run's time and its peak of players
/// online from a pilot; a short scenario's pilot is the whole simulation,
/// so its peak is the run's own.
#[test]
fn validate_estimates_the_run_from_a_pilot() {
    let o = mmsim(&["validate", &scenario("smoke.toml")]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    let line = text
        .lines()
        .find(|l| l.starts_with("estimate: about "))
        .unwrap_or_else(|| panic!("no estimate in:\n{text}"));
    assert!(
        line.contains("the pilots ran the whole simulation"),
        "{line}"
    );
    let peak: f64 = line
        .split("about ")
        .nth(2)
        .and_then(|r| r.split(' ').next())
        .map(|n| n.replace(',', ""))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no peak in {line}"));
    let tmp = tempfile::tempdir().unwrap();
    let o = run_to(&tmp.path().join("r"), &["--tables", "none"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(tmp.path().join("r/summary.json")).unwrap())
            .unwrap();
    assert_eq!(
        Some(peak),
        summary["concurrent_players"]["max"].as_f64(),
        "{line}"
    );
    // A month of it: the pilots stop short and the rest is priced.
    let o = mmsim(&[
        "validate",
        &scenario("smoke.toml"),
        "--set",
        "run.duration=30d",
    ]);
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(text.contains("pilots of the first "), "{text}");
}

#[test]
fn validate_and_compare_report_what_they_see() {
    let o = mmsim(&["validate", &scenario("gamedev-1v1.toml")]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("fixed-limit") && text.contains("glicko1"),
        "{text}"
    );

    let tmp = tempfile::tempdir().unwrap();
    let (a, b, c) = (
        tmp.path().join("a"),
        tmp.path().join("b"),
        tmp.path().join("c"),
    );
    assert!(run_to(&a, &[]).status.success());
    assert!(run_to(&b, &["--set", "policy.rate_per_s=1"])
        .status
        .success());
    assert!(run_to(&c, &["--seed", "8"]).status.success());
    let cmp = tmp.path().join("cmp").to_string_lossy().into_owned();
    let paired = mmsim(&[
        "compare",
        &a.to_string_lossy(),
        &b.to_string_lossy(),
        "--out",
        &cmp,
    ]);
    let text = String::from_utf8_lossy(&paired.stdout);
    assert!(paired.status.success());
    assert!(text.starts_with("paired"), "{text}");
    assert!(text.contains("wait_s.p90"), "{text}");
    let unpaired = mmsim(&[
        "compare",
        &a.to_string_lossy(),
        &c.to_string_lossy(),
        "--out",
        &cmp,
    ]);
    assert!(String::from_utf8_lossy(&unpaired.stdout).starts_with("unpaired"));
    let missing = mmsim(&["compare", &a.to_string_lossy(), "/nonexistent/run"]);
    assert_eq!(missing.status.code(), Some(2));
}

#[test]
fn widening_beats_the_fixed_limit_on_p90_wait_in_gamedev_1v1() {
    let tmp = tempfile::tempdir().unwrap();
    let read = |name: &str| -> serde_json::Value {
        let dir = tmp.path().join(name);
        let o = mmsim(&[
            "run",
            &scenario(&format!("{name}.toml")),
            "--out",
            &dir.to_string_lossy(),
            "--quiet",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        serde_json::from_slice(&std::fs::read(dir.join("summary.json")).unwrap()).unwrap()
    };
    let fixed = read("gamedev-1v1");
    let widening = read("gamedev-1v1-widening");
    let f = |s: &serde_json::Value, a: &str, b: &str| s[a][b].as_f64().unwrap();
    assert!(f(&widening, "wait_s", "p90") < 0.9 * f(&fixed, "wait_s", "p90"));
    // The price: somewhat wider matches, but bounded by the 500 clamp.
    let (sw, sf) = (
        f(&widening, "spread_rating", "mean"),
        f(&fixed, "spread_rating", "mean"),
    );
    assert!(sw > sf && sw < 1.5 * sf, "spread {sw} vs {sf}");
    assert!(
        f(&fixed, "spread_rating", "p90") <= 150.0,
        "the fixed limit never exceeds 150"
    );
}

#[test]
fn tables_none_skips_the_row_tables_and_keeps_the_same_summary() {
    let tmp = tempfile::tempdir().unwrap();
    let (all, none) = (tmp.path().join("all"), tmp.path().join("none"));
    assert!(run_to(&all, &[]).status.success());
    let o = run_to(&none, &["--tables", "none"]);
    assert!(o.status.success(), "{}", stderr(&o));
    for f in [
        "tickets.parquet",
        "matches.parquet",
        "queue.parquet",
        "by_hour.parquet",
        "players.parquet",
        "COLUMNS.md",
    ] {
        assert!(all.join(f).is_file(), "missing {f}");
        assert!(!none.join(f).exists(), "--tables none wrote {f}");
    }
    assert!(none.join("report.html").is_file());
    assert_eq!(
        std::fs::read(all.join("summary.json")).unwrap(),
        std::fs::read(none.join("summary.json")).unwrap()
    );
    let bad = run_to(&tmp.path().join("bad"), &["--tables", "some"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("--tables"), "{}", stderr(&bad));
}

/// A run's `players.parquet` loaded as the next run's ladder
/// (`[population] ratings_file`): the next run starts with the first run's
/// final ratings, so its rank correlation at time zero is the first run's
/// final one, to the bit; a wrong pairing of keys or sizes exits 2.
#[test]
fn a_run_starts_from_another_run_s_final_ratings() {
    let tmp = tempfile::tempdir().unwrap();
    let first = tmp.path().join("first");
    let o = run_to(&first, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let smoke = std::fs::read_to_string(scenario("smoke.toml")).unwrap();
    let next = smoke
        .replace("seed = 7", "seed = 8")
        .replace("duration = \"2h\"", "duration = \"20m\"")
        .replace("warmup = \"10m\"", "warmup = \"0s\"")
        .replace(
            "size = 1500",
            "size = 1500\nratings_file = \"first/players.parquet\"",
        );
    assert_ne!(next, smoke);
    let file = tmp.path().join("next.toml");
    std::fs::write(&file, &next).unwrap();
    let out = tmp.path().join("next");
    let o = mmsim(&[
        "run",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let read = |d: &Path| -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(d.join("summary.json")).unwrap()).unwrap()
    };
    let (a, b) = (read(&first), read(&out));
    let start = &b["rating_skill_rank_corr_series"][0];
    assert_eq!(start["t_s"], 0.0);
    assert_eq!(
        start["corr"], a["rating_skill_rank_corr"],
        "{start} against {}",
        a["rating_skill_rank_corr"]
    );
    // Refused: a ladder with `seasoned`, and one for a population of another size.
    for (text, needle) in [
        (
            next.replace(
                "[population]",
                "[population]\nseasoned = { correlation = 0.9, deviation = 50 }",
            ),
            "population.ratings_file",
        ),
        (
            next.replace("size = 1500", "size = 1400"),
            "has more players than population.size (1400)",
        ),
    ] {
        std::fs::write(&file, text).unwrap();
        let bad = tmp.path().join("bad");
        let o = mmsim(&[
            "run",
            file.to_str().unwrap(),
            "--out",
            bad.to_str().unwrap(),
            "--quiet",
        ]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains(needle), "{}", stderr(&o));
        assert!(!bad.exists());
    }
}

#[test]
fn catalogue_lists_every_family_and_refuses_an_unknown_one() {
    let all = mmsim(&["catalogue"]);
    assert!(all.status.success(), "{}", stderr(&all));
    let text = String::from_utf8_lossy(&all.stdout);
    for needle in [
        "[policy], picked by `kind`",
        "[teams], picked by `method`",
        "[rating], picked by `system`",
        "[outcome], picked by `model`",
        "accelbyte ",
        "parameters: k, scale, initial",
    ] {
        assert!(text.contains(needle), "{needle} missing:\n{text}");
    }
    let md = mmsim(&["catalogue", "teams", "--markdown"]);
    let md = String::from_utf8_lossy(&md.stdout);
    assert!(md.starts_with("| `method` |"), "{md}");
    assert_eq!(md.lines().count(), 2 + 3, "{md}");
    let policies = mmsim(&["policies"]);
    assert!(String::from_utf8_lossy(&policies.stdout).starts_with("fixed-limit "));
    let bad = mmsim(&["catalogue", "nope"]);
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
}

/// The `quality` policy's work in `perf.json`: every search is a seed
/// visit, some visits keep their search, and some searches find again
/// what the seed had.
#[test]
fn perf_json_counts_the_quality_policy_s_searches() {
    let tmp = tempfile::tempdir().unwrap();
    short_run("dota2-5v5.toml", tmp.path(), &[]);
    let perf: serde_json::Value =
        serde_json::from_slice(&std::fs::read(tmp.path().join("perf.json")).unwrap()).unwrap();
    let count = |k: &str| {
        perf["search"][k]
            .as_u64()
            .unwrap_or_else(|| panic!("search.{k}: {perf}"))
    };
    let (visits, searches, unchanged) = (
        count("seed_visits"),
        count("searches"),
        count("searches_unchanged"),
    );
    assert!(unchanged > 0 && unchanged < searches, "{perf}");
    assert!(searches < visits, "{perf}");
}

/// Issue 31: off a terminal (a CI log, `nohup`), `sweep` printed nothing
/// for minutes. It prints a plain progress line (done/total, elapsed,
/// left) to standard error at most every `MMSIM_PROGRESS_EVERY_S` seconds
/// (10 by default); `--quiet` silences it.
#[test]
fn off_a_terminal_progress_is_plain_lines_and_quiet_silences_them() {
    let tmp = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_mmsim"))
            .args(args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .env("MMSIM_PROGRESS_EVERY_S", "0")
            .output()
            .unwrap()
    };
    let out = tmp.path().join("sweep");
    let o = run(&[
        "sweep",
        "scenarios/gamedev-1v1-sweep.toml",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("mmsim: runs "))
        .collect();
    assert!(lines.len() >= 3, "{err}");
    assert!(lines.iter().all(|l| l.contains("elapsed")), "{err}");
    assert!(
        !err.contains('\u{1b}'),
        "no terminal escapes off a terminal: {err:?}"
    );
    let out = tmp.path().join("run");
    let o = run(&[
        "run",
        "scenarios/smoke.toml",
        "--tables",
        "none",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(stderr(&o).contains("mmsim: simulated "), "{}", stderr(&o));
    let o = run(&[
        "run",
        "scenarios/smoke.toml",
        "--tables",
        "none",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(!stderr(&o).contains("mmsim: simulated"), "{}", stderr(&o));
}
