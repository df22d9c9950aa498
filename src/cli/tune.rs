//! The command line of tuning and guarding: `sweep`, `merge`, `check`,
//! `tune`, and `run` with replications. Arguments become validated input
//! here; the work is in `crate::tune`, the files in `crate::report`.

use super::{json_bytes, with_provenance, write_artifacts, write_whole, CliError};
use crate::report::text;
use crate::scenario::LoadedScenario;
use crate::tune::check::{self, Baseline};
use crate::tune::replicate::{par_map, seeds, Aggregator};
use crate::tune::resume::{load_or_run, RunKey, RunStore};
use crate::tune::search::{self, Constraint, Param, TuneOptions};
use crate::tune::sweep::{self, Shard, SweepError, SweepOptions};
use clap::Subcommand;
use serde_json::json;
use std::path::{Path, PathBuf};

#[derive(Subcommand, Debug)]
pub enum TuningCommand {
    /// Run every setting of the scenario's [sweep] section on common seeds:
    /// sweep.csv, sweep.parquet, a Pareto plot and report.html.
    Sweep {
        scenario: PathBuf,
        /// Output folder (default: output/<scenario name>-sweep/).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Runs at once (default: all cores).
        #[arg(long, allow_negative_numbers = true, value_parser = super::whole::<usize>)]
        jobs: Option<usize>,
        /// Run only the K-th of N slices of the settings (K from 0) and write
        /// shard-K-of-N.json for `mmsim merge`.
        #[arg(long, value_name = "K/N")]
        shard: Option<Shard>,
        /// The two metrics to plot, both minimised (default wait_s.p90,spread_rating.mean).
        #[arg(long, value_name = "X,Y", value_delimiter = ',')]
        metrics: Vec<String>,
        /// Seeds per setting instead of the scenario's run.replications.
        #[arg(long, allow_negative_numbers = true, value_parser = super::whole::<u32>)]
        replications: Option<u32>,
        #[arg(long = "set", value_name = "KEY=VALUE")]
        sets: Vec<String>,
        /// Run even when the scenario would take more than a day of CPU
        /// (the budget `validate` prints).
        #[arg(long)]
        force: bool,
        #[arg(long)]
        quiet: bool,
    },
    /// Combine the shard tables in the folders into the outputs of one unsharded sweep.
    Merge {
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Output folder (default: the first folder).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Rerun the committed metric baselines and fail (exit 1) on a metric
    /// that moved past its seed-noise tolerance.
    Check {
        /// Scenarios to (re)create baselines for, with --update.
        scenarios: Vec<PathBuf>,
        #[arg(long, default_value = "baselines")]
        baselines: PathBuf,
        /// Rewrite the baselines from this code, on purpose.
        #[arg(long)]
        update: bool,
        /// Seeds per scenario (default: the baseline's; 5 for new baselines).
        #[arg(long, allow_negative_numbers = true, value_parser = super::whole::<u32>)]
        seeds: Option<u32>,
        /// Override a key in every checked scenario (to see what a change would do).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        sets: Vec<String>,
        #[arg(long, allow_negative_numbers = true, value_parser = super::whole::<usize>)]
        jobs: Option<usize>,
    },
    /// Search one or two parameters for the setting that minimises a metric under constraints.
    Tune {
        scenario: PathBuf,
        /// Dotted key to search, e.g. policy.rate_per_s.
        #[arg(long)]
        param: String,
        /// LO:HI[:STEPS] for --param (STEPS points, default 7).
        #[arg(long)]
        range: String,
        #[arg(long, requires = "range2")]
        param2: Option<String>,
        #[arg(long, requires = "param2")]
        range2: Option<String>,
        /// The metric to minimise, e.g. wait_s.p90.
        #[arg(long, alias = "minimize")]
        minimise: String,
        /// A bound on a metric's mean, e.g. "spread_rating.mean<120" (repeatable).
        #[arg(long = "subject-to", value_name = "METRIC<VALUE")]
        subject_to: Vec<String>,
        /// Seeds per point (default: the scenario's run.replications, at least 3).
        #[arg(long, allow_negative_numbers = true, value_parser = super::whole::<u32>)]
        seeds: Option<u32>,
        /// Refinements around the best point after the first grid.
        #[arg(long, default_value_t = 2, allow_negative_numbers = true, value_parser = super::whole::<usize>)]
        rounds: usize,
        #[arg(long, allow_negative_numbers = true, value_parser = super::whole::<usize>)]
        jobs: Option<usize>,
        #[arg(long = "set", value_name = "KEY=VALUE")]
        sets: Vec<String>,
        /// Run even when the scenario would take more than a day of CPU
        /// (the budget `validate` prints).
        #[arg(long)]
        force: bool,
        #[arg(long)]
        quiet: bool,
    },
}

/// `--jobs`, capped at the cores this process may use: more threads only
/// share the same cores (and `--jobs 1000000000` started threads until the
/// machine gave out).
fn jobs_ok(jobs: Option<usize>) -> Result<Option<usize>, CliError> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    match jobs {
        Some(0) => Err(CliError::BadInput("--jobs must be 1 or more".into())),
        Some(j) if j > cores => {
            tell!("note: --jobs {j} is more than the {cores} cores available; using {cores}");
            Ok(Some(cores))
        }
        j => Ok(j),
    }
}

