//! The original poster's third suggestion: a "controlling" system of rating
//! brackets "on a fixed timer, 1 min for example. It will count the matches
//! taking place in each bracket. If for example 6 games happen in a bracket,
//! it will divide this bracket into 2 brackets ... After a certain amount of
//! time frames passing (i.e. 2) with < 3 matches the bracket will be doubled
//! again", and "The surrounding brackets can only choose teams from the
//! nearest bracket as well. aka 499vs990 cannot happen."
//!
//! A bracket's width is also its largest rating difference ("for each
//! bracket the highest possible rating difference"): a pair forms when the
//! two brackets are the same or adjacent and the gap is within both widths.
//! The controller is its own type so a test can drive it interval by
//! interval.

use super::Explain;
use super::{
    propose_windows, FormedMatch, Mode, Policy, PoolView, Proposal, RuleCheck, Schedule, Trigger,
};
use crate::model::BlockRule;
use crate::pool::WaitingTicket;
use crate::model::{check, HumanDuration, ParamError, SimTime};
use rand_pcg::Pcg64;
use serde::{Deserialize, Serialize};

/// Parameters of `kind = "adaptive-brackets"`: rating brackets that split when busy and merge when quiet.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BracketParams {
    /// Lower edge of the first bracket; lower ratings count as in it.
    pub min: f64,
    /// Number of brackets at the start (the thread: 0-500, 500-1000, ... to 3000: 6).
    pub brackets: u32,
    /// Width of each starting bracket, in rating points (the thread: 500).
    pub width: f64,
    /// A bracket is never split below this width.
    pub min_width: f64,
    /// Split a bracket in which at least this many games formed in the last
    /// interval (the thread: 6).
    pub split_at: u32,
    /// Merge two halves back when together they had fewer than this many
    /// games (the thread: 3) ...
    pub merge_below: u32,
    /// ... in this many consecutive intervals (the thread: 2).
    pub merge_after: u32,
    /// The controller's timer (the thread: 1 min).
    pub interval: HumanDuration,
    /// `event`: match on joins and re-check when the controller changes the
    /// brackets; `tick`: only every `tick`.
    pub mode: Mode,
    /// Interval between matchmaking passes in `tick` mode.
    pub tick: HumanDuration,
}

impl Default for BracketParams {
    fn default() -> Self {
        BracketParams {
            min: 0.0,
            brackets: 6,
            width: 500.0,
            min_width: 50.0,
            split_at: 6,
            merge_below: 3,
            merge_after: 2,
            interval: HumanDuration::from_secs(60),
            mode: Mode::Event,
            tick: HumanDuration::from_secs(1),
        }
    }
}

impl BracketParams {
    /// Where the policy comes from, for `mmsim policies`.
    pub const SOURCE: &str =
        "gamedev thread, the poster's suggestion 3: brackets split at 6 games an interval, merge after 2 intervals under 3; same or nearest bracket only";
    /// Its keys, for `mmsim policies`.
    pub const PARAMETERS: &str =
        "min, brackets, width, min_width, split_at, merge_below, merge_after, interval, mode, tick";

    /// Checks every parameter; keys are relative to `[policy]`.
    pub fn validate(&self) -> Result<(), ParamError> {
        if !self.min.is_finite() {
            return Err(ParamError::new(
                "min",
                format!("must be a number, got {}", self.min),
            ));
        }
        if self.brackets == 0 {
            return Err(ParamError::new("brackets", "must be 1 or more, got 0"));
        }
        check::non_negative("width", self.width)?;
        if self.width == 0.0 {
            return Err(ParamError::new(
                "width",
                "must be more than 0 rating points, got 0",
            ));
        }
        check::non_negative("min_width", self.min_width)?;
        if self.min_width == 0.0 || self.min_width > self.width {
            return Err(ParamError::new(
                "min_width",
                format!(
                    "must be more than 0 and at most `width` ({}), got {}",
                    self.width, self.min_width
                ),
            ));
        }
        if self.split_at == 0 {
            return Err(ParamError::new(
                "split_at",
                "must be 1 or more games, got 0",
            ));
        }
        if self.merge_after == 0 {
            return Err(ParamError::new(
                "merge_after",
                "must be 1 or more intervals, got 0",
            ));
        }
        check::interval("interval", self.interval.0)?;
        check::interval("tick", self.tick.0)
    }
}

