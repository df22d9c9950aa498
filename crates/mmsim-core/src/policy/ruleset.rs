//! A vendor's ruleset (FlexMatch or AccelByte, `crate::ruleset`) as a
//! policy: each match grows from the longest-waiting free ticket, taking the
//! nearest-rated tickets that keep the ruleset's team-free rules passing,
//! and is proposed only if the full match, split into teams by rating,
//! passes every rule at its expansion age. The latency rule is not checked
//! here: the scenario maps it onto `[regions]`, whose layer runs one
//! instance of this policy per data centre.

use super::{MatchFormat, Policy, PoolView, Proposal, Schedule, Trigger};
use crate::model::{ParamError, SimDuration, TicketId};
use crate::pool::WaitingTicket;
use crate::ruleset::{AgeSelection, CandTicket, Candidate, Ruleset};
use crate::teams::{Packing, RoleFill};
use rand_pcg::Pcg64;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Candidates a growing match looks at, nearest rating first: bounds a
/// pass over a pool where the rules turn most tickets down.
pub const MAX_CANDIDATES: usize = 256;

/// The policy's parameters: the ruleset, read and bound by the scenario's
/// `[ruleset]` section (never written in `[policy]` itself).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RulesetParams {
    #[serde(skip)]
    pub ruleset: Option<Arc<Ruleset>>,
}

impl RulesetParams {
    pub const SOURCE: &str =
        "AWS GameLift FlexMatch and AccelByte matchmaking v2 rulesets, read from a [ruleset] file (docs/rulesets.md)";
    pub const PARAMETERS: &str = "none: the [ruleset] section names the file";

    pub fn validate(&self) -> Result<(), ParamError> {
        if self.ruleset.is_none() {
            return Err(ParamError::new(
                "kind",
                "`ruleset` runs the file a [ruleset] section names (`[ruleset] file = \"x.json\"`, or `mmsim run SCENARIO --ruleset x.json`)",
            ));
        }
        Ok(())
    }
}

pub struct RulesetPolicy {
    rs: Arc<Ruleset>,
    /// Whether any rule can be checked while a match grows.
    any_team_free: bool,
}

impl RulesetPolicy {
    pub fn new(p: RulesetParams) -> Self {
        let rs = p
            .ruleset
            .expect("validate refuses a ruleset policy without its ruleset");
        let any_team_free = rs
            .rules
            .iter()
            .any(|r| !r.in_compound && r.team_free);
        RulesetPolicy { rs, any_team_free }
    }
}

fn cand_ticket<'a>(view: &PoolView<'a>, t: &WaitingTicket, team: usize) -> CandTicket<'a> {
    CandTicket {
        team,
        players: t.players.iter().map(|p| &view.players[p.index()]).collect(),
    }
}

fn candidate<'a>(
    view: &PoolView<'a>,
    teams: usize,
    tickets: &[&WaitingTicket],
    team_of: impl Fn(usize) -> usize,
) -> Candidate<'a> {
    Candidate {
        teams,
        tickets: tickets
            .iter()
            .enumerate()
            .map(|(i, t)| cand_ticket(view, t, team_of(i)))
            .collect(),
    }
}

/// The ages `age_s` chooses between, kept as a match grows: the youngest
/// and the oldest ticket's wait so far.
#[derive(Clone, Copy)]
struct Ages {
    newest: f64,
    oldest: f64,
}

impl Ages {
    fn with(self, age: f64) -> Ages {
        Ages {
            newest: self.newest.min(age),
            oldest: self.oldest.max(age),
        }
    }

    /// The wait the ruleset's expansions read (its `expansionAgeSelection`)
    /// for the tickets these ages came from.
    fn of(self, rs: &Ruleset) -> f64 {
        match rs.age {
            AgeSelection::Newest => self.newest,
            AgeSelection::Oldest => self.oldest,
        }
    }
}

