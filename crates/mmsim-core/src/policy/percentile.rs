//! Hazerider's percentile window: "Instead of looking at max rating
//! differences, you should look at percentiles ... a player who is in the top
//! 10% of ratings should only be matched with a player who is between top 5%
//! and 15% of ratings." The window is measured in the population's rating
//! distribution, so it is narrow in points where players are dense and wide
//! at the lonely top.
//!
//! The population's ratings are kept sorted and brought up to date every
//! `refresh` as ratings move (the moved ones sorted and merged in: a walk
//! of the population per refresh, whatever the traffic); a ticket's
//! percentile is then a binary search, O(log N) per ticket.

use super::Explain;
use super::{propose_windows, Cadence, Policy, PoolView, Proposal, RuleCheck, Schedule, Trigger};
use crate::model::BlockRule;
use crate::pool::WaitingTicket;
use crate::model::{check, HumanDuration, ParamError, SimTime};
use rand_pcg::Pcg64;
use serde::{Deserialize, Serialize};

/// Parameters of `kind = "percentile-window"`: a window in percentiles of the population.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PercentileParams {
    /// Half-width of the window at entry, in percentiles of the population
    /// (the thread: 5, so the top 10% plays 5% to 15%).
    pub half_width_pct: f64,
    /// Percentiles the half-width grows per second waited (0: fixed window).
    pub widen_pct_per_s: f64,
    /// The half-width never grows past this.
    pub max_half_width_pct: f64,
    /// How often the sorted population ratings are rebuilt as ratings move.
    pub refresh: HumanDuration,
    /// When the policy runs (`mode`, `recheck`, `tick`).
    #[serde(flatten)]
    pub cadence: Cadence,
}

impl Default for PercentileParams {
    fn default() -> Self {
        PercentileParams {
            half_width_pct: 5.0,
            widen_pct_per_s: 0.0,
            max_half_width_pct: 50.0,
            refresh: HumanDuration::from_secs(60),
            cadence: Cadence::default(),
        }
    }
}

impl PercentileParams {
    /// Where the policy comes from, for `mmsim policies`.
    pub const SOURCE: &str =
        "gamedev thread, Hazerider: the top 10% plays 5% to 15%; a window in population percentiles, re-sorted every `refresh`";
    /// Its keys, for `mmsim policies`.
    pub const PARAMETERS: &str =
        "half_width_pct, widen_pct_per_s, max_half_width_pct, refresh, mode, recheck, tick";

    /// Checks every parameter; keys are relative to `[policy]`.
    pub fn validate(&self) -> Result<(), ParamError> {
        check::non_negative("half_width_pct", self.half_width_pct)?;
        if self.half_width_pct > 100.0 {
            return Err(ParamError::new(
                "half_width_pct",
                format!(
                    "is a percentile distance, at most 100, got {}",
                    self.half_width_pct
                ),
            ));
        }
        check::non_negative("widen_pct_per_s", self.widen_pct_per_s)?;
        check::non_negative("max_half_width_pct", self.max_half_width_pct)?;
        if self.max_half_width_pct < self.half_width_pct {
            return Err(ParamError::new(
                "max_half_width_pct",
                format!(
                    "must be at least `half_width_pct` ({}), got {}",
                    self.half_width_pct, self.max_half_width_pct
                ),
            ));
        }
        check::interval("refresh", self.refresh.0)?;
        self.cadence.validate()
    }

    /// Half-width of a ticket's window at `now`, in percentiles.
    pub fn half_width(&self, t: &WaitingTicket, now: SimTime) -> f64 {
        (self.half_width_pct + self.widen_pct_per_s * t.age_s(now)).min(self.max_half_width_pct)
    }
}

/// The population's ratings, sorted: percentile of a rating and rating at a
/// percentile, both O(log N) or better.
#[derive(Clone, Debug, Default)]
pub struct Percentiles {
    sorted: Vec<f64>,
    /// Per player, the rating it has in `sorted` (filled by `refresh`).
    held: Vec<f64>,
    /// `refresh`'s scratch: the moved players' old and new ratings, and
    /// the table being merged.
    left: Vec<f64>,
    came: Vec<f64>,
    merged: Vec<f64>,
}

