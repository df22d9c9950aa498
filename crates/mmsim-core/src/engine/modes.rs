//! Game modes sharing one population (`[modes]`): several queues, each with
//! its own match format and policy, fed by the same players. A ticket waits
//! in the pool of every mode it queued for and leaves all of them the moment
//! one mode matches it (AccelByte's sub-game modes, FlexMatch's several
//! matchmaking configurations). The engine's main pool still holds every
//! waiting ticket once, so abandons, the end of the run and the match's
//! bookkeeping need no change; this layer adds the per-mode sub-pools.
//!
//! Modes may keep separate ladders (the Dota post: "Matches played in
//! normal matchmaking do not impact your ranked matchmaking MMR"): each
//! ladder other than the first keeps its own copy of the players, whose
//! solo and party ratings are that ladder's and whose other fields follow
//! the engine's registry, so a mode's policy reads its ladder's ratings
//! through the same `&[Player]` as any policy. A mode may also be locked
//! until a player has played enough games (Dota's ranked unlock).

use crate::model::{Player, PlayerId, TicketId};
use crate::policy::{MatchFormat, Policy, Schedule};
use crate::pool::{Pool, WaitingTicket};
use rand::Rng;
use rand_pcg::Pcg64;
use std::collections::HashMap;

/// Most modes a scenario may name: a ticket's modes fit in a `u16` mask.
pub const MAX_MODES: usize = 16;

/// One mode (queue) as the engine sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct ModeSpec {
    /// The mode's name as `[modes]` writes it.
    pub name: String,
    /// Share of fresh arrivals that draw this mode (the shares sum to 1).
    pub share: f64,
    /// Teams per match and players per team in this mode.
    pub format: MatchFormat,
    /// Cumulative probability of party sizes 1, 2, ... among this mode's
    /// fresh arrivals; no size above the mode's team size has weight.
    pub party_size_cdf: Vec<f64>,
    /// Index of the mode's ladder in `ModesConfig::ladders` (0 without ladders).
    pub ladder: u8,
    /// Games a player must have played (before the run and in it, any mode)
    /// to enter this mode; 0: open to all. A party with one member short
    /// is refused the mode.
    pub unlock_games: u32,
}

/// The `[modes]` section as the engine sees it. Validated: 1 to
/// `MAX_MODES` modes with distinct names, shares summing to 1, parties
/// that fit each mode's teams, a multi-queue set of known modes.
#[derive(Clone, Debug, PartialEq)]
pub struct ModesConfig {
    /// Every mode, in `[modes]` order (a ticket's mode mask indexes it).
    pub modes: Vec<ModeSpec>,
    /// The modes a multi-queued ticket queues for, as a mask.
    pub multi_queue: u16,
    /// Share of the tickets drawn for a mode of `multi_queue` that queue for
    /// every mode of the set their party fits.
    pub multi_queue_share: f64,
    /// The ladders' names, in order of first use by the modes; empty: every
    /// mode shares the one ladder (the players' own ratings).
    pub ladders: Vec<String>,
}

impl ModesConfig {
    /// Whether any mode is locked behind games played.
    pub fn unlocks(&self) -> bool {
        self.modes.iter().any(|m| m.unlock_games > 0)
    }

    /// The mode a share draw `u` in [0, 1) falls in.
    fn by_share(&self, u: f64, fits: impl Fn(usize) -> bool) -> Option<usize> {
        let total: f64 = (0..self.modes.len())
            .filter(|&m| fits(m))
            .map(|m| self.modes[m].share)
            .sum();
        if total <= 0.0 {
            return None;
        }
        let mut acc = 0.0;
        let mut last = None;
        for m in (0..self.modes.len()).filter(|&m| fits(m)) {
            if self.modes[m].share <= 0.0 {
                continue;
            }
            acc += self.modes[m].share / total;
            last = Some(m);
            if u < acc {
                return Some(m);
            }
        }
        last
    }
}

/// One ladder at the end of a run: the players with its ratings, and the
/// matches each played on it.
#[derive(Clone, Debug, PartialEq)]
pub struct LadderPlayers {
    /// The ladder's name, as `[modes] ladders` gives it.
    pub name: String,
    /// Every player's record with this ladder's solo and party ratings.
    pub players: Vec<Player>,
    /// Matches each player (by index) played on this ladder during the run.
    pub played: Vec<u32>,
}

