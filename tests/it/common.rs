//! Helpers the integration tests share: the real binary, run from the
//! repository's root, and the scenario files beside it.

use std::path::Path;
use std::process::{Command, Output};

/// Runs the built `mmsim` with `args` from the repository's root.
pub fn mmsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mmsim"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the binary runs")
}

/// The path of `scenarios/NAME`.
pub fn scenario(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A short run of `scenarios/NAME` into `dir` (40 minutes, 5 of warm-up,
/// summaries and plots but no tables), with extra arguments; panics with
/// its stderr if it fails.
pub fn short_run(name: &str, dir: &Path, extra: &[&str]) {
    let file = scenario(name);
    let out = dir.to_string_lossy();
    let mut args = vec![
        "run",
        file.as_str(),
        "--out",
        &out,
        "--quiet",
        "--tables",
        "none",
        "--set",
        "run.duration=\"40m\"",
        "--set",
        "run.warmup=\"5m\"",
    ];
    args.extend_from_slice(extra);
    let o = mmsim(&args);
    assert!(o.status.success(), "{name}: {}", stderr(&o));
}
