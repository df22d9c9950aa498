//! The `[regions]` section and `population.seasoned`: their schema, their
//! checks and what they become for the engine. Kept apart from
//! `config.rs` so the sections of issue 14 each live in their own file.

use mmsim_core::engine::population::Seasoned;
use mmsim_core::engine::regions::{MAX_DATA_CENTRES, MAX_HOMES, MAX_PING_MS};
use mmsim_core::engine::{Home, LatencyStep, RegionsConfig};
use mmsim_core::model::{HumanDuration, ParamError, SimDuration};
use serde::{Deserialize, Serialize};

/// Players' home regions, their pings to the data centres, and the latency
/// rule that decides where a match may be hosted.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegionsSection {
    /// Names of the data centres a match can be hosted in.
    pub data_centres: Vec<String>,
    /// Where players live: `[[regions.homes]]` with `name`, `share` and
    /// `ping_ms`, one median ping per data centre in the order above.
    pub homes: Vec<HomeSection>,
    /// Sigma of each player's log-normal factor on each median ping.
    #[serde(default = "default_spread")]
    pub ping_spread: f64,
    /// No drawn ping is lower than this.
    #[serde(default = "default_min_ping")]
    pub min_ping_ms: f64,
    /// The latency rule at zero wait: a ticket may be hosted where its
    /// worst member's ping is at most this.
    pub max_ping_ms: f64,
    /// Looser limits after waiting: `[{ after = "20s", max_ping_ms = 150 }]`.
    #[serde(default)]
    pub expansions: Vec<ExpansionSection>,
}

