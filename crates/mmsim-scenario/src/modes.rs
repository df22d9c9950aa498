//! The `[modes]` section: several queues (game modes) over one population,
//! their checks, the sections they cannot run with, and what they become
//! for the engine. Kept apart from `config.rs` as each of issue 14's
//! sections is.

use super::Scenario;
use mmsim_core::engine::modes::MAX_MODES;
use mmsim_core::engine::{ModeSpec, ModesConfig};
use mmsim_core::model::check::unit as probability;
use mmsim_core::model::ParamError;
use mmsim_core::policy::{MatchFormat, PolicyConfig};
use serde::{Deserialize, Serialize};

/// Game modes sharing the players: `[[modes.queues]]` tables, and which of
/// them a share of tickets queue for at once.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModesSection {
    pub queues: Vec<QueueSection>,
    /// The modes a multi-queued ticket waits in (names of `queues`).
    #[serde(default)]
    pub multi_queue: Vec<String>,
    /// Share of the tickets drawn for a mode of `multi_queue` that queue for
    /// every mode of the set their party fits.
    #[serde(default)]
    pub multi_queue_share: f64,
    /// Separate ladders (rating pools), each named by the queues rated on
    /// it; absent: every mode shares the players' one solo and one party
    /// rating. The first is the ladder of the players table's `rating`
    /// columns and of the run's rank correlations.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ladders: Vec<String>,
}

/// One mode: a queue with its own format and policy.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueueSection {
    pub name: String,
    /// Share of fresh arrivals that pick this mode; the shares sum to 1.
    pub share: f64,
    /// Teams per match; absent: `match.teams`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub teams: Option<u32>,
    /// Players per team; absent: `match.team_size`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team_size: Option<u32>,
    /// Weights of party sizes 1, 2, ... of this mode's arrivals; absent:
    /// `arrivals.party_sizes`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub party_sizes: Option<Vec<f64>>,
    /// This mode's policy, keyed as `[policy]`; absent: the scenario's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<PolicyConfig>,
    /// The ladder (one of `modes.ladders`) this mode's matches are rated on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ladder: Option<String>,
    /// Games a player must have played (any mode, those before the run
    /// included) to enter this mode; a party with a member short is refused it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unlock_games: Option<u32>,
}

impl QueueSection {
    fn teams(&self, s: &Scenario) -> u32 {
        self.teams.unwrap_or(s.format.teams)
    }
    fn team_size(&self, s: &Scenario) -> u32 {
        self.team_size.unwrap_or(s.format.team_size)
    }
    fn party_sizes<'a>(&'a self, s: &'a Scenario) -> &'a [f64] {
        self.party_sizes
            .as_deref()
            .unwrap_or(&s.arrivals.party_sizes)
    }
    fn policy<'a>(&'a self, s: &'a Scenario) -> &'a PolicyConfig {
        self.policy.as_ref().unwrap_or(&s.policy)
    }
}

