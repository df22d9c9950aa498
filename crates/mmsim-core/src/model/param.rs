//! What a scenario parameter may be wrong with, and durations written the way
//! people write them ("90s", "30m", "24h").

use super::SimDuration;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// A parameter that failed validation: the dotted key below its section
/// (for example `limit` or `schedule.rate_per_s`) and what is allowed.
/// The scenario loader prefixes the section and finds the line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamError {
    /// The dotted key below its section (`limit`, `schedule.rate_per_s`).
    pub key: String,
    /// What is wrong and what is allowed, as users read it after the key.
    pub message: String,
}

impl ParamError {
    /// An error on `key` (below its section) saying `message`.
    pub fn new(key: impl Into<String>, message: impl Into<String>) -> Self {
        ParamError {
            key: key.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}`: {}", self.key, self.message)
    }
}

impl std::error::Error for ParamError {}

/// The range checks every plug-in's `validate` shares, in one wording each.
/// Each returns an error naming `key` and the value it got.
pub mod check {
    use super::{ParamError, SimDuration};

    /// A finite number above 0.
    pub fn positive(key: &str, v: f64) -> Result<(), ParamError> {
        if v.is_finite() && v > 0.0 {
            Ok(())
        } else {
            Err(ParamError::new(
                key,
                format!("must be a number above 0, got {v}"),
            ))
        }
    }

    /// A finite number of 0 or more.
    pub fn non_negative(key: &str, v: f64) -> Result<(), ParamError> {
        if v.is_finite() && v >= 0.0 {
            Ok(())
        } else {
            Err(ParamError::new(
                key,
                format!("must be zero or more, got {v}"),
            ))
        }
    }

    /// Any finite number.
    pub fn finite(key: &str, v: f64) -> Result<(), ParamError> {
        if v.is_finite() {
            Ok(())
        } else {
            Err(ParamError::new(
                key,
                format!("must be a finite number, got {v}"),
            ))
        }
    }

    /// A share or a probability: from 0 to 1.
    pub fn unit(key: &str, v: f64) -> Result<(), ParamError> {
        if (0.0..=1.0).contains(&v) {
            Ok(())
        } else {
            Err(ParamError::new(
                key,
                format!("must be between 0 and 1, got {v}"),
            ))
        }
    }

    /// A timer interval: a zero one would fire forever at the same instant.
    pub fn interval(key: &str, d: SimDuration) -> Result<(), ParamError> {
        if d.is_zero() {
            Err(ParamError::new(key, "must be longer than 0s, e.g. \"1s\""))
        } else {
            Ok(())
        }
    }
}

/// A duration in a scenario file: a string with a unit (`"250ms"`, `"90s"`,
/// `"30m"`, `"24h"`, `"7d"`, combinations like `"1h30m"`) or a bare number of
/// seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct HumanDuration(pub SimDuration);

impl HumanDuration {
    /// The duration in seconds.
    pub fn secs(self) -> f64 {
        self.0.as_secs_f64()
    }
    /// A duration of `s` whole seconds.
    pub fn from_secs(s: u64) -> Self {
        HumanDuration(SimDuration::from_secs(s))
    }
}

/// Why a duration's text was refused; the message names the text and says
/// how to write one.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum DurationError {
    /// Nothing but blanks.
    #[error("empty duration; write it like \"90s\", \"30m\" or \"24h\"")]
    Empty,
    /// A unit (or anything else) where a number should start.
    #[error("`{0}` is not a duration; write a number then a unit: ms, s, m, h or d (\"90s\", \"1h30m\")")]
    NotADuration(String),
    /// The text, and the run of digits and points that is no number.
    #[error("`{0}` has a bad number `{1}`")]
    BadNumber(String, String),
    /// The text, and the unit mmsim does not know.
    #[error("`{0}` has unknown unit `{1}`; allowed units: ms, s, m, h, d")]
    UnknownUnit(String, String),
    /// Longer than `MAX_DURATION_DAYS`; the length given, in days.
    #[error("a duration may be at most {MAX_DURATION_DAYS}d (a simulated year), got {0:.0}d")]
    TooLong(f64),
}

/// A duration as a scenario writes it (`"90s"`, `"1h30m"`, `"250ms"`, or a
/// bare number of seconds), to the millisecond.
pub fn parse_duration(text: &str) -> Result<SimDuration, DurationError> {
    let s = text.trim();
    if s.is_empty() {
        return Err(DurationError::Empty);
    }
    let mut total_ms: f64 = 0.0;
    let mut rest = s;
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if num_len == 0 {
            return Err(DurationError::NotADuration(text.to_string()));
        }
        let value: f64 = rest[..num_len]
            .parse()
            .map_err(|_| DurationError::BadNumber(text.to_string(), rest[..num_len].to_string()))?;
        rest = &rest[num_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let unit = rest[..unit_len].trim();
        let ms_per = match unit {
            "ms" => 1.0,
            // A bare number is seconds, but only when it is the whole text.
            "" if num_len == s.len() => 1000.0,
            "s" => 1000.0,
            "m" | "min" => 60_000.0,
            "h" => 3_600_000.0,
            "d" => 86_400_000.0,
            _ => {
                return Err(DurationError::UnknownUnit(
                    text.to_string(),
                    unit.to_string(),
                ))
            }
        };
        total_ms += value * ms_per;
        rest = &rest[unit_len..];
    }
    check_bound(total_ms)?;
    Ok(SimDuration::from_ms(total_ms.round() as u64))
}

impl<'de> Deserialize<'de> for HumanDuration {
    /// A visitor rather than an untagged enum: serde's message for an
    /// untagged miss ("data did not match any variant") names neither what
    /// was given nor what is allowed.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = HumanDuration;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(
                    "a duration such as \"90s\", \"30m\" or \"1h30m\" (units ms, s, m, h, d), or a number of seconds",
                )
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<HumanDuration, E> {
                self.visit_f64(v as f64)
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<HumanDuration, E> {
                self.visit_f64(v as f64)
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<HumanDuration, E> {
                if !(v.is_finite() && v >= 0.0) {
                    return Err(E::custom(format!(
                        "a duration must be zero or more, got {v}"
                    )));
                }
                check_bound(v * 1000.0).map_err(E::custom)?;
                Ok(HumanDuration(SimDuration::from_secs_f64(v)))
            }
            fn visit_str<E: serde::de::Error>(self, t: &str) -> Result<HumanDuration, E> {
                parse_duration(t).map(HumanDuration).map_err(E::custom)
            }
        }
        d.deserialize_any(Visitor)
    }
}

/// The longest duration a scenario may give: a simulated year. Longer runs
/// would take days of CPU, and far longer ones overflowed the clock and
/// were clamped into runs that never end.
pub const MAX_DURATION_DAYS: f64 = 365.0;

fn check_bound(ms: f64) -> Result<(), DurationError> {
    if ms > MAX_DURATION_DAYS * 86_400_000.0 {
        return Err(DurationError::TooLong(ms / 86_400_000.0));
    }
    Ok(())
}

impl Serialize for HumanDuration {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let ms = self.0.as_ms();
        if ms.is_multiple_of(1000) {
            s.serialize_str(&format!("{}s", ms / 1000))
        } else {
            s.serialize_str(&format!("{ms}ms"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_as_people_write_them() {
        let ms = |t: &str| parse_duration(t).unwrap().as_ms();
        assert_eq!(ms("90s"), 90_000);
        assert_eq!(ms("30m"), 1_800_000);
        assert_eq!(ms("24h"), 86_400_000);
        assert_eq!(ms("1h30m"), 5_400_000);
        assert_eq!(ms("250ms"), 250);
        assert_eq!(ms("1.5s"), 1_500);
        assert_eq!(ms("2d"), 172_800_000);
        assert!(parse_duration("10 parsecs").is_err());
        assert!(parse_duration("").is_err());
        assert!(parse_duration("m5").is_err());
    }

    #[test]
    fn bare_numbers_are_seconds_and_negative_is_refused() {
        let d: HumanDuration = serde_json::from_str("12").unwrap();
        assert_eq!(d.0.as_ms(), 12_000);
        let d: HumanDuration = serde_json::from_str("0.5").unwrap();
        assert_eq!(d.0.as_ms(), 500);
        assert!(serde_json::from_str::<HumanDuration>("-1").is_err());
    }
}
