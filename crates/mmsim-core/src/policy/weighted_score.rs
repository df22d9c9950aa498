//! BTownTKD's weight system: "every other potential player would have a
//! 'weight' ... 'Player ratings' would effect the weight the most ...
//! 'wait time' - how long a player has been waiting for a match. 'recent-ness'
//! of a partner-pairing ... This effect will slowly dissipate after a few
//! matches with other players." With Hazerider's plain rematch avoidance:
//! "force a redraw ... if you match up players who played against each other
//! in the last X matches".
//!
//! A pair's cost, in rating points, is
//! `rating_weight * gap + recent_weight * recency - wait_weight * (wait_a + wait_b)`
//! where `recency` is 1 right after the two played and falls linearly to 0
//! over `fade_matches` further matches. A pair is acceptable when its cost is
//! at most `threshold`; each seed (longest-waiting first) takes its cheapest
//! acceptable partner among its `candidates` nearest free tickets. The
//! threshold is what answers the poster's objection that a bare weight would
//! match every newcomer at once: a newcomer only matches someone close, and
//! waiting buys width. Matches are pairs of tickets.

use super::batch::fits_pair;
use super::Explain;
use super::{
    Cadence, FormedMatch, FreePass, PassFrame, Policy, PoolView, Proposal, RuleCheck, Schedule,
    Trigger,
};
use crate::model::BlockRule;
use crate::pool::WaitingTicket;
use crate::model::{check, ParamError, PlayerId, SimTime};
use rand_pcg::Pcg64;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, VecDeque};

/// Parameters of `kind = "weighted-score"`: a cost per candidate from rating, wait and past opponents.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WeightedScoreParams {
    /// Cost per rating point of difference.
    pub rating_weight: f64,
    /// Cost taken off per second waited, for each of the two tickets.
    pub wait_weight: f64,
    /// Cost of a pairing the two played just before; fades with later matches.
    pub recent_weight: f64,
    /// Matches (of the two players) over which a past pairing's cost fades to 0.
    pub fade_matches: u32,
    /// Never pair a player with any of their last this many opponents (0: off).
    pub avoid_last: u32,
    /// Largest acceptable cost, in rating points.
    pub threshold: f64,
    /// Nearest free tickets each seed weighs.
    pub candidates: u32,
    /// When the policy runs (`mode`, `recheck`, `tick`).
    #[serde(flatten)]
    pub cadence: Cadence,
}

impl Default for WeightedScoreParams {
    fn default() -> Self {
        WeightedScoreParams {
            rating_weight: 1.0,
            wait_weight: 1.5,
            recent_weight: 200.0,
            fade_matches: 5,
            avoid_last: 1,
            threshold: 150.0,
            candidates: 8,
            cadence: Cadence::default(),
        }
    }
}

impl WeightedScoreParams {
    /// Where the policy comes from, for `mmsim policies`.
    pub const SOURCE: &str =
        "gamedev thread, BTownTKD's weights (rating gap, both waits, fading recency of a pairing) and Hazerider's no repeat of the last X opponents";
    /// Its keys, for `mmsim policies`.
    pub const PARAMETERS: &str =
        "rating_weight, wait_weight, recent_weight, fade_matches, avoid_last, threshold, candidates, mode, recheck, tick";

    /// Checks every parameter; keys are relative to `[policy]`.
    pub fn validate(&self) -> Result<(), ParamError> {
        check::non_negative("rating_weight", self.rating_weight)?;
        if self.rating_weight == 0.0 {
            return Err(ParamError::new(
                "rating_weight",
                "must be more than 0: the rating difference is the main term, got 0",
            ));
        }
        check::non_negative("wait_weight", self.wait_weight)?;
        check::non_negative("recent_weight", self.recent_weight)?;
        if self.fade_matches == 0 {
            return Err(ParamError::new(
                "fade_matches",
                "must be 1 or more matches, got 0",
            ));
        }
        check::non_negative("threshold", self.threshold)?;
        if self.candidates == 0 {
            return Err(ParamError::new("candidates", "must be 1 or more, got 0"));
        }
        self.cadence.validate()
    }
}

/// What the policy remembers of one player: matches seen, and recent
/// opponents with the player's match count right after playing them.
#[derive(Clone, Debug, Default)]
struct Memory {
    games: u64,
    recent: VecDeque<(PlayerId, u64)>,
}

/// The `weighted-score` policy: its parameters and each player's recent opponents.
pub struct WeightedScore {
    params: WeightedScoreParams,
    memory: BTreeMap<PlayerId, Memory>,
    /// The last tick pass's buffers, for the next (`FreePass::plain_in`).
    frame: PassFrame,
}

