//! One run from start to finish: build the parts a scenario names, simulate,
//! and summarise. The command line and sweeps both come through here.

use crate::engine::{Config, Parts, Simulation};
use crate::metrics::{self, RunMeta, RunRecords};
use crate::model::{Player, SimTime};
use crate::scenario::Scenario;
use serde::Serialize;
use std::time::Instant;

/// What one run leaves: the records, the final players, the summary, and
/// how fast it went (kept apart from the summary, which must not vary).
pub struct RunOutput {
    pub records: RunRecords,
    pub players: Vec<Player>,
    pub summary: serde_json::Value,
    pub perf: Perf,
}

#[derive(Clone, Debug, Serialize)]
pub struct Perf {
    pub wall_s: f64,
    pub events: u64,
    pub events_per_s: f64,
    pub tickets: usize,
    pub tickets_per_s: f64,
    pub matches: usize,
    pub peak_rss_bytes: Option<u64>,
}

pub fn run(
    scenario: &Scenario,
    seed: u64,
    progress: &mut dyn FnMut(SimTime, SimTime),
) -> RunOutput {
    let started = Instant::now();
    let parts = Parts::from_scenario(scenario);
    let rating = scenario.rating.build();
    let out = Simulation::new(Config::from_scenario(scenario), seed, parts).run(progress);
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
    let summary = metrics::summarize(&meta, &out.records, &out.players, final_corr);
    let wall_s = started.elapsed().as_secs_f64();
    let perf = Perf {
        wall_s,
        events: out.stats.events,
        events_per_s: out.stats.events as f64 / wall_s.max(1e-9),
        tickets: out.records.tickets.len(),
        tickets_per_s: out.records.tickets.len() as f64 / wall_s.max(1e-9),
        matches: out.records.matches.len(),
        peak_rss_bytes: peak_rss_bytes(),
    };
    RunOutput {
        records: out.records,
        players: out.players,
        summary,
        perf,
    }
}

/// The process's peak resident memory, from Linux's /proc; `None` elsewhere.
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}
