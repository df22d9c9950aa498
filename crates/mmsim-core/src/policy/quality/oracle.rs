//! The from-scratch search `Quality` must match proposal for proposal: the
//! obvious reading of the post, kept as the tests' reference.

use super::*;
use crate::model::{SimTime, TicketId};
use crate::policy::{Policy, PoolView, Proposal, Schedule, Trigger};
use crate::pool::WaitingTicket;
use crate::teams::RoleFill;
use crate::teams::balanced::{self, balanced_split_by_priority};
use rand::RngCore;
use rand_pcg::Pcg64;
use std::collections::{BTreeMap, BTreeSet};

/// The from-scratch search, kept as the reference `Quality` must match
/// proposal for proposal: every pass scores every seed
/// again. Slow (it allocates per candidate and re-checks packings), but
/// obviously the post's method.
pub struct QualityOracle {
    pub(super) params: QualityParams,
    /// Drawn from the policy's rng on the first pass; the splits' team
    /// priorities derive from it and the candidates' tickets.
    pub(super) salt: Option<u64>,
    /// With a `research` cadence: each seed's last search, as its time and
    /// the fills it found.
    pub(super) kept: BTreeMap<TicketId, (SimTime, Vec<Vec<TicketId>>)>,
    /// The tickets the last pass took: those still waiting at the next
    /// were in a match the engine refused.
    pub(super) returned: BTreeSet<TicketId>,
}

impl QualityOracle {
    /// The oracle for these parameters (validated): every pass searched from scratch.
    pub fn new(params: QualityParams) -> Self {
        QualityOracle { params, salt: None, kept: BTreeMap::new(), returned: BTreeSet::new() }
    }

    pub(super) fn facts(&self, view: &PoolView<'_>, t: &WaitingTicket) -> PartyFacts {
        party_facts(&self.params, view, t)
    }

    /// The facts of a ticket, computed once per pass: a ticket is a
    /// neighbour of many seeds.
    pub(super) fn cached_facts(
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
    pub(super) fn fills_for(
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
    pub(super) fn best_of(
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
    pub(super) fn splits(
        &self,
        facts: &[PartyFacts],
        masks: &[&[u8]],
        ids: &[TicketId],
        format: crate::policy::MatchFormat,
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
            roles::role_feasible(Some(team_of), masks, strengths, teams, format.roles)
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

/// Fills the room left by `seed` from `neighbours` in `order`, keeping the
/// set splittable (and, in a role queue, completable to every team's
/// composition); indices into `neighbours`, or `None`.
pub(super) fn oracle_fill(
    seed: &WaitingTicket,
    order: &[usize],
    neighbours: &[(f64, &WaitingTicket, PartyFacts)],
    format: crate::policy::MatchFormat,
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
                    // one of their tickets is gone; with `research_early =
                    // "all"` the fills that lost one are dropped, and the
                    // rest hold until none is left.
                    let intact = |fill: &Vec<TicketId>| {
                        fill.iter().all(|id| view.pool.contains(*id) && !taken.contains(id))
                    };
                    let current = match self.kept.get_mut(&seed.id) {
                        Some((at, fills)) if view.now < *at + every.0 => {
                            match self.params.research_early {
                                EarlyResearch::Any => fills.iter().all(intact).then_some(&*fills),
                                EarlyResearch::All => {
                                    let had = fills.len();
                                    fills.retain(intact);
                                    (had == 0 || !fills.is_empty()).then_some(&*fills)
                                }
                            }
                        }
                        _ => None,
                    };
                    match current {
                        Some(fills) => fills.clone(),
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
