//! Metrics: what players lived through, computed only from the run's
//! records, so every figure can be traced to simulated events. The engine
//! hands each finished record to a `Collector`, which folds it into
//! accumulators and passes it on to the tables; nothing is kept per ticket.

mod collect;
pub mod dist;
#[cfg(test)]
mod oracle;
mod records;
pub mod stats;
pub mod summary;

pub use collect::{BackgroundRows, Collector, KeepRows, NoRows, RowSink, RunView};
pub use records::{MatchRecord, QueueSample, RatingMoves, RunRecords, TicketEnd, TicketRecord};
pub use summary::{RunMeta, Summary};

use crate::model::Player;

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
