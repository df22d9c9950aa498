//! The runs behind the page: the baseline and the setting being tried, each
//! on the same seeds (common random numbers, so each seed's difference
//! measures the setting), on a fixed number of worker threads, seed by seed
//! so paired answers arrive as each seed finishes. A new setting cancels the
//! runs nobody wants any more: a generation counter is read between seeds,
//! and inside a run at the engine's progress calls (every 64k events), where
//! a stale run unwinds out of the simulation (see `Cancelled`).

use crate::scenario::LoadedScenario;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

/// The metrics the page shows and the comparison keeps per seed.
pub const SHOWN: [&str; 6] = [
    "wait_s.p50",
    "wait_s.p90",
    "abandon_rate",
    "spread_rating.mean",
    "win_prob_gap.mean",
    "matches_per_hour",
];

/// Most settings one server keeps (each a few kB per seed): past it, a new
/// setting is refused rather than memory growing without end.
pub const MAX_SETTINGS: usize = 2000;

/// One setting tried: the served scenario with these overrides.
pub struct Setting {
    /// The `--set` arguments, in key order; empty for the served file.
    pub sets: Vec<String>,
    /// The page's values that made it, for a page opened later.
    pub values: Map<String, Value>,
    pub loaded: Arc<LoadedScenario>,
}

/// What one seed of one setting gave.
#[derive(Clone, Debug)]
pub enum Outcome {
    Done(SeedResult),
    /// The run could not finish (a bug in a plug-in): said on the page,
    /// the server goes on.
    Failed(String),
}

#[derive(Clone, Debug)]
pub struct SeedResult {
    /// The compared metrics, as `summary.json` nests them.
    pub summary: Value,
    /// The matched waits at 201 quantiles, for the CDF.
    pub quantiles: Vec<f64>,
    pub wall_s: f64,
}

pub struct Shared {
    pub settings: Vec<Setting>,
    pub results: BTreeMap<(usize, u64), Outcome>,
    running: BTreeSet<(usize, u64)>,
    pub baseline: usize,
    pub current: usize,
    /// When the current setting was asked for, and when its first and last
    /// seeds came in: the page's latency figures.
    pub asked_at: std::time::Instant,
    pub first_answer_s: Option<f64>,
    pub full_answer_s: Option<f64>,
}

pub struct Runs {
    pub seeds: Vec<u64>,
    state: Mutex<Shared>,
    /// Told when work is added or a seed finishes: workers and long polls wait on it.
    changed: Condvar,
    generation: AtomicU64,
}

/// The payload a stale run unwinds with. `resume_unwind` runs no panic
/// hook, so nothing is printed; the worker catches it and drops the run.
/// Everything the run owned is dropped on the way out, and it shares no
/// state with anything but the counters it reads.
struct Cancelled;

impl Runs {
    pub fn new(base: LoadedScenario, seeds: Vec<u64>) -> Arc<Runs> {
        Arc::new(Runs {
            seeds,
            state: Mutex::new(Shared {
                settings: vec![Setting {
                    sets: Vec::new(),
                    values: Map::new(),
                    loaded: Arc::new(base),
                }],
                results: BTreeMap::new(),
                running: BTreeSet::new(),
                baseline: 0,
                current: 0,
                asked_at: std::time::Instant::now(),
                first_answer_s: None,
                full_answer_s: None,
            }),
            changed: Condvar::new(),
            generation: AtomicU64::new(0),
        })
    }

    /// The state; a worker that panicked while holding it left nothing
    /// half-changed that matters more than serving on.
    pub fn lock(&self) -> MutexGuard<'_, Shared> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    /// Starts `worker_count` workers for the life of the process.
    pub fn start(self: &Arc<Self>, worker_count: usize) {
        for _ in 0..worker_count {
            let me = Arc::clone(self);
            std::thread::spawn(move || me.work());
        }
    }

    /// Makes `sets` the current setting (an earlier identical one keeps its
    /// finished seeds) and returns its index, or `None` at `MAX_SETTINGS`.
    pub fn try_setting(
        &self,
        sets: Vec<String>,
        values: Map<String, Value>,
        loaded: LoadedScenario,
    ) -> Option<usize> {
        let mut st = self.lock();
        let id = match st.settings.iter().position(|s| s.sets == sets) {
            Some(i) => i,
            None if st.settings.len() >= MAX_SETTINGS => return None,
            None => {
                st.settings.push(Setting {
                    sets,
                    values,
                    loaded: Arc::new(loaded),
                });
                st.settings.len() - 1
            }
        };
        st.current = id;
        st.asked_at = std::time::Instant::now();
        st.first_answer_s = None;
        st.full_answer_s = None;
        self.note_progress(&mut st);
        self.generation.fetch_add(1, Ordering::SeqCst);
        drop(st);
        self.changed.notify_all();
        Some(id)
    }

    /// The current setting becomes the baseline.
    pub fn pin(&self) -> usize {
        let mut st = self.lock();
        st.baseline = st.current;
        self.generation.fetch_add(1, Ordering::SeqCst);
        drop(st);
        self.changed.notify_all();
        self.lock().baseline
    }

