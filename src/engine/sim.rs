//! The simulation: one event loop over one queue. Every state change
//! happens here, in event order; policies, team formation, outcome models and
//! rating systems are called from here and only return values.

use super::population;
use super::queue::EventQueue;
use super::streams::{stream, Stream};
use super::{Pool, WaitingTicket};
use crate::metrics::{MatchRecord, QueueSample, RatingMoves, RunRecords, TicketEnd, TicketRecord};
use crate::model::{MatchId, Player, PlayerId, Rating, SimDuration, SimTime, TicketId};
use crate::outcome::{OutcomeModel, TeamSkills};
use crate::policy::{FormedMatch, MatchFormat, Policy, PoolView, Proposal, Schedule, Trigger};
use crate::rating::RatingSystem;
use crate::scenario::{Patience, Scenario};
use crate::teams::TeamFormer;
use rand::Rng;
use rand_distr::{Distribution, Exp1};
use rand_pcg::Pcg64;
use std::collections::BTreeMap;

/// Rating moves are recorded for a player's first this-many games of a rating.
const LEARNING_GAMES: usize = 40;

enum Event {
    Arrival,
    Requeue(Box<[PlayerId]>),
    Abandon(TicketId),
    Tick,
    MatchStart(MatchId),
    MatchEnd(MatchId),
    Sample,
}

/// A match between forming and ending.
struct Active {
    /// Per team, its parties (each a list of players).
    teams: Vec<Vec<Box<[PlayerId]>>>,
    rating_weight: f64,
    winner: Option<usize>,
}

/// Counters the engine keeps about itself, for `perf.json` and checks.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EngineStats {
    pub events: u64,
    /// Fresh arrivals dropped because a chosen player was already busy.
    pub arrivals_blocked: u64,
    /// Proposals the engine refused (stale, overlapping or unfillable).
    pub proposals_rejected: u64,
}

/// Everything a run produced.
pub struct SimOutput {
    pub records: RunRecords,
    pub players: Vec<Player>,
    pub stats: EngineStats,
    pub end: SimTime,
    pub warmup_end: SimTime,
}

/// The parts a run is assembled from; built from a validated scenario by
/// `Parts::from_scenario`, or by hand in tests.
pub struct Parts {
    pub policy: Box<dyn Policy>,
    pub rating: Box<dyn RatingSystem>,
    pub outcome: Box<dyn OutcomeModel>,
    pub former: Option<Box<dyn TeamFormer>>,
}

impl Parts {
    pub fn from_scenario(s: &Scenario) -> Parts {
        Parts {
            policy: s.policy.build(),
            rating: s.rating.build(),
            outcome: s.outcome.build(),
            former: Some(s.teams.build()),
        }
    }
}

pub struct Simulation<'a> {
    scenario: &'a Scenario,
    now: SimTime,
    end: SimTime,
    warmup_end: SimTime,
    queue: EventQueue<Event>,
    pool: Pool,
    players: Vec<Player>,
    /// Queued, playing, or thinking before a requeue: not free to arrive afresh.
    busy: Vec<bool>,
    /// Each player's previous match, for the rematch measure.
    last_match: Vec<Option<MatchId>>,
    active: BTreeMap<MatchId, Active>,
    records: RunRecords,
    parts: Parts,
    schedule: Schedule,
    format: MatchFormat,
    rng_arrivals: Pcg64,
    rng_behaviour: Pcg64,
    rng_outcomes: Pcg64,
    rng_policy: Pcg64,
    rng_teams: Pcg64,
    /// Arrival rate at the busiest hour; quieter hours thin it.
    peak_rate: f64,
    party_cdf: Vec<f64>,
    proposals: Vec<Proposal>,
    matches_since_sample: u32,
    samples_taken: u64,
    corr_every: u64,
    stats: EngineStats,
}

