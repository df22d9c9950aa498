//! The command line: arguments become validated configuration, then the
//! library does the work. Exit codes: 0 success, 1 a check found a
//! regression, 2 bad input, 130 and 143 stopped by SIGINT and SIGTERM
//! (outputs untouched, see `interrupt`); a closed stdout (`| head -1`) ends the
//! process by SIGPIPE, status 141 in a shell (see `main.rs`).

pub mod catalogue;
mod interrupt;
mod rebalance;
mod tune;
mod write;

pub use write::{
    check_writable, json_bytes, write_artifacts, write_whole, OutDir, PartialFile, RunFiles,
    JOBS_DIR,
};

use crate::scenario::{self, LoadedScenario};
use anyhow::Result;
use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

#[derive(Parser, Debug)]
#[command(
    name = "mmsim",
    version,
    about = "Discrete-event simulator of online-game matchmaking"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// `--tables`: whether a run writes its per-row tables.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum TablesArg {
    All,
    None,
}

impl From<TablesArg> for crate::report::Tables {
    fn from(t: TablesArg) -> Self {
        match t {
            TablesArg::All => crate::report::Tables::All,
            TablesArg::None => crate::report::Tables::None,
        }
    }
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run a scenario and write summary.json, perf.json, tables, plots and report.html.
    Run {
        scenario: PathBuf,
        /// Output folder (default: output/<scenario name>/).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Seed instead of the scenario's run.seed.
        #[arg(long)]
        seed: Option<u64>,
        /// Override a scenario key, e.g. --set policy.limit=200 (repeatable).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        sets: Vec<String>,
        /// No progress bar.
        #[arg(long)]
        quiet: bool,
        /// Run seeds seed..seed+N-1 and give every metric a mean and 95% CI
        /// (default: the scenario's run.replications).
        #[arg(long)]
        replications: Option<u32>,
        /// `none` skips the per-row Parquet tables (tickets, matches, queue):
        /// summary, plots and report only.
        #[arg(long, value_enum, default_value = "all")]
        tables: TablesArg,
    },
    /// Check a scenario file and print what it would run.
    Validate {
        scenario: PathBuf,
        #[arg(long = "set", value_name = "KEY=VALUE")]
        sets: Vec<String>,
    },
    /// List the matchmaking policies and their parameters.
    Policies,
    /// List every plug-in (policies, team formers, rating systems, outcome
    /// models): where each comes from and its parameters.
    Catalogue {
        /// Only this family: `policy`, `teams`, `rating` or `outcome`.
        #[arg(value_parser = ["policy", "teams", "rating", "outcome"])]
        family: Option<String>,
        /// Markdown tables, as docs/policies.md and docs/scenarios.md embed them.
        #[arg(long)]
        markdown: bool,
    },
    /// Split a JSON list of players (party, attributes) into teams and print
    /// the teams and their distances (the AccelByte examples paste in as-is).
    Rebalance {
        file: PathBuf,
        /// accelbyte (chosen by the ruleset), permutation, combination, greedy, balanced or abba.
        #[arg(long, default_value = "accelbyte")]
        method: String,
        /// Print the result as JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Put the metrics of two runs side by side (folders holding summary.json, or the files).
    Compare {
        run_a: PathBuf,
        run_b: PathBuf,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    #[command(flatten)]
    Tuning(tune::TuningCommand),
}

/// Failures that map to exit codes.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error("{0}")]
    BadInput(String),
    #[error("{0}")]
    Regression(String),
    #[error(transparent)]
    Other(#[from] anyhow::Error),
}

impl From<scenario::ScenarioError> for CliError {
    fn from(e: scenario::ScenarioError) -> Self {
        CliError::BadInput(e.to_string())
    }
}

pub fn main() -> i32 {
    interrupt::watch();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { 2 } else { 0 };
        }
    };
    match dispatch(cli.command) {
        Ok(()) => 0,
        Err(CliError::Regression(msg)) => {
            eprintln!("{msg}");
            1
        }
        Err(CliError::BadInput(msg)) => {
            eprintln!("error: {msg}");
            2
        }
        Err(CliError::Other(e)) => {
            eprintln!("error: {e:#}");
            2
        }
    }
}

