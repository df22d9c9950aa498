//! Sweeps: the scenario's `[sweep]` section expanded into settings, each run
//! on the same seeds (common random numbers, so differences are paired),
//! spread over cores, sliced into shards for clusters and merged back.

use super::replicate::{par_map, seeds, summary_for};
use super::resume::{load_or_run, RunKey};
use super::stats::{ci95, lookup, metric, Ci};
use mmsim_scenario::provenance::{self, Provenance};
use mmsim_scenario::{LoadedScenario, ScenarioError};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::Path;

/// `[sweep]`: a grid (`[sweep.grid]`, dotted keys to lists of values, every
/// combination run) or named variants (`[[sweep.variant]]` with a `set`
/// table of dotted keys), and optionally the two metrics to plot.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepSection {
    #[serde(default, skip_serializing_if = "toml::Table::is_empty")]
    pub grid: toml::Table,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub variant: Vec<Variant>,
    /// The plot's x and y metrics, both minimised (default wait_s.p90 and spread_rating.mean).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plot: Option<[String; 2]>,
}

/// The one section of a scenario file that `tune` owns; every other
/// section is the scenario schema's business.
#[derive(Deserialize)]
struct SweepPart {
    #[serde(default)]
    sweep: Option<SweepSection>,
}

impl SweepSection {
    /// The scenario's `[sweep]` (empty when absent), with the loader's
    /// errors: file and line, or the `--set` that broke it.
    pub fn read(loaded: &LoadedScenario) -> Result<SweepSection, ScenarioError> {
        Ok(loaded.section::<SweepPart>()?.sweep.unwrap_or_default())
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Variant {
    pub name: String,
    #[serde(default)]
    pub set: toml::Table,
}

/// One point of a sweep: its index (which fixes its shard), a label, and
/// the dotted keys it overrides.
#[derive(Clone, Debug, PartialEq)]
pub struct Setting {
    pub index: usize,
    pub name: String,
    pub sets: Vec<(String, toml::Value)>,
}

impl Setting {
    pub fn set_args(&self) -> Vec<String> {
        self.sets.iter().map(|(k, v)| format!("{k}={v}")).collect()
    }
}

/// The metrics every sweep table carries: how long players wait, how many
/// give up, how many play, and how fair the matches are.
pub const KEY_METRICS: [&str; 8] = [
    "wait_s.p50",
    "wait_s.p90",
    "wait_s.p99",
    "abandon_rate",
    "matches",
    "spread_rating.mean",
    "win_prob_gap.mean",
    "upset_rate",
];

pub const DEFAULT_PLOT: [&str; 2] = ["wait_s.p90", "spread_rating.mean"];

/// Nested tables of a `set` or grid become dotted keys, so both
/// `"policy.limit" = 1` and `policy.limit = 1` (a nested table) work.
fn flatten(prefix: &str, table: &toml::Table, out: &mut Vec<(String, toml::Value)>) {
    for (k, v) in table {
        let key = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        match v {
            toml::Value::Table(t) => flatten(&key, t, out),
            other => out.push((key, other.clone())),
        }
    }
}

/// A `[sweep]` section that names no setting, or names one wrongly; the
/// message names the key.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct SweepSectionError(pub String);

/// Why shard files cannot be merged into one sweep: a shard missing or
/// doubled, or shards of different runs (the message names the first
/// difference).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ShardError(pub String);

impl From<String> for ShardError {
    fn from(message: String) -> Self {
        ShardError(message)
    }
}

impl From<String> for SweepSectionError {
    fn from(message: String) -> Self {
        SweepSectionError(message)
    }
}

/// The settings in a fixed order: grid combinations with the last key
/// varying fastest, or the variants as written.
pub fn settings(section: &SweepSection) -> Result<Vec<Setting>, SweepSectionError> {
    if !section.grid.is_empty() && !section.variant.is_empty() {
        return Err(SweepSectionError(
            "[sweep] has both `grid` and `variant`: use one of them".into(),
        ));
    }
    if !section.variant.is_empty() {
        let mut out = Vec::new();
        for (index, v) in section.variant.iter().enumerate() {
            if out.iter().any(|s: &Setting| s.name == v.name) {
                return Err(SweepSectionError(format!(
                    "sweep.variant: the name `{}` is used twice",
                    v.name
                )));
            }
            let mut sets = Vec::new();
            flatten("", &v.set, &mut sets);
            out.push(Setting {
                index,
                name: v.name.clone(),
                sets,
            });
        }
        return Ok(out);
    }
    let mut axes = Vec::new();
    flatten("", &section.grid, &mut axes);
    if axes.is_empty() {
        return Err(SweepSectionError(
            "the scenario has no [sweep.grid] or [[sweep.variant]] to sweep over, e.g. [sweep.grid] \"policy.limit\" = [100, 200]"
                .into(),
        ));
    }
    let mut lists = Vec::new();
    for (key, v) in &axes {
        match v {
            toml::Value::Array(a) if !a.is_empty() => lists.push(a.clone()),
            _ => {
                return Err(SweepSectionError(format!(
                    "sweep.grid.\"{key}\" must be a non-empty list of values, e.g. [1, 2, 5]"
                )))
            }
        }
    }
    let total: usize = lists.iter().map(Vec::len).product();
    let mut out = Vec::with_capacity(total);
    for index in 0..total {
        let mut rest = index;
        let mut picks = vec![0; lists.len()];
        for (i, list) in lists.iter().enumerate().rev() {
            picks[i] = rest % list.len();
            rest /= list.len();
        }
        let sets: Vec<(String, toml::Value)> = axes
            .iter()
            .zip(&picks)
            .zip(&lists)
            .map(|(((k, _), &p), list)| (k.clone(), list[p].clone()))
            .collect();
        let name = sets
            .iter()
            .map(|(k, v)| format!("{}={v}", k.rsplit('.').next().unwrap_or(k)))
            .collect::<Vec<_>>()
            .join(" ");
        out.push(Setting { index, name, sets });
    }
    Ok(out)
}

/// `K/N` with 0 <= K < N.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    pub k: usize,
    pub n: usize,
}

/// `--shard` text that is not `K/N` with `0 <= K < N`.
#[derive(Debug, thiserror::Error)]
#[error("--shard {0}: write it as K/N with 0 <= K < N, e.g. 0/3")]
pub struct ShardSpecError(String);

impl std::str::FromStr for Shard {
    type Err = ShardSpecError;
    fn from_str(s: &str) -> Result<Self, ShardSpecError> {
        let bad = || ShardSpecError(s.to_string());
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let k: usize = k.trim().parse().map_err(|_| bad())?;
        let n: usize = n.trim().parse().map_err(|_| bad())?;
        if n == 0 || k >= n {
            return Err(bad());
        }
        Ok(Shard { k, n })
    }
}

impl Shard {
    /// Round-robin by setting index: deterministic, and neighbouring
    /// settings (often similar in cost) land on different shards.
    pub fn owns(&self, index: usize) -> bool {
        index % self.n == self.k
    }
    pub fn file_name(&self) -> String {
        format!("shard-{}-of-{}.json", self.k, self.n)
    }
}

/// The sweep's results: what a shard writes and what `merge` reads back.
/// Rows are in setting order; `pareto` flags are not stored, as they
/// depend on every row and are computed when the full table is written.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepTable {
    pub scenario: String,
    pub settings_total: usize,
    pub seeds: Vec<u64>,
    /// The swept keys, one column each.
    pub keys: Vec<String>,
    /// The metric columns (means, and CIs with two seeds or more).
    pub metrics: Vec<String>,
    /// The plot's x and y metrics, both minimised.
    pub plot: [String; 2],
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
    pub rows: Vec<SweepRow>,
}

