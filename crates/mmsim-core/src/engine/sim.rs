//! The simulation: one event loop over one queue. Every state change
//! happens here or in a layer's hook called from here (`engine::layer`), in
//! event order; policies, team formation, outcome models and rating systems
//! are called from here and only return values.

mod acceptance;
pub mod backfill;
pub mod backfill_ready;
pub mod backfill_roles;
mod engagement;
pub mod explain;
mod modes;

pub use acceptance::Acceptance;
pub use backfill::Backfill;
pub use engagement::EngagementConfig;

use super::config::{Config, Patience};
use super::layer::{Ended, Layer, Peers};
use super::population;
use super::queue::{EventQueue, Lane};
use super::regions::{Geography, Regions};
use super::streams::{stream, Stream};
use super::trace::{LoggedMember, TicketLog, Trace, TraceRoles};
use super::world::World;
use crate::metrics::{
    Collector, MatchRecord, QueueSample, RankCorr, RowSink, TicketEnd, TicketRecord,
};
use crate::model::{
    MatchId, Party, PerTeam, Player, PlayerId, Rating, SimDuration, SimTime, TicketId,
};
use crate::outcome::{OutcomeModel, OutcomeRngs, TeamSkills};
use crate::policy::{FormedMatch, Policy, PoolView, Proposal, Schedule, SearchWork, Trigger};
use crate::pool::{Pool, WaitingTicket};
use crate::rating::{LadderSpread, RatingSystem};
use crate::teams::TeamFormer;
use rand::Rng;
use rand_distr::{Distribution, Exp1, StandardNormal};
use rand_pcg::Pcg64;
use std::sync::Arc;

mod replay;

/// Rating moves are recorded for a player's first this-many games of a rating.
const LEARNING_GAMES: usize = 40;

enum Event {
    Arrival,
    /// A party back from a match, by its slot in `Simulation::returning`
    /// (kept out of the event so heap entries stay small).
    Requeue(u32),
    Abandon(TicketId),
    Tick,
    /// A running match, by its slot in `Simulation::active`.
    MatchStart(Slot),
    MatchEnd(Slot),
    Sample,
    /// A failed ready check's cancel, by its slot in `ReadyChecks::held`.
    ReadyFail(u32),
    /// Member `.1` of the match in the slot leaves it (`[backfill]`).
    Leave(Slot, u32),
    /// A ticket's wait reaches this step of the latency rule (`[regions]`).
    Region(TicketId, u16),
    /// A mode's periodic pass (`[modes]`), by its index.
    ModeTick(u16),
}

// Events in the heap are sifted up and down by value: keep them two words
// at most (a party or a match lives in a slot, not in the event).
const _: () = assert!(std::mem::size_of::<Event>() <= 16);

// The queue's FIFO lanes: each holds events that come due in the order they
// are scheduled, so they skip the heap. Arrivals, ticks and samples have one
// pending event each; match starts follow formation after a fixed lobby time.
const ARRIVALS: Lane = Lane(0);
const TICKS: Lane = Lane(1);
const SAMPLES: Lane = Lane(2);
const STARTS: Lane = Lane(3);
const LANES: usize = 4;

/// Where a running match lives in `Simulation::active`.
#[derive(Clone, Copy, Debug)]
pub struct Slot(pub u32);

/// A match between forming and ending. Slots are reused with their buffers,
/// so forming a match allocates nothing once the run has warmed up.
#[derive(Default)]
#[doc(hidden)]
pub struct Active {
    id: Option<MatchId>,
    /// The match's row, completed as it starts and ends, handed to the
    /// collector when it ends (or when the run does).
    record: Option<MatchRecord>,
    /// Every member, team by team and party by party. Inline up to 5v5, so
    /// reading a match's players at its end does not first chase a pointer
    /// to a buffer as cold as the slot.
    pub members: smallvec::SmallVec<[PlayerId; 10]>,
    /// Per party: where it ends in `members`, and its team.
    pub parties: smallvec::SmallVec<[(u32, u32); 4]>,
    /// With a role queue, the role each member plays, in `members` order
    /// (a leaver's slot opens in this role); empty otherwise.
    pub roles: Vec<u8>,
    rating_weight: f64,
    winner: Option<usize>,
}

impl Active {
    /// The parties as (team, members), in team order.
    pub fn parties(&self) -> impl Iterator<Item = (usize, &[PlayerId])> + '_ {
        parties_of(&self.members, &self.parties)
    }
}

/// `Active::parties` of a slot's `members` and `parties` lent out of it.
fn parties_of<'a>(
    members: &'a [PlayerId],
    parties: &'a [(u32, u32)],
) -> impl Iterator<Item = (usize, &'a [PlayerId])> + 'a {
    let mut start = 0;
    parties.iter().map(move |&(end, team)| {
        let party = &members[start as usize..end as usize];
        start = end;
        (team as usize, party)
    })
}

/// A run's layers, lent out by `Simulation::take_layers`.
#[doc(hidden)]
pub struct Layers(Vec<Box<dyn Layer>>);

/// Buffers the engine refills on every match instead of allocating anew.
#[derive(Default)]
struct Scratch {
    removed: Vec<WaitingTicket>,
    ratings: Vec<Vec<Rating>>,
    before: Vec<Vec<Rating>>,
    skills: Vec<TeamSkills>,
    seen: Vec<(MatchId, usize)>,
    team_tickets: Vec<Vec<TicketId>>,
}

/// `v` resized to `n` inner vectors, each emptied but keeping its capacity.
fn reset<T>(v: &mut Vec<Vec<T>>, n: usize) {
    v.resize_with(n, Vec::new);
    v.iter_mut().for_each(Vec::clear);
}

/// Counters the engine keeps about itself, for `perf.json` and checks.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EngineStats {
    pub events: u64,
    /// Tickets enqueued (fresh arrivals and returns), warm-up included.
    pub tickets: u64,
    /// Matches formed, warm-up included.
    pub matches: u64,
    /// Fresh arrivals dropped because a chosen player was already busy.
    pub arrivals_blocked: u64,
    /// Proposals the engine refused (stale, overlapping or unfillable).
    pub proposals_rejected: u64,
    /// Traced tickets that waited for a member still queued or playing.
    pub trace_tickets_delayed: u64,
    /// The policies' search work (`Policy::work`), summed over the regions'
    /// or modes' instances; `None` when no policy reports any.
    pub search: Option<SearchWork>,
}

/// Everything a run produced.
pub struct SimOutput<'r> {
    /// Every finished ticket and match went through it; the summary comes from it.
    pub collector: Collector<'r>,
    pub players: Vec<Player>,
    /// With separate ladders (`ladder` keys in `[modes]`), each ladder's
    /// view of the players at the end; empty otherwise (`players` holds
    /// the one ladder's ratings).
    pub ladders: Vec<super::modes::LadderPlayers>,
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
    /// With `[regions]`, one more instance of the policy per data centre
    /// (they replace `policy`); empty otherwise.
    pub regional: Vec<Box<dyn Policy>>,
    /// With `[modes]`, one policy per mode (they replace `policy`); empty otherwise.
    pub modal: Vec<Box<dyn Policy>>,
}

