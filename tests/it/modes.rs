//! Game modes over one population (`[modes]`), through the real binary on
//! the shipped preset, shortened: every ticket is counted in one mode, the
//! mode columns agree with the summary's figures, the duel holds only solo
//! tickets, multi-queued tickets are matched in both modes of their set, and
//! a run without the section has no `modes` figures or columns; the Dota
//! preset shows each of its ladders and ranked's refusals.

use crate::common::{mmsim, scenario, stderr};
use polars::prelude::*;
use serde_json::Value;
use std::path::Path;

fn table(path: &Path) -> DataFrame {
    let f = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    ParquetReader::new(f).finish().unwrap()
}

fn run(out: &Path, sets: &[&str]) -> Value {
    let out_s = out.to_string_lossy().into_owned();
    let preset = scenario("modes-ranked-casual.toml");
    let mut args = vec![
        "run",
        preset.as_str(),
        "--out",
        out_s.as_str(),
        "--quiet",
        // Short: CI time matters; 40 minutes after warm-up still gives
        // over a thousand tickets.
        "--set",
        "run.duration=70m",
        "--set",
        "run.warmup=30m",
    ];
    for s in sets {
        args.push("--set");
        args.push(*s);
    }
    let o = mmsim(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap()
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("{v} is not a count"))
}

#[test]
fn the_preset_counts_each_ticket_in_one_mode_and_its_columns_agree() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("modes");
    let s = run(&out, &[]);
    let modes = &s["modes"];
    let by_mode = modes["by_mode"].as_array().expect("a modes block");
    let names: Vec<&str> = by_mode
        .iter()
        .map(|m| m["mode"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["ranked", "casual", "duel"]);
    // Each ticket after warm-up is in exactly one mode, each match too.
    let tickets: u64 = by_mode.iter().map(|m| u(&m["tickets"])).sum();
    let matches: u64 = by_mode.iter().map(|m| u(&m["matches"])).sum();
    assert_eq!(tickets, u(&s["tickets"]));
    assert_eq!(matches, u(&s["matches"]));
    assert!(tickets > 1000, "too few tickets to tell: {tickets}");
    for m in by_mode {
        assert!(u(&m["matches"]) > 20, "{m}");
    }
    // Multi-queued tickets were matched in both modes of their set, never
    // in the duel, which is not in it.
    let multi = &modes["multi_queued"];
    assert!(u(&multi["matched"]) > 100, "{multi}");
    let share = |i: usize| by_mode[i]["multi_queued_matched"].as_u64().unwrap();
    assert!(share(0) > 0 && share(1) > 0, "{modes}");
    assert_eq!(share(2), 0);
    assert_eq!(share(0) + share(1), u(&multi["matched"]));

    // The tables: a mode per ticket and per match, the same counts.
    let t = table(&out.join("tickets.parquet"));
    let m = table(&out.join("matches.parquet"));
    let t_mode = t.column("mode").unwrap().str().unwrap();
    let warm = t.column("in_warmup").unwrap().bool().unwrap();
    let size = t.column("party_size").unwrap().u32().unwrap();
    let multi_col = t.column("multi_queued").unwrap().bool().unwrap();
    for (i, name) in names.iter().enumerate() {
        let n = (0..t.height())
            .filter(|&r| warm.get(r) == Some(false) && t_mode.get(r) == Some(*name))
            .count() as u64;
        assert_eq!(n, u(&by_mode[i]["tickets"]), "{name}");
    }
    // The duel's teams are one player: no party ever waited or played there.
    for r in 0..t.height() {
        if t_mode.get(r) == Some("duel") {
            assert_eq!(size.get(r), Some(1), "row {r}");
            assert_eq!(multi_col.get(r), Some(false), "row {r}");
        }
    }
    let m_mode = m.column("mode").unwrap().str().unwrap();
    let team_size = m.column("team_size").unwrap().u32().unwrap();
    for r in 0..m.height() {
        let want = if m_mode.get(r) == Some("duel") { 1 } else { 5 };
        assert_eq!(team_size.get(r), Some(want), "match row {r}");
    }
    assert!(out.join("plots/wait_by_mode.png").exists());
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("<h2>Game modes</h2>") && html.contains("<td>duel</td>"));
}

#[test]
fn without_the_section_there_are_no_mode_figures_or_columns() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("smoke");
    let smoke = scenario("smoke.toml");
    let out_s = out.to_string_lossy().into_owned();
    let o = mmsim(&["run", smoke.as_str(), "--out", out_s.as_str(), "--quiet"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert!(s.get("modes").is_none());
    let t = table(&out.join("tickets.parquet"));
    assert!(t.column("mode").is_err());
    assert!(!out.join("plots/wait_by_mode.png").exists());
}

/// The Dota preset's ranked and normal ladders through the binary: each
/// ladder in the summary, the report and the players table (whose own
/// `rating` is the first ladder's), and ranked's refusals.
#[test]
fn the_dota_preset_shows_each_ladder_and_ranked_refusals() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("dota");
    let out_s = out.to_string_lossy().into_owned();
    let preset = scenario("dota2-5v5.toml");
    let o = mmsim(&[
        "run",
        preset.as_str(),
        "--out",
        out_s.as_str(),
        "--quiet",
        "--set",
        "run.duration=3h",
        "--set",
        "run.warmup=1h",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let modes = &s["modes"];
    assert!(u(&modes["by_mode"][0]["refused"]) > 100, "{modes}");
    let ladders = modes["ladders"].as_array().expect("ladders");
    let names: Vec<&str> = ladders
        .iter()
        .map(|l| l["ladder"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["ranked", "normal"]);
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("<h3>Ladders</h3>") && html.contains("<td>normal</td>"));
    let p = table(&out.join("players.parquet"));
    let played = |l: &str| -> u64 {
        let c = p.column(&format!("ladder_{l}_games")).unwrap();
        let c = c.u32().unwrap();
        (0..c.len()).filter_map(|i| c.get(i)).map(u64::from).sum()
    };
    // Each ladder's games are its matches' players (ten a match).
    for (i, l) in names.iter().enumerate() {
        assert!(played(l) > 0, "{l}");
        assert_eq!(played(l) % 10, 0, "{l}");
        assert!(u(&ladders[i]["players"]) > 0, "{l}");
    }
    let first = p.column("rating").unwrap();
    assert_eq!(
        first,
        &p.column("ladder_ranked_rating")
            .unwrap()
            .clone()
            .with_name("rating".into())
    );
    let v = mmsim(&["validate", preset.as_str()]);
    let text = String::from_utf8_lossy(&v.stdout);
    assert!(
        text.contains("ladders: ranked [ranked], normal [normal]")
            && text.contains("unlocks: ranked after 150 games"),
        "{text}"
    );
}