impl Percentiles {
    /// The table of `ratings`, sorted: the plain form of `refresh`, and
    /// its test's reference.
    pub fn from_ratings(ratings: impl IntoIterator<Item = f64>) -> Self {
        let mut sorted: Vec<f64> = ratings.into_iter().collect();
        sorted.sort_by(f64::total_cmp);
        Percentiles {
            sorted,
            ..Default::default()
        }
    }

    /// The table of `ratings` (one per player, in player order), built from
    /// the table of the last `refresh`: between two refreshes only the
    /// players who played have new ratings, so only those are sorted and
    /// merged into the rest (the whole sort, every minute, was two fifths
    /// of `gamedev-policies/percentile-window`'s instructions). The same
    /// table as `from_ratings`, bit for bit: ratings that `total_cmp` finds
    /// equal have the same bits, so the sorted list is one list.
    pub fn refresh(&mut self, ratings: impl ExactSizeIterator<Item = f64>) {
        if self.held.len() != ratings.len() || self.sorted.len() != self.held.len() {
            self.held = ratings.collect();
            self.sorted.clone_from(&self.held);
            self.sorted.sort_by(f64::total_cmp);
            return;
        }
        self.left.clear();
        self.came.clear();
        for (held, r) in self.held.iter_mut().zip(ratings) {
            if held.to_bits() != r.to_bits() {
                self.left.push(*held);
                self.came.push(r);
                *held = r;
            }
        }
        if self.came.is_empty() {
            return;
        }
        self.left.sort_by(f64::total_cmp);
        self.came.sort_by(f64::total_cmp);
        self.merged.clear();
        let (left, came) = (&self.left, &self.came);
        let (mut l, mut c) = (0, 0);
        let mut rest: &[f64] = &self.sorted;
        loop {
            // The run of the table before the next old rating to drop and
            // before the next new one to take, copied whole: a refresh
            // moves a few players among thousands.
            let (drop, take) = (left.get(l), came.get(c));
            let run = rest.partition_point(|x| {
                drop.is_none_or(|d| x.total_cmp(d).is_lt()) && take.is_none_or(|t| !t.total_cmp(x).is_lt())
            });
            self.merged.extend_from_slice(&rest[..run]);
            rest = &rest[run..];
            match rest.first() {
                None => break,
                // Every old rating of a moved player is in the table, so
                // the run stops at it; equal ratings are equal bits, so
                // which copy goes does not matter.
                Some(x) if drop.is_some_and(|d| d.to_bits() == x.to_bits()) => {
                    rest = &rest[1..];
                    l += 1;
                }
                Some(_) => {
                    self.merged.push(*take.expect("the run stops at a rating to drop or to take"));
                    c += 1;
                }
            }
        }
        debug_assert_eq!(l, left.len(), "an old rating missing from the table");
        self.merged.extend_from_slice(&came[c..]);
        std::mem::swap(&mut self.sorted, &mut self.merged);
    }

    /// Whether the table holds no rating.
    pub fn is_empty(&self) -> bool {
        self.sorted.is_empty()
    }

    /// Percent of the population rated below `r`, counting ties as half
    /// (the mid-rank), so equal ratings share one percentile.
    pub fn percentile(&self, r: f64) -> f64 {
        let n = self.sorted.len();
        if n == 0 {
            return 50.0;
        }
        let below = self.sorted.partition_point(|&x| x < r);
        let not_above = self.sorted.partition_point(|&x| x <= r);
        100.0 * (below as f64 + 0.5 * (not_above - below) as f64) / n as f64
    }

    /// The rating at percentile `p` (clamped to the population's range).
    pub fn rating_at(&self, p: f64) -> f64 {
        let n = self.sorted.len();
        let i = ((p / 100.0) * n as f64).floor().clamp(0.0, (n - 1) as f64) as usize;
        self.sorted[i]
    }
}

