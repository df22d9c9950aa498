//! Memory that grows with the players and the live pool, not with the run:
//! the real binary plays the bench 1v1 queue for 1M and then 10M tickets,
//! with every row table written, and the longer run's peak resident memory
//! stays within 1.3 times the shorter one's.

use std::path::Path;
use std::process::Command;

/// Tickets and peak resident bytes of one run, from its `perf.json`.
fn run(duration: &str, dir: &Path) -> (u64, u64) {
    let scenario = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/bench-1v1.toml");
    let out = Command::new(env!("CARGO_BIN_EXE_mmsim"))
        .arg("run")
        .arg(&scenario)
        .args(["--set", &format!("run.duration={duration}")])
        .arg("--out")
        .arg(dir)
        .arg("--quiet")
        .output()
        .expect("the binary runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let perf: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("perf.json")).unwrap()).unwrap();
    // The tables really were written, row by row.
    assert!(
        std::fs::metadata(dir.join("tickets.parquet"))
            .unwrap()
            .len()
            > 1_000_000
    );
    (
        perf["tickets"].as_u64().unwrap(),
        perf["peak_rss_bytes"]
            .as_u64()
            .expect("peak memory is read from /proc on Linux"),
    )
}

#[test]
fn ten_times_the_tickets_costs_less_than_a_third_more_memory() {
    let tmp = tempfile::tempdir().unwrap();
    let (small_tickets, small_rss) = run("16h", &tmp.path().join("small"));
    let (big_tickets, big_rss) = run("100h", &tmp.path().join("big"));
    assert!(small_tickets >= 1_000_000, "{small_tickets}");
    assert!(big_tickets >= 10_000_000, "{big_tickets}");
    let ratio = big_rss as f64 / small_rss as f64;
    assert!(
        ratio <= 1.3,
        "{big_tickets} tickets peaked at {big_rss} bytes, {small_tickets} at {small_rss}: {ratio:.2}x"
    );
}
