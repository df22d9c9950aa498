//! Identifier newtypes, so a ticket id can never be passed where a player id is meant.

use serde::{Deserialize, Serialize};
use std::fmt;

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        pub struct $name(pub u32);

        impl $name {
            /// The id as an index into the arrays it numbers (players, tickets, matches).
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}", self.0)
            }
        }
    };
}

id_type!(
    /// Index of a player in the population.
    PlayerId
);
id_type!(
    /// One stay of a party in the queue. Ids grow with enqueue order, so the
    /// smallest waiting id is the ticket that has waited longest.
    TicketId
);
id_type!(
    /// A formed match, numbered in the order matches form.
    MatchId
);

/// The members of one party. Five fit inline (Dota's largest party), so a
/// waiting ticket, a requeue event or a running match holds no heap block of
/// its own: the engine's steady state does not allocate per party.
pub type Party = smallvec::SmallVec<[PlayerId; 5]>;

/// One value per team of a match; two fit inline.
pub type PerTeam<T> = smallvec::SmallVec<[T; 2]>;
