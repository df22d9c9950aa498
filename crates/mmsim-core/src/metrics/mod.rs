//! Metrics: what players lived through, computed only from the run's
//! records, so every figure can be traced to simulated events. The engine
//! hands each finished record to a `Collector`, which folds it into
//! accumulators and passes it on to the tables; nothing is kept per ticket.

pub mod backfill;
mod collect;
pub mod dist;
pub mod engagement;
pub mod explain;
mod key_sort;
pub mod modes;
/// The summary recomputed the obvious way from every record: the test
/// oracle of the streaming collector (checked against it in
/// `mmsim-scenario`'s tests, on real runs).
pub mod oracle;
mod rank_corr;
mod records;
pub mod regions;
pub mod roles;
pub mod stats;
pub mod summary;

pub use collect::{BackgroundRows, Collector, KeepRows, NoRows, RowSink, RunView, HANDOFF_ROWS};
pub use rank_corr::RankCorr;

pub use records::{MatchRecord, QueueSample, RatingMoves, RunRecords, TicketEnd, TicketRecord};
pub use roles::{RoleSummary, TicketRoles};
pub use summary::{RunMeta, Summary};

use crate::model::Player;

/// The players' indices by ascending true skill (ties by index), for the
/// skill deciles and the rank correlation. Sorts (skill, index) pairs, not
/// indices into the players, so the sort reads memory in order.
pub fn skill_order(players: &[Player]) -> Vec<u32> {
    let mut pairs: Vec<(f64, u32)> = players
        .iter()
        .enumerate()
        .map(|(i, p)| (p.true_skill, i as u32))
        .collect();
    key_sort::sort_pairs(&mut pairs, &mut Vec::new());
    pairs.into_iter().map(|(_, i)| i).collect()
}

/// `skill_order` by a comparison sort: its oracle.
#[cfg(test)]
pub(crate) fn skill_order_plain(players: &[Player]) -> Vec<u32> {
    let mut pairs: Vec<(f64, u32)> = players
        .iter()
        .enumerate()
        .map(|(i, p)| (p.true_skill, i as u32))
        .collect();
    key_sort::sort_pairs_plain(&mut pairs);
    pairs.into_iter().map(|(_, i)| i).collect()
}

/// Spearman correlation between each player's rating (as `rating_of` reads
/// it) and true skill, over players who have played at least once.
pub fn rating_skill_rank_corr(
    players: &[Player],
    rating_of: impl Fn(&Player) -> f64,
) -> Option<f64> {
    let played: Vec<&Player> = players.iter().filter(|p| p.games > 0).collect();
    let ratings: Vec<f64> = played.iter().map(|p| rating_of(p)).collect();
    let skills: Vec<f64> = played.iter().map(|p| p.true_skill).collect();
    stats::spearman(&ratings, &skills)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{PlayerId, Rating};

    /// The radix sort's skill order is the comparison sort's, on a
    /// population large enough to take the radix path, with many ties
    /// (skills repeat every 37 players), both zeros, and skills that differ
    /// only in their low 40 bits.
    #[test]
    fn skill_order_is_the_comparison_sorts() {
        let players: Vec<Player> = (0..5_000u32)
            .map(|i| {
                let scattered = u64::from(i.wrapping_mul(2_654_435_761));
                let skill = match i % 6 {
                    0 => f64::from(i % 37) * 81.0,
                    1 => -0.0,
                    2 => 0.0,
                    // Alike in the high bits, apart in the low ones.
                    3 => f64::from_bits(1500f64.to_bits() ^ (scattered & 0xFF_FFFF_FFFF)),
                    _ => f64::from(i.wrapping_mul(2_654_435_761) % 3_000) + 0.25,
                };
                Player::new(PlayerId(i), skill, Rating::new(1500.0, 0.0, 0.0))
            })
            .collect();
        assert_eq!(skill_order(&players), skill_order_plain(&players));
    }
}
