//! The scenario file's schema: one struct per section, unknown keys refused,
//! defaults for what a designer may leave out.

pub use super::attributes::{CategoryMix, GamesDist, LanguageWeight, TierWeight, WinRateDist};
use mmsim_core::model::{HumanDuration, ParamError};
use mmsim_core::outcome::OutcomeConfig;
use mmsim_core::policy::PolicyConfig;
use mmsim_core::rating::RatingConfig;
use mmsim_core::teams::TeamsConfig;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub run: RunSection,
    /// Absent only with a trace, which brings its players.
    #[serde(default)]
    pub population: PopulationSection,
    pub arrivals: ArrivalsSection,
    #[serde(default, rename = "match")]
    pub format: MatchSection,
    pub policy: PolicyConfig,
    /// How a formed match's parties are split into teams (team formats only).
    #[serde(default)]
    pub teams: TeamsConfig,
    #[serde(default)]
    pub rating: RatingConfig,
    #[serde(default)]
    pub outcome: OutcomeConfig,
    #[serde(default)]
    pub metrics: MetricsSection,
    /// The ready check every formed match must pass; absent: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acceptance: Option<super::backfill::AcceptanceSection>,
    /// Players leaving running matches and their replacements; absent: nobody leaves.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backfill: Option<super::backfill::BackfillSection>,
    /// A role queue: players' roles and each team's composition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roles: Option<super::RolesSection>,
    /// What `mmsim sweep` varies: accepted here as it stands and read by
    /// `tune::SweepSection::read`, so the schema does not depend on tuning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep: Option<toml::Value>,
    /// Home regions, pings to data centres and the latency rule; absent: one global queue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regions: Option<super::RegionsSection>,
    /// Players who stop after a match and come back; absent: everyone stays.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engagement: Option<super::EngagementSection>,
    /// A vendor's ruleset run as the policy (`scenario::ruleset`); absent: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ruleset: Option<super::RulesetSection>,
    /// Several queues (game modes) over the same players; absent: one queue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modes: Option<super::ModesSection>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunSection {
    /// Names the output folder `output/<name>/`.
    pub name: String,
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Simulated time the run covers.
    pub duration: HumanDuration,
    /// Tickets that join before this are simulated but left out of metrics.
    #[serde(default)]
    pub warmup: HumanDuration,
    /// Seeds to run (seed, seed+1, ...) when replications are asked for.
    #[serde(default = "default_replications")]
    pub replications: u32,
}

