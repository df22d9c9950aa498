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

use super::{Policy, PoolView, Proposal, Schedule, Trigger};
use crate::pool::WaitingTicket;
use crate::model::{check, HumanDuration, ParamError, TicketId};
use crate::teams::balanced_split;
use crate::teams::dota::{self, PartyAdjust};
use rand_pcg::Pcg64;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// Weights of the criteria in the average; only their ratios matter.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct QualityWeights {
    pub balance: f64,
    pub skill: f64,
    pub experience: f64,
    pub top_player: f64,
    pub parties: f64,
    pub team_language: f64,
    pub match_language: f64,
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

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct QualityParams {
    /// Score a match needs when its seed has just joined.
    pub threshold: f64,
    /// The threshold never falls below this.
    pub threshold_floor: f64,
    /// How much the threshold falls per second the seed has waited.
    pub threshold_fall_per_s: f64,
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
    /// Party-adjusted MMR coefficients (`teams::dota`).
    pub party_adjust: PartyAdjust,
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
        "threshold, threshold_floor, threshold_fall_per_s, weights.*, balance_tolerance, skill_range, experience_range, top_range, wait_scale, neighbours, tick, party_adjust.*";

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
        self.party_adjust.validate("party_adjust")
    }

    /// The score a match seeded by a ticket that waited `waited_s` needs.
    pub fn threshold_at(&self, waited_s: f64) -> f64 {
        (self.threshold - self.threshold_fall_per_s * waited_s).max(self.threshold_floor)
    }
}

/// The per-criterion scores of one candidate, in [0, 1].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Criteria {
    pub balance: f64,
    pub skill: f64,
    pub experience: f64,
    pub top_player: f64,
    pub parties: f64,
    pub team_language: f64,
    pub match_language: f64,
    pub wait: f64,
}

impl Criteria {
    /// Weighted average of the criteria.
    pub fn score(&self, w: &QualityWeights) -> f64 {
        let pairs = [
            (self.balance, w.balance),
            (self.skill, w.skill),
            (self.experience, w.experience),
            (self.top_player, w.top_player),
            (self.parties, w.parties),
            (self.team_language, w.team_language),
            (self.match_language, w.match_language),
            (self.wait, w.wait),
        ];
        let total: f64 = pairs.iter().map(|p| p.1).sum();
        pairs.iter().map(|(s, w)| s * w).sum::<f64>() / total
    }
}

/// What the criteria need to know about one party of a candidate.
#[derive(Clone, Debug, PartialEq)]
pub struct PartyFacts {
    pub aggregate: dota::PartyAggregate,
    /// Highest party-adjusted MMR among the members.
    pub top_adjusted: f64,
    /// Languages every member speaks (bit set).
    pub languages: u32,
    pub wait_s: f64,
}

/// Scores a candidate: `parties` and, per team, indices into `parties`.
pub fn criteria(
    p: &QualityParams,
    parties: &[PartyFacts],
    split: &[Vec<usize>],
    team_size: usize,
) -> Criteria {
    let clamp01 = |x: f64| x.clamp(0.0, 1.0);
    let team_means: Vec<f64> = split
        .iter()
        .map(|team| {
            let (sum, n) = team.iter().fold((0.0, 0usize), |(s, n), &i| {
                let a = &parties[i].aggregate;
                (s + a.adjusted_skill * a.size as f64, n + a.size)
            });
            sum / n.max(1) as f64
        })
        .collect();
    let gap = spread(team_means.iter().copied());
    let p_win = 1.0 / (1.0 + 10f64.powf(-gap / 400.0));
    let skill = spread(parties.iter().map(|f| f.aggregate.skill));
    let exp = spread(parties.iter().map(|f| f.aggregate.experience));
    let top = spread(split.iter().map(|team| {
        team.iter()
            .map(|&i| parties[i].top_adjusted)
            .fold(f64::NEG_INFINITY, f64::max)
    }));
    let team_common = split
        .iter()
        .filter(|team| team.iter().fold(u32::MAX, |m, &i| m & parties[i].languages) != 0)
        .count() as f64
        / split.len().max(1) as f64;
    let match_common = parties.iter().fold(u32::MAX, |m, f| m & f.languages) != 0;
    let mean_wait = parties.iter().map(|f| f.wait_s).sum::<f64>() / parties.len().max(1) as f64;
    Criteria {
        balance: clamp01(1.0 - (p_win - 0.5).abs() / p.balance_tolerance),
        skill: clamp01(1.0 - skill / p.skill_range),
        experience: clamp01(1.0 - exp / p.experience_range),
        top_player: clamp01(1.0 - top / p.top_range),
        parties: dota::party_parity(split, team_size),
        team_language: team_common,
        match_language: if match_common { 1.0 } else { 0.0 },
        wait: clamp01(mean_wait / p.wait_scale.secs()),
    }
}

