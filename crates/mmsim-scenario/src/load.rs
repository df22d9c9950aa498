//! Turning a file and `--set` overrides into a validated `Scenario`, with
//! errors that name the key, its line and what is allowed.

use super::schema_error::{read, Misread, SchemaError};
use super::Scenario;
use mmsim_core::model::{ParamError, SimDuration};
use std::path::{Path, PathBuf};

/// Why a scenario cannot be rerun with another seed (`LoadedScenario::with_run`).
#[derive(Debug, thiserror::Error)]
pub enum WithRunError {
    /// A seed TOML cannot hold.
    #[error("--seed {0}: must be at most {max} (a TOML integer), so the saved scenario.toml can record it", max = i64::MAX)]
    Seed(u64),
    /// The effective scenario's text no longer parses (a bug: it was read once).
    #[error("the effective scenario does not parse again: {0}")]
    Reparse(String),
}

#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    #[error("cannot read scenario {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}{}: {message}", line.map(|l| format!(":{l}")).unwrap_or_default())]
    Parse {
        path: PathBuf,
        line: Option<usize>,
        message: String,
    },
    #[error("{path}{}: `{key}` {message}", line.map(|l| format!(":{l}")).unwrap_or_default())]
    Invalid {
        path: PathBuf,
        key: String,
        line: Option<usize>,
        message: String,
    },
    #[error("--set {arg}: {message}")]
    Set { arg: String, message: String },
}

/// A scenario ready to run, with the text it came from (overrides applied).
#[derive(Clone, Debug)]
pub struct LoadedScenario {
    pub scenario: Scenario,
    /// The effective scenario as TOML, for the report and reproduction.
    pub text: String,
    pub path: PathBuf,
    /// The file as read: errors on keys no override touched cite its lines.
    source: String,
    /// The parsed file with every override applied, so more overrides
    /// (a sweep's settings) start from memory rather than the file.
    table: toml::Table,
    /// The overrides applied so far, in order: an error on one of their
    /// keys blames the override rather than the file.
    sets: Vec<String>,
}

/// The largest scenario file read: presets are a few kB, and a limit keeps
/// `mmsim run /dev/urandom` (or a mistyped multi-GB path) from reading on.
pub const MAX_SCENARIO_BYTES: u64 = 1 << 20;

pub fn load(path: &Path, sets: &[String]) -> Result<LoadedScenario, ScenarioError> {
    let text = read_bounded(path, MAX_SCENARIO_BYTES).map_err(|source| ScenarioError::Io {
        path: path.to_owned(),
        source,
    })?;
    from_text(&text, path, sets)
}

/// Reads a text file of at most `max_bytes`, refusing a longer one (or a
/// device that never ends) after reading one byte past the limit.
pub fn read_bounded(path: &Path, max_bytes: u64) -> std::io::Result<String> {
    use std::io::Read as _;
    let file = std::fs::File::open(path)?;
    let mut bytes = Vec::new();
    file.take(max_bytes + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max_bytes {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "the file is larger than the {} kB allowed (a scenario or input is a few kB)",
                max_bytes / 1024
            ),
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("not UTF-8 text ({e})"),
        )
    })
}

pub fn from_text(
    text: &str,
    path: &Path,
    sets: &[String],
) -> Result<LoadedScenario, ScenarioError> {
    // Schema errors in the file itself come with the file's lines.
    let table = parse(path, text)?;
    let scenario: Scenario = read(&table).map_err(|m| schema_error::<Scenario>(path, text, &m))?;
    // Not yet validated: an override may repair a value the file gets wrong.
    let parsed = LoadedScenario {
        scenario,
        text: text.to_owned(),
        path: path.to_owned(),
        source: text.to_owned(),
        table,
        sets: Vec::new(),
    };
    parsed.with_sets(sets)
}

