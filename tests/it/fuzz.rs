//! Fuzzing the real binary: scenario text mutated line by line, and `--set`
//! values of every kind, must end in exit 0 or 2: no panic, no abort, no
//! hang, no output folder when refused, and memory bounded (each child runs
//! under a 4 GB address-space limit). `FUZZ_CASES` sets the case count (CI
//! runs the default, a few dozen; `FUZZ_CASES=2000 cargo test --release
//! --test it fuzz` for a long session). Inputs that once failed live in
//! tests/fuzz-corpus/ and are replayed by `the_corpus_replays_cleanly`.

use proptest::prelude::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const SMOKE: &str = include_str!("../../scenarios/smoke.toml");
const LIMIT_AS_BYTES: u64 = 4 << 30;
const TIMEOUT: Duration = Duration::from_secs(60);

fn cases() -> u32 {
    std::env::var("FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(40)
}

/// Values a designer (or a cat on the keyboard) might type.
const VALUES: &[&str] = &[
    "0",
    "-1",
    "1",
    "2",
    "1.5",
    "-0.0",
    "1e308",
    "-1e308",
    "nan",
    "inf",
    "-inf",
    "18446744073709551615",
    "9223372036854775807",
    "-9223372036854775808",
    "4294967296",
    "1000000000",
    "\"\"",
    "\"x\"",
    "\"90s\"",
    "\"0s\"",
    "\"1h30m\"",
    "\"-5s\"",
    "\"9999999999999999999999d\"",
    "\"1e9d\"",
    "\"10 parsecs\"",
    "\"..\"",
    "\"a/b\"",
    "true",
    "false",
    "[]",
    "[1]",
    "[0.5, \"x\"]",
    "[[0.1, 1000], [0.5, 900]]",
    "{}",
    "{ dist = \"never\" }",
    "{ dist = \"never\", after = \"5m\" }",
    "{ dist = \"dota-mmr\" }",
    "{ dist = \"fixed\", after = \"0s\" }",
    "{ dist = \"normal\", mean = 1500, sd = 0 }",
    "1979-05-27",
    "\"\\u0000\"",
    "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24]",
];

/// Keys of the schema, including ones smoke.toml leaves out.
const KEYS: &[&str] = &[
    "run.name",
    "run.seed",
    "run.duration",
    "run.warmup",
    "run.replications",
    "population.size",
    "population.skill",
    "population.skill.mean",
    "population.skill.sd",
    "population.skill.max",
    "population.initial_rating",
    "population.tiers",
    "population.extra_language_prob",
    "arrivals.rate_per_s",
    "arrivals.daily_profile",
    "arrivals.party_sizes",
    "arrivals.patience",
    "arrivals.patience.mean",
    "arrivals.requeue_prob",
    "arrivals.think_time",
    "match.teams",
    "match.team_size",
    "match.lobby",
    "policy.kind",
    "policy.base",
    "policy.max",
    "policy.rate_per_s",
    "teams.method",
    "rating.system",
    "rating.k",
    "outcome.model",
    "outcome.duration",
    "outcome.gold",
    "metrics.sample_interval",
    "metrics.corr_points",
    "nonsense.key",
];

#[derive(Clone, Debug)]
enum Edit {
    /// Replace the value of the n-th `key = value` line.
    Value(usize, &'static str),
    DeleteLine(usize),
    DuplicateLine(usize),
    /// Cut the file at this fraction of its length.
    Truncate(f64),
    /// Put a byte at this fraction of the file.
    Byte(f64, u8),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        4 => (0usize..64, prop::sample::select(VALUES)).prop_map(|(n, v)| Edit::Value(n, v)),
        1 => (0usize..64).prop_map(Edit::DeleteLine),
        1 => (0usize..64).prop_map(Edit::DuplicateLine),
        1 => (0.0..1.0f64).prop_map(Edit::Truncate),
        1 => (0.0..1.0f64, any::<u8>()).prop_map(|(at, b)| Edit::Byte(at, b)),
    ]
}

fn apply(text: &str, edits: &[Edit]) -> Vec<u8> {
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let mut bytes = None;
    for e in edits {
        let values: Vec<usize> = (0..lines.len())
            .filter(|&i| lines[i].contains(" = ") && !lines[i].starts_with('#'))
            .collect();
        match *e {
            Edit::Value(n, v) if !values.is_empty() => {
                let i = values[n % values.len()];
                let key = lines[i].split(" = ").next().unwrap().to_owned();
                lines[i] = format!("{key} = {v}");
            }
            Edit::DeleteLine(n) if !lines.is_empty() => {
                lines.remove(n % lines.len());
            }
            Edit::DuplicateLine(n) if !lines.is_empty() => {
                let i = n % lines.len();
                lines.insert(i, lines[i].clone());
            }
            Edit::Truncate(at) => {
                let mut b = lines.join("\n").into_bytes();
                b.truncate((b.len() as f64 * at) as usize);
                bytes = Some(b);
            }
            Edit::Byte(at, byte) => {
                let mut b = bytes
                    .take()
                    .unwrap_or_else(|| lines.join("\n").into_bytes());
                let i = (b.len() as f64 * at) as usize;
                b.insert(i.min(b.len()), byte);
                bytes = Some(b);
            }
            _ => {}
        }
        if let Some(b) = &bytes {
            lines = String::from_utf8_lossy(b)
                .lines()
                .map(str::to_owned)
                .collect();
        }
    }
    bytes.unwrap_or_else(|| lines.join("\n").into_bytes())
}

/// Runs the binary under the memory limit and the timeout.
fn run(args: &[&str]) -> (Option<i32>, String, String, Duration) {
    use std::os::unix::process::CommandExt;
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mmsim"));
    cmd.args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: setrlimit is async-signal-safe; nothing else runs in the child.
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: LIMIT_AS_BYTES,
                rlim_max: LIMIT_AS_BYTES,
            };
            libc::setrlimit(libc::RLIMIT_AS, &lim);
            Ok(())
        });
    }
    let start = Instant::now();
    let mut child = cmd.spawn().expect("the binary starts");
    loop {
        if let Some(_status) = child.try_wait().unwrap() {
            break;
        }
        if start.elapsed() > TIMEOUT {
            let _ = child.kill();
            let o = child.wait_with_output().unwrap();
            return (
                None,
                out(&o.stdout),
                format!("HANG after {TIMEOUT:?}: {}", out(&o.stderr)),
                start.elapsed(),
            );
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let o: Output = child.wait_with_output().unwrap();
    (
        o.status.code(),
        out(&o.stdout),
        out(&o.stderr),
        start.elapsed(),
    )
}

fn out(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mmsim-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// The invariant for one scenario file: validate ends 0 or 2; when it
/// accepts a scenario cheap enough to run, run ends 0 or 2, and a refusal
/// leaves no output folder.
fn check_file(path: &Path, extra: &[String]) -> Result<(), String> {
    let p = path.to_string_lossy().into_owned();
    let mut args = vec!["validate", p.as_str()];
    for s in extra {
        args.extend(["--set", s.as_str()]);
    }
    let (code, stdout, stderr, _) = run(&args);
    if !matches!(code, Some(0) | Some(2)) || stderr.contains("panicked") {
        return Err(format!("validate exit {code:?}: {stderr}"));
    }
    if code != Some(0) {
        return Ok(());
    }
    // Run only what the budget calls small: the fuzz is about inputs, not load.
    let cheap = stdout.lines().any(|l| {
        l.starts_with("budget:")
            && l.split("at least ")
                .nth(1)
                .and_then(|r| r.split(' ').next())
                .and_then(|s| s.parse::<f64>().ok())
                .is_some_and(|s| s <= 1.0)
    }) && stdout.lines().any(|l| {
        l.split(", ")
            .find(|w| w.ends_with(" players"))
            .and_then(|w| w.trim_end_matches(" players").parse::<u64>().ok())
            .is_some_and(|n| n <= 200_000)
    });
    if !cheap {
        return Ok(());
    }
    // One folder per check: the three tests run on parallel threads, and a
    // shared folder would meet another test's run holding its lock.
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = scratch(&format!("out-{n}"));
    let _ = std::fs::remove_dir_all(&dir);
    let d = dir.to_string_lossy().into_owned();
    let mut args = vec![
        "run",
        p.as_str(),
        "--quiet",
        "--tables",
        "none",
        "--out",
        d.as_str(),
    ];
    for s in extra {
        args.extend(["--set", s.as_str()]);
    }
    let (code, _, stderr, took) = run(&args);
    if !matches!(code, Some(0) | Some(2)) || stderr.contains("panicked") {
        return Err(format!("run exit {code:?} after {took:?}: {stderr}"));
    }
    if code == Some(2) && dir.join("summary.json").exists() {
        return Err(format!("run refused but wrote a summary: {stderr}"));
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

/// Short runs: the fuzz varies inputs, so each accepted case simulates
/// minutes, not hours.
fn short(text: &str) -> String {
    text.replace("duration = \"2h\"", "duration = \"20m\"")
        .replace("warmup = \"10m\"", "warmup = \"0s\"")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn mutated_scenarios_end_in_0_or_2(edits in prop::collection::vec(edit(), 1..4)) {
        let bytes = apply(&short(SMOKE), &edits);
        let path = scratch("mutated.toml");
        std::fs::write(&path, &bytes).unwrap();
        if let Err(e) = check_file(&path, &[]) {
            let keep = scratch("failing.toml");
            std::fs::write(&keep, &bytes).unwrap();
            prop_assert!(false, "{e}\n(input kept at {})", keep.display());
        }
    }

    #[test]
    fn set_values_end_in_0_or_2(
        sets in prop::collection::vec((prop::sample::select(KEYS), prop::sample::select(VALUES)), 1..3)
    ) {
        let path = scratch("short.toml");
        std::fs::write(&path, short(SMOKE)).unwrap();
        let extra: Vec<String> = sets.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let r = check_file(&path, &extra);
        prop_assert!(r.is_ok(), "--set {:?}: {}", extra, r.unwrap_err());
    }
}

/// Every committed input (the refusals and the fuzz's own finds) replays
/// to exit 0 or 2 without a panic.
#[test]
fn the_corpus_replays_cleanly() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz-corpus");
    let mut files = Vec::new();
    for dir in [root.clone(), root.join("refusals")] {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|e| e == "toml") {
                files.push(p);
            }
        }
    }
    files.sort();
    assert!(!files.is_empty());
    for f in &files {
        if let Err(e) = check_file(f, &[]) {
            panic!("{}: {e}", f.display());
        }
    }
}
