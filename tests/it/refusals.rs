//! Every refusal names the key and its own line: each file of
//! tests/fuzz-corpus/refusals/ is a small scenario with one mistake and a
//! first line `# expect: KEY line N`; `mmsim validate` must exit 2 naming
//! `KEY` and `FILE:N`, never panic, and print nothing to stdout.

use crate::common::{mmsim, stderr};
use std::path::Path;

#[test]
fn every_refusal_in_the_corpus_names_its_key_and_line() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz-corpus/refusals");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    assert!(files.len() >= 50, "the corpus lost cases: {}", files.len());
    let mut misses = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let first = text.lines().next().unwrap();
        let words: Vec<&str> = first.split_whitespace().collect();
        let (key, line) = match words.as_slice() {
            ["#", "expect:", key, "line", n] => (*key, *n),
            _ => panic!("{}: first line must be `# expect: KEY line N`", f.display()),
        };
        let o = mmsim(&["validate", &f.to_string_lossy()]);
        let err = stderr(&o);
        let name = f.file_name().unwrap().to_string_lossy();
        let at_line = err.contains(&format!("{name}:{line}:"));
        if o.status.code() != Some(2) || !err.contains(key) || !at_line || !o.stdout.is_empty() {
            misses.push(format!(
                "{name}: exit {:?}, want `{key}` at line {line}: {}",
                o.status.code(),
                err.trim()
            ));
        }
        assert!(!err.contains("panicked"), "{name}: {err}");
    }
    assert!(
        misses.is_empty(),
        "{} of {}:\n{}",
        misses.len(),
        files.len(),
        misses.join("\n")
    );
}

