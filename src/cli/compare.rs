//! `mmsim compare`: reads each folder given (a run, a replicated run or a
//! sweep) into the arms `report::compare` compares, with what decides
//! pairing: the seeds, and the population and match format of the scenario
//! the folder saved.

use super::{artifacts_sha256, write_artifacts, CliError, OutDir};
use crate::report::compare::{self, Arm, ArmKind, SeedRun};
use crate::scenario::{self, provenance};
use serde_json::Value;
use std::path::{Path, PathBuf};

pub fn compare_command(
    paths: &[PathBuf],
    out: Option<PathBuf>,
    json: bool,
) -> Result<(), CliError> {
    let mut arms = Vec::new();
    for p in paths {
        arms.extend(read_arms(p)?);
    }
    if arms.len() < 2 {
        return Err(CliError::BadInput(format!(
            "compare needs two runs or more; {} holds only one",
            paths[0].display()
        )));
    }
    let dir = out.unwrap_or_else(|| Path::new("output").join("compare"));
    let held = OutDir::lock(&dir, false).map_err(CliError::BadInput)?;
    let versions: Vec<Option<String>> = arms.iter().map(|a| a.mmsim_version.clone()).collect();
    let c = compare::compare(arms);
    let artifacts = compare::artifacts(&c)?;
    write_artifacts(held.path(), &artifacts)?;
    held.commit(&artifacts_sha256(&artifacts))?;
    if json {
        let mut v = compare::to_json(&c);
        if versions.iter().any(|v| v != &versions[0]) {
            if let Some(m) = v.as_object_mut() {
                m.insert("mmsim_versions".into(), serde_json::json!(versions));
            }
        }
        say!(
            "{}",
            serde_json::to_string_pretty(&v).expect("JSON serializes")
        );
        return Ok(());
    }
    for (i, v) in versions.iter().enumerate().skip(1) {
        if v != &versions[0] {
            let said = |v: &Option<String>| match v {
                Some(v) => format!("mmsim {v}"),
                None => "an mmsim that did not record its version".to_owned(),
            };
            say!(
                "note: {} was written by {} and {} by {}: differences may come from the code, not the setting",
                c.arms[0].label,
                said(&versions[0]),
                c.arms[i].label,
                said(v)
            );
        }
    }
    say_raw!("{}", compare::render_text(&c));
    say!("→ {}", dir.join("compare.html").display());
    Ok(())
}

fn read_json(file: &Path) -> Result<Value, CliError> {
    let text = scenario::read_bounded(file, 64 << 20)
        .map_err(|e| CliError::BadInput(format!("cannot read {}: {e}", file.display())))?;
    let v: Value = serde_json::from_str(&text)
        .map_err(|e| CliError::BadInput(format!("{} is not JSON: {e}", file.display())))?;
    // Any JSON parses; only a run's summary compares (an array or another
    // tool's object compared as all-missing metrics and exited 0).
    let is_summary = v.as_object().is_some_and(|m| {
        ["tickets", "matches", "wait_s"]
            .iter()
            .all(|k| m.contains_key(*k))
    });
    if !is_summary {
        return Err(CliError::BadInput(format!(
            "{} is not a summary.json: expected an object with `tickets`, `matches` and `wait_s`, as `mmsim run` writes",
            file.display()
        )));
    }
    Ok(v)
}

