//! Domain types every other module shares: simulated time, identifiers,
//! players, ratings and parameter errors. Nothing here knows about the engine
//! or the files.

pub mod churn;
mod ids;
mod param;
mod player;
pub(crate) mod registry;
mod time;

pub use ids::{MatchId, Party, PerTeam, PlayerId, TicketId};
pub use param::{check, parse_duration, HumanDuration, ParamError};
pub use player::{Category, Player, Rating};
pub use time::{SimDuration, SimTime};
