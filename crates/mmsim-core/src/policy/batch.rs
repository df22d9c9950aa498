//! The original poster's second suggestion: "the matching system will only
//! be called every 2mins ... We select the first team. Then we make a sorted
//! list with possible opponents according to their rating difference (from
//! lowest to highest). We select one team from the opponents list randomly,
//! but the team with lowest rating difference has a higher probability. The
//! biggest rating difference team has the lowest probability. The teams in
//! between are linear less probable." The upper limit of suggestion 1 (500)
//! still bounds the list.
//!
//! The list holds at most `candidates` nearest opponents: the thread's full
//! list would make a batch quadratic in a busy queue, and far opponents carry
//! almost no weight once the list is long. Matches are pairs of tickets (two
//! parties that each fill one team), which is the thread's game.
//!
//! Batching is the point of this policy, so it has no event mode.

use super::Explain;
use super::{
    with_plain_pass, Mode, PoolView, Proposal, Rule, RuleCheck, Schedule, Stateless, Trigger,
};
use crate::model::BlockRule;
use crate::pool::WaitingTicket;
use crate::model::{check, HumanDuration, ParamError, SimTime};
use rand::Rng;
use rand_pcg::Pcg64;
use serde::{Deserialize, Serialize};

/// Parameters of `kind = "batch-weighted"`: a timed batch that pairs each ticket with a weighted draw.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BatchParams {
    /// Time between batches (the thread: 2 minutes).
    pub tick: HumanDuration,
    /// Largest rating difference in a match (the thread: 500).
    pub limit: f64,
    /// Longest opponent list drawn from, nearest first.
    pub candidates: u32,
    /// Only `tick`: the batch is the point of this policy.
    pub mode: Mode,
}

impl Default for BatchParams {
    fn default() -> Self {
        BatchParams {
            tick: HumanDuration::from_secs(120),
            limit: 500.0,
            candidates: 16,
            mode: Mode::Tick,
        }
    }
}

impl BatchParams {
    /// Where the policy comes from, for `mmsim policies`.
    pub const SOURCE: &str =
        "gamedev thread, the poster's suggestion 2: every 2 min each ticket draws an opponent, probability falling linearly with rating-difference rank, within a limit";
    /// Its keys, for `mmsim policies`.
    pub const PARAMETERS: &str =
        "tick, limit, candidates, mode (tick only)";

    /// Checks every parameter; keys are relative to `[policy]`.
    pub fn validate(&self) -> Result<(), ParamError> {
        check::interval("tick", self.tick.0)?;
        check::non_negative("limit", self.limit)?;
        if self.candidates == 0 {
            return Err(ParamError::new("candidates", "must be 1 or more, got 0"));
        }
        if self.mode != Mode::Tick {
            return Err(ParamError::new(
                "mode",
                "must be \"tick\": this policy matches in batches every `tick`, \
                 which is what lets it choose among several opponents",
            ));
        }
        Ok(())
    }
}

/// Draws an index in `0..k` with weights k, k-1, ..., 1: the nearest is the
/// likeliest, the farthest the least, linear in between.
pub fn draw_linear_rank(k: usize, rng: &mut Pcg64) -> usize {
    debug_assert!(k > 0);
    let total = k * (k + 1) / 2;
    let mut u = rng.random_range(0..total);
    for i in 0..k {
        let w = k - i;
        if u < w {
            return i;
        }
        u -= w;
    }
    k - 1
}

/// Whether two tickets make a whole two-team match.
pub(crate) fn fits_pair(view: &PoolView<'_>, a: &WaitingTicket, b: &WaitingTicket) -> bool {
    let f = view.format;
    a.size() + b.size() == f.players() && a.size() <= f.team_size && b.size() <= f.team_size
}

/// The `batch-weighted` policy: its parameters are all it needs.
pub type BatchWeighted = Stateless<BatchParams>;

impl Rule for BatchParams {
    fn schedule(&self) -> Schedule {
        Schedule {
            on_join: false,
            tick: Some(self.tick.0),
        }
    }

    fn propose(
        &self,
        view: &PoolView<'_>,
        trigger: Trigger,
        rng: &mut Pcg64,
        out: &mut Vec<Proposal>,
    ) {
        if trigger != Trigger::Tick {
            return;
        }
        // Too few players for one match: no seed can find a partner.
        if view.pool.players() < view.format.players() {
            return;
        }
        let p = self;
        let cap = p.candidates as usize;
        let mut list: Vec<usize> = Vec::with_capacity(cap);
        with_plain_pass(view.pool, |pass| {
            for k in 0..pass.len() {
                let Some((pos, seed)) = pass.seed(k) else {
                    continue;
                };
                list.clear();
                pass.walk(pos, p.limit, |_, at, t| {
                    if fits_pair(view, seed, t) {
                        list.push(at);
                    }
                    list.len() < cap
                });
                if list.is_empty() {
                    continue;
                }
                let pick = list[draw_linear_rank(list.len(), rng)];
                pass.take(pos);
                pass.take(pick);
                out.push(Proposal::new(vec![seed.id, pass.ticket(pick).id]));
            }
        });
    }
}