fn spread(values: impl Iterator<Item = f64>) -> f64 {
    let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    if hi >= lo {
        hi - lo
    } else {
        0.0
    }
}

pub struct Quality {
    params: QualityParams,
}

impl Quality {
    pub fn new(params: QualityParams) -> Self {
        Quality { params }
    }

    fn facts(&self, view: &PoolView<'_>, t: &WaitingTicket) -> PartyFacts {
        let members: Vec<_> = t.players.iter().map(|p| &view.players[p.index()]).collect();
        let aggregate = dota::aggregate(&members, &self.params.party_adjust);
        let mmrs: Vec<f64> = members
            .iter()
            .map(|m| dota::member_mmr(m, members.len()))
            .collect();
        let top_adjusted = dota::adjusted_mmrs(&mmrs, &self.params.party_adjust)
            .into_iter()
            .fold(f64::NEG_INFINITY, f64::max);
        PartyFacts {
            aggregate,
            top_adjusted,
            languages: members.iter().fold(u32::MAX, |m, p| m & p.languages),
            wait_s: t.age_s(view.now),
        }
    }

    /// The facts of a ticket, computed once per pass: a ticket is a
    /// neighbour of many seeds.
    fn cached_facts(
        &self,
        view: &PoolView<'_>,
        t: &WaitingTicket,
        cache: &mut BTreeMap<TicketId, PartyFacts>,
    ) -> PartyFacts {
        cache
            .entry(t.id)
            .or_insert_with(|| self.facts(view, t))
            .clone()
    }

    /// The best-scoring candidate seeded by `seed`, as (score, tickets, teams).
    fn best_for(
        &self,
        view: &PoolView<'_>,
        seed: &WaitingTicket,
        taken: &BTreeSet<TicketId>,
        cache: &mut BTreeMap<TicketId, PartyFacts>,
        rng: &mut Pcg64,
    ) -> Option<(f64, Vec<TicketId>, Vec<Vec<TicketId>>)> {
        let p = &self.params;
        let format = view.format;
        if seed.size() > format.team_size {
            return None;
        }
        let seed_facts = self.cached_facts(view, seed, cache);
        let neighbours: Vec<(f64, &WaitingTicket, PartyFacts)> = view
            .pool
            .nearest(seed.rating, seed.id)
            .filter(|(_, t)| !taken.contains(&t.id) && t.size() <= format.team_size)
            .take(p.neighbours as usize)
            .map(|(d, t)| (d, t, self.cached_facts(view, t, cache)))
            .collect();
        // Orders to fill from: by rating; sharing a language with the seed
        // first; by rating and experience together. Stable sorts keep the
        // pool's nearest-first order among equals.
        let by_rating: Vec<usize> = (0..neighbours.len()).collect();
        let mut by_language = by_rating.clone();
        by_language.sort_by_key(|&i| neighbours[i].2.languages & seed_facts.languages == 0);
        let mut by_both = by_rating.clone();
        let combined = |i: usize| {
            let (d, _, f) = &neighbours[i];
            d / p.skill_range
                + (f.aggregate.experience - seed_facts.aggregate.experience).abs()
                    / p.experience_range
        };
        by_both.sort_by(|&a, &b| combined(a).total_cmp(&combined(b)));

        let mut best: Option<(f64, Vec<TicketId>, Vec<Vec<TicketId>>)> = None;
        let mut tried: Vec<Vec<usize>> = Vec::new();
        for order in [&by_rating, &by_language, &by_both] {
            let Some(mut chosen) = fill(seed.size(), order, &neighbours, format) else {
                continue;
            };
            chosen.sort_unstable();
            if tried.contains(&chosen) {
                continue;
            }
            tried.push(chosen.clone());
            let mut facts = vec![seed_facts.clone()];
            facts.extend(chosen.iter().map(|&i| neighbours[i].2.clone()));
            let mut ids = vec![seed.id];
            ids.extend(chosen.iter().map(|&i| neighbours[i].1.id));
            for split in self.splits(&facts, format.teams, format.team_size, rng) {
                let score = criteria(p, &facts, &split, format.team_size).score(&p.weights);
                if best.as_ref().is_none_or(|b| score > b.0) {
                    let teams = split
                        .iter()
                        .map(|team| team.iter().map(|&i| ids[i]).collect())
                        .collect();
                    best = Some((score, ids.clone(), teams));
                }
            }
        }
        best
    }

