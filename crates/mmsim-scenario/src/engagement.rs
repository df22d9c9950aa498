//! The `[engagement]` section: players who stop after a match, for a while
//! or for good, and come back. Its own file so the other sections' schema
//! stays as it was, and a scenario without it reads, validates and hashes
//! exactly as before.

use super::Scenario;
use mmsim_core::engine::EngagementConfig;
use mmsim_core::model::check::{finite, unit};
use mmsim_core::model::churn::{Churn, ChurnModel, Recent, SequenceChurn, MAX_HISTORY};
use mmsim_core::model::{HumanDuration, ParamError, SimDuration};
use mmsim_core::policy::PolicyConfig;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Largest coefficient allowed: beyond it the logistic is 0 or 1 anyway.
pub const MAX_COEFFICIENT: f64 = 50.0;
/// Longest mean time away: a year.
pub const MAX_AWAY_S: u64 = 365 * 86_400;
/// Longest run with engagement (its hourly series is kept in memory).
pub const MAX_ENGAGEMENT_DURATION_S: u64 = 366 * 86_400;

/// Which churn model `[engagement]` runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ChurnKind {
    /// The logistic model of the result, losing streak, lopsidedness and wait.
    #[default]
    Logistic,
    /// The EOMM paper's table of churn by the recent win/loss sequence
    /// (`[engagement.churn]`).
    Sequence,
}

impl ChurnKind {
    fn is_logistic(&self) -> bool {
        *self == ChurnKind::Logistic
    }
}

/// `[engagement]`: the churn model and the time away.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EngagementSection {
    /// `logistic` (the coefficients below) or `sequence` (the table
    /// `churn`). Left out of the serialised section when logistic, so a
    /// scenario written before the key hashes as it did.
    #[serde(skip_serializing_if = "ChurnKind::is_logistic")]
    pub model: ChurnKind,
    /// With `model = "sequence"`: churn probability by recent results,
    /// keys of W and L, oldest first, this match last ("LLW": lost two,
    /// then won this one). Empty: `SequenceChurn::DEFAULT_TABLE`.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub churn: BTreeMap<String, f64>,
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
            model: ChurnKind::Logistic,
            churn: BTreeMap::new(),
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
    /// The churn model the engine draws from and `eomm`, `worst` predict
    /// with.
    pub fn model(&self) -> Churn {
        match self.model {
            ChurnKind::Logistic => Churn::Logistic(ChurnModel {
                base_logit: self.base_logit,
                loss: self.loss,
                losing_streak: self.losing_streak,
                lopsided: self.lopsided,
                wait_per_min: self.wait_per_min,
            }),
            ChurnKind::Sequence if self.churn.is_empty() => Churn::Sequence(SequenceChurn::new(
                SequenceChurn::DEFAULT_TABLE.iter().copied(),
            )),
            ChurnKind::Sequence => Churn::Sequence(SequenceChurn::new(
                self.churn.iter().map(|(k, v)| (k.as_str(), *v)),
            )),
        }
    }

    /// The table's keys and values; keys relative to the section.
    fn validate_table(&self) -> Result<(), ParamError> {
        if self.model == ChurnKind::Logistic {
            if !self.churn.is_empty() {
                return Err(ParamError::new(
                    "churn",
                    "is read only with model = \"sequence\": set engagement.model = \"sequence\" to use the table, or remove it",
                ));
            }
            return Ok(());
        }
        for (key, &v) in &self.churn {
            if Recent::parse(key).is_none() {
                return Err(ParamError::new(
                    format!("churn.{key}"),
                    format!(
                        "must be 1 to {MAX_HISTORY} results, each W (won) or L (lost), oldest first and this match last (\"LLW\"), got `{key}`"
                    ),
                ));
            }
            if !(v > 0.0 && v < 1.0) {
                return Err(ParamError::new(
                    format!("churn.{key}"),
                    format!("must be a churn probability greater than 0 and less than 1, got {v}"),
                ));
            }
        }
        for key in ["W", "L"] {
            if !self.churn.is_empty() && !self.churn.contains_key(key) {
                return Err(ParamError::new(
                    "churn",
                    format!(
                        "needs the key `{key}`: a player's results fall back to it when no longer key fits (a new player's first match)"
                    ),
                ));
            }
        }
        Ok(())
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
        self.validate_table()?;
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
/// `eomm` and `worst` policies, which predict with its model. The paper's
/// round matchers (those two, `skill`, `random`) pair solo players, in 1v1
/// only. Full keys.
pub fn validate(s: &Scenario) -> Result<(), ParamError> {
    let predicts = matches!(s.policy, PolicyConfig::Eomm(_) | PolicyConfig::Worst(_));
    let pairs_solos =
        predicts || matches!(s.policy, PolicyConfig::Skill(_) | PolicyConfig::Random(_));
    let solo_format = || {
        if pairs_solos && (s.format.teams != 2 || s.format.team_size != 1) {
            return Err(ParamError::new(
                "policy.kind",
                format!(
                    "`{}` pairs solo players: it needs match.teams = 2 and match.team_size = 1, got {} and {}",
                    s.policy.name(),
                    s.format.teams,
                    s.format.team_size
                ),
            ));
        }
        Ok(())
    };
    let Some(e) = &s.engagement else {
        if predicts {
            return Err(ParamError::new(
                "policy.kind",
                format!(
                    "`{}` predicts churn with the engagement model: add an [engagement] section",
                    s.policy.name()
                ),
            ));
        }
        return solo_format();
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
    solo_format()
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

    #[test]
    fn the_sequence_table_names_the_bad_key() {
        let err = |text: &str| {
            let e: EngagementSection = toml::from_str(text).unwrap();
            e.validate().unwrap_err()
        };
        let seq = "model = \"sequence\"\n[churn]\n";
        let e = err(&format!("{seq}W = 0.02\nL = 0.05\nLDL = 0.1"));
        assert_eq!(e.key, "churn.LDL");
        assert!(e.message.contains("W (won) or L (lost)"), "{}", e.message);
        let e = err(&format!("{seq}W = 0.02\nL = 1.0"));
        assert_eq!(e.key, "churn.L");
        assert!(e.message.contains("less than 1, got 1"), "{}", e.message);
        let e = err(&format!("{seq}W = 0.02\nLL = 0.1"));
        assert_eq!(e.key, "churn");
        assert!(e.message.contains("needs the key `L`"), "{}", e.message);
        let e = err(&format!("{seq}W = 0.02\nL = 0.05\nLLLLLLLLL = 0.3"));
        assert_eq!(e.key, "churn.LLLLLLLLL");
        // A table without model = "sequence" would be ignored: refused.
        let e = err("[churn]\nW = 0.02\nL = 0.05");
        assert_eq!(e.key, "churn");
        assert!(e.message.contains("model = \"sequence\""), "{}", e.message);
        assert!(toml::from_str::<EngagementSection>("model = \"markov\"").is_err());
        // No table: the default one.
        let e: EngagementSection = toml::from_str("model = \"sequence\"").unwrap();
        assert!(e.validate().is_ok());
        assert!(matches!(e.model(), Churn::Sequence(_)));
    }
}
