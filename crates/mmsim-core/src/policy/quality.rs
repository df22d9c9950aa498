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

use super::{Policy, PoolView, Proposal, Schedule, SearchWork, Trigger};
use crate::model::{check, HumanDuration, ParamError, SimTime, TicketId};
use crate::pool::{RatingKey, WaitingTicket};
use rand::RngCore;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};
use super::quality_roles;
use crate::teams::balanced::{self, balanced_split_by_priority};
use crate::teams::RoleFill;
use crate::teams::dota::{self, PartyAdjust};
use rand_pcg::Pcg64;
use smallvec::SmallVec;
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
            research: None,
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
        "threshold, threshold_floor, threshold_fall_per_s, weights.*, balance_tolerance, skill_range, experience_range, top_range, wait_scale, neighbours, tick, research, party_adjust.*";

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
        }
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
pub fn criteria<T: AsRef<[usize]>>(
    p: &QualityParams,
    parties: &[PartyFacts],
    split: &[T],
    team_size: usize,
) -> Criteria {
    let clamp01 = |x: f64| x.clamp(0.0, 1.0);
    let team_means: SmallVec<[f64; 4]> = split
        .iter()
        .map(|team| {
            let (sum, n) = team.as_ref().iter().fold((0.0, 0usize), |(s, n), &i| {
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
        team.as_ref()
            .iter()
            .map(|&i| parties[i].top_adjusted)
            .fold(f64::NEG_INFINITY, f64::max)
    }));
    let team_common = split
        .iter()
        .filter(|team| {
            team.as_ref()
                .iter()
                .fold(u32::MAX, |m, &i| m & parties[i].languages)
                != 0
        })
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

/// A ticket's party facts at `view.now`.
pub(super) fn party_facts(params: &QualityParams, view: &PoolView<'_>, t: &WaitingTicket) -> PartyFacts {
    let members: Vec<_> = t.players.iter().map(|p| &view.players[p.index()]).collect();
    let aggregate = dota::aggregate(&members, &params.party_adjust);
    let mmrs: Vec<f64> = members
        .iter()
        .map(|m| dota::member_mmr(m, members.len()))
        .collect();
    let top_adjusted = dota::adjusted_mmrs(&mmrs, &params.party_adjust)
        .into_iter()
        .fold(f64::NEG_INFINITY, f64::max);
    PartyFacts {
        aggregate,
        top_adjusted,
        languages: members.iter().fold(u32::MAX, |m, p| m & p.languages),
        wait_s: t.age_s(view.now),
    }
}

/// The from-scratch search, kept as the reference `Quality` must match
/// proposal for proposal: every pass scores every seed
/// again. Slow (it allocates per candidate and re-checks packings), but
/// obviously the post's method.
pub struct QualityOracle {
    params: QualityParams,
    /// Drawn from the policy's rng on the first pass; the splits' team
    /// priorities derive from it and the candidates' tickets.
    salt: Option<u64>,
    /// With a `research` cadence: each seed's last search, as its time and
    /// the fills it found.
    kept: BTreeMap<TicketId, (SimTime, Vec<Vec<TicketId>>)>,
    /// The tickets the last pass took: those still waiting at the next
    /// were in a match the engine refused.
    returned: BTreeSet<TicketId>,
}

impl QualityOracle {
    pub fn new(params: QualityParams) -> Self {
        QualityOracle { params, salt: None, kept: BTreeMap::new(), returned: BTreeSet::new() }
    }

    fn facts(&self, view: &PoolView<'_>, t: &WaitingTicket) -> PartyFacts {
        party_facts(&self.params, view, t)
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

    /// The seed's distinct fills, each as its tickets: the seed first, then
    /// the chosen neighbours nearest first. Empty when the seed cannot play.
    fn fills_for(
        &self,
        view: &PoolView<'_>,
        seed: &WaitingTicket,
        taken: &BTreeSet<TicketId>,
        cache: &mut BTreeMap<TicketId, PartyFacts>,
    ) -> Vec<Vec<TicketId>> {
        let p = &self.params;
        let format = view.format;
        if seed.size() > format.team_size {
            return Vec::new();
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

        let mut tried: Vec<Vec<usize>> = Vec::new();
        for order in [&by_rating, &by_language, &by_both] {
            let Some(mut chosen) = oracle_fill(seed, order, &neighbours, format) else {
                continue;
            };
            chosen.sort_unstable();
            if !tried.contains(&chosen) {
                tried.push(chosen);
            }
        }
        tried
            .iter()
            .map(|chosen| {
                let mut ids = vec![seed.id];
                ids.extend(chosen.iter().map(|&i| neighbours[i].1.id));
                ids
            })
            .collect()
    }

    /// The best-scoring candidate among `fills` at the view's time, as
    /// (score, tickets, teams); the first of equals.
    fn best_of(
        &self,
        view: &PoolView<'_>,
        fills: &[Vec<TicketId>],
        cache: &mut BTreeMap<TicketId, PartyFacts>,
        salt: u64,
    ) -> Option<(f64, Vec<TicketId>, Vec<Vec<TicketId>>)> {
        let p = &self.params;
        let mut best: Option<(f64, Vec<TicketId>, Vec<Vec<TicketId>>)> = None;
        for ids in fills {
            let tickets: Vec<&WaitingTicket> =
                ids.iter().map(|&id| view.pool.get(id).expect("a kept fill's ticket waits")).collect();
            let facts: Vec<PartyFacts> =
                tickets.iter().map(|t| self.cached_facts(view, t, cache)).collect();
            let masks: Vec<&[u8]> = tickets.iter().map(|t| &t.roles[..]).collect();
            for split in self.splits(&facts, &masks, ids, view.format, salt) {
                let score = criteria(p, &facts, &split, view.format.team_size).score(&p.weights);
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
        masks: &[&[u8]],
        ids: &[TicketId],
        format: super::MatchFormat,
        salt: u64,
    ) -> Vec<Vec<Vec<usize>>> {
        let (teams, team_size) = (format.teams, format.team_size);
        // In a role queue each split is made role-feasible, as `Quality` does.
        let fix = |s: Vec<Vec<usize>>, strengths: &[f64]| -> Option<Vec<Vec<usize>>> {
            if format.roles.is_none() {
                return Some(s);
            }
            let mut team_of = vec![0; facts.len()];
            for (t, parties) in s.iter().enumerate() {
                for &p in parties {
                    team_of[p] = t;
                }
            }
            quality_roles::role_feasible(Some(team_of), masks, strengths, teams, format.roles)
                .map(|t| balanced::members_by_team(&t, teams))
        };
        let sizes: Vec<usize> = facts.iter().map(|f| f.aggregate.size).collect();
        let strengths: Vec<f64> = facts
            .iter()
            .map(|f| f.aggregate.adjusted_skill * f.aggregate.size as f64)
            .collect();
        let mut out = Vec::new();
        let priority = |kind| team_priority(salt, kind, ids, teams);
        if let Some(s) = balanced_split_by_priority(&sizes, &strengths, teams, team_size, 32, &priority(0))
            .and_then(|s| fix(s, &strengths))
        {
            out.push(s);
        }
        // Counting each party as one more unit of strength than it is, scaled
        // far above ratings, makes the greedy fill spread parties first; the
        // swaps then balance MMR among equal-sized parties.
        let big = 1e6;
        let by_count: Vec<f64> = strengths.iter().map(|s| s + big).collect();
        if let Some(s) = balanced_split_by_priority(&sizes, &by_count, teams, team_size, 32, &priority(1))
            .and_then(|s| fix(s, &by_count))
        {
            if !out.contains(&s) {
                out.push(s);
            }
        }
        out
    }
}

/// The team priority of a candidate's split of kind `kind` (0: balanced on
/// MMR, 1: party counts first): the order in which the greedy fill breaks
/// ties between teams of equal strength, `priority[t]` lower first. It is a
/// permutation hashed from the run's `salt` and the candidate's tickets (in
/// the order the candidate lists them), not a draw from the policy's rng,
/// so a candidate's split is the same on every pass and a seed whose
/// candidates did not change need not be looked at until its threshold
/// can accept one. No team is favoured: over candidates the permutation is
/// uniform.
fn team_priority(salt: u64, kind: usize, ids: &[TicketId], teams: usize) -> SmallVec<[usize; 4]> {
    fn mix(mut z: u64) -> u64 {
        // SplitMix64's finaliser.
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    let mut h = mix(salt ^ kind as u64);
    for id in ids {
        h = mix(h.wrapping_add(0x9e37_79b9_7f4a_7c15) ^ u64::from(id.0));
    }
    let mut priority: SmallVec<[usize; 4]> = (0..teams).collect();
    for i in (1..teams).rev() {
        h = mix(h.wrapping_add(0x9e37_79b9_7f4a_7c15));
        priority.swap(i, (h % (i as u64 + 1)) as usize);
    }
    priority
}

/// Fills the room left by `seed` from `neighbours` in `order`, keeping the
/// set splittable (and, in a role queue, completable to every team's
/// composition); indices into `neighbours`, or `None`.
fn oracle_fill(
    seed: &WaitingTicket,
    order: &[usize],
    neighbours: &[(f64, &WaitingTicket, PartyFacts)],
    format: super::MatchFormat,
) -> Option<Vec<usize>> {
    let mut room = format.players() - seed.size();
    let mut packing = crate::teams::Packing::new(format.teams, format.team_size);
    packing.try_add(seed.size());
    let mut role_fill = RoleFill::new(format.roles, format.teams, &seed.roles);
    let mut chosen = Vec::new();
    for &i in order {
        if room == 0 {
            break;
        }
        let size = neighbours[i].1.size();
        if size > room {
            continue;
        }
        let fits = if format.roles.is_none() {
            packing.try_add(size)
        } else {
            // The packing keeps the party only if the roles admit it too:
            // `Packing` has no undo.
            let mut trial = packing.clone();
            let ok = trial.try_add(size) && role_fill.admits(&neighbours[i].1.roles);
            if ok {
                packing = trial;
                role_fill.take(&neighbours[i].1.roles);
            }
            ok
        };
        if fits {
            chosen.push(i);
            room -= size;
        }
    }
    (room == 0).then_some(chosen)
}

impl Policy for QualityOracle {
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
        let salt = *self.salt.get_or_insert_with(|| rng.next_u64());
        if view.pool.players() < view.format.players() {
            return;
        }
        let mut taken = BTreeSet::new();
        let mut cache = BTreeMap::new();
        if self.params.research.is_some() {
            // Tickets gone since drop their searches; a ticket whose match
            // the engine refused is back as if it had just joined.
            self.kept.retain(|id, _| view.pool.contains(*id) && !self.returned.contains(id));
        }
        for seed in view.pool.oldest_first() {
            if taken.contains(&seed.id) {
                continue;
            }
            let fills = match self.params.research {
                None => self.fills_for(view, seed, &taken, &mut cache),
                Some(every) => {
                    // The kept fills hold until the cadence comes round or
                    // one of their tickets is gone.
                    let current = self.kept.get(&seed.id).filter(|(at, fills)| {
                        view.now < *at + every.0
                            && fills.iter().flatten().all(|id| {
                                view.pool.contains(*id) && !taken.contains(id)
                            })
                    });
                    match current {
                        Some((_, fills)) => fills.clone(),
                        None => {
                            let fills = self.fills_for(view, seed, &taken, &mut cache);
                            self.kept.insert(seed.id, (view.now, fills.clone()));
                            fills
                        }
                    }
                }
            };
            let Some((score, tickets, teams)) = self.best_of(view, &fills, &mut cache, salt) else {
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
        self.returned = taken;
    }
}

/// Facts of a waiting ticket that stay fixed while it waits (its wait aside).
struct Entry {
    id: TicketId,
    rating: f64,
    enqueued: SimTime,
    size: usize,
    /// With `wait_s` 0: the wait is added per pass.
    facts: PartyFacts,
    /// The members' role masks (empty without a role queue).
    roles: crate::teams::PartyRoles,
    taken: bool,
    cache: Option<SeedCache>,
    /// When `cache` was searched, for the `research` cadence.
    searched_at: SimTime,
    /// While `cache` stays current, no pass before this can accept any of
    /// its candidates (their scores rise and the threshold falls at known
    /// rates), so passes before it skip the seed.
    next_look: SimTime,
}

/// A ticket as a seed's search reads it.
#[derive(Clone, Copy, Debug)]
struct Hot {
    rating: f64,
    experience: f64,
    skill: f64,
    enqueued: SimTime,
    id: TicketId,
    slot: u32,
    languages: u32,
    size: usize,
    taken: bool,
}

/// What a seed's search found, valid until a ticket joins, leaves or is
/// taken within `[lo, hi]` (the rating span of its neighbourhood, widened
/// past rounding) and, when `prefixes` is known, inside one of the scanned
/// prefixes: no other change can alter a fill.
struct SeedCache {
    lo: f64,
    hi: f64,
    prefixes: Option<Prefixes>,
    fills: Vec<FillMemo>,
}

/// How far each fill order's scanned prefix reaches. A change alters a
/// fill only if it sorts into a prefix of its order: nearer than the last
/// scanned ticket by rating; a language sharer nearer than the last scanned
/// sharer (any sharer, and non-sharers nearer than the last, when the fill
/// ran out of sharers); or a combined key below the last scanned key. In a
/// busy pool most changes in a seed's span miss all three. When a prefix
/// reaches past the neighbourhood's edge, a ticket that a departure pulls
/// in from beyond could sort into it: `beyond` says how many such pulls
/// are known to be harmless.
#[derive(Clone, Copy, Debug)]
struct Prefixes {
    by_rating: f64,
    /// Sharers of a language with the seed nearer than this are in the
    /// language fill's prefix; infinite when it ran out of sharers.
    by_language: f64,
    by_both: f64,
    /// Non-sharers nearer than this are in the language fill's prefix
    /// (when it ran out of sharers; otherwise none are).
    other_languages: f64,
    /// Distance of the farthest neighbour a fill chose.
    within: f64,
    /// How many more tickets the neighbourhood takes within `within`
    /// before joins there push a chosen neighbour out: more joins there
    /// than this and the search is redone, whether or not one of them
    /// sorts into a prefix.
    room: usize,
    /// When the rating-and-experience fill's prefix reaches past the
    /// neighbourhood (in a dense pool experience, not rating, decides that
    /// order): the distance of the farthest of the tickets just beyond the
    /// neighbourhood, nearest first, that sort after every prefix, and how
    /// many they are. A ticket leaving the neighbourhood pulls the next one
    /// beyond it in; these can be pulled in without altering a fill, so up
    /// to `beyond_room` departures within `beyond` keep the search. Without
    /// such a prefix, or when every ticket past the edge was checked,
    /// `beyond_room` is unbounded and `beyond` unread.
    beyond: f64,
    beyond_room: usize,
    /// Rounding slack, in rating points.
    margin: f64,
}

/// How many tickets past the neighbourhood's edge a search checks for
/// `Prefixes::beyond`: each is one change the search can absorb.
const BEYOND: usize = 16;

/// Whether a change since the search of `seed` may have altered its fills:
/// one in its span, or (with `prefixes`) a join that sorts into a prefix,
/// the departure of a ticket a fill chose, or joins or departures that use
/// up the neighbourhood's room near the seed. Room used is kept off,
/// since joins over several passes add up.
fn stale(
    seed: &Change,
    cache: &mut SeedCache,
    changes: &[Change],
    taken_now: &[Change],
    params: &QualityParams,
) -> bool {
    let (lo, hi) = (cache.lo, cache.hi);
    let in_span = |sorted| span(sorted, lo, hi);
    let Some(p) = cache.prefixes.as_mut() else {
        return in_span(changes).next().is_some() || in_span(taken_now).next().is_some();
    };
    let fills = &cache.fills;
    if in_span(changes)
        .chain(in_span(taken_now))
        .any(|c| p.alters(seed, c, fills, params))
    {
        return true;
    }
    let margin = p.margin;
    // Joins (`joined`) or departures within `reach` of the seed. Only a
    // join pushes a neighbour out, and only a departure pulls one in.
    let near = |reach: f64, joined: bool| {
        let count = |sorted: &[Change]| {
            let lo = sorted.partition_point(|c| c.rating < seed.rating - reach - margin);
            let hi = sorted.partition_point(|c| c.rating <= seed.rating + reach + margin);
            sorted[lo..hi].iter().filter(|c| c.joined == joined).count()
        };
        count(changes) + count(taken_now)
    };
    let used = near(p.within, true);
    if used > p.room {
        return true;
    }
    p.room -= used;
    if p.beyond_room != usize::MAX {
        let used = near(p.beyond, false);
        if used > p.beyond_room {
            return true;
        }
        p.beyond_room -= used;
    }
    false
}

/// Whether a ticket of one of the kept fills left or was taken since the
/// last pass: with a `research` cadence, the only change that makes a
/// search stale before its time. Every seed is visited on every pass, and
/// the fills lie within the cache's span, so the pass's departures there
/// are all it needs to look at (a walk over a few sorted changes, where
/// looking each kept ticket up in the mirror cost 5% more on `dota2-day`).
fn lost_a_ticket(cache: &SeedCache, changes: &[Change], taken_now: &[Change]) -> bool {
    span(changes, cache.lo, cache.hi)
        .chain(span(taken_now, cache.lo, cache.hi))
        .filter(|c| !c.joined)
        .any(|c| cache.fills.iter().any(|f| f.ids[1..].contains(&c.id)))
}

/// The changes of `sorted` (by rating) whose rating lies in `[lo, hi]`.
fn span(sorted: &[Change], lo: f64, hi: f64) -> impl Iterator<Item = &Change> {
    let i = sorted.partition_point(|c| c.rating < lo);
    sorted[i..].iter().take_while(move |c| c.rating <= hi)
}

/// The next ticket of `hot` nearest to rating `r`, walking outward from
/// `below` (the next index down is `below - 1`) and `above` (the next up),
/// as `Pool::nearest` walks (ties to the lower rating); `None` when both
/// ends are reached.
fn nearest_next(hot: &[Hot], r: f64, below: &mut usize, above: &mut usize) -> Option<usize> {
    let take_below = match (*below > 0, *above < hot.len()) {
        (false, false) => return None,
        (true, false) => true,
        (false, true) => false,
        (true, true) => (r - hot[*below - 1].rating) <= (hot[*above].rating - r),
    };
    if take_below {
        *below -= 1;
        Some(*below)
    } else {
        *above += 1;
        Some(*above - 1)
    }
}

/// Where a waiting ticket sits in `hot`, found by its (rating, id) key: a
/// pass takes a few tickets, while keeping each ticket's index current
/// would write to every entry after every merge.
fn hot_index(hot: &[Hot], e: &Entry) -> usize {
    let key = (RatingKey(e.rating), e.id);
    let i = hot.partition_point(|h| (RatingKey(h.rating), h.id) < key);
    debug_assert_eq!(hot[i].id, e.id);
    i
}

/// A ticket that joined, left or was taken, as the prefixes test it.
#[derive(Clone, Copy, Debug)]
struct Change {
    rating: f64,
    experience: f64,
    languages: u32,
    id: TicketId,
    /// Whether the ticket is now in the pool (it joined, or a refused
    /// match left it there) rather than gone (it left or was taken).
    joined: bool,
}

impl Change {
    fn of(e: &Entry, joined: bool) -> Self {
        Change {
            rating: e.rating,
            experience: e.facts.aggregate.experience,
            languages: e.facts.languages,
            id: e.id,
            joined,
        }
    }
}

impl Prefixes {
    /// Whether `c` may alter one of `seed`'s fills. A ticket that joined
    /// may, if it sorts into a prefix. One that left may only if a fill
    /// chose it: a greedy fill leaves its state as it was when it passes
    /// over a ticket, so losing a ticket it passed over changes none of its
    /// choices (a ticket the departure pulls in from past the edge is
    /// `beyond_room`'s concern, not this one's).
    fn alters(&self, seed: &Change, c: &Change, fills: &[FillMemo], p: &QualityParams) -> bool {
        self.touched_by(seed, c, p)
            && (c.joined || fills.iter().any(|f| f.ids[1..].contains(&c.id)))
    }

    /// Whether `c` may sort into one of the prefixes of `seed`'s fills.
    fn touched_by(&self, seed: &Change, c: &Change, p: &QualityParams) -> bool {
        let d = (c.rating - seed.rating).abs();
        d <= self.by_rating + self.margin
            || d <= if c.languages & seed.languages != 0 {
                self.by_language
            } else {
                self.other_languages
            } + self.margin
            || d / p.skill_range + (c.experience - seed.experience).abs() / p.experience_range
                <= self.by_both + self.margin / p.skill_range
    }
}

/// Per-party (or per-team) values of one candidate, inline up to ten: a
/// seed's fills and splits are made and dropped by the thousand every pass
/// in a busy pool, and the heap allocator was a third of the policy's time.
type Inline<T> = SmallVec<[T; 10]>;

/// One distinct fill of a seed, with the splits found for it so far.
struct FillMemo {
    /// Seed first, then the chosen neighbours in nearest-first order: the
    /// order the oracle lists them in.
    ids: Inline<TicketId>,
    slots: Inline<u32>,
    /// When each party joined, for the wait criterion.
    enqueued: Inline<SimTime>,
    /// Whether the parties can fill the teams at all; when not, no split
    /// is tried.
    feasible: bool,
    /// The criteria that do not depend on the split, with those that do at
    /// their best (1) and the wait at 0: scores are monotone in every
    /// criterion, so with the wait of the pass this bounds every split's
    /// score, and a fill whose bound misses the threshold needs no split.
    bound: Criteria,
    /// Per split kind (0: balanced on MMR, 1: party counts first), the
    /// split once computed: its team priority comes from the fill's tickets
    /// (`team_priority`), so it holds as long as the fill does.
    splits: [Option<SplitMemo>; 2],
}

impl FillMemo {
    /// The parties' mean wait at `now`, with the oracle's arithmetic.
    fn mean_wait_s(&self, now: SimTime) -> f64 {
        self.enqueued
            .iter()
            .map(|&at| now.since(at).as_secs_f64())
            .sum::<f64>()
            / self.enqueued.len().max(1) as f64
    }
}

struct SplitMemo {
    /// Team of each party, or `None` when the greedy fill got stuck.
    team_of: Option<Inline<usize>>,
    /// The criteria but the wait (which moves with time; set per pass).
    criteria: Criteria,
}

/// `can_fill` answers keyed by the size counts and the team rooms: the same
/// few questions come up in every fill and split.
#[derive(Default)]
struct FillTable {
    packed: HashMap<u64, bool, BuildHasherDefault<FxHasher>>,
    known: HashMap<Box<[u8]>, bool, BuildHasherDefault<FxHasher>>,
    key: Vec<u8>,
    sizes: Vec<usize>,
}

impl FillTable {
    /// `can_fill` of the multiset with `counts[s]` parties of size `s`.
    fn can_fill(&mut self, counts: &[usize], caps: &[usize]) -> bool {
        if counts.iter().skip(2).all(|&c| c == 0) {
            // Solos only: `can_fill` asks that the totals agree and that
            // some team has room for one.
            let solos = counts.get(1).copied().unwrap_or(0);
            let largest = caps.iter().copied().max().unwrap_or(0);
            return solos == caps.iter().sum::<usize>() && (solos == 0 || largest >= 1);
        }
        if let Some(ok) = two_teams(counts, caps) {
            return ok;
        }
        // Small formats (every count and room under 16, 15 numbers in all)
        // pack into one word; others use a byte key.
        if counts.len() + caps.len() < 16 && counts.iter().chain(caps).all(|&c| c < 16) {
            let packed = counts
                .iter()
                .chain(std::iter::once(&15))
                .chain(caps)
                .fold(0u64, |k, &c| (k << 4) | c as u64);
            if let Some(&ok) = self.packed.get(&packed) {
                return ok;
            }
            let ok = crate::teams::can_fill(expand(counts, &mut self.sizes), caps);
            self.packed.insert(packed, ok);
            return ok;
        }
        if counts.iter().chain(caps).any(|&c| c > u8::MAX as usize) {
            return crate::teams::can_fill(expand(counts, &mut self.sizes), caps);
        }
        self.key.clear();
        self.key.extend(counts.iter().map(|&c| c as u8));
        self.key.push(u8::MAX);
        self.key.extend(caps.iter().map(|&c| c as u8));
        if let Some(&ok) = self.known.get(&self.key[..]) {
            return ok;
        }
        let ok = crate::teams::can_fill(expand(counts, &mut self.sizes), caps);
        self.known.insert(self.key.clone().into_boxed_slice(), ok);
        ok
    }
}

/// `teams::can_fill` for two teams of at most 127 players together, by the
/// subset sums of the parties as a bit set: a few shifts where a table
/// lookup hashes the key (a fill asks this for every party it tries).
/// `None` when the question is outside that range.
fn two_teams(counts: &[usize], caps: &[usize]) -> Option<bool> {
    let &[first, second] = caps else {
        return None;
    };
    let room = first + second;
    if room > 127 || counts.first().is_some_and(|&c| c > 0) {
        return None;
    }
    let total: usize = counts.iter().enumerate().map(|(s, &c)| s * c).sum();
    if total != room {
        return Some(false);
    }
    let largest = first.max(second);
    // Subset sums of the parties of two or more; solos fill the rest.
    let mut sums: u128 = 1;
    let mut parties = 0;
    for (size, &c) in counts.iter().enumerate().skip(2) {
        if c == 0 {
            continue;
        }
        if size > largest {
            return Some(false);
        }
        parties += size * c;
        for _ in 0..c {
            sums |= sums << size;
        }
    }
    // Some sum S of parties in the first team with S <= first and the rest,
    // parties - S, at most second.
    let lo = parties.saturating_sub(second);
    if lo > first {
        return Some(false);
    }
    let window = (u128::MAX >> (127 - (first - lo))) << lo;
    Some(sums & window != 0)
}

fn expand<'a>(counts: &[usize], sizes: &'a mut Vec<usize>) -> &'a [usize] {
    sizes.clear();
    for (s, &c) in counts.iter().enumerate() {
        sizes.extend(std::iter::repeat_n(s, c));
    }
    sizes
}

/// A small multiplicative hash for the short byte keys of `FillTable`.
#[derive(Default)]
struct FxHasher(u64);

impl Hasher for FxHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }
}

/// The quality policy. It proposes exactly what [`QualityOracle`] proposes,
/// but keeps what does not change between passes: each ticket's party facts
/// (computed once when it joins), each seed's fills while its neighbourhood
/// is unchanged, each fill's splits, and the first pass at which a seed with
/// unchanged fills can match. A pass skips such a seed until then; the rest
/// it searches again.
pub struct Quality {
    params: QualityParams,
    /// As `QualityOracle::salt`.
    salt: Option<u64>,
    entries: Vec<Option<Entry>>,
    free: Vec<u32>,
    /// Slots in the pool's oldest-first (ticket id) order.
    order: Vec<u32>,
    /// Tickets by (rating, id), the pool's nearest-neighbour order, with
    /// what a seed's search reads of them: contiguous, so a walk through a
    /// large pool stays in cache.
    hot: Vec<Hot>,
    /// Tickets that joined, left or were taken since the last pass, sorted
    /// by rating at the start of a pass.
    changes: Vec<Change>,
    /// Tickets taken this pass, sorted by rating.
    taken_now: Vec<Change>,
    taken_slots: Vec<u32>,
    table: FillTable,
    scratch: Scratch,
    work: SearchWork,
    /// Tests set this to search every seed whose cache was kept again and
    /// assert that the search finds the same fills.
    #[cfg(test)]
    check_kept: bool,
    /// Tests count the seeds skipped until their next look.
    #[cfg(test)]
    skipped: usize,
}

#[derive(Default)]
struct Scratch {
    order: Vec<u32>,
    added: Vec<u32>,
    fresh: Vec<Hot>,
    merged: Vec<Hot>,
    removed: Vec<u32>,
    /// (distance, ticket) of the seed's neighbours, nearest first.
    nb: Vec<(f64, Hot)>,
    orders: [Vec<usize>; 3],
    keys: Vec<f64>,
    chosen: Vec<usize>,
    counts: Vec<usize>,
    caps: Vec<usize>,
    heap: Vec<Reverse<ByKey>>,
    /// Emptied fill buffers of replaced searches, for the next searches.
    spare: Vec<Vec<FillMemo>>,
    /// Where the last walk stopped in `hot`: the next index below and above.
    frontier: (usize, usize),
    /// Whether the last search found the candidates the seed had before.
    unchanged: bool,
}

/// A combined key and its neighbour index, ordered as the oracle's stable
/// sort orders them.
#[derive(Clone, Copy, Debug)]
struct ByKey(f64, usize);

impl PartialEq for ByKey {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}
impl Eq for ByKey {}
impl PartialOrd for ByKey {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for ByKey {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0).then(self.1.cmp(&other.1))
    }
}

impl Quality {
    pub fn new(params: QualityParams) -> Self {
        Quality {
            params,
            salt: None,
            entries: Vec::new(),
            free: Vec::new(),
            order: Vec::new(),
            hot: Vec::new(),
            changes: Vec::new(),
            taken_now: Vec::new(),
            taken_slots: Vec::new(),
            table: FillTable::default(),
            scratch: Scratch::default(),
            work: SearchWork::default(),
            #[cfg(test)]
            check_kept: false,
            #[cfg(test)]
            skipped: 0,
        }
    }

    fn entry(&self, slot: u32) -> &Entry {
        self.entries[slot as usize].as_ref().expect("live slot")
    }

    /// Brings the mirror of the pool up to date: new tickets get their
    /// facts, departed ones go, and both leave their rating in `changes`.
    fn sync(&mut self, view: &PoolView<'_>) {
        let mut order = std::mem::take(&mut self.scratch.order);
        let mut added = std::mem::take(&mut self.scratch.added);
        let mut removed = std::mem::take(&mut self.scratch.removed);
        order.clear();
        added.clear();
        removed.clear();
        let mut i = 0;
        for t in view.pool.oldest_first() {
            while i < self.order.len() && self.entry(self.order[i]).id < t.id {
                removed.push(self.order[i]);
                i += 1;
            }
            if i < self.order.len() && self.entry(self.order[i]).id == t.id {
                order.push(self.order[i]);
                i += 1;
                continue;
            }
            let entry = Entry {
                id: t.id,
                rating: t.rating,
                enqueued: t.enqueued,
                size: t.size(),
                facts: PartyFacts {
                    wait_s: 0.0,
                    ..party_facts(&self.params, view, t)
                },
                roles: t.roles.clone(),
                taken: false,
                cache: None,
                searched_at: SimTime::ZERO,
                next_look: SimTime::ZERO,
            };
            self.changes.push(Change::of(&entry, true));
            let slot = match self.free.pop() {
                Some(s) => {
                    self.entries[s as usize] = Some(entry);
                    s
                }
                None => {
                    self.entries.push(Some(entry));
                    (self.entries.len() - 1) as u32
                }
            };
            order.push(slot);
            added.push(slot);
        }
        removed.extend_from_slice(&self.order[i..]);
        for &slot in &removed {
            let e = self.entries[slot as usize].take().expect("live slot");
            self.changes.push(Change::of(&e, false));
        }
        if !added.is_empty() || !removed.is_empty() {
            let entries = &self.entries;
            self.hot.retain(|h| entries[h.slot as usize].is_some());
            let mut fresh = std::mem::take(&mut self.scratch.fresh);
            fresh.clear();
            fresh.extend(added.iter().map(|&slot| {
                let e = entries[slot as usize].as_ref().expect("live slot");
                Hot {
                    rating: e.rating,
                    experience: e.facts.aggregate.experience,
                    skill: e.facts.aggregate.skill,
                    enqueued: e.enqueued,
                    id: e.id,
                    slot,
                    languages: e.facts.languages,
                    size: e.size,
                    taken: false,
                }
            }));
            let key = |h: &Hot| (RatingKey(h.rating), h.id);
            fresh.sort_by_key(key);
            // Merge the few new tickets into the sorted rest.
            let mut merged = std::mem::take(&mut self.scratch.merged);
            merged.clear();
            let mut new = fresh.iter().peekable();
            for h in &self.hot {
                while let Some(n) = new.next_if(|n| key(n) < key(h)) {
                    merged.push(*n);
                }
                merged.push(*h);
            }
            merged.extend(new);
            std::mem::swap(&mut self.hot, &mut merged);
            self.scratch.merged = merged;
            self.scratch.fresh = fresh;
        }
        // Freed only now, so no slot is reused while `hot` still holds it.
        self.free.extend_from_slice(&removed);
        std::mem::swap(&mut self.order, &mut order);
        self.scratch.order = order;
        self.scratch.added = added;
        self.scratch.removed = removed;
    }

    #[cfg(test)]
    fn assert_kept_cache_is_current(&mut self, seed: u32, format: super::MatchFormat) {
        if !self.check_kept {
            return;
        }
        let ids = |c: &SeedCache| -> Vec<Vec<TicketId>> {
            c.fills.iter().map(|f| f.ids.to_vec()).collect()
        };
        let kept = self.entry(seed).cache.as_ref().expect("kept");
        let (lo, hi, prefixes, kept_ids) = (kept.lo, kept.hi, kept.prefixes, ids(kept));
        let fresh = self.search(seed, format);
        assert_eq!(kept_ids, ids(&fresh), "a kept search is stale");
        // The kept span stays, as it would have without the check.
        self.entries[seed as usize].as_mut().expect("live slot").cache = Some(SeedCache {
            lo,
            hi,
            prefixes,
            ..fresh
        });
    }

    /// Tests: a seed skipped until its `next_look` must have no candidate
    /// that passes its threshold now.
    #[cfg(test)]
    fn assert_skipped_seed_would_not_propose(&mut self, seed: u32, view: &PoolView<'_>) {
        if !self.check_kept {
            return;
        }
        let e = self.entry(seed);
        let (next_look, waited_s) = (e.next_look, view.now.since(e.enqueued).as_secs_f64());
        let threshold = self.params.threshold_at(waited_s);
        if let Some(best) = self.best(seed, view, threshold) {
            assert!(best.0 < threshold, "seed skipped until {next_look:?} passes at {:?}", view.now);
        }
        self.skipped += 1;
    }

    /// The seed's neighbours, as `Pool::nearest` walks them (ties to the
    /// lower rating, then the older ticket), skipping taken and oversized
    /// tickets; returns the distance of the farthest, infinite when there
    /// are fewer than `neighbours` (every eligible ticket is one).
    fn walk(&mut self, seed: u32, format: super::MatchFormat) -> f64 {
        let (r, id) = {
            let e = self.entry(seed);
            (e.rating, e.id)
        };
        let k = self.params.neighbours as usize;
        let hot = &self.hot;
        let q = hot.partition_point(|h| RatingKey(h.rating) < RatingKey(r));
        let nb = &mut self.scratch.nb;
        nb.clear();
        let (mut below, mut above) = (q, q);
        while nb.len() < k {
            let Some(i) = nearest_next(hot, r, &mut below, &mut above) else {
                break;
            };
            let t = hot[i];
            if t.id == id || t.taken || t.size > format.team_size {
                continue;
            }
            nb.push(((t.rating - r).abs(), t));
        }
        self.scratch.frontier = (below, above);
        if nb.len() < k {
            return f64::INFINITY;
        }
        nb.last().map_or(0.0, |n| n.0)
    }

    /// The seed's fills, as the oracle builds them, reusing the splits of
    /// fills it had before.
    fn search(&mut self, seed: u32, format: super::MatchFormat) -> SeedCache {
        let reach = self.walk(seed, format);
        let old = self.entries[seed as usize]
            .as_mut()
            .expect("live slot")
            .cache
            .take();
        let mut old_fills = old.map(|c| c.fills).unwrap_or_default();
        let (had, mut reused) = (old_fills.len(), 0);
        let p = &self.params;
        let s = &mut self.scratch;
        let entries = &self.entries;
        let get = |slot: u32| entries[slot as usize].as_ref().expect("live slot");
        let seed_e = get(seed);
        let n = s.nb.len();
        for o in &mut s.orders {
            o.clear();
            o.extend(0..n);
        }
        let seed_lang = seed_e.facts.languages;
        let nb = &s.nb;
        // The oracle's stable sort on "shares no language": a stable partition.
        s.orders[1].clear();
        s.orders[1].extend((0..n).filter(|&i| nb[i].1.languages & seed_lang != 0));
        s.orders[1].extend((0..n).filter(|&i| nb[i].1.languages & seed_lang == 0));
        s.keys.clear();
        s.keys.extend(nb.iter().map(|&(d, t)| {
            d / p.skill_range
                + (t.experience - seed_e.facts.aggregate.experience).abs()
                    / p.experience_range
        }));
        let keys = &s.keys;
        // The oracle's stable sort on the combined key, produced lazily: a
        // fill reads only the first few, so a heap beats sorting all.
        s.heap.clear();
        s.heap.extend(keys.iter().enumerate().map(|(i, &k)| Reverse(ByKey(k, i))));
        let mut heap = BinaryHeap::from(std::mem::take(&mut s.heap));

        s.caps.clear();
        s.caps.resize(format.teams, format.team_size);
        // At most one fill per order.
        // The fills' buffer comes from earlier searches, so a search in a
        // busy pool allocates nothing.
        let mut fills: Vec<FillMemo> = s.spare.pop().unwrap_or_default();
        let mut radius = 0.0f64;
        // Each order's prefix as `Prefixes` keeps it; `None` when a prefix
        // can only be bounded by the neighbourhood's reach.
        let mut fine = Some([0.0f64; 3]);
        // The farthest neighbour any fill chose. A greedy fill leaves its
        // state as it was when it passes over a neighbour, so losing a
        // neighbour it passed over leaves it as it is: only the chosen count.
        let mut within = 0.0f64;
        // Whether a prefix reaches past the neighbourhood's edge in a way
        // `Prefixes` can still state exactly, given the tickets beyond it.
        let mut past_edge = false;
        // Non-sharers nearer than this are in the language fill's prefix.
        let mut other_languages = f64::NEG_INFINITY;
        for which in 0..3 {
            // Fill: greedy along the order, keeping the set splittable.
            let counts = &mut s.counts;
            counts.clear();
            counts.resize(format.team_size + 1, 0);
            counts[seed_e.size] += 1;
            let mut room = format.players() - seed_e.size;
            s.chosen.clear();
            let mut last = None;
            let mut at = 0;
            // A role queue's check: the set can still fill every team's composition.
            let mut role_fill = RoleFill::new(format.roles, format.teams, &seed_e.roles);
            while room > 0 {
                let i = if which == 2 {
                    match heap.pop() {
                        Some(Reverse(ByKey(_, i))) => i,
                        None => break,
                    }
                } else {
                    match s.orders[which].get(at) {
                        Some(&i) => i,
                        None => break,
                    }
                };
                at += 1;
                last = Some(i);
                let size = nb[i].1.size;
                if size > room {
                    continue;
                }
                counts[size] += 1;
                let ok = size == 1 || {
                    counts[1] += room - size;
                    let ok = self
                        .table
                        .can_fill(counts, &s.caps);
                    counts[1] -= room - size;
                    ok
                };
                let roles_on = format.roles.is_some();
                let ok = ok && (!roles_on || role_fill.admits(&get(nb[i].1.slot).roles));
                if ok {
                    if roles_on {
                        role_fill.take(&get(nb[i].1.slot).roles);
                    }
                    s.chosen.push(i);
                    within = within.max(nb[i].0);
                    room -= size;
                } else {
                    counts[size] -= 1;
                }
            }
            // How far from the seed a change can reach into this order's
            // scanned prefix: by rating, up to its last ticket; by language,
            // the same if that ticket shares the seed's language (else every
            // sharer in the neighbourhood comes before it); by rating and
            // experience, up to `skill_range` times its combined key (the
            // key is at least distance over `skill_range`). A failed fill
            // scanned the whole neighbourhood.
            let prefix = match last {
                Some(i) if room == 0 => match which {
                    0 => nb[i].0,
                    1 if nb[i].1.languages & seed_lang != 0 => nb[i].0,
                    1 => reach,
                    _ => keys[i] * p.skill_range,
                },
                _ => reach,
            };
            radius = radius.max(prefix);
            if let (Some(fine), Some(i), 0) = (&mut fine, last, room) {
                fine[which] = if which == 2 { keys[i] } else { nb[i].0 };
            }
            // Two prefixes stay exact past the edge: the rating-and-
            // experience one is a key, not a distance; and a language fill
            // that ran out of sharers took every sharer (any sharer is in
            // its prefix) and the non-sharers up to its last.
            let exact = match (which, last) {
                (2, Some(_)) if room == 0 => true,
                (1, Some(i)) if room == 0 && nb[i].1.languages & seed_lang == 0 => {
                    if let Some(fine) = &mut fine {
                        fine[1] = f64::INFINITY;
                    }
                    other_languages = nb[i].0;
                    true
                }
                _ => false,
            };
            if prefix >= reach {
                if exact {
                    past_edge = true;
                } else {
                    fine = None;
                }
            }
            if room != 0 {
                continue;
            }
            s.chosen.sort_unstable();
            let ids: Inline<TicketId> = std::iter::once(seed_e.id)
                .chain(s.chosen.iter().map(|&i| nb[i].1.id))
                .collect();
            if fills.iter().any(|f| f.ids == ids) {
                continue;
            }
            if let Some(k) = old_fills.iter().position(|f| f.ids == ids) {
                fills.push(old_fills.swap_remove(k));
                reused += 1;
                continue;
            }
            let slots: Inline<u32> = std::iter::once(seed)
                .chain(s.chosen.iter().map(|&i| nb[i].1.slot))
                .collect();
            let feasible = self.table.can_fill(counts, &s.caps);
            // `criteria`'s split-free terms, with its arithmetic.
            let party = |i: usize| nb[i].1;
            let skill = spread(
                std::iter::once(seed_e.facts.aggregate.skill)
                    .chain(s.chosen.iter().map(|&i| party(i).skill)),
            );
            let exp = spread(
                std::iter::once(seed_e.facts.aggregate.experience)
                    .chain(s.chosen.iter().map(|&i| party(i).experience)),
            );
            let match_common = s
                .chosen
                .iter()
                .fold(seed_e.facts.languages, |m, &i| m & party(i).languages)
                != 0;
            let enqueued: Inline<SimTime> = std::iter::once(seed_e.enqueued)
                .chain(s.chosen.iter().map(|&i| party(i).enqueued))
                .collect();
            let tops: Inline<f64> = std::iter::once(seed_e.facts.top_adjusted)
                .chain(s.chosen.iter().map(|&i| get(nb[i].1.slot).facts.top_adjusted))
                .collect();
            let largest = s
                .chosen
                .iter()
                .map(|&i| nb[i].1.size)
                .fold(seed_e.size, usize::max);
            let bound = Criteria {
                balance: 1.0,
                skill: (1.0 - skill / p.skill_range).clamp(0.0, 1.0),
                experience: (1.0 - exp / p.experience_range).clamp(0.0, 1.0),
                top_player: top_player_bound(p, &tops, format.teams),
                parties: parties_bound(tops.len(), largest, format.teams, format.team_size),
                team_language: 1.0,
                match_language: if match_common { 1.0 } else { 0.0 },
                wait: 0.0,
            };
            fills.push(FillMemo {
                ids,
                slots,
                enqueued,
                feasible,
                bound,
                splits: [None, None],
            });
        }
        // A change farther than every prefix's reach sorts after each
        // prefix in every order, so it cannot alter a fill; and beyond the
        // neighbourhood's reach it does not enter the neighbourhood at all.
        // It may push the farthest neighbour out or pull the next one in,
        // but those lie beyond the radius too, so outside every prefix.
        s.heap = heap.into_vec();
        let radius = radius.min(reach);
        let r = seed_e.rating;
        // In a pool smaller than the neighbourhood, a prefix that took the
        // whole pool reaches infinitely far; the rounding slack is then on
        // the scale of the farthest neighbour, not infinite (an infinite
        // one would put every change in every prefix).
        let scale = if radius.is_finite() {
            radius
        } else {
            s.nb.last().map_or(0.0, |n| n.0)
        };
        let margin = 1e-6 * (1.0 + r.abs() + scale);
        let inside = s.nb.iter().filter(|n| n.0 <= within + margin).count();
        let mut prefixes = fine.map(|[by_rating, by_language, by_both]| Prefixes {
            by_rating,
            by_language,
            by_both,
            other_languages,
            within,
            room: self.params.neighbours as usize - inside,
            beyond: 0.0,
            beyond_room: usize::MAX,
            margin,
        });
        let mut span = radius;
        if let (Some(pre), true) = (prefixes.as_mut(), past_edge) {
            // The tickets a departure would pull into the neighbourhood,
            // nearest first, as `walk` would reach them, while each sorts
            // after every prefix.
            let seed_change = Change::of(seed_e, true);
            let (hot, id) = (&self.hot, seed_e.id);
            let (mut below, mut above) = s.frontier;
            let (mut count, mut far) = (0, reach);
            let mut exhausted = false;
            while count < BEYOND {
                let Some(i) = nearest_next(hot, r, &mut below, &mut above) else {
                    exhausted = true;
                    break;
                };
                let t = hot[i];
                if t.id == id || t.taken || t.size > format.team_size {
                    continue;
                }
                let c = Change {
                    rating: t.rating,
                    experience: t.experience,
                    languages: t.languages,
                    id: t.id,
                    joined: true,
                };
                if pre.touched_by(&seed_change, &c, p) {
                    break;
                }
                count += 1;
                far = (t.rating - r).abs();
            }
            if exhausted {
                // Every ticket past the edge sorts after every prefix, so no
                // departure can pull in one that alters a fill. A ticket
                // that joins past the edge could be pulled in later: the
                // span reaches every join, so each is tested as it comes.
                pre.beyond_room = usize::MAX;
                span = f64::INFINITY;
            } else {
                // With `count` 0 the next ticket past the edge sorts into a
                // prefix, so any departure from the neighbourhood makes the
                // search stale; joins are still tested one by one.
                pre.beyond = far;
                pre.beyond_room = count;
                span = far;
            }
        }
        // Fills are distinct, so finding every old one again and no other
        // means the same candidates.
        s.unchanged = had > 0 && reused == had && fills.len() == had;
        old_fills.clear();
        s.spare.push(old_fills);
        SeedCache {
            lo: r - span - margin,
            hi: r + span + margin,
            prefixes,
            fills,
        }
    }

    /// The split of kind `kind` of the seed's fill `fill`, computed on
    /// first need and kept with the fill.
    fn split_for(&mut self, seed: u32, fill: usize, kind: usize, format: super::MatchFormat) {
        let salt = self.salt.expect("drawn on the first pass");
        let cache = self.entries[seed as usize]
            .as_ref()
            .expect("live slot")
            .cache
            .as_ref()
            .expect("searched seed");
        let memo = &cache.fills[fill];
        if memo.splits[kind].is_some() {
            return;
        }
        let priority = team_priority(salt, kind, &memo.ids, format.teams);
        let facts: Inline<PartyFacts> = memo
            .slots
            .iter()
            .map(|&s| self.entry(s).facts.clone())
            .collect();
        let sizes: Inline<usize> = facts.iter().map(|f| f.aggregate.size).collect();
        let strengths: Inline<f64> = facts
            .iter()
            .map(|f| {
                let s = f.aggregate.adjusted_skill * f.aggregate.size as f64;
                if kind == 0 {
                    s
                } else {
                    s + 1e6
                }
            })
            .collect();
        let team_of = split_with_priority(
            &mut self.table,
            &sizes,
            &strengths,
            format.teams,
            format.team_size,
            32,
            &priority,
        );
        let team_of = if format.roles.is_some() {
            let masks: Vec<&[u8]> = memo.slots.iter().map(|&s| &self.entry(s).roles[..]).collect();
            let team_of = team_of.map(|t| t.to_vec());
            quality_roles::role_feasible(team_of, &masks, &strengths, format.teams, format.roles)
                .map(Inline::from_vec)
        } else {
            team_of
        };
        let criteria = match &team_of {
            Some(team_of) => {
                let mut by_team: SmallVec<[Inline<usize>; 4]> =
                    (0..format.teams).map(|_| Inline::new()).collect();
                for (p, &t) in team_of.iter().enumerate() {
                    by_team[t].push(p);
                }
                criteria(&self.params, &facts, &by_team, format.team_size)
            }
            // Never scored.
            None => memo.bound,
        };
        let memo = &mut self.entries[seed as usize]
            .as_mut()
            .expect("live slot")
            .cache
            .as_mut()
            .expect("searched seed")
            .fills[fill];
        memo.splits[kind] = Some(SplitMemo { team_of, criteria });
    }

    /// One seed's turn in a pass: search again if its kept search is
    /// stale, then propose its best candidate if that passes the seed's
    /// threshold (taking its tickets), or set when to look next.
    fn visit(&mut self, seed: u32, view: &PoolView<'_>, out: &mut Vec<Proposal>) {
        let format = view.format;
        self.work.seed_visits += 1;
        let (changes, taken_now) = (&self.changes, &self.taken_now);
        let e = self.entries[seed as usize].as_mut().expect("live slot");
        let facts = Change::of(e, true);
        let redo = match (self.params.research, e.cache.is_some()) {
            (_, false) => true,
            (None, true) => {
                let c = e.cache.as_mut().expect("kept search");
                stale(&facts, c, changes, taken_now, &self.params)
            }
            (Some(every), true) => {
                view.now >= e.searched_at + every.0
                    || lost_a_ticket(e.cache.as_ref().expect("kept search"), changes, taken_now)
            }
        };
        if redo {
            let cache = self.search(seed, format);
            self.work.searches += 1;
            self.work.searches_unchanged += u64::from(self.scratch.unchanged);
            let e = self.entries[seed as usize].as_mut().expect("live slot");
            e.cache = Some(cache);
            e.searched_at = view.now;
        } else {
            // With a cadence a kept search may miss tickets that joined
            // since: by definition, not a stale cache.
            #[cfg(test)]
            if self.params.research.is_none() {
                self.assert_kept_cache_is_current(seed, format);
            }
            if view.now < self.entry(seed).next_look {
                #[cfg(test)]
                self.assert_skipped_seed_would_not_propose(seed, view);
                return;
            }
        }
        let e = self.entry(seed);
        let threshold = self.params.threshold_at(view.now.since(e.enqueued).as_secs_f64());
        let best = self.best(seed, view, threshold);
        let Some((_, f, kind)) = best.filter(|b| b.0 >= threshold) else {
            let next_look = self.next_look(seed, view.now);
            self.entries[seed as usize].as_mut().expect("live slot").next_look = next_look;
            return;
        };
        let e = self.entry(seed);
        let memo = &e.cache.as_ref().expect("searched seed").fills[f];
        let split = memo.splits[kind].as_ref().expect("a split");
        let team_of = split.team_of.as_ref().expect("a split");
        let mut teams = vec![Vec::new(); format.teams];
        for (p, &t) in team_of.iter().enumerate() {
            teams[t].push(memo.ids[p]);
        }
        let tickets = memo.ids.to_vec();
        let slots = memo.slots.clone();
        for s in slots {
            let e = self.entries[s as usize].as_mut().expect("live slot");
            e.taken = true;
            let at = hot_index(&self.hot, e);
            self.hot[at].taken = true;
            let c = Change::of(e, false);
            let at = self.taken_now.partition_point(|x| x.rating < c.rating);
            self.taken_now.insert(at, c);
            self.taken_slots.push(s);
        }
        out.push(Proposal {
            tickets,
            teams: Some(teams),
            rating_weight: 1.0,
        });
    }

    /// The wait criterion of a fill, with the oracle's arithmetic.
    fn wait(&self, memo: &FillMemo, now: SimTime) -> f64 {
        (memo.mean_wait_s(now) / self.params.wait_scale.secs()).clamp(0.0, 1.0)
    }

    /// The seed's best candidate at `now` as (score, fill, kind).
    /// Candidates that cannot reach `threshold`, or cannot beat the best so
    /// far, are not split: the oracle keeps the first best, so neither can
    /// be what it proposes. `None`, or a best under the threshold, means no
    /// proposal.
    fn best(&mut self, seed: u32, view: &PoolView<'_>, threshold: f64) -> Option<(f64, usize, usize)> {
        let format = view.format;
        let n_fills = self.entry(seed).cache.as_ref().map_or(0, |c| c.fills.len());
        let mut best: Option<(f64, usize, usize)> = None;
        for f in 0..n_fills {
            let memo = &self.entry(seed).cache.as_ref().expect("searched seed").fills[f];
            if !memo.feasible {
                continue;
            }
            let wait = self.wait(memo, view.now);
            let bound = Criteria { wait, ..memo.bound }.score(&self.params.weights);
            if bound < threshold || best.is_some_and(|b| bound <= b.0) {
                continue;
            }
            self.split_for(seed, f, 0, format);
            self.split_for(seed, f, 1, format);
            let memo = &self.entry(seed).cache.as_ref().expect("searched seed").fills[f];
            let [Some(ma), Some(mb)] = &memo.splits else {
                unreachable!("both splits computed above");
            };
            let mut consider = |m: &SplitMemo, kind: usize| {
                let score = Criteria { wait, ..m.criteria }.score(&self.params.weights);
                if best.is_none_or(|b| score > b.0) {
                    best = Some((score, f, kind));
                }
            };
            if ma.team_of.is_some() {
                consider(ma, 0);
            }
            if mb.team_of.is_some() && (ma.team_of.is_none() || mb.team_of != ma.team_of) {
                consider(mb, 1);
            }
        }
        best
    }

    /// The earliest time after `now` at which one of the seed's kept
    /// candidates could pass its threshold: every candidate's score rises
    /// with its mean wait (until the wait criterion reaches 1) and the
    /// threshold falls with the seed's wait (to its floor), so the gap of
    /// each is a non-decreasing piecewise-linear function of time, solved
    /// here on its pieces. A candidate not yet split counts at its bound.
    /// Slightly early rather than late (a slack of 1e-9 on the score and a
    /// millisecond on the time): a look that finds nothing sets the next.
    fn next_look(&self, seed: u32, now: SimTime) -> SimTime {
        let p = &self.params;
        let e = self.entry(seed);
        let Some(cache) = e.cache.as_ref() else {
            return now;
        };
        let weights = &p.weights;
        let total = weights.as_array().iter().map(|w| w.1).sum::<f64>();
        // Score per unit of the wait criterion.
        let per_wait = weights.wait / total;
        let scale = p.wait_scale.secs();
        let age = now.since(e.enqueued).as_secs_f64();
        // Seconds from now until the threshold reaches its floor.
        let to_floor = if p.threshold_fall_per_s > 0.0 {
            ((p.threshold - p.threshold_floor) / p.threshold_fall_per_s - age).max(0.0)
        } else {
            f64::INFINITY
        };
        let mut soonest = f64::INFINITY;
        for memo in cache.fills.iter().filter(|m| m.feasible) {
            // The best this candidate can score with a wait criterion of 0.
            let at_zero = match &memo.splits {
                [None, None] => Criteria { wait: 0.0, ..memo.bound }.score(weights),
                splits => splits
                    .iter()
                    .flatten()
                    .filter(|m| m.team_of.is_some())
                    .map(|m| Criteria { wait: 0.0, ..m.criteria }.score(weights))
                    .fold(f64::NEG_INFINITY, f64::max),
            };
            if at_zero == f64::NEG_INFINITY {
                continue;
            }
            let mean_wait = memo.mean_wait_s(now);
            // Seconds from now until the wait criterion reaches 1.
            let to_cap = (scale - mean_wait).max(0.0);
            let gap = |dt: f64| {
                let wait = ((mean_wait + dt) / scale).clamp(0.0, 1.0);
                let threshold = p.threshold_at(age + dt);
                at_zero + per_wait * wait - threshold + 1e-9
            };
            if gap(0.0) >= 0.0 {
                return now;
            }
            let mut breaks = [to_cap, to_floor];
            breaks.sort_by(f64::total_cmp);
            let mut from = 0.0;
            for to in breaks.into_iter().chain([f64::INFINITY]) {
                if to <= from {
                    continue;
                }
                // The gap is linear on [from, to]: its slope from the rates.
                let slope = if from < to_cap { per_wait / scale } else { 0.0 }
                    + if from < to_floor { p.threshold_fall_per_s } else { 0.0 };
                // The last piece never ends: a rising gap crosses on it.
                let at_end = if to.is_finite() { gap(to) } else { f64::INFINITY };
                if slope > 0.0 && at_end >= 0.0 {
                    soonest = soonest.min(from + (-gap(from) / slope).max(0.0));
                    break;
                }
                from = to;
            }
        }
        if !soonest.is_finite() || soonest > 1e12 {
            return SimTime::MAX;
        }
        // A millisecond early, so rounding never puts the look after the
        // first pass that would accept.
        SimTime::from_ms((now.as_ms() + (soonest * 1000.0) as u64).saturating_sub(1))
    }
}

/// The best top-player criterion any split of parties whose best members'
/// adjusted MMRs are `tops` can score: the teams' best players are distinct
/// parties' tops, the highest is among them, and the weakest team's best is
/// at most the `teams`-th highest top, so the gap is at least their
/// difference (computed as `criteria` computes it, so the bound holds to
/// the last bit).
fn top_player_bound(p: &QualityParams, tops: &[f64], teams: usize) -> f64 {
    if teams < 2 || tops.len() < teams {
        return 1.0;
    }
    let mut sorted: Inline<f64> = tops.iter().copied().collect();
    sorted.sort_unstable_by(|a, b| b.total_cmp(a));
    let gap = sorted[0] - sorted[teams - 1];
    (1.0 - gap / p.top_range).clamp(0.0, 1.0)
}

/// The best party-parity criterion any split of `parties` parties, the
/// largest of `largest` players, into `teams` teams of `team_size` can
/// score: counts differ by one when the parties do not divide evenly, and
/// the largest party's team holds at most `1 + team_size - largest`
/// parties while the fullest of the others holds at least its share of the
/// rest.
fn parties_bound(parties: usize, largest: usize, teams: usize, team_size: usize) -> f64 {
    if team_size < 2 || teams < 2 {
        return 1.0;
    }
    let uneven = usize::from(!parties.is_multiple_of(teams));
    let with_largest = 1 + team_size.saturating_sub(largest);
    let others = parties.saturating_sub(with_largest).div_ceil(teams - 1);
    let gap = uneven.max(others.saturating_sub(with_largest));
    (1.0 - gap as f64 / (team_size - 1) as f64).clamp(0.0, 1.0)
}

/// `teams::balanced_split_by_priority`, with its feasibility checks
/// answered from `table`. The caller has checked that the parties fill the
/// teams. Returns each party's team.
fn split_with_priority(
    table: &mut FillTable,
    sizes: &[usize],
    strengths: &[f64],
    teams: usize,
    team_size: usize,
    max_swaps: u32,
    priority: &[usize],
) -> Option<Inline<usize>> {
    let mut order: Inline<usize> = (0..sizes.len()).collect();
    order.sort_by(balanced::placement_order(sizes, strengths));
    let mut team_of: Inline<usize> = smallvec::smallvec![usize::MAX; sizes.len()];
    let mut sums: SmallVec<[f64; 4]> = smallvec::smallvec![0.0f64; teams];
    let mut remaining: SmallVec<[usize; 16]> = smallvec::smallvec![0usize; team_size + 1];
    for &s in sizes {
        remaining[s] += 1;
    }
    let mut caps: SmallVec<[usize; 4]> = smallvec::smallvec![team_size; teams];
    let mut by_sum: SmallVec<[usize; 4]> = SmallVec::with_capacity(teams);
    for &p in &order {
        let size = sizes[p];
        // The lowest (sum, priority) among the teams the party fits: try
        // them in that order and stop at the first that fits.
        by_sum.clear();
        by_sum.extend(0..teams);
        by_sum.sort_unstable_by(|&a, &b| {
            sums[a]
                .total_cmp(&sums[b])
                .then(priority[a].cmp(&priority[b]))
        });
        let mut pick: Option<usize> = None;
        for &t in &by_sum {
            if caps[t] < size || remaining[size] == 0 {
                continue;
            }
            remaining[size] -= 1;
            caps[t] -= size;
            let ok = table.can_fill(&remaining, &caps);
            remaining[size] += 1;
            caps[t] += size;
            if ok {
                pick = Some(t);
                break;
            }
        }
        let team = pick?;
        remaining[size] -= 1;
        caps[team] -= size;
        team_of[p] = team;
        sums[team] += strengths[p];
    }
    balanced::improve_by_swaps(sizes, strengths, &mut team_of, &mut sums, max_swaps);
    Some(team_of)
}

impl Policy for Quality {
    fn schedule(&self) -> Schedule {
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
        self.salt.get_or_insert_with(|| rng.next_u64());
        if view.pool.players() < view.format.players() {
            return;
        }
        let format = view.format;
        self.sync(view);
        let cadenced = self.params.research.is_some();
        // A ticket taken last pass normally left since (a departure, which
        // `sync` logged); if the engine refused its match it is still here,
        // and to the seeds that searched after it was taken it has joined.
        // Its slot is free only from the end of `sync`, so not reused yet.
        // With a cadence, such a ticket has rejoined and searches afresh,
        // as the oracle's does.
        for &s in &self.taken_slots {
            if let Some(e) = self.entries[s as usize].as_mut() {
                self.changes.push(Change::of(e, true));
                if cadenced {
                    e.cache = None;
                }
            }
        }
        self.changes.sort_by(|a, b| a.rating.total_cmp(&b.rating));
        self.taken_now.clear();
        self.taken_slots.clear();
        let order = std::mem::take(&mut self.order);
        for &seed in &order {
            let e = self.entry(seed);
            if e.taken || e.size > format.team_size {
                continue;
            }
            self.visit(seed, view, out);
        }
        self.order = order;
        self.changes.clear();
        for &s in &self.taken_slots {
            if let Some(e) = self.entries[s as usize].as_mut() {
                e.taken = false;
                let at = hot_index(&self.hot, e);
                self.hot[at].taken = false;
            }
        }
    }

    fn score_threshold(&self, waited_s: f64) -> Option<f64> {
        Some(self.params.threshold_at(waited_s))
    }

    fn work(&self) -> Option<SearchWork> {
        Some(self.work)
    }

    fn match_score(&self, view: &PoolView<'_>, teams: &[Vec<TicketId>]) -> Option<f64> {
        super::quality_explain::match_score(&self.params, view, teams)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Player, PlayerId, Rating};
    use crate::policy::MatchFormat;
    use crate::pool::Pool;
    use rand::{Rng, RngCore, SeedableRng};

    /// Random pools over many passes, with joins, abandons, formed matches
    /// and refused proposals between passes: `Quality` must propose what
    /// `QualityOracle` proposes and leave the rng where it leaves it (one
    /// draw, on the first pass).
    /// Returns how many seeds `Quality` skipped until their next look.
    fn agree_over_passes(
        seed: u64,
        format: MatchFormat,
        params: &QualityParams,
        passes: usize,
    ) -> usize {
        agree_with_churn(seed, format, params, passes, Churn::default()).skipped
    }

    /// How `agree_with_churn` varies the pools.
    #[derive(Clone, Copy)]
    struct Churn {
        /// At most this many (of 1 to 11) joins per pass: few keep the
        /// pool near the neighbourhood's size.
        max_arrivals: usize,
        /// Each player speaks one of four languages, so a seed's language
        /// fill reaches far for sharers.
        one_language: bool,
        /// Games played within a narrow band, so the rating-and-experience
        /// fill stops short of the neighbourhood's edge and a search is
        /// kept through changes that miss its prefixes.
        alike: bool,
    }

    impl Default for Churn {
        fn default() -> Self {
            Churn { max_arrivals: 12, one_language: false, alike: false }
        }
    }

    fn agree_with_churn(
        seed: u64,
        format: MatchFormat,
        params: &QualityParams,
        passes: usize,
        churn: Churn,
    ) -> Agreement {
        let Churn { max_arrivals, one_language, alike } = churn;
        let mut g = Pcg64::seed_from_u64(seed);
        let mut players: Vec<Player> = Vec::new();
        let mut pool = Pool::default();
        let mut fast = Quality::new(params.clone());
        fast.check_kept = true;
        let mut slow = QualityOracle::new(params.clone());
        let mut rng_fast = Pcg64::seed_from_u64(seed.wrapping_mul(31) + 7);
        let mut rng_slow = rng_fast.clone();
        // With a cadence, the exact policy on the same pools, to show the
        // cadence changes what is proposed.
        let mut exact = params
            .research
            .map(|_| QualityOracle::new(QualityParams { research: None, ..params.clone() }));
        let mut rng_exact = rng_fast.clone();
        let mut differ_from_exact = 0;
        let mut next_ticket = 0u32;
        let mut now_ms = 600_000u64;
        // Some runs put ratings on a coarse grid, so distances tie.
        let grid = g.random_bool(0.5);
        let spread = [50.0, 400.0, 1500.0][g.random_range(0..3)];
        let arrivals = g.random_range(1..12).min(max_arrivals);
        let mut proposals = 0;
        for pass in 0..passes {
            for _ in 0..g.random_range(0..=arrivals) {
                let size = if g.random_bool(0.05) {
                    format.team_size + 1
                } else if g.random_bool(0.6) {
                    1
                } else {
                    g.random_range(1..=format.team_size)
                };
                let base: f64 = 2500.0 + g.random_range(-spread..spread);
                let mut party = crate::model::Party::new();
                let mut masks = crate::teams::PartyRoles::new();
                let mut sum = 0.0;
                for _ in 0..size {
                    let mut r = base + g.random_range(-100.0..100.0);
                    if grid {
                        r = (r / 100.0).round() * 100.0;
                    }
                    let id = PlayerId(players.len() as u32);
                    let mut pl = Player::new(id, r, Rating::new(r, 100.0, 0.06));
                    pl.party_rating = Rating::new(r + g.random_range(-50.0..50.0), 100.0, 0.06);
                    pl.languages = if one_language {
                        1 << g.random_range(0..4)
                    } else {
                        g.random_range(1..16)
                    };
                    pl.games = if alike {
                        g.random_range(400..420)
                    } else {
                        g.random_range(0..3000)
                    };
                    // Roles are drawn only for a role queue, so the other
                    // formats' pools stay what they were.
                    if let Some(comp) = format.roles {
                        let main = g.random_range(0..comp.roles());
                        let second = g.random_range(0..comp.roles());
                        pl.main_role = main as u8;
                        pl.roles = (1 << main) | if g.random_bool(0.2) { 1 << second } else { 0 };
                        masks.push(pl.roles);
                    }
                    sum += r;
                    players.push(pl);
                    party.push(id);
                }
                let waited = g.random_range(0..400_000u64).min(now_ms);
                pool.insert(WaitingTicket {
                    id: TicketId(next_ticket),
                    players: party,
                    rating: sum / size as f64,
                    enqueued: SimTime::from_ms(now_ms - waited),
                    requeue: false,
                    roles: masks,
                });
                next_ticket += 1;
            }
            let ids: Vec<TicketId> = pool.oldest_first().map(|t| t.id).collect();
            for id in ids {
                if g.random_bool(0.03) {
                    pool.remove(id);
                }
            }
            now_ms += g.random_range(500..5000);
            let view = PoolView {
                now: SimTime::from_ms(now_ms),
                pool: &pool,
                players: &players,
                format,
            };
            let (mut a, mut b) = (Vec::new(), Vec::new());
            fast.propose(&view, Trigger::Tick, &mut rng_fast, &mut a);
            slow.propose(&view, Trigger::Tick, &mut rng_slow, &mut b);
            assert_eq!(a, b, "seed {seed}, pass {pass}");
            if let Some(exact) = exact.as_mut() {
                let mut c = Vec::new();
                exact.propose(&view, Trigger::Tick, &mut rng_exact, &mut c);
                differ_from_exact += usize::from(c != a);
            }
            assert_eq!(
                rng_fast.clone().next_u64(),
                rng_slow.clone().next_u64(),
                "seed {seed}, pass {pass}: draws differ"
            );
            proposals += a.len();
            for prop in &a {
                // Now and then the engine refuses a match and its tickets stay.
                if g.random_bool(0.9) {
                    for t in &prop.tickets {
                        pool.remove(*t);
                    }
                }
            }
        }
        assert!(proposals > 0 || passes < 10, "seed {seed}: nothing proposed, nothing compared");
        Agreement { skipped: fast.skipped, differ_from_exact }
    }

    /// What `agree_with_churn` saw beyond agreement.
    struct Agreement {
        /// Seeds `Quality` skipped until their next look.
        skipped: usize,
        /// With a cadence, passes at which the exact policy would have
        /// proposed otherwise.
        differ_from_exact: usize,
    }

    #[test]
    fn incremental_search_proposes_what_the_oracle_proposes() {
        let mut skipped = 0;
        for seed in 0..60 {
            let mut g = Pcg64::seed_from_u64(1000 + seed);
            let format = [
                MatchFormat { teams: 2, team_size: 5, roles: None },
                MatchFormat { teams: 2, team_size: 2, roles: None },
                MatchFormat { teams: 3, team_size: 3, roles: None },
            ][seed as usize % 3];
            let params = QualityParams {
                neighbours: [4, 12, 40][g.random_range(0..3)],
                threshold: g.random_range(0.6..0.95),
                threshold_floor: 0.5,
                threshold_fall_per_s: g.random_range(0.0005..0.005),
                ..QualityParams::default()
            };
            skipped += agree_over_passes(seed, format, &params, 80);
        }
        // Seeds waiting for their threshold were skipped, and each skip was
        // checked: its best candidate could not pass.
        assert!(skipped > 1000, "only {skipped} seeds skipped");
    }

    /// Pools that hover at the neighbourhood's size, with alike experience
    /// so searches are kept through changes that miss their prefixes: joins
    /// near a seed, over several passes, push scanned neighbours out, and
    /// every kept search is searched again and must find the same fills.
    /// A thousand pools: a room rule that counts the scanned neighbours'
    /// reach 10% short first fails after some 500.
    #[test]
    fn kept_searches_stay_current_when_the_pool_hovers_at_the_neighbourhood_size() {
        for seed in 0..1000 {
            let mut g = Pcg64::seed_from_u64(7000 + seed);
            let format = [
                MatchFormat { teams: 2, team_size: 5, roles: None },
                MatchFormat { teams: 2, team_size: 2, roles: None },
                MatchFormat { teams: 2, team_size: 1, roles: None },
            ][seed as usize % 3];
            let params = QualityParams {
                neighbours: g.random_range(4..40),
                threshold: g.random_range(0.6..0.95),
                threshold_floor: 0.5,
                threshold_fall_per_s: g.random_range(0.0005..0.005),
                ..QualityParams::default()
            };
            let churn = Churn {
                max_arrivals: [6, 12][seed as usize / 3 % 2],
                one_language: seed % 8 == 0,
                alike: true,
            };
            agree_with_churn(seed, format, &params, 200, churn);
        }
    }

    /// The same agreement in role queues: fills that keep the composition
    /// reachable and role-feasible splits, searched incrementally and from
    /// scratch.
    #[test]
    fn with_roles_the_incremental_search_proposes_what_the_oracle_proposes() {
        for seed in 0..12 {
            let mut g = Pcg64::seed_from_u64(5000 + seed);
            let format = [
                MatchFormat {
                    teams: 2,
                    team_size: 5,
                    roles: Some(crate::teams::Composition::new(&[1, 1, 3])),
                },
                MatchFormat {
                    teams: 2,
                    team_size: 2,
                    roles: Some(crate::teams::Composition::new(&[1, 1])),
                },
            ][seed as usize % 2];
            let params = QualityParams {
                neighbours: [6, 20][g.random_range(0..2)],
                threshold: g.random_range(0.5..0.9),
                threshold_floor: 0.3,
                threshold_fall_per_s: g.random_range(0.0005..0.005),
                ..QualityParams::default()
            };
            agree_over_passes(seed, format, &params, 60);
        }
    }

    /// With a `research` cadence, in plain and role queues: the kept
    /// fills, rescored each pass and searched again when the cadence comes
    /// round or a ticket of theirs goes, propose what the oracle with the
    /// same cadence proposes; and the cadence does change what is proposed.
    #[test]
    fn with_a_research_cadence_the_incremental_search_proposes_what_the_oracle_proposes() {
        let (mut skipped, mut differ) = (0, 0);
        for seed in 0..48 {
            let mut g = Pcg64::seed_from_u64(9000 + seed);
            let format = [
                MatchFormat { teams: 2, team_size: 5, roles: None },
                MatchFormat { teams: 2, team_size: 2, roles: None },
                MatchFormat { teams: 3, team_size: 3, roles: None },
                MatchFormat {
                    teams: 2,
                    team_size: 5,
                    roles: Some(crate::teams::Composition::new(&[1, 1, 3])),
                },
            ][seed as usize % 4];
            let params = QualityParams {
                neighbours: [4, 12, 40][g.random_range(0..3)],
                threshold: g.random_range(0.6..0.95),
                threshold_floor: 0.5,
                threshold_fall_per_s: g.random_range(0.0005..0.005),
                research: Some(HumanDuration::from_secs([3, 10, 30][g.random_range(0..3)])),
                ..QualityParams::default()
            };
            let churn = Churn { one_language: seed % 5 == 0, ..Churn::default() };
            let a = agree_with_churn(seed, format, &params, 80, churn);
            skipped += a.skipped;
            differ += a.differ_from_exact;
        }
        assert!(skipped > 500, "only {skipped} seeds skipped");
        assert!(differ > 20, "the cadence changed only {differ} passes");
    }

    #[test]
    fn two_teams_by_subset_sums_answers_as_can_fill_does() {
        let mut g = Pcg64::seed_from_u64(11);
        let (mut yes, mut no) = (0, 0);
        for _ in 0..20_000 {
            let team_size = g.random_range(1..16);
            let caps = [g.random_range(0..=team_size), g.random_range(0..=team_size)];
            // Counts near the rooms' total, so both answers come up.
            let mut counts = vec![0; team_size + 2];
            let mut players = 0;
            let target = caps[0] + caps[1];
            let exact = g.random_bool(0.8);
            while players < target {
                let most = if exact { target - players } else { team_size + 1 };
                let s = g.random_range(1..=most.min(team_size + 1));
                counts[s] += 1;
                players += s;
            }
            let mut sizes = Vec::new();
            let expected = crate::teams::can_fill(expand(&counts, &mut sizes), &caps);
            assert_eq!(two_teams(&counts, &caps), Some(expected), "{counts:?} into {caps:?}");
            if expected {
                yes += 1;
            } else {
                no += 1;
            }
        }
        assert!(yes > 2000 && no > 2000, "{yes} fillable, {no} not");
        assert_eq!(two_teams(&[0, 3], &[1, 1, 1]), None);
        assert_eq!(two_teams(&[0, 0, 100], &[100, 100]), None);
    }

    #[test]
    fn split_with_a_given_priority_is_the_balanced_split() {
        let mut g = Pcg64::seed_from_u64(3);
        let mut table = FillTable::default();
        let mut compared = 0;
        for _ in 0..3000 {
            let teams = g.random_range(2..4);
            let team_size = g.random_range(1..6);
            let mut sizes = Vec::new();
            let mut room = teams * team_size;
            while room > 0 {
                let s = g.random_range(1..=team_size.min(room));
                sizes.push(s);
                room -= s;
            }
            let strengths: Vec<f64> = sizes
                .iter()
                .map(|&s| s as f64 * (g.random_range(0..40) as f64 * 50.0))
                .collect();
            let priority = team_priority(g.next_u64(), 0, &[], teams);
            let expected =
                balanced_split_by_priority(&sizes, &strengths, teams, team_size, 32, &priority);
            let counts = {
                let mut c = vec![0; team_size + 1];
                sizes.iter().for_each(|&s| c[s] += 1);
                c
            };
            if !table.can_fill(&counts, &vec![team_size; teams]) {
                assert_eq!(expected, None);
                continue;
            }
            let got = split_with_priority(
                &mut table, &sizes, &strengths, teams, team_size, 32, &priority,
            );
            assert_eq!(got.map(|t| balanced::members_by_team(&t, teams)), expected, "{sizes:?} {strengths:?}");
            compared += 1;
        }
        assert!(compared > 1000);
    }

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

    /// A kept search goes stale on a change that sorts into a prefix, and
    /// once the joins near the seed, over however many passes, outnumber
    /// the room the neighbourhood had there.
    #[test]
    fn a_kept_search_goes_stale_when_a_change_enters_a_prefix_or_the_room_runs_out() {
        let params = QualityParams::default();
        let cache = |room| SeedCache {
            lo: 1400.0,
            hi: 1600.0,
            prefixes: Some(Prefixes {
                by_rating: 30.0,
                by_language: 60.0,
                by_both: 0.05,
                other_languages: f64::NEG_INFINITY,
                within: 75.0,
                room,
                beyond: 0.0,
                beyond_room: usize::MAX,
                margin: 1e-3,
            }),
            fills: Vec::new(),
        };
        let far_exp = 9.0;
        let change = |rating: f64, experience: f64, languages: u32| Change {
            rating,
            experience,
            languages,
            id: TicketId(99),
            joined: true,
        };
        let gone = |id: u32, rating: f64| Change {
            id: TicketId(id),
            joined: false,
            ..change(rating, far_exp, 0b10)
        };
        let seed = change(1500.0, 6.0, 0b01);
        let stale = |cache: &mut SeedCache, changes: &[Change], taken: &[Change], p| {
            stale(&seed, cache, changes, taken, p)
        };
        // Nearer by rating than the last scanned ticket.
        assert!(stale(&mut cache(5), &[change(1529.0, far_exp, 0b10)], &[], &params));
        // A sharer within the language prefix; a non-sharer there is not.
        assert!(stale(&mut cache(5), &[change(1455.0, far_exp, 0b11)], &[], &params));
        assert!(!stale(&mut cache(5), &[change(1455.0, far_exp, 0b10)], &[], &params));
        // Close in rating and experience together: key 45/1500 + 0.02/2.
        assert!(stale(&mut cache(5), &[change(1545.0, 6.02, 0b10)], &[], &params));
        // Taken this pass, or gone, counts as a change only when a fill
        // chose it: passing over a ticket changed nothing in a greedy fill.
        let chose = |mut c: SeedCache, ids: &[u32]| {
            c.fills.push(FillMemo {
                ids: std::iter::once(7).chain(ids.iter().copied()).map(TicketId).collect(),
                slots: Inline::new(),
                enqueued: Inline::new(),
                feasible: true,
                bound: Criteria {
                    balance: 1.0,
                    skill: 1.0,
                    experience: 1.0,
                    top_player: 1.0,
                    parties: 1.0,
                    team_language: 1.0,
                    match_language: 1.0,
                    wait: 0.0,
                },
                splits: [None, None],
            });
            c
        };
        assert!(stale(&mut chose(cache(5), &[3, 4]), &[], &[gone(4, 1510.0)], &params));
        assert!(stale(&mut chose(cache(5), &[4]), &[gone(4, 1510.0)], &[], &params));
        assert!(!stale(&mut chose(cache(5), &[3]), &[], &[gone(4, 1510.0)], &params));
        assert!(!stale(&mut chose(cache(5), &[3]), &[gone(4, 1510.0)], &[], &params));
        // The seed is no fill's choice, so its id is not one either.
        assert!(!stale(&mut chose(cache(5), &[3]), &[gone(7, 1510.0)], &[], &params));
        // Outside the span: never.
        assert!(!stale(&mut cache(0), &[change(1700.0, 6.0, 0b01)], &[], &params));

        // Joins that miss every prefix use up the room near the seed.
        let miss = change(1570.0, far_exp, 0b10);
        let mut kept = cache(2);
        assert!(!stale(&mut kept, &[miss], &[], &params));
        assert!(!stale(&mut kept, &[miss], &[], &params));
        assert!(stale(&mut kept, &[miss], &[], &params), "the third join overflows");
        assert!(stale(&mut cache(1), &[miss, miss], &[], &params));
        // Beyond `within` they use none.
        let beyond = change(1590.0, far_exp, 0b10);
        assert!(!stale(&mut cache(0), &[beyond, beyond], &[], &params));

        // A rating-and-experience prefix past the neighbourhood's edge (at
        // 80 points; its key 0.07 is 105 points at equal experience): up to
        // `beyond_room` departures within `beyond` keep the search; one more
        // may pull in a ticket that sorts into a prefix. A join pulls none
        // in (it pushes one out).
        let past_edge = |beyond_room| {
            let mut c = cache(10);
            let p = c.prefixes.as_mut().expect("prefixes");
            (p.by_both, p.beyond, p.beyond_room) = (0.07, 90.0, beyond_room);
            (c.lo, c.hi) = (1410.0, 1590.0);
            c
        };
        let out = gone(5, 1585.0);
        let mut kept = past_edge(2);
        assert!(!stale(&mut kept, &[out], &[], &params));
        assert!(!stale(&mut kept, &[], &[out], &params));
        assert!(stale(&mut kept, &[out], &[], &params), "the third departure overflows");
        let joined = change(1585.0, far_exp, 0b10);
        assert!(!stale(&mut past_edge(0), &[joined, joined, joined], &[], &params));
        // Past `beyond`, none count; within it a key below the prefix's
        // is a change into the prefix.
        assert!(!stale(&mut past_edge(0), &[change(1595.0, 6.0, 0b01)], &[], &params));
        assert!(stale(&mut past_edge(5), &[change(1585.0, 6.0, 0b10)], &[], &params));
    }

    /// A departure from a dense neighbourhood pulls in the next ticket past
    /// its edge. A search is kept through as many departures as there are
    /// tickets past the edge, nearest first, that sort after every prefix;
    /// the next one's experience matches the seed's, so it would sort into
    /// the rating-and-experience fill's prefix, and the departure that pulls
    /// it in makes the search stale. The kept-search check searches every
    /// kept seed again and would find the new fill.
    #[test]
    fn a_departure_that_pulls_in_a_ticket_near_in_experience_makes_the_search_stale() {
        let format = MatchFormat { teams: 2, team_size: 2, roles: None };
        let params = QualityParams {
            neighbours: 6,
            // Nothing passes, so the pool stays as built.
            threshold: 1.0,
            threshold_floor: 1.0,
            ..QualityParams::default()
        };
        let mut players = Vec::new();
        let mut pool = Pool::default();
        // The seed at 2500; six neighbours at 2501-2506, all about 0.1 of
        // experience away (so the fill by rating and experience takes the
        // three nearest, and its prefix reaches some 80 points); past the
        // edge, at 2507 a ticket as far in experience, at 2508 one with the
        // seed's experience.
        let tickets = [(2500.0, 400), (2501.0, 446), (2502.0, 446), (2503.0, 446), (2504.0, 446),
            (2505.0, 446), (2506.0, 446), (2507.0, 446), (2508.0, 400), (2510.0, 446)];
        for (k, &(rating, games)) in tickets.iter().enumerate() {
            let id = PlayerId(k as u32);
            let mut pl = Player::new(id, rating, Rating::new(rating, 100.0, 0.06));
            pl.party_rating = Rating::new(rating, 100.0, 0.06);
            pl.languages = 1;
            pl.games = games;
            players.push(pl);
            let mut party = crate::model::Party::new();
            party.push(id);
            pool.insert(WaitingTicket {
                id: TicketId(k as u32),
                players: party,
                rating,
                enqueued: SimTime::from_ms(1000 * k as u64),
                requeue: false,
                roles: crate::teams::PartyRoles::new(),
            });
        }
        let mut fast = Quality::new(params);
        fast.check_kept = true;
        let mut rng = Pcg64::seed_from_u64(1);
        let mut pass = |pool: &Pool, now_s: u64| {
            let view = PoolView { now: SimTime::from_ms(now_s * 1000), pool, players: &players, format };
            let mut out = Vec::new();
            fast.propose(&view, Trigger::Tick, &mut rng, &mut out);
            assert!(out.is_empty());
        };
        pass(&pool, 20);
        // The farthest neighbours leave; neither sorts into a prefix.
        pool.remove(TicketId(6));
        pass(&pool, 22);
        pool.remove(TicketId(5));
        pass(&pool, 24);
    }

    /// Every split of random candidates scores the top-player and party
    /// criteria at most their split-free bounds, and the bounds are what
    /// the best split reaches in most candidates (a bound left at 1 would
    /// split every candidate for nothing).
    #[test]
    fn split_free_bounds_hold_for_every_split_and_are_mostly_tight() {
        let p = QualityParams::default();
        let mut g = Pcg64::seed_from_u64(11);
        let (mut cases, mut top_tight, mut parties_tight) = (0, 0, 0);
        for _ in 0..400 {
            let teams = g.random_range(2..=3usize);
            let team_size = g.random_range(2..=(10 / teams));
            let mut sizes = Vec::new();
            let mut left = teams * team_size;
            while left > 0 {
                let s = g.random_range(1..=left.min(team_size));
                sizes.push(s);
                left -= s;
            }
            let facts: Vec<PartyFacts> = sizes
                .iter()
                .map(|&s| {
                    let mmrs: Vec<f64> = (0..s).map(|_| g.random_range(1000.0..5000.0)).collect();
                    party(&mmrs, 100.0, 1, 0.0)
                })
                .collect();
            let tops: Vec<f64> = facts.iter().map(|f| f.top_adjusted).collect();
            let largest = sizes.iter().copied().max().unwrap();
            let top_bound = top_player_bound(&p, &tops, teams);
            let parties_bound = parties_bound(sizes.len(), largest, teams, team_size);
            let (mut best_top, mut best_parties) = (f64::NEG_INFINITY, f64::NEG_INFINITY);
            for code in 0..teams.pow(sizes.len() as u32) {
                let mut split = vec![Vec::new(); teams];
                let mut c = code;
                for i in 0..sizes.len() {
                    split[c % teams].push(i);
                    c /= teams;
                }
                let full = split
                    .iter()
                    .all(|t| t.iter().map(|&i| sizes[i]).sum::<usize>() == team_size);
                if !full {
                    continue;
                }
                let c = criteria(&p, &facts, &split, team_size);
                assert!(c.top_player <= top_bound, "{sizes:?} {tops:?}: {} > {top_bound}", c.top_player);
                assert!(c.parties <= parties_bound, "{sizes:?}: {} > {parties_bound}", c.parties);
                best_top = best_top.max(c.top_player);
                best_parties = best_parties.max(c.parties);
            }
            if best_top == f64::NEG_INFINITY {
                continue;
            }
            cases += 1;
            top_tight += usize::from(best_top == top_bound);
            parties_tight += usize::from(best_parties == parties_bound);
        }
        assert!(cases > 300, "{cases}");
        assert!(top_tight * 10 > cases * 7, "top tight in {top_tight} of {cases}");
        assert!(parties_tight * 10 > cases * 8, "parties tight in {parties_tight} of {cases}");
    }

    /// A 5-stack against five solos can only split one way: a gap of four
    /// parties, the worst parity.
    #[test]
    fn a_full_stack_forces_the_worst_party_parity() {
        assert_eq!(parties_bound(6, 5, 2, 5), 0.0);
        assert_eq!(parties_bound(10, 1, 2, 5), 1.0);
        assert_eq!(parties_bound(9, 2, 2, 5), 0.75);
    }

    /// `perf.json`'s `search`: a new seed is searched, a kept one is not,
    /// a join searches again only the seeds it is nearest to, and a search
    /// of an unchanged pool counts as finding the same candidates.
    #[test]
    fn search_work_counts_visits_searches_and_searches_that_found_the_same() {
        use crate::policy::testkit::Harness;
        // 1v1 on one language and alike experience: each seed's one
        // candidate is its nearest rating. Nothing reaches a flat 1.0.
        let format = MatchFormat { teams: 2, team_size: 1, roles: None };
        let params = QualityParams {
            threshold: 1.0,
            threshold_floor: 1.0,
            threshold_fall_per_s: 0.0,
            neighbours: 4,
            ..QualityParams::default()
        };
        // 1000, 1010, ..., 1110, and 1055 to join later.
        let mut ratings: Vec<f64> = (0..12).map(|i| 1000.0 + 10.0 * i as f64).collect();
        ratings.push(1055.0);
        let mut h = Harness::typed(Quality::new(params));
        h.format = format;
        h.population(&ratings);
        for (i, &r) in ratings[..12].iter().enumerate() {
            h.join(i as u32, r, 0.0);
        }
        let pass = |h: &mut Harness<Quality>, s: f64| {
            assert!(h.tick(s).is_empty(), "nothing reaches the threshold");
            h.policy.work().expect("quality reports its work")
        };
        let work = |seed_visits, searches, searches_unchanged| SearchWork {
            seed_visits,
            searches,
            searches_unchanged,
        };
        assert_eq!(pass(&mut h, 1.0), work(12, 12, 0));
        // Nothing changed: every seed is visited, none searched.
        assert_eq!(pass(&mut h, 2.0), work(24, 12, 0));
        // Searching a seed again on the same pool finds what it had.
        let q = &mut h.policy;
        let seed = q.order[3];
        let again = q.search(seed, format);
        q.entries[seed as usize].as_mut().expect("live slot").cache = Some(again);
        assert!(q.scratch.unchanged);
        // 1055 joins: it is searched, and so are 1050 and 1060, the only
        // seeds whose nearest it now is (each took the neighbour 10 below).
        h.join(12, 1055.0, 2.5);
        assert_eq!(pass(&mut h, 3.0), work(37, 15, 0));
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