fn prov(summary: &Value, key: &str) -> Option<String> {
    summary
        .pointer(&format!("/provenance/{key}"))
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// The world a scenario's seeds draw: its population and match format.
fn world_of(s: &scenario::Scenario) -> Value {
    let c = provenance::canonical(s);
    serde_json::json!({"population": c.get("population"), "match": c.get("match")})
}

/// The scenario a folder saved (`scenario.toml`), if it has one that loads.
fn saved_scenario(dir: &Path) -> Option<scenario::LoadedScenario> {
    let file = dir.join("scenario.toml");
    file.is_file()
        .then(|| scenario::load(&file, &[]).ok())
        .flatten()
}

/// The world (population and match format) a run folder's saved
/// `scenario.toml` describes. A run whose scenario reads other files (a
/// trace, a ruleset) saves paths relative to where it ran, so the saved
/// file may not load from the run folder; its schema still gives the world.
/// A file that is not a scenario at all is damage, and refused: without
/// it compare could not tell whether two runs share players and arrivals.
fn saved_world(dir: &Path) -> Result<Option<Value>, CliError> {
    let file = dir.join("scenario.toml");
    if !file.is_file() {
        return Ok(None);
    }
    if let Ok(l) = scenario::load(&file, &[]) {
        return Ok(Some(world_of(&l.scenario)));
    }
    let text = scenario::read_bounded(&file, 16 << 20)
        .map_err(|e| CliError::BadInput(format!("cannot read {}: {e}", file.display())))?;
    toml::from_str::<scenario::Scenario>(&text)
        .map(|s| Some(world_of(&s)))
        .map_err(|e| {
            CliError::BadInput(format!(
                "{} is damaged ({}); compare reads it to tell whether runs share players and arrivals: restore it or rerun",
                file.display(),
                e.message().trim()
            ))
        })
}

/// A run's wait quantiles for the wait curves; a file that is there but
/// unreadable is refused rather than its curve silently dropped.
fn quantiles(dir: &Path) -> Result<Option<Vec<f64>>, CliError> {
    let file = dir.join(compare::QUANTILES_FILE);
    if !file.is_file() {
        return Ok(None);
    }
    let damaged = |why: String| {
        CliError::BadInput(format!(
            "{} is damaged ({why}); compare draws each run's wait curve from it: restore it or rerun",
            file.display()
        ))
    };
    let text = std::fs::read_to_string(&file).map_err(|e| damaged(e.to_string()))?;
    let v: Value = serde_json::from_str(&text).map_err(|e| damaged(e.to_string()))?;
    compare::read_wait_quantiles(&v)
        .map(Some)
        .ok_or_else(|| damaged("not a list of wait quantiles".into()))
}

fn seed_of(summary: &Value, file: &Path) -> Result<u64, CliError> {
    summary.get("seed").and_then(Value::as_u64).ok_or_else(|| {
        CliError::BadInput(format!(
            "{} has no `seed`: is it a run's summary.json?",
            file.display()
        ))
    })
}

fn read_arms(path: &Path) -> Result<Vec<Arm>, CliError> {
    let label = path.to_string_lossy().into_owned();
    if path.is_file() {
        let s = read_json(path)?;
        let seed = seed_of(&s, path)?;
        let dir = path.parent().unwrap_or(Path::new("."));
        return Ok(vec![Arm {
            label,
            kind: ArmKind::Run,
            scenario: s["scenario"].as_str().unwrap_or_default().to_owned(),
            scenario_sha256: prov(&s, "scenario_sha256"),
            mmsim_version: prov(&s, "mmsim_version"),
            world: saved_world(dir)?,
            runs: vec![SeedRun {
                seed,
                summary: s,
                wait_quantiles: quantiles(dir)?,
            }],
        }]);
    }
    if path.join("sweep.parquet").is_file() {
        return read_sweep(path, &label);
    }
    let file = path.join("summary.json");
    if !file.is_file() {
        return Err(CliError::BadInput(format!(
            "{}: no summary.json (a run or replicated run) or sweep.parquet (a sweep) in it",
            path.display()
        )));
    }
    let s = read_json(&file)?;
    let world = saved_world(path)?;
    let head = |kind, runs| Arm {
        label: label.clone(),
        kind,
        scenario: s["scenario"].as_str().unwrap_or_default().to_owned(),
        scenario_sha256: prov(&s, "scenario_sha256"),
        mmsim_version: prov(&s, "mmsim_version"),
        world: world.clone(),
        runs,
    };
    let Some(seeds) = s.get("seeds").and_then(Value::as_array) else {
        let seed = seed_of(&s, &file)?;
        let wq = quantiles(path)?;
        return Ok(vec![head(
            ArmKind::Run,
            vec![SeedRun {
                seed,
                summary: s.clone(),
                wait_quantiles: wq,
            }],
        )]);
    };
    // A replicated run: its per-seed summaries, never the folded means and bounds.
    let mut runs = Vec::new();
    for seed in seeds.iter().filter_map(Value::as_u64) {
        let sub = path.join("replications").join(format!("seed-{seed}"));
        let f = sub.join("summary.json");
        if !f.is_file() {
            return Err(CliError::BadInput(format!(
                "{}: a replicated run, but {} is missing; compare reads each seed's summary",
                path.display(),
                f.display()
            )));
        }
        runs.push(SeedRun {
            seed,
            summary: read_json(&f)?,
            wait_quantiles: quantiles(&sub)?,
        });
    }
    Ok(vec![head(ArmKind::Replicated, runs)])
}

/// One arm per setting of a sweep folder, from `sweep.parquet`'s per-seed rows.
fn read_sweep(dir: &Path, label: &str) -> Result<Vec<Arm>, CliError> {
    let base = saved_scenario(dir);
    let settings = match &base {
        Some(l) => {
            let section = crate::tune::SweepSection::read(l)?;
            crate::tune::sweep::settings(&section).map_err(|e| CliError::BadInput(e.to_string()))?
        }
        None => Vec::new(),
    };
    let mut keys: Vec<String> = Vec::new();
    for s in &settings {
        for (k, _) in &s.sets {
            if !keys.contains(k) {
                keys.push(k.clone());
            }
        }
    }
    let bytes = std::fs::read(dir.join("sweep.parquet")).map_err(|e| {
        CliError::BadInput(format!(
            "cannot read {}: {e}",
            dir.join("sweep.parquet").display()
        ))
    })?;
    let rows = crate::report::sweep::read_seed_rows(&bytes, &keys).map_err(|e| {
        CliError::BadInput(format!(
            "{}: not a per-seed sweep table ({e}); rerun the sweep with this mmsim",
            dir.join("sweep.parquet").display()
        ))
    })?;
    let scenario_name = base
        .as_ref()
        .map(|l| l.scenario.run.name.clone())
        .unwrap_or_else(|| label.to_owned());
    let mut arms: Vec<Arm> = Vec::new();
    for r in rows {
        let mut summary = serde_json::Map::new();
        for (k, v) in &r.metrics {
            insert_path(&mut summary, k, v.map_or(Value::Null, Value::from));
        }
        let run = SeedRun {
            seed: r.seed,
            summary: Value::Object(summary),
            wait_quantiles: None,
        };
        if let Some(a) = arms
            .last_mut()
            .filter(|a| a.label.ends_with(&format!("#{} {}", r.setting, r.name)))
        {
            a.runs.push(run);
            continue;
        }
        let world = match (
            &base,
            settings.iter().find(|s| s.index == r.setting as usize),
        ) {
            (Some(l), Some(s)) => l
                .with_sets(&s.set_args())
                .ok()
                .map(|l| world_of(&l.scenario)),
            _ => None,
        };
        arms.push(Arm {
            label: format!("{label}#{} {}", r.setting, r.name),
            kind: ArmKind::SweepSetting,
            scenario: scenario_name.clone(),
            scenario_sha256: Some(r.scenario_sha256.clone()),
            mmsim_version: Some(r.mmsim_version.clone()),
            world,
            runs: vec![run],
        });
    }
    if arms.is_empty() {
        return Err(CliError::BadInput(format!(
            "{}: sweep.parquet has no rows",
            dir.display()
        )));
    }
    Ok(arms)
}

/// Puts `value` at a dotted path (`wait_s.p90`) in nested objects, so a
/// sweep's metric columns read like a summary.
fn insert_path(m: &mut serde_json::Map<String, Value>, path: &str, value: Value) {
    match path.split_once('.') {
        None => {
            m.insert(path.to_owned(), value);
        }
        Some((head, rest)) => {
            let child = m
                .entry(head.to_owned())
                .or_insert_with(|| Value::Object(Default::default()));
            if let Value::Object(c) = child {
                insert_path(c, rest, value);
            }
        }
    }
}