/// What the layer remembers of a waiting ticket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Queued {
    /// Every mode it waits in.
    pub mask: u16,
    /// The mode it drew; it is counted there if no mode matches it.
    pub drawn: u8,
}

impl Queued {
    /// Whether the ticket waits in more than one mode.
    pub fn multi(&self) -> bool {
        self.mask.count_ones() > 1
    }
}

/// The mode layer of a running simulation: a sub-pool and a policy per mode.
#[doc(hidden)]
pub struct Modes {
    pub config: ModesConfig,
    pub pools: Vec<Pool>,
    pub policies: Vec<Box<dyn Policy>>,
    pub schedules: Vec<Schedule>,
    rng: Pcg64,
    /// Waiting tickets' modes. Only looked up, never iterated, so its order
    /// cannot reach any output.
    waiting: HashMap<TicketId, Queued>,
    /// The mode whose policy's proposals are being formed.
    pub current: Option<u8>,
    /// The modes a joining ticket is offered to, its drawn mode first.
    pub order: Vec<u8>,
    /// The mode drawn for the fresh arrival being enqueued, if any (a
    /// returning party draws its mode when it joins).
    pub pending: Option<u8>,
    /// The players as each ladder after the first sees them (ladder `l` at
    /// `l - 1`); empty with fewer than two ladders.
    pub ladders: Vec<Vec<Player>>,
    /// Matches each player played on each ladder in this run (all ladders,
    /// the first included); empty without named ladders.
    pub played: Vec<Vec<u32>>,
    /// The modes the last admitted ticket was kept out of by their unlock.
    pub refused: u16,
}

impl Modes {
    pub fn new(config: ModesConfig, policies: Vec<Box<dyn Policy>>, rng: Pcg64) -> Self {
        let n = config.modes.len();
        assert_eq!(policies.len(), n, "one policy instance per mode");
        Modes {
            schedules: policies.iter().map(|p| p.schedule()).collect(),
            pools: (0..n).map(|_| Pool::default()).collect(),
            policies,
            config,
            rng,
            waiting: HashMap::new(),
            current: None,
            order: Vec::with_capacity(n),
            pending: None,
            ladders: Vec::new(),
            played: Vec::new(),
            refused: 0,
        }
    }

    /// Gives each ladder after the first its copy of `players`: every ladder
    /// starts where the population's ratings start (the initial rating, or a
    /// seasoned player's drawn one), as a new ladder seeded from what the
    /// player's past games say of them.
    pub fn with_ladders(mut self, players: &[Player]) -> Self {
        let n = self.config.ladders.len();
        if n > 0 {
            self.ladders = vec![players.to_vec(); n - 1];
            self.played = vec![vec![0; players.len()]; n];
        }
        self
    }

    /// The ladder mode `m` plays on.
    pub fn ladder_of(&self, m: usize) -> usize {
        usize::from(self.config.modes[m].ladder)
    }

    /// The registry ladder `l` reads ratings from: `base` (the engine's
    /// players) for the first ladder, its copy otherwise.
    pub fn registry<'a>(&'a self, l: usize, base: &'a [Player]) -> &'a [Player] {
        if l == 0 {
            base
        } else {
            &self.ladders[l - 1]
        }
    }

    /// Whether a member of `party` has played fewer games than mode `m` asks.
    pub fn locked(&self, m: usize, party: &[PlayerId], players: &[Player]) -> bool {
        let need = self.config.modes[m].unlock_games;
        need > 0 && party.iter().any(|p| players[p.index()].games < need)
    }

    /// After a match on ladder `l`: the members' copies on the other ladders
    /// take the engine's record (games, wins, streaks) and keep their own
    /// ratings; the match counts on `l`.
    pub fn after_match(&mut self, l: usize, members: &[PlayerId], players: &[Player]) {
        if self.played.is_empty() {
            return;
        }
        for copy in &mut self.ladders {
            for p in members {
                let c = &mut copy[p.index()];
                let kept = (c.rating, c.party_rating, c.games_to_within_deviation);
                c.clone_from(&players[p.index()]);
                (c.rating, c.party_rating, c.games_to_within_deviation) = kept;
            }
        }
        for p in members {
            self.played[l][p.index()] += 1;
        }
    }