/// One bracket: `root` starting bracket, split `level` times, `pos`-th piece.
#[derive(Clone, Debug, PartialEq)]
struct Bracket {
    root: u32,
    level: u32,
    pos: u64,
    lo: f64,
    hi: f64,
    games: u32,
    /// Consecutive quiet intervals of this bracket and its sibling, kept on
    /// the left one of the pair.
    quiet: u32,
}

impl Bracket {
    fn width(&self) -> f64 {
        self.hi - self.lo
    }
    fn is_left_of_pair(&self, right: &Bracket) -> bool {
        self.level > 0
            && right.root == self.root
            && right.level == self.level
            && self.pos.is_multiple_of(2)
            && right.pos == self.pos + 1
    }
}

/// The thread's controller: counts games per bracket, and at each interval
/// splits busy brackets and merges quiet halves. Brackets stay sorted and
/// contiguous.
#[derive(Clone, Debug)]
pub struct BracketController {
    params: BracketParams,
    brackets: Vec<Bracket>,
}

impl BracketController {
    /// The controller's first brackets: `brackets` equal bands from `min`.
    pub fn new(params: BracketParams) -> Self {
        let brackets = (0..params.brackets)
            .map(|i| Bracket {
                root: i,
                level: 0,
                pos: 0,
                lo: params.min + i as f64 * params.width,
                hi: params.min + (i + 1) as f64 * params.width,
                games: 0,
                quiet: 0,
            })
            .collect();
        BracketController { params, brackets }
    }

    /// Index of the bracket holding `rating` (outside the range: the nearest end).
    pub fn index_of(&self, rating: f64) -> usize {
        self.brackets
            .partition_point(|b| b.hi <= rating)
            .min(self.brackets.len() - 1)
    }

    /// Brackets as (low, high) edges, ascending.
    pub fn edges(&self) -> Vec<(f64, f64)> {
        self.brackets.iter().map(|b| (b.lo, b.hi)).collect()
    }

    /// Width of bracket `i`: the largest rating difference allowed in it.
    pub fn width(&self, i: usize) -> f64 {
        self.brackets[i].width()
    }

    /// Counts one game at `rating` in the current interval.
    pub fn record_game(&mut self, rating: f64) {
        let i = self.index_of(rating);
        self.brackets[i].games += 1;
    }

    /// Ends an interval: merges halves that were quiet for `merge_after`
    /// intervals, splits brackets with `split_at` games or more, then starts
    /// the next interval's counts. Returns whether any bracket changed.
    pub fn step(&mut self) -> bool {
        let p = &self.params;
        let old = std::mem::take(&mut self.brackets);
        let mut next = Vec::with_capacity(old.len() + 4);
        let mut changed = false;
        let mut i = 0;
        while i < old.len() {
            let b = &old[i];
            if let Some(right) = old.get(i + 1).filter(|r| b.is_left_of_pair(r)) {
                // A pair of halves: busy halves split further, otherwise the
                // pair's quiet count decides whether it becomes one again.
                let busy = b.games >= p.split_at || right.games >= p.split_at;
                let quiet = if b.games + right.games < p.merge_below {
                    b.quiet + 1
                } else {
                    0
                };
                if !busy && quiet >= p.merge_after {
                    next.push(Bracket {
                        level: b.level - 1,
                        pos: b.pos / 2,
                        hi: right.hi,
                        games: 0,
                        quiet: 0,
                        ..b.clone()
                    });
                    changed = true;
                    i += 2;
                    continue;
                }
                changed |= self.split_or_keep(b, quiet, &mut next);
                changed |= self.split_or_keep(right, 0, &mut next);
                i += 2;
            } else {
                changed |= self.split_or_keep(b, 0, &mut next);
                i += 1;
            }
        }
        // Halves of a split pair may now sit next to an unsplit sibling; the
        // pair test above only merges exact siblings, so edges stay nested.
        self.brackets = next;
        changed
    }

