//! Rating systems: how the matchmaker's estimate of each player moves after
//! a game. The engine owns the ratings; a system only rewrites the copies it
//! is handed.

use crate::model::{ParamError, PerTeam, Rating, SimTime};

mod spread;
#[cfg(test)]
mod stretch;

pub use spread::LadderSpread;

/// A rating system. The engine calls `update` once per finished match, after
/// the outcome is known, with the pre-match ratings of every player grouped by
/// team; the system rewrites them in place. It must not depend on anything but
/// its arguments and its own parameters (no randomness, no hidden state), so a
/// rerun gives the same ratings.
pub trait RatingSystem: Send + Sync {
    /// Rating of a player who has never played.
    fn initial(&self) -> Rating;

    /// The rating as the matchmaker should see it at `now` (Glicko grows the
    /// deviation with time since the last game). Does not change `r`.
    fn current(&self, r: &Rating, _now: SimTime) -> Rating {
        *r
    }

    /// Rewrites `teams[i][j]`, the rating of member j of team i, after a match
    /// that team `winner` won. `weight` in (0, 1] scales every change (a match
    /// made by relaxing a rating, as in virtual-rating decay, counts for less).
    fn update(&self, teams: &mut [Vec<Rating>], winner: usize, weight: f64, now: SimTime);

    /// The games after which a rating counts among its ladder's settled
    /// ones, when the system reads other players against the ladder's
    /// spread ([`RatingSystem::update_on`]); `None` (the default) when it
    /// does not, and the engine then keeps no spread. Asked at every rated
    /// match (a constant; one call against the update it saves).
    fn settled_games(&self) -> Option<u32> {
        None
    }

    /// `update`, for a system that reads other players against `ladder`:
    /// the spread of the settled ratings of the ladder the match is rated
    /// on, as it stood before the match. The engine calls it instead of
    /// `update` when `settled_games` is `Some`, and moves the spread itself
    /// after storing the new ratings; the system may not change it.
    fn update_on(
        &self,
        teams: &mut [Vec<Rating>],
        winner: usize,
        weight: f64,
        now: SimTime,
        _ladder: &LadderSpread,
    ) {
        self.update(teams, winner, weight, now)
    }

    /// The system's own prediction that team `a` beats team `b`.
    fn win_probability(&self, a: &[Rating], b: &[Rating], now: SimTime) -> f64;
}

crate::model::registry::plugins! {
    /// The `[rating]` section of a scenario: which system, and its parameters
    /// beside the `system` key, e.g. `system = "glicko1"`, `c = 34.6`,
    /// `period = "1d"`.
    pub enum RatingConfig tagged "system" builds RatingSystem, catalogue CATALOGUE {
        "elo" => Elo(elo::EloParams) builds Elo,
        "glicko1" => Glicko1(glicko1::Glicko1Params) builds Glicko1,
        "glicko2" => Glicko2(glicko2::Glicko2Params) builds Glicko2,
        "trueskill" => Trueskill(trueskill::TrueSkillParams) builds TrueSkill,
        "win-rate" => WinRate(win_rate::WinRateParams) builds WinRate,
    }
}

/// Glicko-1 with its defaults, because it is what the gamedev 1v1 thread uses.
impl Default for RatingConfig {
    fn default() -> Self {
        RatingConfig::Glicko1(Glicko1Params::default())
    }
}

impl RatingConfig {
    /// Checks every parameter; the error's key is relative to `[rating]`.
    pub fn validate(&self) -> Result<(), ParamError> {
        self.validate_params()
    }
}

/// Marks a rating as having played one more game, at `now`.
pub(crate) fn stamp(r: &mut Rating, now: SimTime) {
    r.games = r.games.saturating_add(1);
    r.last_played = Some(now);
}

/// `old + weight * (new - old)`: how every system applies a partial weight.
pub(crate) fn blend(old: f64, new: f64, weight: f64) -> f64 {
    old + weight * (new - old)
}

/// The games a match stands for, seen from team `i`: `(opponent team,
/// score)`. Two teams play one game. With more, the winner is taken to have
/// beaten every other team and each other team to have lost to the winner;
/// losers are not ranked among themselves because the engine reports only a
/// winner. An out-of-range `winner` yields no games, so nothing moves.
pub(crate) fn games_of(i: usize, winner: usize, n_teams: usize) -> PerTeam<(usize, f64)> {
    if winner >= n_teams || i >= n_teams {
        PerTeam::new()
    } else if i == winner {
        (0..n_teams).filter(|&j| j != i).map(|j| (j, 1.0)).collect()
    } else {
        smallvec::smallvec![(winner, 0.0)]
    }
}

/// Mean of the ratings' values; 0 for an empty team so a malformed match
/// cannot produce NaN.
pub(crate) fn mean_value(team: &[Rating]) -> f64 {
    if team.is_empty() {
        0.0
    } else {
        team.iter().map(|r| r.value).sum::<f64>() / team.len() as f64
    }
}

/// The shared range checks, under the names the systems' files use.
pub(crate) use crate::model::check::{
    finite as check_finite, non_negative as check_non_negative, positive as check_positive,
};
