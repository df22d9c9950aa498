//! `mmsim run --ruleset` and `mmsim explain-ruleset`: a vendor's ruleset
//! file run as the policy, or explained rule by rule.

use super::CliError;
use crate::ruleset::explain as text;
use crate::scenario::{self, ruleset};
use std::path::{Path, PathBuf};

/// The overrides `--ruleset FILE` adds: the policy becomes the ruleset and
/// `[ruleset] file` names FILE (made absolute, since a scenario's paths are
/// relative to the scenario file).
pub fn with_ruleset(mut sets: Vec<String>, file: Option<&Path>) -> Result<Vec<String>, CliError> {
    let Some(file) = file else {
        return Ok(sets);
    };
    let abs: PathBuf = std::path::absolute(file)
        .map_err(|e| CliError::BadInput(format!("--ruleset {}: {e}", file.display())))?;
    let quoted = toml::Value::String(abs.to_string_lossy().into_owned()).to_string();
    sets.push("policy={ kind = \"ruleset\" }".to_owned());
    sets.push(format!("ruleset.file={quoted}"));
    // The flag runs the ruleset's match on the scenario's population: its
    // format replaces the file's `[match]` (a scenario's own `[ruleset]`
    // section must agree with what it writes instead), and the saved
    // scenario says so.
    if let Ok((rs, _)) = ruleset::read_file(&abs) {
        sets.push(format!("match.teams={}", rs.teams));
        sets.push(format!("match.team_size={}", rs.team_size));
    }
    Ok(sets)
}

/// The explanation of `file`; with a scenario, attributes are mapped as its
/// population and `[ruleset]` section would (and refused as a run would).
pub fn explain(file: &Path, scenario_path: Option<&Path>) -> Result<String, CliError> {
    let (rs, _) = ruleset::read_file(file).map_err(|e| CliError::BadInput(e.to_string()))?;
    match scenario_path {
        None => {
            let mapping = ruleset::mapping(&rs, None, None);
            Ok(text::explain(&rs, &mapping))
        }
        Some(path) => {
            let sets = with_ruleset(Vec::new(), Some(file))?;
            let loaded = scenario::load(path, &sets)?;
            Ok(ruleset::explain_in(&loaded.scenario).unwrap_or_default())
        }
    }
}

/// `mmsim validate`'s line about the scenario's ruleset, if it has one.
pub fn validate_line(s: &scenario::Scenario) -> Option<String> {
    let sec = s.ruleset.as_ref()?;
    let rs = sec.read.as_ref()?;
    Some(format!(
        "ruleset {}: {}{}, {} rule{}, {} teams of {} (`mmsim explain-ruleset` says what each rule becomes)",
        sec.file,
        rs.vendor.label(),
        if rs.name.is_empty() {
            String::new()
        } else {
            format!(" `{}`", rs.name)
        },
        rs.rules.len(),
        if rs.rules.len() == 1 { "" } else { "s" },
        rs.teams,
        rs.team_size,
    ))
}