fn dispatch(command: Command) -> Result<(), CliError> {
    match command {
        Command::Run {
            scenario,
            out,
            seed,
            sets,
            quiet,
            replications,
            tables,
        } => {
            let loaded = load_scenario(&scenario, &sets)?;
            let dir = out.unwrap_or_else(|| default_out_dir(&loaded));
            let reps = replications.unwrap_or(loaded.scenario.run.replications);
            if reps == 0 {
                return Err(CliError::BadInput(
                    "--replications must be 1 or more".into(),
                ));
            }
            // The scenario as run, seed included, is what is saved and hashed.
            let seed = seed.unwrap_or(loaded.scenario.run.seed);
            let loaded = loaded
                .with_run(seed, Some(reps))
                .map_err(CliError::BadInput)?;
            // Before simulating: an unwritable or busy --out fails now.
            // Replications resume: their finished seeds survive an interruption.
            let out = OutDir::lock(&dir, reps > 1).map_err(CliError::BadInput)?;
            if reps > 1 {
                return tune::run_replicated(&loaded, out, quiet);
            }
            run_command(&loaded, out, quiet, tables.into())
        }
        Command::Validate { scenario, sets } => {
            let loaded = load_scenario(&scenario, &sets)?;
            let s = &loaded.scenario;
            println!(
                "{}: ok — {} over {} ({} warm-up), {} players, {} arrivals/s, {}v{} ({} teams), policy {}, rating {}",
                loaded.path.display(),
                s.run.name,
                s.run.duration.0,
                s.run.warmup.0,
                s.population.size,
                crate::report::text::num(s.arrivals.rate_per_s),
                s.format.team_size,
                s.format.team_size,
                s.format.teams,
                s.policy.name(),
                s.rating.name()
            );
            println!(
                "scenario_sha256 {} (as its outputs' provenance records it)",
                scenario::provenance::scenario_sha256(s)
            );
            Ok(())
        }
        Command::Rebalance { file, method, json } => {
            rebalance::rebalance_command(&file, &method, json)
        }
        Command::Compare { run_a, run_b, json } => compare_command(&run_a, &run_b, json),
        Command::Tuning(c) => tune::dispatch(c),
        Command::Policies => {
            print!("{}", catalogue::text(&catalogue::FAMILIES[0]));
            Ok(())
        }
        Command::Catalogue { family, markdown } => {
            let families: Vec<&catalogue::Family> = match &family {
                Some(name) => catalogue::family(name).into_iter().collect(),
                None => catalogue::FAMILIES.iter().collect(),
            };
            for (i, f) in families.iter().enumerate() {
                if families.len() > 1 {
                    let gap = if i > 0 { "\n" } else { "" };
                    let hash = if markdown { "## " } else { "" };
                    println!("{gap}{hash}[{}], picked by `{}`\n", f.name, f.tag);
                }
                if markdown {
                    print!("{}", catalogue::markdown(f));
                } else {
                    print!("{}", catalogue::text(f));
                }
            }
            Ok(())
        }
    }
}

/// Loads a scenario for any command. The schema leaves `[sweep]` to
/// `tune`, so it is checked here too: a mistake in it fails every command,
/// not just `sweep`.
pub(crate) fn load_scenario(path: &Path, sets: &[String]) -> Result<LoadedScenario, CliError> {
    let loaded = scenario::load(path, sets)?;
    crate::tune::SweepSection::read(&loaded)?;
    Ok(loaded)
}

pub fn default_out_dir(loaded: &LoadedScenario) -> PathBuf {
    Path::new("output").join(&loaded.scenario.run.name)
}

fn progress_bar(quiet: bool) -> ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(1000), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{spinner} simulated {msg} [{bar:40}] {percent}% ({elapsed})")
            .expect("static template")
            .progress_chars("=> "),
    );
    bar
}

/// A bar counted in runs, for work spread over seeds and settings.
fn progress_bar_runs(quiet: bool) -> ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} runs {pos}/{len} [{bar:40}] ({elapsed}, eta {eta})",
        )
        .expect("static template")
        .progress_chars("=> "),
    );
    bar
}

/// `value` as JSON with a `provenance` block last: where the output came
/// from (mmsim version, scenario hash). `compare` reads only numbers, so the
/// block's strings never appear as metrics.
pub(crate) fn with_provenance(
    value: &impl serde::Serialize,
    provenance: &scenario::Provenance,
) -> serde_json::Value {
    let mut v = serde_json::to_value(value).expect("in-memory JSON serializes");
    if let serde_json::Value::Object(m) = &mut v {
        m.insert(
            "provenance".into(),
            serde_json::to_value(provenance).expect("provenance serializes"),
        );
    }
    v
}

