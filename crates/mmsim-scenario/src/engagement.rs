//! The `[engagement]` section: players who stop after a match, for a while
//! or for good, and come back. Its own file so the other sections' schema
//! stays as it was, and a scenario without it reads, validates and hashes
//! exactly as before.

use super::Scenario;
use mmsim_core::engine::EngagementConfig;
use mmsim_core::model::check::{finite, unit};
use mmsim_core::model::churn::ChurnModel;
use mmsim_core::model::{HumanDuration, ParamError, SimDuration};
use mmsim_core::policy::PolicyConfig;
use serde::{Deserialize, Serialize};

/// Largest coefficient allowed: beyond it the logistic is 0 or 1 anyway.
pub const MAX_COEFFICIENT: f64 = 50.0;
/// Longest mean time away: a year.
pub const MAX_AWAY_S: u64 = 365 * 86_400;
/// Longest run with engagement (its hourly series is kept in memory).
pub const MAX_ENGAGEMENT_DURATION_S: u64 = 366 * 86_400;

/// `[engagement]`: the logistic churn model and the time away.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EngagementSection {
    /// The logit of stopping after a won, even match with no wait.
    pub base_logit: f64,
    /// Added to the logit after a loss.
    pub loss: f64,
    /// Added per loss in the current losing streak (this match included).
    pub losing_streak: f64,
    /// Per unit of win-probability gap `|2 P - 1|` (true skill) of the match.
    pub lopsided: f64,
    /// Per minute waited for the match.
    pub wait_per_min: f64,
    /// Of the players who stop, the share who never come back.
    pub for_good_share: f64,
    /// Mean (exponential) time away of the others.
    pub away_mean: HumanDuration,
}

impl Default for EngagementSection {
    fn default() -> Self {
        let m = ChurnModel::default();
        EngagementSection {
            base_logit: m.base_logit,
            loss: m.loss,
            losing_streak: m.losing_streak,
            lopsided: m.lopsided,
            wait_per_min: m.wait_per_min,
            for_good_share: 0.05,
            away_mean: HumanDuration(SimDuration::from_secs(16 * 3600)),
        }
    }
}

impl EngagementSection {
    pub fn model(&self) -> ChurnModel {
        ChurnModel {
            base_logit: self.base_logit,
            loss: self.loss,
            losing_streak: self.losing_streak,
            lopsided: self.lopsided,
            wait_per_min: self.wait_per_min,
        }
    }

    pub fn to_engine(&self) -> EngagementConfig {
        EngagementConfig {
            model: self.model(),
            for_good_share: self.for_good_share,
            away_mean: self.away_mean.0,
        }
    }

    /// Keys are relative to the section.
    pub fn validate(&self) -> Result<(), ParamError> {
        for (key, v) in [
            ("base_logit", self.base_logit),
            ("loss", self.loss),
            ("losing_streak", self.losing_streak),
            ("lopsided", self.lopsided),
            ("wait_per_min", self.wait_per_min),
        ] {
            finite(key, v)?;
            if v.abs() > MAX_COEFFICIENT {
                return Err(ParamError::new(
                    key,
                    format!("must lie within [-50, 50] (a logit past that is certain), got {v}"),
                ));
            }
        }
        unit("for_good_share", self.for_good_share)?;
        let away = self.away_mean.0;
        if away.is_zero() || away > SimDuration::from_secs(MAX_AWAY_S) {
            return Err(ParamError::new(
                "away_mean",
                format!(
                    "must be longer than 0s and at most a year (\"365d\"), got {}s",
                    self.away_mean.secs()
                ),
            ));
        }
        Ok(())
    }
}

/// What `[engagement]` needs of the rest of the scenario, and what needs
/// it: the section's own keys, the sections it cannot run with, and the
/// `eomm` policy, which predicts with its model. Full keys.
pub fn validate(s: &Scenario) -> Result<(), ParamError> {
    let Some(e) = &s.engagement else {
        if matches!(s.policy, PolicyConfig::Eomm(_)) {
            return Err(ParamError::new(
                "policy.kind",
                "`eomm` predicts churn with the engagement model: add an [engagement] section",
            ));
        }
        return Ok(());
    };
    e.validate()
        .map_err(|err| ParamError::new(format!("engagement.{}", err.key), err.message))?;
    if s.arrivals.trace.is_some() {
        return Err(ParamError::new(
            "engagement",
            "cannot be used with arrivals.trace: a trace fixes who queues when",
        ));
    }
    if s.backfill.is_some() {
        return Err(ParamError::new(
            "engagement",
            "cannot be used with [backfill]: a backfilled player has no wait for the model",
        ));
    }
    if s.run.duration.0 > SimDuration::from_secs(MAX_ENGAGEMENT_DURATION_S) {
        return Err(ParamError::new(
            "run.duration",
            format!(
                "may be at most 366 days with [engagement], got {}s",
                s.run.duration.secs()
            ),
        ));
    }
    if matches!(s.policy, PolicyConfig::Eomm(_)) && (s.format.teams != 2 || s.format.team_size != 1)
    {
        return Err(ParamError::new(
            "policy.kind",
            format!(
                "`eomm` pairs solo players: it needs match.teams = 2 and match.team_size = 1, got {} and {}",
                s.format.teams, s.format.team_size
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_fill_in_and_bad_values_name_their_key() {
        let e: EngagementSection = toml::from_str("loss = 1.5").unwrap();
        assert_eq!(e.loss, 1.5);
        assert_eq!(e.base_logit, -4.0);
        assert!(e.validate().is_ok());
        let bad: EngagementSection = toml::from_str("wait_per_min = 80").unwrap();
        assert_eq!(bad.validate().unwrap_err().key, "wait_per_min");
        let bad: EngagementSection = toml::from_str("for_good_share = 1.5").unwrap();
        assert_eq!(bad.validate().unwrap_err().key, "for_good_share");
        let bad: EngagementSection = toml::from_str("away_mean = \"0s\"").unwrap();
        assert_eq!(bad.validate().unwrap_err().key, "away_mean");
        assert!(toml::from_str::<EngagementSection>("lose = 1").is_err());
    }
}