    /// A few splits of a candidate: balanced on party-adjusted MMR, and a
    /// variant that first evens the party counts where that is possible.
    fn splits(
        &self,
        facts: &[PartyFacts],
        teams: usize,
        team_size: usize,
        rng: &mut Pcg64,
    ) -> Vec<Vec<Vec<usize>>> {
        let sizes: Vec<usize> = facts.iter().map(|f| f.aggregate.size).collect();
        let strengths: Vec<f64> = facts
            .iter()
            .map(|f| f.aggregate.adjusted_skill * f.aggregate.size as f64)
            .collect();
        let mut out = Vec::new();
        if let Some(s) = balanced_split(&sizes, &strengths, teams, team_size, 32, rng) {
            out.push(s);
        }
        // Counting each party as one more unit of strength than it is, scaled
        // far above ratings, makes the greedy fill spread parties first; the
        // swaps then balance MMR among equal-sized parties.
        let big = 1e6;
        let by_count: Vec<f64> = strengths.iter().map(|s| s + big).collect();
        if let Some(s) = balanced_split(&sizes, &by_count, teams, team_size, 32, rng) {
            if !out.contains(&s) {
                out.push(s);
            }
        }
        out
    }
}

/// Fills the room left by a seed of `seed_size` from `neighbours` in `order`,
/// keeping the set splittable; indices into `neighbours`, or `None`.
fn fill(
    seed_size: usize,
    order: &[usize],
    neighbours: &[(f64, &WaitingTicket, PartyFacts)],
    format: super::MatchFormat,
) -> Option<Vec<usize>> {
    let mut room = format.players() - seed_size;
    let mut sizes = vec![seed_size];
    let mut chosen = Vec::new();
    for &i in order {
        if room == 0 {
            break;
        }
        let size = neighbours[i].1.size();
        if size <= room && super::splittable_with(&mut sizes, size, room, format) {
            chosen.push(i);
            room -= size;
        }
    }
    (room == 0).then_some(chosen)
}

impl Policy for Quality {
    fn schedule(&self) -> Schedule {
        // The threshold falls with time, so a pool that held no match may
        // hold one a tick later: a timer, not joins, drives this policy.
        Schedule {
            on_join: false,
            tick: Some(self.params.tick.0),
        }
    }

