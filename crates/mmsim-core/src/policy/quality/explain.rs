//! The `quality` policy's side of `--explain`: the score of a formed match
//! by the policy's own criteria, so the engine can say when the falling
//! threshold would first have allowed it.

use super::{criteria, party_facts, QualityParams};
use crate::policy::PoolView;
use crate::model::TicketId;

/// The match's weighted score at `view.now`, its parties by team as given;
/// `None` if a ticket is no longer waiting.
pub fn match_score(
    params: &QualityParams,
    view: &PoolView<'_>,
    teams: &[Vec<TicketId>],
) -> Option<f64> {
    let mut facts = Vec::new();
    let mut split = Vec::with_capacity(teams.len());
    for team in teams {
        let mut members = Vec::with_capacity(team.len());
        for id in team {
            members.push(facts.len());
            facts.push(party_facts(params, view, view.pool.get(*id)?));
        }
        split.push(members);
    }
    Some(criteria(params, &facts, &split, view.format.team_size).score(&params.weights))
}
