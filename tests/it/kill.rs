//! Issue 13's kill test: runs and sweeps of the real binary stopped at
//! seeded moments by SIGINT, SIGTERM and SIGKILL. The output folder must
//! always hold the previous complete output or the new complete one, never
//! a mix; the next run leaves no hidden leftovers; an interrupted sweep,
//! rerun, resumes and gives byte-identical tables.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::scenario;

fn p(path: &Path) -> &str {
    path.to_str().expect("temporary paths are UTF-8")
}

/// Every file under `dir` by relative path, with its bytes; wall-clock
/// figures (`perf.json`) only by name, as they differ between runs.
fn contents(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let e = e.unwrap();
            let path = e.path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let name = path
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                let bytes = if name.ends_with("perf.json") {
                    Vec::new()
                } else {
                    std::fs::read(&path).unwrap()
                };
                out.insert(name, bytes);
            }
        }
    }
    let mut out = BTreeMap::new();
    if dir.exists() {
        walk(dir, dir, &mut out);
    }
    out
}

/// Hidden names beside and inside the output folder: staging, lock,
/// previous output mid-swap, half-written files (not the output's own
/// marker, `.mmsim-output.json`, which every output holds).
fn hidden(out: &Path) -> Vec<String> {
    let mut v = Vec::new();
    for dir in [out.parent().unwrap(), out] {
        if let Ok(entries) = std::fs::read_dir(dir) {
            for e in entries {
                let name = e.unwrap().file_name().to_string_lossy().into_owned();
                if name.starts_with('.') && name != ".mmsim-output.json" {
                    v.push(name);
                }
            }
        }
    }
    v.sort();
    v
}

/// A seeded generator for the kill moments (splitmix64).
struct Moments(u64);
impl Moments {
    fn next_ms(&mut self, max_ms: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) % max_ms.max(1)
    }
}

const SIGNALS: [(i32, &str); 3] = [
    (libc::SIGINT, "SIGINT"),
    (libc::SIGTERM, "SIGTERM"),
    (libc::SIGKILL, "SIGKILL"),
];

/// Starts mmsim with `args`, sends `sig` after `after`, and returns how it
/// ended: `exit N`, `killed` or `finished` (ended before the signal).
fn interrupt(args: &[String], sig: i32, after: Duration) -> String {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mmsim"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while start.elapsed() < after {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "{args:?} failed on its own: {status}");
            return "finished".into();
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    // SAFETY: sends a signal to our own child, which has not been reaped.
    unsafe { libc::kill(child.id() as i32, sig) };
    let status = child.wait().unwrap();
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(0), _) => "finished".into(),
        (Some(c), _) => format!("exit {c}"),
        (None, Some(s)) => format!("killed by {s}"),
        _ => "?".into(),
    }
}

fn run_args(out: &Path, seed: u64) -> Vec<String> {
    [
        "run",
        &scenario("smoke.toml"),
        "--seed",
        &seed.to_string(),
        "--set",
        "run.duration=\"12h\"",
        "--quiet",
        "--out",
        p(out),
    ]
    .map(String::from)
    .to_vec()
}