    fn split_or_keep(&self, b: &Bracket, quiet: u32, next: &mut Vec<Bracket>) -> bool {
        let p = &self.params;
        if b.games >= p.split_at && b.width() / 2.0 >= p.min_width {
            let mid = (b.lo + b.hi) / 2.0;
            let half = |pos, lo, hi| Bracket {
                root: b.root,
                level: b.level + 1,
                pos,
                lo,
                hi,
                games: 0,
                quiet: 0,
            };
            next.push(half(b.pos * 2, b.lo, mid));
            next.push(half(b.pos * 2 + 1, mid, b.hi));
            true
        } else {
            next.push(Bracket {
                games: 0,
                quiet,
                ..b.clone()
            });
            false
        }
    }
}

/// The `adaptive-brackets` policy: its brackets' controller and when it next runs.
pub struct AdaptiveBrackets {
    params: BracketParams,
    controller: BracketController,
    next_step: SimTime,
}

impl AdaptiveBrackets {
    /// The policy for these parameters (validated).
    pub fn new(params: BracketParams) -> Self {
        AdaptiveBrackets {
            controller: BracketController::new(params.clone()),
            next_step: SimTime::ZERO + params.interval.0,
            params,
        }
    }

    /// The brackets as they stand.
    pub fn controller(&self) -> &BracketController {
        &self.controller
    }

    /// Runs every controller interval that has ended by `now`.
    fn advance(&mut self, now: SimTime) -> bool {
        let mut changed = false;
        while self.next_step <= now {
            changed |= self.controller.step();
            self.next_step += self.params.interval.0;
        }
        changed
    }
}

impl Policy for AdaptiveBrackets {
    fn schedule(&self) -> Schedule {
        match self.params.mode {
            // Windows do not widen with time; only the controller changes them,
            // so its timer is the only re-check needed.
            Mode::Event => Schedule {
                on_join: true,
                tick: Some(self.params.interval.0),
            },
            Mode::Tick => Schedule {
                on_join: false,
                tick: Some(self.params.tick.0),
            },
        }
    }

    fn propose(
        &mut self,
        view: &PoolView<'_>,
        trigger: Trigger,
        _rng: &mut Pcg64,
        out: &mut Vec<Proposal>,
    ) {
        let changed = self.advance(view.now);
        let c = &self.controller;
        let window = |seed: &WaitingTicket| c.width(c.index_of(seed.rating));
        let accept = |seed: &WaitingTicket, d: f64, t: &WaitingTicket| {
            let (bs, bt) = (c.index_of(seed.rating), c.index_of(t.rating));
            bs.abs_diff(bt) <= 1 && d <= c.width(bt)
        };
        // In event mode a pass is only worth it when brackets moved.
        if trigger == Trigger::Tick && self.params.mode == Mode::Event && !changed {
            return;
        }
        propose_windows(view, trigger, window, accept, |tickets| {
            out.push(Proposal::new(tickets))
        });
    }

    fn on_formed(&mut self, formed: &FormedMatch<'_>) {
        let n = formed.tickets.len().max(1) as f64;
        let mean = formed.tickets.iter().map(|t| t.rating).sum::<f64>() / n;
        self.controller.record_game(mean);
    }

    fn explain(&self) -> Option<&dyn Explain> {
        Some(self)
    }
}

