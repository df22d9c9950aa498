//! Issue 13's reproducers against the real binary: closed pipes, provenance
//! of outputs, shards that do not belong together, and output folders.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::common::{mmsim, scenario, stderr};

fn p(path: &Path) -> &str {
    path.to_str().expect("temporary paths are UTF-8")
}

/// Runs mmsim with stdout on a pipe whose reading end is already closed,
/// so its first write fails as it does under `| head -1` once head is done.
#[cfg(unix)]
fn into_closed_pipe(args: &[&str]) -> Output {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    Command::new(env!("CARGO_BIN_EXE_mmsim"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(writer)
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs")
        .wait_with_output()
        .expect("the binary ends")
}

#[cfg(unix)]
#[test]
fn a_closed_stdout_ends_every_command_quietly_by_sigpipe() {
    use std::os::unix::process::ExitStatusExt;
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let o = mmsim(&["run", &scenario("smoke.toml"), "--out", p(&run), "--quiet"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let smoke = scenario("smoke.toml");
    let cmp = tmp.path().join("cmp");
    let cases: [&[&str]; 7] = [
        &["policies"],
        &["catalogue"],
        &["catalogue", "teams", "--markdown"],
        &["validate", &smoke],
        &["compare", p(&run), p(&run), "--out", p(&cmp)],
        &["compare", p(&run), p(&run), "--json", "--out", p(&cmp)],
        &["--help"],
    ];
    for args in cases {
        let o = into_closed_pipe(args);
        let err = stderr(&o);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert_eq!(err, "", "{args:?} wrote to stderr");
        // Killed by SIGPIPE as `cat` would be (141 in a shell); clap's help
        // ignores the failed write and exits 0.
        assert!(
            o.status.signal() == Some(libc::SIGPIPE) || o.status.code() == Some(0),
            "{args:?} ended with {:?}",
            o.status
        );
    }
    // The same commands with an open pipe still print and succeed.
    let o = mmsim(&["compare", p(&run), p(&run), "--out", p(&cmp)]);
    assert!(o.status.success() && !o.stdout.is_empty(), "{}", stderr(&o));
}

fn json(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

fn assert_provenance(v: &serde_json::Value, what: &str) -> String {
    let p = &v["provenance"];
    assert_eq!(p["mmsim_version"], env!("CARGO_PKG_VERSION"), "{what}: {p}");
    let hash = p["scenario_sha256"].as_str().unwrap_or_default().to_owned();
    assert!(
        hash.len() == 64 && hash.chars().all(|c| c.is_ascii_hexdigit()),
        "{what}: {p}"
    );
    hash
}

#[test]
fn the_saved_scenario_reruns_the_seed_used_and_outputs_carry_its_hash() {
    let tmp = tempfile::tempdir().unwrap();
    let (first, again) = (tmp.path().join("first"), tmp.path().join("again"));
    let smoke = scenario("smoke.toml");
    let o = mmsim(&["run", &smoke, "--seed", "99", "--out", p(&first), "--quiet"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let saved = std::fs::read_to_string(first.join("scenario.toml")).unwrap();
    assert!(saved.contains("seed = 99"), "{saved}");
    assert!(
        saved.contains("# A small, fast scenario"),
        "comments kept: {saved}"
    );
    // The saved scenario alone reproduces the run, byte for byte.
    let saved_path = first.join("scenario.toml");
    let o = mmsim(&["run", p(&saved_path), "--out", p(&again), "--quiet"]);
    assert!(o.status.success(), "{}", stderr(&o));
    for f in ["summary.json", "matches.parquet", "scenario.toml"] {
        assert_eq!(
            std::fs::read(first.join(f)).unwrap(),
            std::fs::read(again.join(f)).unwrap(),
            "{f} differs when rerun from the saved scenario"
        );
    }
    let summary = json(&first.join("summary.json"));
    assert_eq!(summary["seed"], 99);
    let hash = assert_provenance(&summary, "summary.json");
    assert_eq!(
        assert_provenance(&json(&first.join("perf.json")), "perf.json"),
        hash
    );
    // The hash leaves the seed to the `seed` beside it: `validate` prints
    // it for the saved file and for the original alike, and another for a
    // changed setting.
    for file in [p(&saved_path), smoke.as_str()] {
        let o = mmsim(&["validate", file]);
        assert!(String::from_utf8_lossy(&o.stdout).contains(&hash), "{o:?}");
    }
    let o = mmsim(&["validate", &smoke, "--set", "policy.base=20"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!String::from_utf8_lossy(&o.stdout).contains(&hash), "{o:?}");

    // A seed TOML cannot hold is refused before anything runs.
    let big = tmp.path().join("big");
    let o = mmsim(&[
        "run",
        &smoke,
        "--seed",
        "18446744073709551615",
        "--out",
        p(&big),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--seed"), "{}", stderr(&o));
    assert!(!big.exists());
}

#[test]
fn replications_record_their_seeds_and_provenance_in_every_file() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("reps");
    let smoke = scenario("smoke.toml");
    let o = mmsim(&[
        "run",
        &smoke,
        "--seed",
        "5",
        "--replications",
        "2",
        "--out",
        p(&out),
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let saved = std::fs::read_to_string(out.join("scenario.toml")).unwrap();
    assert!(
        saved.contains("seed = 5") && saved.contains("replications = 2"),
        "{saved}"
    );
    let summary = json(&out.join("summary.json"));
    assert_eq!(summary["seeds"], serde_json::json!([5, 6]));
    let hash = assert_provenance(&summary, "summary.json");
    for f in [
        "perf.json",
        "replications/seed-5/summary.json",
        "replications/seed-6/perf.json",
    ] {
        assert_eq!(assert_provenance(&json(&out.join(f)), f), hash, "{f}");
    }
    assert_eq!(
        json(&out.join("perf.json"))["runs"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

/// Issue 13's reproducer: a shard of the sweep run with `--set
/// policy.base=20` merged with a shard of the original printed "merged 2
/// shards" and wrong figures.
#[test]
fn merge_refuses_shards_of_different_scenarios_naming_the_key() {
    let tmp = tempfile::tempdir().unwrap();
    let (shards, merged) = (tmp.path().join("shards"), tmp.path().join("merged"));
    let sweep = |k: &str, extra: &[&str]| {
        let mut args = vec![
            "sweep",
            "scenarios/gamedev-1v1-sweep.toml",
            "--replications",
            "1",
            "--set",
            "run.duration=\"3h\"",
            "--set",
            "run.warmup=\"10m\"",
            "--quiet",
            "--shard",
            k,
            "--out",
            p(&shards),
        ];
        args.extend_from_slice(extra);
        let o = mmsim(&args);
        assert!(o.status.success(), "{}", stderr(&o));
    };
    sweep("0/2", &[]);
    sweep("1/2", &["--set", "policy.base=20"]);
    let o = mmsim(&["merge", p(&shards), "--out", p(&merged)]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("`policy.base` is 150.0 in shard 0/2 and 20.0 in shard 1/2"),
        "{err}"
    );
    assert!(
        !merged.exists(),
        "a refused merge wrote {}",
        merged.display()
    );
    // The shard of the original sweep, redone, merges; the outputs say
    // where they came from.
    sweep("1/2", &[]);
    let o = mmsim(&["merge", p(&shards), "--out", p(&merged)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let shard = json(&shards.join("shard-0-of-2.json"));
    let hash = assert_provenance(&shard, "shard-0-of-2.json");
    assert_eq!(shard["canonical_scenario"]["policy"]["base"], 150.0);
    assert_eq!(
        assert_provenance(&json(&merged.join("provenance.json")), "provenance.json"),
        hash
    );
}

#[test]
fn compare_says_when_two_runs_come_from_different_mmsim_versions() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    for dir in [&a, &b] {
        let o = mmsim(&["run", &scenario("smoke.toml"), "--out", p(dir), "--quiet"]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let cmp = tmp.path().join("cmp");
    let same = mmsim(&["compare", p(&a), p(&b), "--out", p(&cmp)]);
    assert!(same.status.success());
    assert!(!String::from_utf8_lossy(&same.stdout).contains("mmsim 0.0.1"));
    let mut old = json(&b.join("summary.json"));
    old["provenance"]["mmsim_version"] = "0.0.1".into();
    std::fs::write(b.join("summary.json"), old.to_string()).unwrap();
    let o = mmsim(&["compare", p(&a), p(&b), "--out", p(&cmp)]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", stderr(&o));
    let note = format!(
        "written by mmsim {} and {} by mmsim 0.0.1",
        env!("CARGO_PKG_VERSION"),
        p(&b)
    );
    assert!(text.contains(&note), "{text}");
    // Same numbers otherwise: the note is the only line added.
    assert_eq!(
        text.lines().count(),
        String::from_utf8_lossy(&same.stdout).lines().count() + 1
    );
    let o = mmsim(&["compare", p(&a), p(&b), "--json", "--out", p(&cmp)]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["mmsim_versions"][1], "0.0.1", "{v}");
    let o = mmsim(&["compare", p(&a), p(&a), "--json", "--out", p(&cmp)]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v.get("mmsim_versions").is_none(), "{v}");
}

/// (id, winner, duration, P(team 0)) of one match.
type Outcome = (u64, Option<u32>, Option<f64>, Option<f64>);

/// Every match's `Outcome`, in id order, and whether any match carried a
/// gold integral or survivors.
fn outcomes(sets: &[&str], seed: u64) -> (Vec<Outcome>, bool, bool) {
    let mut sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    sets.push("run.duration=\"50m\"".into());
    let loaded = mmsim::scenario::load(Path::new(&scenario("ci/teams-3v3.toml")), &sets).unwrap();
    let mut matches = mmsim::run::run_keeping(&loaded.scenario, seed)
        .records
        .matches;
    matches.sort_by_key(|m| m.id);
    let gold = matches.iter().any(|m| m.gold_integral.is_some());
    let battle = matches.iter().any(|m| m.survivors.is_some());
    let rows = matches
        .iter()
        .map(|m| (m.id.0 as u64, m.winner, m.duration_s, m.p_team0))
        .collect();
    (rows, gold, battle)
}

/// Issue 13: with `[outcome.gold]` on, match #2 of a seed (identical teams)
/// had another winner, as the gold walk drew from the winners' stream.
#[test]
fn gold_and_battle_switched_on_or_off_leave_every_winner_of_a_seed_alone() {
    let gold = "outcome.gold.snowball=0.04";
    let battle = "outcome.battle.hit_points=2";
    for seed in [23, 24] {
        let (plain, g, b) = outcomes(&[], seed);
        assert!(plain.len() > 100 && !g && !b, "{} matches", plain.len());
        for (sets, want_gold, want_battle) in [
            (vec![gold], true, false),
            (vec![battle], false, true),
            (vec![gold, battle], true, true),
        ] {
            let (other, g, b) = outcomes(&sets, seed);
            assert_eq!((g, b), (want_gold, want_battle), "{sets:?} not switched on");
            assert_eq!(plain.len(), other.len(), "{sets:?}, seed {seed}");
            for (a, o) in plain.iter().zip(&other) {
                assert_eq!(a, o, "{sets:?}, seed {seed}: match {} differs", a.0);
            }
        }
    }
}

/// Issue 13: a `--out` that cannot be written failed only after the whole
/// run. Now every writing command refuses it first, with exit 2.
#[test]
fn an_unwritable_out_is_refused_before_simulating() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("file"), b"not a folder").unwrap();
    let out = tmp.path().join("file/run");
    let smoke = scenario("smoke.toml");
    let sweep = "scenarios/gamedev-1v1-sweep.toml";
    let cases: [&[&str]; 4] = [
        &["run", &smoke, "--tables", "none"],
        &["run", &smoke, "--replications", "2"],
        &["sweep", sweep],
        &["sweep", sweep, "--shard", "0/2"],
    ];
    for args in cases {
        let mut args = args.to_vec();
        args.extend_from_slice(&["--quiet", "--out", p(&out)]);
        let o = mmsim(&args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("--out") && err.contains("file/run"),
            "{args:?}: {err}"
        );
        assert!(!err.contains("panicked"), "{err}");
    }
}

/// Issue 13: two runs writing one `--out` both exited 0 and once mixed the
/// folder. The second is refused while the first runs; the lock of a
/// killed run is taken over.
#[cfg(unix)]
#[test]
fn a_second_writer_to_a_folder_is_refused_and_a_killed_writers_lock_taken_over() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let lock = tmp.path().join(".run.mmsim-lock");
    let smoke = scenario("smoke.toml");
    // Long enough to be still running when the second starts; killed below.
    let mut first = Command::new(env!("CARGO_BIN_EXE_mmsim"))
        .args([
            "run",
            &smoke,
            "--set",
            "run.duration=\"300d\"",
            "--quiet",
            "--out",
            p(&out),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    while !std::fs::read_to_string(&lock).is_ok_and(|t| t.ends_with('\n')) {
        assert!(
            first.try_wait().unwrap().is_none(),
            "the first run ended early"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let o = mmsim(&["run", &smoke, "--quiet", "--out", p(&out)]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "another mmsim (pid {}) is writing this folder",
            first.id()
        )),
        "{err}"
    );
    assert!(!out.join("summary.json").exists());
    first.kill().unwrap();
    first.wait().unwrap();
    // SIGKILL left the lock; its process is gone, so the next run takes it.
    assert!(lock.exists());
    let o = mmsim(&["run", &smoke, "--quiet", "--out", p(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(out.join("summary.json").exists() && !lock.exists());
}

/// Issue 31's data-loss reproducer: a folder holding the user's file and
/// one file named like an mmsim output was replaced whole, exit 0. Now
/// `run`, `compare` and `sweep` refuse it with exit 2, naming the file,
/// and leave it as it was; a folder mmsim wrote (marked) is still reused.
#[test]
fn a_user_s_folder_with_an_output_s_file_name_is_refused_not_replaced() {
    let tmp = tempfile::tempdir().unwrap();
    let smoke = scenario("smoke.toml");
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    for dir in [&a, &b] {
        let o = mmsim(&[
            "run",
            &smoke,
            "--tables",
            "none",
            "--out",
            p(dir),
            "--quiet",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let sweep = "scenarios/gamedev-1v1-sweep.toml";
    let cases: [(&str, &[u8], Vec<&str>); 4] = [
        (
            "summary.json",
            b"{}",
            vec!["run", &smoke, "--tables", "none", "--quiet"],
        ),
        (
            "report.html",
            b"<p>",
            vec!["run", &smoke, "--replications", "2", "--quiet"],
        ),
        ("plots", b"", vec!["compare", p(&a), p(&b)]),
        ("sweep.csv", b"x", vec!["sweep", sweep, "--quiet"]),
    ];
    for (i, (name, bytes, args)) in cases.into_iter().enumerate() {
        let out = tmp.path().join(format!("out{i}"));
        std::fs::create_dir(&out).unwrap();
        std::fs::write(out.join("thesis.txt"), b"thesis").unwrap();
        if bytes.is_empty() {
            std::fs::create_dir(out.join(name)).unwrap();
        } else {
            std::fs::write(out.join(name), bytes).unwrap();
        }
        let mut args = args.clone();
        args.extend_from_slice(&["--out", p(&out)]);
        let o = mmsim(&args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        // The first foreign entry, sorted: the look-alike.
        assert!(
            err.contains(&format!("`{name}`, which mmsim did not write")),
            "{err}"
        );
        assert_eq!(std::fs::read(out.join("thesis.txt")).unwrap(), b"thesis");
        assert!(out.join(name).exists(), "{name} removed");
        let mut left: Vec<_> = std::fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains(&format!("out{i}")))
            .collect();
        left.sort();
        assert_eq!(left, vec![format!("out{i}")], "nothing left beside it");
    }
    // A run's own folder, marked, is replaced by the next run; once the
    // user adds a file to it, it is theirs.
    let o = mmsim(&["run", &smoke, "--tables", "none", "--out", p(&a), "--quiet"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let marker: serde_json::Value =
        serde_json::from_slice(&std::fs::read(a.join(".mmsim-output.json")).unwrap()).unwrap();
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(a.join("summary.json")).unwrap()).unwrap();
    assert_eq!(
        marker["run_sha256"],
        summary["provenance"]["scenario_sha256"]
    );
    assert!(marker["entries"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e == "report.html"));
    std::fs::write(a.join("notes.md"), b"mine").unwrap();
    let o = mmsim(&["run", &smoke, "--tables", "none", "--out", p(&a), "--quiet"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("`notes.md`"), "{}", stderr(&o));
    assert_eq!(std::fs::read(a.join("notes.md")).unwrap(), b"mine");
}

/// `daily_profile` with `hours[h] = m` and 1 elsewhere, as a `--set` argument.
fn profile_with(h: usize, m: &str) -> String {
    let mut hours = vec!["1".to_string(); 24];
    hours[h] = m.to_string();
    format!("arrivals.daily_profile=[{}]", hours.join(","))
}

#[test]
fn a_huge_multiplier_in_an_hour_the_run_never_reaches_costs_nothing() {
    // Hour 23 of a 2-hour run: it set the engine's drawing pace, and the
    // run drew a billion times too many arrivals for minutes.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o");
    let quiet = mmsim(&[
        "run",
        &scenario("smoke.toml"),
        "--quiet",
        "--tables",
        "none",
        "--out",
        p(&out),
    ]);
    assert!(quiet.status.success(), "{}", stderr(&quiet));
    let plain = json(&out.join("summary.json"));
    let out2 = dir.path().join("o2");
    let started = std::time::Instant::now();
    let o = mmsim(&[
        "run",
        &scenario("smoke.toml"),
        "--set",
        &profile_with(23, "1e9"),
        "--quiet",
        "--tables",
        "none",
        "--out",
        p(&out2),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // Reached hours at 1 as before: the same arrivals, the same run.
    let profiled = json(&out2.join("summary.json"));
    assert_eq!(plain["tickets"], profiled["tickets"]);
    assert_eq!(plain["wait_s"], profiled["wait_s"]);
    // Not a timing test: a generous bound that only the old hang breaks.
    assert!(started.elapsed().as_secs() < 120, "{:?}", started.elapsed());
}

#[test]
fn a_run_that_would_take_more_than_a_day_of_cpu_is_refused_unless_forced() {
    let huge = profile_with(1, "1e9");
    for cmd in ["validate", "run"] {
        let o = mmsim(&[cmd, &scenario("smoke.toml"), "--set", &huge]);
        assert_eq!(o.status.code(), Some(2), "{cmd}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(
            e.contains("arrivals.daily_profile") && e.contains("--force"),
            "{cmd}: {e}"
        );
    }
    let o = mmsim(&[
        "validate",
        &scenario("smoke.toml"),
        "--set",
        &huge,
        "--force",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // A plain rate says so too, naming its key.
    let o = mmsim(&[
        "validate",
        &scenario("smoke.toml"),
        "--set",
        "arrivals.rate_per_s=1e6",
        "--set",
        "run.duration=3d",
    ]);
    assert_eq!(o.status.code(), Some(2));
    // The rate is within its own bound (1e6): the budget refuses it.
    let e = stderr(&o);
    assert!(
        e.contains("arrivals.rate_per_s") && e.contains("too high for this run"),
        "{e}"
    );
}

#[test]
fn a_gold_step_under_a_second_is_refused_naming_the_key() {
    let o = mmsim(&[
        "validate",
        &scenario("dota2-5v5.toml"),
        "--set",
        "outcome.gold.step=1ms",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("gold.step") && stderr(&o).contains("at least 1s"),
        "{}",
        stderr(&o)
    );
}

/// The sizing figure checked by Little's law: with every match lasting
/// exactly five minutes (no lobby in smoke.toml), the mean number of
/// players in matches is matches an hour × 2 players × 300 s / 3600 s;
/// and the parts add up, sample by sample and hour by hour.
#[test]
fn concurrent_players_in_matches_follow_little_s_law() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o");
    let o = mmsim(&[
        "run",
        &scenario("smoke.toml"),
        "--set",
        "outcome.duration_sd=0s",
        "--set",
        "run.duration=6h",
        "--set",
        "run.warmup=1h",
        "--quiet",
        "--tables",
        "none",
        "--out",
        p(&out),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s = json(&out.join("summary.json"));
    let c = &s["concurrent_players"];
    let f = |v: &serde_json::Value| v.as_f64().unwrap();
    let little = f(&s["matches_per_hour"]) * 2.0 * 300.0 / 3600.0;
    assert!(
        (f(&c["playing_mean"]) - little).abs() < 0.02 * little,
        "{c} against {little}"
    );
    assert!((f(&c["mean"]) - f(&c["playing_mean"]) - f(&c["waiting_mean"])).abs() < 1e-9);
    assert!(
        f(&c["max"]) >= f(&c["mean"]) && f(&c["samples"]) > 250.0,
        "{c}"
    );
    let hours = s["by_hour"].as_array().unwrap();
    assert!(hours.len() >= 5, "{}", hours.len());
    for h in hours {
        assert!(
            f(&h["concurrent_max_players"]) >= f(&h["concurrent_mean_players"]),
            "{h}"
        );
        assert!(f(&h["concurrent_max_players"]) <= f(&c["max"]), "{h}");
    }
}