/// Seeds per setting: the scenario's `run.replications` bound, so that a
/// typo of `--replications 100000` is refused rather than run for days.
fn reps_ok(flag: &str, n: Option<u32>) -> Result<(), CliError> {
    let max = crate::scenario::MAX_REPLICATIONS;
    match n {
        Some(n) if n == 0 || n > max => Err(CliError::BadInput(format!(
            "{flag} must be 1 to {max}, got {n}"
        ))),
        _ => Ok(()),
    }
}

fn sweep_err(e: SweepError) -> CliError {
    match e {
        SweepError::Bad(m) => CliError::BadInput(m),
        SweepError::Other(e) => CliError::Other(e),
    }
}

pub fn dispatch(command: TuningCommand) -> Result<(), CliError> {
    match command {
        TuningCommand::Sweep {
            scenario,
            out,
            jobs,
            shard,
            metrics,
            replications,
            sets,
            quiet,
            force,
        } => {
            let loaded = super::load_scenario(&scenario, &sets, force)?;
            reps_ok("--replications", replications)?;
            let provenance = crate::scenario::Provenance::of(&loaded.scenario);
            let plot = match metrics.as_slice() {
                [] => None,
                [x, y] => Some([x.trim().to_string(), y.trim().to_string()]),
                _ => {
                    return Err(CliError::BadInput(format!(
                        "--metrics takes two metrics, X,Y (both minimised), got {}",
                        metrics.len()
                    )))
                }
            };
            let dir = out.unwrap_or_else(|| {
                Path::new("output").join(format!("{}-sweep", loaded.scenario.run.name))
            });
            // Before simulating. Shards of one sweep share a folder, so
            // they only check it and write one file each; a whole sweep
            // holds its folder and swaps it in whole at the end. Either
            // way each finished run is kept as it finishes, so a rerun of
            // an interrupted sweep resumes.
            let (held, runs_dir) = match shard {
                Some(s) => {
                    super::check_writable(&dir).map_err(CliError::BadInput)?;
                    let runs = dir.join(format!(".{}{}", s.file_name(), super::JOBS_DIR));
                    (None, runs)
                }
                None => {
                    let held = super::OutDir::lock(&dir, true).map_err(CliError::BadInput)?;
                    let runs = held.path().join(super::JOBS_DIR);
                    (Some(held), runs)
                }
            };
            let store = super::RunFiles::new(&runs_dir);
            let bar = super::progress::Progress::runs(quiet);
            let table = sweep::run_sweep(
                &loaded,
                &SweepOptions {
                    jobs: jobs_ok(jobs)?,
                    shard,
                    plot,
                    replications,
                    tick: &|| bar.inc(1),
                    start: &|n| bar.set_length(n),
                    store: Some(&store),
                },
            )
            .map_err(sweep_err)?;
            bar.finish_and_clear();
            say_resumed(store.reused());
            match (shard, held) {
                (Some(s), _) => {
                    let file = sweep::ShardFile::new(table, &loaded);
                    write_whole(&dir, &s.file_name(), &json_bytes(&file))?;
                    let _ = std::fs::remove_dir_all(&runs_dir);
                    let table = file.table;
                    say!(
                        "shard {}/{}: {} of {} settings → {}",
                        s.k,
                        s.n,
                        table.rows.len(),
                        table.settings_total,
                        dir.join(s.file_name()).display()
                    );
                    Ok(())
                }
                (None, Some(held)) => {
                    // The swept scenario, so `compare` can tell which settings share a world.
                    write_whole(held.path(), "scenario.toml", loaded.text.as_bytes())?;
                    finish_sweep(held, &table, &provenance)
                }
                (None, None) => unreachable!("a whole sweep holds its folder"),
            }
        }
        TuningCommand::Merge { dirs, out } => {
            let shards =
                sweep::read_shards(&dirs).map_err(|e| CliError::BadInput(e.to_string()))?;
            let n = shards.len();
            let (table, provenance) =
                sweep::merge(shards).map_err(|e| CliError::BadInput(e.to_string()))?;
            let dir = out.unwrap_or_else(|| dirs[0].clone());
            // The shards just read and checked may stand beside a marked
            // output; merging into their folder keeps them.
            let held = super::OutDir::lock_keeping(&dir, false, &sweep::is_shard_name)
                .map_err(CliError::BadInput)?;
            held.carry(sweep::is_shard_name)?;
            say!("merged {n} shards");
            finish_sweep(held, &table, &provenance)
        }
        TuningCommand::Check {
            scenarios,
            baselines,
            update,
            seeds,
            sets,
            jobs,
        } => check_command(&scenarios, &baselines, update, seeds, &sets, jobs_ok(jobs)?),
        TuningCommand::Tune {
            scenario,
            param,
            range,
            param2,
            range2,
            minimise,
            subject_to,
            seeds: n_seeds,
            rounds,
            jobs,
            sets,
            quiet,
            force,
        } => {
            let loaded = super::load_scenario(&scenario, &sets, force)?;
            let mut params = vec![Param::parse(&param, &range, "--range")
                .map_err(|e| CliError::BadInput(e.to_string()))?];
            if let (Some(p), Some(r)) = (param2, range2) {
                let second = Param::parse(&p, &r, "--range2")
                    .map_err(|e| CliError::BadInput(e.to_string()))?;
                if second.key == params[0].key {
                    return Err(CliError::BadInput(format!(
                        "--param2 {} is --param again; a second parameter must be another key (or drop --param2 to tune one)",
                        second.key
                    )));
                }
                params.push(second);
            }
            let grid: usize = params.iter().map(|p| p.steps).product();
            if grid > search::MAX_GRID_POINTS {
                return Err(CliError::BadInput(format!(
                    "--range and --range2 make a grid of {grid} points a round, more than {}: take fewer STEPS (each round refines around the best point), or run the grid as a sweep",
                    search::MAX_GRID_POINTS
                )));
            }
            search::mark_integers(&loaded, &mut params);
            let constraints = subject_to
                .iter()
                .map(|s| s.parse::<Constraint>())
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| CliError::BadInput(e.to_string()))?;
            let n = n_seeds.unwrap_or(loaded.scenario.run.replications.max(3));
            reps_ok("--seeds", Some(n))?;
            let bar = super::progress::Progress::runs(quiet);
            let result = search::tune(
                &loaded,
                params,
                minimise,
                constraints,
                &TuneOptions {
                    seeds: seeds(loaded.scenario.run.seed, n),
                    rounds,
                    jobs: jobs_ok(jobs)?,
                    tick: &|| bar.inc(1),
                    start: &|k| {
                        bar.set_position(0);
                        bar.set_length(k)
                    },
                },
            )
            .map_err(|e| CliError::BadInput(e.to_string()))?;
            bar.finish_and_clear();
            say_raw!("{}", text::tune_table(&result));
            // A search that ran and found nothing feasible is an answer,
            // not bad input: exit 0, with where it came nearest.
            if result.best.is_none() {
                let near = search::closest(&result.points, &result.constraints).map(|i| {
                    let p = &result.points[i];
                    let at: Vec<String> = result
                        .params
                        .iter()
                        .zip(&p.values)
                        .map(|(q, v)| format!("{}={v}", q.key))
                        .collect();
                    let metrics: Vec<String> = result
                        .constraints
                        .iter()
                        .zip(&p.stats[1..])
                        .map(|(c, s)| {
                            let mean = s.mean.map_or("none".to_string(), |m| format!("{m:.4}"));
                            format!("{} {mean} (wanted {}{})", c.metric, c.op_text(), c.value)
                        })
                        .collect();
                    format!("{}: {}", at.join(" "), metrics.join(", "))
                });
                say!(
                    "no point of {} meets the constraints; closest: {}; widen --range or relax --subject-to",
                    result.points.len(),
                    near.unwrap_or_else(|| "none".into())
                );
            }
            Ok(())
        }
    }
}