impl LoadedScenario {
    /// This scenario with more `--set` overrides applied, validated. The
    /// one path for `--set` on the command line and for each setting of a
    /// sweep or a tuning grid: an unknown or invalid key fails the same way
    /// in both, and neither reads the file again.
    pub fn with_sets(&self, sets: &[String]) -> Result<LoadedScenario, ScenarioError> {
        let mut table = self.table.clone();
        let mut scenario = None;
        for arg in sets {
            apply_set(&mut table, arg)?;
            // Checked one by one, so the error blames the override that broke it.
            scenario = Some(read(&table).map_err(|m| ScenarioError::Set {
                arg: arg.clone(),
                message: switched_plugin(&table, arg, &m.error),
            })?);
        }
        let scenario = scenario.unwrap_or_else(|| self.scenario.clone());
        let mut all_sets = self.sets.clone();
        all_sets.extend(sets.iter().cloned());
        let mut scenario = scenario;
        let written = |key: &str| {
            table
                .get("match")
                .and_then(|m| m.as_table())
                .is_some_and(|m| m.contains_key(key))
        };
        let format_written = super::ruleset::FormatWritten {
            teams: written("teams"),
            team_size: written("team_size"),
        };
        super::ruleset::attach(&mut scenario, &self.scenario, &self.path, format_written)
            .map_err(|e| blame(&self.path, &self.source, &all_sets, e))?;
        scenario
            .validate()
            .map_err(|e| blame(&self.path, &self.source, &all_sets, e))?;
        super::trace::attach(&mut scenario, &self.scenario, &self.path)
            .map_err(|e| blame(&self.path, &self.source, &all_sets, e))?;
        super::ladder::attach(&mut scenario, &self.scenario, &self.path)
            .map_err(|e| blame(&self.path, &self.source, &all_sets, e))?;
        // `text`, not `source`: a seed set by `with_run` stays in it.
        let text = if all_sets.is_empty() {
            self.text.clone()
        } else {
            toml::to_string(&table).unwrap_or_else(|_| self.source.clone())
        };
        Ok(LoadedScenario {
            scenario,
            text,
            path: self.path.clone(),
            source: self.source.clone(),
            table,
            sets: all_sets,
        })
    }

    /// This scenario as actually run: `run.seed` set to `seed` and, when
    /// given, `run.replications` to `replications`, in the scenario and in
    /// its text (comments kept), so the saved `scenario.toml` reruns to the
    /// same numbers. Fails only for a seed TOML cannot hold (above i64::MAX).
    pub fn with_run(
        &self,
        seed: u64,
        replications: Option<u32>,
    ) -> Result<LoadedScenario, WithRunError> {
        let reps = replications.unwrap_or(self.scenario.run.replications);
        if seed == self.scenario.run.seed && reps == self.scenario.run.replications {
            return Ok(self.clone());
        }
        let seed_i64 = i64::try_from(seed).map_err(|_| WithRunError::Seed(seed))?;
        let mut doc: toml_edit::DocumentMut = self
            .text
            .parse()
            .map_err(|e: toml_edit::TomlError| WithRunError::Reparse(e.to_string()))?;
        let mut out = self.clone();
        let mut changed = Vec::new();
        if seed != self.scenario.run.seed {
            changed.push(("seed", seed_i64));
        }
        if reps != self.scenario.run.replications {
            changed.push(("replications", i64::from(reps)));
        }
        for (key, v) in changed {
            doc["run"][key] = toml_edit::value(v);
            if let Some(toml::Value::Table(run)) = out.table.get_mut("run") {
                run.insert(key.into(), toml::Value::Integer(v));
            }
        }
        out.text = doc.to_string();
        out.scenario.run.seed = seed;
        out.scenario.run.replications = reps;
        Ok(out)
    }

    /// What running this scenario will take, refused when the memory it
    /// needs is more than `available_bytes` (the machine's, from the
    /// caller); the error names the key that drives the estimate.
    pub fn check_budget(&self, available_bytes: Option<u64>) -> Result<Budget, ScenarioError> {
        let budget = Budget::of(&self.scenario);
        match available_bytes {
            Some(avail) if budget.memory_bytes > avail => Err(blame(
                &self.path,
                &self.source,
                &self.sets,
                ParamError::new(
                    "population.size",
                    format!(
                        "needs about {} of memory for {} players ({} bytes each) but this machine has {} available (MemAvailable in /proc/meminfo); lower population.size",
                        gb(budget.memory_bytes),
                        self.scenario.population.size,
                        BYTES_PER_PLAYER,
                        gb(avail)
                    ),
                ),
            )),
            _ => Ok(budget),
        }
    }

    /// Refuses a run whose least CPU time (`Budget::min_cpu_s`, at rates
    /// no run beats) is over `MAX_MIN_CPU_S`: almost always a mistaken
    /// rate, profile or duration, and a run that would seem to hang. The
    /// error names the key that drives the estimate; `--force` skips this.
    pub fn check_time(&self) -> Result<(), ScenarioError> {
        let b = Budget::of(&self.scenario);
        if b.min_cpu_s <= MAX_MIN_CPU_S {
            return Ok(());
        }
        // The profile is to blame when the same run at multiplier 1 would pass.
        let flat = Budget::with_profile(&self.scenario, None);
        let (key, what) =
            if self.scenario.arrivals.daily_profile.is_some() && flat.min_cpu_s <= MAX_MIN_CPU_S {
                (
                    "arrivals.daily_profile",
                    "is too high in the hours this run reaches",
                )
            } else {
                ("arrivals.rate_per_s", "is too high for this run")
            };
        Err(blame(
            &self.path,
            &self.source,
            &self.sets,
            ParamError::new(
                key,
                format!(
                    "{what}: over its {:.1} h it would draw about {:.1e} arrivals, at least {:.0} \
                     hours of CPU even at the fastest rates, and the limit is {:.0}. Lower the \
                     rate, the multipliers or run.duration, or pass --force to run it anyway",
                    self.scenario.run.duration.0.as_secs_f64() / 3600.0,
                    b.arrival_draws,
                    b.min_cpu_s / 3600.0,
                    MAX_MIN_CPU_S / 3600.0
                ),
            ),
        ))
    }

