//! A player: hidden true skill that decides games, and ratings that the
//! rating system estimates and the matchmaker sees.

use super::SimTime;
use serde::{Deserialize, Serialize};

/// What a rating system knows about one player. Systems use the fields they
/// need: Elo only `value`; Glicko-1 adds `deviation`; Glicko-2 `volatility`;
/// mean-and-uncertainty systems read `value` as the mean and `deviation` as sigma.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rating {
    /// The rating itself, on the scale of the system (Elo ~1500; a win rate in percent for `win-rate`).
    pub value: f64,
    /// The uncertainty of `value` (Glicko's RD, TrueSkill's sigma), in rating points.
    pub deviation: f64,
    /// Glicko-2's volatility: how erratic the player's results are.
    pub volatility: f64,
    /// Games rated so far with this rating.
    pub games: u32,
    /// When the rating last changed; Glicko uses it to grow the deviation.
    pub last_played: Option<SimTime>,
}

impl Rating {
    /// A rating with these figures that has played no game yet.
    pub fn new(value: f64, deviation: f64, volatility: f64) -> Self {
        Rating {
            value,
            deviation,
            volatility,
            games: 0,
            last_played: None,
        }
    }
}

/// Armored Warfare's vehicle classes; team split balances their counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Category {
    /// Main battle tank.
    MainBattleTank,
    /// Light tank.
    LightTank,
    /// Tank destroyer.
    TankDestroyer,
    /// Armoured fighting vehicle.
    ArmouredFighter,
    /// Self-propelled artillery.
    Artillery,
}

/// One player of the population: hidden skill, ratings, record and attributes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Player {
    /// The player's index in the population.
    pub id: PlayerId,
    /// Hidden skill on the rating scale; only the outcome model reads it.
    pub true_skill: f64,
    /// Rating used when the player queues alone.
    pub rating: Rating,
    /// Rating used when the player queues in a party (the Dota post keeps both).
    pub party_rating: Rating,
    /// Matches played.
    pub games: u32,
    /// Matches won.
    pub wins: u32,
    /// Vehicle tier (Armored Warfare); 0 where the game has none.
    pub tier: u8,
    /// Vehicle class (Armored Warfare); `None` where the game has none.
    pub category: Option<Category>,
    /// Bit set of spoken languages; bit i is language i of the scenario's list.
    pub languages: u32,
    /// Bit set of the roles the player accepts in a role queue; bit i is
    /// role i of the scenario's `[roles]`; 0 when the scenario has none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub roles: u8,
    /// The role the player wants first (an index, whose bit is in `roles`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub main_role: u8,
    /// Win rate shown to the team split (Armored Warfare's "skill"), in [0, 1].
    pub win_rate: f64,
    /// Games after which the solo rating first lay within one deviation of
    /// true skill; `None` until then (and always for systems without a deviation).
    pub games_to_within_deviation: Option<u32>,
    /// Losses in a row up to the last match (kept only with `[engagement]`,
    /// whose model and policy read it; 0 otherwise).
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub losing_streak: u32,
    /// The last results (`[engagement]` only), for the sequence churn
    /// model and the policies that predict with it. Never written out.
    #[serde(skip)]
    pub recent: crate::model::churn::Recent,
}

use super::PlayerId;

fn is_zero(v: &u8) -> bool {
    *v == 0
}

fn is_zero_u32(v: &u32) -> bool {
    *v == 0
}

impl Player {
    /// A player with `true_skill` and `rating` (alone and in a party), no games and no attributes.
    pub fn new(id: PlayerId, true_skill: f64, rating: Rating) -> Self {
        Player {
            id,
            true_skill,
            rating,
            party_rating: rating,
            games: 0,
            wins: 0,
            tier: 0,
            category: None,
            languages: 1,
            roles: 0,
            main_role: 0,
            win_rate: 0.5,
            games_to_within_deviation: None,
            losing_streak: 0,
            recent: Default::default(),
        }
    }

    /// Experience as the Dota post measures it: "approximately logarithmic"
    /// in games played, with 40 -> 120 games the same step as 120 -> 280.
    /// `ln(games + 40)` meets that exactly (both steps double games + 40);
    /// `ln(1 + games)` would make the first step 28% larger than the second.
    pub fn experience(&self) -> f64 {
        (self.games as f64 + 40.0).ln()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn experience_steps_match_the_dota_post() {
        let at = |games| {
            let mut p = Player::new(PlayerId(0), 0.0, Rating::new(0.0, 0.0, 0.0));
            p.games = games;
            p.experience()
        };
        let first = at(120) - at(40);
        let second = at(280) - at(120);
        assert!((first - second).abs() < 1e-12, "{first} vs {second}");
        assert!((first - 2f64.ln()).abs() < 1e-12);
        assert!(at(0) < at(1));
    }
}
