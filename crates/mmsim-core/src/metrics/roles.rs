//! Role-queue metrics: the wait of players by their main role (the classic
//! "damage players wait three times longer") and how often matched players
//! got the role they wanted. Present only when the scenario has `[roles]`.

use super::dist::MsHist;
use super::summary::Describe;
use super::{TicketEnd, TicketRecord};
use serde::{Deserialize, Serialize};
use smallvec::SmallVec;

/// A ticket's role columns, member by member: the main role (an index into
/// the scenario's role names), the accepted roles (a bit set) and, once
/// matched, the role each plays.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TicketRoles {
    /// Each member's main role (an index into the role names).
    pub main: SmallVec<[u8; 5]>,
    /// Each member's accepted roles (a bit set).
    pub accepted: SmallVec<[u8; 5]>,
    /// Empty unless the ticket matched.
    pub assigned: SmallVec<[u8; 5]>,
}

/// The role queue's figures in `summary.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RoleSummary {
    /// One entry per role, in the scenario's order.
    pub by_main_role: Vec<RoleWait>,
    /// Matched players after warm-up (each member of a matched party).
    pub matched_players: u64,
    /// Share of them who played their main role (backfill joiners in the
    /// role of the slot they took).
    pub first_choice_share: Option<f64>,
    /// Share of them who played a role they accept (main or second).
    pub preferred_share: Option<f64>,
}

/// Players whose main role is `role`: their waits (a party's wait counts
/// once per member), how many gave up, and what they played.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RoleWait {
    /// The role's name.
    pub role: String,
    /// Players of this main role in tickets enqueued after warm-up.
    pub players: u64,
    /// Wait of those who matched, seconds.
    pub wait_s: Describe,
    /// Share of those players whose ticket gave up.
    pub abandon_rate: Option<f64>,
    /// Of those matched, the share who played this (their main) role.
    pub first_choice_share: Option<f64>,
    /// Matched players who played this role, whatever their main role.
    pub played: u64,
}

#[derive(Clone, Debug, Default)]
struct PerRole {
    players: u64,
    abandoned: u64,
    matched: u64,
    /// Matched with a role assigned (by the match's split, or by the open
    /// slot a backfill joiner took): the shares' base.
    assigned: u64,
    got_main: u64,
    played: u64,
    waits: MsHist,
}

/// Folds tickets' role columns; built when the run has a role queue.
#[derive(Clone, Debug)]
pub struct RoleAcc {
    names: Vec<String>,
    per: Vec<PerRole>,
    matched: u64,
    assigned: u64,
    first: u64,
    preferred: u64,
}

impl RoleAcc {
    /// Accumulators for the roles `names`, in the scenario's order.
    pub fn new(names: Vec<String>) -> Self {
        let per = vec![PerRole::default(); names.len()];
        RoleAcc {
            names,
            per,
            matched: 0,
            assigned: 0,
            first: 0,
            preferred: 0,
        }
    }

    /// The role names, in the scenario's order.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// A finished ticket after warm-up.
    pub fn ticket(&mut self, t: &TicketRecord) {
        let Some(r) = &t.roles else {
            return;
        };
        let ms = t.left.since(t.enqueued).as_ms();
        for (i, &main) in r.main.iter().enumerate() {
            let p = &mut self.per[main as usize];
            p.players += 1;
            match t.end {
                TicketEnd::Matched(_) => {
                    p.matched += 1;
                    p.waits.add_ms(ms);
                    self.matched += 1;
                    if let Some(&role) = r.assigned.get(i) {
                        self.per[main as usize].assigned += 1;
                        self.assigned += 1;
                        self.per[role as usize].played += 1;
                        if role == main {
                            self.per[main as usize].got_main += 1;
                            self.first += 1;
                        }
                        if r.accepted[i] & (1 << role) != 0 {
                            self.preferred += 1;
                        }
                    }
                }
                TicketEnd::Abandoned => p.abandoned += 1,
                TicketEnd::Waiting | TicketEnd::Declined => {}
            }
        }
    }

    /// The waits by main role, for the plot.
    pub fn waits(&self) -> impl Iterator<Item = (&str, &MsHist)> {
        self.names
            .iter()
            .map(String::as_str)
            .zip(self.per.iter().map(|p| &p.waits))
    }

    /// The `roles` block of `summary.json`.
    pub fn summary(&self) -> RoleSummary {
        let ratio = |a: u64, b: u64| (b > 0).then(|| a as f64 / b as f64);
        RoleSummary {
            by_main_role: self
                .names
                .iter()
                .zip(&self.per)
                .map(|(name, p)| RoleWait {
                    role: name.clone(),
                    players: p.players,
                    wait_s: super::collect::describe(&p.waits),
                    abandon_rate: ratio(p.abandoned, p.players),
                    first_choice_share: ratio(p.got_main, p.assigned),
                    played: p.played,
                })
                .collect(),
            matched_players: self.matched,
            first_choice_share: ratio(self.first, self.assigned),
            preferred_share: ratio(self.preferred, self.assigned),
        }
    }
}