/// Runs `loaded` on its own `run.seed` (the caller set it with `with_run`,
/// so the saved scenario.toml and its hash name the seed used).
fn run_command(
    loaded: &LoadedScenario,
    out_dir: OutDir,
    quiet: bool,
    tables: crate::report::Tables,
) -> Result<(), CliError> {
    let dir = out_dir.path();
    let s = &loaded.scenario;
    let seed = s.run.seed;
    let provenance = scenario::Provenance::of(s);
    let bar = progress_bar(quiet);
    let mut progress = |now: crate::model::SimTime, end: crate::model::SimTime| {
        bar.set_position(now.as_ms() * 1000 / end.as_ms().max(1));
        bar.set_message(format!("{:.1}h", now.as_secs_f64() / 3600.0));
    };
    // Ticket and match rows stream to their tables while the run goes; the
    // tables take their names only once the run has finished.
    let (out, table_rows) = if tables == crate::report::Tables::All {
        let mut t = PartialFile::create(dir, "tickets.parquet")?;
        let mut m = PartialFile::create(dir, "matches.parquet")?;
        let mut rows = crate::report::tables::ParquetRows::new(&mut t.out, &mut m.out)?;
        // Encoding and writing the tables runs on a second thread beside the simulation.
        let out = std::thread::scope(|scope| {
            let mut behind = crate::metrics::BackgroundRows::spawn(scope, &mut rows);
            crate::run::run(s, seed, &mut progress, &mut behind)
        })?;
        let counts = rows.rows();
        drop(rows);
        t.commit()?;
        m.commit()?;
        (out, Some(counts))
    } else {
        (crate::run::run_summary(s, seed, &mut progress), None)
    };
    bar.finish_and_clear();
    let artifacts = crate::report::run_artifacts_with(
        &crate::report::ReportInput {
            scenario_name: &s.run.name,
            scenario_toml: &loaded.text,
            seed,
            view: &out.view,
            summary: &out.summary,
            table_rows,
            warmup_s: s.run.warmup.secs(),
            duration_s: s.run.duration.secs(),
        },
        tables,
    )?;
    write_whole(
        dir,
        "summary.json",
        &json_bytes(&with_provenance(&out.summary, &provenance)),
    )?;
    write_whole(dir, "scenario.toml", loaded.text.as_bytes())?;
    write_artifacts(dir, &artifacts)?;
    write_whole(
        dir,
        "perf.json",
        &json_bytes(&with_provenance(&out.perf, &provenance)),
    )?;
    let target = out_dir.target().to_owned();
    out_dir.commit()?;
    println!(
        "{}",
        crate::report::text::run_line(&s.run.name, &out.summary, &target)
    );
    Ok(())
}

/// Reads a run's summary from its folder or from the file itself.
fn read_summary(path: &Path) -> Result<serde_json::Value, CliError> {
    let file = if path.is_dir() {
        path.join("summary.json")
    } else {
        path.to_owned()
    };
    let text = std::fs::read_to_string(&file)
        .map_err(|e| CliError::BadInput(format!("cannot read {}: {e}", file.display())))?;
    serde_json::from_str(&text)
        .map_err(|e| CliError::BadInput(format!("{} is not a summary.json: {e}", file.display())))
}

fn compare_command(a: &Path, b: &Path, json: bool) -> Result<(), CliError> {
    let (sa, sb) = (read_summary(a)?, read_summary(b)?);
    // Same seed means same arrivals (common random numbers): differences are paired.
    let paired = sa.get("seed").is_some() && sa.get("seed") == sb.get("seed");
    let names = (&*a.to_string_lossy(), &*b.to_string_lossy());
    let versions = [&sa, &sb].map(|s| {
        s.pointer("/provenance/mmsim_version")
            .and_then(|v| v.as_str())
            .map(str::to_owned)
    });
    let other_builds = versions[0] != versions[1];
    if json {
        let mut v = crate::report::compare_json(&sa, &sb, names, paired);
        if let (true, Some(m)) = (other_builds, v.as_object_mut()) {
            m.insert(
                "mmsim_versions".into(),
                serde_json::json!({"a": versions[0], "b": versions[1]}),
            );
        }
        println!(
            "{}",
            serde_json::to_string_pretty(&v).expect("JSON serializes")
        );
    } else {
        if other_builds {
            let said = |v: &Option<String>| match v {
                Some(v) => format!("mmsim {v}"),
                None => "an mmsim that did not record its version".to_owned(),
            };
            println!(
                "note: {} was written by {} and {} by {}: differences may come from the code, not the setting",
                names.0,
                said(&versions[0]),
                names.1,
                said(&versions[1])
            );
        }
        print!("{}", crate::report::compare(&sa, &sb, names, paired));
    }
    Ok(())
}
