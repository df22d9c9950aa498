//! Domain types every other module shares: simulated time, identifiers,
//! players, ratings and parameter errors. Nothing here knows about the engine
//! or the files.

mod block_rule;
pub mod buffered;
pub mod churn;
mod ids;
mod param;
mod player;
pub mod registry;
mod time;

pub use block_rule::{BlockRule, ExpansionStep, RULES};
pub use ids::{MatchId, Party, PerTeam, PlayerId, TicketId};
pub use param::{check, parse_duration, DurationError, HumanDuration, ParamError};
pub use player::{Category, Player, Rating};
pub use time::{SimDuration, SimTime};
