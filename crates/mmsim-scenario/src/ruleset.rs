//! The `[ruleset]` section: a vendor's ruleset file (FlexMatch or AccelByte,
//! `mmsim_core::ruleset`) read, tied to the population's attributes, and mapped
//! onto the scenario: the team format, the policy, `[regions]`' latency
//! limits, `[roles]`' composition, `[acceptance]`'s timeout and
//! `[backfill]`'s fill. What the population cannot supply is refused here.

use super::{ExpansionSection, Scenario};
use mmsim_core::model::{HumanDuration, ParamError, SimDuration};
use mmsim_core::policy::{PolicyConfig, RulesetParams};
use mmsim_core::ruleset::explain::{self, Unsupplied};
use mmsim_core::ruleset::{RuleKind, Ruleset, RulesetError, Source};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

/// The largest ruleset file read (vendors' rulesets are a few kB).
pub const MAX_RULESET_BYTES: u64 = 1 << 20;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RulesetSection {
    /// The ruleset's JSON file, relative to the scenario file.
    pub file: String,
    /// Ruleset attribute name -> where the population supplies it
    /// (`rating`, `games`, `tier`, `win_rate`, `languages`, `roles`,
    /// `latency`), for names the conventions do not cover.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub attributes: BTreeMap<String, String>,
    /// SHA-256 of the file's bytes, for the provenance hash.
    #[serde(skip)]
    pub sha256: Option<String>,
    /// The file as read, before it is tied to this scenario: a sweep's
    /// settings reuse it rather than read the file again.
    #[serde(skip)]
    pub read: Option<Arc<Ruleset>>,
}

/// Why a ruleset file could not be used; the message names the file.
#[derive(Debug, thiserror::Error)]
pub enum RulesetFileError {
    /// The file could not be read (missing, unreadable, or too large).
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file as named.
        path: std::path::PathBuf,
        /// What reading it said.
        source: std::io::Error,
    },
    /// The file was read but is not a ruleset mmsim can simulate.
    #[error("{}: {error}", path.display())]
    Parse {
        /// The file as named.
        path: std::path::PathBuf,
        /// What is wrong in it, with its JSON path.
        error: RulesetError,
    },
}

/// Reads a ruleset file of at most `MAX_RULESET_BYTES`, with the SHA-256
/// of its bytes.
pub fn read_file(path: &Path) -> Result<(Ruleset, String), RulesetFileError> {
    use sha2::{Digest, Sha256};
    let text =
        super::read_bounded(path, MAX_RULESET_BYTES).map_err(|source| RulesetFileError::Read {
            path: path.to_path_buf(),
            source,
        })?;
    let rs = Ruleset::parse(&text).map_err(|error| RulesetFileError::Parse {
        path: path.to_path_buf(),
        error,
    })?;
    Ok((rs, super::provenance::hex(&Sha256::digest(text.as_bytes()))))
}