/// The `percentile-window` policy: the table of ratings it refreshes, and its parameters.
pub struct PercentileWindow {
    params: PercentileParams,
    table: Percentiles,
    next_refresh: Option<SimTime>,
}

impl PercentileWindow {
    /// The policy for these parameters (validated), its table empty until the first pass.
    pub fn new(params: PercentileParams) -> Self {
        PercentileWindow {
            params,
            table: Percentiles::default(),
            next_refresh: None,
        }
    }

    fn refresh(&mut self, view: &PoolView<'_>) {
        if self.next_refresh.is_some_and(|t| view.now < t) {
            return;
        }
        self.table
            .refresh(view.players.iter().map(|p| p.rating.value));
        self.next_refresh = Some(view.now + self.params.refresh.0);
    }
}

impl Policy for PercentileWindow {
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
        self.refresh(view);
        if self.table.is_empty() {
            return;
        }
        let p = &self.params;
        let table = &self.table;
        let now = view.now;
        // The window's edges in points; the walk goes out to the farther one
        // and the percentile test trims the nearer side.
        let window = |seed: &WaitingTicket| {
            let q = table.percentile(seed.rating);
            let w = p.half_width(seed, now);
            let lo = table.rating_at(q - w).min(seed.rating);
            let hi = table.rating_at(q + w).max(seed.rating);
            (seed.rating - lo).max(hi - seed.rating)
        };
        let accept = |seed: &WaitingTicket, _: f64, t: &WaitingTicket| {
            let gap = (table.percentile(t.rating) - table.percentile(seed.rating)).abs();
            gap <= p.half_width(seed, now) && gap <= p.half_width(t, now)
        };
        propose_windows(view, trigger, window, accept, |tickets| {
            out.push(Proposal::new(tickets))
        });
    }

    fn explain(&self) -> Option<&dyn Explain> {
        Some(self)
    }
}

