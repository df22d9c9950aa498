//! The Dota 2 post's matchmaker: score a candidate match on seven criteria,
//! take a weighted average, and form the match "when the overall quality
//! score exceeds a threshold"; the threshold falls as the seed waits, which
//! is the post's wait-versus-quality knob.
//!
//! Candidates are never all subsets of the pool: each pass seeds a match
//! with the oldest unmatched ticket, takes its `neighbours` nearest-rated
//! tickets, builds a few fills from them (nearest by rating; sharing a
//! language with the seed first; nearest in rating and experience together),
//! and for each fill tries a few team splits (the balanced split on
//! party-adjusted MMR, and the same with party counts evened). Cost per seed
//! is O(log n + neighbours) plus a constant number of small splits.
//!
//! Criteria, each scored in [0, 1] (1 is best):
//! 1. balance: `1 - |p - 0.5| / balance_tolerance`, p the logistic (400-point)
//!    win probability of the teams' mean party-adjusted MMR gap;
//! 2. skill: `1 - (max - min) / skill_range` over the parties' aggregate MMR
//!    (the post uses party numbers, not members', for 2 and 3);
//! 3. experience: the same over party experience, `ln(games + 40)`;
//! 4. top players: `1 - gap / top_range`, gap between the teams' best
//!    adjusted MMRs;
//! 5. parties: `teams::dota::party_parity` (1 for equal party counts);
//! 6. language, split in two weights as the post ranks them: the share of
//!    teams whose members share a language ("strongly avoided" when not), and
//!    whether the whole match does ("avoided, but less strongly");
//! 7. wait: the candidate's mean ticket wait over `wait_scale`, capped at 1.
//!
//! A split's only arbitrary choice, the order in which teams of equal
//! strength take the next party, is hashed from the candidate's tickets and
//! one number drawn on the first pass (`team_priority`), not drawn per
//! split: so a candidate scores the same on every pass, and a seed whose
//! candidates did not change has a known first moment at which one of them
//! can pass its threshold.
//!
//! `QualityOracle` is that search done from scratch on every pass. `Quality`
//! proposes exactly the same matches, but keeps what does not change
//! between passes: each ticket's party facts; each seed's fills,
//! re-searched only when a ticket that joined sorts into one of the
//! prefixes the fills scanned, when one a fill chose left or was taken,
//! when joins near the seed could have pushed a chosen neighbour out, or
//! when departures could have pulled in one past the edge that sorts into
//! a prefix (`stale`); each fill's two splits;
//! and, for a seed whose fills are kept, the first pass at which one of
//! them can pass (`next_look`), before which the seed is skipped. A fill
//! whose split-free criteria, with the split ones at their best bound,
//! cannot reach the threshold or beat the best so far is not split at all.
//! The test
//! `incremental_search_proposes_what_the_oracle_proposes` compares both over
//! random pools and passes, and the tests search every kept seed again to
//! check that its fills are current.
//!
//! The parts, one file each: `criteria` (the seven scores and the bounds a
//! split cannot beat), `splits` (team splits with their fixed tie-break),
//! `oracle` (`QualityOracle`), `kept` (what a seed keeps between passes and
//! `stale`, when it is no longer current), `fills` (memos of which party
//! sizes fill the teams, and of a fill's splits), `search` (`Quality`),
//! `roles` (role-feasible fills and splits) and `explain` (a formed
//! match's score for `--explain`).

mod criteria;
mod explain;
mod fills;
mod kept;
mod oracle;
mod roles;
mod search;
mod splits;
#[cfg(test)]
mod tests;

pub use criteria::{criteria, Criteria, PartyFacts};
pub(super) use criteria::party_facts;
pub use oracle::QualityOracle;
pub use search::Quality;

// The parts see one another through `use super::*`.
use {criteria::*, fills::*, kept::*, splits::*};

use crate::model::{check, HumanDuration, ParamError};
use crate::teams::dota::PartyAdjust;
use serde::{Deserialize, Serialize};

/// Weights of the criteria in the average; only their ratios matter.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct QualityWeights {
    /// Weight of `balance`.
    pub balance: f64,
    /// Weight of `skill`.
    pub skill: f64,
    /// Weight of `experience`.
    pub experience: f64,
    /// Weight of `top_player`.
    pub top_player: f64,
    /// Weight of `parties`.
    pub parties: f64,
    /// Weight of `team_language`.
    pub team_language: f64,
    /// Weight of `match_language`.
    pub match_language: f64,
    /// Weight of `wait`.
    pub wait: f64,
}

impl Default for QualityWeights {
    fn default() -> Self {
        QualityWeights {
            balance: 3.0,
            skill: 2.0,
            experience: 1.0,
            top_player: 1.0,
            parties: 1.0,
            team_language: 2.0,
            match_language: 0.5,
            wait: 1.0,
        }
    }
}