impl<'a> Simulation<'a> {
    pub fn new(scenario: &'a Scenario, seed: u64, parts: Parts) -> Self {
        let mut initial = parts.rating.initial();
        if let Some(r) = scenario.population.initial_rating {
            initial.value = r;
        }
        let mut rng_pop = stream(seed, Stream::Population);
        let mut players = population::generate(
            scenario.population.size,
            &scenario.population.skill,
            initial,
            &mut rng_pop,
        );
        population::draw_attributes(&mut players, &scenario.population, &mut rng_pop);
        // A win-rate rating is the same record the population drew: start it
        // there, with the games behind it, rather than at 50% for everyone.
        if let (crate::rating::RatingConfig::WinRate(_), Some(_)) =
            (&scenario.rating, &scenario.population.win_rate)
        {
            for p in &mut players {
                for r in [&mut p.rating, &mut p.party_rating] {
                    r.value = p.win_rate * 100.0;
                    r.games = p.games;
                }
            }
        }
        let n = players.len();
        let a = &scenario.arrivals;
        let peak = a
            .daily_profile
            .as_ref()
            .map(|p| p.iter().copied().fold(0.0, f64::max))
            .unwrap_or(1.0);
        let total: f64 = a.party_sizes.iter().sum();
        let party_cdf = a
            .party_sizes
            .iter()
            .scan(0.0, |acc, w| {
                *acc += w / total;
                Some(*acc)
            })
            .collect();
        let end = SimTime::ZERO + scenario.run.duration.0;
        let sample = scenario.metrics.sample_interval.0.as_ms().max(1);
        let samples_total = (end.as_ms() / sample).max(1);
        let corr_every = (samples_total / scenario.metrics.corr_points.max(1) as u64).max(1);
        let schedule = parts.policy.schedule();
        Simulation {
            scenario,
            now: SimTime::ZERO,
            end,
            warmup_end: SimTime::ZERO + scenario.run.warmup.0,
            queue: EventQueue::default(),
            pool: Pool::default(),
            busy: vec![false; n],
            last_match: vec![None; n],
            players,
            active: BTreeMap::new(),
            records: RunRecords::default(),
            parts,
            schedule,
            format: MatchFormat {
                teams: scenario.format.teams as usize,
                team_size: scenario.format.team_size as usize,
            },
            rng_arrivals: stream(seed, Stream::Arrivals),
            rng_behaviour: stream(seed, Stream::Behaviour),
            rng_outcomes: stream(seed, Stream::Outcomes),
            rng_policy: stream(seed, Stream::Policy),
            rng_teams: stream(seed, Stream::Teams),
            peak_rate: a.rate_per_s * peak,
            party_cdf,
            proposals: Vec::new(),
            matches_since_sample: 0,
            samples_taken: 0,
            corr_every,
            stats: EngineStats::default(),
        }
    }

    /// Runs to the scenario's end. `progress` is told the simulated time now
    /// and then (every 64k events), for a progress bar.
    pub fn run(mut self, progress: &mut dyn FnMut(SimTime, SimTime)) -> SimOutput {
        self.schedule_next_arrival();
        if let Some(tick) = self.schedule.tick {
            self.queue.schedule(SimTime::ZERO + tick, Event::Tick);
        }
        self.queue.schedule(SimTime::ZERO, Event::Sample);
        while let Some((t, event)) = self.queue.pop() {
            if t > self.end {
                break;
            }
            self.now = t;
            self.stats.events += 1;
            if self.stats.events & 0xFFFF == 0 {
                progress(self.now, self.end);
            }
            match event {
                Event::Arrival => self.on_arrival(),
                Event::Requeue(members) => {
                    let patience =
                        draw_patience(&self.scenario.arrivals.patience, &mut self.rng_behaviour);
                    self.enqueue(members.into_vec(), patience, true);
                }
                Event::Abandon(id) => self.on_abandon(id),
                Event::Tick => {
                    self.run_policy(Trigger::Tick);
                    if let Some(tick) = self.schedule.tick {
                        self.queue.schedule(self.now + tick, Event::Tick);
                    }
                }
                Event::MatchStart(id) => self.on_match_start(id),
                Event::MatchEnd(id) => self.on_match_end(id),
                Event::Sample => self.on_sample(),
            }
        }
        progress(self.end, self.end);
        self.now = self.end;
        // Tickets still waiting are censored at the end of the run.
        let end = self.end;
        for t in self.pool.oldest_first() {
            let rec = &mut self.records.tickets[t.id.index()];
            rec.left = end;
            rec.end = TicketEnd::Waiting;
        }
        SimOutput {
            records: self.records,
            players: self.players,
            stats: self.stats,
            end: self.end,
            warmup_end: self.warmup_end,
        }
    }