#[test]
fn set_values_of_the_wrong_type_name_the_key_and_what_is_allowed() {
    let smoke = crate::common::scenario("smoke.toml");
    for (set, want) in [
        ("population.skill.max=lots", "expected a number"),
        ("run.duration=forever", "not a duration"),
        ("run.duration=true", "a duration such as"),
        ("arrivals.patience.after=5m", "after"),
        ("population.size=1000000000", "at most 100000000"),
        ("arrivals.rate_per_s=1e12", "at most 1000000"),
        ("run.duration=9999999999999999999999d", "at most 365d"),
    ] {
        let o = mmsim(&["validate", &smoke, "--set", set]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{set}: {err}");
        let key = set.split('=').next().unwrap();
        assert!(err.contains(key) && err.contains(want), "{set}: {err}");
    }
}

#[test]
fn accepted_but_wrong_inputs_are_refused() {
    let tmp = std::env::temp_dir().join(format!("mmsim-refusals-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    // A JSON array is valid JSON but no run's summary.
    let array = tmp.join("array.json");
    std::fs::write(&array, "[1, 2, 3]").unwrap();
    let o = mmsim(&[
        "compare",
        &array.to_string_lossy(),
        &array.to_string_lossy(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("not a summary.json"), "{}", stderr(&o));
    // Players without any attribute leave nothing to balance.
    let players = tmp.join("players.json");
    std::fs::write(
        &players,
        r#"{"teams": 2, "team_size": 2, "players": [{"name": "a"}, {"name": "b"}, {"name": "c"}, {"name": "d"}]}"#,
    )
    .unwrap();
    let o = mmsim(&["rebalance", &players.to_string_lossy()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("no player has an attribute"),
        "{}",
        stderr(&o)
    );
    // A file far larger than any scenario is refused before it is parsed.
    let o = mmsim(&["run", "/dev/zero"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("larger than"), "{}", stderr(&o));
    std::fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn a_full_disk_on_stdout_is_an_error_not_a_panic() {
    if !Path::new("/dev/full").exists() {
        return;
    }
    let smoke = crate::common::scenario("smoke.toml");
    for args in [
        vec!["validate", smoke.as_str()],
        vec!["policies"],
        vec!["catalogue"],
    ] {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_mmsim"))
            .args(&args)
            .stdout(std::fs::File::create("/dev/full").unwrap())
            .output()
            .unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("No space left on device") && !err.contains("panicked"),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn jobs_above_the_cores_are_capped_with_a_note() {
    let tmp = std::env::temp_dir().join(format!("mmsim-jobs-{}", std::process::id()));
    let o = mmsim(&[
        "sweep",
        &crate::common::scenario("gamedev-1v1-sweep.toml"),
        "--jobs",
        "1000000000",
        "--set",
        "run.duration=10m",
        "--set",
        "run.warmup=0s",
        "--set",
        "run.replications=1",
        "--set",
        "population.size=200",
        "--quiet",
        "--out",
        &tmp.to_string_lossy(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("cores available; using"),
        "{}",
        stderr(&o)
    );
    let _ = std::fs::remove_dir_all(&tmp);
}

/// Issue 31: `mmsim validate x.toml 2> /dev/full` panicked (exit 101): a
/// message to a full or closed standard error is lost, the exit code says
/// what happened.
#[cfg(target_os = "linux")]
#[test]
fn a_full_standard_error_or_output_is_no_panic() {
    let run = |args: &[&str], stdout_full: bool| {
        let full = || {
            std::fs::OpenOptions::new()
                .write(true)
                .open("/dev/full")
                .unwrap()
        };
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_mmsim"));
        c.args(args).current_dir(env!("CARGO_MANIFEST_DIR"));
        if stdout_full {
            c.stdout(full()).stderr(std::process::Stdio::null());
        } else {
            c.stderr(full()).stdout(std::process::Stdio::null());
        }
        c.status().unwrap().code()
    };
    assert_eq!(run(&["validate", "no/such.toml"], false), Some(2));
    assert_eq!(run(&["validate", "scenarios/smoke.toml"], false), Some(0));
    assert_eq!(run(&["validate", "scenarios/smoke.toml"], true), Some(2));
    assert_eq!(run(&["validate", "no/such.toml"], true), Some(2));
}

/// Issue 31: a scenario without `[population]` was told "`population.size`
/// must be at least 2, got 0", naming a key it never wrote. The missing
/// section is named, with what to write.
#[test]
fn a_missing_population_section_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(crate::common::scenario("smoke.toml")).unwrap();
    let start = text.find("[population]").unwrap();
    let end = text.find("[arrivals]").unwrap();
    let file = tmp.path().join("nopop.toml");
    std::fs::write(&file, format!("{}{}", &text[..start], &text[end..])).unwrap();
    let o = mmsim(&["validate", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("`population` is missing: add a [population] section with `size`"),
        "{err}"
    );
}

#[test]
fn a_negative_or_wordy_number_flag_names_the_flag_and_what_it_allows() {
    // clap's own parser took `-1` for an unknown flag ("to pass '-1' as a
    // value, use '-- -1'") and said "invalid digit found in string".
    let smoke = crate::common::scenario("smoke.toml");
    for (args, flag) in [
        (vec!["explain", "output", "--ticket", "-1"], "--ticket"),
        (vec!["explain", "output", "--ticket", "ten"], "--ticket"),
        (vec!["run", &smoke, "--seed", "-3"], "--seed"),
        (
            vec!["run", &smoke, "--replications", "-2"],
            "--replications",
        ),
        (
            vec![
                "tune",
                &smoke,
                "--param",
                "policy.base",
                "--range",
                "1:2",
                "--minimise",
                "wait_s.p90",
                "--jobs",
                "-1",
            ],
            "--jobs",
        ),
        (vec!["serve", &smoke, "--port", "-1"], "--port"),
        (vec!["serve", &smoke, "--seeds", "-1"], "--seeds"),
    ] {
        let o = mmsim(&args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(flag) && err.contains("is not a whole number from 0 to"),
            "{args:?}: {err}"
        );
        assert!(!err.contains("use '--"), "{args:?}: {err}");
    }
}
