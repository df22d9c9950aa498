//! Trace replay through the real binary: `mmsim trace` writes a run's own
//! tickets, and a scenario that replays them under the run's own policy and
//! seed forms the same matches, row for row (the tables' data; the files'
//! provenance metadata names the other scenario). The shipped trace is what
//! `mmsim trace` writes for the run the preset names.

use crate::common::{mmsim, scenario, stderr};
use polars::prelude::*;
use std::path::Path;

fn table(path: &Path) -> DataFrame {
    let f = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    ParquetReader::new(f).finish().unwrap()
}

fn ok(args: &[&str]) {
    let o = mmsim(args);
    assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
}

/// Runs `preset` for `duration`, traces it, replays the trace with
/// `replay_toml` (whose `trace` key is filled in), and returns both runs'
/// matches and tickets tables.
fn run_and_replay(preset: &str, sets: &[&str], replay_toml: &str) -> [DataFrame; 4] {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let trace = tmp.path().join("t.csv");
    let mut args = vec!["run", preset, "--quiet", "--out", run.to_str().unwrap()];
    for s in sets {
        args.extend(["--set", s]);
    }
    ok(&args);
    ok(&[
        "trace",
        run.to_str().unwrap(),
        "--out",
        trace.to_str().unwrap(),
    ]);
    let replay_file = tmp.path().join("replay.toml");
    let text = replay_toml.replace("TRACE", &trace.to_string_lossy());
    std::fs::write(&replay_file, text).unwrap();
    let replay = tmp.path().join("replay");
    ok(&[
        "run",
        replay_file.to_str().unwrap(),
        "--quiet",
        "--out",
        replay.to_str().unwrap(),
    ]);
    [
        table(&run.join("matches.parquet")),
        table(&replay.join("matches.parquet")),
        table(&run.join("tickets.parquet")),
        table(&replay.join("tickets.parquet")),
    ]
}

fn assert_same_matches(m: &[DataFrame; 4]) {
    assert!(
        m[0].height() > 100,
        "too few matches to show anything: {}",
        m[0].height()
    );
    assert!(
        m[0].equals_missing(&m[1]),
        "the replay formed other matches:\n{}\n{}",
        m[0].head(Some(5)),
        m[1].head(Some(5))
    );
    // Same tickets too, but for the lead player's id: the replay numbers
    // players in order of first appearance.
    let strip = |d: &DataFrame| d.drop("lead_player_id").unwrap();
    assert!(strip(&m[2]).equals_missing(&strip(&m[3])));
}

#[test]
fn a_1v1_run_replayed_under_its_own_policy_forms_the_same_matches() {
    let preset = std::fs::read_to_string(scenario("trace-replay.toml")).unwrap();
    let replay = preset.replace("traces/small.csv", "TRACE");
    let m = run_and_replay(
        &scenario("smoke.toml"),
        &["run.duration=40m", "run.warmup=5m"],
        &replay,
    );
    assert_same_matches(&m);
    // Returns after matches are in the trace, and the replay keeps them.
    let requeues = |d: &DataFrame| d.column("requeue").unwrap().bool().unwrap().sum().unwrap();
    assert!(requeues(&m[3]) > 100);
    assert_eq!(requeues(&m[2]), requeues(&m[3]));
}

#[test]
fn a_team_run_with_parties_replayed_forms_the_same_matches() {
    let text = std::fs::read_to_string(scenario("ci/teams-3v3.toml")).unwrap();
    // The same scenario, its population and arrivals replaced by the trace.
    let doc: toml::Table = text.parse().unwrap();
    let mut replay = doc.clone();
    replay.remove("population");
    let mut arrivals = toml::Table::new();
    arrivals.insert("trace".into(), "TRACE".into());
    replay.insert("arrivals".into(), arrivals.into());
    let run = replay["run"].as_table().unwrap().clone();
    let mut run = run;
    run.insert("duration".into(), "40m".into());
    run.insert("warmup".into(), "5m".into());
    replay.insert("run".into(), run.into());
    let m = run_and_replay(
        &scenario("ci/teams-3v3.toml"),
        &["run.duration=40m", "run.warmup=5m"],
        &toml::to_string(&replay).unwrap(),
    );
    assert_same_matches(&m);
    let parties = m[3]
        .column("party_size")
        .unwrap()
        .as_materialized_series()
        .gt(1)
        .unwrap()
        .sum()
        .unwrap();
    assert!(parties > 50, "the run had {parties} party tickets");
}

#[test]
fn the_shipped_trace_is_what_mmsim_trace_writes_for_its_run() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    ok(&[
        "run",
        &scenario("smoke.toml"),
        "--quiet",
        "--tables",
        "none",
        "--set",
        "run.duration=40m",
        "--set",
        "run.warmup=5m",
        "--out",
        run.to_str().unwrap(),
    ]);
    ok(&["trace", run.to_str().unwrap()]);
    let written = std::fs::read_to_string(run.join("trace.csv")).unwrap();
    let shipped = std::fs::read_to_string(scenario("traces/small.csv")).unwrap();
    assert!(
        written == shipped,
        "regenerate scenarios/traces/small.csv as its preset says"
    );
}

