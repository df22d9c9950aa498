//! The `[roles]` section: a role queue (tank, healer, damage). Players draw
//! a main role by its share and may also accept a second one; the match
//! format names how many players of each role every team needs. Absent, the
//! queue has no roles and nothing here runs.

use super::Scenario;
use mmsim_core::engine::RoleDraw;
use mmsim_core::model::ParamError;
use mmsim_core::teams::roles::{Composition, MAX_ROLES, MAX_ROLE_TEAMS, MAX_ROLE_TEAM_SIZE};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// `[roles]`: `names`, `shares` of main roles, `second_prob`, `composition`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RolesSection {
    /// Role names, in the order `shares` lists them (a role's bit is its index).
    pub names: Vec<String>,
    /// Share of players whose main (first-choice) role each role is.
    pub shares: Vec<f64>,
    /// Probability a player also accepts a second role, drawn by the same
    /// shares among the other roles.
    #[serde(default)]
    pub second_prob: f64,
    /// Players of each role per team, by name; every named role appears and
    /// the counts add up to `match.team_size`.
    pub composition: BTreeMap<String, u32>,
}

impl RolesSection {
    /// Checks the section against the match format. Keys are full paths.
    pub fn validate(&self, teams: u32, team_size: u32) -> Result<(), ParamError> {
        let n = self.names.len();
        if n == 0 || n > MAX_ROLES {
            return Err(ParamError::new(
                "roles.names",
                format!("lists 1 to {MAX_ROLES} roles, got {n}"),
            ));
        }
        for (i, name) in self.names.iter().enumerate() {
            if name.is_empty() || self.names[..i].contains(name) {
                return Err(ParamError::new(
                    "roles.names",
                    format!(
                        "role names must be distinct and not empty, got {name:?} twice or empty"
                    ),
                ));
            }
        }
        if self.shares.len() != n {
            return Err(ParamError::new(
                "roles.shares",
                format!(
                    "needs one share per role in `roles.names` ({n}), got {}",
                    self.shares.len()
                ),
            ));
        }
        if self.shares.iter().any(|w| !(w.is_finite() && *w >= 0.0))
            || self.shares.iter().all(|w| *w == 0.0)
        {
            return Err(ParamError::new(
                "roles.shares",
                "shares are zero or more and not all zero, e.g. [0.2, 0.2, 0.6]",
            ));
        }
        if !(0.0..=1.0).contains(&self.second_prob) {
            return Err(ParamError::new(
                "roles.second_prob",
                format!("is a probability between 0 and 1, got {}", self.second_prob),
            ));
        }
        if teams as usize > MAX_ROLE_TEAMS || team_size as usize > MAX_ROLE_TEAM_SIZE {
            return Err(ParamError::new(
                "roles",
                format!(
                    "a role queue supports at most {MAX_ROLE_TEAMS} teams of at most {MAX_ROLE_TEAM_SIZE} players, got {teams} teams of {team_size}"
                ),
            ));
        }
        for (name, &count) in &self.composition {
            if !self.names.contains(name) {
                return Err(ParamError::new(
                    format!("roles.composition.{name}"),
                    format!("is not a role of `roles.names` ({})", self.names.join(", ")),
                ));
            }
            if count > team_size {
                return Err(ParamError::new(
                    format!("roles.composition.{name}"),
                    format!("may be at most match.team_size ({team_size}), got {count}"),
                ));
            }
        }
        if let Some(missing) = self
            .names
            .iter()
            .find(|r| !self.composition.contains_key(*r))
        {
            return Err(ParamError::new(
                "roles.composition",
                format!(
                    "needs a count for every role; `{missing}` is missing (0 if a team has none)"
                ),
            ));
        }
        let total: u32 = self.composition.values().sum();
        if total != team_size {
            return Err(ParamError::new(
                "roles.composition",
                format!("counts add up to {total}, but match.team_size is {team_size}"),
            ));
        }
        // A role that no player may take but a team needs leaves every
        // ticket waiting forever: refuse it now.
        for (r, name) in self.names.iter().enumerate() {
            if self.composition[name] > 0
                && self.shares[r] == 0.0
                && (self.second_prob == 0.0 || n == 1)
            {
                return Err(ParamError::new(
                    "roles.shares",
                    format!("no player would ever play `{name}`, which every team needs"),
                ));
            }
        }
        Ok(())
    }

    /// Slots per role in `names` order.
    pub fn slots(&self) -> Vec<u8> {
        self.names
            .iter()
            .map(|r| self.composition[r] as u8)
            .collect()
    }
}

/// The format's composition, if the scenario has a role queue.
pub fn composition(s: &Scenario) -> Option<Composition> {
    s.roles.as_ref().map(|r| Composition::new(&r.slots()))
}

/// What the engine draws players' roles from.
pub fn role_draw(s: &Scenario) -> Option<RoleDraw> {
    s.roles.as_ref().map(|r| RoleDraw {
        names: r.names.clone(),
        shares: r.shares.clone(),
        second_prob: r.second_prob,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn section(extra: &str) -> RolesSection {
        toml::from_str(&format!(
            "names = [\"tank\", \"healer\", \"damage\"]\nshares = [0.2, 0.2, 0.6]\n{extra}"
        ))
        .unwrap()
    }

    #[test]
    fn the_composition_must_add_up_to_the_team_size() {
        let ok = section("composition = { tank = 1, healer = 1, damage = 3 }");
        assert_eq!(ok.validate(2, 5), Ok(()));
        assert_eq!(ok.slots(), vec![1, 1, 3]);
        let e = ok.validate(2, 6).unwrap_err();
        assert_eq!(e.key, "roles.composition");
        assert!(e.message.contains("add up to 5"), "{}", e.message);
        let e = section("composition = { tank = 1, healer = 1 }")
            .validate(2, 2)
            .unwrap_err();
        assert!(e.message.contains("`damage` is missing"), "{}", e.message);
        let e = section("composition = { tank = 1, healer = 1, damage = 2, support = 1 }")
            .validate(2, 5)
            .unwrap_err();
        assert_eq!(e.key, "roles.composition.support");
    }

    #[test]
    fn shares_and_probabilities_are_checked() {
        let mut s = section("composition = { tank = 1, healer = 1, damage = 3 }");
        s.shares = vec![0.0, 0.5, 0.5];
        let e = s.validate(2, 5).unwrap_err();
        assert!(e.message.contains("`tank`"), "{}", e.message);
        s.second_prob = 0.2;
        assert_eq!(s.validate(2, 5), Ok(()));
        s.second_prob = 1.5;
        assert_eq!(s.validate(2, 5).unwrap_err().key, "roles.second_prob");
        s.second_prob = 0.0;
        s.shares = vec![1.0, 1.0, 1.0];
        assert_eq!(s.validate(2, 17).unwrap_err().key, "roles");
        // The quality policy fills and splits by roles too (its refusal is
        // lifted; `policy::quality::roles` checks its teams).
        assert_eq!(s.validate(2, 5), Ok(()));
        s.shares = vec![1.0];
        assert_eq!(s.validate(2, 5).unwrap_err().key, "roles.shares");
    }
}
