//! `mmsim rebalance FILE --method M`: a designer pastes a list of players
//! (party, attributes such as MMR), and optionally an AccelByte ruleset's
//! `alliance` and `matching_rule` blocks, and sees the teams a method forms
//! and their distances, without writing a scenario. It is a tool over the
//! team formers, not one of them, so it lives beside `teams`, not inside.
//!
//! `input` reads and checks the JSON, `run` forms the teams with
//! `teams::accelbyte`, `teams::balanced` or `teams::abba` and measures them,
//! `render` prints the result as text.
//!
//! Input (JSON): either a bare array of players, or an object:
//!
//! ```json
//! {
//!   "alliance": {"min_number": 2, "max_number": 2,
//!                "player_min_number": 3, "player_max_number": 3},
//!   "matching_rule": [{"attribute": "mmr", "criteria": "distance"}],
//!   "players": [
//!     {"name": "Player A", "party": "Party 1", "mmr": 70},
//!     {"name": "Player B", "party": "Party 2", "mmr": 60, "team": 1}
//!   ]
//! }
//! ```
//!
//! Top-level keys: `players` (required), `teams` and `team_size` (strict
//! teams; default 2 teams sharing the players equally), or `alliance`
//! (AccelByte's team-count and team-size ranges), `attributes` (names to
//! balance), `matching_rule` (AccelByte's; its `attribute` names are
//! balanced when `attributes` is absent), `auto_backfill`, `name`,
//! `description` (accepted for pasting, not used). Player keys: `name` or
//! `id` (string or number), `party` (string or number; absent = solo),
//! `team` (1-based: already in the session on that team, a backfill),
//! `tier`, `category` and `win_rate` (for `abba`), `attributes` (an object
//! of numbers), and any other numeric key is an attribute too. Without
//! `attributes` or `matching_rule`, every attribute found is balanced.

mod input;
mod render;
mod run;
#[cfg(test)]
mod tests;

pub use input::{parse_input, InputError, InputPlayer, RebalanceInput};
pub use run::{
    rebalance, CandidateReport, PartyReport, RebalanceResult, TeamReport, MAX_LISTED_CANDIDATES,
};

use crate::teams::AccelByteMode;
use std::str::FromStr;

/// Methods `mmsim rebalance` offers: AccelByte's (the ruleset's choice with
/// `auto`, or one named), or one of mmsim's own formers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RebalanceMethod {
    AccelByte(AccelByteMode),
    Balanced,
    Abba,
}

impl RebalanceMethod {
    /// In the order `--method` lists them.
    pub const ALL: [RebalanceMethod; 6] = [
        RebalanceMethod::AccelByte(AccelByteMode::Auto),
        RebalanceMethod::AccelByte(AccelByteMode::Permutation),
        RebalanceMethod::AccelByte(AccelByteMode::Combination),
        RebalanceMethod::AccelByte(AccelByteMode::Greedy),
        RebalanceMethod::Balanced,
        RebalanceMethod::Abba,
    ];

    pub fn name(self) -> &'static str {
        match self {
            RebalanceMethod::AccelByte(AccelByteMode::Auto) => "accelbyte",
            RebalanceMethod::AccelByte(AccelByteMode::Permutation) => "permutation",
            RebalanceMethod::AccelByte(AccelByteMode::Combination) => "combination",
            RebalanceMethod::AccelByte(AccelByteMode::Greedy) => "greedy",
            RebalanceMethod::Balanced => "balanced",
            RebalanceMethod::Abba => "abba",
        }
    }
}

impl FromStr for RebalanceMethod {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if s == "auto" {
            return Ok(RebalanceMethod::AccelByte(AccelByteMode::Auto));
        }
        RebalanceMethod::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = RebalanceMethod::ALL.iter().map(|m| m.name()).collect();
                format!("unknown method `{s}`; allowed: {}", names.join(", "))
            })
    }
}