    fn schedule_next_arrival(&mut self) {
        let gap_s: f64 = Exp1.sample(&mut self.rng_arrivals);
        let t = self.now + SimDuration::from_secs_f64(gap_s / self.peak_rate);
        if t <= self.end {
            self.queue.schedule(t, Event::Arrival);
        }
    }

    fn on_arrival(&mut self) {
        self.schedule_next_arrival();
        // Every arrival draws the same numbers whatever happens to it, so the
        // stream stays aligned across policies (common random numbers).
        let u_keep: f64 = self.rng_arrivals.random();
        let u_size: f64 = self.rng_arrivals.random();
        let size = self
            .party_cdf
            .partition_point(|&c| c <= u_size)
            .min(self.party_cdf.len() - 1)
            + 1;
        let n = self.players.len() as u32;
        let members: Vec<PlayerId> = (0..size)
            .map(|_| PlayerId(self.rng_arrivals.random_range(0..n)))
            .collect();
        let patience = draw_patience(&self.scenario.arrivals.patience, &mut self.rng_arrivals);
        let multiplier = match &self.scenario.arrivals.daily_profile {
            Some(profile) => profile[((self.now.as_ms() / 3_600_000) % 24) as usize],
            None => 1.0,
        };
        if u_keep * self.peak_rate >= self.scenario.arrivals.rate_per_s * multiplier {
            return;
        }
        let duplicate = (1..members.len()).any(|i| members[..i].contains(&members[i]));
        if duplicate || members.iter().any(|p| self.busy[p.index()]) {
            self.stats.arrivals_blocked += 1;
            return;
        }
        self.enqueue(members, patience, false);
    }

    fn enqueue(&mut self, members: Vec<PlayerId>, patience: Option<SimDuration>, requeue: bool) {
        let id = TicketId(self.records.tickets.len() as u32);
        let solo = members.len() == 1;
        let mut rating_sum = 0.0;
        let mut skill_sum = 0.0;
        for p in &members {
            let player = &self.players[p.index()];
            let r = if solo {
                &player.rating
            } else {
                &player.party_rating
            };
            rating_sum += self.parts.rating.current(r, self.now).value;
            skill_sum += player.true_skill;
            self.busy[p.index()] = true;
        }
        let k = members.len() as f64;
        self.records.tickets.push(TicketRecord {
            ticket: id,
            lead: members[0],
            party_size: members.len() as u32,
            enqueued: self.now,
            left: self.end,
            end: TicketEnd::Waiting,
            rating: rating_sum / k,
            true_skill: skill_sum / k,
            requeue,
            in_warmup: self.now < self.warmup_end,
        });
        self.pool.insert(WaitingTicket {
            id,
            players: members,
            rating: rating_sum / k,
            enqueued: self.now,
        });
        self.parts
            .policy
            .on_join(self.pool.get(id).expect("just inserted"));
        if let Some(p) = patience {
            self.queue.schedule(self.now + p, Event::Abandon(id));
        }
        if self.schedule.on_join {
            self.run_policy(Trigger::Join(id));
        }
    }

    fn on_abandon(&mut self, id: TicketId) {
        // The ticket may have matched already: then there is nothing to do.
        if let Some(t) = self.pool.remove(id) {
            self.parts.policy.on_abandon(&t);
            let rec = &mut self.records.tickets[id.index()];
            rec.left = self.now;
            rec.end = TicketEnd::Abandoned;
            for p in &t.players {
                self.busy[p.index()] = false;
            }
        }
    }

