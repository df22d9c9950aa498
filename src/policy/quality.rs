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
//! Incremental search. A pass proposes, oldest seed first, each seed's best
//! candidate that meets the seed's threshold. Searching every seed again on
//! every tick made the policy's cost grow with pool size times ticks, so
//! `Quality` keeps each seed's candidates (fills and splits, with every fact
//! but the waits) and re-searches a seed only when its candidates may have
//! changed: a ticket joined, left or was taken within the rating `region`
//! its fills drew from (only tickets that would come before a fill's last
//! pick can change it). Between changes only time moves, and every
//! candidate's score minus the threshold is concave in time (waits grow at
//! 1 s/s until the wait criterion clamps at 1; the threshold falls linearly
//! to its floor), so its tangent bounds the earliest moment the seed can
//! pass: the seed is not scored again before then. When it is, all its
//! candidates are scored at that moment with the same arithmetic as the
//! from-scratch pass, so the choice among them (which moves when a
//! candidate's wait clamps) is the same. The from-scratch pass stays in
//! `quality_oracle.rs`; tests show both propose the same on random pools and
//! give identical records on the dota2-5v5 preset. Team splits draw from an
//! rng seeded by the run's policy stream and the seed ticket, so skipping a
//! seed does not shift another seed's draws. The engine reports joins and
//! departures through `Policy::on_join`, `on_abandon` and `on_formed`; a
//! caller that does not (the pool size disagrees, or a proposed ticket is
//! still waiting) makes the policy start again from the pool.

use super::{
    check_non_negative, check_tick, FormedMatch, Policy, PoolView, Proposal, Schedule, Trigger,
};
use crate::engine::WaitingTicket;
use crate::model::{HumanDuration, ParamError, SimTime, TicketId};
use crate::teams::balanced_split;
use crate::teams::dota::{self, PartyAdjust};
use rand::{Rng, SeedableRng};
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

fn unit(key: &str, v: f64) -> Result<(), ParamError> {
    if (0.0..=1.0).contains(&v) {
        Ok(())
    } else {
        Err(ParamError::new(
            key,
            format!("must be between 0 and 1, got {v}"),
        ))
    }
}

fn above_zero(key: &str, v: f64) -> Result<(), ParamError> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(ParamError::new(key, format!("must be above 0, got {v}")))
    }
}