    /// A fresh arrival's mode, by the shares. One draw whatever happens.
    pub fn draw_fresh(&mut self) -> usize {
        let u: f64 = self.rng.random();
        self.config.by_share(u, |_| true).expect("validated shares")
    }

    /// A returning party's mode: by the shares of the modes whose teams
    /// take a party of `size`. `None` when no mode does (never, for a party
    /// that has just played one).
    fn draw_for(&mut self, size: usize) -> Option<usize> {
        let u: f64 = self.rng.random();
        let modes = &self.config.modes;
        self.config
            .by_share(u, |m| modes[m].format.team_size >= size)
    }

    /// Queues `t` in its modes: `drawn` (drawn now if `None`) and, for a
    /// multi-queued ticket, every other mode of the set its party fits.
    /// Fills `order` with them, the drawn mode first. A mode whose unlock a
    /// member has not reached is refused (noted in `refused`): a party that
    /// drew it queues instead in a mode drawn by the shares of those open
    /// to it, as a player whose ranked button is greyed out picks another.
    /// `ratings` holds the ticket's rating on each ladder (one entry
    /// without separate ladders); each mode's copy carries its ladder's.
    /// False if no mode takes the party.
    pub fn admit(
        &mut self,
        t: &WaitingTicket,
        drawn: Option<u8>,
        players: &[Player],
        ratings: &[f64],
    ) -> bool {
        let size = t.size();
        self.refused = 0;
        let mut drawn = match drawn {
            Some(m) => usize::from(m),
            None => match self.draw_for(size) {
                Some(m) => m,
                None => return false,
            },
        };
        // Drawn for every ticket, so one ticket's choice never shifts the
        // next one's draws.
        let u: f64 = self.rng.random();
        // Closed to this party: too small teams, or locked.
        let mut closed = 0u16;
        if self.config.unlocks() {
            let u_redirect: f64 = self.rng.random();
            for (m, spec) in self.config.modes.iter().enumerate() {
                if spec.format.team_size < size || self.locked(m, &t.players, players) {
                    closed |= 1 << m;
                }
            }
            if closed & (1 << drawn) != 0 {
                self.refused |= 1 << drawn;
                match self.config.by_share(u_redirect, |m| closed & (1 << m) == 0) {
                    Some(m) => drawn = m,
                    None => return false,
                }
            }
        }
        let set = self.config.multi_queue;
        let mut mask = 1u16 << drawn;
        if set & mask != 0 && u < self.config.multi_queue_share {
            for (m, spec) in self.config.modes.iter().enumerate() {
                if set & (1 << m) != 0 && spec.format.team_size >= size {
                    if closed & (1 << m) != 0 {
                        self.refused |= 1 << m;
                    } else {
                        mask |= 1 << m;
                    }
                }
            }
        }
        self.order.clear();
        self.order.push(drawn as u8);
        self.order.extend(
            (0..self.pools.len() as u8).filter(|&m| m as usize != drawn && mask & (1 << m) != 0),
        );
        for &m in &self.order {
            let mut copy = t.clone();
            if let Some(&r) = ratings.get(self.ladder_of(usize::from(m))) {
                copy.rating = r;
            }
            self.pools[usize::from(m)].insert(copy);
        }
        self.waiting.insert(
            t.id,
            Queued {
                mask,
                drawn: drawn as u8,
            },
        );
        true
    }

    /// Takes a ticket out of every mode it waits in (it matched, gave up or
    /// the run ended); what it had queued for.
    pub fn remove(&mut self, id: TicketId) -> Option<Queued> {
        let q = self.waiting.remove(&id)?;
        for (m, pool) in self.pools.iter_mut().enumerate() {
            if q.mask & (1 << m) != 0 {
                pool.remove(id);
            }
        }
        Some(q)
    }