    /// Seeds of `setting` with an outcome.
    pub fn done(&self, st: &Shared, setting: usize) -> usize {
        self.seeds
            .iter()
            .filter(|s| st.results.contains_key(&(setting, **s)))
            .count()
    }

    pub fn complete(&self, st: &Shared) -> bool {
        self.done(st, st.baseline) == self.seeds.len()
            && self.done(st, st.current) == self.seeds.len()
    }

    /// Waits until the answer is complete, at most `timeout`.
    pub fn wait_complete(&self, timeout: std::time::Duration) {
        let until = std::time::Instant::now() + timeout;
        let mut st = self.lock();
        while !self.complete(&st) {
            let now = std::time::Instant::now();
            if now >= until {
                return;
            }
            st = self
                .changed
                .wait_timeout(st, until - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// Records when the current setting's first pair and whole answer came in.
    fn note_progress(&self, st: &mut Shared) {
        let paired = self
            .seeds
            .iter()
            .filter(|s| {
                st.results.contains_key(&(st.baseline, **s))
                    && st.results.contains_key(&(st.current, **s))
            })
            .count();
        let elapsed = st.asked_at.elapsed().as_secs_f64();
        if paired > 0 && st.first_answer_s.is_none() {
            st.first_answer_s = Some(elapsed);
        }
        if paired == self.seeds.len() && st.full_answer_s.is_none() {
            st.full_answer_s = Some(elapsed);
        }
    }

    /// The next run wanted: seed by seed, the baseline's before the
    /// current's, so every finished seed completes a pair.
    fn next_job(&self, st: &Shared) -> Option<(usize, u64)> {
        for &seed in &self.seeds {
            for setting in [st.baseline, st.current] {
                let job = (setting, seed);
                if !st.results.contains_key(&job) && !st.running.contains(&job) {
                    return Some(job);
                }
            }
        }
        None
    }

    fn wanted(st: &Shared, setting: usize) -> bool {
        setting == st.baseline || setting == st.current
    }

    fn work(self: Arc<Self>) {
        loop {
            let (job, scenario, generation) = {
                let mut st = self.lock();
                loop {
                    if let Some(job) = self.next_job(&st) {
                        st.running.insert(job);
                        let scenario = Arc::clone(&st.settings[job.0].loaded);
                        break (job, scenario, self.generation());
                    }
                    st = self.changed.wait(st).unwrap_or_else(|p| p.into_inner());
                }
            };
            let outcome = self.run_one(&scenario, job, generation);
            let mut st = self.lock();
            st.running.remove(&job);
            if let Some(outcome) = outcome {
                st.results.insert(job, outcome);
                self.note_progress(&mut st);
            }
            drop(st);
            self.changed.notify_all();
        }
    }

    /// One seed of one setting; `None` when it was cancelled.
    fn run_one(
        &self,
        loaded: &LoadedScenario,
        (setting, seed): (usize, u64),
        generation: u64,
    ) -> Option<Outcome> {
        let mut seen = generation;
        let mut progress = |_: crate::model::SimTime, _: crate::model::SimTime| {
            let now = self.generation();
            if now != seen {
                if !Self::wanted(&self.lock(), setting) {
                    std::panic::resume_unwind(Box::new(Cancelled));
                }
                seen = now;
            }
        };
        let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            crate::run::run_summary(&loaded.scenario, seed, &mut progress)
        }));
        match ran {
            Ok(out) => {
                let full = out.summary.to_value();
                let mut summary = Map::new();
                for key in SHOWN
                    .iter()
                    .chain(["matches", "wait_s.p99", "spread_rating.p90"].iter())
                {
                    if let Some(v) = crate::tune::stats::lookup(&full, key) {
                        insert_path(&mut summary, key, v.clone());
                    }
                }
                let quantiles = crate::report::compare::read_wait_quantiles(
                    &crate::report::compare::wait_quantiles_json(&out.view.waits),
                )
                .unwrap_or_default();
                Some(Outcome::Done(SeedResult {
                    summary: Value::Object(summary),
                    quantiles,
                    wall_s: out.perf.wall_s,
                }))
            }
            Err(payload) if payload.is::<Cancelled>() => None,
            Err(payload) => {
                let why = payload
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_else(|| "unknown failure".into());
                Some(Outcome::Failed(format!(
                    "seed {seed}: the run failed: {why}"
                )))
            }
        }
    }
}

/// `{"wait_s": {"p50": v}}` from `wait_s.p50`, so the comparison code reads
/// these reduced summaries by the same paths as whole ones.
fn insert_path(m: &mut Map<String, Value>, path: &str, v: Value) {
    match path.split_once('.') {
        None => {
            m.insert(path.to_string(), v);
        }
        Some((head, rest)) => {
            let entry = m
                .entry(head.to_string())
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(sub) = entry {
                insert_path(sub, rest, v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dotted_paths_nest() {
        let mut m = Map::new();
        insert_path(&mut m, "wait_s.p50", Value::from(3.0));
        insert_path(&mut m, "wait_s.p90", Value::from(9.0));
        insert_path(&mut m, "abandon_rate", Value::from(0.1));
        assert_eq!(
            Value::Object(m),
            serde_json::json!({"wait_s": {"p50": 3.0, "p90": 9.0}, "abandon_rate": 0.1})
        );
    }
}
