//! What the engine needs to run, as domain types: built once from a validated
//! scenario so that a change to the file format stops at `Config::from_scenario`
//! instead of reaching into the event loop.

use crate::model::SimDuration;
use crate::policy::MatchFormat;
use crate::scenario::{PopulationSection, Scenario};

/// How long a ticket waits before it gives up.
#[derive(Clone, Debug, PartialEq)]
pub enum Patience {
    /// Exponential with this mean: memoryless players.
    Exponential { mean: SimDuration },
    /// Everyone gives up after exactly this long.
    Fixed { after: SimDuration },
    /// Nobody gives up.
    Never,
}

impl From<&crate::scenario::Patience> for Patience {
    fn from(p: &crate::scenario::Patience) -> Self {
        use crate::scenario::Patience as P;
        match p {
            P::Exponential { mean } => Patience::Exponential { mean: mean.0 },
            P::Fixed { after } => Patience::Fixed { after: after.0 },
            P::Never => Patience::Never,
        }
    }
}

/// The arrival process: fresh parties, their patience, and requeues.
#[derive(Clone, Debug, PartialEq)]
pub struct Arrivals {
    /// Mean party arrivals per second at the busiest hour of the day.
    pub peak_rate_per_s: f64,
    /// Mean arrivals per second in each of the 24 hours of a simulated day
    /// (never above the peak: arrivals at the peak rate are thinned to it).
    pub hourly_rate_per_s: Vec<f64>,
    /// Cumulative probability of party sizes 1, 2, 3, ...; the last is 1.
    pub party_size_cdf: Vec<f64>,
    pub patience: Patience,
    /// Probability that a party queues again after a match.
    pub requeue_prob: f64,
    /// Mean (exponential) pause between a match's end and queueing again.
    pub think_time: SimDuration,
}

/// A validated scenario as the engine sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    pub duration: SimDuration,
    /// Tickets that join before this are simulated but left out of metrics.
    pub warmup: SimDuration,
    pub arrivals: Arrivals,
    pub format: MatchFormat,
    /// Delay between a match forming and starting.
    pub lobby: SimDuration,
    /// Interval between queue samples.
    pub sample_interval: SimDuration,
    /// How many queue samples over the run also measure the rank correlation.
    pub corr_points: u32,
    pub population: PopulationSection,
    /// Start every rating at the player's drawn win rate, with the games behind it.
    pub ratings_from_win_rate: bool,
}

impl Config {
    /// Reads what the engine needs; the scenario must already be validated.
    pub fn from_scenario(s: &Scenario) -> Config {
        let a = &s.arrivals;
        // The rate in the file is the mean at multiplier 1; the engine draws
        // at the busiest hour and thins the quieter ones.
        let peak = a
            .daily_profile
            .as_ref()
            .map(|p| p.iter().copied().fold(0.0, f64::max))
            .unwrap_or(1.0);
        let total: f64 = a.party_sizes.iter().sum();
        let party_size_cdf = a
            .party_sizes
            .iter()
            .scan(0.0, |acc, w| {
                *acc += w / total;
                Some(*acc)
            })
            .collect();
        Config {
            duration: s.run.duration.0,
            warmup: s.run.warmup.0,
            arrivals: Arrivals {
                peak_rate_per_s: a.rate_per_s * peak,
                hourly_rate_per_s: match &a.daily_profile {
                    Some(p) => p.iter().map(|m| a.rate_per_s * m).collect(),
                    None => vec![a.rate_per_s; 24],
                },
                party_size_cdf,
                patience: Patience::from(&a.patience),
                requeue_prob: a.requeue_prob,
                think_time: a.think_time.0,
            },
            format: MatchFormat {
                teams: s.format.teams as usize,
                team_size: s.format.team_size as usize,
            },
            lobby: s.format.lobby.0,
            sample_interval: s.metrics.sample_interval.0,
            corr_points: s.metrics.corr_points,
            population: s.population.clone(),
            ratings_from_win_rate: matches!(s.rating, crate::rating::RatingConfig::WinRate(_))
                && s.population.win_rate.is_some(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::from_text;
    use std::path::Path;

    fn config(extra_arrivals: &str) -> Config {
        let text = format!(
            r#"
[run]
name = "config"
duration = "2h"
warmup = "10m"
[population]
size = 100
skill = {{ dist = "normal", mean = 1500, sd = 300 }}
[arrivals]
rate_per_s = 2.0
party_sizes = [3.0, 1.0]
{extra_arrivals}
[match]
team_size = 2
lobby = "20s"
[policy]
kind = "fixed-limit"
limit = 100
[outcome]
model = "logistic"
duration = "1m"
"#
        );
        let s = from_text(&text, Path::new("test.toml"), &[])
            .expect("test scenario is valid")
            .scenario;
        Config::from_scenario(&s)
    }

    #[test]
    fn a_flat_day_runs_at_the_file_rate_every_hour() {
        let c = config("");
        assert_eq!(c.arrivals.peak_rate_per_s, 2.0);
        assert_eq!(c.arrivals.hourly_rate_per_s, vec![2.0; 24]);
        assert_eq!(c.arrivals.party_size_cdf, vec![0.75, 1.0]);
        assert_eq!(c.duration, SimDuration::from_secs(7200));
        assert_eq!(c.warmup, SimDuration::from_secs(600));
        assert_eq!(
            c.format,
            MatchFormat {
                teams: 2,
                team_size: 2
            }
        );
        assert_eq!(c.lobby, SimDuration::from_secs(20));
        assert_eq!(
            c.arrivals.patience,
            Patience::Exponential {
                mean: SimDuration::from_secs(300)
            }
        );
        assert!(!c.ratings_from_win_rate);
    }

    #[test]
    fn a_daily_profile_scales_each_hour_and_peaks_at_its_largest() {
        let mut profile = vec![0.5; 24];
        profile[7] = 1.5;
        let c = config(&format!("daily_profile = {profile:?}"));
        assert_eq!(c.arrivals.peak_rate_per_s, 3.0);
        assert_eq!(c.arrivals.hourly_rate_per_s[0], 1.0);
        assert_eq!(c.arrivals.hourly_rate_per_s[7], 3.0);
    }
}