impl Explain for AdaptiveBrackets {
    /// Same or adjacent brackets, then the gap within both brackets'
    /// widths, on the brackets as they are now. The controller moves the
    /// edges on its timer, not with a ticket's wait: not monotone.
    fn pair_rule(&self, t: &WaitingTicket, c: &WaitingTicket, _now: SimTime) -> Option<RuleCheck> {
        let k = &self.controller;
        let (bt, bc) = (k.index_of(t.rating), k.index_of(c.rating));
        let (wt, wc) = (k.width(bt), k.width(bc));
        let apart = bt.abs_diff(bc);
        let check = if apart > 1 {
            RuleCheck::within(BlockRule::Bracket, apart as f64, 1.0, false)
        } else {
            RuleCheck::within(
                BlockRule::BracketWidth,
                (t.rating - c.rating).abs(),
                wt.min(wc),
                false,
            )
        };
        Some(check.windows(wt, wc))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::testkit::{pair, Harness};

    fn games(c: &mut BracketController, rating: f64, n: u32) {
        for _ in 0..n {
            c.record_game(rating);
        }
    }

    #[test]
    fn six_games_split_a_bracket_and_two_quiet_intervals_merge_it_back() {
        let mut c = BracketController::new(BracketParams::default());
        let start = c.edges();
        assert_eq!(start[1], (500.0, 1000.0));
        // Five games: no split.
        games(&mut c, 700.0, 5);
        assert!(!c.step());
        assert_eq!(c.edges(), start);
        // The thread: "Let's say 500-1000 had 6 games".
        games(&mut c, 700.0, 6);
        assert!(c.step());
        assert_eq!(
            &c.edges()[..4],
            &[
                (0.0, 500.0),
                (500.0, 750.0),
                (750.0, 1000.0),
                (1000.0, 1500.0)
            ]
        );
        // "in the 500-750 bracket is 1 match and 1 in the 750-1000 bracket":
        // one quiet interval is not enough ...
        games(&mut c, 600.0, 1);
        games(&mut c, 900.0, 1);
        assert!(!c.step());
        assert_eq!(c.edges().len(), 7);
        // ... and three games together is not quiet: the count starts over.
        games(&mut c, 600.0, 2);
        games(&mut c, 900.0, 1);
        assert!(!c.step());
        games(&mut c, 600.0, 1);
        games(&mut c, 900.0, 1);
        assert!(!c.step());
        assert_eq!(c.edges().len(), 7);
        // The second quiet interval in a row merges them.
        games(&mut c, 600.0, 2);
        assert!(c.step());
        assert_eq!(c.edges(), start);
    }

    #[test]
    fn halves_split_again_and_merge_only_with_their_own_sibling() {
        let mut c = BracketController::new(BracketParams::default());
        games(&mut c, 700.0, 6);
        c.step();
        games(&mut c, 900.0, 6);
        c.step();
        assert_eq!(
            &c.edges()[1..5],
            &[
                (500.0, 750.0),
                (750.0, 875.0),
                (875.0, 1000.0),
                (1000.0, 1500.0)
            ]
        );
        // Quiet everywhere: the 750-1000 quarters merge first (they are the
        // pair), then 500-750 with the rebuilt 750-1000.
        c.step();
        c.step();
        assert_eq!(
            &c.edges()[1..4],
            &[(500.0, 750.0), (750.0, 1000.0), (1000.0, 1500.0)]
        );
        c.step();
        c.step();
        assert_eq!(&c.edges()[1..3], &[(500.0, 1000.0), (1000.0, 1500.0)]);
        // Starting brackets never merge with each other.
        c.step();
        c.step();
        assert_eq!(c.edges().len(), 6);
    }

    #[test]
    fn only_the_same_or_the_nearest_bracket_plays() {
        let params = BracketParams::default();
        let mut h = Harness::new(Box::new(AdaptiveBrackets::new(params)));
        // 499 and 990 are 491 apart, inside a 500 width, but two brackets apart
        // once 500-1000 is split.
        for i in 0..6 {
            assert_eq!(h.join(2 * i, 700.0, 1.0).len(), 0);
            assert_eq!(h.join(2 * i + 1, 700.0, 1.0).len(), 1);
        }
        assert!(h.tick(60.0).is_empty());
        h.join(100, 499.0, 61.0);
        assert!(
            h.join(101, 990.0, 61.0).is_empty(),
            "499 vs 990 cannot happen"
        );
        // 760 is in the neighbouring bracket of 990, 230 apart, within 250.
        assert_eq!(pair(h.join(102, 760.0, 62.0).concat()), vec![101, 102]);
    }

    #[test]
    fn a_merge_lets_waiting_tickets_meet_at_the_controller_tick() {
        let mut h = Harness::new(Box::new(AdaptiveBrackets::new(BracketParams::default())));
        for i in 0..6 {
            h.join(2 * i, 700.0, 1.0);
            h.join(2 * i + 1, 700.0, 1.0);
        }
        h.tick(60.0);
        // 499 and 900: adjacent? No: 0-500 and 750-1000 are two apart.
        h.join(100, 499.0, 61.0);
        assert!(h.join(101, 900.0, 61.0).is_empty());
        assert!(h.tick(120.0).is_empty(), "one quiet interval");
        // After the second quiet interval 500-1000 is whole again: adjacent to
        // 0-500, and 401 apart is within both widths.
        assert_eq!(pair(h.tick(180.0).concat()), vec![100, 101]);
    }
}