/// Checks `[modes]` against the rest of the scenario. Full keys.
pub fn validate(s: &Scenario) -> Result<(), ParamError> {
    let Some(m) = &s.modes else {
        return Ok(());
    };
    // Sections whose engine layers keep their own pool or decide alone who
    // is matched: running them per mode is more than a hook, so refused.
    let refuse = |present: bool, other: &str, why: &str| {
        if present {
            Err(ParamError::new(
                "modes",
                format!("[modes] cannot be used with {other}: {why}"),
            ))
        } else {
            Ok(())
        }
    };
    refuse(
        s.regions.is_some(),
        "[regions]",
        "each mode would need its own data-centre sub-pools",
    )?;
    refuse(
        s.ruleset.is_some(),
        "[ruleset]",
        "a ruleset is one queue's rules; give each mode its own policy instead",
    )?;
    refuse(
        s.backfill.is_some(),
        "[backfill]",
        "open slots are filled from one queue",
    )?;
    refuse(
        s.acceptance.is_some(),
        "[acceptance]",
        "a declined ticket returns to one queue",
    )?;
    refuse(
        s.roles.is_some(),
        "[roles]",
        "the role queue's composition is the one [match] format's",
    )?;
    refuse(
        s.arrivals.trace.is_some(),
        "arrivals.trace",
        "a trace has no modes",
    )?;
    refuse(
        s.metrics.explain,
        "metrics.explain",
        "the explanations ask the one [policy]",
    )?;
    if m.queues.is_empty() || m.queues.len() > MAX_MODES {
        return Err(ParamError::new(
            "modes.queues",
            format!(
                "needs 1 to {MAX_MODES} [[modes.queues]] tables, got {}",
                m.queues.len()
            ),
        ));
    }
    for (i, q) in m.queues.iter().enumerate() {
        let key = |k: &str| format!("modes.queues[{i}].{k}");
        if q.name.trim().is_empty() {
            return Err(ParamError::new(key("name"), "must not be empty"));
        }
        if m.queues[..i].iter().any(|o| o.name == q.name) {
            return Err(ParamError::new(
                key("name"),
                format!("`{}` is named twice", q.name),
            ));
        }
        if !(q.share.is_finite() && (0.0..=1.0).contains(&q.share)) {
            return Err(ParamError::new(
                key("share"),
                format!("must be from 0 to 1, got {}", q.share),
            ));
        }
        let (teams, team_size) = (q.teams(s), q.team_size(s));
        if !(2..=super::config::MAX_TEAMS).contains(&teams) {
            return Err(ParamError::new(
                key("teams"),
                format!("must be 2 to {}, got {teams}", super::config::MAX_TEAMS),
            ));
        }
        if !(1..=super::config::MAX_TEAM_SIZE).contains(&team_size) {
            return Err(ParamError::new(
                key("team_size"),
                format!(
                    "must be 1 to {}, got {team_size}",
                    super::config::MAX_TEAM_SIZE
                ),
            ));
        }
        if u64::from(teams) * u64::from(team_size) > u64::from(s.population.size) {
            return Err(ParamError::new(
                key("team_size"),
                format!(
                    "a match needs {} players but the population has only {}",
                    u64::from(teams) * u64::from(team_size),
                    s.population.size
                ),
            ));
        }
        if s.engagement.is_some() && teams != s.format.teams {
            return Err(ParamError::new(
                key("teams"),
                format!(
                    "with [engagement] every mode plays match.teams ({}) teams: the churn model reads a match's lopsidedness by that format",
                    s.format.teams
                ),
            ));
        }
        let sizes = q.party_sizes(s);
        let sizes_key = if q.party_sizes.is_some() {
            key("party_sizes")
        } else {
            "arrivals.party_sizes".to_owned()
        };
        if sizes.is_empty()
            || sizes.len() > super::config::MAX_TEAM_SIZE as usize
            || sizes.iter().any(|w| !(w.is_finite() && *w >= 0.0))
            || sizes.iter().all(|w| *w == 0.0)
        {
            return Err(ParamError::new(
                sizes_key,
                "weights of party sizes 1, 2, ...: zero or more, not all zero, e.g. [0.7, 0.2, 0.1]",
            ));
        }
        if let Some(big) = sizes.iter().rposition(|w| *w > 0.0).map(|i| i + 1) {
            if big > team_size as usize {
                return Err(ParamError::new(
                    sizes_key,
                    format!(
                        "mode `{}` gets parties of up to {big} but its teams hold {team_size}: give the mode its own party_sizes (e.g. [1.0] for a 1v1 mode) or a larger team_size",
                        q.name
                    ),
                ));
            }
        }
        mmsim_core::teams::check_fill(sizes, teams as usize, team_size as usize)
            .map_err(|e| ParamError::new(sizes_key.clone(), e.to_string()))?;
        s.teams
            .validate(teams as usize, team_size as usize)
            .map_err(|e| ParamError::new(format!("teams.{}", e.key), e.message))?;
        let policy = q.policy(s);
        policy
            .validate()
            .map_err(|e| ParamError::new(format!("{}.{}", key("policy"), e.key), e.message))?;
        if matches!(
            policy,
            PolicyConfig::Eomm(_)
                | PolicyConfig::Worst(_)
                | PolicyConfig::Skill(_)
                | PolicyConfig::Random(_)
                | PolicyConfig::Ruleset(_)
        ) {
            return Err(ParamError::new(
                key("policy.kind"),
                format!(
                    "`{}` cannot be a mode's policy: it needs sections ([engagement], [ruleset]) that speak for the one queue, or pairs the one queue of a 1v1 scenario (eomm, worst, skill, random)",
                    policy.name()
                ),
            ));
        }
    }
    ladders(m)?;
    let total: f64 = m.queues.iter().map(|q| q.share).sum();
    if (total - 1.0).abs() > 1e-6 {
        return Err(ParamError::new(
            "modes.queues",
            format!("the modes' shares must sum to 1, got {total}"),
        ));
    }
    for (i, name) in m.multi_queue.iter().enumerate() {
        if !m.queues.iter().any(|q| &q.name == name) {
            let known: Vec<&str> = m.queues.iter().map(|q| q.name.as_str()).collect();
            return Err(ParamError::new(
                "modes.multi_queue",
                format!(
                    "names `{name}`, which is not a mode; the modes are {}",
                    known.join(", ")
                ),
            ));
        }
        if m.multi_queue[..i].contains(name) {
            return Err(ParamError::new(
                "modes.multi_queue",
                format!("`{name}` is named twice"),
            ));
        }
    }
    probability("modes.multi_queue_share", m.multi_queue_share)?;
    if m.multi_queue_share > 0.0 && m.multi_queue.len() < 2 {
        return Err(ParamError::new(
            "modes.multi_queue",
            "needs at least two modes for multi_queue_share to mean anything",
        ));
    }
    Ok(())
}