/// Tells the user that an earlier, interrupted attempt's runs were reused.
fn say_resumed(reused: usize) {
    if reused > 0 {
        tell!("resumed: {reused} runs finished by an interrupted attempt were reused");
    }
}

fn finish_sweep(
    held: super::OutDir,
    table: &sweep::SweepTable,
    provenance: &crate::scenario::Provenance,
) -> Result<(), CliError> {
    let dir = held.path();
    let artifacts = crate::report::sweep::sweep_artifacts(table, &provenance.mmsim_version)?;
    write_artifacts(dir, &artifacts)?;
    write_whole(
        dir,
        "provenance.json",
        &json_bytes(&with_provenance(&json!({"seeds": table.seeds}), provenance)),
    )?;
    let target = held.target().to_owned();
    held.commit(&provenance.scenario_sha256)?;
    say_raw!("{}", crate::report::sweep::render_text(table));
    let names: Vec<&str> = artifacts.iter().map(|a| a.name.as_str()).collect();
    say!("→ {} ({})", target.display(), names.join(", "));
    Ok(())
}

/// `run` with replications: every seed's summary and wait quantiles under
/// `replications/seed-K/`, `summary.json` with a mean and a 95% interval
/// for every number, and a report whose plots carry the interval as bands.
/// Each seed's record is kept as the seed finishes (memory holds the seeds
/// under way, not every run), so a rerun of an interrupted replication resumes.
pub fn run_replicated(
    loaded: &LoadedScenario,
    held: super::OutDir,
    quiet: bool,
) -> Result<(), CliError> {
    let s = &loaded.scenario;
    let dir = held.path().to_owned();
    let seeds = seeds(s.run.seed, s.run.replications);
    let provenance = crate::scenario::Provenance::of(s);
    let store = super::RunFiles::new(&dir.join(super::JOBS_DIR));
    let bar = super::progress::Progress::runs(quiet);
    bar.set_length(seeds.len() as u64);
    let records = par_map(
        None,
        seeds.len(),
        |i| {
            load_or_run(
                Some(&store),
                || RunKey::new(s, None, seeds[i]),
                || {
                    let out = crate::run::run_summary(s, seeds[i], &mut |_, _| {});
                    json!({
                        "summary": out.summary.to_value(),
                        "perf": out.perf,
                        "wait_quantiles": crate::report::compare::wait_quantiles_json(&out.view.waits),
                    })
                },
            )
            .map(|_| ())
        },
        || bar.inc(1),
    )?;
    bar.finish_and_clear();
    records.into_iter().collect::<anyhow::Result<()>>()?;
    say_resumed(store.reused());
    // One seed's record at a time: its files are written, its numbers
    // folded into the aggregate, and only what the report reads is kept.
    let mut aggregator = Aggregator::new();
    let mut slims = Vec::with_capacity(seeds.len());
    let mut quantiles = Vec::with_capacity(seeds.len());
    let mut perf = Vec::with_capacity(seeds.len());
    for &seed in &seeds {
        let mut record = store.load(&RunKey::new(s, None, seed)).ok_or_else(|| {
            anyhow::anyhow!("the run of seed {seed} was saved but cannot be read back")
        })?;
        let summary = record["summary"].take();
        let seed_perf = record["perf"].take();
        let q = record["wait_quantiles"].take();
        let sub = dir.join("replications").join(format!("seed-{seed}"));
        write_whole(
            &sub,
            "summary.json",
            &json_bytes(&with_provenance(&summary, &provenance)),
        )?;
        write_whole(
            &sub,
            crate::report::compare::QUANTILES_FILE,
            &json_bytes(&q),
        )?;
        write_whole(
            &sub,
            "perf.json",
            &json_bytes(&with_provenance(&seed_perf, &provenance)),
        )?;
        aggregator.add(&summary);
        slims.push(crate::report::replicated::slim(&summary));
        quantiles.push(crate::report::compare::read_wait_quantiles(&q));
        perf.push(json!({"seed": seed, "perf": seed_perf}));
    }
    let agg = aggregator.finish(&seeds);
    write_whole(
        &dir,
        "summary.json",
        &json_bytes(&with_provenance(&agg, &provenance)),
    )?;
    let artifacts = crate::report::replicated::artifacts(&crate::report::replicated::Input {
        scenario_name: &s.run.name,
        scenario_toml: &loaded.text,
        seeds: &seeds,
        summaries: &slims,
        wait_quantiles: &quantiles,
        scenario_sha256: &provenance.scenario_sha256,
    })?;
    write_artifacts(&dir, &artifacts)?;
    write_whole(
        &dir,
        "perf.json",
        &json_bytes(&json!({"runs": perf, "provenance": provenance})),
    )?;
    write_whole(&dir, "scenario.toml", loaded.text.as_bytes())?;
    let target = held.target().to_owned();
    held.commit(&provenance.scenario_sha256)?;
    say!(
        "{}",
        text::replications_line(&s.run.name, &seeds, &agg, &target)
    );
    Ok(())
}