impl WeightedScore {
    /// The policy for these parameters (validated), remembering no one yet.
    pub fn new(params: WeightedScoreParams) -> Self {
        WeightedScore {
            params,
            memory: BTreeMap::new(),
            frame: PassFrame::default(),
        }
    }

    /// Matches `a` has played since last facing `b`, and how many of `a`'s
    /// opponents came after `b` (0: `b` was the last). `None`: not remembered.
    fn since(&self, a: PlayerId, b: PlayerId) -> Option<(u64, usize)> {
        let m = self.memory.get(&a)?;
        m.recent
            .iter()
            .rev()
            .enumerate()
            .find(|(_, (o, _))| *o == b)
            .map(|(back, (_, at))| (m.games - at, back))
    }

    /// Cost of pairing `a` with `b` at `now`, or `None` if rematch avoidance
    /// forbids it.
    pub fn cost(&self, a: &WaitingTicket, b: &WaitingTicket, now: SimTime) -> Option<f64> {
        let p = &self.params;
        let mut recency: f64 = 0.0;
        for &x in &a.players {
            for &y in &b.players {
                for (u, v) in [(x, y), (y, x)] {
                    if let Some((since, back)) = self.since(u, v) {
                        if (back as u32) < p.avoid_last {
                            return None;
                        }
                        let fade = 1.0 - since as f64 / p.fade_matches as f64;
                        recency = recency.max(fade);
                    }
                }
            }
        }
        Some(
            p.rating_weight * (a.rating - b.rating).abs() + p.recent_weight * recency
                - p.wait_weight * (a.age_s(now) + b.age_s(now)),
        )
    }
}

impl Policy for WeightedScore {
    fn schedule(&self) -> Schedule {
        self.params.cadence.schedule()
    }

    fn propose(
        &mut self,
        view: &PoolView<'_>,
        trigger: Trigger,
        _rng: &mut Pcg64,
        out: &mut Vec<Proposal>,
    ) {
        // Too few players for one match: no seed can find a partner (a
        // queue rechecked every second spends most passes so).
        if view.pool.players() < view.format.players() {
            return;
        }
        let mut frame = std::mem::take(&mut self.frame);
        let p = &self.params;
        let now = view.now;
        // No partner can be farther than the gap the best possible wait credit
        // pays for: the seed's wait plus the oldest ticket's.
        let oldest = view
            .pool
            .oldest_first()
            .next()
            .map_or(0.0, |t| t.age_s(now));
        let this = &*self;
        let reach = |seed: &WaitingTicket| {
            (p.threshold + p.wait_weight * (seed.age_s(now) + oldest)) / p.rating_weight
        };
        // Weighs one candidate: keeps the strictly cheapest acceptable one, so
        // ties go to the nearer, then older, ticket. Returns whether to go on.
        let weigh = |seed: &WaitingTicket,
                     t: &WaitingTicket,
                     weighed: &mut u32,
                     best: &mut Option<f64>|
         -> (bool, bool) {
            if !fits_pair(view, seed, t) {
                return (false, true);
            }
            *weighed += 1;
            let cheaper = this
                .cost(seed, t, now)
                .filter(|&c| c <= p.threshold && best.is_none_or(|b| c < b));
            if cheaper.is_some() {
                *best = cheaper;
            }
            (cheaper.is_some(), *weighed < p.candidates)
        };
        match trigger {
            Trigger::Join(id) => {
                let Some(seed) = view.pool.get(id) else {
                    return;
                };
                let (mut weighed, mut best, mut pick) = (0, None, None);
                for (d, t) in view.pool.nearest(seed.rating, seed.id) {
                    if d > reach(seed) {
                        break;
                    }
                    let (better, go_on) = weigh(seed, t, &mut weighed, &mut best);
                    if better {
                        pick = Some(t.id);
                    }
                    if !go_on {
                        break;
                    }
                }
                if let Some(t) = pick {
                    out.push(Proposal::new(vec![seed.id, t]));
                }
            }
            Trigger::Tick => {
                let mut pass = FreePass::plain_in(view.pool, &mut frame);
                for k in 0..pass.len() {
                    let Some((pos, seed)) = pass.seed(k) else {
                        continue;
                    };
                    let (mut weighed, mut best, mut pick) = (0, None, None);
                    pass.walk(pos, reach(seed), |_, at, t| {
                        let (better, go_on) = weigh(seed, t, &mut weighed, &mut best);
                        if better {
                            pick = Some(at);
                        }
                        go_on
                    });
                    if let Some(at) = pick {
                        pass.take(pos);
                        pass.take(at);
                        out.push(Proposal::new(vec![seed.id, pass.ticket(at).id]));
                    }
                }
                pass.into_frame(&mut frame);
            }
        }
        self.frame = frame;
    }