/// Checks the ladders and unlocks: declared ladders are distinct and each
/// rates a mode, every mode names a declared one, and some mode is open to
/// a player who has played nothing (else such a player never plays and so
/// never unlocks any).
fn ladders(m: &ModesSection) -> Result<(), ParamError> {
    for (i, q) in m.queues.iter().enumerate() {
        let key = format!("modes.queues[{i}].ladder");
        match (&q.ladder, m.ladders.is_empty()) {
            (Some(name), true) => {
                return Err(ParamError::new(
                    key,
                    format!("names ladder `{name}` but [modes] declares no ladders: add `ladders = [\"{name}\", ...]` to [modes], or drop the key to share one ladder"),
                ))
            }
            (Some(name), false) if !m.ladders.contains(name) => {
                return Err(ParamError::new(
                    key,
                    format!(
                        "names `{name}`, which is not a ladder; the ladders are {}",
                        m.ladders.join(", ")
                    ),
                ))
            }
            (None, false) => {
                return Err(ParamError::new(
                    key,
                    format!(
                        "mode `{}` must name its ladder when [modes] declares ladders ({})",
                        q.name,
                        m.ladders.join(", ")
                    ),
                ))
            }
            _ => {}
        }
    }
    for (i, name) in m.ladders.iter().enumerate() {
        if name.trim().is_empty() {
            return Err(ParamError::new(
                "modes.ladders",
                "a ladder name must not be empty",
            ));
        }
        if m.ladders[..i].contains(name) {
            return Err(ParamError::new(
                "modes.ladders",
                format!("`{name}` is named twice"),
            ));
        }
        if !m.queues.iter().any(|q| q.ladder.as_ref() == Some(name)) {
            return Err(ParamError::new(
                "modes.ladders",
                format!("`{name}` rates no mode: give a [[modes.queues]] `ladder = \"{name}\"` or drop it"),
            ));
        }
    }
    if m.queues.iter().all(|q| q.unlock_games.unwrap_or(0) > 0) {
        let i = m.queues.len() - 1;
        return Err(ParamError::new(
            format!("modes.queues[{i}].unlock_games"),
            "every mode is locked behind games played: a player with none could never play to unlock one; leave one mode open (no unlock_games, or 0)",
        ));
    }
    Ok(())
}

impl ModesSection {
    /// The engine's view; the scenario must already be validated.
    pub fn to_engine(&self, s: &Scenario) -> ModesConfig {
        ModesConfig {
            modes: self
                .queues
                .iter()
                .map(|q| {
                    let sizes = q.party_sizes(s);
                    let total: f64 = sizes.iter().sum();
                    ModeSpec {
                        name: q.name.clone(),
                        share: q.share,
                        format: MatchFormat {
                            teams: q.teams(s) as usize,
                            team_size: q.team_size(s) as usize,
                            roles: None,
                        },
                        party_size_cdf: sizes
                            .iter()
                            .scan(0.0, |acc, w| {
                                *acc += w / total;
                                Some(*acc)
                            })
                            .collect(),
                        ladder: q
                            .ladder
                            .as_ref()
                            .and_then(|l| self.ladders.iter().position(|x| x == l))
                            .unwrap_or(0) as u8,
                        unlock_games: q.unlock_games.unwrap_or(0),
                    }
                })
                .collect(),
            multi_queue: self
                .queues
                .iter()
                .enumerate()
                .filter(|(_, q)| self.multi_queue.contains(&q.name))
                .fold(0u16, |mask, (i, _)| mask | (1 << i)),
            multi_queue_share: self.multi_queue_share,
            ladders: self.ladders.clone(),
        }
    }

    /// One policy instance per mode: its own, or the scenario's.
    pub fn policies(&self, s: &Scenario) -> Vec<Box<dyn mmsim_core::policy::Policy>> {
        self.queues.iter().map(|q| q.policy(s).build()).collect()
    }
}
