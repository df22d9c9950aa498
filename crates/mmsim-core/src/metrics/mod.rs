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
    // The comparison sort, not the radix sort: the radix sort's scratch,
    // freed here at start-up, raised the whole run's peak by some 7 MB
    // (`bench-1v1`), for 0.3% of its instructions.
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