impl Explain for BatchParams {
    /// The thread's upper limit, the same for every wait.
    fn rating_window(&self, _t: &WaitingTicket, _now: SimTime) -> Option<f64> {
        Some(self.limit)
    }

    /// A batch has run since both joined: batches run at every multiple of
    /// `tick` from the start of the run (the engine's tick), so the pair was
    /// first allowed at the first batch after the later of the two joined.
    /// Value and limit: seconds since the last batch, and since the later
    /// join. Monotone.
    fn pair_rule(&self, t: &WaitingTicket, c: &WaitingTicket, now: SimTime) -> Option<RuleCheck> {
        let tick_ms = self.tick.0.as_ms().max(1);
        let last_ms = now.as_ms() / tick_ms * tick_ms;
        let joined_ms = t.enqueued.as_ms().max(c.enqueued.as_ms());
        let allows = last_ms >= tick_ms && last_ms >= joined_ms;
        Some(RuleCheck {
            allows,
            ..RuleCheck::within(
                BlockRule::BatchDue,
                (now.as_ms() - last_ms) as f64 / 1000.0,
                now.as_ms().saturating_sub(joined_ms) as f64 / 1000.0,
                true,
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::testkit::{pair, Harness};
    use rand::SeedableRng;

    #[test]
    fn ranks_are_drawn_with_linearly_falling_weights() {
        let mut rng = Pcg64::seed_from_u64(9);
        let mut counts = [0u32; 3];
        let n = 60_000;
        for _ in 0..n {
            counts[draw_linear_rank(3, &mut rng)] += 1;
        }
        // Weights 3:2:1 give 1/2, 1/3, 1/6; the farthest is not excluded.
        for (c, want) in counts.iter().zip([0.5, 1.0 / 3.0, 1.0 / 6.0]) {
            let share = *c as f64 / n as f64;
            assert!((share - want).abs() < 0.01, "{counts:?}");
        }
        assert_eq!(draw_linear_rank(1, &mut rng), 0);
    }

    #[test]
    fn nothing_forms_between_batches_and_the_oldest_draws_first() {
        let mut h = Harness::new(Box::new(BatchWeighted::new(BatchParams::default())));
        assert!(h.join(0, 1500.0, 0.0).is_empty());
        assert!(h.join(1, 1500.0, 1.0).is_empty(), "joins never match");
        h.join(2, 1510.0, 2.0);
        h.join(3, 2100.0, 3.0);
        let formed = h.tick(120.0);
        // The oldest (0) draws from {1, 2}; whichever it takes, the other
        // 15xx is left with no one within 500, as is the 2100.
        assert_eq!(formed.len(), 1);
        assert_eq!(formed[0][0], 0);
        assert!(formed[0][1] == 1 || formed[0][1] == 2);
        assert_eq!(h.pool.len(), 2);
    }

    #[test]
    fn the_draw_prefers_close_opponents_but_takes_far_ones_too() {
        // A 1500 facing opponents at +10, +100, +200 (all within 500): over many
        // batches the nearest is drawn about half the time, the farthest about
        // a sixth, and a 600-point opponent never.
        let mut picks = [0u32; 4];
        let opponents = [1510.0, 1600.0, 1700.0, 2100.0];
        let mut h = Harness::new(Box::new(BatchWeighted::new(BatchParams::default())));
        for round in 0..3000u32 {
            let at = 120.0 * (round + 1) as f64;
            let base = round * 10;
            h.pool = crate::pool::Pool::default();
            h.join(base, 1500.0, at - 60.0);
            for (i, r) in opponents.iter().enumerate() {
                h.join(base + 1 + i as u32, *r, at - 30.0);
            }
            let formed = h.tick(at);
            let other = pair(formed[0].clone())[1] - base - 1;
            picks[other as usize] += 1;
        }
        assert_eq!(picks[3], 0);
        let share = |i: usize| picks[i] as f64 / 3000.0;
        assert!((share(0) - 0.5).abs() < 0.03, "{picks:?}");
        assert!((share(1) - 1.0 / 3.0).abs() < 0.03, "{picks:?}");
        assert!((share(2) - 1.0 / 6.0).abs() < 0.03, "{picks:?}");
    }
}