pub struct Simulation<'r> {
    config: Config,
    /// What every feature reads: the clock, the players, the pool and the
    /// running matches (`world.rs`).
    #[doc(hidden)]
    pub world: World,
    queue: EventQueue<Event>,
    scratch: Scratch,
    collector: Collector<'r>,
    #[doc(hidden)]
    pub next_ticket: u32,
    next_match: u32,
    parts: Parts,
    schedule: Schedule,
    rng_arrivals: Pcg64,
    rng_behaviour: Pcg64,
    rng_outcomes: OutcomeRngs,
    rng_policy: Pcg64,
    rng_teams: Pcg64,
    proposals: Vec<Proposal>,
    matches_since_sample: u32,
    samples_taken: u64,
    corr_every: u64,
    rank_corr: RankCorr,
    #[doc(hidden)]
    pub stats: EngineStats,
    /// The trace replayed instead of Poisson arrivals, its next ticket, and
    /// its tickets waiting for busy members (`replay.rs`).
    trace: Option<Arc<Trace>>,
    trace_next: usize,
    held: Vec<u32>,
    /// Told of every ticket as it joins (`mmsim trace`).
    log: Option<&'r mut dyn TicketLog>,
    /// Tickets a failed ready check holds out of the pool (`[acceptance]`).
    holds: acceptance::Holds,
    /// Leaves and backfill, when the scenario has `[backfill]`.
    #[doc(hidden)]
    pub bf: Option<backfill::Backfills>,
    /// The regional layer; `None` (and never looked into) without `[regions]`.
    regions: Option<Box<Regions>>,
    /// The data centre of the match being formed, while it is formed.
    host: Option<u16>,
    /// The optional features that plug in through `Layer` (`[engagement]`,
    /// `--explain`), in the order their hooks are called; empty in a plain
    /// run, which then pays one length check per hook.
    layers: Vec<Box<dyn Layer>>,
    /// Game modes over the same players; `None` (and never looked into) without `[modes]`.
    #[doc(hidden)]
    pub modes: Option<Box<super::modes::Modes>>,
    /// Each ladder's spread of settled solo ratings (`[0]` the engine's own,
    /// `[l]` mode ladder l), counted when its first match is rated and moved
    /// with every rating after; empty unless the rating system reads it
    /// (`RatingSystem::settled_games`).
    spreads: Vec<Option<LadderSpread>>,
}

impl<'r> Simulation<'r> {
    /// A run of `config` with these parts; finished tickets and matches go
    /// to `rows` (the tables) as the run produces them.
    pub fn new(config: Config, seed: u64, mut parts: Parts, rows: &'r mut dyn RowSink) -> Self {
        let mut initial = parts.rating.initial();
        if let Some(r) = config.population.initial_rating {
            initial.value = r;
        }
        let mut rng_pop = stream(seed, Stream::Population);
        let trace = config.arrivals.trace.clone();
        let mut players = match &trace {
            Some(t) => replay::players(t, initial),
            None => population::generate(
                config.population.size,
                &config.population.skill,
                initial,
                &mut rng_pop,
            ),
        };
        population::draw_attributes(&mut players, &config.population, &mut rng_pop);
        if let Some(d) = &config.roles {
            super::roles::draw(&mut players, d, &mut rng_pop);
            if let Some(t) = &trace {
                replay::apply_roles(&mut players, t);
            }
        }
        if let Some(seasoned) = &config.population.seasoned {
            population::season(&mut players, seasoned, &mut rng_pop);
        }
        if let Some(loaded) = &config.population.loaded {
            population::load(&mut players, loaded);
        }
        // A win-rate rating is the same record the population drew: start it
        // there, with the games behind it, rather than at 50% for everyone.
        if config.ratings_from_win_rate {
            for p in &mut players {
                for r in [&mut p.rating, &mut p.party_rating] {
                    r.value = p.win_rate * 100.0;
                    r.games = p.games;
                }
            }
        }
        let n = players.len();
        let end = SimTime::ZERO + config.duration;
        let sample = config.sample_interval.as_ms().max(1);
        let samples_total = (end.as_ms() / sample).max(1);
        let corr_every = (samples_total / config.corr_points.max(1) as u64).max(1);
        let schedule = parts.policy.schedule();
        let by_skill = crate::metrics::skill_order(&players);
        let mut collector = Collector::new(&players, &by_skill, rows);
        let mut layers: Vec<Box<dyn Layer>> = Vec::new();
        if let Some(a) = config.acceptance.clone() {
            collector.enable_acceptance();
            layers.push(Box::new(acceptance::ReadyChecks::new(
                a,
                stream(seed, Stream::Acceptance),
            )));
        }
        let bf = config.backfill.clone().map(|b| {
            collector.enable_backfill();
            if let Some(acc) = collector.backfill() {
                if config.acceptance.is_some() {
                    acc.with_ready_check();
                }
                if let Some(d) = &config.roles {
                    acc.with_roles(d.names.clone());
                }
            }
            backfill::Backfills::new(b, stream(seed, Stream::Backfill))
        });
        if let Some(d) = &config.roles {
            collector.with_roles(d.names.clone());
        }
        if config.explain {
            let (window, threshold) = explain::reports_window(parts.policy.as_ref());
            collector.enable_explain(
                crate::metrics::explain::ExplainAcc::new(window, threshold)
                    .with_pair_rule(explain::reports_pair_rule(parts.policy.as_ref())),
            );
        }
        let regions = config.regions.as_ref().map(|r| {
            let mut rng_regions = stream(seed, Stream::Regions);
            let geo = match &trace {
                Some(t) => replay::geography(r, t, &mut rng_regions),
                None => Geography::draw(r, players.len(), &mut rng_regions),
            };
            collector.enable_regions(
                r.data_centres.clone(),
                r.homes.iter().map(|h| h.name.clone()).collect(),
            );
            Box::new(Regions::new(
                r.clone(),
                geo,
                std::mem::take(&mut parts.regional),
            ))
        });
        if let Some(c) = config.engagement.clone() {
            collector.enable_engagement(crate::metrics::engagement::EngagementAcc::new(
                engagement::deciles(&by_skill),
                engagement::hours(end),
                config.warmup.as_secs_f64(),
            ));
            layers.push(Box::new(engagement::Engagement::new(
                c,
                stream(seed, Stream::Engagement),
                n,
                end,
                SimTime::ZERO + config.warmup,
            )));
        }
        let modes = config.modes.as_ref().map(|m| {
            collector.enable_modes(
                m.modes.iter().map(|x| x.name.clone()).collect(),
                m.multi_queue,
            );
            if !m.ladders.is_empty() || m.unlocks() {
                collector.modes_ladders(
                    m.modes
                        .iter()
                        .map(|x| m.ladders.get(usize::from(x.ladder)).cloned())
                        .collect(),
                    m.modes
                        .iter()
                        .enumerate()
                        .filter(|(_, x)| x.unlock_games > 0)
                        .fold(0, |mask, (i, _)| mask | (1 << i)),
                );
            }
            Box::new(
                super::modes::Modes::new(
                    m.clone(),
                    std::mem::take(&mut parts.modal),
                    stream(seed, Stream::Modes),
                )
                .with_ladders(&players),
            )
        });
        let rank_corr = RankCorr::new(by_skill, &players);
        if config.explain {
            layers.push(Box::new(explain::Explain::new(
                config.roles.as_ref().map(|r| r.names.clone()),
                config.expansions.clone(),
            )));
        }
        Simulation {
            world: World {
                now: SimTime::ZERO,
                end,
                warmup_end: SimTime::ZERO + config.warmup,
                format: config.format,
                pool: Pool::default(),
                busy: vec![false; n],
                last_match: vec![None; n],
                players,
                active: Vec::new(),
                free: Vec::new(),
                in_matches: 0,
                rerated: 0,
                returning: Vec::new(),
                returning_free: Vec::new(),
            },
            queue: EventQueue::with_lanes(LANES),
            scratch: Scratch::default(),
            spreads: Vec::new(),
            collector,
            next_ticket: 0,
            next_match: 0,
            parts,
            schedule,
            rng_arrivals: stream(seed, Stream::Arrivals),
            rng_behaviour: stream(seed, Stream::Behaviour),
            rng_outcomes: OutcomeRngs {
                winner: stream(seed, Stream::Outcomes),
                gold: stream(seed, Stream::Gold),
                battle: stream(seed, Stream::Battle),
            },
            rng_policy: stream(seed, Stream::Policy),
            rng_teams: stream(seed, Stream::Teams),
            config,
            proposals: Vec::new(),
            matches_since_sample: 0,
            samples_taken: 0,
            corr_every,
            rank_corr,
            stats: EngineStats::default(),
            trace,
            trace_next: 0,
            held: Vec::new(),
            log: None,
            holds: acceptance::Holds::default(),
            bf,
            regions,
            host: None,
            layers,
            modes,
        }
    }