    fn run_policy(&mut self, trigger: Trigger) {
        let mut proposals = std::mem::take(&mut self.proposals);
        proposals.clear();
        let view = PoolView {
            now: self.now,
            pool: &self.pool,
            players: &self.players,
            format: self.format,
        };
        self.parts
            .policy
            .propose(&view, trigger, &mut self.rng_policy, &mut proposals);
        for p in proposals.drain(..) {
            self.form(p);
        }
        self.proposals = proposals;
    }

    /// Splits a proposal's tickets into teams: the policy's split if it gave
    /// one, one ticket per team for solo formats, else the team former.
    fn split(&mut self, proposal: &Proposal) -> Option<Vec<Vec<TicketId>>> {
        if let Some(teams) = &proposal.teams {
            let ok = teams.len() == self.format.teams
                && teams.iter().all(|team| {
                    team.iter()
                        .map(|id| self.pool.get(*id).map_or(0, |t| t.size()))
                        .sum::<usize>()
                        == self.format.team_size
                });
            return ok.then(|| teams.clone());
        }
        if self.format.team_size == 1 {
            return Some(proposal.tickets.iter().map(|&id| vec![id]).collect());
        }
        let former = self.parts.former.as_ref()?;
        let parties: Vec<Vec<&Player>> = proposal
            .tickets
            .iter()
            .map(|id| {
                self.pool
                    .get(*id)
                    .expect("checked")
                    .players
                    .iter()
                    .map(|p| &self.players[p.index()])
                    .collect()
            })
            .collect();
        let split = former.split(
            &parties,
            self.format.teams,
            self.format.team_size,
            &mut self.rng_teams,
        )?;
        Some(
            split
                .into_iter()
                .map(|team| team.into_iter().map(|i| proposal.tickets[i]).collect())
                .collect(),
        )
    }

