//! Team formation: split the parties of a formed match into teams, never
//! splitting a party.
//!
//! Methods, one file each, declared once in `plugins!` below: `balanced`
//! (the default), `abba` (Armored Warfare), `accelbyte` (permutation,
//! combination, greedy). A new method is one file here and one line there.
//! `dota` holds the Dota post's party arithmetic, `fill` the exact-fill
//! checks every method and the scenario loader share. The `mmsim rebalance`
//! command, a tool over these methods, is the top-level `rebalance` module.

pub mod dota;
pub mod fill;
pub mod roles;

#[cfg(test)]
mod proptests;

pub use abba::{abba_split, AbbaOptions, AbbaOutcome, AbbaPlayer};
pub use accelbyte::AccelByteMode;
pub use balanced::{balanced_split, RatingSource};
pub use dota::PartyAdjust;
pub use fill::{can_fill, can_place_parties, check_fill, FillError, Packing};
pub use roles::{
    closed_lanes, hall_subsets, Composition, PartyRoles, PoolRoles, RoleFill, RoleWindows,
};

use crate::model::{ParamError, Player};
use rand_pcg::Pcg64;

/// A team-formation method. The engine calls `split` once when a match
/// forms, with every party of the match (each a list of its members); it
/// returns, per team, the indices into `parties` of the parties on that team,
/// or `None` when the parties cannot fill the teams exactly. It may use only
/// the given random stream and must not change the players.
pub trait TeamFormer: Send + Sync {
    /// The parties of one match split into `teams` teams of `team_size` players: per team, indices into `parties`; `None` when they cannot fill the teams exactly.
    fn split(
        &self,
        parties: &[Vec<&Player>],
        teams: usize,
        team_size: usize,
        rng: &mut Pcg64,
    ) -> Option<Vec<Vec<usize>>>;
}

crate::model::registry::plugins! {
    /// The scenario's `[teams]` section: `method` picks the former, the other
    /// keys are that method's parameters. Every `validate` also gets the
    /// match format (teams, players per team).
    pub enum TeamsConfig tagged "method" builds TeamFormer,
        validate(teams: usize, team_size: usize), catalogue CATALOGUE {
        "balanced" => Balanced(balanced::BalancedParams) builds Balanced,
        "abba" => Abba(abba::AbbaParams) builds Abba,
        "accelbyte" => Accelbyte(accelbyte::AccelByteParams) builds AccelByte,
    }
}

impl Default for TeamsConfig {
    fn default() -> Self {
        TeamsConfig::Balanced(BalancedParams::default())
    }
}

impl TeamsConfig {
    /// Checks the parameters and that the method fits the match format
    /// (`abba` needs exactly 2 teams; AccelByte's combination fewer than 12
    /// players). Keys are relative to `[teams]`.
    pub fn validate(&self, teams: usize, team_size: usize) -> Result<(), ParamError> {
        if teams == 0 || team_size == 0 {
            return Err(ParamError::new(
                "method",
                format!("team formation needs at least one team of one player, got {teams} teams of {team_size}"),
            ));
        }
        self.validate_params(teams, team_size)
    }
}