    /// This run, telling `log` of every ticket as it joins.
    pub fn with_log(mut self, log: &'r mut dyn TicketLog) -> Self {
        self.log = Some(log);
        self
    }

    /// Runs to the scenario's end. `progress` is told the simulated time now
    /// and then (every 64k events), for a progress bar.
    pub fn run(mut self, progress: &mut dyn FnMut(SimTime, SimTime)) -> SimOutput<'r> {
        self.schedule_next_arrival();
        if self.modes.is_some() {
            // Each mode's policy ticks on its own schedule; `[policy]` is
            // only the default of modes that name none.
            self.start_mode_ticks();
        } else if let Some(tick) = self.schedule.tick {
            self.queue
                .schedule_in(TICKS, SimTime::ZERO + tick, Event::Tick);
        }
        self.queue
            .schedule_in(SAMPLES, SimTime::ZERO, Event::Sample);
        while let Some((t, event)) = self.queue.pop() {
            if t > self.world.end {
                break;
            }
            self.world.now = t;
            self.stats.events += 1;
            self.prefetch_next_heap_event();
            if self.stats.events & 0xFFFF == 0 {
                progress(self.world.now, self.world.end);
            }
            match event {
                Event::Arrival => self.on_arrival(),
                Event::Requeue(slot) => {
                    let members = std::mem::take(&mut self.world.returning[slot as usize]);
                    self.world.returning_free.push(slot);
                    let patience =
                        draw_patience(&self.config.arrivals.patience, &mut self.rng_behaviour);
                    self.enqueue(members, patience, true);
                }
                Event::Abandon(id) => self.on_abandon(id),
                Event::Tick => {
                    self.run_policy(Trigger::Tick);
                    if let Some(tick) = self.schedule.tick {
                        self.queue
                            .schedule_in(TICKS, self.world.now + tick, Event::Tick);
                    }
                }
                Event::MatchStart(id) => self.on_match_start(id),
                Event::MatchEnd(id) => self.on_match_end(id),
                Event::Sample => self.on_sample(),
                Event::ReadyFail(h) => self.on_ready_fail(h),
                Event::Leave(slot, i) => self.on_leave(slot, i),
                Event::Region(id, step) => self.on_region_step(id, step as usize),
                Event::ModeTick(m) => self.on_mode_tick(m),
            }
        }
        progress(self.world.end, self.world.end);
        self.world.now = self.world.end;
        // Tickets still waiting are censored at the end of the run; matches
        // still in the lobby or playing are handed over unfinished.
        let end = self.world.end;
        let waiting: Vec<TicketId> = self.world.pool.oldest_first().map(|t| t.id).collect();
        for id in waiting {
            let t = self.world.pool.remove(id).expect("listed as waiting");
            self.leave(&t, end, TicketEnd::Waiting, &[]);
        }
        self.censor_ready_checks(end);
        for l in &mut self.layers {
            l.finish(&self.world, &mut self.collector);
        }
        let mut running: Vec<MatchRecord> = self
            .world
            .active
            .iter_mut()
            .filter_map(|a| a.record.take())
            .collect();
        running.sort_by_key(|m| m.id);
        for m in running {
            self.collector.match_row(m);
        }
        self.stats.search = self.search_work();
        let ladders = self.finish_ladders();
        SimOutput {
            collector: self.collector,
            ladders,
            players: self.world.players,
            stats: self.stats,
            end: self.world.end,
            warmup_end: self.world.warmup_end,
        }
    }

    /// What every policy instance of the run reports of its search work.
    fn search_work(&self) -> Option<SearchWork> {
        let regional = self.regions.iter().flat_map(|r| r.policies.iter());
        let modal = self.modes.iter().flat_map(|m| m.policies.iter());
        std::iter::once(&self.parts.policy)
            .chain(regional)
            .chain(modal)
            .filter_map(|p| p.work())
            .reduce(|a, b| a + b)
    }

    fn schedule_next_arrival(&mut self) {
        if self.replaying() {
            return self.schedule_trace_arrival();
        }
        let gap_s: f64 = Exp1.sample(&mut self.rng_arrivals);
        let t = self.world.now
            + SimDuration::from_secs_f64(gap_s / self.config.arrivals.peak_rate_per_s);
        if t <= self.world.end {
            self.queue.schedule_in(ARRIVALS, t, Event::Arrival);
        }
    }

    #[doc(hidden)]
    pub fn on_arrival(&mut self) {
        if self.replaying() {
            return self.on_trace_arrival();
        }
        self.schedule_next_arrival();
        // Every arrival draws the same numbers whatever happens to it, so the
        // stream stays aligned across policies (common random numbers).
        let u_keep: f64 = self.rng_arrivals.random();
        let u_size: f64 = self.rng_arrivals.random();
        let mut size = party_size(&self.config.arrivals.party_size_cdf, u_size);
        let drawn = if self.modes.is_some() {
            let (m, s) = self.arrival_mode(u_size);
            size = s;
            Some(m)
        } else {
            None
        };
        let members = draw_members(&mut self.rng_arrivals, size, self.world.players.len());
        let arrivals = &self.config.arrivals;
        let patience = draw_patience(&arrivals.patience, &mut self.rng_arrivals);
        self.prefetch_next_arrival();
        let rate = arrivals.hourly_rate_per_s[((self.world.now.as_ms() / 3_600_000) % 24) as usize];
        if u_keep * arrivals.peak_rate_per_s >= rate {
            return;
        }
        if !self.layers.is_empty() && !self.layers_admit(&members) {
            return;
        }
        let duplicate = (1..members.len()).any(|i| members[..i].contains(&members[i]));
        if duplicate || members.iter().any(|p| self.world.busy[p.index()]) {
            self.stats.arrivals_blocked += 1;
            return;
        }
        // A role queue refuses a party no team could take.
        if !super::roles::party_fits(&self.world.players, &members, self.world.format) {
            self.stats.arrivals_blocked += 1;
            return;
        }
        if let Some(m) = self.modes.as_mut() {
            m.pending = drawn;
        }
        self.enqueue(members, patience, false);
    }

    /// Starts loading the records of the next fresh arrival's players, so
    /// that the cache miss on a random player's record overlaps the events
    /// before that arrival instead of stalling its join.
    fn prefetch_next_arrival(&self) {
        self.prefetch_join(&self.next_arrival_players());
    }

    /// Prefetches the one field of each member's record that the party's
    /// join reads (`enqueue`): the solo rating alone, the party rating in a
    /// party.
    fn prefetch_join(&self, party: &[PlayerId]) {
        let solo = party.len() == 1;
        for p in party {
            let player = &self.world.players[p.index()];
            prefetch(if solo {
                &player.rating
            } else {
                &player.party_rating
            });
        }
    }

    /// The players the next fresh arrival will draw, read from a copy of
    /// the arrival stream: the stream itself is untouched (`&self`), so what
    /// happens never depends on this. It repeats `on_arrival`'s draws in
    /// its order; a wrong guess (modes pick the party size) costs only a
    /// record loaded for nothing.
    #[doc(hidden)]
    pub fn next_arrival_players(&self) -> Party {
        let mut peek = self.rng_arrivals.clone();
        let _gap: f64 = Exp1.sample(&mut peek);
        let _u_keep: f64 = peek.random();
        let size = party_size(&self.config.arrivals.party_size_cdf, peek.random());
        draw_members(&mut peek, size, self.world.players.len())
    }

    /// Starts loading the player records that the heap's next event will
    /// read: a returning party's ratings, or a finished match's players.
    fn prefetch_next_heap_event(&mut self) {
        match self.queue.peek_heap() {
            Some(&Event::Requeue(slot)) => self.prefetch_join(&self.world.returning[slot as usize]),
            Some(&Event::MatchEnd(Slot(s))) => {
                for p in &self.world.active[s as usize].members {
                    prefetch(&self.world.players[p.index()]);
                }
            }
            _ => {}
        }
    }

    #[doc(hidden)]
    pub fn enqueue(&mut self, members: Party, patience: Option<SimDuration>, requeue: bool) {
        let id = TicketId(self.next_ticket);
        self.next_ticket += 1;
        self.stats.tickets += 1;
        let solo = members.len() == 1;
        let mut rating_sum = 0.0;
        for p in &members {
            let player = &self.world.players[p.index()];
            let r = if solo {
                &player.rating
            } else {
                &player.party_rating
            };
            rating_sum += self.parts.rating.current(r, self.world.now).value;
            self.world.busy[p.index()] = true;
        }
        if self.log.is_some() {
            self.log_ticket(id, &members, patience, requeue);
        }
        let k = members.len() as f64;
        let roles = super::roles::masks(&self.world.players, &members, self.world.format);
        self.world.pool.insert(WaitingTicket {
            id,
            players: members,
            rating: rating_sum / k,
            enqueued: self.world.now,
            requeue,
            roles,
        });
        // The abandon timer takes its place in the order now but enters the
        // queue only if the ticket is still waiting after the join's pass
        // (most tickets of a busy queue match on joining), and is cancelled
        // when the ticket matches later, so timers that would never fire
        // are not sifted through the heap.
        let abandon = patience.map(|p| (self.queue.reserve(), self.world.now + p));
        if self.modes.is_some() {
            self.modes_join(id);
        } else if self.regions.is_some() {
            self.on_region_step(id, 0);
        } else if self.schedule.on_join {
            self.run_policy(Trigger::Join(id));
        }
        if let Some((seq, at)) = abandon {
            if self.world.pool.contains(id) {
                self.queue
                    .schedule_cancellable(timer_key(id), seq, at, Event::Abandon(id));
            }
        }
    }

    fn on_abandon(&mut self, id: TicketId) {
        // The ticket may have matched already: then there is nothing to do.
        if let Some(t) = self.world.pool.remove(id) {
            self.leave(&t, self.world.now, TicketEnd::Abandoned, &[]);
            for p in &t.players {
                self.world.busy[p.index()] = false;
            }
            if !self.held.is_empty() {
                self.release_held();
            }
        }
    }

    fn log_ticket(
        &mut self,
        id: TicketId,
        members: &Party,
        patience: Option<SimDuration>,
        requeue: bool,
    ) {
        let solo = members.len() == 1;
        let logged: Vec<LoggedMember> = members
            .iter()
            .map(|p| {
                let pl = &self.world.players[p.index()];
                let r = if solo { &pl.rating } else { &pl.party_rating };
                LoggedMember {
                    player: *p,
                    rating: self.parts.rating.current(r, self.world.now).value,
                    true_skill: pl.true_skill,
                    home: self.regions.as_ref().map(|g| g.geo.home(*p)),
                    pings_ms: self.regions.as_ref().map_or(&[][..], |g| g.geo.pings(*p)),
                    roles: self.config.roles.as_ref().map(|_| TraceRoles {
                        main: pl.main_role,
                        mask: pl.roles,
                    }),
                }
            })
            .collect();
        if let Some(log) = self.log.as_deref_mut() {
            log.enqueued(self.world.now, id, &logged, patience, requeue);
        }
    }

    /// Hands a ticket leaving the queue to the collector, as its row.
    /// `assigned`: with a role queue, the role each member plays.
    #[inline]
    fn leave(&mut self, t: &WaitingTicket, left: SimTime, end: TicketEnd, assigned: &[u8]) {
        for l in &mut self.layers {
            l.ticket_left(&self.world, &mut self.collector, t, left, end);
        }
        let (region, host_ping_ms) = if self.regions.is_some() {
            self.leave_regions(t, end)
        } else {
            (None, None)
        };
        let mode = if self.modes.is_some() {
            self.leave_modes(t.id, end)
        } else {
            None
        };
        // True skill is fixed, so the party's mean is the same as when it joined.
        let skill_sum: f64 = t
            .players
            .iter()
            .map(|p| self.world.players[p.index()].true_skill)
            .sum();
        self.collector.ticket(TicketRecord {
            ticket: t.id,
            lead: t.players[0],
            party_size: t.players.len() as u32,
            enqueued: t.enqueued,
            left,
            end,
            rating: t.rating,
            true_skill: skill_sum / t.players.len() as f64,
            requeue: t.requeue,
            in_warmup: t.enqueued < self.world.warmup_end,
            roles: self
                .world
                .format
                .roles
                .map(|_| super::roles::record(&self.world.players, &t.players, assigned)),
            region,
            host_ping_ms,
            mode,
        });
    }

    /// The regional layer's part of a ticket's leaving: out of its
    /// sub-pools, and the ping of the data centre that hosts its match.
    /// Kept out of `leave`, which every ticket of every run goes through.
    #[cold]
    #[inline(never)]
    fn leave_regions(&mut self, t: &WaitingTicket, end: TicketEnd) -> (Option<u16>, Option<u16>) {
        let r = self.regions.as_mut().expect("a regional run");
        r.remove(t.id);
        let region = Some(r.geo.home(t.players[0]));
        let mut host_ping_ms = None;
        if let (Some(dc), TicketEnd::Matched(_)) = (self.host, end) {
            host_ping_ms = Some(r.geo.ticket_ping(&t.players, dc as usize));
            if t.enqueued >= self.world.warmup_end {
                for &p in &t.players {
                    self.collector.host_ping(r.geo.ping(p, dc as usize));
                }
            }
        }
        (region, host_ping_ms)
    }

    #[doc(hidden)]
    pub fn run_policy(&mut self, trigger: Trigger) {
        // Open backfill slots take their players before the policy's pass.
        if self.bf.is_some() {
            self.fill_open_slots();
        }
        if self.regions.is_some() {
            if trigger == Trigger::Tick {
                self.regions.as_mut().expect("checked").order_for_tick();
                self.run_regional(Trigger::Tick);
                if !self.layers.is_empty() {
                    self.layers_after_pass(trigger);
                }
            }
            return;
        }
        let mut proposals = std::mem::take(&mut self.proposals);
        proposals.clear();
        let view = PoolView {
            now: self.world.now,
            pool: &self.world.pool,
            players: &self.world.players,
            format: self.world.format,
            rerated: self.world.rerated,
        };
        self.parts
            .policy
            .propose(&view, trigger, &mut self.rng_policy, &mut proposals);
        for p in proposals.drain(..) {
            self.form(p);
        }
        self.proposals = proposals;
        if !self.layers.is_empty() {
            self.layers_after_pass(trigger);
        }
    }

    /// Splits a proposal's tickets into teams, into `scratch.team_tickets`:
    /// the policy's split if it gave one, one ticket per team for solo
    /// formats, else the team former. False when no split fits.
    fn split(&mut self, proposal: &Proposal) -> bool {
        let mut out = std::mem::take(&mut self.scratch.team_tickets);
        let mut ok = self.split_into(proposal, &mut out);
        // Whoever split it, a role queue's teams must each fill their
        // composition: an uneven role split is replaced by an even one.
        if let (true, Some(comp)) = (ok, self.world.format.roles) {
            ok = super::roles::make_feasible(&self.world.pool, &proposal.tickets, comp, &mut out);
        }
        self.scratch.team_tickets = out;
        ok
    }

    fn split_into(&mut self, proposal: &Proposal, out: &mut Vec<Vec<TicketId>>) -> bool {
        if let Some(teams) = &proposal.teams {
            let ok = teams.len() == self.world.format.teams
                && teams.iter().all(|team| {
                    team.iter()
                        .map(|id| self.world.pool.get(*id).map_or(0, |t| t.size()))
                        .sum::<usize>()
                        == self.world.format.team_size
                });
            if ok {
                reset(out, teams.len());
                for (o, team) in out.iter_mut().zip(teams) {
                    o.extend_from_slice(team);
                }
            }
            return ok;
        }
        if self.world.format.team_size == 1 {
            reset(out, proposal.tickets.len());
            for (o, &id) in out.iter_mut().zip(&proposal.tickets) {
                o.push(id);
            }
            return true;
        }
        let Some(former) = self.parts.former.as_ref() else {
            return false;
        };
        let rated = modes::rated(&self.modes, &self.world.players);
        let parties: Vec<Vec<&Player>> = proposal
            .tickets
            .iter()
            .map(|id| {
                self.world
                    .pool
                    .get(*id)
                    .expect("checked")
                    .players
                    .iter()
                    .map(|p| &rated[p.index()])
                    .collect()
            })
            .collect();
        let Some(split) = former.split(
            &parties,
            self.world.format.teams,
            self.world.format.team_size,
            &mut self.rng_teams,
        ) else {
            return false;
        };
        reset(out, split.len());
        for (o, team) in out.iter_mut().zip(split) {
            o.extend(team.into_iter().map(|i| proposal.tickets[i]));
        }
        true
    }

    #[inline]
    #[doc(hidden)]
    pub fn form(&mut self, proposal: Proposal) {
        if let (Some(r), Some(dc)) = (&self.regions, self.host) {
            // The engine's own guard: no match is formed where one of its
            // tickets is over its latency limit, whatever the policy said.
            if !r.allows(dc as usize, &proposal.tickets, self.world.now) {
                self.stats.proposals_rejected += 1;
                return;
            }
        }
        if self.modes.is_some() && !self.mode_allows(&proposal.tickets) {
            self.stats.proposals_rejected += 1;
            return;
        }
        // A ticket no longer waiting makes the proposal stale (`None`); a
        // sentinel size summed over several would overflow.
        let players: Option<usize> = proposal
            .tickets
            .iter()
            .map(|id| self.world.pool.get(*id).map(|t| t.size()))
            .sum();
        let distinct = (1..proposal.tickets.len())
            .all(|i| !proposal.tickets[..i].contains(&proposal.tickets[i]));
        if players != Some(self.world.format.players()) || !distinct || !self.split(&proposal) {
            self.stats.proposals_rejected += 1;
            return;
        }
        let team_tickets = std::mem::take(&mut self.scratch.team_tickets);
        // Whoever split it, a match must hold every proposed ticket exactly
        // once and fill every team exactly: a party is never split, dropped
        // or counted twice.
        let placed: usize = team_tickets.iter().map(Vec::len).sum();
        let whole =
            placed == proposal.tickets.len()
                && proposal
                    .tickets
                    .iter()
                    .all(|id| team_tickets.iter().flatten().filter(|t| *t == id).count() == 1)
                && team_tickets.iter().all(|team| {
                    team.iter()
                        .map(|id| self.world.pool.get(*id).map_or(0, |t| t.size()))
                        .sum::<usize>()
                        == self.world.format.team_size
                })
                && self.world.format.roles.is_none_or(|comp| {
                    super::roles::teams_fit(&self.world.pool, &team_tickets, comp)
                });
        if !whole {
            self.scratch.team_tickets = team_tickets;
            self.stats.proposals_rejected += 1;
            return;
        }
        let Some(ready_delay) = self.ready_check(&team_tickets) else {
            self.scratch.team_tickets = team_tickets;
            return;
        };
        if !self.layers.is_empty() {
            self.layers_forming(&team_tickets);
        }
        let id = MatchId(self.next_match);
        self.next_match += 1;
        self.stats.matches += 1;
        let slot = match self.world.free.pop() {
            Some(i) => i,
            None => {
                self.world.active.push(Active::default());
                self.world.active.len() as u32 - 1
            }
        };
        // The slot stays in place; only its member lists are lent out while
        // the engine's own methods run. Moving a whole slot (400 bytes) out
        // and back at every start and end was most of a 1v1 run's copying.
        let a = &mut self.world.active[slot as usize];
        let (mut members, mut parties, mut roles) = (
            std::mem::take(&mut a.members),
            std::mem::take(&mut a.parties),
            std::mem::take(&mut a.roles),
        );
        members.clear();
        parties.clear();
        roles.clear();
        let mut removed = std::mem::take(&mut self.scratch.removed);
        removed.clear();
        let mut member_ratings = std::mem::take(&mut self.scratch.ratings);
        let k = team_tickets.len();
        reset(&mut member_ratings, k);
        let (mut team_rating, mut team_skill, mut team_top, mut team_parties, mut team_wr) = (
            PerTeam::with_capacity(k),
            PerTeam::with_capacity(k),
            PerTeam::with_capacity(k),
            PerTeam::with_capacity(k),
            PerTeam::with_capacity(k),
        );
        let (mut r_min, mut r_max, mut s_min, mut s_max) = (
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::INFINITY,
            f64::NEG_INFINITY,
        );
        for (ti, team) in team_tickets.iter().enumerate() {
            let (mut rs, mut ss, mut top, mut wr, mut n) = (0.0, 0.0, f64::NEG_INFINITY, 0.0, 0.0);
            let ratings = &mut member_ratings[ti];
            let assigned = self
                .world
                .format
                .roles
                .map_or_else(Default::default, |comp| {
                    super::roles::assign(&self.world.players, &self.world.pool, team, comp)
                });
            let mut assigned_from = 0;
            for tid in team {
                let t = self
                    .world
                    .pool
                    .remove(*tid)
                    .expect("proposal tickets are waiting");
                self.queue.cancel(timer_key(*tid));
                let mine = assigned
                    .get(assigned_from..assigned_from + t.size())
                    .unwrap_or(&[]);
                assigned_from += t.size();
                roles.extend_from_slice(mine);
                self.leave(&t, self.world.now, TicketEnd::Matched(id), mine);
                for l in &mut self.layers {
                    l.ticket_matched(&self.world, &mut self.collector, &t);
                }
                let solo = t.players.len() == 1;
                for p in &t.players {
                    let pl = &self.rated_players()[p.index()];
                    let r = self.parts.rating.current(
                        if solo { &pl.rating } else { &pl.party_rating },
                        self.world.now,
                    );
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
                members.extend_from_slice(&t.players);
                parties.push((members.len() as u32, ti as u32));
                removed.push(t);
            }
            team_rating.push(rs / n);
            team_skill.push(ss / n);
            team_top.push(top);
            team_parties.push(team.len() as u32);
            team_wr.push(wr / n);
        }
        let predicted = self.parts.rating.win_probability(
            &member_ratings[0],
            &member_ratings[1],
            self.world.now,
        );
        // A rematch: two players on different teams whose previous match was the same one.
        let seen = &mut self.scratch.seen;
        seen.clear();
        let mut rematch = false;
        for (ti, party) in parties_of(&members, &parties) {
            for p in party {
                if let Some(m) = self.world.last_match[p.index()] {
                    if seen.iter().any(|&(m2, t2)| m2 == m && t2 != ti) {
                        rematch = true;
                    }
                    seen.push((m, ti));
                }
            }
        }
        let record = MatchRecord {
            id,
            formed: self.world.now,
            ended: None,
            teams: k as u32,
            team_size: self.world.format.team_size as u32,
            team_rating,
            team_skill,
            team_top_skill: team_top,
            team_parties,
            team_win_rate_pct: team_wr,
            spread_rating: r_max - r_min,
            spread_skill: s_max - s_min,
            p_team0: None,
            p_team0_predicted: predicted,
            winner: None,
            duration_s: None,
            survivors: None,
            gold_integral: None,
            rematch,
            in_warmup: self.world.now < self.world.warmup_end,
            host_dc: self.host,
            mode: self.modes.as_ref().and_then(|m| m.current),
        };
        let formed = FormedMatch {
            id,
            now: self.world.now,
            tickets: &removed,
        };
        match &mut self.regions {
            // Every data centre's instance hears of every match: what a
            // policy remembers (recent opponents, games by rating) is about
            // players and the ladder, which all data centres share.
            Some(r) => r.policies.iter_mut().for_each(|p| p.on_formed(&formed)),
            None if self.modes.is_some() => self.modes_formed(&formed),
            None => self.parts.policy.on_formed(&formed),
        }
        self.world.in_matches += members.len();
        let a = &mut self.world.active[slot as usize];
        (a.members, a.parties, a.roles) = (members, parties, roles);
        a.record = Some(record);
        a.id = Some(id);
        a.rating_weight = proposal.rating_weight;
        a.winner = None;
        self.scratch.removed = removed;
        self.scratch.ratings = member_ratings;
        self.scratch.team_tickets = team_tickets;
        self.matches_since_sample += 1;
        self.queue.schedule_in(
            STARTS,
            self.world.now + self.config.lobby + ready_delay,
            Event::MatchStart(Slot(slot)),
        );
    }

    #[doc(hidden)]
    pub fn on_match_start(&mut self, slot: Slot) {
        let active = &mut self.world.active[slot.0 as usize];
        // With `[modes]` a match's format is its mode's, not `[match]`'s.
        let teams = active
            .record
            .as_ref()
            .map_or(self.world.format.teams, |r| r.teams as usize);
        let skills = &mut self.scratch.skills;
        skills.resize_with(teams, || TeamSkills {
            skills: Vec::new(),
            parties: Vec::new(),
        });
        skills.truncate(teams);
        for team in skills.iter_mut() {
            team.skills.clear();
            team.parties.clear();
        }
        for (ti, party) in active.parties() {
            let team = &mut skills[ti];
            team.skills.extend(
                party
                    .iter()
                    .map(|m| self.world.players[m.index()].true_skill),
            );
            team.parties.push(party.len());
        }
        let result = self.parts.outcome.play(skills, &mut self.rng_outcomes);
        active.winner = Some(result.winner);
        let rec = active
            .record
            .as_mut()
            .expect("active matches have a record");
        rec.p_team0 = Some(result.p_team0);
        rec.duration_s = Some(result.duration.as_secs_f64());
        rec.survivors = result.survivors;
        rec.gold_integral = result.gold_integral;
        self.queue
            .schedule(self.world.now + result.duration, Event::MatchEnd(slot));
        if self.bf.is_some() {
            self.draw_leaves(slot, result.p_team0, result.duration);
        }
    }

    #[doc(hidden)]
    pub fn on_match_end(&mut self, slot: Slot) {
        // Who left (empty without `[backfill]`); the winner may be redrawn.
        let left = self.settle_leaves(slot);
        let gone = |k: usize| left.get(k) == Some(&true);
        // Read in place, as `form` leaves it.
        let s = slot.0 as usize;
        let active = &self.world.active[s];
        let id = active.id.expect("ended matches are active");
        let winner = active.winner.expect("a started match has a winner");
        let rating_weight = active.rating_weight;
        let now = self.world.now;
        // Ratings: gather each member's current rating (solo or party), let the
        // system rewrite them, and store them back.
        let mut ratings = std::mem::take(&mut self.scratch.ratings);
        let teams = active
            .record
            .as_ref()
            .map_or(self.world.format.teams, |r| r.teams as usize);
        reset(&mut ratings, teams);
        // The match's ladder (the first, without separate ladders).
        let ladder = match (&self.modes, active.record.as_ref().and_then(|r| r.mode)) {
            (Some(md), Some(m)) => md.ladder_of(usize::from(m)),
            _ => 0,
        };
        let rated = match &self.modes {
            Some(md) => md.registry(ladder, &self.world.players),
            None => &self.world.players,
        };
        for (ti, party) in active.parties() {
            let solo = party.len() == 1;
            for p in party {
                let pl = &rated[p.index()];
                ratings[ti].push(
                    self.parts
                        .rating
                        .current(if solo { &pl.rating } else { &pl.party_rating }, now),
                );
            }
        }
        let mut before = std::mem::take(&mut self.scratch.before);
        reset(&mut before, ratings.len());
        for (b, r) in before.iter_mut().zip(&ratings) {
            b.extend_from_slice(r);
        }
        let spread = self.parts.rating.settled_games().map(|settled| {
            if self.spreads.len() <= ladder {
                self.spreads.resize(ladder + 1, None);
            }
            &*self.spreads[ladder]
                .get_or_insert_with(|| LadderSpread::of(settled, rated.iter().map(|p| &p.rating)))
        });
        let rate = |teams: &mut [Vec<Rating>], winner: usize| match spread {
            Some(spread) => self
                .parts
                .rating
                .update_on(teams, winner, rating_weight, now, spread),
            None => self.parts.rating.update(teams, winner, rating_weight, now),
        };
        rate(&mut ratings, winner);
        // Leavers take the loss: those on the winning side are rated as if
        // their team had lost (to the next team).
        let mut as_lost = Vec::new();
        if left.iter().any(|&g| g) {
            // A leaver may be waiting in a new ticket: policies that keep
            // what they read of waiting tickets read them again.
            self.world.rerated += 1;
            as_lost.clone_from(&before);
            let loser_view = (winner + 1) % as_lost.len().max(1);
            rate(&mut as_lost, loser_view);
        }
        let mut index_in_team: PerTeam<usize> = smallvec::smallvec![0; ratings.len()];
        let mut k = 0;
        let (active, players, collector, last_match, spreads) = (
            &self.world.active[s],
            &mut self.world.players,
            &mut self.collector,
            &mut self.world.last_match,
            &mut self.spreads,
        );
        // A separate ladder's ratings go to its copy of the players; the
        // record (games, wins) to the engine's.
        let mut copy = self
            .modes
            .as_mut()
            .filter(|_| ladder > 0)
            .map(|md| &mut md.ladders[ladder - 1]);
        for (ti, party) in active.parties() {
            let solo = party.len() == 1;
            for p in party {
                let i = index_in_team[ti];
                index_in_team[ti] += 1;
                let left_it = gone(k);
                k += 1;
                let new = if left_it && ti == winner {
                    as_lost[ti][i]
                } else {
                    ratings[ti][i]
                };
                let game = new.games.saturating_sub(1) as usize;
                if game < LEARNING_GAMES {
                    collector.rating_move(game, (new.value - before[ti][i].value).abs());
                }
                let rp = match copy.as_deref_mut() {
                    Some(c) => &mut c[p.index()],
                    None => &mut players[p.index()],
                };
                if solo {
                    if let Some(Some(spread)) = spreads.get_mut(ladder) {
                        spread.moved(&rp.rating, &new);
                    }
                    rp.rating = new;
                    if rp.games_to_within_deviation.is_none()
                        && new.deviation > 0.0
                        && (new.value - rp.true_skill).abs() <= new.deviation
                    {
                        rp.games_to_within_deviation = Some(new.games);
                    }
                } else {
                    rp.party_rating = new;
                }
                let pl = &mut players[p.index()];
                pl.games += 1;
                if ti == winner && !left_it {
                    pl.wins += 1;
                }
                // Smoothed toward 50% by ten phantom games, as a shown win rate is.
                pl.win_rate = (pl.wins as f64 + 5.0) / (pl.games as f64 + 10.0);
                last_match[p.index()] = Some(id);
            }
        }
        self.scratch.ratings = ratings;
        self.scratch.before = before;
        let mut rec = self.world.active[s]
            .record
            .take()
            .expect("active matches have a record");
        rec.winner = Some(winner as u32);
        rec.ended = Some(now);
        #[cfg(debug_assertions)]
        self.check_spread(ladder);
        // Who stops playing after it (`[engagement]`); empty otherwise.
        let mut quit = Vec::new();
        if !self.layers.is_empty() {
            let ended = Ended {
                slot: s,
                winner,
                left: &left,
                p_team0: rec.p_team0,
                in_warmup: rec.in_warmup,
            };
            for l in &mut self.layers {
                l.match_ended(&mut self.world, &mut self.collector, &ended, &mut quit);
            }
        }
        if let Some(md) = self.modes.as_mut() {
            md.after_match(ladder, &self.world.active[s].members, &self.world.players);
        }
        self.collector.match_row(rec);
        let a = &mut self.world.active[s];
        let (members, parties) = (
            std::mem::take(&mut a.members),
            std::mem::take(&mut a.parties),
        );
        // Each party decides on its own whether to queue again.
        let requeue_prob = self.config.arrivals.requeue_prob;
        let think = self.config.arrivals.think_time.as_secs_f64();
        let mut k = 0;
        for (_, party) in parties_of(&members, &parties) {
            let first = k;
            k += party.len();
            // Leavers are free already; the rest of their party carries on.
            let stayed = |j: &usize| !gone(first + j) && quit.get(first + j) != Some(&true);
            let queuing: Party = if left.is_empty() && quit.is_empty() {
                Party::from_slice(party)
            } else {
                let kept: Party = (0..party.len()).filter(stayed).map(|j| party[j]).collect();
                if kept.is_empty() {
                    continue;
                }
                kept
            };
            let u: f64 = self.rng_behaviour.random();
            let pause: f64 = Exp1.sample(&mut self.rng_behaviour);
            let back = now + SimDuration::from_secs_f64(pause * think);
            if u < requeue_prob && back <= self.world.end {
                self.schedule_requeue(queuing, back);
            } else {
                for p in &queuing {
                    self.world.busy[p.index()] = false;
                }
            }
        }
        self.world.in_matches -= members.len() - left.iter().filter(|&&g| g).count();
        self.return_leaves(slot, left);
        let a = &mut self.world.active[s];
        (a.members, a.parties) = (members, parties);
        a.id = None;
        self.world.free.push(slot.0);
        if !self.held.is_empty() {
            self.release_held();
        }
    }
    /// Debug builds: every 64th match, the ladder's kept spread against a
    /// recount of its players, so a rating moved without `moved` shows.
    #[cfg(debug_assertions)]
    fn check_spread(&self, ladder: usize) {
        let (Some(settled), Some(Some(kept))) =
            (self.parts.rating.settled_games(), self.spreads.get(ladder))
        else {
            return;
        };
        if !self.next_match.is_multiple_of(64) {
            return;
        }
        let players = match &self.modes {
            Some(md) => md.registry(ladder, &self.world.players),
            None => &self.world.players,
        };
        let recount = LadderSpread::of(settled, players.iter().map(|p| &p.rating));
        assert_eq!(kept.settled(), recount.settled());
        if let (Some((m, v)), Some((m2, v2))) = (kept.mean_variance(), recount.mean_variance()) {
            assert!(
                (m - m2).abs() < 1e-6 * m2.abs().max(1.0) && (v - v2).abs() < 1e-6 * v2.max(1.0)
            );
        }
    }

    /// Admits ticket `id` to the data centres step `step` of the latency
    /// rule opens to it, schedules its next step, and offers it to the
    /// policy of each newly opened data centre, its best ping first.
    fn on_region_step(&mut self, id: TicketId, step: usize) {
        let r = self.regions.as_mut().expect("regions are on");
        let Some(t) = self.world.pool.get(id) else {
            // Matched or gone before its limit relaxed (or held by a failed
            // ready check: its return readmits it).
            return;
        };
        if step > 0 && r.step_time(t, step) != self.world.now {
            // Due for an enqueue time the ticket no longer has: it came
            // back from a failed ready check with its wait restarted.
            return;
        }
        let next = r.admit(t, step);
        if step > 0 && r.order.is_empty() {
            // A ticket readmitted before this step came due has had it
            // scheduled twice; the first did the work.
            return;
        }
        self.after_admit(id, next);
    }

    /// After a ticket's admission to data centres (into `regions.order`):
    /// schedules its next latency step and offers it to the policies of
    /// the data centres it just entered.
    pub(super) fn after_admit(&mut self, id: TicketId, next: Option<usize>) {
        let r = self.regions.as_mut().expect("regions are on");
        let t = self.world.pool.get(id).expect("admitted tickets wait");
        if let Some(next) = next {
            let at = r.step_time(t, next);
            if at <= self.world.end {
                self.queue.schedule(at, Event::Region(id, next as u16));
            }
        }
        if self.schedule.on_join && !r.order.is_empty() {
            self.run_regional(Trigger::Join(id));
        }
    }

    /// Runs each data centre's policy on its own sub-pool, in the order in
    /// `regions.order`, forming what it proposes hosted there.
    fn run_regional(&mut self, trigger: Trigger) {
        let mut order = std::mem::take(&mut self.regions.as_mut().expect("regions are on").order);
        let mut proposals = std::mem::take(&mut self.proposals);
        for &dc in &order {
            let r = self.regions.as_mut().expect("regions are on");
            if let Trigger::Join(id) = trigger {
                if !r.pools[dc].contains(id) {
                    // Matched in a data centre visited before.
                    break;
                }
            }
            proposals.clear();
            let view = PoolView {
                now: self.world.now,
                pool: &r.pools[dc],
                players: &self.world.players,
                format: self.world.format,
                rerated: self.world.rerated,
            };
            r.policies[dc].propose(&view, trigger, &mut self.rng_policy, &mut proposals);
            self.host = Some(dc as u16);
            for p in proposals.drain(..) {
                self.form(p);
            }
            self.host = None;
        }
        order.clear();
        self.regions.as_mut().expect("regions are on").order = order;
        self.proposals = proposals;
    }

    /// Lends the run's layers out, leaving it with none: a white-box check
    /// switches the optional features off between steps, and back on with
    /// `set_layers`.
    #[doc(hidden)]
    pub fn take_layers(&mut self) -> Layers {
        Layers(std::mem::take(&mut self.layers))
    }

    /// Gives the run back the layers `take_layers` lent out.
    #[doc(hidden)]
    pub fn set_layers(&mut self, layers: Layers) {
        self.layers = layers.0;
    }

    /// Whether every layer lets a fresh party in (`Layer::admits`).
    fn layers_admit(&mut self, members: &[PlayerId]) -> bool {
        let (world, out) = (&self.world, &mut self.collector);
        self.layers
            .iter_mut()
            .all(|l| l.admits(world, out, members))
    }

    /// What the layers may read of the features that are not layers.
    fn peers<'a>(
        parts: &'a Parts,
        regions: &'a Option<Box<Regions>>,
        bf: &'a Option<backfill::Backfills>,
        host: Option<u16>,
    ) -> Peers<'a> {
        Peers {
            policy: parts.policy.as_ref(),
            regions: regions.as_deref(),
            backfill: bf.as_ref(),
            host,
        }
    }

    /// Each layer's `after_pass`.
    fn layers_after_pass(&mut self, trigger: Trigger) {
        let peers = Self::peers(&self.parts, &self.regions, &self.bf, self.host);
        for l in &mut self.layers {
            l.after_pass(&self.world, &mut self.collector, peers, trigger);
        }
    }

    /// Each layer's `forming`, the match's tickets still in the pool.
    fn layers_forming(&mut self, teams: &[Vec<TicketId>]) {
        let peers = Self::peers(&self.parts, &self.regions, &self.bf, self.host);
        for l in &mut self.layers {
            l.forming(&self.world, &mut self.collector, peers, teams);
        }
    }

    /// Each layer's `tickets_held`.
    pub(super) fn layers_held(&mut self, tickets: &[&WaitingTicket], held: bool) {
        for l in &mut self.layers {
            l.tickets_held(&self.world, &mut self.collector, tickets, held);
        }
    }

    fn on_sample(&mut self) {
        let corr = if self.samples_taken.is_multiple_of(self.corr_every) {
            let (rating, now) = (&self.parts.rating, self.world.now);
            self.rank_corr.sample(&self.world.players, |p| {
                rating.current(&p.rating, now).value
            })
        } else {
            None
        };
        let in_matches = self.world.in_matches;
        self.collector.sample(QueueSample {
            t: self.world.now,
            waiting_tickets: self.world.pool.len() as u32,
            waiting_players: self.world.pool.players() as u32,
            players_in_matches: in_matches as u32,
            matches_formed: self.matches_since_sample,
            rating_skill_rank_corr: corr,
        });
        self.matches_since_sample = 0;
        self.samples_taken += 1;
        self.queue.schedule_in(
            SAMPLES,
            self.world.now + self.config.sample_interval,
            Event::Sample,
        );
    }
}