/// Where the scenario supplies attribute `name`: the section's mapping,
/// else the naming conventions. An unknown mapping target is an error on
/// its key.
fn source_of(sec: &RulesetSection, name: &str) -> Result<Option<Source>, ParamError> {
    match sec.attributes.get(name) {
        Some(target) => Source::by_name(target).map(Some).ok_or_else(|| {
            ParamError::new(
                format!("ruleset.attributes.{name}"),
                format!(
                    "`{target}` is not a population attribute; use one of {}",
                    Source::NAMES
                        .iter()
                        .map(|(n, _)| format!("`{n}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )
        }),
        None => Ok(Source::by_convention(name)),
    }
}

/// Why the scenario cannot supply `source`, if it cannot.
fn missing(s: &Scenario, source: Source) -> Option<&'static str> {
    let p = &s.population;
    match source {
        Source::Rating => None,
        Source::Games => p.games.is_none().then_some("population.games is not set"),
        Source::Tier => p.tiers.is_empty().then_some("population.tiers is not set"),
        Source::WinRate => p
            .win_rate
            .is_none()
            .then_some("population.win_rate is not set"),
        Source::Languages => p
            .languages
            .is_empty()
            .then_some("population.languages is not set"),
        Source::Roles => s
            .roles
            .is_none()
            .then_some("the scenario has no [roles] section"),
        Source::Latency => s
            .regions
            .is_none()
            .then_some("the scenario has no [regions] section"),
    }
}

fn vocabulary(s: &Scenario, source: Source) -> Option<Vec<String>> {
    match source {
        Source::Languages if !s.population.languages.is_empty() => Some(
            s.population
                .languages
                .iter()
                .map(|l| l.name.clone())
                .collect(),
        ),
        Source::Roles => s.roles.as_ref().map(|r| r.names.clone()),
        _ => None,
    }
}

fn err(e: RulesetError) -> ParamError {
    ParamError::new("ruleset.file", e.to_string())
}

/// What each attribute a rule reads maps to in this scenario, for
/// `explain-ruleset`.
pub fn mapping(
    rs: &Ruleset,
    s: Option<&Scenario>,
    sec: Option<&RulesetSection>,
) -> Vec<(String, Result<Source, Unsupplied>)> {
    rs.used_attributes()
        .into_iter()
        .map(|i| {
            let name = rs.attributes[i].name.clone();
            let source = match sec.map(|sec| source_of(sec, &name)) {
                Some(Err(e)) => Err(Unsupplied(e.message)),
                Some(Ok(x)) => Ok(x),
                None => Ok(Source::by_convention(&name)),
            }
            .and_then(|x| {
                x.ok_or_else(|| {
                    Unsupplied(
                        "no population attribute by that name; map it in [ruleset] attributes"
                            .to_string(),
                    )
                })
            })
            .and_then(|x| match s.and_then(|s| missing(s, x)) {
                Some(why) => Err(Unsupplied(format!("maps to `{}` but {why}", x.name()))),
                None => Ok(x),
            });
            (name, source)
        })
        .collect()
}

/// The explanation of the ruleset a scenario's `[ruleset]` runs, with
/// attributes mapped as that scenario maps them.
pub fn explain_in(s: &Scenario) -> Option<String> {
    let sec = s.ruleset.as_ref()?;
    let rs = sec.read.as_ref()?;
    Some(explain::explain(rs, &mapping(rs, Some(s), Some(sec))))
}

/// Reads `[ruleset]`'s file (relative to the scenario at `path`; the copy
/// `before` holds if it names the same file), ties it to the population and
/// maps it onto the scenario's sections. Runs before the scenario is
/// validated, so the sections it sets are checked like any other.
pub fn attach(
    s: &mut Scenario,
    before: &Scenario,
    path: &Path,
    written: FormatWritten,
) -> Result<(), ParamError> {
    let Some(sec) = s.ruleset.clone() else {
        return Ok(());
    };
    if !matches!(s.policy, PolicyConfig::Ruleset(_)) {
        return Err(ParamError::new(
            "policy.kind",
            format!(
                "is `{}`, but a [ruleset] section runs the ruleset as the policy: write `[policy] kind = \"ruleset\"`",
                s.policy.name()
            ),
        ));
    }
    let cached = before
        .ruleset
        .as_ref()
        .filter(|b| b.file == sec.file)
        .and_then(|b| Some((b.read.clone()?, b.sha256.clone()?)));
    let (read, sha) = match cached {
        Some(c) => c,
        None => {
            let full = path.parent().unwrap_or(Path::new(".")).join(&sec.file);
            let (rs, sha) =
                read_file(&full).map_err(|e| ParamError::new("ruleset.file", e.to_string()))?;
            (Arc::new(rs), sha)
        }
    };
    let mut rs = (*read).clone();
    // Every attribute a rule reads, tied to the population (or refused).
    for i in rs.used_attributes() {
        let name = rs.attributes[i].name.clone();
        let source = source_of(&sec, &name)?.ok_or_else(|| {
            ParamError::new(
                "ruleset.file",
                format!(
                    "attribute `{name}`: the simulated population has no attribute of that name; map it with `[ruleset] attributes = {{ {name} = \"...\" }}` to one of {}",
                    Source::NAMES.iter().map(|(n, _)| format!("`{n}`")).collect::<Vec<_>>().join(", ")
                ),
            )
        })?;
        if let Some(why) = missing(s, source) {
            return Err(ParamError::new(
                "ruleset.file",
                format!(
                    "attribute `{name}` maps to `{}`, which the population cannot supply: {why}",
                    source.name()
                ),
            ));
        }
    }
    let bind_source = |name: &str| source_of(&sec, name).ok().flatten();
    let vocab = |source: Source| vocabulary(s, source);
    rs.bind(bind_source, vocab).map_err(err)?;
    apply(s, &rs, written)?;
    let sec = s.ruleset.as_mut().expect("checked above");
    sec.read = Some(read);
    sec.sha256 = Some(sha);
    s.policy = PolicyConfig::Ruleset(RulesetParams {
        ruleset: Some(Arc::new(rs)),
    });
    Ok(())
}

/// Which of `[match]`'s format keys the scenario file (or a `--set`)
/// writes: a written key must agree with the ruleset, even when it equals
/// the default (`teams = 2` beside a three-team ruleset).
#[derive(Clone, Copy, Debug, Default)]
pub struct FormatWritten {
    pub teams: bool,
    pub team_size: bool,
}

/// The ruleset's format, latency rule, roles, acceptance and backfill, set
/// on the scenario's sections.
fn apply(s: &mut Scenario, rs: &Ruleset, written: FormatWritten) -> Result<(), ParamError> {
    let (teams, size) = (rs.teams as u32, rs.team_size as u32);
    for (key, is_written, asked, formed) in [
        ("match.teams", written.teams, s.format.teams, teams),
        (
            "match.team_size",
            written.team_size,
            s.format.team_size,
            size,
        ),
    ] {
        if is_written && asked != formed {
            return Err(ParamError::new(
                key,
                format!(
                    "is {asked}, but the ruleset forms {teams} teams of {size}; leave match.teams and match.team_size out (the ruleset sets them) or make them agree"
                ),
            ));
        }
    }
    s.format.teams = teams;
    s.format.team_size = size;
    if let Some((rule, max)) = rs.latency() {
        let regions = s.regions.as_mut().ok_or_else(|| {
            ParamError::new(
                "ruleset.file",
                format!(
                    "rule `{}` ({}) needs players' pings: add a [regions] section (data centres, home regions and their pings)",
                    rule.name,
                    rule.kind.type_name()
                ),
            )
        })?;
        // The ruleset's limits replace the file's, but a limit written in
        // the file is still held to what a ping may be: a NaN there is a
        // mistake to name, not to drop silently.
        regions.validate_limits().map_err(|e| {
            let key = format!("regions.{}", e.key);
            ParamError::new(key, e.message)
        })?;
        regions.max_ping_ms = max.base;
        regions.expansions = max
            .steps
            .iter()
            .map(|&(w, v)| ExpansionSection {
                after: HumanDuration(SimDuration::from_secs_f64(w)),
                max_ping_ms: v,
            })
            .collect();
    }
    debug_assert!(
        rs.rules
            .iter()
            .filter(|r| matches!(r.kind, RuleKind::Latency { .. }))
            .count()
            <= 1
    );
    if let Some(comp) = &rs.roles {
        let roles = s.roles.as_mut().ok_or_else(|| {
            ParamError::new(
                "ruleset.file",
                "the ruleset's role combination needs players' roles: add a [roles] section (names, shares)",
            )
        })?;
        for (name, _) in comp {
            if !roles.names.contains(name) {
                return Err(ParamError::new(
                    "roles.names",
                    format!(
                        "the ruleset's combination names role `{name}`, which is not among [roles] names ({})",
                        roles.names.join(", ")
                    ),
                ));
            }
        }
        roles.composition = roles
            .names
            .iter()
            .map(|n| {
                let k = comp.iter().find(|(c, _)| c == n).map_or(0, |(_, k)| *k);
                (n.clone(), k)
            })
            .collect();
    }
    if let Some(t) = rs.service.acceptance_timeout_s {
        let a = s.acceptance.as_mut().ok_or_else(|| {
            ParamError::new(
                "ruleset.file",
                "the configuration requires acceptance: add an [acceptance] section with the players' accept_prob",
            )
        })?;
        a.timeout = HumanDuration(SimDuration::from_secs_f64(t));
    }
    if let (Some(fill), Some(b)) = (rs.service.backfill, s.backfill.as_mut()) {
        b.fill = fill;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::from_text;
    use std::path::Path;

    const WORLD: &str = r#"
[run]
name = "t"
duration = "10m"

[population]
size = 200
skill = { dist = "normal", mean = 1500, sd = 300 }

[arrivals]
rate_per_s = 1.0

[policy]
kind = "ruleset"

[ruleset]
file = "r.json"

[roles]
names = ["dps", "tank", "healer"]
shares = [0.6, 0.2, 0.2]
composition = { dps = 1, tank = 1, healer = 1 }

[regions]
data_centres = ["eu"]
max_ping_ms = 400
[[regions.homes]]
name = "eu"
share = 1.0
ping_ms = [30]

[acceptance]
accept_prob = 0.9

[backfill]
leave_per_min = 0.01
fill = false
"#;

    /// An AccelByte role queue of 5v5 (three dps, a tank and a healer) with
    /// backfill and a latency expansion from 100 to 300 ms.
    const ROLE_RULESET: &str = r#"{ "alliance": { "min_number": 2, "max_number": 2, "player_max_number": 5,
        "combination": { "has_combination": true, "alliances": [[
          { "name": "dps", "min": 3, "max": 3 }, { "name": "tank", "min": 1, "max": 1 },
          { "name": "healer", "min": 1, "max": 1 } ]] } },
      "auto_backfill": true,
      "region_latency_initial_range_ms": 100, "region_expansion_rate_ms": 10000,
      "region_expansion_range_ms": 100, "region_latency_max_ms": 300 }"#;

    #[test]
    fn the_ruleset_sets_format_latency_roles_acceptance_and_backfill() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("r.json"), ROLE_RULESET).unwrap();
        let path = dir.path().join("s.toml");
        let s = from_text(WORLD, &path, &[])
            .unwrap_or_else(|e| panic!("{e}"))
            .scenario;
        assert_eq!((s.format.teams, s.format.team_size), (2, 5));
        let regions = s.regions.as_ref().unwrap();
        assert_eq!(regions.max_ping_ms, 100.0);
        let steps: Vec<(f64, f64)> = regions
            .expansions
            .iter()
            .map(|e| (e.after.secs(), e.max_ping_ms))
            .collect();
        assert_eq!(steps, vec![(10.0, 200.0), (20.0, 300.0)]);
        let comp = &s.roles.as_ref().unwrap().composition;
        assert_eq!(
            comp.iter()
                .map(|(k, v)| (k.as_str(), *v))
                .collect::<Vec<_>>(),
            vec![("dps", 3), ("healer", 1), ("tank", 1)]
        );
        assert!(
            s.backfill.as_ref().unwrap().fill,
            "auto_backfill turns fill on"
        );
        // No FlexMatch configuration: the scenario's ready check stays.
        assert_eq!(s.acceptance.as_ref().unwrap().timeout.secs(), 20.0);
        assert!(
            matches!(s.policy, mmsim_core::policy::PolicyConfig::Ruleset(ref p) if p.ruleset.is_some())
        );
    }

    /// A limit the ruleset's latency rule replaces is still checked: NaN
    /// was dropped silently.
    #[test]
    fn a_replaced_latency_limit_that_is_no_ping_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("r.json"), ROLE_RULESET).unwrap();
        let text = WORLD.replace("max_ping_ms = 400", "max_ping_ms = nan");
        let Err(e) = from_text(&text, &dir.path().join("s.toml"), &[]) else {
            panic!("a NaN latency limit was accepted");
        };
        let shown = e.to_string();
        assert!(shown.contains("`regions.max_ping_ms`"), "{shown}");
        assert!(shown.contains(":26:"), "{shown}");
    }

    #[test]
    fn a_flexmatch_configuration_sets_the_ready_check_s_timeout() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("r.json"),
            r#"{ "ruleSet": { "ruleLanguageVersion": "1.0",
                   "teams": [{ "name": "p", "maxPlayers": 3, "quantity": 2 }] },
                 "configuration": { "acceptanceRequired": true, "acceptanceTimeoutSeconds": 45,
                   "backfillMode": "MANUAL" } }"#,
        )
        .unwrap();
        let text = WORLD.replace("[roles]", "[roles_unused]");
        let text = text.split("[roles_unused]").next().unwrap().to_owned()
            + &WORLD[WORLD.find("[regions]").unwrap()..];
        let s = from_text(&text, &Path::new(dir.path()).join("s.toml"), &[])
            .unwrap_or_else(|e| panic!("{e}"))
            .scenario;
        assert_eq!((s.format.teams, s.format.team_size), (2, 3));
        assert_eq!(s.acceptance.as_ref().unwrap().timeout.secs(), 45.0);
        assert!(!s.backfill.as_ref().unwrap().fill);
        // No latency rule: the scenario's own limit stays.
        assert_eq!(s.regions.as_ref().unwrap().max_ping_ms, 400.0);
    }

    /// Issue 31: `match.teams = 2` beside a three-team ruleset was taken
    /// for "not written" (2 is the default), overridden to 3, and the saved
    /// scenario still said 2. A written key must agree, default or not.
    #[test]
    fn a_written_match_format_must_agree_with_the_ruleset_even_at_its_default() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("r.json"),
            r#"{ "ruleLanguageVersion": "1.0",
                 "teams": [{ "name": "t", "maxPlayers": 1, "quantity": 3 }] }"#,
        )
        .unwrap();
        let text = "[run]\nname = \"t\"\nduration = \"10m\"\n\
            [population]\nsize = 100\nskill = { dist = \"normal\", mean = 1500, sd = 300 }\n\
            [arrivals]\nrate_per_s = 0.5\n[policy]\nkind = \"ruleset\"\n\
            [ruleset]\nfile = \"r.json\"\n[rating]\nsystem = \"elo\"\n\
            [outcome]\nmodel = \"logistic\"\n";
        let path = dir.path().join("s.toml");
        let s = from_text(text, &path, &[])
            .unwrap_or_else(|e| panic!("{e}"))
            .scenario;
        assert_eq!((s.format.teams, s.format.team_size), (3, 1));
        let e = from_text(
            &text.replace("[policy]", "[match]\nteams = 2\n[policy]"),
            &path,
            &[],
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("match.teams") && e.contains("is 2, but the ruleset forms 3 teams of 1"),
            "{e}"
        );
        let e = from_text(
            text,
            &path,
            &["match.team_size=1".into(), "match.teams=2".into()],
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("match.teams"), "{e}");
        // Written and agreeing is fine.
        from_text(
            &text.replace("[policy]", "[match]\nteams = 3\nteam_size = 1\n[policy]"),
            &path,
            &[],
        )
        .unwrap_or_else(|e| panic!("{e}"));
    }
}
