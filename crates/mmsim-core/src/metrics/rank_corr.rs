//! The rating-to-skill rank correlation, sampled many times a run over the
//! whole population: true skill never changes, so its order is sorted once,
//! and each sample re-sorts only the ratings that moved since the last one.

use super::stats;
use crate::model::Player;

/// Samples Spearman's ρ between rating and true skill over players who have
/// played, to the same bits as `rating_skill_rank_corr` (the obvious version,
/// kept as the oracle).
///
/// Between two samples only the players who played have new ratings, so the
/// ratings stay sorted from one sample to the next: a sample re-sorts only
/// the changed ones and merges them in, instead of sorting everyone (the
/// full sort was a fifth of a 1v1 run's time). Ties share their mean rank,
/// so the order within a tie, which the merge may change, does not reach ρ.
pub struct RankCorr {
    /// Player indices by ascending true skill.
    by_skill: Vec<u32>,
    /// Their true skills, in that order, so a sample walks them in order
    /// instead of jumping about the players (true skill never changes).
    skills: Vec<f64>,
    /// Per player: its place among the players who have played, in id
    /// order, or `NONE`.
    slot: Vec<u32>,
    /// Per player: the rating it has in `rated`, NaN while it has none.
    last: Vec<f64>,
    /// (rating, player) of every player who has played, by ascending rating.
    rated: Vec<(f64, u32)>,
    /// The moved ratings, then (reused) the players who have played in
    /// true-skill order.
    fresh: Vec<(f64, u32)>,
    rating_ranks: Vec<f64>,
    skill_ranks: Vec<f64>,
}

const NONE: u32 = u32::MAX;

impl RankCorr {
    /// `by_skill`: the players' indices by ascending true skill (`super::skill_order`).
    pub fn new(by_skill: Vec<u32>, players: &[Player]) -> Self {
        RankCorr {
            slot: vec![NONE; by_skill.len()],
            last: vec![f64::NAN; by_skill.len()],
            skills: (by_skill.iter())
                .map(|&i| players[i as usize].true_skill)
                .collect(),
            by_skill,
            rated: Vec::new(),
            fresh: Vec::new(),
            rating_ranks: Vec::new(),
            skill_ranks: Vec::new(),
        }
    }

    /// ρ now, with each player's rating as `rating_of` reads it; `None`
    /// with fewer than two players who have played.
    pub fn sample(
        &mut self,
        players: &[Player],
        rating_of: impl Fn(&Player) -> f64,
    ) -> Option<f64> {
        // Slots in id order (the oracle's order, which Pearson's sums
        // follow), and the players whose rating moved or who are new.
        self.fresh.clear();
        let mut n = 0u32;
        for (i, p) in players.iter().enumerate() {
            if p.games > 0 {
                self.slot[i] = n;
                n += 1;
                let v = rating_of(p);
                if v.to_bits() != self.last[i].to_bits() {
                    self.fresh.push((v, i as u32));
                    self.last[i] = v;
                }
            } else {
                self.slot[i] = NONE;
            }
        }
        let n = n as usize;
        if !self.fresh.is_empty() {
            // A moved player's old entry no longer matches its `last`.
            let last = &self.last;
            self.rated
                .retain(|&(v, i)| v.to_bits() == last[i as usize].to_bits());
            // Merged in place from the back, so no second copy of everyone.
            let (mut i, mut j) = (self.rated.len(), self.fresh.len());
            self.rated.resize(i + j, (0.0, 0));
            // Pushed in id order, as `sort_pairs_in` needs; sorted in the
            // room the merge is about to fill, so no scratch list either.
            super::key_sort::sort_pairs_in(&mut self.fresh, &mut self.rated[i..]);
            for k in (0..self.rated.len()).rev() {
                if j == 0 {
                    break;
                }
                if i > 0 && self.rated[i - 1].0.total_cmp(&self.fresh[j - 1].0).is_gt() {
                    self.rated[k] = self.rated[i - 1];
                    i -= 1;
                } else {
                    self.rated[k] = self.fresh[j - 1];
                    j -= 1;
                }
            }
        }
        debug_assert_eq!(self.rated.len(), n);
        self.rating_ranks.clear();
        self.rating_ranks.resize(n, 0.0);
        self.skill_ranks.clear();
        self.skill_ranks.resize(n, 0.0);
        let slot = &self.slot;
        assign_ranks(&self.rated, &mut self.rating_ranks, |&(v, i)| {
            (v, slot[i as usize])
        });
        // True skill: the population's order, less those who have not played.
        let in_order = &mut self.fresh;
        in_order.clear();
        for (&i, &skill) in self.by_skill.iter().zip(&self.skills) {
            let s = slot[i as usize];
            if s != NONE {
                in_order.push((skill, s));
            }
        }
        assign_ranks(in_order, &mut self.skill_ranks, |&x| x);
        stats::pearson(&self.rating_ranks, &self.skill_ranks)
    }
}

/// 1-based ranks of `sorted` (ascending values), written at each item's
/// slot, ties sharing the mean of their ranks.
fn assign_ranks<T>(sorted: &[T], ranks: &mut [f64], key: impl Fn(&T) -> (f64, u32)) {
    let mut i = 0;
    while i < sorted.len() {
        let v = key(&sorted[i]).0;
        let mut j = i;
        while j + 1 < sorted.len() && key(&sorted[j + 1]).0 == v {
            j += 1;
        }
        let rank = (i + j) as f64 / 2.0 + 1.0;
        for item in &sorted[i..=j] {
            ranks[key(item).1 as usize] = rank;
        }
        i = j + 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{PlayerId, Rating};
    use proptest::prelude::*;

    fn player(i: usize, skill: f64, games: u32) -> Player {
        let mut p = Player::new(PlayerId(i as u32), skill, Rating::new(1500.0, 0.0, 0.0));
        p.games = games;
        p
    }

    proptest! {
        /// Bit-identical to the obvious version (collect, rank both, Pearson),
        /// with ties in skill and rating, players who have not played, and
        /// over several samples between which some play, some ratings move
        /// (some back to an earlier value) and some players play first.
        #[test]
        fn sampled_corr_equals_the_obvious_computation_to_the_bit(
            people in proptest::collection::vec((0u8..20, 0u8..3, 0u8..15), 0..120),
            rounds in proptest::collection::vec(
                proptest::collection::vec((0u8..4, 0u8..15), 0..120),
                1..5,
            ),
        ) {
            let mut players: Vec<Player> = people
                .iter()
                .enumerate()
                .map(|(i, &(s, g, _))| player(i, f64::from(s) * 50.0, u32::from(g)))
                .collect();
            let mut ratings: Vec<f64> =
                people.iter().map(|&(_, _, r)| f64::from(r) * 10.0).collect();
            let mut corr = RankCorr::new(crate::metrics::skill_order(&players), &players);
            for round in std::iter::once(&Vec::new()).chain(&rounds) {
                for (i, &(what, r)) in round.iter().enumerate().take(players.len()) {
                    match what {
                        0 => players[i].games += 1,
                        1 => ratings[i] = f64::from(r) * 10.0,
                        2 => {
                            players[i].games += 1;
                            ratings[i] += 0.5;
                        }
                        _ => {}
                    }
                }
                let rating_of = |p: &Player| ratings[p.id.index()];
                let want = crate::metrics::rating_skill_rank_corr(&players, rating_of);
                let got = corr.sample(&players, rating_of);
                prop_assert_eq!(got.map(f64::to_bits), want.map(f64::to_bits));
            }
        }
    }
}