    /// Whether every ticket of a proposal of mode `m` waits in that mode.
    pub fn allows(&self, m: usize, tickets: &[TicketId]) -> bool {
        tickets.iter().all(|id| self.pools[m].contains(*id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::streams::{stream, Stream};
    use crate::model::{Party, PlayerId, SimTime};

    fn spec(name: &str, share: f64, team_size: usize) -> ModeSpec {
        ModeSpec {
            name: name.into(),
            share,
            format: MatchFormat {
                teams: 2,
                team_size,
                roles: None,
            },
            party_size_cdf: vec![1.0],
            ladder: 0,
            unlock_games: 0,
        }
    }

    fn config(multi_share: f64) -> ModesConfig {
        ModesConfig {
            modes: vec![
                spec("ranked", 0.5, 5),
                spec("casual", 0.3, 5),
                spec("duel", 0.2, 1),
            ],
            multi_queue: 0b011,
            multi_queue_share: multi_share,
            ladders: Vec::new(),
        }
    }

    /// Players 0 to 5999, each with `games` games played.
    fn players(games: u32) -> Vec<Player> {
        (0..6000)
            .map(|i| {
                let mut p = Player::new(
                    PlayerId(i),
                    1500.0,
                    crate::model::Rating::new(1500.0, 100.0, 0.06),
                );
                p.games = games;
                p
            })
            .collect()
    }

    fn ticket(id: u32, size: u32) -> WaitingTicket {
        WaitingTicket {
            id: TicketId(id),
            players: (0..size).map(|i| PlayerId(id * 10 + i)).collect::<Party>(),
            rating: 1500.0,
            enqueued: SimTime::ZERO,
            requeue: false,
            roles: Default::default(),
        }
    }

    fn layer(multi_share: f64) -> Modes {
        Modes::new(
            config(multi_share),
            (0..3)
                .map(|_| crate::policy::PolicyConfig::Widening(Default::default()).build())
                .collect(),
            stream(3, Stream::Modes),
        )
    }

    #[test]
    fn fresh_arrivals_follow_the_shares_within_binomial_bounds() {
        let mut m = layer(0.0);
        let n = 20_000;
        let mut counts = [0usize; 3];
        for _ in 0..n {
            counts[m.draw_fresh()] += 1;
        }
        for (i, share) in [0.5, 0.3, 0.2].into_iter().enumerate() {
            let sd = (n as f64 * share * (1.0 - share)).sqrt();
            let diff = (counts[i] as f64 - n as f64 * share).abs();
            assert!(diff < 4.0 * sd, "mode {i}: {} of {n}", counts[i]);
        }
    }

    #[test]
    fn a_multi_queued_ticket_waits_in_each_mode_of_the_set_and_leaves_all_at_once() {
        let mut m = layer(1.0);
        let t = ticket(1, 1);
        assert!(m.admit(&t, Some(1), &players(0), &[1500.0]));
        // Drawn for casual, also queued for ranked; never for the duel, which
        // is not in the set.
        assert_eq!(m.order, vec![1, 0]);
        assert!(m.pools[0].contains(t.id) && m.pools[1].contains(t.id));
        assert!(!m.pools[2].contains(t.id));
        let q = m.remove(t.id).expect("waiting");
        assert_eq!(
            q,
            Queued {
                mask: 0b011,
                drawn: 1
            }
        );
        assert!(q.multi());
        assert!(m.pools.iter().all(Pool::is_empty));
        // Gone once: a second removal finds nothing to count.
        assert_eq!(m.remove(t.id), None);
    }

    #[test]
    fn a_ticket_drawn_outside_the_set_queues_alone() {
        let mut m = layer(1.0);
        assert!(m.admit(&ticket(2, 1), Some(2), &players(0), &[1500.0]));
        assert_eq!(m.order, vec![2]);
        assert_eq!(m.remove(TicketId(2)).unwrap().mask, 0b100);
    }

    #[test]
    fn a_party_of_five_is_never_placed_in_the_1v1_queue() {
        let mut m = layer(1.0);
        let players = players(0);
        for id in 0..500 {
            // Returning parties draw among the modes their size fits.
            assert!(m.admit(&ticket(id, 5), None, &players, &[1500.0]));
            assert!(!m.pools[2].contains(TicketId(id)));
        }
        assert!(m.pools[2].is_empty());
        // Every one was drawn for ranked or casual and, multi-queued, waits in both.
        assert_eq!((m.pools[0].len(), m.pools[1].len()), (500, 500));
    }

    /// Ranked (mode 0) opens after 150 games; ladders: ranked, normal.
    fn locked_layer(multi_share: f64) -> Modes {
        let mut c = config(multi_share);
        c.modes[0].unlock_games = 150;
        c.modes[0].ladder = 0;
        c.modes[1].ladder = 1;
        c.modes[2].ladder = 1;
        c.ladders = vec!["ranked".into(), "normal".into()];
        Modes::new(
            c,
            (0..3)
                .map(|_| crate::policy::PolicyConfig::Widening(Default::default()).build())
                .collect(),
            stream(3, Stream::Modes),
        )
    }

    #[test]
    fn a_party_with_one_locked_member_is_refused_ranked_and_queues_elsewhere() {
        let mut m = locked_layer(0.0);
        let mut players = players(200);
        // Ticket 7's second member (player 71) has played 149 games.
        players[71].games = 149;
        let t = ticket(7, 2);
        assert!(m.admit(&t, Some(0), &players, &[1500.0, 1700.0]));
        assert_eq!(m.refused, 0b001);
        assert!(!m.pools[0].contains(t.id));
        // Redrawn among the modes open to a party of two: casual only.
        assert_eq!(m.order, vec![1]);
        // Its copy there carries the casual ladder's rating.
        assert_eq!(m.pools[1].get(t.id).unwrap().rating, 1700.0);
        // At 150 games the same party may play ranked, at ranked's rating.
        players[71].games = 150;
        let t = ticket(8, 2);
        assert!(m.admit(&t, Some(0), &players, &[1500.0, 1700.0]));
        assert_eq!((m.refused, m.order.clone()), (0, vec![0]));
        assert_eq!(m.pools[0].get(t.id).unwrap().rating, 1500.0);
    }

    #[test]
    fn a_locked_multi_queued_ticket_waits_only_where_it_may() {
        let mut m = locked_layer(1.0);
        let players = players(10);
        let t = ticket(3, 1);
        // Drawn for casual, would have queued for ranked too: refused there.
        assert!(m.admit(&t, Some(1), &players, &[1500.0, 1500.0]));
        assert_eq!(m.refused, 0b001);
        assert_eq!(m.order, vec![1]);
        assert_eq!(m.remove(t.id).unwrap().mask, 0b010);
    }

    #[test]
    fn a_party_no_open_mode_takes_is_not_admitted() {
        let mut c = config(0.0);
        c.modes[1].unlock_games = 150;
        c.modes[0].unlock_games = 150;
        let mut m = Modes::new(
            c,
            (0..3)
                .map(|_| crate::policy::PolicyConfig::Widening(Default::default()).build())
                .collect(),
            stream(3, Stream::Modes),
        );
        // A locked party of two: the duel takes solos only.
        assert!(!m.admit(&ticket(4, 2), Some(0), &players(0), &[1500.0]));
        assert_eq!(m.refused, 0b001);
        assert!(m.pools.iter().all(Pool::is_empty));
    }

    #[test]
    fn a_match_on_one_ladder_leaves_the_others_ratings_and_copies_the_record() {
        let mut m = locked_layer(0.0);
        let mut base = players(0);
        m = m.with_ladders(&base);
        assert_eq!(m.ladders.len(), 1);
        // A ranked match moved player 5's ranked rating (the engine's
        // registry) and record.
        base[5].rating.value = 1600.0;
        base[5].games = 1;
        base[5].wins = 1;
        m.after_match(0, &[PlayerId(5)], &base);
        let normal = &m.ladders[0][5];
        assert_eq!(normal.rating.value, 1500.0);
        assert_eq!((normal.games, normal.wins), (1, 1));
        assert_eq!((m.played[0][5], m.played[1][5]), (1, 0));
        assert_eq!(m.registry(1, &base)[5].rating.value, 1500.0);
        assert_eq!(m.registry(0, &base)[5].rating.value, 1600.0);
    }
}
