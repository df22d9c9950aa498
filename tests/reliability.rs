//! Issue 13's reproducers against the real binary: closed pipes, provenance
//! of outputs, shards that do not belong together, and output folders.

use std::path::Path;
use std::process::{Command, Output, Stdio};

fn mmsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mmsim"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the binary runs")
}

fn scenario(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

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
    let cases: [&[&str]; 7] = [
        &["policies"],
        &["catalogue"],
        &["catalogue", "teams", "--markdown"],
        &["validate", &smoke],
        &["compare", p(&run), p(&run)],
        &["compare", p(&run), p(&run), "--json"],
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
    let o = mmsim(&["compare", p(&run), p(&run)]);
    assert!(o.status.success() && !o.stdout.is_empty(), "{}", stderr(&o));
}