/// The key of a ticket's abandon timer in the event queue.
fn timer_key(id: TicketId) -> u64 {
    u64::from(id.0)
}

/// Asks the processor to start loading `x` into the cache. A hint only: it
/// never changes what the program computes.
#[inline(always)]
fn prefetch<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch does not access memory architecturally and cannot
    // fault; the pointer comes from a reference, so it is valid anyway.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((x as *const T).cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}

/// The party size that the uniform draw `u` picks from a cumulative
/// distribution of sizes 1, 2, ... (a `u` past the last step picks the
/// largest size).
pub(super) fn party_size(cdf: &[f64], u: f64) -> usize {
    cdf.partition_point(|&c| c <= u).min(cdf.len() - 1) + 1
}

/// A fresh party's `size` members, drawn uniformly (with repeats, which the
/// arrival then refuses) from `n` players.
fn draw_members(rng: &mut Pcg64, size: usize, n: usize) -> Party {
    let n = n as u32;
    (0..size)
        .map(|_| PlayerId(rng.random_range(0..n)))
        .collect()
}

fn draw_patience(p: &Patience, rng: &mut Pcg64) -> Option<SimDuration> {
    match p {
        Patience::Exponential { mean } => {
            let x: f64 = Exp1.sample(rng);
            Some(SimDuration::from_secs_f64(x * mean.as_secs_f64()))
        }
        Patience::Fixed { after } => Some(*after),
        // One exponential draw through the inverse survival function: the
        // same count of numbers as exponential patience, so the stream stays
        // aligned when only the family changes.
        Patience::Weibull { shape, scale } => {
            let x: f64 = Exp1.sample(rng);
            Some(SimDuration::from_secs_f64(
                scale.as_secs_f64() * x.powf(1.0 / shape),
            ))
        }
        Patience::LogNormal { median, sigma } => {
            let z: f64 = StandardNormal.sample(rng);
            Some(SimDuration::from_secs_f64(
                median.as_secs_f64() * (sigma * z).exp(),
            ))
        }
        Patience::Never => None,
    }
}

#[cfg(test)]
mod patience_tests {
    use super::*;
    use rand::SeedableRng;

    fn mean_s(p: &Patience) -> f64 {
        let mut rng = Pcg64::seed_from_u64(3);
        let n = 200_000;
        (0..n)
            .map(|_| draw_patience(p, &mut rng).unwrap().as_secs_f64())
            .sum::<f64>()
            / n as f64
    }

    #[test]
    fn weibull_and_log_normal_draws_have_their_distributions_means() {
        // Weibull mean: scale Γ(1 + 1/shape); log-normal: median e^(σ²/2).
        let w = mean_s(&Patience::Weibull {
            shape: 1.6,
            scale: SimDuration::from_secs(180),
        });
        let want = 180.0 * statrs::function::gamma::gamma(1.0 + 1.0 / 1.6);
        assert!((w / want - 1.0).abs() < 0.01, "{w} against {want}");
        let l = mean_s(&Patience::LogNormal {
            median: SimDuration::from_secs(90),
            sigma: 0.8,
        });
        let want = 90.0 * (0.32f64).exp();
        assert!((l / want - 1.0).abs() < 0.01, "{l} against {want}");
    }
}