impl QualityWeights {
    fn as_array(&self) -> [(&'static str, f64); 8] {
        [
            ("balance", self.balance),
            ("skill", self.skill),
            ("experience", self.experience),
            ("top_player", self.top_player),
            ("parties", self.parties),
            ("team_language", self.team_language),
            ("match_language", self.match_language),
            ("wait", self.wait),
        ]
    }
}

/// Parameters of `kind = "quality"`: the Dota post's weighted match quality against a threshold that falls with the wait.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct QualityParams {
    /// Score a match needs when its seed has just joined.
    pub threshold: f64,
    /// The threshold never falls below this.
    pub threshold_floor: f64,
    /// How much the threshold falls per second the seed has waited.
    pub threshold_fall_per_s: f64,
    /// The criteria's weights.
    pub weights: QualityWeights,
    /// Distance from a 50% win chance at which balance scores 0.
    pub balance_tolerance: f64,
    /// Party-MMR range in a match (rating points) at which skill scores 0.
    pub skill_range: f64,
    /// Experience range (ln units; 0.69 = twice the games + 40) at which
    /// experience scores 0.
    pub experience_range: f64,
    /// Gap between the teams' best players (rating points) at which top-player parity scores 0.
    pub top_range: f64,
    /// Mean wait at which the wait criterion reaches 1.
    pub wait_scale: HumanDuration,
    /// Nearest-rated tickets a seed draws its candidates from.
    pub neighbours: u32,
    /// Interval between matchmaking passes.
    pub tick: HumanDuration,
    /// How often a waiting seed's search for candidates is redone. Unset
    /// (the default), every pass: the exact policy. Set, a seed keeps the
    /// candidates its last search found, rescored each pass as waits grow
    /// and the threshold falls, and searches again only when this much
    /// time has passed since that search or when a ticket of a kept
    /// candidate left or was taken; tickets that joined since are seen at
    /// the next search. Real matchmakers do not re-examine every ticket
    /// every cycle either; docs/policies.md gives the price of each setting.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub research: Option<HumanDuration>,
    /// With `research`: which lost candidates bring a seed's search
    /// forward (`EarlyResearch`).
    #[serde(skip_serializing_if = "EarlyResearch::is_any")]
    pub research_early: EarlyResearch,
    /// Party-adjusted MMR coefficients (`teams::dota`).
    pub party_adjust: PartyAdjust,
}

/// With a `research` cadence: when a seed searches before its cadence
/// comes round because tickets of the candidates it kept have gone (left
/// the pool, or taken by another seed's match).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EarlyResearch {
    /// As soon as any kept candidate has lost a ticket.
    #[default]
    Any,
    /// A kept candidate that lost a ticket is dropped, and the seed goes on
    /// with the others; it searches early only when it has none left.
    All,
}

impl EarlyResearch {
    fn is_any(&self) -> bool {
        *self == EarlyResearch::Any
    }
}

impl Default for QualityParams {
    fn default() -> Self {
        QualityParams {
            threshold: 0.8,
            threshold_floor: 0.5,
            threshold_fall_per_s: 0.002,
            weights: QualityWeights::default(),
            balance_tolerance: 0.2,
            skill_range: 1500.0,
            experience_range: 2.0,
            top_range: 600.0,
            wait_scale: HumanDuration::from_secs(300),
            neighbours: 40,
            tick: HumanDuration::from_secs(1),
            research: None,
            research_early: EarlyResearch::Any,
            party_adjust: PartyAdjust::default(),
        }
    }
}

impl QualityParams {
    /// Where the policy comes from, for `mmsim policies`.
    pub const SOURCE: &str =
        "Dota 2 post: weighted score of the seven criteria; form when it passes a threshold that falls with wait";
    /// Its keys, for `mmsim policies`.
    pub const PARAMETERS: &str =
        "threshold, threshold_floor, threshold_fall_per_s, weights.*, balance_tolerance, skill_range, experience_range, top_range, wait_scale, neighbours, tick, research, research_early, party_adjust.*";

    /// Checks every parameter; keys are relative to `[policy]`.
    pub fn validate(&self) -> Result<(), ParamError> {
        check::unit("threshold", self.threshold)?;
        check::unit("threshold_floor", self.threshold_floor)?;
        if self.threshold_floor > self.threshold {
            return Err(ParamError::new(
                "threshold_floor",
                format!(
                    "must be at most `threshold` ({}), got {}",
                    self.threshold, self.threshold_floor
                ),
            ));
        }
        check::non_negative("threshold_fall_per_s", self.threshold_fall_per_s)?;
        for (name, w) in self.weights.as_array() {
            check::non_negative(&format!("weights.{name}"), w)?;
        }
        if self.weights.as_array().iter().all(|(_, w)| *w == 0.0) {
            return Err(ParamError::new(
                "weights",
                "at least one weight must be above 0",
            ));
        }
        check::positive("balance_tolerance", self.balance_tolerance)?;
        check::positive("skill_range", self.skill_range)?;
        check::positive("experience_range", self.experience_range)?;
        check::positive("top_range", self.top_range)?;
        check::interval("wait_scale", self.wait_scale.0)?;
        if self.neighbours == 0 {
            return Err(ParamError::new("neighbours", "must be 1 or more"));
        }
        check::interval("tick", self.tick.0)?;
        if let Some(every) = self.research {
            check::interval("research", every.0)?;
        } else if self.research_early != EarlyResearch::Any {
            return Err(ParamError::new(
                "research_early",
                "applies only with a `research` cadence; set `research` too, or leave `research_early` out",
            ));
        }
        self.party_adjust.validate("party_adjust")
    }

    /// The score a match seeded by a ticket that waited `waited_s` needs.
    pub fn threshold_at(&self, waited_s: f64) -> f64 {
        (self.threshold - self.threshold_fall_per_s * waited_s).max(self.threshold_floor)
    }
}
