//! The `[population]` keys that give players more than a skill: vehicle tier
//! and category (Armored Warfare), spoken languages, a shown win rate and
//! games already played (the Dota post's experience). Team rules read these;
//! a scenario that leaves them out gets the neutral defaults of `Player::new`.

use mmsim_core::model::{Category, ParamError};
use serde::{Deserialize, Serialize};

/// One vehicle tier and its share of players: `{ tier = 9, weight = 0.5 }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TierWeight {
    pub tier: u8,
    pub weight: f64,
}

/// Shares of the Armored Warfare vehicle categories; categories left out get
/// weight 0. Keys: `main-battle-tank`, `light-tank`, `tank-destroyer`,
/// `armoured-fighter`, `artillery`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default, rename_all = "kebab-case")]
pub struct CategoryMix {
    pub main_battle_tank: f64,
    pub light_tank: f64,
    pub tank_destroyer: f64,
    pub armoured_fighter: f64,
    pub artillery: f64,
}

impl CategoryMix {
    /// Weights in `Category` order, so draws do not depend on key order.
    pub fn weights(&self) -> [(Category, f64); 5] {
        [
            (Category::MainBattleTank, self.main_battle_tank),
            (Category::LightTank, self.light_tank),
            (Category::TankDestroyer, self.tank_destroyer),
            (Category::ArmouredFighter, self.armoured_fighter),
            (Category::Artillery, self.artillery),
        ]
    }
}

/// A language and the share of players whose first language it is.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LanguageWeight {
    pub name: String,
    pub weight: f64,
}

/// The shown win rate: Normal(`mean`, `sd`), correlated with true skill.
/// `skill_correlation = 1` ranks win rates exactly as true skills (the post's
/// "skill (win rate)"); 0 draws them independently of skill.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WinRateDist {
    pub mean: f64,
    pub sd: f64,
    #[serde(default = "one")]
    pub skill_correlation: f64,
}

fn one() -> f64 {
    1.0
}

/// Games each player has played before the run starts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "dist", rename_all = "kebab-case", deny_unknown_fields)]
pub enum GamesDist {
    /// Log-normal with this median and log-scale sd: a long tail of veterans.
    LogNormal { median: f64, sigma: f64 },
    /// Uniform whole numbers in [min, max].
    Uniform { min: u32, max: u32 },
    /// Everyone has played exactly this many.
    Fixed { games: u32 },
}

/// Most languages a scenario may list: a player's languages are a 32-bit set.
pub const MAX_LANGUAGES: usize = 32;

fn weight(key: &str, w: f64) -> Result<(), ParamError> {
    if w.is_finite() && w >= 0.0 {
        Ok(())
    } else {
        Err(ParamError::new(
            key,
            format!("weights must be numbers, zero or more, got {w}"),
        ))
    }
}

/// Checks the attribute keys of `[population]`; keys are relative to it.
pub fn validate(
    tiers: &[TierWeight],
    categories: Option<&CategoryMix>,
    languages: &[LanguageWeight],
    extra_language_prob: f64,
    win_rate: Option<&WinRateDist>,
    games: Option<&GamesDist>,
) -> Result<(), ParamError> {
    for (i, t) in tiers.iter().enumerate() {
        weight(&format!("tiers[{i}].weight"), t.weight)?;
        if tiers[..i].iter().any(|u| u.tier == t.tier) {
            return Err(ParamError::new(
                format!("tiers[{i}].tier"),
                format!("tier {} is listed twice", t.tier),
            ));
        }
    }
    if !tiers.is_empty() && tiers.iter().all(|t| t.weight == 0.0) {
        return Err(ParamError::new(
            "tiers",
            "needs a tier with a positive weight",
        ));
    }
    if let Some(c) = categories {
        for (cat, w) in c.weights() {
            let key = serde_json::to_value(cat)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default();
            weight(&format!("categories.{key}"), w)?;
        }
        if c.weights().iter().all(|(_, w)| *w == 0.0) {
            return Err(ParamError::new(
                "categories",
                "needs a category with a positive weight, e.g. { main-battle-tank = 1.0 }",
            ));
        }
    }
    if languages.len() > MAX_LANGUAGES {
        return Err(ParamError::new(
            "languages",
            format!("at most {MAX_LANGUAGES} languages, got {}", languages.len()),
        ));
    }
    for (i, l) in languages.iter().enumerate() {
        weight(&format!("languages[{i}].weight"), l.weight)?;
        if l.name.trim().is_empty() || languages[..i].iter().any(|m| m.name == l.name) {
            return Err(ParamError::new(
                format!("languages[{i}].name"),
                format!("must be non-empty and listed once, got {:?}", l.name),
            ));
        }
    }
    if !languages.is_empty() && languages.iter().all(|l| l.weight == 0.0) {
        return Err(ParamError::new(
            "languages",
            "needs a language with a positive weight",
        ));
    }
    if !(0.0..=1.0).contains(&extra_language_prob) {
        return Err(ParamError::new(
            "extra_language_prob",
            format!("must be between 0 and 1, got {extra_language_prob}"),
        ));
    }
    if extra_language_prob > 0.0 && languages.len() < 2 {
        return Err(ParamError::new(
            "extra_language_prob",
            "needs at least two `languages` to pick a second one from",
        ));
    }
    if let Some(w) = win_rate {
        if !(w.mean > 0.0 && w.mean < 1.0) {
            return Err(ParamError::new(
                "win_rate.mean",
                format!("a rate strictly between 0 and 1, got {}", w.mean),
            ));
        }
        if !(w.sd.is_finite() && w.sd >= 0.0 && w.sd <= 0.5) {
            return Err(ParamError::new(
                "win_rate.sd",
                format!("between 0 and 0.5, got {}", w.sd),
            ));
        }
        if !(0.0..=1.0).contains(&w.skill_correlation) {
            return Err(ParamError::new(
                "win_rate.skill_correlation",
                format!("between 0 and 1, got {}", w.skill_correlation),
            ));
        }
        if games.is_none() {
            return Err(ParamError::new(
                "win_rate",
                "needs `games`: a shown win rate is wins over games played, so players need games behind it, e.g. games = { dist = \"fixed\", games = 300 }",
            ));
        }
    }
    match games {
        Some(GamesDist::LogNormal { median, sigma }) => {
            if !(median.is_finite() && *median > 0.0) {
                return Err(ParamError::new(
                    "games.median",
                    format!("must be above 0, got {median}"),
                ));
            }
            if !(sigma.is_finite() && *sigma >= 0.0 && *sigma <= 5.0) {
                return Err(ParamError::new(
                    "games.sigma",
                    format!("between 0 and 5, got {sigma}"),
                ));
            }
        }
        Some(GamesDist::Uniform { min, max }) if min > max => {
            return Err(ParamError::new(
                "games.max",
                format!("must be at least min ({min}), got {max}"),
            ));
        }
        _ => {}
    }
    Ok(())
}