    /// A section the scenario schema leaves to another layer (`[sweep]`,
    /// read by `tune`), read as `T` from the whole file with the loader's
    /// errors: the file's line for a mistake in the file, the overrides for
    /// one they introduced. `T` should ignore the sections it does not own.
    pub fn section<T: serde::de::DeserializeOwned>(&self) -> Result<T, ScenarioError> {
        let from_file: T = read(&parse(&self.path, &self.source)?)
            .map_err(|m| schema_error::<T>(&self.path, &self.source, &m))?;
        if self.sets.is_empty() {
            return Ok(from_file);
        }
        read(&self.table).map_err(|m| ScenarioError::Set {
            arg: self.sets.join(" "),
            message: m.error.to_string(),
        })
    }
}

/// Applies `a.b.c=value`; the value is read as TOML (`150`, `"30s"`, `true`,
/// `[1, 2]`) and, failing that, as a bare string.
fn apply_set(table: &mut toml::Table, arg: &str) -> Result<(), ScenarioError> {
    let bad = |message: String| ScenarioError::Set {
        arg: arg.to_owned(),
        message,
    };
    let (key, raw) = arg
        .split_once('=')
        .ok_or_else(|| bad("write it as KEY=VALUE, e.g. policy.limit=200".into()))?;
    let key = key.trim();
    let parts: Vec<&str> = key.split('.').map(str::trim).collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err(bad(format!(
            "`{key}` is not a dotted key like policy.limit"
        )));
    }
    let value = toml::from_str::<toml::Table>(&format!("v = {raw}"))
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(raw.trim().to_owned()));
    let mut node = table;
    for (i, part) in parts[..parts.len() - 1].iter().enumerate() {
        let entry = node
            .entry(part.to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        node = match entry {
            toml::Value::Table(t) => t,
            _ => {
                return Err(bad(format!(
                    "`{}` is a value, not a section, so it has no key `{}`",
                    parts[..=i].join("."),
                    parts[i + 1]
                )))
            }
        };
    }
    node.insert(parts[parts.len() - 1].to_string(), value);
    Ok(())
}

/// A value the checks refused, blamed on the `--set` that gave it when one
/// did, otherwise on the key's line in the file.
fn blame(path: &Path, source: &str, sets: &[String], e: ParamError) -> ScenarioError {
    let overridden = sets
        .iter()
        .find(|s| s.split('=').next().map(str::trim) == Some(e.key.as_str()));
    match overridden {
        Some(arg) => ScenarioError::Set {
            arg: arg.clone(),
            message: format!("`{}` {}", e.key, e.message),
        },
        None => ScenarioError::Invalid {
            path: path.to_owned(),
            line: line_of_key(source, &e.key),
            key: e.key,
            message: e.message,
        },
    }
}

/// Resident memory per player measured on release builds (1M and 4M
/// players of smoke.toml: 165 MB and 618 MB peak, 151 bytes a player),
/// rounded up for the attribute presets (dota2-day: ~200 bytes).
pub const BYTES_PER_PLAYER: u64 = 200;
/// What a run holds whatever its size: the binary, buffers, histograms.
const BASE_BYTES: u64 = 64 << 20;
/// Tickets per second of CPU in the simplest case (bench-1v1, widening, on
/// a 2-core machine): team formats and the `quality` policy are slower.
const TICKETS_PER_CPU_S: f64 = 400_000.0;
/// Arrival draws a CPU second at most (a draw the profile thins away still
/// draws its party, members and patience, for common random numbers).
const DRAWS_PER_CPU_S: f64 = 10_000_000.0;
/// A run whose least CPU time is more than this is refused unless forced:
/// a day of CPU, at rates no run beats, is a scenario mistake far more
/// often than a wish.
pub const MAX_MIN_CPU_S: f64 = 86_400.0;
const HOUR_MS: u64 = 3_600_000;