impl Explain for PercentileWindow {
    /// The percentile gap against the narrower half-width, both in
    /// percentiles of the table as it is now; the windows in rating points.
    /// Half-widths only grow with waiting, so the rule is monotone. Before
    /// the first pass has built the table every rating sits at the 50th
    /// percentile and there are no windows in points.
    fn pair_rule(&self, t: &WaitingTicket, c: &WaitingTicket, now: SimTime) -> Option<RuleCheck> {
        let (table, p) = (&self.table, &self.params);
        let points = |x: &WaitingTicket| {
            let (q, w) = (table.percentile(x.rating), p.half_width(x, now));
            (x.rating - table.rating_at(q - w).min(x.rating))
                .max(table.rating_at(q + w).max(x.rating) - x.rating)
        };
        let gap = (table.percentile(t.rating) - table.percentile(c.rating)).abs();
        let half = p.half_width(t, now).min(p.half_width(c, now));
        let check = RuleCheck::within(BlockRule::PercentileWindow, gap, half, true);
        Some(if table.is_empty() {
            check
        } else {
            check.windows(points(t), points(c))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::testkit::Harness;

    /// Ratings 0, 10, ..., 990: rating 10k sits at percentile k + 0.05.
    fn hundred() -> Vec<f64> {
        (0..100).map(|i| i as f64 * 10.0).collect()
    }

    fn harness(params: PercentileParams) -> Harness {
        let mut h = Harness::new(Box::new(PercentileWindow::new(params)));
        h.population(&hundred());
        h
    }

    #[test]
    fn the_top_ten_percent_plays_five_to_fifteen_percent() {
        // Rating 900 is at the 90th percentile (top 10%); 850 is the 85th (top
        // 15%), 950 the 95th (top 5%); 840 and 960 are just outside.
        for (other, inside) in [(850.0, true), (950.0, true), (840.0, false), (960.0, false)] {
            let mut h = harness(PercentileParams::default());
            assert!(h.join(0, 900.0, 0.0).is_empty());
            let formed = h.join(1, other, 0.0);
            assert_eq!(formed == vec![vec![1, 0]], inside, "900 vs {other}");
        }
    }

    #[test]
    fn the_same_gap_in_points_is_wide_in_a_dense_region_and_fine_at_the_top() {
        // Half the population at 1500 +- 50, a thin tail up to 3000: 200 points
        // apart is far apart in the middle, close at the top.
        let mut ratings: Vec<f64> = (0..90).map(|i| 1450.0 + i as f64 * 100.0 / 90.0).collect();
        ratings.extend((0..10).map(|i| 2000.0 + i as f64 * 100.0));
        let mut h = Harness::new(Box::new(PercentileWindow::new(PercentileParams::default())));
        h.population(&ratings);
        h.join(0, 1450.0, 0.0);
        assert!(
            h.join(1, 1510.0, 0.0).is_empty(),
            "60 points is 54 percentiles here"
        );
        h.join(2, 2600.0, 0.0);
        assert_eq!(
            h.join(3, 2800.0, 0.0),
            vec![vec![3, 2]],
            "200 points is 2 percentiles at the top"
        );
    }

    #[test]
    fn percentiles_follow_ratings_as_they_move_at_each_refresh() {
        let params = PercentileParams {
            refresh: HumanDuration::from_secs(60),
            ..Default::default()
        };
        let mut h = harness(params);
        h.join(0, 500.0, 0.0);
        assert!(h.join(1, 600.0, 0.0).is_empty(), "50th vs 60th");
        // The population leaves the band between them: now both sit at the
        // 50th percentile. Before the refresh the old table still holds.
        for (i, p) in h.players.iter_mut().enumerate() {
            p.rating.value = if i < 50 { i as f64 } else { 1000.0 + i as f64 };
        }
        assert!(h.tick(59.0).is_empty());
        assert_eq!(h.tick(60.0), vec![vec![0, 1]]);
    }

    #[test]
    fn both_windows_must_hold_when_they_widen() {
        let params = PercentileParams {
            widen_pct_per_s: 0.1,
            ..Default::default()
        };
        let mut h = harness(params);
        h.join(0, 500.0, 0.0);
        // 20 percentiles apart: the old ticket's window reaches it after 150 s,
        // the newcomer's only 150 s after it joined.
        assert!(h.join(1, 700.0, 200.0).is_empty());
        assert!(h.tick(349.0).is_empty());
        assert_eq!(h.tick(350.0), vec![vec![0, 1]]);
    }

    proptest::proptest! {
        /// Refreshed over rounds in which some ratings move (some to a
        /// rating another player holds, some back to their old one, some
        /// to a signed zero), the table is the one sorted from scratch,
        /// bit for bit.
        #[test]
        fn a_refreshed_table_is_the_one_sorted_from_scratch(
            start in proptest::collection::vec(0u8..20, 0..60),
            rounds in proptest::collection::vec(
                proptest::collection::vec((0usize..60, 0u8..24), 0..30),
                1..6,
            ),
        ) {
            let value = |v: u8| match v {
                20 => 0.0,
                21 => -0.0,
                v => f64::from(v) * 25.0 - 100.0,
            };
            let mut ratings: Vec<f64> = start.iter().map(|&v| value(v)).collect();
            let mut table = Percentiles::default();
            for round in std::iter::once(&Vec::new()).chain(&rounds) {
                for &(i, v) in round {
                    if let Some(r) = ratings.get_mut(i) {
                        *r = value(v);
                    }
                }
                table.refresh(ratings.iter().copied());
                let want = Percentiles::from_ratings(ratings.iter().copied());
                let bits = |t: &Percentiles| t.sorted.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                proptest::prop_assert_eq!(bits(&table), bits(&want));
            }
        }
    }

    #[test]
    fn percentile_uses_mid_ranks() {
        let t = Percentiles::from_ratings([1.0, 2.0, 2.0, 3.0]);
        assert_eq!(t.percentile(2.0), 50.0);
        assert_eq!(t.percentile(0.0), 0.0);
        assert_eq!(t.percentile(9.0), 100.0);
        assert_eq!(t.rating_at(75.0), 3.0);
        assert_eq!(t.rating_at(-5.0), 1.0);
    }
}
