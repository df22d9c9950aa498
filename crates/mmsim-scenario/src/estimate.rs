//! How long a run will take and how many players it will hold at once,
//! measured rather than guessed: what a ticket costs depends on the policy,
//! the format, the roles and the pool the traffic builds, which no formula
//! of the scenario's numbers follows across presets (one FlexMatch ruleset
//! runs 25 times faster than another at the same traffic). So `validate`
//! runs the scenario's first minutes twice, the second pilot twice as long
//! as the first (doubling until the second half takes a quarter second), and takes the cost of the second pilot's later half as
//! the cost of every later stretch of the same traffic. The first pilot is
//! 10 simulated minutes, or less when that would draw more than 50,000
//! arrivals and tickets.

use crate::Scenario;
use mmsim_core::metrics::{MatchRecord, RowSink, TicketRecord};
use mmsim_core::model::SimDuration;
use std::time::Instant;

/// The first pilot's simulated time (less if the run is shorter).
const FIRST_PILOT: SimDuration = SimDuration::from_secs(600);
/// A pilot pair is long enough once the longer pilot's second half took
/// this much wall time: shorter, and the machine's noise dominates it.
const ENOUGH_WALL_S: f64 = 0.25;
/// Writing the outputs (report, plots, Parquet tables): a fixed part and a
/// part per ticket, measured on the presets (`docs/performance.md`).
const OUTPUT_FIXED_S: f64 = 0.05;
const OUTPUT_PER_TICKET_S: f64 = 5e-8;

/// What the pilots measured, and the run they predict.
#[derive(Clone, Debug, PartialEq)]
pub struct Estimate {
    /// The longer pilot's simulated time (the whole run when it is short).
    pub pilot: SimDuration,
    /// Wall time the pilots took together.
    pub pilots_wall_s: f64,
    /// Whether the longer pilot was the whole run (then `run_s` is
    /// measured, but for the outputs).
    pub whole: bool,
    /// The run's wall time on this machine, one seed, every output.
    pub run_s: f64,
    /// Players online at once (waiting or in a match) at the busiest
    /// moment: the pilot's busiest sample, scaled to the busiest hour of
    /// the daily profile the run reaches.
    pub peak_concurrent_players: f64,
}

/// The daily profile's arrivals between `a` and `b` (in hours of rate 1).
fn mass(profile: Option<&[f64]>, a: SimDuration, b: SimDuration) -> f64 {
    const HOUR_MS: f64 = 3_600_000.0;
    match profile {
        None => b.as_ms().saturating_sub(a.as_ms()) as f64 / HOUR_MS,
        Some(p) => crate::load::profile_ms(p, a, b) / HOUR_MS,
    }
}

/// One pilot: the scenario cut to `d`; its wall time, tickets and busiest
/// concurrent sample.
struct Pilot {
    d: SimDuration,
    wall_s: f64,
    tickets: u64,
    peak: u32,
    /// Players waiting at the last sample.
    waiting: u32,
    /// Each match that started: when it formed (s), its players, and how
    /// long it lasts (drawn when it started, so known while it runs).
    matches: Vec<(f64, u32, f64)>,
}

/// Keeps what the peak's steady-state estimate needs of each match.
struct Matches(Vec<(f64, u32, f64)>);

impl RowSink for Matches {
    fn ticket(&mut self, _: TicketRecord) {}
    fn match_row(&mut self, m: MatchRecord) {
        if let Some(d) = m.duration_s {
            self.0
                .push((m.formed.as_secs_f64(), m.teams * m.team_size, d));
        }
    }
}

fn pilot(s: &Scenario, d: SimDuration) -> Pilot {
    let mut cut = s.clone();
    cut.run.duration.0 = d;
    cut.run.warmup.0 = SimDuration::ZERO;
    let started = Instant::now();
    let mut matches = Matches(Vec::new());
    let out = crate::run::run(&cut, cut.run.seed, &mut |_, _| {}, &mut matches)
        .expect("a sink that keeps a vector cannot fail");
    let wall_s = started.elapsed().as_secs_f64();
    // After the scenario's warm-up, as the summary counts, when the pilot
    // reaches past it.
    let busiest = |from_s: f64| {
        out.view
            .queue
            .iter()
            .filter(|q| q.t.as_secs_f64() >= from_s)
            .map(|q| q.concurrent_players())
            .max()
    };
    let peak = busiest(s.run.warmup.secs())
        .or_else(|| busiest(0.0))
        .unwrap_or(0);
    Pilot {
        d,
        wall_s,
        tickets: out.perf.tickets,
        peak,
        waiting: out.view.queue.last().map_or(0, |q| q.waiting_players),
        matches: matches.0,
    }
}

/// Arrivals drawn and tickets expected in the first pilot, at most: a
/// scenario whose traffic is heavy starts with a shorter pilot.
const FIRST_PILOT_LOAD: f64 = 50_000.0;

