//! One run from start to finish: build the parts a scenario names, simulate,
//! and summarise. The command line and sweeps both come through here.

use crate::{FromScenario, Scenario};
use mmsim_core::engine::{Config, Parts, Simulation};
use mmsim_core::metrics::{self, RowSink, RunMeta, RunView, Summary};
use mmsim_core::model::{Player, SimTime};
use serde::Serialize;
use std::time::Instant;

/// What one run leaves: the summary, what the plots draw, the final
/// players, and how fast it went (kept apart from the summary, which must
/// not vary). The rows went to the sink while the run went.
pub struct RunOutput {
    pub summary: Summary,
    pub view: RunView,
    pub players: Vec<Player>,
    /// With separate ladders: each ladder's view of the players at the
    /// end (`players` holds the first's ratings); empty otherwise.
    pub ladders: Vec<mmsim_core::engine::modes::LadderPlayers>,
    pub perf: Perf,
    /// With explain on: every ticket's story (`explain.jsonl`), by ticket id.
    pub explain: Option<Vec<metrics::explain::TicketStory>>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Perf {
    pub wall_s: f64,
    pub events: u64,
    pub events_per_s: f64,
    pub tickets: u64,
    pub tickets_per_s: f64,
    pub matches: u64,
    pub peak_rss_bytes: Option<u64>,
    /// With a trace: tickets that came due while a member was still queued
    /// or playing, and joined once all were free.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace_tickets_delayed: Option<u64>,
    /// With the `quality` or `ruleset` policy: seeds visited, searches
    /// (growths, for `ruleset`), and searches that found what the seed had
    /// (`policy::SearchWork`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub search: Option<mmsim_core::policy::SearchWork>,
}

/// Runs `scenario` with `seed`, handing every finished ticket and match to
/// `rows`. Fails only if the sink does (a table that could not be written).
pub fn run(
    scenario: &Scenario,
    seed: u64,
    progress: &mut dyn FnMut(SimTime, SimTime),
    rows: &mut dyn RowSink,
) -> anyhow::Result<RunOutput> {
    run_logging(scenario, seed, progress, rows, None)
}

/// `run`, telling `log` (when given) of every ticket as it joins: what
/// `mmsim trace` writes out.
pub fn run_logging(
    scenario: &Scenario,
    seed: u64,
    progress: &mut dyn FnMut(SimTime, SimTime),
    rows: &mut dyn RowSink,
    log: Option<&mut dyn mmsim_core::engine::TicketLog>,
) -> anyhow::Result<RunOutput> {
    let started = Instant::now();
    let parts = Parts::from_scenario(scenario);
    let rating = crate::to_engine::rating_config(scenario).build();
    let mut sim = Simulation::new(Config::from_scenario(scenario), seed, parts, rows);
    if let Some(log) = log {
        sim = sim.with_log(log);
    }
    let mut out = sim.run(progress);
    let explain = out.collector.explain().map(|e| e.take_stories());
    let final_corr =
        metrics::rating_skill_rank_corr(&out.players, |p| rating.current(&p.rating, out.end).value);
    let meta = RunMeta {
        scenario: &scenario.run.name,
        seed,
        policy: scenario.policy.name(),
        rating_system: scenario.rating.name(),
        duration_s: scenario.run.duration.secs(),
        warmup_s: scenario.run.warmup.secs(),
        arrivals_blocked: out.stats.arrivals_blocked,
    };
    let (summary, view) = out.collector.finish(&meta, &out.players, final_corr)?;
    let wall_s = started.elapsed().as_secs_f64();
    let perf = Perf {
        wall_s,
        events: out.stats.events,
        events_per_s: out.stats.events as f64 / wall_s.max(1e-9),
        tickets: out.stats.tickets,
        tickets_per_s: out.stats.tickets as f64 / wall_s.max(1e-9),
        matches: out.stats.matches,
        peak_rss_bytes: peak_rss_bytes(),
        trace_tickets_delayed: scenario
            .arrivals
            .trace
            .is_some()
            .then_some(out.stats.trace_tickets_delayed),
        search: out.stats.search,
    };
    Ok(RunOutput {
        summary,
        view,
        players: out.players,
        ladders: out.ladders,
        perf,
        explain,
    })
}

/// `run` keeping no rows: for sweeps, replications and tuning, which read
/// only summaries.
pub fn run_summary(
    scenario: &Scenario,
    seed: u64,
    progress: &mut dyn FnMut(SimTime, SimTime),
) -> RunOutput {
    run(scenario, seed, progress, &mut metrics::NoRows)
        .expect("a sink that keeps nothing cannot fail")
}

/// The process's peak resident memory, from Linux's /proc; `None` elsewhere.
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// A run whose rows stayed in memory: for tests and small tools that look at
/// single tickets and matches. `summary` is the summary as JSON, so a test can
/// address a metric by its name as a user would.
pub struct KeptRun {
    pub records: metrics::RunRecords,
    pub summary: serde_json::Value,
    pub output: RunOutput,
}

/// `run` keeping every row, in the order the run finished them.
pub fn run_keeping(scenario: &Scenario, seed: u64) -> KeptRun {
    let mut rows = metrics::KeepRows::default();
    let output =
        run(scenario, seed, &mut |_, _| {}, &mut rows).expect("keeping rows in memory cannot fail");
    let mut records = rows.0;
    records.queue = output.view.queue.clone();
    records.rating_moves = output.view.rating_moves.clone();
    KeptRun {
        records,
        summary: output.summary.to_value(),
        output,
    }
}

/// Smoke shortened to a quarter hour, and its text: a real run cheap enough
/// for the tests (here and in the crates above) that need a few whole
/// summaries.
#[doc(hidden)]
pub fn short_smoke() -> (String, Scenario) {
    let text = include_str!("../../../scenarios/smoke.toml")
        .replace("duration = \"2h\"", "duration = \"15m\"")
        .replace("warmup = \"10m\"", "warmup = \"1m\"");
    let scenario = crate::from_text(&text, std::path::Path::new("smoke.toml"), &[])
        .expect("smoke loads")
        .scenario;
    (text, scenario)
}
