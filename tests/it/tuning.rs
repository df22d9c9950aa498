//! The tuning and guarding commands through the real binary on real
//! scenario files: replications, sweeps (whole, sharded, any thread count),
//! `check` against baselines, and `tune`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn mmsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mmsim"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("the binary runs")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// The widening-rate sweep of gamedev-1v1, shortened to six hours and one
/// seed so the test stays quick; seven settings.
const SWEEP: &[&str] = &[
    "scenarios/gamedev-1v1-sweep.toml",
    "--replications",
    "2",
    "--set",
    "run.duration=\"6h\"",
    "--quiet",
];

fn sweep(out: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["sweep"];
    args.extend_from_slice(SWEEP);
    args.extend_from_slice(&["--out", p(out)]);
    args.extend_from_slice(extra);
    mmsim(&args)
}

#[test]
fn a_sweep_gives_the_same_tables_on_one_or_two_threads_and_as_merged_shards() {
    let tmp = tempfile::tempdir().unwrap();
    let one = tmp.path().join("one");
    let two = tmp.path().join("two");
    let shards = tmp.path().join("shards");
    let merged = tmp.path().join("merged");
    let o = sweep(&one, &["--jobs", "1"]);
    assert!(o.status.success(), "{}", text(&o));
    let o = sweep(&two, &["--jobs", "2"]);
    assert!(o.status.success(), "{}", text(&o));
    for k in 0..3 {
        let shard = format!("{k}/3");
        let o = sweep(&shards, &["--jobs", "2", "--shard", &shard]);
        assert!(o.status.success(), "{}", text(&o));
        assert!(shards.join(format!("shard-{k}-of-3.json")).exists());
    }
    assert!(
        !shards.join("sweep.csv").exists(),
        "a shard writes only its shard table"
    );
    let o = mmsim(&["merge", p(&shards), "--out", p(&merged)]);
    assert!(o.status.success(), "{}", text(&o));
    for name in [
        "sweep.csv",
        "sweep.parquet",
        "plots/sweep-pareto.svg",
        "report.html",
    ] {
        let a = std::fs::read(one.join(name)).unwrap();
        assert_eq!(
            a,
            std::fs::read(two.join(name)).unwrap(),
            "{name}: 1 vs 2 threads"
        );
        assert_eq!(
            a,
            std::fs::read(merged.join(name)).unwrap(),
            "{name}: whole vs merged"
        );
    }
    assert!(one.join("plots/sweep-pareto.png").exists());

    let csv = std::fs::read_to_string(one.join("sweep.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 8, "a header and seven settings:\n{csv}");
    let header: Vec<&str> = lines[0].split(',').collect();
    for col in [
        "setting",
        "policy.rate_per_s",
        "wait_s.p90",
        "wait_s.p90.ci95_low",
        "spread_rating.mean",
        "pareto",
    ] {
        assert!(header.contains(&col), "{col} missing from {header:?}");
    }
    // Faster widening means shorter waits and wider spreads: the ends of the
    // sweep must both lie on the front, each being best at one metric.
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let row = |i: usize| -> Vec<&str> { lines[i].split(',').collect() };
    let (pareto, p90, rate) = (col("pareto"), col("wait_s.p90"), col("policy.rate_per_s"));
    assert_eq!(row(1)[rate], "0.5");
    assert_eq!(row(7)[rate], "12.0");
    assert_eq!(row(1)[pareto], "true");
    assert_eq!(row(7)[pareto], "true");
    let w = |i: usize| row(i)[p90].parse::<f64>().unwrap();
    assert!(
        w(7) < w(1),
        "p90 wait at rate 12 ({}) vs 0.5 ({})",
        w(7),
        w(1)
    );

    // `compare` reads the sweep's per-seed rows: each setting against the
    // first, paired on the two common seeds, whole or merged.
    for dir in [&one, &merged] {
        let cmp = tmp.path().join("cmp");
        let o = mmsim(&["compare", p(dir), "--json", "--out", p(&cmp)]);
        assert!(o.status.success(), "{}", text(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let pairs = v["comparisons"].as_array().unwrap();
        assert_eq!(pairs.len(), 6, "{v}");
        for pair in pairs {
            assert_eq!(pair["paired"], true, "{pair}");
            assert_eq!(pair["common_seeds"], serde_json::json!([2010, 2011]));
        }
        assert_eq!(v["arms"][6]["label"], format!("{}#6 rate_per_s=12", p(dir)));
    }

    // A missing shard is named, not silently merged.
    std::fs::remove_file(shards.join("shard-1-of-3.json")).unwrap();
    let o = mmsim(&["merge", p(&shards), "--out", p(&merged)]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("[1, 4]"), "{}", text(&o));
}

#[test]
fn an_unknown_sweep_key_is_named_before_anything_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let smoke = std::fs::read_to_string(root().join("scenarios/smoke.toml")).unwrap();
    let file = tmp.path().join("bad-sweep.toml");
    std::fs::write(
        &file,
        format!("{smoke}\n[sweep.grid]\n\"policy.rate_pr_s\" = [1, 2]\n"),
    )
    .unwrap();
    let o = mmsim(&["sweep", p(&file), "--out", p(&tmp.path().join("o"))]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("policy.rate_pr_s"), "{}", text(&o));
    assert!(!tmp.path().join("o").exists());
    let o = mmsim(&[
        "sweep",
        "scenarios/smoke.toml",
        "--out",
        p(&tmp.path().join("o")),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("[sweep.grid]"), "{}", text(&o));
    let o = mmsim(&[
        "sweep",
        "scenarios/gamedev-1v1-sweep.toml",
        "--shard",
        "3/3",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("--shard"), "{}", text(&o));
}

#[test]
fn check_passes_on_the_baseline_and_fails_when_the_limit_is_made_worse() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("baselines");
    let o = mmsim(&[
        "check",
        "--baselines",
        p(&dir),
        "--update",
        "scenarios/ci/fixed-1v1.toml",
        "--seeds",
        "3",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let baseline: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("ci-fixed-1v1.json")).unwrap()).unwrap();
    assert_eq!(baseline["seeds"], serde_json::json!([11, 12, 13]));
    let o = mmsim(&["check", "--baselines", p(&dir)]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("within tolerance"), "{}", text(&o));
    // A limit of 20 rating points starves the queue: waits and abandonment soar.
    let o = mmsim(&["check", "--baselines", p(&dir), "--set", "policy.limit=20"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let out = text(&o);
    assert!(out.contains("moved past their tolerance"), "{out}");
    let moved: Vec<&str> = out.lines().filter(|l| l.ends_with("MOVED")).collect();
    for m in ["wait_s.p90", "abandon_rate", "spread_rating.mean"] {
        assert!(
            moved.iter().any(|l| l.contains(m)),
            "{m} not flagged:\n{out}"
        );
    }
}

#[test]
fn the_committed_baselines_pass() {
    let o = mmsim(&["check"]);
    assert!(o.status.success(), "{}", text(&o));
}

#[test]
fn replications_give_each_seed_and_an_interval_for_every_metric() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let o = mmsim(&[
        "run",
        "scenarios/smoke.toml",
        "--replications",
        "3",
        "--out",
        p(&out),
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let read = |path: PathBuf| -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
    };
    let agg = read(out.join("summary.json"));
    assert_eq!(agg["seeds"], serde_json::json!([7, 8, 9]));
    let p90s: Vec<f64> = (7..=9)
        .map(|s| {
            read(out.join(format!("replications/seed-{s}/summary.json")))["wait_s"]["p90"]
                .as_f64()
                .unwrap()
        })
        .collect();
    let mean = p90s.iter().sum::<f64>() / 3.0;
    let m = &agg["wait_s"]["p90"];
    assert!((m["mean"].as_f64().unwrap() - mean).abs() < 1e-9, "{m}");
    assert_eq!(m["n"], 3);
    let (lo, hi) = (
        m["ci95_low"].as_f64().unwrap(),
        m["ci95_high"].as_f64().unwrap(),
    );
    assert!(
        lo < mean && mean < hi && (mean - lo - (hi - mean)).abs() < 1e-9,
        "{m}"
    );
    // Seed 8 of the replications is the same run as `run --seed 8`.
    let single = tmp.path().join("s");
    let o = mmsim(&[
        "run",
        "scenarios/smoke.toml",
        "--seed",
        "8",
        "--out",
        p(&single),
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        std::fs::read(single.join("summary.json")).unwrap(),
        std::fs::read(out.join("replications/seed-8/summary.json")).unwrap()
    );
}

#[test]
fn tune_finds_the_shortest_wait_under_a_spread_bound() {
    let o = mmsim(&[
        "tune",
        "scenarios/ci/fixed-1v1.toml",
        "--param",
        "policy.limit",
        "--range",
        "50:250:5",
        "--rounds",
        "1",
        "--seeds",
        "2",
        "--minimise",
        "wait_s.p90",
        "--subject-to",
        "spread_rating.mean<80",
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let out = text(&o);
    let chosen = out
        .lines()
        .find(|l| l.starts_with("chosen: policy.limit="))
        .unwrap_or_else(|| panic!("{out}"));
    let limit: f64 = chosen["chosen: policy.limit=".len()..]
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!((50.0..=250.0).contains(&limit), "{chosen}");
    let spread_line = out
        .lines()
        .find(|l| l.trim_start().starts_with("spread_rating.mean"))
        .unwrap();
    let spread: f64 = spread_line
        .split_whitespace()
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    assert!(spread < 80.0, "{spread_line}");
    let o = mmsim(&[
        "tune",
        "scenarios/ci/fixed-1v1.toml",
        "--param",
        "policy.limit",
        "--range",
        "250:50",
        "--minimise",
        "wait_s.p90",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("--range 250:50"), "{}", text(&o));
    let o = mmsim(&[
        "tune",
        "scenarios/ci/fixed-1v1.toml",
        "--param",
        "policy.limt",
        "--range",
        "50:250",
        "--minimise",
        "wait_s.p90",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("policy.limt"), "{}", text(&o));
}

/// Issue 31: `--param2` equal to `--param` was accepted and searched a
/// diagonal of one parameter. It is refused before any run, naming it.
#[test]
fn tune_refuses_the_same_parameter_twice() {
    let o = mmsim(&[
        "tune",
        "scenarios/ci/fixed-1v1.toml",
        "--param",
        "policy.limit",
        "--range",
        "50:250:5",
        "--param2",
        "policy.limit",
        "--range2",
        "60:90:3",
        "--minimise",
        "wait_s.p90",
        "--quiet",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("--param2 policy.limit is --param again"),
        "{}",
        text(&o)
    );
}

/// Issue 31: a search that ran and found no feasible point exited 2, the
/// bad-input code. It exits 0 and names the closest point.
#[test]
fn tune_that_finds_nothing_feasible_exits_0_naming_the_closest_point() {
    let o = mmsim(&[
        "tune",
        "scenarios/ci/fixed-1v1.toml",
        "--param",
        "policy.limit",
        "--range",
        "50:250:3",
        "--rounds",
        "0",
        "--seeds",
        "2",
        "--minimise",
        "wait_s.p90",
        "--subject-to",
        "spread_rating.mean<1",
        "--quiet",
    ]);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    let line = out
        .lines()
        .find(|l| l.starts_with("no point of 3 meets the constraints; closest: policy.limit="))
        .unwrap_or_else(|| panic!("{out}"));
    // The tightest limit has the smallest spread: it is the closest.
    assert!(line.contains("policy.limit=50:"), "{line}");
    assert!(line.contains("(wanted <1)"), "{line}");
}

/// Issue 31: a 100,000-point `tune` grew without bound. A parameter takes
/// at most 1,000 steps and a round's grid at most 10,000 points, refused
/// before any run.
#[test]
fn tune_refuses_a_grid_too_large_to_search() {
    let base = [
        "tune",
        "scenarios/ci/fixed-1v1.toml",
        "--param",
        "policy.limit",
        "--minimise",
        "wait_s.p90",
        "--quiet",
    ];
    let with = |extra: &[&str]| {
        let mut args = base.to_vec();
        args.extend_from_slice(extra);
        mmsim(&args)
    };
    let o = with(&["--range", "50:250:100000"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("from 3 to 1000"), "{}", text(&o));
    let o = with(&[
        "--range",
        "50:250:1000",
        "--param2",
        "policy.tick",
        "--range2",
        "1:100:200",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("grid of 200000 points"), "{}", text(&o));
}

/// Issue 31: `tune` marked a "BEST" that seed noise could not tell from
/// its neighbours. Two limits so wide that every pair matches at once run
/// the same matches seed for seed: the search must say they are tied.
#[test]
fn tune_says_when_the_best_cannot_be_told_from_another_setting() {
    let o = mmsim(&[
        "tune",
        "scenarios/ci/fixed-1v1.toml",
        "--param",
        "policy.limit",
        "--range",
        "5000:6000:3",
        "--rounds",
        "0",
        "--seeds",
        "3",
        "--minimise",
        "wait_s.p90",
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let out = text(&o);
    assert!(
        out.contains("best (noise)") && out.contains("tied"),
        "{out}"
    );
    assert!(!out.contains("BEST"), "{out}");
    assert!(out.contains("cannot be told from the best at 95%"), "{out}");
    assert!(out.contains("policy.limit=6000 (+0 [0, 0])"), "{out}");
}