/// Runs the pilots and predicts one seed's run of `s`, whose `budget` is
/// given; `None` when that budget's lower bound is already over a day of
/// CPU (a run only `--force` lets start), where even a pilot could not end.
pub fn estimate(s: &Scenario, budget: &crate::Budget) -> Option<Estimate> {
    if budget.min_cpu_s > crate::load::MAX_MIN_CPU_S {
        return None;
    }
    let full = s.run.duration.0;
    let profile = s.arrivals.daily_profile.as_deref();
    // Draws and tickets per simulated second, over the run.
    let load = (budget.arrival_draws + budget.expected_tickets) / full.as_secs_f64().max(1e-3);
    let light_ms = (FIRST_PILOT_LOAD / load.max(1e-9) * 1000.0).max(1.0);
    let first_ms = (FIRST_PILOT.as_ms() as f64).min(light_ms) as u64;
    let mut short = pilot(
        s,
        SimDuration::from_ms(first_ms.clamp(1, full.as_ms().max(1))),
    );
    let mut spent = short.wall_s;
    loop {
        let long_d = SimDuration::from_ms((2 * short.d.as_ms()).min(full.as_ms()));
        if long_d == short.d {
            // The first pilot was the whole run.
            let (sim_s, tickets) = (short.wall_s, short.tickets as f64);
            return Some(finish(s, &short, spent, true, sim_s, tickets));
        }
        let long = pilot(s, long_d);
        spent += long.wall_s;
        if long_d == full {
            let (sim_s, tickets) = (long.wall_s, long.tickets as f64);
            return Some(finish(s, &long, spent, true, sim_s, tickets));
        }
        // Enough once the later half alone took long enough to measure
        // (the pilots' common part, building the population, cancels out).
        if long.wall_s - short.wall_s >= ENOUGH_WALL_S {
            // The later half's cost, and its tickets, per arrival, carried
            // over the rest of the run.
            let half = mass(profile, short.d, long_d).max(1e-9);
            let rest = mass(profile, long_d, full) / half;
            let later_s = (long.wall_s - short.wall_s).max(0.0);
            let later_tickets = long.tickets.saturating_sub(short.tickets) as f64;
            let sim_s = long.wall_s + later_s * rest;
            let tickets = long.tickets as f64 + later_tickets * rest;
            let mut e = finish(s, &long, spent, false, sim_s, tickets);
            e.peak_concurrent_players =
                e.peak_concurrent_players.max(steady_peak(s, &short, &long));
            return Some(e);
        }
        short = long;
    }
}

/// The players online once the queue has filled, for pilots too short to
/// see it (a night's 5 minutes of 40-minute matches): by Little's law, the
/// players starting matches per second in the longer pilot's second half,
/// times how long a match lasts (the mean drawn duration of every match
/// started, with the lobby), plus those waiting at its end; a pilot that
/// ended before its matches could end has seen no requeue yet, so the
/// flow is raised by the requeues each arrival brings (a geometric
/// series, as `Budget` counts them). Scaled to the busiest hour the run reaches, at most the
/// population.
fn steady_peak(s: &Scenario, short: &Pilot, long: &Pilot) -> f64 {
    let (from, to) = (short.d.as_secs_f64(), long.d.as_secs_f64());
    let started: f64 = long
        .matches
        .iter()
        .filter(|m| m.0 > from)
        .map(|m| f64::from(m.1))
        .sum();
    let Some(mean_s) = mean(long.matches.iter().map(|m| m.2)) else {
        return 0.0;
    };
    let mut flow = started / (to - from).max(1e-9);
    if to < mean_s + s.arrivals.think_time.secs() {
        flow /= 1.0 - s.arrivals.requeue_prob.min(0.95);
    }
    let playing = flow * (mean_s + s.format.lobby.secs());
    let profile = s.arrivals.daily_profile.as_deref();
    let busiest = profile.map_or(1.0, |p| crate::load::busiest_hour(p, s.run.duration.0));
    let pilot_rate = mass(profile, short.d, long.d) / ((to - from) / 3600.0).max(1e-12);
    let scale = if pilot_rate > 0.0 {
        busiest / pilot_rate
    } else {
        1.0
    };
    let population = match &s.arrivals.trace_data {
        Some(t) => t.players.len() as f64,
        None => f64::from(s.population.size),
    };
    ((playing + f64::from(long.waiting)) * scale).min(population)
}

fn mean(xs: impl Iterator<Item = f64>) -> Option<f64> {
    let (n, sum) = xs.fold((0usize, 0.0), |(n, s), x| (n + 1, s + x));
    (n > 0).then(|| sum / n as f64)
}

/// The estimate from the longest pilot `p`, the simulation's predicted
/// `sim_s` and `tickets`.
fn finish(s: &Scenario, p: &Pilot, spent: f64, whole: bool, sim_s: f64, tickets: f64) -> Estimate {
    // The busiest sample, at the profile's busiest hour the run reaches
    // rather than the pilot's own hours.
    let scale = match s.arrivals.daily_profile.as_deref() {
        None => 1.0,
        Some(profile) => {
            let pilot_peak = crate::load::busiest_hour(profile, p.d);
            if pilot_peak > 0.0 {
                crate::load::busiest_hour(profile, s.run.duration.0) / pilot_peak
            } else {
                1.0
            }
        }
    };
    Estimate {
        pilot: p.d,
        pilots_wall_s: spent,
        whole,
        run_s: sim_s + OUTPUT_FIXED_S + OUTPUT_PER_TICKET_S * tickets,
        peak_concurrent_players: f64::from(p.peak) * scale,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_profile_s_arrivals_are_its_hours_weighted_by_their_rates() {
        let mut p = vec![1.0; 24];
        p[1] = 3.0;
        let h = |x: f64| SimDuration::from_secs_f64(x * 3600.0);
        assert_eq!(mass(None, h(0.5), h(2.0)), 1.5);
        // Half of hour 0 at 1, all of hour 1 at 3, half of hour 2 at 1.
        assert!((mass(Some(&p), h(0.5), h(2.5)) - 4.0).abs() < 1e-12);
        // The next day's hour 1 again.
        assert!((mass(Some(&p), h(25.0), h(26.0)) - 3.0).abs() < 1e-12);
    }
}