fn baseline_name(loaded: &LoadedScenario) -> String {
    format!("{}.json", loaded.scenario.run.name)
}

fn check_command(
    scenarios: &[PathBuf],
    dir: &Path,
    update: bool,
    n_seeds: Option<u32>,
    sets: &[String],
    jobs: Option<usize>,
) -> Result<(), CliError> {
    if !scenarios.is_empty() && !update {
        return Err(CliError::BadInput(
            "scenarios are only given with --update, to create their baselines; `mmsim check` alone checks every baseline in --baselines".into(),
        ));
    }
    if n_seeds == Some(0) {
        return Err(CliError::BadInput("--seeds must be 1 or more".into()));
    }
    // (scenario path as written, existing baseline if any)
    let mut targets: Vec<(String, Option<Baseline>)> = Vec::new();
    if scenarios.is_empty() {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(|e| {
                CliError::BadInput(format!(
                    "--baselines {}: {e}; create baselines with `mmsim check --update SCENARIO...`",
                    dir.display()
                ))
            })?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        if files.is_empty() {
            return Err(CliError::BadInput(format!(
                "no baselines (*.json) in {}; create them with `mmsim check --update SCENARIO...`",
                dir.display()
            )));
        }
        for f in files {
            let text = std::fs::read_to_string(&f)
                .map_err(|e| CliError::BadInput(format!("cannot read {}: {e}", f.display())))?;
            let b: Baseline = serde_json::from_str(&text).map_err(|e| {
                CliError::BadInput(format!("{} is not a baseline: {e}", f.display()))
            })?;
            targets.push((b.scenario.clone(), Some(b)));
        }
    } else {
        for s in scenarios {
            targets.push((s.to_string_lossy().into_owned(), None));
        }
    }
    let mut loaded = Vec::new();
    for (path, b) in &targets {
        let l = super::load_scenario(Path::new(path), sets, false)?;
        let seeds: Vec<u64> = match (b, n_seeds) {
            (Some(b), None) => b.seeds.clone(),
            (Some(b), Some(n)) => seeds(b.seeds.first().copied().unwrap_or(l.scenario.run.seed), n),
            (None, n) => seeds(l.scenario.run.seed, n.unwrap_or(5)),
        };
        loaded.push((l, seeds));
    }
    let refs: Vec<(&LoadedScenario, Vec<u64>)> =
        loaded.iter().map(|(l, s)| (l, s.clone())).collect();
    let results = check::run_all(&refs, jobs)?;
    if update {
        for (((path, _), (l, seeds)), summaries) in targets.iter().zip(&loaded).zip(&results) {
            let b = check::make_baseline(path, seeds, summaries)
                .map_err(|e| CliError::BadInput(e.to_string()))?;
            let name = baseline_name(l);
            write_whole(dir, &name, &json_bytes(&b))?;
            say!(
                "{}: baseline of {} metrics over {} seeds → {}",
                path,
                b.metrics.len(),
                seeds.len(),
                dir.join(&name).display()
            );
        }
        return Ok(());
    }
    let mut lines = Vec::new();
    for (((_, b), (l, _)), summaries) in targets.iter().zip(&loaded).zip(&results) {
        let b = b.as_ref().expect("check without --update reads baselines");
        lines.extend(check::compare(&l.scenario.run.name, b, summaries));
    }
    let table = text::check_table(&lines);
    let moved: Vec<_> = lines.iter().filter(|l| l.moved()).collect();
    if moved.is_empty() {
        say_raw!("{table}");
        say!(
            "check: {} metrics over {} scenarios within tolerance",
            lines.len(),
            targets.len()
        );
        Ok(())
    } else {
        say_raw!("{table}");
        Err(CliError::Regression(format!(
            "check: {} of {} metrics moved past their tolerance ({}):\n{}If the change is intended, rewrite the baselines with `mmsim check --update`.",
            moved.len(),
            lines.len(),
            check::TOLERANCE_RULE,
            text::check_table(&moved.into_iter().cloned().collect::<Vec<_>>())
        )))
    }
}