/// Teams by rating: largest parties first, each to the team with room whose
/// rating sum is lowest. `None` if the greedy placement strands a party.
fn split(tickets: &[&WaitingTicket], format: MatchFormat) -> Option<Vec<usize>> {
    let mut order: Vec<usize> = (0..tickets.len()).collect();
    order.sort_by(|&a, &b| {
        tickets[b]
            .size()
            .cmp(&tickets[a].size())
            .then(tickets[b].rating.total_cmp(&tickets[a].rating))
            .then(tickets[a].id.cmp(&tickets[b].id))
    });
    let mut room = vec![format.team_size; format.teams];
    let mut sum = vec![0.0_f64; format.teams];
    let mut team_of = vec![0; tickets.len()];
    for i in order {
        let t = tickets[i];
        let team = (0..format.teams)
            .filter(|&k| room[k] >= t.size())
            .min_by(|&a, &b| sum[a].total_cmp(&sum[b]).then(a.cmp(&b)))?;
        room[team] -= t.size();
        sum[team] += t.rating * t.size() as f64;
        team_of[i] = team;
    }
    Some(team_of)
}

impl RulesetPolicy {
    /// Grows a match from `seed` over `candidates` (nearest rating first);
    /// the proposal if the full match passes every rule.
    fn grow<'a>(
        &self,
        view: &PoolView<'_>,
        seed: &'a WaitingTicket,
        candidates: impl Iterator<Item = &'a WaitingTicket>,
    ) -> Option<Proposal> {
        let format = view.format;
        let need = format.players();
        if seed.size() > format.team_size || view.pool.players() < need {
            return None;
        }
        let mut chosen: Vec<&WaitingTicket> = vec![seed];
        let mut room = need - seed.size();
        let mut packing = Packing::new(format.teams, format.team_size);
        packing.try_add(seed.size());
        let mut roles = RoleFill::new(format.roles, format.teams, &seed.roles);
        // The growing match as the team-free rules see it (everyone on team
        // 0), and its ages, kept as tickets are taken rather than rebuilt
        // for every candidate.
        let mut partial = Candidate {
            teams: format.teams,
            tickets: Vec::with_capacity(need),
        };
        if self.any_team_free {
            partial.tickets.push(cand_ticket(view, seed, 0));
        }
        let seed_age = seed.age_s(view.now);
        let mut ages = Ages {
            newest: f64::INFINITY,
            oldest: 0.0,
        }
        .with(seed_age);
        for t in candidates {
            if room == 0 {
                break;
            }
            if t.size() > room || t.size() > format.team_size || !roles.admits(&t.roles) {
                continue;
            }
            let with_t = ages.with(t.age_s(view.now));
            if self.any_team_free {
                partial.tickets.push(cand_ticket(view, t, 0));
                let ok = self.rs.passes(&partial, with_t.of(&self.rs), true);
                partial.tickets.pop();
                if !ok {
                    continue;
                }
            }
            if !packing.try_add(t.size()) {
                continue;
            }
            roles.take(&t.roles);
            chosen.push(t);
            if self.any_team_free {
                partial.tickets.push(cand_ticket(view, t, 0));
            }
            ages = with_t;
            room -= t.size();
        }
        if room > 0 {
            return None;
        }
        let team_of = split(&chosen, format)?;
        let c = candidate(view, format.teams, &chosen, |i| team_of[i]);
        if !self.rs.passes(&c, ages.of(&self.rs), false) {
            return None;
        }
        let tickets: Vec<TicketId> = chosen.iter().map(|t| t.id).collect();
        let mut proposal = Proposal::new(tickets.clone());
        // With a role queue the engine picks a split that fills every
        // team's composition; otherwise the split the rules passed on.
        if format.roles.is_none() {
            let mut teams = vec![Vec::new(); format.teams];
            for (i, id) in tickets.into_iter().enumerate() {
                teams[team_of[i]].push(id);
            }
            proposal.teams = Some(teams);
        }
        Some(proposal)
    }
}

impl Policy for RulesetPolicy {
    fn schedule(&self) -> Schedule {
        // Expansions take effect on the next tick after their second, so a
        // step at 10 s applies to a match formed at the 10 s tick.
        Schedule {
            on_join: true,
            tick: Some(SimDuration::from_secs(1)),
        }
    }

