//! What the engine needs to run, as domain types: built once from a validated
//! scenario (`Config::from_scenario`, in `scenario::to_engine`) so that a
//! change to the file format stops there instead of reaching into the event
//! loop.

use super::population::Population;
use crate::model::SimDuration;
use crate::policy::MatchFormat;

/// How long a ticket waits before it gives up.
#[derive(Clone, Debug, PartialEq)]
pub enum Patience {
    /// Exponential with this mean: memoryless players.
    Exponential {
        /// The mean wait before giving up.
        mean: SimDuration,
    },
    /// Everyone gives up after exactly this long.
    Fixed {
        /// The wait after which everyone gives up.
        after: SimDuration,
    },
    /// Weibull: survival exp(-(t/scale)^shape). Shape above 1: players grow
    /// less patient the longer they wait; below 1: the quick quitters go
    /// first. One of the three families `mmsim fit` compares.
    Weibull {
        /// The shape `k` (dimensionless).
        shape: f64,
        /// The scale: the wait by which 63% have given up.
        scale: SimDuration,
    },
    /// Log-normal: ln(patience) is normal with mean ln(median) and sd `sigma`.
    LogNormal {
        /// The median wait before giving up.
        median: SimDuration,
        /// The standard deviation of ln(patience).
        sigma: f64,
    },
    /// Nobody gives up.
    Never,
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
    /// How long fresh parties wait before giving up.
    pub patience: Patience,
    /// Probability that a party queues again after a match.
    pub requeue_prob: f64,
    /// Mean (exponential) pause between a match's end and queueing again.
    pub think_time: SimDuration,
    /// Tickets replayed from a trace instead of the process above (whose
    /// rate, party sizes, patience and requeues are then unused).
    pub trace: Option<std::sync::Arc<super::trace::Trace>>,
}

/// A validated scenario as the engine sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// Simulated time the run lasts, warm-up included.
    pub duration: SimDuration,
    /// Tickets that join before this are simulated but left out of metrics.
    pub warmup: SimDuration,
    /// Who joins the queue, when, in parties of what size.
    pub arrivals: Arrivals,
    /// Teams per match and players per team (and a role composition).
    pub format: MatchFormat,
    /// Delay between a match forming and starting.
    pub lobby: SimDuration,
    /// Interval between queue samples.
    pub sample_interval: SimDuration,
    /// How many queue samples over the run also measure the rank correlation.
    pub corr_points: u32,
    /// Who may queue: their skill, ratings and attributes.
    pub population: Population,
    /// Start every rating at the player's drawn win rate, with the games behind it.
    pub ratings_from_win_rate: bool,
    /// The ready check a formed match must pass; `None`: matches start unasked.
    pub acceptance: Option<super::Acceptance>,
    /// Leaves from running matches and their backfill; `None`: nobody leaves.
    pub backfill: Option<super::Backfill>,
    /// Players' roles, with a role queue (`format.roles`).
    pub roles: Option<super::roles::RoleDraw>,
    /// Home regions, pings and the latency rule; `None`: one global queue.
    pub regions: Option<super::RegionsConfig>,
    /// Players who quit and come back; `None`: everyone stays.
    pub engagement: Option<super::EngagementConfig>,
    /// Record why each ticket waited (`metrics::explain`).
    pub explain: bool,
    /// Several queues (game modes) over the players; `None`: one queue.
    pub modes: Option<super::ModesConfig>,
    /// Under a vendor's ruleset, its expansion steps
    /// (`Ruleset::expansion_steps`), for explain's stories; else empty.
    pub expansions: Vec<crate::model::ExpansionStep>,
}