fn complete(args: &[String]) -> Duration {
    let start = Instant::now();
    let o = Command::new(env!("CARGO_BIN_EXE_mmsim"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    start.elapsed()
}

/// Before `main` has installed its handler (process start-up), a signal
/// still kills by its default action; nothing has been written then.
const EARLY_MS: u64 = 30;

fn expected_exit(sig: i32) -> &'static str {
    match sig {
        libc::SIGINT => "exit 130",
        libc::SIGTERM => "exit 143",
        _ => "killed by 9",
    }
}

#[test]
fn killed_runs_leave_the_previous_or_the_new_output_never_a_mix() {
    let tmp = tempfile::tempdir().unwrap();
    let refs: Vec<PathBuf> = (0..2).map(|i| tmp.path().join(format!("ref{i}"))).collect();
    let mut wall = Duration::MAX;
    for (seed, dir) in refs.iter().enumerate() {
        wall = wall.min(complete(&run_args(dir, seed as u64 + 1)));
    }
    let expect: Vec<_> = refs.iter().map(|d| contents(d)).collect();
    assert_ne!(expect[0], expect[1]);
    let out = tmp.path().join("work").join("out");
    complete(&run_args(&out, 1));
    let mut state = 0; // the output now in `out`: seed 1
    let mut moments = Moments(13);
    // Up to the end of a run: the simulation, the write phase, the swap.
    let span = wall.as_millis() as u64;
    let mut table = Vec::new();
    for trial in 0..12 {
        let (sig, name) = SIGNALS[trial % 3];
        let new = 1 - state;
        let at = moments.next_ms(span);
        // What an earlier SIGKILL left: a run stopped before it takes the
        // folder (whose first step clears these) leaves them as they were.
        let before = hidden(&out);
        let ended = interrupt(
            &run_args(&out, new as u64 + 1),
            sig,
            Duration::from_millis(at),
        );
        let now = contents(&out);
        let found = if now == expect[state] {
            "previous run, whole"
        } else if now == expect[new] {
            state = new;
            "new run, whole"
        } else {
            panic!(
                "{name} at {at} ms ({ended}) left a mix: {:?}",
                now.keys().collect::<Vec<_>>()
            );
        };
        if ended != "finished" && !(at < EARLY_MS && ended == format!("killed by {sig}")) {
            assert_eq!(ended, expected_exit(sig), "{name} at {at} ms");
        }
        let left = hidden(&out);
        if sig != libc::SIGKILL {
            assert!(
                left.is_empty() || left == before,
                "{name} at {at} ms left {left:?} (before the run: {before:?})"
            );
        }
        table.push(format!(
            "run   | {name:7} | {at:5} ms of ~{} ms | {ended:10} | {found}; hidden: {left:?}",
            wall.as_millis()
        ));
    }
    // The next run clears whatever a SIGKILL left.
    complete(&run_args(&out, 1));
    assert_eq!(contents(&out), expect[0]);
    assert_eq!(hidden(&out), Vec::<String>::new());
    println!("kind  | signal  | moment               | ended      | folder");
    for row in table {
        println!("{row}");
    }
}

fn sweep_args(out: &Path, seeds: u32) -> Vec<String> {
    [
        "sweep",
        "scenarios/gamedev-1v1-sweep.toml",
        "--replications",
        &seeds.to_string(),
        "--set",
        "run.duration=\"12h\"",
        "--jobs",
        "2",
        "--quiet",
        "--out",
        p(out),
    ]
    .map(String::from)
    .to_vec()
}

#[test]
fn killed_sweeps_resume_to_byte_identical_tables() {
    let tmp = tempfile::tempdir().unwrap();
    let reference = tmp.path().join("ref");
    let wall = complete(&sweep_args(&reference, 2));
    let expect = contents(&reference);
    // The previous output each interrupted sweep replaces: one seed, not two.
    let previous = tmp.path().join("previous");
    complete(&sweep_args(&previous, 1));
    let before = contents(&previous);
    let mut moments = Moments(29);
    let span = wall.as_millis() as u64;
    let mut table = Vec::new();
    let mut resumed_any = false;
    for (trial, (sig, name)) in SIGNALS.iter().enumerate() {
        let out = tmp.path().join(format!("work{trial}")).join("sweep");
        complete(&sweep_args(&out, 1));
        // Killed somewhere in its middle: some runs done, some not.
        let at = span / 4 + moments.next_ms(span / 2);
        let ended = interrupt(&sweep_args(&out, 2), *sig, Duration::from_millis(at));
        let found = contents(&out);
        let state = if found == before {
            "previous sweep, whole"
        } else {
            assert_eq!(found, expect, "{name} at {at} ms left a mix");
            "new sweep, whole"
        };
        if ended != "finished" {
            assert_eq!(ended, expected_exit(*sig), "{name} at {at} ms");
        }
        let left = hidden(&out);
        // The rerun resumes from what the interrupted attempt finished.
        let o = Command::new(env!("CARGO_BIN_EXE_mmsim"))
            .args(sweep_args(&out, 2))
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert!(o.status.success(), "{err}");
        let reused = err
            .split("resumed: ")
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .unwrap_or("0")
            .to_owned();
        resumed_any |= reused != "0";
        assert_eq!(contents(&out), expect, "resumed after {name} at {at} ms");
        assert_eq!(hidden(&out), Vec::<String>::new());
        table.push(format!(
            "sweep | {name:7} | {at:5} ms of ~{span} ms | {ended:10} | {state}; hidden: {left:?}; rerun reused {reused} of 14 runs, tables byte-identical"
        ));
    }
    assert!(
        resumed_any,
        "no rerun resumed anything:\n{}",
        table.join("\n")
    );
    println!("kind  | signal  | moment               | ended      | folder");
    for row in table {
        println!("{row}");
    }
}

fn replication_args(out: &Path) -> Vec<String> {
    [
        "run",
        &scenario("smoke.toml"),
        "--replications",
        "8",
        "--set",
        "run.duration=\"6h\"",
        "--quiet",
        "--out",
        p(out),
    ]
    .map(String::from)
    .to_vec()
}

#[test]
fn an_interrupted_replication_resumes_to_the_same_summaries() {
    let tmp = tempfile::tempdir().unwrap();
    let reference = tmp.path().join("ref");
    let wall = complete(&replication_args(&reference));
    let expect = contents(&reference);
    let out = tmp.path().join("work").join("reps");
    let at = wall.as_millis() as u64 / 2;
    let ended = interrupt(
        &replication_args(&out),
        libc::SIGTERM,
        Duration::from_millis(at),
    );
    assert!(ended == "exit 143" || ended == "finished", "{ended}");
    if ended == "exit 143" {
        assert!(
            !out.exists(),
            "a first attempt stopped half-way leaves no folder"
        );
    }
    let o = Command::new(env!("CARGO_BIN_EXE_mmsim"))
        .args(replication_args(&out))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "{err}");
    assert_eq!(contents(&out), expect);
    assert_eq!(hidden(&out), Vec::<String>::new());
    println!(
        "replications | SIGTERM | {at} ms of ~{} ms | {ended} | rerun: {}",
        wall.as_millis(),
        err.trim()
    );
}