    fn propose(
        &mut self,
        view: &PoolView<'_>,
        trigger: Trigger,
        _rng: &mut Pcg64,
        out: &mut Vec<Proposal>,
    ) {
        match trigger {
            Trigger::Join(id) => {
                let Some(seed) = view.pool.get(id) else {
                    return;
                };
                let near = view
                    .pool
                    .nearest(seed.rating, seed.id)
                    .map(|(_, t)| t)
                    .take(MAX_CANDIDATES);
                if let Some(p) = self.grow(view, seed, near) {
                    out.push(p);
                }
            }
            Trigger::Tick => {
                let mut pass = super::FreePass::new(view.pool);
                let mut near = Vec::with_capacity(MAX_CANDIDATES);
                for k in 0..pass.len() {
                    if pass.free_players() < view.format.players() {
                        break;
                    }
                    let Some((pos, seed)) = pass.seed(k) else {
                        continue;
                    };
                    near.clear();
                    pass.walk(pos, f64::INFINITY, |_, at, t| {
                        near.push((at, t));
                        near.len() < MAX_CANDIDATES
                    });
                    let Some(p) = self.grow(view, seed, near.iter().map(|&(_, t)| t)) else {
                        continue;
                    };
                    pass.take(pos);
                    for &(at, t) in &near {
                        if p.tickets.contains(&t.id) {
                            pass.take(at);
                        }
                    }
                    out.push(p);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::SimTime;
    use crate::policy::testkit::{pair, Harness};
    use crate::ruleset::Source;

    fn policy(json: &str) -> Box<dyn Policy> {
        let mut rs = Ruleset::parse(json).unwrap_or_else(|e| panic!("{e}"));
        rs.bind(Source::by_convention, |_| None)
            .unwrap_or_else(|e| panic!("{e}"));
        Box::new(RulesetPolicy::new(RulesetParams {
            ruleset: Some(Arc::new(rs)),
        }))
    }

    /// 1v1, players' skills within 50, within 100 from 10 s; `age` picks
    /// whose wait counts.
    fn distance_1v1(age: &str) -> Box<dyn Policy> {
        policy(&format!(
            r#"{{ "ruleLanguageVersion": "1.0",
                 "playerAttributes": [{{ "name": "skill", "type": "number" }}],
                 "algorithm": {{ "strategy": "exhaustiveSearch", "expansionAgeSelection": "{age}" }},
                 "teams": [{{ "name": "player", "maxPlayers": 1, "quantity": 2 }}],
                 "rules": [{{ "name": "CloseSkill", "type": "distance",
                     "measurements": ["max(flatten(teams[*].players.attributes[skill]))"],
                     "referenceValue": "min(flatten(teams[*].players.attributes[skill]))",
                     "maxDistance": 50 }}],
                 "expansions": [{{ "target": "rules[CloseSkill].maxDistance",
                     "steps": [{{ "waitTimeSeconds": 10, "value": 100 }}] }}] }}"#
        ))
    }

    #[test]
    fn players_80_apart_meet_exactly_when_the_older_has_waited_10_s() {
        let mut h = Harness::new(distance_1v1("oldest"));
        h.population(&[1000.0, 1080.0]);
        assert!(h.join(0, 1000.0, 0.0).is_empty());
        assert!(h.join(1, 1080.0, 3.0).is_empty(), "80 apart is over 50");
        assert!(h.tick(9.0).is_empty());
        assert!(h.tick(9.999).is_empty());
        let made = h.tick(10.0);
        assert_eq!(made.into_iter().map(pair).collect::<Vec<_>>(), vec![vec![0, 1]]);
    }

    #[test]
    fn with_the_newest_ticket_s_age_they_meet_when_the_younger_has_waited_10_s() {
        let mut h = Harness::new(distance_1v1("newest"));
        h.population(&[1000.0, 1080.0]);
        h.join(0, 1000.0, 0.0);
        h.join(1, 1080.0, 3.0);
        assert!(h.tick(10.0).is_empty());
        assert!(h.tick(12.999).is_empty());
        assert_eq!(h.tick(13.0).len(), 1);
    }

    #[test]
    fn players_40_apart_meet_at_once_and_120_apart_never() {
        let mut h = Harness::new(distance_1v1("oldest"));
        h.population(&[1000.0, 1040.0, 2000.0, 2120.0]);
        h.join(0, 1000.0, 0.0);
        assert_eq!(h.join(1, 1040.0, 1.0).len(), 1, "within 50 on the join");
        h.join(2, 2000.0, 2.0);
        h.join(3, 2120.0, 2.0);
        for s in 3..300 {
            assert!(h.tick(f64::from(s)).is_empty(), "formed at {s} s");
        }
    }

    #[test]
    fn an_accelbyte_flexing_rule_widens_the_distance_after_its_duration() {
        let mut h = Harness::new(policy(
            r#"{ "alliance": { "min_number": 2, "max_number": 2, "player_min_number": 1, "player_max_number": 1 },
                 "matching_rule": [{ "attribute": "mmr", "criteria": "distance", "reference": 100 }],
                 "flexing_rule": [{ "duration": 20, "attribute": "mmr", "criteria": "distance", "reference": 300 }] }"#,
        ));
        h.population(&[1500.0, 1750.0, 1000.0, 1350.0]);
        h.join(0, 1500.0, 0.0);
        h.join(1, 1750.0, 5.0);
        // 250 apart: over 100 until the oldest has waited 20 s.
        assert!(h.tick(19.0).is_empty());
        assert_eq!(h.tick(20.0).into_iter().map(pair).collect::<Vec<_>>(), vec![vec![0, 1]]);
        // 350 apart: over even the flexed 300.
        h.join(2, 1000.0, 30.0);
        h.join(3, 1350.0, 30.0);
        assert!(h.tick(200.0).is_empty());
    }

    #[test]
    fn team_rules_are_judged_on_the_split_the_proposal_carries() {
        // 2v2 with team averages within 10 of the match's: 1000, 1010,
        // 1020, 1030 split 1000+1030 against 1010+1020 (both 1015).
        let mut h = Harness::new(policy(
            r#"{ "ruleLanguageVersion": "1.0", "playerAttributes": [{ "name": "skill" }],
                 "teams": [{ "name": "t", "maxPlayers": 2, "quantity": 2 }],
                 "rules": [{ "name": "Fair", "type": "distance",
                     "measurements": ["avg(teams[*].players.attributes[skill])"],
                     "referenceValue": "avg(flatten(teams[*].players.attributes[skill]))",
                     "maxDistance": 1 }] }"#,
        ));
        h.format = MatchFormat {
            teams: 2,
            team_size: 2,
            roles: None,
        };
        h.population(&[1000.0, 1010.0, 1020.0, 1030.0]);
        for (i, r) in [1000.0, 1010.0, 1020.0].into_iter().enumerate() {
            assert!(h.join(i as u32, r, 0.0).is_empty());
        }
        h.pool.insert(WaitingTicket {
            id: TicketId(3),
            players: smallvec::smallvec![crate::model::PlayerId(3)],
            rating: 1030.0,
            enqueued: SimTime::ZERO,
            requeue: false,
            roles: Default::default(),
        });
        let view = PoolView {
            now: SimTime::ZERO,
            pool: &h.pool,
            players: &h.players,
            format: h.format,
        };
        let mut out = Vec::new();
        h.policy
            .propose(&view, Trigger::Join(TicketId(3)), &mut h.rng, &mut out);
        assert_eq!(out.len(), 1);
        let teams = out[0].teams.clone().expect("the split the rules passed on");
        let mut teams: Vec<Vec<u32>> = teams
            .into_iter()
            .map(|t| pair(t.into_iter().map(|id| id.0).collect()))
            .collect();
        teams.sort();
        assert_eq!(teams, vec![vec![0, 3], vec![1, 2]]);
    }
}