fn default_spread() -> f64 {
    0.25
}
fn default_min_ping() -> f64 {
    5.0
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HomeSection {
    pub name: String,
    pub share: f64,
    pub ping_ms: Vec<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpansionSection {
    /// Wait after which this limit applies (absolute, not after the previous step).
    pub after: HumanDuration,
    pub max_ping_ms: f64,
}

/// Most expansion steps a latency rule may have.
pub const MAX_EXPANSIONS: usize = 64;

/// `population.seasoned`: ratings already learned at time zero.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SeasonedSection {
    /// Pearson correlation of the starting ratings with true skill, in (0, 1].
    pub correlation: f64,
    /// The rating system's uncertainty at the start (Glicko RD, TrueSkill sigma).
    pub deviation: f64,
    /// Games behind each rating, for players the population gave none.
    #[serde(default = "default_seasoned_games")]
    pub games: u32,
}

fn default_seasoned_games() -> u32 {
    50
}

fn ping(key: &str, v: f64) -> Result<(), ParamError> {
    if !(v.is_finite() && (0.0..=f64::from(MAX_PING_MS)).contains(&v)) {
        return Err(ParamError::new(
            key,
            format!("must be a ping in ms from 0 to {MAX_PING_MS}, got {v}"),
        ));
    }
    Ok(())
}

fn names(key: &str, names: &[&str], max: usize) -> Result<(), ParamError> {
    if names.is_empty() || names.len() > max {
        return Err(ParamError::new(
            key,
            format!("needs 1 to {max} entries, got {}", names.len()),
        ));
    }
    for (i, n) in names.iter().enumerate() {
        if n.trim().is_empty() {
            return Err(ParamError::new(key, "names must not be empty"));
        }
        if names[..i].contains(n) {
            return Err(ParamError::new(key, format!("`{n}` is named twice")));
        }
    }
    Ok(())
}

impl RegionsSection {
    /// Checks the section; keys in errors are relative to `[regions]`.
    pub fn validate(&self) -> Result<(), ParamError> {
        let dcs: Vec<&str> = self.data_centres.iter().map(String::as_str).collect();
        names("data_centres", &dcs, MAX_DATA_CENTRES)?;
        let homes: Vec<&str> = self.homes.iter().map(|h| h.name.as_str()).collect();
        names("homes", &homes, MAX_HOMES)?;
        for (i, h) in self.homes.iter().enumerate() {
            if !(h.share.is_finite() && h.share >= 0.0) {
                return Err(ParamError::new(
                    format!("homes[{i}].share"),
                    format!("must be zero or more, got {}", h.share),
                ));
            }
            if h.ping_ms.len() != dcs.len() {
                return Err(ParamError::new(
                    format!("homes[{i}].ping_ms"),
                    format!(
                        "needs one ping per data centre ({}), got {}",
                        dcs.len(),
                        h.ping_ms.len()
                    ),
                ));
            }
            for &p in &h.ping_ms {
                ping(&format!("homes[{i}].ping_ms"), p)?;
            }
        }
        if self.homes.iter().all(|h| h.share == 0.0) {
            return Err(ParamError::new("homes", "shares must not all be zero"));
        }
        if !(self.ping_spread.is_finite() && (0.0..=2.0).contains(&self.ping_spread)) {
            return Err(ParamError::new(
                "ping_spread",
                format!(
                    "must be a log-normal sigma from 0 to 2, got {}",
                    self.ping_spread
                ),
            ));
        }
        ping("min_ping_ms", self.min_ping_ms)?;
        self.validate_limits()
    }

    /// The latency limit and its expansions: what a ruleset's latency rule
    /// replaces, checked before it does so that a mistake in the file is
    /// named rather than dropped.
    pub fn validate_limits(&self) -> Result<(), ParamError> {
        ping("max_ping_ms", self.max_ping_ms)?;
        if self.expansions.len() > MAX_EXPANSIONS {
            return Err(ParamError::new(
                "expansions",
                format!(
                    "may have at most {MAX_EXPANSIONS} steps, got {}",
                    self.expansions.len()
                ),
            ));
        }
        let (mut after, mut limit) = (SimDuration::ZERO, self.max_ping_ms);
        for (i, e) in self.expansions.iter().enumerate() {
            let key = |k: &str| format!("expansions[{i}].{k}");
            if e.after.0 <= after {
                return Err(ParamError::new(
                    key("after"),
                    "must be later than the step before (or than 0s); waits are absolute, as FlexMatch's waitTimeSeconds",
                ));
            }
            ping(&key("max_ping_ms"), e.max_ping_ms)?;
            // Equal is allowed (a step that changes nothing), so that
            // `--set regions.max_ping_ms=...` can start at a later step's limit.
            if e.max_ping_ms < limit {
                return Err(ParamError::new(
                    key("max_ping_ms"),
                    format!(
                        "must not be tighter than the step before ({limit}), got {}",
                        e.max_ping_ms
                    ),
                ));
            }
            (after, limit) = (e.after.0, e.max_ping_ms);
        }
        Ok(())
    }

    /// The engine's form: pings as whole milliseconds, the zero-wait limit
    /// as the first step.
    pub fn to_engine(&self) -> RegionsConfig {
        let ms = |v: f64| v.round() as u16;
        let mut steps = vec![LatencyStep {
            after: SimDuration::ZERO,
            max_ping_ms: ms(self.max_ping_ms),
        }];
        steps.extend(self.expansions.iter().map(|e| LatencyStep {
            after: e.after.0,
            max_ping_ms: ms(e.max_ping_ms),
        }));
        // Whole milliseconds may merge two steps (100.2 then 100.4): keep
        // only steps that loosen the limit.
        steps.dedup_by(|later, earlier| later.max_ping_ms <= earlier.max_ping_ms);
        RegionsConfig {
            data_centres: self.data_centres.clone(),
            homes: self
                .homes
                .iter()
                .map(|h| Home {
                    name: h.name.clone(),
                    share: h.share,
                    ping_ms: h.ping_ms.clone(),
                })
                .collect(),
            ping_spread: self.ping_spread,
            min_ping_ms: ms(self.min_ping_ms),
            steps,
        }
    }
}

impl SeasonedSection {
    /// Checks the block; keys in errors are relative to it.
    pub fn validate(&self) -> Result<(), ParamError> {
        if !(self.correlation > 0.0 && self.correlation <= 1.0) {
            return Err(ParamError::new(
                "correlation",
                format!("must be above 0 and at most 1, got {}", self.correlation),
            ));
        }
        if !(self.deviation.is_finite() && self.deviation >= 0.0) {
            return Err(ParamError::new(
                "deviation",
                format!("must be zero or more, got {}", self.deviation),
            ));
        }
        if self.games > 1_000_000 {
            return Err(ParamError::new(
                "games",
                format!("may be at most 1000000, got {}", self.games),
            ));
        }
        Ok(())
    }

    pub fn to_engine(&self) -> Seasoned {
        Seasoned {
            correlation: self.correlation,
            deviation: self.deviation,
            games: self.games,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::from_text;
    use crate::run::run_keeping;
    use std::path::Path;

    /// Ratings drawn with Pearson correlation rho to normal skill have a
    /// rank correlation of (6/pi) asin(rho/2) with it: 0.8910 for 0.9. The
    /// summary's first point, at time zero before any match, must show it.
    #[test]
    fn a_seasoned_ladder_starts_with_its_stated_correlation() {
        let text = |seasoned: &str| {
            format!(
                r#"
[run]
name = "seasoned"
duration = "1h"
[population]
size = 20000
skill = {{ dist = "normal", mean = 1500, sd = 300 }}
{seasoned}
[arrivals]
rate_per_s = 1
[policy]
kind = "fixed-limit"
[rating]
system = "glicko1"
[outcome]
model = "logistic"
duration = "1m"
"#
            )
        };
        let run = |seasoned: &str| {
            let s = from_text(&text(seasoned), Path::new("t.toml"), &[])
                .expect("valid")
                .scenario;
            run_keeping(&s, 3).summary
        };
        let seasoned = run("seasoned = { correlation = 0.9, deviation = 60 }");
        let first = &seasoned["rating_skill_rank_corr_series"][0];
        assert_eq!(first["t_s"], 0.0);
        let want = 6.0 / std::f64::consts::PI * (0.45f64).asin();
        let got = first["corr"].as_f64().unwrap();
        // 20,000 players: the standard error is about 0.0015.
        assert!((got - want).abs() < 0.008, "{got} vs {want}");
        // Without it nobody has played at time zero: no point there.
        let fresh = run("");
        assert_ne!(fresh["rating_skill_rank_corr_series"][0]["t_s"], 0.0);
    }

    #[test]
    fn the_zero_wait_limit_is_the_first_step_and_steps_that_loosen_nothing_go() {
        let section = RegionsSection {
            data_centres: vec!["eu".into()],
            homes: vec![HomeSection {
                name: "europe".into(),
                share: 1.0,
                ping_ms: vec![30.0],
            }],
            ping_spread: 0.0,
            min_ping_ms: 5.0,
            max_ping_ms: 150.0,
            expansions: vec![
                ExpansionSection {
                    after: HumanDuration::from_secs(30),
                    max_ping_ms: 150.0,
                },
                ExpansionSection {
                    after: HumanDuration::from_secs(90),
                    max_ping_ms: 200.4,
                },
            ],
        };
        section.validate().expect("an equal step is allowed");
        let steps = section.to_engine().steps;
        assert_eq!(
            steps,
            vec![
                LatencyStep {
                    after: SimDuration::ZERO,
                    max_ping_ms: 150
                },
                LatencyStep {
                    after: SimDuration::from_secs(90),
                    max_ping_ms: 200
                },
            ]
        );
        let tighter = RegionsSection {
            max_ping_ms: 250.0,
            ..section
        };
        assert_eq!(
            tighter.validate().unwrap_err().key,
            "expansions[0].max_ping_ms"
        );
    }
}
