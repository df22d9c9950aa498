//! How long a run will take and how many players it will hold at once,
//! measured rather than guessed: what a ticket costs depends on the policy,
//! the format, the roles and the pool the traffic builds, which no formula
//! of the scenario's numbers follows across presets (one FlexMatch ruleset
//! runs 25 times faster than another at the same traffic). So `validate`
//! runs the scenario's first minutes twice, the second pilot twice as long
//! as the first, and takes the cost of the second pilot's later half as
//! the cost of every later stretch of the same traffic.

use crate::run::run_summary;
use crate::Scenario;
use mmsim_core::model::SimDuration;
use std::time::Instant;

/// The first pilot's simulated time (less if the run is shorter).
const FIRST_PILOT: SimDuration = SimDuration::from_secs(600);
/// A pilot pair is long enough once its longer pilot took this much wall
/// time: shorter, and the machine's noise dominates the difference.
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
    const HOUR_MS: u64 = 3_600_000;
    let Some(p) = profile else {
        return (b.as_ms().saturating_sub(a.as_ms())) as f64 / HOUR_MS as f64;
    };
    let mut total = 0.0;
    let mut t = a.as_ms();
    while t < b.as_ms() {
        let end = ((t / HOUR_MS + 1) * HOUR_MS).min(b.as_ms());
        total += p[((t / HOUR_MS) % 24) as usize] * (end - t) as f64 / HOUR_MS as f64;
        t = end;
    }
    total
}

/// One pilot: the scenario cut to `d`, its wall time, tickets and busiest
/// concurrent sample.
fn pilot(s: &Scenario, d: SimDuration) -> (f64, u64, u32) {
    let mut cut = s.clone();
    cut.run.duration.0 = d;
    cut.run.warmup.0 = SimDuration::ZERO;
    let started = Instant::now();
    let out = run_summary(&cut, cut.run.seed, &mut |_, _| {});
    let wall_s = started.elapsed().as_secs_f64();
    // After the scenario's warm-up, as the summary counts, when the pilot
    // reaches past it.
    let warmup_s = s.run.warmup.secs();
    let busiest = |from_s: f64| {
        out.view
            .queue
            .iter()
            .filter(|q| q.t.as_secs_f64() >= from_s)
            .map(|q| q.concurrent_players())
            .max()
    };
    let peak = busiest(warmup_s).or_else(|| busiest(0.0)).unwrap_or(0);
    (wall_s, out.perf.tickets, peak)
}

/// Runs the pilots and predicts one seed's run of `s`.
pub fn estimate(s: &Scenario) -> Estimate {
    let full = s.run.duration.0;
    let profile = s.arrivals.daily_profile.as_deref();
    let mut d = SimDuration::from_ms(FIRST_PILOT.as_ms().min(full.as_ms()));
    let mut spent = 0.0;
    let mut short = pilot(s, d);
    spent += short.0;
    loop {
        let long_d = SimDuration::from_ms((2 * d.as_ms()).min(full.as_ms()));
        if long_d == d {
            // The first pilot was the whole run.
            return finish(s, d, spent, true, short.0, short.1 as f64, short.2);
        }
        let long = pilot(s, long_d);
        spent += long.0;
        if long_d == full {
            return finish(s, long_d, spent, true, long.0, long.1 as f64, long.2);
        }
        if long.0 >= ENOUGH_WALL_S {
            // The later half's cost per arrival, carried over the rest.
            let later = (long.0 - short.0).max(0.0);
            let per_mass = later / mass(profile, d, long_d).max(1e-9);
            let rest = per_mass * mass(profile, long_d, full);
            let tickets_per_mass =
                (long.1 - short.1.min(long.1)) as f64 / mass(profile, d, long_d).max(1e-9);
            let tickets = long.1 as f64 + tickets_per_mass * mass(profile, long_d, full);
            return finish(s, long_d, spent, false, long.0 + rest, tickets, long.2);
        }
        d = long_d;
        short = long;
    }
}

fn finish(
    s: &Scenario,
    pilot: SimDuration,
    pilots_wall_s: f64,
    whole: bool,
    sim_s: f64,
    tickets: f64,
    peak: u32,
) -> Estimate {
    // The busiest sample, at the profile's busiest hour the run reaches
    // rather than the pilot's own hours.
    let scale = match s.arrivals.daily_profile.as_deref() {
        None => 1.0,
        Some(p) => {
            let reached = |d: SimDuration| {
                crate::load::hours_reached(d)
                    .map(|h| p[h])
                    .fold(0.0_f64, f64::max)
            };
            let pilot_peak = reached(pilot);
            if pilot_peak > 0.0 {
                reached(s.run.duration.0) / pilot_peak
            } else {
                1.0
            }
        }
    };
    Estimate {
        pilot,
        pilots_wall_s,
        whole,
        run_s: sim_s + OUTPUT_FIXED_S + OUTPUT_PER_TICKET_S * tickets,
        peak_concurrent_players: f64::from(peak) * scale,
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