    fn propose(
        &mut self,
        view: &PoolView<'_>,
        _trigger: Trigger,
        rng: &mut Pcg64,
        out: &mut Vec<Proposal>,
    ) {
        if view.pool.players() < view.format.players() {
            return;
        }
        let mut taken = BTreeSet::new();
        let mut cache = BTreeMap::new();
        for seed in view.pool.oldest_first() {
            if taken.contains(&seed.id) {
                continue;
            }
            let Some((score, tickets, teams)) = self.best_for(view, seed, &taken, &mut cache, rng)
            else {
                continue;
            };
            if score >= self.params.threshold_at(seed.age_s(view.now)) {
                taken.extend(tickets.iter().copied());
                out.push(Proposal {
                    tickets,
                    teams: Some(teams),
                    rating_weight: 1.0,
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn party(mmrs: &[f64], games: f64, languages: u32, wait_s: f64) -> PartyFacts {
        let exp: Vec<f64> = mmrs.iter().map(|_| (games + 40.0).ln()).collect();
        let adjust = PartyAdjust::default();
        PartyFacts {
            aggregate: dota::aggregate_values(mmrs, &exp, &adjust),
            top_adjusted: dota::adjusted_mmrs(mmrs, &adjust)
                .into_iter()
                .fold(f64::NEG_INFINITY, f64::max),
            languages,
            wait_s,
        }
    }

    #[test]
    fn a_perfect_match_scores_one_and_each_flaw_costs_its_weight() {
        let p = QualityParams::default();
        let even: Vec<PartyFacts> = (0..4).map(|_| party(&[2000.0], 100.0, 1, 300.0)).collect();
        let split = vec![vec![0, 1], vec![2, 3]];
        let c = criteria(&p, &even, &split, 2);
        assert_eq!(c.score(&p.weights), 1.0);

        // One player speaking only another language: his team and the match
        // lose their common language; nothing else changes.
        let mut lang = even.clone();
        lang[3].languages = 2;
        let c = criteria(&p, &lang, &split, 2);
        assert_eq!((c.team_language, c.match_language), (0.5, 0.0));
        let w = &p.weights;
        let total = 11.5;
        let expected = 1.0 - (0.5 * w.team_language + w.match_language) / total;
        assert!((c.score(w) - expected).abs() < 1e-12);
    }

    #[test]
    fn criteria_measure_the_post_s_quantities() {
        let p = QualityParams::default();
        // 2100 + 1900 against 2000 + 2000: team means equal, skill range
        // 200, top players 2100 vs 2000.
        let parties = vec![
            party(&[2100.0], 40.0, 1, 0.0),
            party(&[1900.0], 280.0, 1, 0.0),
            party(&[2000.0], 120.0, 1, 150.0),
            party(&[2000.0], 120.0, 1, 150.0),
        ];
        let c = criteria(&p, &parties, &[vec![0, 1], vec![2, 3]], 2);
        assert_eq!(c.balance, 1.0);
        assert!((c.skill - (1.0 - 200.0 / 1500.0)).abs() < 1e-12);
        assert!((c.top_player - (1.0 - 100.0 / 600.0)).abs() < 1e-12);
        // ln(320/80) = 2 ln 2 across 40 and 280 games.
        assert!((c.experience - (1.0 - 4f64.ln() / 2.0)).abs() < 1e-12);
        assert!((c.wait - 75.0 / 300.0).abs() < 1e-12);
        // 2100 + 2000 against 1900 + 2000: a 100-point gap, p = 0.640.
        let c = criteria(&p, &parties, &[vec![0, 2], vec![1, 3]], 2);
        let p_win = 1.0 / (1.0 + 10f64.powf(-0.25));
        assert!((c.balance - (1.0 - (p_win - 0.5) / 0.2)).abs() < 1e-12);
    }

    #[test]
    fn party_count_parity_punishes_a_stack_against_solos() {
        let p = QualityParams::default();
        let mut parties = vec![party(&[2000.0; 5], 100.0, 1, 0.0)];
        parties.extend((0..5).map(|_| party(&[2000.0], 100.0, 1, 0.0)));
        let c = criteria(&p, &parties, &[vec![0], vec![1, 2, 3, 4, 5]], 5);
        assert_eq!(c.parties, 0.0);
    }

    #[test]
    fn threshold_falls_with_wait_to_its_floor() {
        let p = QualityParams {
            threshold: 0.9,
            threshold_floor: 0.6,
            threshold_fall_per_s: 0.01,
            ..QualityParams::default()
        };
        assert_eq!(p.threshold_at(0.0), 0.9);
        assert!((p.threshold_at(10.0) - 0.8).abs() < 1e-12);
        assert_eq!(p.threshold_at(1000.0), 0.6);
    }

    #[test]
    fn validation_names_the_key() {
        let bad = QualityParams {
            threshold_floor: 0.9,
            threshold: 0.8,
            ..QualityParams::default()
        };
        assert_eq!(bad.validate().unwrap_err().key, "threshold_floor");
        let mut bad = QualityParams::default();
        bad.weights.wait = -1.0;
        assert_eq!(bad.validate().unwrap_err().key, "weights.wait");
        assert!(QualityParams::default().validate().is_ok());
    }
}