    fn form(&mut self, proposal: Proposal) {
        let players: usize = proposal
            .tickets
            .iter()
            .map(|id| self.pool.get(*id).map_or(usize::MAX / 4, |t| t.size()))
            .sum();
        let distinct = (1..proposal.tickets.len())
            .all(|i| !proposal.tickets[..i].contains(&proposal.tickets[i]));
        if players != self.format.players() || !distinct {
            self.stats.proposals_rejected += 1;
            return;
        }
        let Some(team_tickets) = self.split(&proposal) else {
            self.stats.proposals_rejected += 1;
            return;
        };
        // Whoever split it, a match must hold every proposed ticket exactly
        // once and fill every team exactly: a party is never split, dropped
        // or counted twice.
        let placed: usize = team_tickets.iter().map(Vec::len).sum();
        let whole = placed == proposal.tickets.len()
            && proposal
                .tickets
                .iter()
                .all(|id| team_tickets.iter().flatten().filter(|t| *t == id).count() == 1)
            && team_tickets.iter().all(|team| {
                team.iter()
                    .map(|id| self.pool.get(*id).map_or(0, |t| t.size()))
                    .sum::<usize>()
                    == self.format.team_size
            });
        if !whole {
            self.stats.proposals_rejected += 1;
            return;
        }
        let id = MatchId(self.records.matches.len() as u32);
        let mut removed: Vec<WaitingTicket> = Vec::with_capacity(proposal.tickets.len());
        let mut teams: Vec<Vec<Box<[PlayerId]>>> = Vec::with_capacity(team_tickets.len());
        let k = team_tickets.len();
        let (mut team_rating, mut team_skill, mut team_top, mut team_parties, mut team_wr) = (
            Vec::with_capacity(k),
            Vec::with_capacity(k),
            Vec::with_capacity(k),
            Vec::with_capacity(k),
            Vec::with_capacity(k),
        );
        let (mut r_min, mut r_max, mut s_min, mut s_max) = (
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::INFINITY,
            f64::NEG_INFINITY,
        );
        let mut member_ratings: Vec<Vec<Rating>> = Vec::with_capacity(k);
        for team in &team_tickets {
            let mut parties = Vec::with_capacity(team.len());
            let (mut rs, mut ss, mut top, mut wr, mut n) = (0.0, 0.0, f64::NEG_INFINITY, 0.0, 0.0);
            let mut ratings = Vec::with_capacity(self.format.team_size);
            for tid in team {
                let t = self
                    .pool
                    .remove(*tid)
                    .expect("proposal tickets are waiting");
                let rec = &mut self.records.tickets[tid.index()];
                rec.left = self.now;
                rec.end = TicketEnd::Matched(id);
                let solo = t.players.len() == 1;
                for p in &t.players {
                    let pl = &self.players[p.index()];
                    let r = self
                        .parts
                        .rating
                        .current(if solo { &pl.rating } else { &pl.party_rating }, self.now);
                    ratings.push(r);
                    r_min = r_min.min(r.value);
                    r_max = r_max.max(r.value);
                    s_min = s_min.min(pl.true_skill);
                    s_max = s_max.max(pl.true_skill);
                    rs += r.value;
                    ss += pl.true_skill;
                    top = f64::max(top, pl.true_skill);
                    wr += pl.win_rate * 100.0;
                    n += 1.0;
                }
                parties.push(t.players.clone().into_boxed_slice());
                removed.push(t);
            }
            team_rating.push(rs / n);
            team_skill.push(ss / n);
            team_top.push(top);
            team_parties.push(parties.len() as u32);
            team_wr.push(wr / n);
            member_ratings.push(ratings);
            teams.push(parties);
        }
        let predicted =
            self.parts
                .rating
                .win_probability(&member_ratings[0], &member_ratings[1], self.now);
        // A rematch: two players on different teams whose previous match was the same one.
        let mut seen: Vec<(MatchId, usize)> = Vec::new();
        let mut rematch = false;
        for (ti, team) in teams.iter().enumerate() {
            for party in team {
                for p in party.iter() {
                    if let Some(m) = self.last_match[p.index()] {
                        if seen.iter().any(|&(m2, t2)| m2 == m && t2 != ti) {
                            rematch = true;
                        }
                        seen.push((m, ti));
                    }
                }
            }
        }
        self.records.matches.push(MatchRecord {
            id,
            formed: self.now,
            ended: None,
            teams: k as u32,
            team_size: self.format.team_size as u32,
            team_rating,
            team_skill,
            team_top_skill: team_top,
            team_parties,
            team_win_rate_pct: team_wr,
            spread_rating: r_max - r_min,
            spread_skill: s_max - s_min,
            p_team0: f64::NAN,
            p_team0_predicted: predicted,
            winner: None,
            duration_s: 0.0,
            survivors: None,
            gold_integral: None,
            rematch,
            in_warmup: self.now < self.warmup_end,
        });
        self.parts.policy.on_formed(&FormedMatch {
            id,
            now: self.now,
            tickets: &removed,
        });
        self.active.insert(
            id,
            Active {
                teams,
                rating_weight: proposal.rating_weight,
                winner: None,
            },
        );
        self.matches_since_sample += 1;
        self.queue.schedule(
            self.now + self.scenario.format.lobby.0,
            Event::MatchStart(id),
        );
    }

    fn on_match_start(&mut self, id: MatchId) {
        let active = self
            .active
            .get_mut(&id)
            .expect("started matches are active");
        let skills: Vec<TeamSkills> = active
            .teams
            .iter()
            .map(|parties| TeamSkills {
                skills: parties
                    .iter()
                    .flat_map(|p| p.iter().map(|m| self.players[m.index()].true_skill))
                    .collect(),
                parties: parties.iter().map(|p| p.len()).collect(),
            })
            .collect();
        let result = self.parts.outcome.play(&skills, &mut self.rng_outcomes);
        active.winner = Some(result.winner);
        let rec = &mut self.records.matches[id.index()];
        rec.p_team0 = result.p_team0;
        rec.duration_s = result.duration.as_secs_f64();
        rec.survivors = result.survivors;
        rec.gold_integral = result.gold_integral;
        self.queue
            .schedule(self.now + result.duration, Event::MatchEnd(id));
    }