    fn on_formed(&mut self, formed: &FormedMatch<'_>) {
        let keep = self.params.fade_matches.max(self.params.avoid_last) as usize;
        let players: Vec<(usize, PlayerId)> = formed
            .tickets
            .iter()
            .enumerate()
            .flat_map(|(i, t)| t.players.iter().map(move |&p| (i, p)))
            .collect();
        for &(i, me) in &players {
            let m = self.memory.entry(me).or_default();
            m.games += 1;
            for &(j, other) in &players {
                if j != i {
                    m.recent.push_back((other, m.games));
                }
            }
            while m.recent.len() > keep {
                m.recent.pop_front();
            }
        }
    }

    fn explain(&self) -> Option<&dyn Explain> {
        Some(self)
    }
}

impl Explain for WeightedScore {
    /// A recent opponent first (it lifts as other matches are played, not
    /// with waiting: not monotone), then the pair's cost against
    /// `threshold`. The cost falls as both wait, the recency as remembered
    /// now: monotone.
    fn pair_rule(&self, t: &WaitingTicket, c: &WaitingTicket, now: SimTime) -> Option<RuleCheck> {
        Some(match self.cost(t, c, now) {
            None => RuleCheck::refuses(BlockRule::Rematch),
            Some(cost) => {
                RuleCheck::within(BlockRule::WeightedScore, cost, self.params.threshold, true)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::testkit::{pair, Harness};

    fn params() -> WeightedScoreParams {
        WeightedScoreParams {
            wait_weight: 0.0,
            ..Default::default()
        }
    }

    #[test]
    fn the_last_opponent_is_avoided_even_when_nearest() {
        let mut h = Harness::new(Box::new(WeightedScore::new(params())));
        h.join_player(0, 10, 1500.0, 0.0);
        assert_eq!(pair(h.join_player(1, 11, 1510.0, 0.0).concat()), vec![0, 1]);
        // Both queue again; 11 is 10 points from 10 but was its last opponent.
        h.join_player(2, 10, 1500.0, 600.0);
        assert!(h.join_player(3, 11, 1510.0, 600.0).is_empty());
        assert_eq!(
            pair(h.join_player(4, 12, 1600.0, 600.0).concat()),
            vec![3, 4]
        );
        assert_eq!(
            pair(h.join_player(5, 13, 1450.0, 600.0).concat()),
            vec![2, 5]
        );
    }

    #[test]
    fn a_past_pairing_costs_less_with_each_later_match_until_it_is_gone() {
        // Rematch avoidance off: only the fading cost. After playing each other,
        // 10 and 11 each play k other matches; then 10 weighs 11 again (0 points
        // apart, cost 200 * (1 - k/5)) against a fresh rival 110 points away
        // (cost 110).
        let p = WeightedScoreParams {
            avoid_last: 0,
            cadence: Cadence::in_mode(crate::policy::Mode::Tick),
            ..params()
        };
        let mut outcomes = Vec::new();
        for k in 0..=5u32 {
            let mut h = Harness::new(Box::new(WeightedScore::new(p.clone())));
            h.join_player(0, 10, 1500.0, 0.0);
            h.join_player(1, 11, 1500.0, 0.0);
            assert_eq!(h.tick(0.5).len(), 1);
            let mut next = 100;
            for round in 0..k {
                for who in [10, 11] {
                    h.join_player(next, who, 1000.0, 1.0 + round as f64);
                    h.join_player(next + 1, 1000 + next, 1000.0, 1.0 + round as f64);
                    assert_eq!(h.tick(1.5 + round as f64).len(), 1);
                    next += 2;
                }
            }
            h.join_player(2, 10, 1500.0, 10.0);
            h.join_player(3, 20, 1610.0, 10.0);
            h.join_player(4, 11, 1500.0, 10.0);
            let formed = h.tick(10.0);
            assert_eq!(formed.len(), 1);
            outcomes.push(if pair(formed[0].clone()) == [2, 4] {
                "rematch"
            } else {
                "rival"
            });
        }
        // 200, 160, 120 lose to 110; 80, 40 and 0 win.
        assert_eq!(
            outcomes,
            ["rival", "rival", "rival", "rematch", "rematch", "rematch"]
        );
    }

    #[test]
    fn waiting_buys_width_for_both() {
        let p = WeightedScoreParams {
            wait_weight: 1.0,
            ..params()
        };
        let mut h = Harness::new(Box::new(WeightedScore::new(p)));
        h.join(0, 1500.0, 0.0);
        // 300 apart: cost 300 - (wait_0 + wait_1) <= 150 once the waits sum to 150.
        assert!(h.join(1, 1800.0, 50.0).is_empty());
        assert!(h.tick(99.0).is_empty());
        assert_eq!(pair(h.tick(100.0).concat()), vec![0, 1]);
    }
}