#[test]
fn a_changed_run_folder_is_refused_not_traced_wrongly() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    ok(&[
        "run",
        &scenario("smoke.toml"),
        "--quiet",
        "--tables",
        "none",
        "--set",
        "run.duration=20m",
        "--out",
        run.to_str().unwrap(),
    ]);
    let toml = run.join("scenario.toml");
    let text = std::fs::read_to_string(&toml).unwrap();
    std::fs::write(&toml, text.replace("seed = 7", "seed = 8")).unwrap();
    let o = mmsim(&["trace", run.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("does not give the run's"),
        "{}",
        stderr(&o)
    );
    assert!(!run.join("trace.csv").exists());
}

#[test]
fn a_bad_trace_row_is_refused_with_its_line_and_column() {
    let tmp = tempfile::tempdir().unwrap();
    let csv = tmp.path().join("bad.csv");
    std::fs::write(
        &csv,
        "time_s,ticket,player,rating\n1,a,p,1500\n2,b,q,1500\n3,c,r,lots\n",
    )
    .unwrap();
    let preset = std::fs::read_to_string(scenario("trace-replay.toml")).unwrap();
    let file = tmp.path().join("s.toml");
    std::fs::write(&file, preset.replace("traces/small.csv", "bad.csv")).unwrap();
    let o = mmsim(&[
        "run",
        file.to_str().unwrap(),
        "--out",
        tmp.path().join("o").to_str().unwrap(),
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("`arrivals.trace`")
            && err.contains("line 4, column `rating`: expected a finite number, got \"lots\""),
        "{err}"
    );
    assert!(!tmp.path().join("o").exists());
}

#[test]
fn the_scenario_hash_follows_the_traces_content_not_its_name() {
    let preset = std::fs::read_to_string(scenario("trace-replay.toml")).unwrap();
    let hash = |rating: &str| {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(
            tmp.path().join("t.csv"),
            format!("time_s,ticket,player,rating\n1,a,p,{rating}\n2,b,q,1500\n"),
        )
        .unwrap();
        let file = tmp.path().join("s.toml");
        std::fs::write(&file, preset.replace("traces/small.csv", "t.csv")).unwrap();
        let o = mmsim(&["validate", file.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let out = String::from_utf8(o.stdout).unwrap();
        assert!(out.contains("2 tickets of 2 players"), "{out}");
        out.lines()
            .find_map(|l| l.strip_prefix("scenario_sha256 "))
            .unwrap()
            .to_owned()
    };
    assert_eq!(hash("1500"), hash("1500"));
    assert_ne!(hash("1500"), hash("1501"));
}

/// A regional role queue (three data centres, a latency rule, roles, a ready
/// check and backfill) traced to CSV and to Parquet: the CSV is the shipped
/// trace, and its preset replaying either file forms the run's matches.
#[test]
fn a_regional_role_queue_replays_from_csv_and_parquet_to_the_same_matches() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let source = scenario("ci/regions-roles-fresh.toml");
    ok(&["run", &source, "--quiet", "--out", run.to_str().unwrap()]);
    let csv = tmp.path().join("t.csv");
    let parquet = tmp.path().join("t.parquet");
    ok(&[
        "trace",
        run.to_str().unwrap(),
        "--out",
        csv.to_str().unwrap(),
    ]);
    ok(&[
        "trace",
        run.to_str().unwrap(),
        "--format",
        "parquet",
        "--out",
        parquet.to_str().unwrap(),
    ]);
    let written = std::fs::read_to_string(&csv).unwrap();
    assert!(
        written.starts_with("time_s,ticket,player,rating,true_skill,abandon_s,requeue,region,ping_ms_eu-west,ping_ms_us-east,ping_ms_ap-southeast,roles\n"),
        "{}",
        &written[..200]
    );
    assert!(
        written == std::fs::read_to_string(scenario("traces/regions-roles.csv")).unwrap(),
        "regenerate scenarios/traces/regions-roles.csv as scenarios/ci/regions-roles-fresh.toml says"
    );
    let preset = std::fs::read_to_string(scenario("trace-regions-roles.toml")).unwrap();
    let original = table(&run.join("matches.parquet"));
    let tickets = table(&run.join("tickets.parquet"));
    let strip = |d: &DataFrame| d.drop("lead_player_id").unwrap();
    for trace in [&csv, &parquet] {
        let file = tmp.path().join("replay.toml");
        let text = preset.replace("traces/regions-roles.csv", &trace.to_string_lossy());
        std::fs::write(&file, text).unwrap();
        let out = tmp.path().join("replay");
        ok(&[
            "run",
            file.to_str().unwrap(),
            "--quiet",
            "--out",
            out.to_str().unwrap(),
        ]);
        let m = table(&out.join("matches.parquet"));
        assert!(original.height() > 60, "{} matches", original.height());
        assert!(
            original.equals_missing(&m),
            "{}: the replay formed other matches:\n{}\n{}",
            trace.display(),
            original.head(Some(5)),
            m.head(Some(5))
        );
        let t = table(&out.join("tickets.parquet"));
        assert!(
            strip(&tickets).equals_missing(&strip(&t)),
            "{}",
            trace.display()
        );
    }
}

#[test]
fn a_trace_column_the_scenario_has_no_section_for_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("t.csv"),
        "time_s,ticket,player,rating,roles\n1,a,p,1500,tank\n2,b,q,1500,healer\n",
    )
    .unwrap();
    let preset = std::fs::read_to_string(scenario("trace-replay.toml")).unwrap();
    let file = tmp.path().join("s.toml");
    std::fs::write(&file, preset.replace("traces/small.csv", "t.csv")).unwrap();
    let o = mmsim(&[
        "run",
        file.to_str().unwrap(),
        "--out",
        tmp.path().join("o").to_str().unwrap(),
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("`arrivals.trace`")
            && err.contains("line 1, column `roles`: needs a [roles] section"),
        "{err}"
    );
    assert!(!tmp.path().join("o").exists());
}

/// Issue 31: the shipped trace with its rows reversed replayed to a rating
/// spread of 40.5 against 21.7 (a player's last row gave their starting
/// rating). Rows are read in time order, so the reversed file replays to
/// the same summary.
#[test]
fn a_trace_with_its_rows_reversed_replays_the_same() {
    let tmp = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(scenario("traces/small.csv")).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    let header = lines.remove(0);
    lines.reverse();
    std::fs::write(
        tmp.path().join("reversed.csv"),
        format!("{header}\n{}\n", lines.join("\n")),
    )
    .unwrap();
    let toml = std::fs::read_to_string(scenario("trace-replay.toml"))
        .unwrap()
        .replace("\"traces/small.csv\"", "\"reversed.csv\"");
    let reversed_toml = tmp.path().join("reversed.toml");
    std::fs::write(&reversed_toml, toml).unwrap();
    let summary = |toml: &str, out: &str| -> serde_json::Value {
        let out = tmp.path().join(out);
        ok(&[
            "run",
            toml,
            "--tables",
            "none",
            "--quiet",
            "--out",
            out.to_str().unwrap(),
        ]);
        let mut v: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
        // The scenario's hash follows the trace's bytes, which differ.
        v.as_object_mut().unwrap().remove("provenance");
        v
    };
    let sorted = summary(&scenario("trace-replay.toml"), "sorted");
    let reversed = summary(reversed_toml.to_str().unwrap(), "reversed");
    assert!(sorted["matches"].as_u64().unwrap() > 100, "{sorted}");
    assert_eq!(sorted, reversed);
}

/// Issue 31: a trace replayed into a role queue accepted parties whose
/// roles can never fill a team (two damage-only players where a team has
/// one damage slot); they waited out their patience, inflating abandons,
/// and `arrivals_blocked` stayed 0. They are turned away on arrival and
/// counted there, as drawn parties are.
#[test]
fn a_traced_party_no_team_can_take_is_turned_away_and_counted() {
    let tmp = tempfile::tempdir().unwrap();
    let mut csv = String::from("time_s,ticket,player,rating,abandon_s,roles\n");
    let roles = ["tank", "healer", "damage"];
    for k in 0..60 {
        let role = roles[k % 3];
        csv.push_str(&format!("{},s{k},p{k},1500,600,{role}\n", 1 + k));
    }
    // Two damage-only players as one party: no 1-1-1 team can take both.
    csv.push_str("30.5,bad,q1,1500,600,damage\n30.5,bad,q2,1500,600,damage\n");
    std::fs::write(tmp.path().join("t.csv"), csv).unwrap();
    let toml = r#"
[run]
name = "blocked"
seed = 1
duration = "30m"
warmup = "0s"
[arrivals]
trace = "t.csv"
[match]
teams = 2
team_size = 3
[roles]
names = ["tank", "healer", "damage"]
shares = [0.34, 0.33, 0.33]
composition = { tank = 1, healer = 1, damage = 1 }
[policy]
kind = "widening"
base = 100
rate_per_s = 5
max = 400
[rating]
system = "elo"
[outcome]
model = "logistic"
"#;
    let file = tmp.path().join("s.toml");
    std::fs::write(&file, toml).unwrap();
    let out = tmp.path().join("out");
    ok(&[
        "run",
        file.to_str().unwrap(),
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    let s: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(s["arrivals_blocked"], 1, "{s}");
    assert_eq!(s["tickets"], 60, "{s}");
    let tickets = table(&out.join("tickets.parquet"));
    assert_eq!(tickets.height(), 60);
}