/// A shard's file (`shard-K-of-N.json`): its table, and where it came from,
/// so that `merge` refuses shards of different sweeps or builds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShardFile {
    #[serde(flatten)]
    pub table: SweepTable,
    /// Absent in shards written before mmsim recorded it; `merge` refuses those.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<Provenance>,
    /// The swept scenario's canonical form (`[sweep]` and `--set`s
    /// included), so a refused merge can name the first key that differs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canonical_scenario: Option<Value>,
}

impl ShardFile {
    pub fn new(table: SweepTable, base: &LoadedScenario) -> ShardFile {
        ShardFile {
            table,
            provenance: Some(Provenance::of(&base.scenario)),
            canonical_scenario: Some(provenance::canonical(&base.scenario)),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepRow {
    pub setting: usize,
    pub name: String,
    /// One per key in `SweepTable::keys`; null when a variant leaves it alone.
    pub values: Vec<Value>,
    /// One per metric in `SweepTable::metrics`.
    pub stats: Vec<Ci>,
    /// SHA-256 of this setting's scenario (the base with the setting's
    /// keys applied), as a run of it records in its provenance.
    #[serde(default)]
    pub scenario_sha256: String,
    /// Each seed's value of each metric: `per_seed[s][m]` for seed
    /// `SweepTable::seeds[s]` and metric `SweepTable::metrics[m]`, so paired
    /// differences between settings can be taken seed by seed.
    #[serde(default)]
    pub per_seed: Vec<Vec<Option<f64>>>,
}

pub struct SweepOptions<'a> {
    pub jobs: Option<usize>,
    pub shard: Option<Shard>,
    /// Metrics to plot (and add to the table if they are not key metrics).
    pub plot: Option<[String; 2]>,
    pub replications: Option<u32>,
    pub tick: &'a (dyn Fn() + Sync),
    /// Called with the number of runs before they start.
    pub start: &'a dyn Fn(u64),
    /// Where each finished run's summary goes as it finishes, and where a
    /// rerun finds the runs an interrupted attempt finished.
    pub store: Option<&'a dyn super::resume::RunStore>,
}

/// What can go wrong before any run starts: the user's input.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    #[error("{0}")]
    Bad(String),
    #[error(transparent)]
    Other(#[from] anyhow::Error),
}

/// Applies each setting to the loaded scenario through the same override
/// path as `--set`, so an unknown or invalid sweep key fails exactly as it
/// would on the command line, with the key named.
pub fn load_settings(
    base: &LoadedScenario,
    settings: &[Setting],
) -> Result<Vec<LoadedScenario>, SweepError> {
    settings
        .iter()
        .map(|s| {
            base.with_sets(&s.set_args()).map_err(|e| {
                let which = match &e {
                    ScenarioError::Set { arg, .. } => arg
                        .split('=')
                        .next()
                        .map(|k| format!(" key `{}`", k.trim()))
                        .unwrap_or_default(),
                    _ => String::new(),
                };
                SweepError::Bad(format!(
                    "sweep setting {} ({}){which}: {e}",
                    s.index, s.name
                ))
            })
        })
        .collect()
}

/// Runs the sweep (or one shard of it) and returns its table.
pub fn run_sweep(base: &LoadedScenario, opts: &SweepOptions<'_>) -> Result<SweepTable, SweepError> {
    let section = SweepSection::read(base).map_err(|e| SweepError::Bad(e.to_string()))?;
    let all = settings(&section).map_err(|e| SweepError::Bad(e.0))?;
    let loaded = load_settings(base, &all)?;
    let plot = opts
        .plot
        .clone()
        .or(section.plot.clone())
        .unwrap_or(DEFAULT_PLOT.map(String::from));
    let mut metrics: Vec<String> = KEY_METRICS.iter().map(|s| s.to_string()).collect();
    for m in &plot {
        if !metrics.contains(m) {
            metrics.push(m.clone());
        }
    }
    let reps = opts.replications.unwrap_or(base.scenario.run.replications);
    if reps == 0 {
        return Err(SweepError::Bad("--replications must be 1 or more".into()));
    }
    let seeds = seeds(base.scenario.run.seed, reps);
    let mine: Vec<usize> = (0..all.len())
        .filter(|&i| opts.shard.is_none_or(|s| s.owns(i)))
        .collect();
    let jobs: Vec<(usize, u64)> = mine
        .iter()
        .flat_map(|&i| seeds.iter().map(move |&seed| (i, seed)))
        .collect();
    (opts.start)(jobs.len() as u64);
    // Each run is reduced to its metrics as it finishes (and its summary
    // handed to the store), so memory holds the runs under way, not every
    // summary; the first is kept whole to check the plotted metrics' names.
    let store = opts.store;
    let results = par_map(
        opts.jobs,
        jobs.len(),
        |j| -> anyhow::Result<(Option<Value>, Vec<Option<f64>>)> {
            let (i, seed) = jobs[j];
            let summary = load_or_run(
                store,
                || RunKey::new(&loaded[i].scenario, Some(i), seed),
                || summary_for(&loaded[i].scenario, seed),
            )?;
            let values = metrics.iter().map(|m| metric(&summary, m)).collect();
            Ok(((j == 0).then_some(summary), values))
        },
        opts.tick,
    )?
    .into_iter()
    .collect::<anyhow::Result<Vec<_>>>()?;
    if let Some((Some(first), _)) = results.first() {
        check_metric_names(first, &plot)?;
    }
    let mut keys: Vec<String> = Vec::new();
    for s in &all {
        for (k, _) in &s.sets {
            if !keys.contains(k) {
                keys.push(k.clone());
            }
        }
    }
    let rows = mine
        .iter()
        .enumerate()
        .map(|(pos, &i)| {
            let chunk = &results[pos * seeds.len()..(pos + 1) * seeds.len()];
            let s = &all[i];
            SweepRow {
                setting: i,
                name: s.name.clone(),
                values: keys
                    .iter()
                    .map(|k| {
                        s.sets
                            .iter()
                            .find(|(sk, _)| sk == k)
                            .map(|(_, v)| toml_to_json(v))
                            .unwrap_or(Value::Null)
                    })
                    .collect(),
                stats: (0..metrics.len())
                    .map(|m| {
                        let xs: Vec<f64> = chunk.iter().filter_map(|(_, v)| v[m]).collect();
                        ci95(&xs)
                    })
                    .collect(),
                scenario_sha256: provenance::scenario_sha256(&loaded[i].scenario),
                per_seed: chunk.iter().map(|(_, v)| v.clone()).collect(),
            }
        })
        .collect();
    Ok(SweepTable {
        scenario: base.scenario.run.name.clone(),
        settings_total: all.len(),
        seeds,
        keys,
        metrics,
        plot,
        shard: opts.shard,
        rows,
    })
}

/// A misspelt metric is bad input, caught after the first runs rather
/// than silently plotted as empty.
pub fn check_metric_names(summary: &Value, names: &[String]) -> Result<(), SweepError> {
    for m in names {
        match lookup(summary, m) {
            Some(v) if v.is_number() || v.is_null() => {}
            Some(_) => {
                return Err(SweepError::Bad(format!(
                    "--metrics: `{m}` is not a number in summary.json (try `{m}.mean` or `{m}.p90`)"
                )))
            }
            None => {
                return Err(SweepError::Bad(format!(
                    "--metrics: summary.json has no metric `{m}`; numbers are named by their path, e.g. wait_s.p90, spread_rating.mean, abandon_rate"
                )))
            }
        }
    }
    Ok(())
}

fn toml_to_json(v: &toml::Value) -> Value {
    match v {
        toml::Value::Integer(i) => Value::from(*i),
        toml::Value::Float(f) => Value::from(*f),
        toml::Value::Boolean(b) => Value::from(*b),
        toml::Value::String(s) => Value::from(s.clone()),
        other => Value::from(other.to_string()),
    }
}

/// Combines shard tables into the table one unsharded run would give,
/// with their common provenance. Shards of different scenarios, sweeps,
/// seeds or mmsim versions are refused, naming the first difference.
pub fn merge(files: Vec<ShardFile>) -> Result<(SweepTable, Provenance), ShardError> {
    let Some(first) = files.first().cloned() else {
        return Err(ShardError(
            "no shard files (shard-K-of-N.json) found".into(),
        ));
    };
    for f in &files {
        check_belongs(f, &first)?;
    }
    let provenance = first
        .provenance
        .clone()
        .expect("check_belongs refuses shards without provenance");
    let first = first.table;
    let mut shards: Vec<SweepTable> = files.into_iter().map(|f| f.table).collect();
    shards.sort_by_key(|s| s.shard.map(|s| s.k));
    let mut rows: Vec<SweepRow> = shards.into_iter().flat_map(|s| s.rows).collect();
    rows.sort_by_key(|r| r.setting);
    for w in rows.windows(2) {
        if w[0].setting == w[1].setting {
            return Err(ShardError(format!(
                "setting {} appears in two shards",
                w[0].setting
            )));
        }
    }
    let have: Vec<usize> = rows.iter().map(|r| r.setting).collect();
    let missing: Vec<usize> = (0..first.settings_total)
        .filter(|i| have.binary_search(i).is_err())
        .collect();
    if !missing.is_empty() {
        return Err(ShardError(format!(
            "settings {missing:?} of {} are in no shard: is a shard missing?",
            first.settings_total
        )));
    }
    Ok((
        SweepTable {
            shard: None,
            rows,
            ..first
        },
        provenance,
    ))
}

/// Whether shard `f` may be merged with shard `first`: the same mmsim
/// version, scenario (by hash), seeds, metrics and shard count.
fn check_belongs(f: &ShardFile, first: &ShardFile) -> Result<(), ShardError> {
    let (name, name0) = (
        format!("shard {}", describe(&f.table)),
        format!("shard {}", describe(&first.table)),
    );
    let refuse = |why: String| {
        Err(ShardError(format!(
            "{name} does not belong with {name0}: {why}"
        )))
    };
    let (Some(p), Some(p0)) = (&f.provenance, &first.provenance) else {
        let old = if f.provenance.is_none() {
            &name
        } else {
            &name0
        };
        return Err(ShardError(format!(
            "{old} records no scenario hash or mmsim version (written by an older mmsim), so it cannot be checked against the others; rerun it"
        )));
    };
    if p.mmsim_version != p0.mmsim_version {
        return refuse(format!(
            "written by mmsim {} and mmsim {}; rerun every shard with one build",
            p.mmsim_version, p0.mmsim_version
        ));
    }
    if p.scenario_sha256 != p0.scenario_sha256 {
        let diff = match (&first.canonical_scenario, &f.canonical_scenario) {
            (Some(a), Some(b)) => provenance::describe_difference(a, b, &name0, &name),
            _ => None,
        };
        return refuse(format!(
            "they ran different scenarios (scenario_sha256 {} and {}){}",
            short(&p.scenario_sha256),
            short(&p0.scenario_sha256),
            diff.map(|d| format!(": {d}")).unwrap_or_default()
        ));
    }
    let (t, t0) = (&f.table, &first.table);
    let differs: Option<(&str, String, String)> = if t.scenario != t0.scenario {
        Some(("scenario", t.scenario.clone(), t0.scenario.clone()))
    } else if t.settings_total != t0.settings_total {
        Some((
            "settings_total",
            t.settings_total.to_string(),
            t0.settings_total.to_string(),
        ))
    } else if t.seeds != t0.seeds {
        Some(("seeds", format!("{:?}", t.seeds), format!("{:?}", t0.seeds)))
    } else if t.keys != t0.keys {
        Some(("keys", format!("{:?}", t.keys), format!("{:?}", t0.keys)))
    } else if t.metrics != t0.metrics {
        Some((
            "metrics",
            format!("{:?}", t.metrics),
            format!("{:?}", t0.metrics),
        ))
    } else if t.plot != t0.plot {
        Some(("plot", format!("{:?}", t.plot), format!("{:?}", t0.plot)))
    } else if t.shard.map(|s| s.n) != t0.shard.map(|s| s.n) {
        Some(("shard count", describe(t), describe(t0)))
    } else {
        None
    };
    match differs {
        Some((what, a, b)) => refuse(format!("`{what}` is {a} in {name} and {b} in {name0}")),
        None => Ok(()),
    }
}

fn short(hash: &str) -> &str {
    &hash[..hash.len().min(12)]
}

fn describe(t: &SweepTable) -> String {
    t.shard
        .map(|s| format!("{}/{}", s.k, s.n))
        .unwrap_or_else(|| "(whole)".into())
}

/// Reads every `shard-*.json` in the folders, in name order.
pub fn read_shards(dirs: &[std::path::PathBuf]) -> Result<Vec<ShardFile>, ShardError> {
    let mut out = Vec::new();
    for dir in dirs {
        let mut names: Vec<_> = std::fs::read_dir(dir)
            .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| is_shard_file(p))
            .collect();
        names.sort();
        for p in names {
            let text = std::fs::read_to_string(&p)
                .map_err(|e| format!("cannot read {}: {e}", p.display()))?;
            out.push(
                serde_json::from_str(&text)
                    .map_err(|e| format!("{} is not a shard table: {e}", p.display()))?,
            );
        }
    }
    Ok(out)
}

fn is_shard_file(p: &Path) -> bool {
    p.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(is_shard_name)
}

/// `shard-K-of-N.json`, as `Shard::file_name` writes it.
pub fn is_shard_name(n: &str) -> bool {
    n.starts_with("shard-") && n.ends_with(".json")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid(text: &str) -> SweepSection {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn a_grid_expands_with_the_last_key_fastest() {
        let s = settings(&grid(
            "[grid]\n\"policy.base\" = [100, 200]\n\"policy.rate_per_s\" = [1, 2.5, 5]\n",
        ))
        .unwrap();
        assert_eq!(s.len(), 6);
        assert_eq!(
            s[1].set_args(),
            ["policy.base=100", "policy.rate_per_s=2.5"]
        );
        assert_eq!(s[3].set_args(), ["policy.base=200", "policy.rate_per_s=1"]);
        assert_eq!(s[3].name, "base=200 rate_per_s=1");
    }

    #[test]
    fn nested_keys_and_variants_become_dotted_sets() {
        let s = settings(&grid(
            "[[variant]]\nname = \"tight\"\nset = { policy = { limit = 50 } }\n[[variant]]\nname = \"loose\"\nset = { \"policy.limit\" = 400 }\n",
        ))
        .unwrap();
        assert_eq!(s[0].set_args(), ["policy.limit=50"]);
        assert_eq!(s[1].name, "loose");
        let err = settings(&grid("[grid]\n\"policy.limit\" = 5\n"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("policy.limit") && err.contains("list"),
            "{err}"
        );
        assert!(settings(&SweepSection::default()).is_err());
    }

    #[test]
    fn shards_split_settings_round_robin_and_parse_strictly() {
        let s: Shard = "1/3".parse().unwrap();
        let owned: Vec<usize> = (0..7).filter(|&i| s.owns(i)).collect();
        assert_eq!(owned, [1, 4]);
        assert!("3/3".parse::<Shard>().is_err());
        assert!("x".parse::<Shard>().is_err());
        assert!("0/0".parse::<Shard>().is_err());
    }

    fn table(shard: Option<Shard>, rows: &[usize]) -> SweepTable {
        SweepTable {
            scenario: "s".into(),
            settings_total: 4,
            seeds: vec![1],
            keys: vec!["k".into()],
            metrics: vec!["m".into()],
            plot: ["m".into(), "m".into()],
            shard,
            rows: rows
                .iter()
                .map(|&i| SweepRow {
                    setting: i,
                    name: format!("k={i}"),
                    values: vec![Value::from(i)],
                    stats: vec![ci95(&[i as f64])],
                    scenario_sha256: format!("hash-{i}"),
                    per_seed: vec![vec![Some(i as f64)]],
                })
                .collect(),
        }
    }

    fn file(table: SweepTable, base: i64) -> ShardFile {
        let scenario = serde_json::json!({"run": {"seed": 1}, "policy": {"base": base}});
        ShardFile {
            table,
            provenance: Some(Provenance {
                mmsim_version: "0.1.0".into(),
                scenario_sha256: format!("hash-of-base-{base}"),
            }),
            canonical_scenario: Some(scenario),
        }
    }

    #[test]
    fn merging_shards_restores_setting_order_and_finds_gaps() {
        let a = file(table(Some(Shard { k: 0, n: 2 }), &[0, 2]), 10);
        let b = file(table(Some(Shard { k: 1, n: 2 }), &[1, 3]), 10);
        let (merged, prov) = merge(vec![b.clone(), a.clone()]).unwrap();
        assert_eq!(merged, table(None, &[0, 1, 2, 3]));
        assert_eq!(Some(prov), a.provenance);
        let err = merge(vec![a.clone()]).unwrap_err().to_string();
        assert!(err.contains("[1, 3]"), "{err}");
        let err = merge(vec![a.clone(), a]).unwrap_err().to_string();
        assert!(err.contains("two shards"), "{err}");
    }

    #[test]
    fn shards_of_other_scenarios_builds_or_seeds_are_refused_naming_the_difference() {
        let a = file(table(Some(Shard { k: 0, n: 2 }), &[0, 2]), 10);
        let b = file(table(Some(Shard { k: 1, n: 2 }), &[1, 3]), 20);
        let err = merge(vec![a.clone(), b.clone()]).unwrap_err().to_string();
        assert!(
            err.contains("`policy.base` is 10 in shard 0/2 and 20 in shard 1/2"),
            "{err}"
        );
        let mut other_build = file(b.table.clone(), 10);
        other_build.provenance.as_mut().unwrap().mmsim_version = "9.9.9".into();
        let err = merge(vec![a.clone(), other_build]).unwrap_err().0;
        assert!(err.contains("mmsim 9.9.9 and mmsim 0.1.0"), "{err}");
        let mut other_seeds = file(b.table.clone(), 10);
        other_seeds.table.seeds = vec![1, 2];
        let err = merge(vec![a.clone(), other_seeds]).unwrap_err().0;
        assert!(
            err.contains("`seeds` is [1, 2] in shard 1/2 and [1] in shard 0/2"),
            "{err}"
        );
        let mut unrecorded = file(b.table.clone(), 10);
        unrecorded.provenance = None;
        let err = merge(vec![a, unrecorded]).unwrap_err().0;
        assert!(err.contains("shard 1/2 records no scenario hash"), "{err}");
    }
}