impl QualityParams {
    pub fn validate(&self) -> Result<(), ParamError> {
        unit("threshold", self.threshold)?;
        unit("threshold_floor", self.threshold_floor)?;
        if self.threshold_floor > self.threshold {
            return Err(ParamError::new(
                "threshold_floor",
                format!(
                    "must be at most `threshold` ({}), got {}",
                    self.threshold, self.threshold_floor
                ),
            ));
        }
        check_non_negative("threshold_fall_per_s", self.threshold_fall_per_s)?;
        for (name, w) in self.weights.as_array() {
            check_non_negative(&format!("weights.{name}"), w)?;
        }
        if self.weights.as_array().iter().all(|(_, w)| *w == 0.0) {
            return Err(ParamError::new(
                "weights",
                "at least one weight must be above 0",
            ));
        }
        above_zero("balance_tolerance", self.balance_tolerance)?;
        above_zero("skill_range", self.skill_range)?;
        above_zero("experience_range", self.experience_range)?;
        above_zero("top_range", self.top_range)?;
        check_tick("wait_scale", self.wait_scale.0)?;
        if self.neighbours == 0 {
            return Err(ParamError::new("neighbours", "must be 1 or more"));
        }
        check_tick("tick", self.tick.0)?;
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

/// One fill of a seed's candidate match: its tickets (the seed first), the
/// parties' facts, and the team splits to try, in the order they are scored.
#[derive(Clone, Debug)]
pub(crate) struct Candidate {
    ids: Vec<TicketId>,
    /// `wait_s` is rewritten at each scoring: it is the only fact that moves.
    facts: Vec<PartyFacts>,
    enqueued: Vec<SimTime>,
    splits: Vec<Vec<Vec<usize>>>,
}

/// What one seed's from-scratch search drew on and found.
pub(crate) struct Search {
    pub candidates: Vec<Candidate>,
    /// The eligible neighbours the fills were drawn from.
    pub neighbours: Vec<TicketId>,
    /// Rating distance within which a ticket joining or leaving may change
    /// the candidates; negative for a seed too big for a team. See `region`.
    pub radius: f64,
}

/// A seed's best candidate at one moment.
pub(crate) struct Scored {
    /// (score, candidate, split) of the best, first found among equals.
    pub best: Option<(f64, usize, usize)>,
    /// Per candidate: its best score over splits and its mean party wait.
    pub per_candidate: Vec<(f64, f64)>,
}

/// The party facts of a waiting ticket, with `wait_s` left at 0: everything
/// else is fixed while the ticket waits.
fn facts(p: &QualityParams, view: &PoolView<'_>, t: &WaitingTicket) -> PartyFacts {
    let members: Vec<_> = t.players.iter().map(|p| &view.players[p.index()]).collect();
    let aggregate = dota::aggregate(&members, &p.party_adjust);
    let mmrs: Vec<f64> = members
        .iter()
        .map(|m| dota::member_mmr(m, members.len()))
        .collect();
    let top_adjusted = dota::adjusted_mmrs(&mmrs, &p.party_adjust)
        .into_iter()
        .fold(f64::NEG_INFINITY, f64::max);
    PartyFacts {
        aggregate,
        top_adjusted,
        languages: members.iter().fold(u32::MAX, |m, p| m & p.languages),
        wait_s: 0.0,
    }
}

/// The rng a seed's team splits draw from: a function of the run and the
/// seed alone, so a seed's candidates do not depend on how many other seeds
/// were searched before it (which the incremental search skips).
fn split_rng(run_seed: u64, seed: TicketId) -> Pcg64 {
    Pcg64::seed_from_u64(run_seed ^ u64::from(seed.0).wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

/// The from-scratch search of one seed: its `neighbours` nearest-rated
/// eligible tickets not in `taken`, the fills built from them, and the splits
/// of each fill. `cache` holds ticket facts (a ticket neighbours many seeds).
pub(crate) fn search(
    p: &QualityParams,
    view: &PoolView<'_>,
    seed: &WaitingTicket,
    taken: &BTreeSet<TicketId>,
    cache: &mut BTreeMap<TicketId, PartyFacts>,
    run_seed: u64,
) -> Search {
    let format = view.format;
    let mut out = Search {
        candidates: Vec::new(),
        neighbours: Vec::new(),
        radius: f64::NEG_INFINITY,
    };
    if seed.size() > format.team_size {
        return out;
    }
    let mut facts_of = |t: &WaitingTicket| {
        cache
            .entry(t.id)
            .or_insert_with(|| facts(p, view, t))
            .clone()
    };
    let seed_facts = facts_of(seed);
    let neighbours: Vec<(f64, &WaitingTicket, PartyFacts)> = view
        .pool
        .nearest(seed.rating, seed.id)
        .filter(|(_, t)| !taken.contains(&t.id) && t.size() <= format.team_size)
        .take(p.neighbours as usize)
        .map(|(d, t)| (d, t, facts_of(t)))
        .collect();
    out.neighbours = neighbours.iter().map(|n| n.1.id).collect();
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
            + (f.aggregate.experience - seed_facts.aggregate.experience).abs() / p.experience_range
    };
    by_both.sort_by(|&a, &b| combined(a).total_cmp(&combined(b)));

    let mut rng = split_rng(run_seed, seed.id);
    let mut tried: Vec<Vec<usize>> = Vec::new();
    // The last ticket each fill took, per order (`None`: the fill failed).
    let mut last: [Option<usize>; 3] = [None; 3];
    for (o, order) in [&by_rating, &by_language, &by_both].into_iter().enumerate() {
        let Some(mut chosen) = fill(seed.size(), order, &neighbours, format) else {
            continue;
        };
        last[o] = chosen.last().copied();
        chosen.sort_unstable();
        if tried.contains(&chosen) {
            continue;
        }
        tried.push(chosen.clone());
        let mut facts = vec![seed_facts.clone()];
        facts.extend(chosen.iter().map(|&i| neighbours[i].2.clone()));
        let mut ids = vec![seed.id];
        ids.extend(chosen.iter().map(|&i| neighbours[i].1.id));
        let mut enqueued = vec![seed.enqueued];
        enqueued.extend(chosen.iter().map(|&i| neighbours[i].1.enqueued));
        let splits = splits(&facts, format.teams, format.team_size, &mut rng);
        out.candidates.push(Candidate {
            ids,
            facts,
            enqueued,
            splits,
        });
    }
    out.radius = region(
        p,
        &neighbours,
        seed_facts.languages,
        last,
        combined,
        p.neighbours as usize,
    );
    out
}

/// The rating distance from the seed beyond which no ticket joining or
/// leaving can change the seed's fills (and so its candidates).
///
/// A ticket changes a fill only by coming before the fill's last pick in
/// the fill's order. In rating order that means being no farther than the
/// pick; in language order (when the last pick shares the seed's language)
/// sharing it and being no farther; in the combined order having a combined
/// distance no larger, hence a rating distance no larger than that times
/// `skill_range`. Those tickets all lie within `d*`, the largest of the
/// three; when fewer than `k` neighbours were drawn, or `d*` is below the
/// farthest drawn, every ticket within `d*` is among the neighbours, so
/// tickets beyond it are irrelevant whether they join, leave, or shift the
/// end of the neighbour list. Otherwise (a failed fill, a last pick
/// outside the seed's language, `d*` reaching the list's end) the whole list
/// matters: any change within its farthest distance, or anywhere when it is
/// short, counts.
fn region(
    p: &QualityParams,
    neighbours: &[(f64, &WaitingTicket, PartyFacts)],
    seed_languages: u32,
    last: [Option<usize>; 3],
    combined: impl Fn(usize) -> f64,
    k: usize,
) -> f64 {
    let whole = if neighbours.len() < k {
        f64::INFINITY
    } else {
        neighbours.last().map_or(f64::INFINITY, |n| n.0)
    };
    let [Some(by_rating), Some(by_language), Some(by_both)] = last else {
        return whole;
    };
    if neighbours[by_language].2.languages & seed_languages == 0 {
        return whole;
    }
    let d = neighbours[by_rating]
        .0
        .max(neighbours[by_language].0)
        .max(combined(by_both) * p.skill_range);
    // Rounding in `combined` is far below this margin.
    let d = d * (1.0 + 1e-9) + 1e-9;
    if neighbours.len() < k || d < whole {
        d
    } else {
        whole
    }
}

/// Scores every split of every candidate at `now`, exactly as the
/// from-scratch search does, and keeps the first strictly best.
pub(crate) fn score(
    p: &QualityParams,
    team_size: usize,
    candidates: &mut [Candidate],
    now: SimTime,
) -> Scored {
    let mut out = Scored {
        best: None,
        per_candidate: Vec::with_capacity(candidates.len()),
    };
    for (ci, c) in candidates.iter_mut().enumerate() {
        for (f, &e) in c.facts.iter_mut().zip(&c.enqueued) {
            f.wait_s = now.since(e).as_secs_f64();
        }
        let mean_wait = c.facts.iter().map(|f| f.wait_s).sum::<f64>() / c.facts.len() as f64;
        let mut top = f64::NEG_INFINITY;
        for (si, split) in c.splits.iter().enumerate() {
            let s = criteria(p, &c.facts, split, team_size).score(&p.weights);
            top = top.max(s);
            if out.best.is_none_or(|b| s > b.0) {
                out.best = Some((s, ci, si));
            }
        }
        out.per_candidate.push((top, mean_wait));
    }
    out
}

/// The proposal of candidate `ci` with split `si`.
pub(crate) fn proposal(c: &Candidate, si: usize) -> Proposal {
    let teams = c.splits[si]
        .iter()
        .map(|team| team.iter().map(|&i| c.ids[i]).collect())
        .collect();
    Proposal {
        tickets: c.ids.clone(),
        teams: Some(teams),
        rating_weight: 1.0,
    }
}

/// A lower bound on the seconds from now until an unchanged candidate set,
/// scored `scored` now for a seed that has waited `age_s`, can pass its
/// threshold; `None` when it never can.
///
/// Each candidate's score minus the threshold is concave in time (the wait
/// criterion rises at a fixed rate until its clamp at 1; the threshold falls
/// at a fixed rate until its floor), so it lies below its tangent now: the
/// candidate cannot pass before the tangent reaches zero. A margin far above
/// rounding keeps the bound safe against the scores' float error.
fn seconds_until_possible(p: &QualityParams, scored: &Scored, age_s: f64) -> Option<f64> {
    const MARGIN: f64 = 1e-9;
    let threshold = p.threshold_at(age_s);
    let threshold_rate = if p.threshold - p.threshold_fall_per_s * age_s > p.threshold_floor {
        p.threshold_fall_per_s
    } else {
        0.0
    };
    let total: f64 = p.weights.as_array().iter().map(|w| w.1).sum();
    let wait_rate = p.weights.wait / total / p.wait_scale.secs();
    let mut earliest: Option<f64> = None;
    for &(s, mean_wait) in &scored.per_candidate {
        let gap = threshold - s - MARGIN;
        if gap <= 0.0 {
            return Some(0.0);
        }
        let rate = threshold_rate
            + if mean_wait < p.wait_scale.secs() {
                wait_rate
            } else {
                0.0
            };
        if rate > 0.0 {
            let t = gap / rate;
            earliest = Some(earliest.map_or(t, |e: f64| e.min(t)));
        }
    }
    earliest
}

/// A seed's cached search and when it is next worth scoring.
struct Entry {
    rating: f64,
    radius: f64,
    neighbours: Vec<TicketId>,
    candidates: Vec<Candidate>,
    /// Key in `Quality::due`, if the seed can ever pass unchanged.
    due_ms: Option<u64>,
}

/// The incremental matchmaker; see the module doc.
pub struct Quality {
    params: QualityParams,
    /// Drawn from the policy rng at the first pass; seeds `split_rng`.
    run_seed: Option<u64>,
    entries: BTreeMap<TicketId, Entry>,
    /// Waiting tickets whose search must be redone before they are scored.
    stale: BTreeSet<TicketId>,
    /// (earliest moment in ms the seed may pass, seed).
    due: BTreeSet<(u64, TicketId)>,
    /// Ticket -> seeds whose neighbours include it.
    users: BTreeMap<TicketId, Vec<TicketId>>,
    facts: BTreeMap<TicketId, PartyFacts>,
    /// Tickets this policy believes are waiting, to notice a caller that
    /// does not report joins and leaves.
    known: usize,
    /// Tickets proposed by the last pass; they must have left by the next.
    proposed: Vec<TicketId>,
}

impl Quality {
    pub fn new(params: QualityParams) -> Self {
        Quality {
            params,
            run_seed: None,
            entries: BTreeMap::new(),
            stale: BTreeSet::new(),
            due: BTreeSet::new(),
            users: BTreeMap::new(),
            facts: BTreeMap::new(),
            known: 0,
            proposed: Vec::new(),
        }
    }

    /// Forgets the cached search of `seed`, if any.
    fn drop_entry(&mut self, seed: TicketId) {
        let Some(e) = self.entries.remove(&seed) else {
            return;
        };
        if let Some(ms) = e.due_ms {
            self.due.remove(&(ms, seed));
        }
        for n in e.neighbours {
            if let Some(u) = self.users.get_mut(&n) {
                u.retain(|&s| s != seed);
                if u.is_empty() {
                    self.users.remove(&n);
                }
            }
        }
    }

    fn invalidate(&mut self, seed: TicketId) {
        self.drop_entry(seed);
        self.stale.insert(seed);
    }

    fn leave(&mut self, ticket: &WaitingTicket) {
        self.known = self.known.saturating_sub(1);
        self.drop_entry(ticket.id);
        self.stale.remove(&ticket.id);
        self.facts.remove(&ticket.id);
        self.invalidate_near(ticket);
    }

    /// Invalidates the seeds whose candidates `ticket` (joining, leaving, or
    /// taken) may change: those with it inside their region. Every ticket
    /// inside a region is among that seed's neighbours, so `users` finds
    /// them all for a ticket that was waiting when the seed searched; a
    /// joining ticket is checked against every seed.
    fn invalidate_near(&mut self, ticket: &WaitingTicket) {
        let near = |e: &Entry| (ticket.rating - e.rating).abs() <= e.radius;
        for seed in self.users.remove(&ticket.id).unwrap_or_default() {
            if self.entries.get(&seed).is_some_and(near) {
                self.invalidate(seed);
            }
        }
    }

    /// Starts again from the pool as it is: every waiting ticket is stale.
    fn resync(&mut self, view: &PoolView<'_>) {
        self.entries.clear();
        self.due.clear();
        self.users.clear();
        self.facts.clear();
        self.stale = view.pool.oldest_first().map(|t| t.id).collect();
        self.known = view.pool.len();
    }
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

    fn on_join(&mut self, ticket: &WaitingTicket) {
        self.known += 1;
        let touched: Vec<TicketId> = self
            .entries
            .iter()
            .filter(|(_, e)| (ticket.rating - e.rating).abs() <= e.radius)
            .map(|(&id, _)| id)
            .collect();
        for seed in touched {
            self.invalidate(seed);
        }
        self.stale.insert(ticket.id);
    }

    fn on_abandon(&mut self, ticket: &WaitingTicket) {
        self.leave(ticket);
    }

    fn on_formed(&mut self, formed: &FormedMatch<'_>) {
        for t in formed.tickets {
            self.leave(t);
        }
    }

    fn propose(
        &mut self,
        view: &PoolView<'_>,
        _trigger: Trigger,
        rng: &mut Pcg64,
        out: &mut Vec<Proposal>,
    ) {
        let run_seed = *self.run_seed.get_or_insert_with(|| rng.random());
        if view.pool.len() != self.known || self.proposed.iter().any(|&id| view.pool.contains(id)) {
            self.resync(view);
        }
        self.proposed.clear();
        if view.pool.players() < view.format.players() {
            return;
        }
        let params = self.params.clone();
        let p = &params;
        let now_ms = view.now.as_ms();
        // Seeds are scored oldest first, as the from-scratch pass does: the
        // stale, and the scheduled whose moment has come. Every other seed
        // would score below its threshold.
        let mut work = std::mem::take(&mut self.stale);
        while let Some(&(ms, seed)) = self.due.first() {
            if ms > now_ms {
                break;
            }
            self.due.pop_first();
            if let Some(e) = self.entries.get_mut(&seed) {
                e.due_ms = None;
            }
            work.insert(seed);
        }
        let mut taken = BTreeSet::new();
        while let Some(id) = work.pop_first() {
            let Some(seed) = view.pool.get(id) else {
                continue;
            };
            if taken.contains(&id) {
                continue;
            }
            if !self.entries.contains_key(&id) {
                let s = search(p, view, seed, &taken, &mut self.facts, run_seed);
                for &n in &s.neighbours {
                    self.users.entry(n).or_default().push(id);
                }
                self.entries.insert(
                    id,
                    Entry {
                        rating: seed.rating,
                        radius: s.radius,
                        neighbours: s.neighbours,
                        candidates: s.candidates,
                        due_ms: None,
                    },
                );
            }
            let entry = self.entries.get_mut(&id).expect("just ensured");
            let age_s = seed.age_s(view.now);
            let scored = score(p, view.format.team_size, &mut entry.candidates, view.now);
            match scored.best {
                Some((s, ci, si)) if s >= p.threshold_at(age_s) => {
                    let prop = proposal(&entry.candidates[ci], si);
                    for &t in &prop.tickets {
                        taken.insert(t);
                        work.remove(&t);
                        self.drop_entry(t);
                        // Seeds later in this pass search again without the
                        // taken ticket; earlier ones will when it leaves.
                        let ticket = view.pool.get(t).expect("proposed from the pool");
                        let rating = ticket.rating;
                        for u in self.users.get(&t).cloned().unwrap_or_default() {
                            let near = self
                                .entries
                                .get(&u)
                                .is_some_and(|e| (rating - e.rating).abs() <= e.radius);
                            if near && !taken.contains(&u) {
                                self.drop_entry(u);
                                if u > id {
                                    work.insert(u);
                                } else {
                                    self.stale.insert(u);
                                }
                            }
                        }
                    }
                    self.proposed.extend(prop.tickets.iter().copied());
                    out.push(prop);
                }
                _ => {
                    if let Some(wait_s) = seconds_until_possible(p, &scored, age_s) {
                        let ms = now_ms.saturating_add((wait_s * 1000.0).floor() as u64);
                        entry.due_ms = Some(ms);
                        self.due.insert((ms, id));
                    }
                }
            }
        }
    }
}

/// A few splits of a candidate: balanced on party-adjusted MMR, and a
/// variant that first evens the party counts where that is possible.
fn splits(
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

#[cfg(test)]
#[path = "quality_oracle.rs"]
mod oracle;

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