/// The hours of the day (0 to 23) a run of `duration` reaches, as the
/// engine indexes the daily profile.
pub fn hours_reached(duration: SimDuration) -> impl Iterator<Item = usize> {
    // The last arrival may fall on the end itself, in the next hour.
    let hours = (duration.as_ms() / HOUR_MS + 1).min(24);
    0..hours as usize
}

/// The daily profile's rate summed over each millisecond from `a` to `b`
/// (hour by hour, as the engine follows it).
pub fn profile_ms(profile: &[f64], a: SimDuration, b: SimDuration) -> f64 {
    let mut covered = 0.0;
    let mut t = a.as_ms();
    while t < b.as_ms() {
        let end = ((t / HOUR_MS + 1) * HOUR_MS).min(b.as_ms());
        covered += profile[((t / HOUR_MS) % 24) as usize] * (end - t) as f64;
        t = end;
    }
    covered
}

/// The daily profile's busiest hour among those a run of `duration`
/// reaches: the multiplier the engine draws arrivals at.
pub fn busiest_hour(profile: &[f64], duration: SimDuration) -> f64 {
    hours_reached(duration)
        .map(|h| profile[h])
        .fold(0.0, f64::max)
}

/// A run's rough cost, known before it starts.
#[derive(Clone, Debug, PartialEq)]
pub struct Budget {
    /// Tickets the arrivals and requeues should bring over the run.
    pub expected_tickets: f64,
    /// Arrivals the engine draws, kept or thinned by the daily profile.
    pub arrival_draws: f64,
    /// Peak memory: the players' table dominates (the rows stream out).
    pub memory_bytes: u64,
    /// CPU seconds at the fastest measured rate: a lower bound.
    pub min_cpu_s: f64,
}

impl Budget {
    pub fn of(s: &super::Scenario) -> Budget {
        Budget::with_profile(s, s.arrivals.daily_profile.as_deref())
    }

    /// `of`, with `profile` in place of the scenario's daily profile.
    fn with_profile(s: &super::Scenario, profile: Option<&[f64]>) -> Budget {
        let duration = s.run.duration.0;
        let duration_s = duration.as_secs_f64();
        // The profile's mean over the run, hour by hour as the engine
        // follows it, and the multiplier it draws at (the busiest hour
        // reached): every draw costs, kept or thinned.
        let (profile, peak) = match profile {
            None => (1.0, 1.0),
            Some(p) => {
                let covered = profile_ms(p, SimDuration::ZERO, duration);
                let mean = covered / duration.as_ms().max(1) as f64;
                (mean, busiest_hour(p, duration))
            }
        };
        let draws = s.arrivals.rate_per_s * peak * duration_s;
        // Each played ticket comes back with requeue_prob, a geometric
        // series; capped, as players also leave by abandoning.
        let q = s.arrivals.requeue_prob.min(0.95);
        // A trace gives its tickets and players outright.
        let (expected_tickets, players) = match &s.arrivals.trace_data {
            Some(t) => (
                t.tickets
                    .iter()
                    .filter(|k| k.at.as_secs_f64() <= duration_s)
                    .count() as f64,
                t.players.len() as u64,
            ),
            None => (
                s.arrivals.rate_per_s * duration_s * profile / (1.0 - q),
                u64::from(s.population.size),
            ),
        };
        // With regions, each player also holds a home and a ping per data centre.
        let per_player = BYTES_PER_PLAYER
            + s.regions
                .as_ref()
                .map_or(0, |r| 2 + 2 * r.data_centres.len() as u64);
        let memory_bytes = BASE_BYTES + players * per_player;
        let draws = if s.arrivals.trace_data.is_some() {
            0.0
        } else {
            draws
        };
        Budget {
            expected_tickets,
            arrival_draws: draws,
            memory_bytes,
            min_cpu_s: expected_tickets / TICKETS_PER_CPU_S + draws / DRAWS_PER_CPU_S,
        }
    }
}

/// Bytes in the units a person reads.
pub fn gb(bytes: u64) -> String {
    if bytes >= 1 << 30 {
        format!("{:.1} GB", bytes as f64 / f64::from(1u32 << 30))
    } else {
        format!("{} MB", bytes >> 20)
    }
}

/// The file as TOML, or the syntax error at its line.
fn parse(path: &Path, text: &str) -> Result<toml::Table, ScenarioError> {
    toml::from_str(text).map_err(|e: toml::de::Error| ScenarioError::Parse {
        path: path.to_owned(),
        line: e.span().map(|s| line_at(text, s.start)),
        message: e.message().trim().replace('\n', " "),
    })
}