    fn on_match_end(&mut self, id: MatchId) {
        let active = self.active.remove(&id).expect("ended matches are active");
        let winner = active.winner.expect("a started match has a winner");
        let now = self.now;
        // Ratings: gather each member's current rating (solo or party), let the
        // system rewrite them, and store them back.
        let mut ratings: Vec<Vec<Rating>> = active
            .teams
            .iter()
            .map(|parties| {
                parties
                    .iter()
                    .flat_map(|party| {
                        let solo = party.len() == 1;
                        party.iter().map(move |p| (p, solo))
                    })
                    .map(|(p, solo)| {
                        let pl = &self.players[p.index()];
                        self.parts
                            .rating
                            .current(if solo { &pl.rating } else { &pl.party_rating }, now)
                    })
                    .collect()
            })
            .collect();
        let before = ratings.clone();
        self.parts
            .rating
            .update(&mut ratings, winner, active.rating_weight, now);
        for (ti, parties) in active.teams.iter().enumerate() {
            let mut i = 0;
            for party in parties {
                let solo = party.len() == 1;
                for p in party.iter() {
                    let pl = &mut self.players[p.index()];
                    let new = ratings[ti][i];
                    let game = new.games.saturating_sub(1) as usize;
                    if game < LEARNING_GAMES {
                        if self.records.rating_moves.len() <= game {
                            self.records
                                .rating_moves
                                .resize(game + 1, RatingMoves::default());
                        }
                        let m = &mut self.records.rating_moves[game];
                        m.sum_abs_change += (new.value - before[ti][i].value).abs();
                        m.updates += 1;
                    }
                    if solo {
                        pl.rating = new;
                        if pl.games_to_within_deviation.is_none()
                            && new.deviation > 0.0
                            && (new.value - pl.true_skill).abs() <= new.deviation
                        {
                            pl.games_to_within_deviation = Some(new.games);
                        }
                    } else {
                        pl.party_rating = new;
                    }
                    i += 1;
                    pl.games += 1;
                    if ti == winner {
                        pl.wins += 1;
                    }
                    // Smoothed toward 50% by ten phantom games, as a shown win rate is.
                    pl.win_rate = (pl.wins as f64 + 5.0) / (pl.games as f64 + 10.0);
                    self.last_match[p.index()] = Some(id);
                }
            }
        }
        let rec = &mut self.records.matches[id.index()];
        rec.winner = Some(winner as u32);
        rec.ended = Some(now);
        // Each party decides on its own whether to queue again.
        let requeue_prob = self.scenario.arrivals.requeue_prob;
        let think = self.scenario.arrivals.think_time.secs();
        for party in active.teams.into_iter().flatten() {
            let u: f64 = self.rng_behaviour.random();
            let pause: f64 = Exp1.sample(&mut self.rng_behaviour);
            let back = now + SimDuration::from_secs_f64(pause * think);
            if u < requeue_prob && back <= self.end {
                self.queue.schedule(back, Event::Requeue(party));
            } else {
                for p in party.iter() {
                    self.busy[p.index()] = false;
                }
            }
        }
    }

    fn on_sample(&mut self) {
        let corr = if self.samples_taken.is_multiple_of(self.corr_every) {
            crate::metrics::rating_skill_rank_corr(&self.players, |p| {
                self.parts.rating.current(&p.rating, self.now).value
            })
        } else {
            None
        };
        let in_matches = self
            .active
            .values()
            .map(|a| a.teams.iter().flatten().map(|p| p.len()).sum::<usize>())
            .sum::<usize>();
        self.records.queue.push(QueueSample {
            t: self.now,
            waiting_tickets: self.pool.len() as u32,
            waiting_players: self.pool.players() as u32,
            players_in_matches: in_matches as u32,
            matches_formed: self.matches_since_sample,
            rating_skill_rank_corr: corr,
        });
        self.matches_since_sample = 0;
        self.samples_taken += 1;
        self.queue.schedule(
            self.now + self.scenario.metrics.sample_interval.0,
            Event::Sample,
        );
    }
}

fn draw_patience(p: &Patience, rng: &mut Pcg64) -> Option<SimDuration> {
    match p {
        Patience::Exponential { mean } => {
            let x: f64 = Exp1.sample(rng);
            Some(SimDuration::from_secs_f64(x * mean.secs()))
        }
        Patience::Fixed { after } => Some(after.0),
        Patience::Never => None,
    }
}