fn default_seed() -> u64 {
    1
}
fn default_replications() -> u32 {
    1
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PopulationSection {
    /// Number of players who may queue (absent, 0, with a trace: the trace's players).
    #[serde(default)]
    pub size: u32,
    /// Distribution of hidden true skill (absent with a trace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skill: Option<SkillDist>,
    /// Rating a new player starts with; the rating system's own default if absent.
    #[serde(default)]
    pub initial_rating: Option<f64>,
    /// Vehicle tiers and their shares (Armored Warfare); absent: everyone tier 0.
    #[serde(default)]
    pub tiers: Vec<TierWeight>,
    /// Vehicle category shares (Armored Warfare); absent: no category.
    #[serde(default)]
    pub categories: Option<CategoryMix>,
    /// Languages and the share speaking each first; absent: one common language.
    #[serde(default)]
    pub languages: Vec<LanguageWeight>,
    /// Probability a player also speaks a second language, drawn by the same weights.
    #[serde(default)]
    pub extra_language_prob: f64,
    /// The shown win rate (Armored Warfare's skill); absent: 50% for everyone.
    #[serde(default)]
    pub win_rate: Option<WinRateDist>,
    /// Games played before the run (experience, win-rate history); absent: 0.
    #[serde(default)]
    pub games: Option<GamesDist>,
    /// Ratings already learned at the start (a seasoned ladder); absent:
    /// everyone starts at the initial rating.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seasoned: Option<super::SeasonedSection>,
    /// Another run's `players.parquet`, relative to the scenario file: its
    /// players' skill, ratings and record replace the drawn ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratings_file: Option<String>,
    /// The file's players, read by the loader once the scenario is valid.
    #[serde(skip)]
    pub ratings_data: Option<std::sync::Arc<Vec<mmsim_core::engine::population::LoadedPlayer>>>,
    /// SHA-256 of the file's bytes, for the provenance hash.
    #[serde(skip)]
    pub ratings_sha256: Option<String>,
}

/// Where true skill comes from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "dist", rename_all = "kebab-case", deny_unknown_fields)]
#[serde(expecting = "a table such as { dist = \"normal\", mean = 1500, sd = 350 }")]
pub enum SkillDist {
    /// Normal, redrawn until inside [min, max] when bounds are given.
    Normal {
        mean: f64,
        sd: f64,
        #[serde(default)]
        min: Option<f64>,
        #[serde(default)]
        max: Option<f64>,
    },
    /// Empirical quantiles: `table = [[0.05, 1100], [0.10, 1500], ...]`, cumulative
    /// probability then value, both strictly increasing; linear in between and
    /// extended with the end segments' slopes to probability 0 and 1.
    Quantiles { table: Vec<[f64; 2]> },
    /// The Dota 2 post's MMR percentile table (5%: 1100 ... 99%: 4100).
    /// Braces, not a unit variant: serde lets a tagged unit variant take
    /// any extra key (`mean = 1500` was accepted and ignored).
    DotaMmr {},
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArrivalsSection {
    /// Mean arrivals of parties per second (Poisson); absent with a trace.
    #[serde(default)]
    pub rate_per_s: f64,
    /// Optional 24 multipliers of the rate, one per hour of the simulated day.
    #[serde(default)]
    pub daily_profile: Option<Vec<f64>>,
    /// Relative weights of party sizes 1, 2, 3, ...: `[0.7, 0.2, 0.1]`.
    #[serde(default = "default_party_sizes")]
    pub party_sizes: Vec<f64>,
    /// How long a ticket waits before it gives up.
    #[serde(default)]
    pub patience: Patience,
    /// Probability that a party queues again after a match.
    #[serde(default)]
    pub requeue_prob: f64,
    /// Mean (exponential) pause between a match's end and queueing again.
    #[serde(default = "default_think")]
    pub think_time: HumanDuration,
    /// A trace file (CSV) to replay instead of the Poisson process, relative
    /// to the scenario file (`scenario::trace`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
    /// The trace's tickets and players, read by the loader once the
    /// scenario is valid.
    #[serde(skip)]
    pub trace_data: Option<std::sync::Arc<mmsim_core::engine::Trace>>,
    /// SHA-256 of the trace file's bytes, for the provenance hash.
    #[serde(skip)]
    pub trace_sha256: Option<String>,
}

fn default_party_sizes() -> Vec<f64> {
    vec![1.0]
}
fn default_think() -> HumanDuration {
    HumanDuration::from_secs(30)
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "dist", rename_all = "kebab-case", deny_unknown_fields)]
#[serde(expecting = "a table such as { dist = \"exponential\", mean = \"5m\" }")]
pub enum Patience {
    /// Exponential with this mean: memoryless players.
    Exponential { mean: HumanDuration },
    /// Everyone gives up after exactly this long.
    Fixed { after: HumanDuration },
    /// Weibull: survival exp(-(t/scale)^shape); what `mmsim fit` writes
    /// when the log's waits say so.
    Weibull { shape: f64, scale: HumanDuration },
    /// Log-normal: ln(patience) normal around ln(median) with sd `sigma`.
    LogNormal { median: HumanDuration, sigma: f64 },
    /// Nobody gives up. Braces so that an extra key is refused, as for `DotaMmr`.
    Never {},
}

impl Default for Patience {
    fn default() -> Self {
        Patience::Exponential {
            mean: HumanDuration::from_secs(300),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MatchSection {
    pub teams: u32,
    pub team_size: u32,
    /// Delay between a match forming and starting (loading, picks).
    pub lobby: HumanDuration,
}

impl Default for MatchSection {
    fn default() -> Self {
        MatchSection {
            teams: 2,
            team_size: 1,
            lobby: HumanDuration::default(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MetricsSection {
    /// Interval between queue-length samples.
    pub sample_interval: HumanDuration,
    /// How many times over the run to measure the rating/true-skill rank correlation.
    pub corr_points: u32,
    /// Record why each ticket waited (`--explain`): `explain.jsonl` and the
    /// summary's `explain` object. Left out of the canonical form when off.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub explain: bool,
}

impl Default for MetricsSection {
    fn default() -> Self {
        MetricsSection {
            sample_interval: HumanDuration::from_secs(60),
            corr_points: 24,
            explain: false,
        }
    }
}

/// The Dota 2 post's MMR percentiles ("To give you a feel for the range of MMR").
pub const DOTA_MMR_TABLE: [[f64; 2]; 8] = [
    [0.05, 1100.0],
    [0.10, 1500.0],
    [0.25, 2000.0],
    [0.50, 2250.0],
    [0.75, 2731.0],
    [0.90, 3200.0],
    [0.95, 3900.0],
    [0.99, 4100.0],
];

use mmsim_core::model::check::{positive, unit as probability};

/// Upper bounds on sizes and rates (docs/scenarios.md lists them): past
/// these a run does not finish on one machine, or its memory does not fit.
/// Durations are bounded by `model::param::MAX_DURATION_DAYS`.
pub const MAX_POPULATION: u32 = 100_000_000;
pub const MAX_RATE_PER_S: f64 = 1_000_000.0;
pub const MAX_TEAMS: u32 = 1_000;
pub const MAX_TEAM_SIZE: u32 = 1_000;
pub const MAX_REPLICATIONS: u32 = 1_000;
/// Queue-length samples over a run (duration / sample_interval).
pub const MAX_SAMPLES: f64 = 10_000_000.0;
pub const MAX_CORR_POINTS: u32 = 10_000;

fn at_most(key: &str, value: f64, max: f64, shown: &str) -> Result<(), ParamError> {
    if value > max {
        return Err(ParamError::new(
            key,
            format!("may be at most {shown}, got {value}"),
        ));
    }
    Ok(())
}

impl Scenario {
    /// Checks every value a type cannot: ranges, orders, consistency.
    /// Errors carry the full dotted key.
    pub fn validate(&self) -> Result<(), ParamError> {
        let prefixed = |section: &str, e: ParamError| {
            ParamError::new(format!("{section}.{}", e.key), e.message)
        };
        if self.run.name.trim().is_empty() {
            return Err(ParamError::new("run.name", "must not be empty"));
        }
        if self.run.name.contains(['/', '\\']) || self.run.name.starts_with('.') {
            return Err(ParamError::new(
                "run.name",
                "names a folder under output/: no slashes and no leading dot",
            ));
        }
        if self.run.duration.0.is_zero() {
            return Err(ParamError::new(
                "run.duration",
                "must be longer than 0s, e.g. \"24h\"",
            ));
        }
        if self.run.warmup >= self.run.duration {
            return Err(ParamError::new(
                "run.warmup",
                "must be shorter than run.duration, or nothing is measured",
            ));
        }
        if self.run.replications == 0 {
            return Err(ParamError::new("run.replications", "must be 1 or more"));
        }
        at_most(
            "run.replications",
            f64::from(self.run.replications),
            f64::from(MAX_REPLICATIONS),
            "1000",
        )?;
        // A trace brings its own players and arrivals (`scenario::trace`).
        let traced = self.arrivals.trace.is_some();
        if traced {
            super::trace::validate(self)?;
        }
        at_most(
            "population.size",
            f64::from(self.population.size),
            f64::from(MAX_POPULATION),
            "100000000 (1e8)",
        )?;
        if !traced && self.population == PopulationSection::default() {
            return Err(ParamError::new(
                "population",
                "is missing: add a [population] section with `size` (players who may queue) and `skill` (e.g. skill = { dist = \"normal\", mean = 1500, sd = 300 }); only a trace, which brings its players, may leave it out",
            ));
        }
        if !traced && self.population.size < 2 {
            return Err(ParamError::new(
                "population.size",
                format!("must be at least 2, got {}", self.population.size),
            ));
        }
        if let (false, skill) = (traced, &self.population.skill) {
            skill.as_ref().ok_or_else(|| {
                ParamError::new(
                    "population.skill",
                    "is missing: give the true-skill distribution, e.g. { dist = \"normal\", mean = 1500, sd = 350 }",
                )
            })?
            .validate()
            .map_err(|e| prefixed("population.skill", e))?;
        }
        let pop = &self.population;
        super::attributes::validate(
            &pop.tiers,
            pop.categories.as_ref(),
            &pop.languages,
            pop.extra_language_prob,
            pop.win_rate.as_ref(),
            pop.games.as_ref(),
        )
        .map_err(|e| prefixed("population", e))?;
        if let Some(r) = self.population.initial_rating {
            if !r.is_finite() {
                return Err(ParamError::new(
                    "population.initial_rating",
                    "must be a finite number",
                ));
            }
        }
        if let Some(seasoned) = &self.population.seasoned {
            seasoned
                .validate()
                .map_err(|e| prefixed("population.seasoned", e))?;
            if matches!(self.rating, RatingConfig::WinRate(_)) {
                return Err(ParamError::new(
                    "population.seasoned",
                    "does not apply to the win-rate rating system, whose ratings start from population.win_rate",
                ));
            }
        }
        if let Some(file) = &self.population.ratings_file {
            super::ladder::validate(self, file)?;
        }
        if let Some(regions) = &self.regions {
            regions.validate().map_err(|e| prefixed("regions", e))?;
        }
        // A derived β fits one team size; modes of several need it given.
        if let (RatingConfig::Trueskill(t), Some(modes)) = (&self.rating, &self.modes) {
            let size = self.format.team_size;
            if t.beta.is_none()
                && modes
                    .queues
                    .iter()
                    .any(|q| q.team_size.is_some_and(|n| n != size))
            {
                return Err(ParamError::new(
                    "rating.beta",
                    format!(
                        "must be given when modes play different team sizes: left out, it is derived from the outcome model for one team size (match.team_size = {size}); give a number > 0, e.g. the one for the mode that counts most"
                    ),
                ));
            }
        }
        let a = &self.arrivals;
        if !traced {
            positive("arrivals.rate_per_s", a.rate_per_s)?;
        }
        at_most(
            "arrivals.rate_per_s",
            a.rate_per_s,
            MAX_RATE_PER_S,
            "1000000 (1e6)",
        )?;
        if let Some(profile) = &a.daily_profile {
            if profile.len() != 24 {
                return Err(ParamError::new(
                    "arrivals.daily_profile",
                    format!("needs 24 multipliers, one per hour, got {}", profile.len()),
                ));
            }
            if profile.iter().any(|m| !(m.is_finite() && *m >= 0.0))
                || profile.iter().all(|m| *m == 0.0)
            {
                return Err(ParamError::new(
                    "arrivals.daily_profile",
                    "multipliers must be zero or more and not all zero",
                ));
            }
        }
        if a.party_sizes.is_empty()
            || a.party_sizes.iter().any(|w| !(w.is_finite() && *w >= 0.0))
            || a.party_sizes.iter().all(|w| *w == 0.0)
        {
            return Err(ParamError::new(
                "arrivals.party_sizes",
                "weights of party sizes 1, 2, ...: zero or more, not all zero, e.g. [0.7, 0.2, 0.1]",
            ));
        }
        match &a.patience {
            Patience::Exponential { mean } if mean.0.is_zero() => {
                return Err(ParamError::new(
                    "arrivals.patience.mean",
                    "must be longer than 0s",
                ))
            }
            Patience::Weibull { shape, .. }
                if !(shape.is_finite() && (0.01..=1000.0).contains(shape)) =>
            {
                return Err(ParamError::new(
                    "arrivals.patience.shape",
                    format!("a Weibull shape from 0.01 to 1000, got {shape}"),
                ))
            }
            Patience::Weibull { scale, .. } if scale.0.is_zero() => {
                return Err(ParamError::new(
                    "arrivals.patience.scale",
                    "must be longer than 0s",
                ))
            }
            Patience::LogNormal { sigma, .. }
                if !(sigma.is_finite() && (0.0..=10.0).contains(sigma) && *sigma > 0.0) =>
            {
                return Err(ParamError::new(
                    "arrivals.patience.sigma",
                    format!("the sd of ln(patience): more than 0, at most 10, got {sigma}"),
                ))
            }
            Patience::LogNormal { median, .. } if median.0.is_zero() => {
                return Err(ParamError::new(
                    "arrivals.patience.median",
                    "must be longer than 0s",
                ))
            }
            _ => {}
        }
        probability("arrivals.requeue_prob", a.requeue_prob)?;
        let f = &self.format;
        if f.teams < 2 {
            return Err(ParamError::new(
                "match.teams",
                format!("must be 2 or more, got {}", f.teams),
            ));
        }
        if f.team_size < 1 {
            return Err(ParamError::new("match.team_size", "must be 1 or more"));
        }
        at_most(
            "match.teams",
            f64::from(f.teams),
            f64::from(MAX_TEAMS),
            "1000",
        )?;
        at_most(
            "match.team_size",
            f64::from(f.team_size),
            f64::from(MAX_TEAM_SIZE),
            "1000",
        )?;
        if !traced && u64::from(f.teams) * u64::from(f.team_size) > u64::from(self.population.size)
        {
            return Err(ParamError::new(
                "match.team_size",
                format!(
                    "a match needs {} players but the population has only {}",
                    u64::from(f.teams) * u64::from(f.team_size),
                    self.population.size
                ),
            ));
        }
        // With `[modes]`, `[match]` and the party sizes are only the modes'
        // defaults, checked per mode (`scenario::modes`).
        if self.modes.is_none() {
            mmsim_core::teams::check_fill(&a.party_sizes, f.teams as usize, f.team_size as usize)
                .map_err(|e| ParamError::new("arrivals.party_sizes", e.to_string()))?;
            self.teams
                .validate(f.teams as usize, f.team_size as usize)
                .map_err(|e| prefixed("teams", e))?;
        }
        if let Some(roles) = &self.roles {
            roles.validate(f.teams, f.team_size)?;
        }
        self.policy.validate().map_err(|e| prefixed("policy", e))?;
        self.rating.validate().map_err(|e| prefixed("rating", e))?;
        self.outcome
            .validate()
            .map_err(|e| prefixed("outcome", e))?;
        if let Some(a) = &self.acceptance {
            a.validate().map_err(|e| prefixed("acceptance", e))?;
        }
        if let Some(b) = &self.backfill {
            b.validate().map_err(|e| prefixed("backfill", e))?;
        }
        super::engagement::validate(self)?;
        super::modes::validate(self)?;
        if self.metrics.sample_interval.0.is_zero() {
            return Err(ParamError::new(
                "metrics.sample_interval",
                "must be longer than 0s",
            ));
        }
        let samples =
            self.run.duration.0.as_secs_f64() / self.metrics.sample_interval.0.as_secs_f64();
        if samples > MAX_SAMPLES {
            return Err(ParamError::new(
                "metrics.sample_interval",
                format!(
                    "gives {samples:.0} queue samples over run.duration; at most {MAX_SAMPLES:.0} are kept, so make it longer"
                ),
            ));
        }
        at_most(
            "metrics.corr_points",
            f64::from(self.metrics.corr_points),
            f64::from(MAX_CORR_POINTS),
            "10000",
        )?;
        Ok(())
    }
}

impl SkillDist {
    pub fn validate(&self) -> Result<(), ParamError> {
        match self {
            SkillDist::Normal { mean, sd, min, max } => {
                if !mean.is_finite() {
                    return Err(ParamError::new("mean", "must be a finite number"));
                }
                positive("sd", *sd)?;
                if let (Some(lo), Some(hi)) = (min, max) {
                    if lo >= hi {
                        return Err(ParamError::new(
                            "max",
                            format!("must be above min ({lo}), got {hi}"),
                        ));
                    }
                    if *mean < *lo - 3.0 * sd || *mean > *hi + 3.0 * sd {
                        return Err(ParamError::new(
                            "mean",
                            "lies so far outside [min, max] that almost no draw would land inside",
                        ));
                    }
                }
                Ok(())
            }
            SkillDist::Quantiles { table } => validate_quantiles(table),
            SkillDist::DotaMmr {} => Ok(()),
        }
    }
}

pub fn validate_quantiles(table: &[[f64; 2]]) -> Result<(), ParamError> {
    if table.len() < 2 {
        return Err(ParamError::new(
            "table",
            "needs at least two [probability, value] rows",
        ));
    }
    for (i, row) in table.iter().enumerate() {
        if !(row[0] > 0.0 && row[0] < 1.0 && row[1].is_finite()) {
            return Err(ParamError::new(
                "table",
                format!(
                    "row {} has probability {}: it must lie strictly between 0 and 1",
                    i + 1,
                    row[0]
                ),
            ));
        }
        if i > 0 && (row[0] <= table[i - 1][0] || row[1] <= table[i - 1][1]) {
            return Err(ParamError::new(
                "table",
                format!(
                    "must be strictly increasing in probability and value; row {} ({:?}) does not rise above row {} ({:?})",
                    i + 1,
                    row,
                    i,
                    table[i - 1]
                ),
            ));
        }
    }
    Ok(())
}