/// A schema error of the file, naming the key it is about at the key's own
/// line when the file lets us find it.
fn schema_error<T: serde::de::DeserializeOwned>(
    path: &Path,
    text: &str,
    m: &Misread,
) -> ScenarioError {
    let retry = |changed: &str| {
        let table = toml::from_str(changed).ok()?;
        read::<T>(&table).err().map(|m| m.error)
    };
    let found = super::locate::locate(text, m, Some(&retry));
    match found.key {
        Some(key) => ScenarioError::Invalid {
            path: path.to_owned(),
            key,
            line: found.line,
            message: found.message,
        },
        None => ScenarioError::Parse {
            path: path.to_owned(),
            line: found.line,
            message: found.message,
        },
    }
}

/// 1-based line of a byte offset.
fn line_at(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// Line of a dotted key in the file, or of the deepest section of it present.
pub fn line_of_key(text: &str, dotted: &str) -> Option<usize> {
    use toml_edit::{Item, Value};
    let doc = toml_edit::ImDocument::parse(text.to_owned()).ok()?;
    let mut item: &Item = doc.as_item();
    let mut best = None;
    for part in dotted.split('.') {
        // `homes[1]`: the key, then an entry of its array (of tables).
        let (name, index) = match part.split_once('[') {
            Some((name, rest)) => (name, rest.trim_end_matches(']').parse::<usize>().ok()),
            None => (part, None),
        };
        let found = match item {
            Item::Table(t) => t.get_key_value(name),
            Item::Value(Value::InlineTable(t)) => t.get_key_value(name),
            _ => None,
        };
        let Some((key, next)) = found else { break };
        if let Some(span) = key.span() {
            best = Some(line_at(text, span.start));
        }
        item = next;
        if let Some(i) = index {
            let entry_at = match item {
                Item::ArrayOfTables(a) => a.get(i).and_then(|t| t.span()),
                Item::Value(Value::Array(a)) => a.get(i).and_then(|v| v.span()),
                _ => None,
            };
            let Some(at) = entry_at else { break };
            best = Some(line_at(text, at.start));
            // Walk on into the entry: its keys are found by name below.
            let entry = match item {
                Item::ArrayOfTables(a) => a.get(i).map(|t| Item::Table(t.clone())),
                Item::Value(Value::Array(a)) => a.get(i).map(|v| Item::Value(v.clone())),
                _ => None,
            };
            match entry {
                Some(e) => return line_in_entry(text, e, dotted, part).or(best),
                None => break,
            }
        }
    }
    best
}

/// The rest of `dotted` after `part`, looked up inside one entry of an array
/// (owned, since a table of an array of tables is not an `Item` in place).
fn line_in_entry(text: &str, entry: toml_edit::Item, dotted: &str, part: &str) -> Option<usize> {
    use toml_edit::{Item, Value};
    let rest = dotted.split_once(&format!("{part}.")).map(|(_, r)| r)?;
    let mut item = entry;
    let mut best = None;
    for name in rest.split('.') {
        let next = match &item {
            Item::Table(t) => t.get_key_value(name).map(|(k, v)| (k.span(), v.clone())),
            Item::Value(Value::InlineTable(t)) => {
                t.get_key_value(name).map(|(k, v)| (k.span(), v.clone()))
            }
            _ => None,
        };
        let Some((span, next)) = next else { break };
        if let Some(span) = span {
            best = Some(line_at(text, span.start));
        }
        item = next;
    }
    best
}

/// The message for a `--set` that switches a plug-in (`policy.kind=...`,
/// `rating.system=...`) and leaves the old one's keys in its section: they
/// are named, with how to set the section whole, before the schema's own
/// message.
fn switched_plugin(table: &toml::Table, arg: &str, error: &SchemaError) -> String {
    const TAGS: [&str; 4] = ["kind", "system", "model", "method"];
    let message = error.to_string();
    let Some((key, value)) = arg.split_once('=') else {
        return message;
    };
    let Some((section, tag)) = key.trim().split_once('.') else {
        return message;
    };
    let Some(t) = table.get(section).and_then(|v| v.as_table()) else {
        return message;
    };
    if !TAGS.contains(&tag) || section.contains('.') {
        return message;
    }
    // The new plug-in's keys, as the schema's error lists them.
    let allowed = error.allowed();
    let left: Vec<String> = t
        .keys()
        .filter(|k| k.as_str() != tag && !allowed.contains(&k.as_str()))
        .map(|k| format!("`{k}`"))
        .collect();
    if left.is_empty() {
        return message;
    }
    let value = value.trim().trim_matches('"');
    format!(
        "[{section}] still holds the previous {tag}'s keys {}, which `{value}` does not take ({message}); to switch, set the section whole: --set '{section}={{ {tag} = \"{value}\" }}' (adding its keys inside the braces)",
        left.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = r#"[run]
name = "t"
duration = "1h"

[population]
size = 100
skill = { dist = "normal", mean = 1500, sd = 300 }

[arrivals]
rate_per_s = 1.0

[policy]
kind = "fixed-limit"
limit = 150
"#;

    fn load_str(text: &str, sets: &[&str]) -> Result<LoadedScenario, ScenarioError> {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        from_text(text, Path::new("t.toml"), &sets)
    }

    #[test]
    fn a_valid_file_loads_with_defaults_filled_in() {
        let s = load_str(BASE, &[]).unwrap().scenario;
        assert_eq!(s.run.seed, 1);
        assert_eq!(s.format.team_size, 1);
        assert_eq!(s.policy.name(), "fixed-limit");
    }

    #[test]
    fn an_unknown_key_is_named_with_its_line() {
        let text = BASE.replace("limit = 150", "limit = 150\nlimt = 3");
        let err = load_str(&text, &[]).unwrap_err().to_string();
        assert!(err.contains("limt"), "{err}");
        assert!(err.contains("t.toml:"), "{err}");
    }

    #[test]
    fn a_bad_value_names_key_line_and_what_is_allowed() {
        let text = BASE.replace("rate_per_s = 1.0", "rate_per_s = -2.0");
        let err = load_str(&text, &[]).unwrap_err();
        match &err {
            ScenarioError::Invalid {
                key, line, message, ..
            } => {
                assert_eq!(key, "arrivals.rate_per_s");
                assert_eq!(*line, Some(10));
                assert!(message.contains("above 0"), "{message}");
            }
            other => panic!("wrong error {other}"),
        }
        let text = BASE.replace("limit = 150", "limit = -1");
        let err = load_str(&text, &[]).unwrap_err().to_string();
        assert!(
            err.contains("t.toml:14") && err.contains("policy.limit"),
            "{err}"
        );
    }

    #[test]
    fn set_overrides_values_and_refuses_unknown_keys() {
        let s = load_str(BASE, &["policy.limit=200", "run.seed=9"]).unwrap();
        assert_eq!(s.scenario.run.seed, 9);
        assert!(s.text.contains("limit = 200"));
        let err = load_str(BASE, &["policy.limt=200"])
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("--set policy.limt=200") && err.contains("limt"),
            "{err}"
        );
        let err = load_str(BASE, &["policy.limit=-5"])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("--set policy.limit=-5") && err.contains("zero or more"),
            "{err}"
        );
        let err = load_str(BASE, &["nonsense"]).unwrap_err().to_string();
        assert!(err.contains("KEY=VALUE"), "{err}");
    }

    #[test]
    fn overrides_in_memory_match_overrides_read_with_the_file() {
        let base = load_str(BASE, &["run.seed=9"]).unwrap();
        let sets = ["policy.limit=200".to_string(), "run.name=\"u\"".to_string()];
        let in_memory = base.with_sets(&sets).unwrap();
        let from_file =
            load_str(BASE, &["run.seed=9", "policy.limit=200", "run.name=\"u\""]).unwrap();
        assert_eq!(in_memory.scenario, from_file.scenario);
        assert_eq!(in_memory.text, from_file.text);
        assert_eq!(base.with_sets(&[]).unwrap().text, base.text);
        // The base's own overrides are still blamed by name.
        let err = base.with_sets(&["policy.limit=-5".into()]).unwrap_err();
        assert!(
            err.to_string().starts_with("--set policy.limit=-5"),
            "{err}"
        );
        // A key no override touched is cited at its line in the file.
        let err = base
            .with_sets(&["population.size=1".into()])
            .unwrap_err()
            .to_string();
        assert!(err.contains("--set population.size=1"), "{err}");
        let bad = load_str(
            &BASE.replace("limit = 150", "limit = -1"),
            &["policy.limit=5"],
        )
        .unwrap();
        let err = bad
            .with_sets(&["policy.limit=-2".into()])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("--set policy.limit=") && err.contains("-2"),
            "{err}"
        );
    }

    #[test]
    fn quantile_tables_must_increase() {
        let text = BASE.replace(
            r#"skill = { dist = "normal", mean = 1500, sd = 300 }"#,
            r#"skill = { dist = "quantiles", table = [[0.1, 1000], [0.5, 900]] }"#,
        );
        let err = load_str(&text, &[]).unwrap_err().to_string();
        assert!(
            err.contains("population.skill.table") && err.contains("increasing"),
            "{err}"
        );
        assert!(err.contains("t.toml:7"), "{err}");
    }

    #[test]
    fn the_seed_run_is_written_into_the_text_with_its_comments() {
        let text = BASE.replace("name = \"t\"", "name = \"t\" # the name\nseed = 7");
        let loaded = load_str(&text, &["policy.limit=151"]).unwrap();
        let same = loaded.with_run(7, None).unwrap();
        assert_eq!(same.text, loaded.text);
        let run = load_str(&text, &[]).unwrap().with_run(42, Some(3)).unwrap();
        assert_eq!(
            (run.scenario.run.seed, run.scenario.run.replications),
            (42, 3)
        );
        assert!(run.text.contains("# the name"), "{}", run.text);
        let again = load_str(&run.text, &[]).unwrap();
        assert_eq!(again.scenario, run.scenario);
        // Later overrides start from the seed run, not the file's seed.
        assert_eq!(
            run.with_sets(&["policy.limit=9".into()])
                .unwrap()
                .scenario
                .run
                .seed,
            42
        );
        let err = loaded.with_run(u64::MAX, None).unwrap_err().to_string();
        assert!(
            err.contains("--seed") && err.contains("9223372036854775807"),
            "{err}"
        );
    }

    #[test]
    fn a_traced_scenario_s_budget_counts_the_trace_s_tickets_and_players() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/trace-replay.toml");
        let loaded = load(&path, &[]).unwrap();
        let t = loaded
            .scenario
            .arrivals
            .trace_data
            .as_ref()
            .expect("a trace");
        let b = Budget::of(&loaded.scenario);
        let duration_s = loaded.scenario.run.duration.0.as_secs_f64();
        let within = t
            .tickets
            .iter()
            .filter(|k| k.at.as_secs_f64() <= duration_s)
            .count();
        assert!(within > 1000, "{within}");
        assert_eq!(b.expected_tickets, within as f64);
        assert_eq!(
            b.memory_bytes,
            BASE_BYTES + t.players.len() as u64 * BYTES_PER_PLAYER
        );
        // Cut short, the run meets fewer of the trace's tickets.
        let short = load(
            &path,
            &["run.duration=10m".to_string(), "run.warmup=1m".to_string()],
        )
        .unwrap();
        assert!(Budget::of(&short.scenario).expected_tickets < within as f64);
    }

    #[test]
    fn the_budget_follows_the_profile_over_the_hours_the_run_reaches() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/smoke.toml");
        let mut hours = vec!["1".to_string(); 24];
        hours[0] = "2".into();
        hours[1] = "0.5".into();
        hours[5] = "1000".into();
        let sets = vec![
            format!("arrivals.daily_profile=[{}]", hours.join(",")),
            "run.duration=90m".to_string(),
            "run.warmup=0s".to_string(),
        ];
        let loaded = load(&path, &sets).unwrap();
        let s = &loaded.scenario;
        let b = Budget::of(s);
        let q = s.arrivals.requeue_prob.min(0.95);
        let rate = s.arrivals.rate_per_s;
        // An hour at 2, half an hour at 0.5; hour 5 is never reached.
        let fresh = rate * (3600.0 * 2.0 + 1800.0 * 0.5);
        assert!(
            (b.expected_tickets - fresh / (1.0 - q)).abs() < 1e-6 * fresh,
            "{b:?}"
        );
        // Drawn at the busiest hour reached, 2, for the whole run.
        assert!(
            (b.arrival_draws - rate * 2.0 * 5400.0).abs() < 1e-6,
            "{b:?}"
        );
        assert!(loaded.check_time().is_ok());
        // Reached, the thousandfold hour is drawn at for the whole run.
        let long = load(&path, &[sets[0].clone(), "run.duration=6h".into()]).unwrap();
        assert!((Budget::of(&long.scenario).arrival_draws - rate * 1000.0 * 21600.0).abs() < 1e-3);
    }

    #[test]
    fn bad_toml_is_a_parse_error_with_a_line() {
        let err = load_str("[run]\nname = \n", &[]).unwrap_err();
        assert!(
            matches!(err, ScenarioError::Parse { line: Some(2), .. }),
            "{err}"
        );
    }

    /// The loader reads through its own deserializer: every preset must
    /// read to exactly what toml's own gives, and load.
    #[test]
    fn every_preset_reads_as_toml_reads_it_and_loads() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
        let mut presets: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "toml"))
            .collect();
        presets.sort();
        assert!(presets.len() >= 15, "{presets:?}");
        for p in presets {
            let text = std::fs::read_to_string(&p).unwrap();
            let ours: Scenario = read(&parse(&p, &text).unwrap()).unwrap();
            let toml_s: Scenario = toml::from_str(&text).unwrap();
            assert_eq!(ours, toml_s, "{}", p.display());
            load(&p, &[]).unwrap_or_else(|e| panic!("{e}"));
        }
    }

    /// Each of serde's structured errors, read from the real schema, gives
    /// the designer's message at the key's own line.
    #[test]
    fn each_schema_error_names_its_key_line_and_what_is_allowed() {
        let refused = |from: &str, to: &str| match load_str(&BASE.replace(from, to), &[]) {
            Err(ScenarioError::Invalid {
                key, line, message, ..
            }) => (key, line.unwrap_or(0), message),
            other => panic!("{from} -> {to}: {other:?}"),
        };
        let widening = "kind = \"widening\"\nbase = 100";
        for (from, to, want) in [
            (
                "duration = \"1h\"",
                "duration = \"1h\"\nseeds = 2",
                ("run.seeds", 4, "is not a key here; allowed: `name`, `seed`, `duration`, `warmup`, `replications`"),
            ),
            // A plug-in whose struct flattens its cadence lists those keys too.
            (
                "kind = \"fixed-limit\"\nlimit = 150",
                &format!("{widening}\nmaxx = 3"),
                ("policy.maxx", 15, "is not a key here; allowed: `base`, `rate_per_s`, `max`, `mode`, `recheck`, `tick`"),
            ),
            (
                "kind = \"fixed-limit\"",
                "kind = \"fixed-limitt\"",
                ("policy.kind", 13, "`fixed-limitt` is not allowed; allowed: `fixed-limit`, `widening`, `percent-widening`, `percentile-window`, `adaptive-brackets`, `batch-weighted`, `weighted-score`, `sweep-prune`, `virtual-decay`, `quality`, `eomm`, `skill`, `random`, `worst`, `ruleset`"),
            ),
            (
                ", sd = 300 }",
                " }",
                ("population.skill.sd", 7, "is missing: this section needs it"),
            ),
            (
                "rate_per_s = 1.0",
                "rate_per_s = \"fast\"",
                ("arrivals.rate_per_s", 10, "expected a number, got string \"fast\""),
            ),
            (
                "rate_per_s = 1.0",
                "rate_per_s = 1.0\nparty_sizes = 0.5",
                ("arrivals.party_sizes", 11, "expected a list, e.g. [1, 2], got floating point `0.5`"),
            ),
            (
                "skill = { dist = \"normal\", mean = 1500, sd = 300 }",
                "skill = \"normal\"",
                ("population.skill", 7, "expected a table such as { dist = \"normal\", mean = 1500, sd = 350 }, got string \"normal\""),
            ),
            // Inside a tagged inline table, the key at its own line.
            (
                "sd = 300 }",
                "sd = 300, max = \"lots\" }",
                ("population.skill.max", 7, "expected a number, got string \"lots\""),
            ),
            (
                "skill = { dist = \"normal\", mean = 1500, sd = 300 }",
                "\n[population.skill]\ndist = \"normal\"\nmean = 1500\nsd = 300\nmax = [1]",
                ("population.skill.max", 12, "expected a number, got sequence"),
            ),
            (
                "size = 100",
                "size = -5",
                ("population.size", 6, "expected a whole number from 0 to 4294967295, got integer `-5`"),
            ),
        ] {
            let (key, line, message) = refused(from, to);
            assert_eq!((key.as_str(), line, message.as_str()), want, "{to}");
        }
        // Through --set, the same words after the override.
        let e = load_str(BASE, &["policy.limitt=3"])
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "--set policy.limitt=3: is not a key here; allowed: `limit`, `mode`, `tick`"
        );
    }

    /// Issue 31: `--set policy.kind=fixed-limit` on a widening scenario said
    /// "is not a key here" without naming the widening keys left behind.
    #[test]
    fn switching_a_plug_in_by_set_names_the_old_keys_left_behind() {
        let text = BASE.replace(
            "kind = \"fixed-limit\"\nlimit = 150",
            "kind = \"widening\"\nbase = 100\nrate_per_s = 5\nmax = 400",
        );
        let e = load_str(&text, &["policy.kind=fixed-limit"])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("[policy] still holds the previous kind's keys `base`, `rate_per_s`, `max`")
                && e.contains("allowed: `limit`")
                && e.contains("--set 'policy={ kind = \"fixed-limit\" }'"),
            "{e}"
        );
        // Set whole, the section switches.
        load_str(&text, &["policy={ kind = \"fixed-limit\", limit = 150 }"]).unwrap();
    }
}
