//! The `[acceptance]` (ready check) and `[backfill]` (players leaving
//! running matches, and their replacements) sections: their own file so the
//! schema of the other sections stays as it was, and a scenario without them
//! reads, validates and hashes exactly as before.

use mmsim_core::model::check::{non_negative, unit as probability};
use mmsim_core::model::{HumanDuration, ParamError, SimDuration};
use serde::{Deserialize, Serialize};

/// Longest ready check allowed: FlexMatch's `AcceptanceTimeoutSeconds` stops at 600.
pub const MAX_ACCEPT_TIMEOUT_S: u64 = 600;
/// Longest decline penalty allowed: a day, past which the player is gone anyway.
pub const MAX_DECLINE_PENALTY_S: u64 = 86_400;
/// Widest backfill window, in rating points.
pub const MAX_BACKFILL_WINDOW: f64 = 1e9;

/// `[acceptance]`: every player of a formed match must accept it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AcceptanceSection {
    /// Probability that one player accepts.
    pub accept_prob: f64,
    /// Time every player has to answer; answers come uniformly within it.
    #[serde(default = "default_timeout")]
    pub timeout: HumanDuration,
    /// Whether the tickets returned after a failed check keep their enqueue time.
    #[serde(default = "yes")]
    pub keep_wait: bool,
    /// How long a decliner's party waits before it queues again.
    #[serde(default)]
    pub decline_penalty: HumanDuration,
}

/// `[backfill]`: players leave running matches; their slots are refilled
/// from the queue before the policy's own pass.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BackfillSection {
    /// Probability that a playing player leaves within a given minute.
    pub leave_per_min: f64,
    /// Whether an open slot is refilled from the queue at all.
    #[serde(default = "yes")]
    pub fill: bool,
    /// Rating window around the leaver's rating when the slot opens (points each side).
    #[serde(default = "default_window")]
    pub window: f64,
    /// How fast the window widens while the slot stays open, points per second.
    #[serde(default = "default_widen")]
    pub widen_per_s: f64,
    /// The window never widens past this.
    #[serde(default = "default_max_window")]
    pub max_window: f64,
    /// True-skill points a team's strength loses per missing player.
    #[serde(default = "default_penalty")]
    pub short_handed_penalty: f64,
}

fn yes() -> bool {
    true
}
fn default_timeout() -> HumanDuration {
    HumanDuration::from_secs(20)
}
fn default_window() -> f64 {
    100.0
}
fn default_widen() -> f64 {
    5.0
}
fn default_max_window() -> f64 {
    1000.0
}
fn default_penalty() -> f64 {
    150.0
}

impl AcceptanceSection {
    /// Keys are relative to the section.
    pub fn validate(&self) -> Result<(), ParamError> {
        probability("accept_prob", self.accept_prob)?;
        if self.accept_prob == 0.0 {
            return Err(ParamError::new(
                "accept_prob",
                "must be above 0 (at 0 no match ever starts), got 0",
            ));
        }
        if self.timeout.0.is_zero() || self.timeout.0 > SimDuration::from_secs(MAX_ACCEPT_TIMEOUT_S)
        {
            return Err(ParamError::new(
                "timeout",
                format!(
                    "must be longer than 0s and at most {MAX_ACCEPT_TIMEOUT_S}s (\"10m\"), got {}s",
                    self.timeout.secs()
                ),
            ));
        }
        if self.decline_penalty.0 > SimDuration::from_secs(MAX_DECLINE_PENALTY_S) {
            return Err(ParamError::new(
                "decline_penalty",
                format!(
                    "may be at most a day (\"1d\"), got {}s",
                    self.decline_penalty.secs()
                ),
            ));
        }
        Ok(())
    }
}

impl BackfillSection {
    /// Keys are relative to the section.
    pub fn validate(&self) -> Result<(), ParamError> {
        probability("leave_per_min", self.leave_per_min)?;
        if self.leave_per_min >= 1.0 {
            return Err(ParamError::new(
                "leave_per_min",
                format!(
                    "must be below 1 (1 would mean leaving at once), got {}",
                    self.leave_per_min
                ),
            ));
        }
        for (key, v) in [
            ("window", self.window),
            ("widen_per_s", self.widen_per_s),
            ("max_window", self.max_window),
            ("short_handed_penalty", self.short_handed_penalty),
        ] {
            non_negative(key, v)?;
            if v > MAX_BACKFILL_WINDOW {
                return Err(ParamError::new(key, format!("may be at most 1e9, got {v}")));
            }
        }
        if self.max_window < self.window {
            return Err(ParamError::new(
                "max_window",
                format!(
                    "must be at least window ({}), got {}",
                    self.window, self.max_window
                ),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_fill_in_and_bad_values_name_their_key() {
        let a: AcceptanceSection = toml::from_str("accept_prob = 0.9").unwrap();
        assert_eq!(a.timeout.secs(), 20.0);
        assert!(a.keep_wait);
        assert!(a.validate().is_ok());
        let bad: AcceptanceSection =
            toml::from_str("accept_prob = 0.9\ntimeout = \"11m\"").unwrap();
        assert_eq!(bad.validate().unwrap_err().key, "timeout");
        let bad: AcceptanceSection = toml::from_str("accept_prob = 0").unwrap();
        assert_eq!(bad.validate().unwrap_err().key, "accept_prob");

        let b: BackfillSection = toml::from_str("leave_per_min = 0.01").unwrap();
        assert!(b.fill && b.validate().is_ok());
        let bad: BackfillSection =
            toml::from_str("leave_per_min = 0.01\nwindow = 50\nmax_window = 20").unwrap();
        assert_eq!(bad.validate().unwrap_err().key, "max_window");
        let bad: BackfillSection = toml::from_str("leave_per_min = 1.0").unwrap();
        assert_eq!(bad.validate().unwrap_err().key, "leave_per_min");
        assert!(toml::from_str::<BackfillSection>("leave_per_min = 0.1\nwidth = 3").is_err());
    }
}
