//! The command line: arguments become validated configuration, then the
//! library does the work. Exit codes: 0 success, 1 a check found a
//! regression, 2 bad input or a failed write (stdout on a full disk
//! included), 130 and 143 stopped by SIGINT and SIGTERM (outputs untouched,
//! see `interrupt`); a closed stdout (`| head -1`) ends the process by
//! SIGPIPE, status 141 in a shell (see `main.rs`).

/// `println!` that fails the command instead of panicking when stdout
/// cannot take the text (`mmsim ... > /dev/full`: "No space left on device").
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($arg)*).map_err($crate::cli::stdout_failed)?
    }};
}

/// `eprintln!` that never panics: a message to a closed or full standard
/// error is lost, not turned into a panic (exit 101). The exit code still
/// says what happened.
macro_rules! tell {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr().lock(), $($arg)*);
    }};
}

/// `print!` with `say!`'s error instead of a panic.
macro_rules! say_raw {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        write!(std::io::stdout().lock(), $($arg)*).map_err($crate::cli::stdout_failed)?
    }};
}

pub mod catalogue;
mod compare;
mod explain;
mod fit;
mod interrupt;
mod progress;
mod rebalance;
mod ruleset;
mod trace;
mod tune;
mod write;

pub(crate) use write::write_new_file;
pub use write::{
    artifacts_sha256, check_writable, json_bytes, write_artifacts, write_whole, OutDir,
    PartialFile, RunFiles, JOBS_DIR,
};

use crate::scenario::{self, LoadedScenario};
use anyhow::Result;
use clap::{Parser, Subcommand};
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
        #[arg(long, allow_negative_numbers = true, value_parser = whole::<u64>)]
        seed: Option<u64>,
        /// Override a scenario key, e.g. --set policy.limit=200 (repeatable).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        sets: Vec<String>,
        /// Run even when the scenario would take more than a day of CPU
        /// (the budget `validate` prints).
        #[arg(long)]
        force: bool,
        /// No progress bar.
        #[arg(long)]
        quiet: bool,
        /// Run seeds seed..seed+N-1 and give every metric a mean and 95% CI
        /// (default: the scenario's run.replications).
        #[arg(long, allow_negative_numbers = true, value_parser = whole::<u32>)]
        replications: Option<u32>,
        /// `none` skips the per-row Parquet tables (tickets, matches, queue):
        /// summary, plots and report only.
        #[arg(long, value_enum, default_value = "all")]
        tables: TablesArg,
        /// Run a FlexMatch or AccelByte ruleset (JSON) as the policy, on the
        /// scenario's population (docs/rulesets.md).
        #[arg(long, value_name = "FILE.json")]
        ruleset: Option<PathBuf>,
        /// Record why each ticket waited: explain.jsonl and the summary's
        /// `explain` object (the same as `--set metrics.explain=true`).
        #[arg(long)]
        explain: bool,
    },
    /// Print what mmsim understood of a FlexMatch or AccelByte ruleset, rule
    /// by rule: its type, what it becomes, its expansion steps.
    ExplainRuleset {
        file: PathBuf,
        /// Map the attributes as this scenario's population and [ruleset]
        /// section would (default: by name only).
        #[arg(long)]
        scenario: Option<PathBuf>,
    },
    /// Check a scenario file and print what it would run.
    Validate {
        scenario: PathBuf,
        #[arg(long = "set", value_name = "KEY=VALUE")]
        sets: Vec<String>,
        /// Run even when the scenario would take more than a day of CPU
        /// (the budget `validate` prints).
        #[arg(long)]
        force: bool,
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
    /// Compare runs, replicated runs or sweep settings with the first (run
    /// folders, summary.json files or sweep folders): text, compare.json and
    /// compare.html with overlaid wait CDFs, paired differences when the
    /// runs share seeds and a world.
    Compare {
        #[arg(required = true, num_args = 1.., value_name = "RUN")]
        runs: Vec<PathBuf>,
        /// Folder for compare.html, compare.json and plots (default output/compare/).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Write a run's own tickets (fresh arrivals and returns, every party
    /// member, the patience drawn, and home, pings and roles when the run
    /// had them) as a trace CSV or Parquet file that `[arrivals] trace`
    /// replays, e.g. under another policy.
    Trace {
        /// A folder `mmsim run` wrote.
        run: PathBuf,
        /// The file to write (default RUN/trace.csv, or RUN/trace.parquet
        /// with --format parquet).
        #[arg(long)]
        out: Option<PathBuf>,
        /// csv or parquet (default: by --out's extension, else csv).
        #[arg(long)]
        format: Option<String>,
        /// Write the run's ticket log instead (CSV, default
        /// RUN/ticket-log.csv): every ticket's members, when and why it
        /// left, its match and the match's end; what `mmsim fit` reads.
        #[arg(long)]
        ticket_log: bool,
    },
    /// Fit a live game's ticket log (mmsim's CSV or Parquet log, or
    /// FlexMatch's event stream as JSON lines) into a scenario:
    /// DIR/scenario.toml, fit.json and fit.html (docs/fit.md).
    Fit(fit::FitArgs),
    /// Print one ticket's story from a run made with --explain: arrival,
    /// the passes that looked at it, what blocked it, when each rule would
    /// have allowed the match it got, how it ended.
    Explain {
        /// A folder `mmsim run --explain` wrote.
        run: PathBuf,
        /// The ticket's id (the `ticket` column of tickets.parquet).
        #[arg(long, allow_negative_numbers = true, value_parser = whole::<u32>)]
        ticket: u32,
    },
    /// Serve a what-if page for the scenario: a control for each policy
    /// and traffic key; each change reruns it on the baseline's seeds and
    /// shows paired differences with 95% intervals (docs/serve.md).
    Serve(crate::serve::Options),
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

/// The error of a write to stdout that failed.
pub(crate) fn stdout_failed(e: std::io::Error) -> CliError {
    CliError::BadInput(format!("cannot write to standard output: {e}"))
}

impl From<scenario::ScenarioError> for CliError {
    fn from(e: scenario::ScenarioError) -> Self {
        CliError::BadInput(e.to_string())
    }
}

pub fn main() -> i32 {
    interrupt::watch();
    crate::scenario::trace::read_parquet_with(crate::report::trace_file::rows);
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { 2 } else { 0 };
        }
    };
    // What `print!` left in stdout's buffer is written here, where a full
    // disk is still an error and not a panic at exit.
    let done = dispatch(cli.command).and_then(|()| {
        use std::io::Write as _;
        std::io::stdout().flush().map_err(stdout_failed)
    });
    match done {
        Ok(()) => 0,
        Err(CliError::Regression(msg)) => {
            tell!("{msg}");
            1
        }
        Err(CliError::BadInput(msg)) => {
            tell!("error: {msg}");
            2
        }
        Err(CliError::Other(e)) => {
            tell!("error: {e:#}");
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
            ruleset,
            explain,
            force,
        } => {
            let mut sets = ruleset::with_ruleset(sets, ruleset.as_deref())?;
            if explain {
                sets.push("metrics.explain=true".into());
            }
            let loaded = load_scenario(&scenario, &sets, force)?;
            let dir = out.unwrap_or_else(|| default_out_dir(&loaded));
            let reps = replications.unwrap_or(loaded.scenario.run.replications);
            if reps == 0 || reps > scenario::MAX_REPLICATIONS {
                return Err(CliError::BadInput(format!(
                    "--replications must be 1 to {}, got {reps}",
                    scenario::MAX_REPLICATIONS
                )));
            }
            // The scenario as run, seed included, is what is saved and hashed.
            let seed = seed.unwrap_or(loaded.scenario.run.seed);
            let loaded = loaded
                .with_run(seed, Some(reps))
                .map_err(|e| CliError::BadInput(e.to_string()))?;
            // Before simulating: an unwritable or busy --out fails now.
            // Replications resume: their finished seeds survive an interruption.
            let out = OutDir::lock(&dir, reps > 1).map_err(CliError::BadInput)?;
            if reps > 1 {
                return tune::run_replicated(&loaded, out, quiet);
            }
            run_command(&loaded, out, quiet, tables.into(), true)
        }
        Command::ExplainRuleset { file, scenario } => {
            say_raw!("{}", ruleset::explain(&file, scenario.as_deref())?);
            Ok(())
        }
        Command::Validate {
            scenario,
            sets,
            force,
        } => {
            let loaded = load_scenario(&scenario, &sets, force)?;
            let settings = validate_sweep(&loaded)?;
            let s = &loaded.scenario;
            // With a trace, the players and arrivals are the trace's.
            let (players, arrivals) = match &s.arrivals.trace_data {
                Some(t) => (t.players.len().to_string(), "traced arrivals".to_string()),
                None => (
                    s.population.size.to_string(),
                    format!(
                        "{} arrivals/s",
                        crate::report::number::num(s.arrivals.rate_per_s)
                    ),
                ),
            };
            say!(
                "{}: ok — {} over {} ({} warm-up), {} players, {}, {}v{} ({} teams), policy {}, rating {}",
                loaded.path.display(),
                s.run.name,
                crate::report::text::duration(s.run.duration.secs()),
                crate::report::text::duration(s.run.warmup.secs()),
                players,
                arrivals,
                s.format.team_size,
                s.format.team_size,
                s.format.teams,
                s.policy.name(),
                s.rating.name()
            );
            if let Some(line) = ruleset::validate_line(s) {
                say!("{line}");
            }
            for line in describe_world(s) {
                say!("{line}");
            }
            if let Some(m) = &s.modes {
                let each: Vec<String> = m
                    .queues
                    .iter()
                    .map(|q| {
                        format!(
                            "{} {}%",
                            q.name,
                            crate::report::number::num(q.share * 100.0)
                        )
                    })
                    .collect();
                say!(
                    "modes: {} (the format and policy above are their defaults); multi-queue: {}% of the tickets drawn for [{}] queue for all of them",
                    each.join(", "),
                    crate::report::number::num(m.multi_queue_share * 100.0),
                    m.multi_queue.join(", ")
                );
                let locks: Vec<String> = m
                    .queues
                    .iter()
                    .filter_map(|q| {
                        q.unlock_games
                            .filter(|&g| g > 0)
                            .map(|g| format!("{} after {g} games", q.name))
                    })
                    .collect();
                if !m.ladders.is_empty() {
                    let each: Vec<String> = m
                        .ladders
                        .iter()
                        .map(|l| {
                            let modes: Vec<&str> = m
                                .queues
                                .iter()
                                .filter(|q| q.ladder.as_ref() == Some(l))
                                .map(|q| q.name.as_str())
                                .collect();
                            format!("{l} [{}]", modes.join(", "))
                        })
                        .collect();
                    say!(
                        "ladders: {}, each with its own solo and party ratings",
                        each.join(", ")
                    );
                }
                if !locks.is_empty() {
                    say!(
                        "unlocks: {} (games before the run count); a party with a member short is refused the mode",
                        locks.join(", ")
                    );
                }
            }
            if let (Some(file), Some(t)) = (&s.arrivals.trace, &s.arrivals.trace_data) {
                say!(
                    "trace {file}: {} tickets of {} players replace the population and arrivals",
                    t.tickets.len(),
                    t.players.len()
                );
            }
            say!(
                "scenario_sha256 {} (as its outputs' provenance records it)",
                scenario::provenance::scenario_sha256(s)
            );
            let budget = loaded.check_budget(None)?;
            let draws = if s.arrivals.daily_profile.is_some() {
                format!(
                    " ({:.0} arrivals drawn at the busiest hour reached, the rest thinned)",
                    budget.arrival_draws
                )
            } else {
                String::new()
            };
            say!(
                "budget: about {:.0} tickets{draws}, {} of memory, at least {:.0} s of CPU (1v1 rate; teams and the quality policy are slower)",
                budget.expected_tickets,
                scenario::gb(budget.memory_bytes),
                budget.min_cpu_s.ceil()
            );
            say!(
                "{}",
                estimate_line(scenario::estimate::estimate(s, &budget))
            );
            if settings > 0 {
                say!("sweep: {settings} settings, each valid (the estimate is per setting)");
            }
            Ok(())
        }
        Command::Rebalance { file, method, json } => {
            rebalance::rebalance_command(&file, &method, json)
        }
        Command::Compare { runs, out, json } => compare::compare_command(&runs, out, json),
        Command::Trace {
            run,
            out,
            format,
            ticket_log,
        } => trace::trace_command(&run, out, format.as_deref(), ticket_log),
        Command::Fit(args) => fit::fit_command(args),
        Command::Explain { run, ticket } => explain::explain_command(&run, ticket),
        Command::Tuning(c) => tune::dispatch(c),
        Command::Serve(options) => crate::serve::serve(options),
        Command::Policies => {
            say_raw!("{}", catalogue::text(&catalogue::FAMILIES[0]));
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
                    say!("{gap}{hash}[{}], picked by `{}`\n", f.name, f.tag);
                }
                if markdown {
                    say_raw!("{}", catalogue::markdown(f));
                } else {
                    say_raw!("{}", catalogue::text(f));
                }
            }
            Ok(())
        }
    }
}

/// A scenario's duration as it would be written: `12h`, `10m`, `1h30m`, `45s`.
/// A whole-number flag's value. clap's own parser says "invalid digit
/// found in string" and takes `-1` for an unknown flag; this names what the
/// flag allows.
pub(crate) fn whole<T>(s: &str) -> Result<T, String>
where
    T: std::str::FromStr + flag_max::Max,
{
    s.trim()
        .parse::<T>()
        .map_err(|_| format!("`{s}` is not a whole number from 0 to {}", T::MAX))
}

/// The largest value of each flag's number type, as `whole` names it.
pub(crate) mod flag_max {
    pub trait Max {
        const MAX: u64;
    }
    impl Max for u32 {
        const MAX: u64 = u32::MAX as u64;
    }
    impl Max for u64 {
        const MAX: u64 = u64::MAX;
    }
    impl Max for u16 {
        const MAX: u64 = u16::MAX as u64;
    }
    impl Max for usize {
        const MAX: u64 = usize::MAX as u64;
    }
}

/// `validate`'s estimate line: the run's time and its peak from the pilots,
/// or why no pilot ran.
fn estimate_line(e: Option<scenario::estimate::Estimate>) -> String {
    let Some(e) = e else {
        return "estimate: none; the budget's lower bound is already more than a day of CPU, so no pilot was run".to_owned();
    };
    // Wall times: under a minute to the hundredth of a second.
    let wall = |x: f64| {
        if x < 60.0 {
            format!("{x:.2} s")
        } else {
            crate::report::text::duration(x)
        }
    };
    let how = if e.whole {
        format!(
            "the pilots ran the whole simulation, in {}",
            wall(e.pilots_wall_s)
        )
    } else {
        format!(
            "pilots of the first {} and half of it took {}; later stretches cost what the pilot's second half did",
            crate::report::text::duration(e.pilot.as_secs_f64()),
            wall(e.pilots_wall_s)
        )
    };
    format!(
        "estimate: about {} for one seed on this machine, every output written ({how}); at the busiest moment about {} players online at once",
        wall(e.run_s),
        crate::report::number::num(e.peak_concurrent_players.round())
    )
}

/// What `validate` says of the world beyond the first line: the party mix,
/// the role queue, the data centres and the replications, each when the
/// scenario has it, so a designer reads what will run before running it.
fn describe_world(s: &scenario::Scenario) -> Vec<String> {
    let pct = |x: f64| crate::report::number::num((x * 1000.0).round() / 10.0);
    let mut lines = Vec::new();
    if s.arrivals.trace_data.is_none() {
        let total: f64 = s.arrivals.party_sizes.iter().sum();
        let mix: Vec<String> = (s.arrivals.party_sizes.iter().enumerate())
            .filter(|(_, w)| **w > 0.0)
            .map(|(i, w)| format!("{}: {}%", i + 1, pct(w / total)))
            .collect();
        lines.push(format!(
            "parties by size: {}; patience {}; {}% of played tickets queue again after {}",
            mix.join(", "),
            match &s.arrivals.patience {
                scenario::Patience::Exponential { mean } => {
                    format!(
                        "exponential, mean {}",
                        crate::report::text::duration(mean.secs())
                    )
                }
                scenario::Patience::Fixed { after } => {
                    format!(
                        "everyone gives up after {}",
                        crate::report::text::duration(after.secs())
                    )
                }
                scenario::Patience::Weibull { shape, scale } => format!(
                    "Weibull, shape {shape}, scale {}",
                    crate::report::text::duration(scale.secs())
                ),
                scenario::Patience::LogNormal { median, sigma } => format!(
                    "log-normal, median {}, sigma {sigma}",
                    crate::report::text::duration(median.secs())
                ),
                scenario::Patience::Never {} => "none (nobody gives up)".to_string(),
            },
            pct(s.arrivals.requeue_prob),
            crate::report::text::duration(s.arrivals.think_time.secs())
        ));
    }
    if let Some(r) = &s.roles {
        let comp: Vec<String> = r
            .composition
            .iter()
            .map(|(k, n)| format!("{n} {k}"))
            .collect();
        let mains: Vec<String> = (r.names.iter().zip(&r.shares))
            .map(|(n, w)| format!("{n} {}%", pct(*w / r.shares.iter().sum::<f64>())))
            .collect();
        lines.push(format!(
            "roles: each team {}; main roles {}; {}% also accept a second",
            comp.join(" + "),
            mains.join(", "),
            pct(r.second_prob)
        ));
    }
    if let Some(r) = &s.regions {
        let homes: Vec<String> = r
            .homes
            .iter()
            .map(|h| format!("{} {}%", h.name, pct(h.share)))
            .collect();
        lines.push(format!(
            "regions: data centres {}; homes {}",
            r.data_centres.join(", "),
            homes.join(", ")
        ));
    }
    if s.run.replications > 1 {
        lines.push(format!(
            "replications: {} seeds, {} to {}",
            s.run.replications,
            s.run.seed,
            s.run.seed + u64::from(s.run.replications) - 1
        ));
    }
    lines
}

/// Loads a scenario for any command. The schema leaves `[sweep]` to
/// `tune`, so it is checked here too: a mistake in it fails every command,
/// not just `sweep`.
/// Unless `force`, a run that would take more than a day of CPU is refused.
pub(crate) fn load_scenario(
    path: &Path,
    sets: &[String],
    force: bool,
) -> Result<LoadedScenario, CliError> {
    let loaded = scenario::load(path, sets)?;
    crate::tune::SweepSection::read(&loaded)?;
    loaded.check_budget(available_memory_bytes())?;
    if !force {
        loaded.check_time()?;
    }
    Ok(loaded)
}

/// MemAvailable from /proc/meminfo: what a run may take without swapping.
/// `None` where there is no such file (not Linux): then nothing is refused.
pub(crate) fn available_memory_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Checks every setting of the scenario's `[sweep]`, as `sweep` would run
/// them, so `validate` refuses a grid value the scenario refuses (`-5`),
/// naming the setting, the key and the grid's line in the file.
fn validate_sweep(loaded: &LoadedScenario) -> Result<usize, CliError> {
    use crate::tune::sweep;
    if loaded.scenario.sweep.is_none() {
        return Ok(0);
    }
    let section = crate::tune::SweepSection::read(loaded)?;
    let all = sweep::settings(&section).map_err(|e| CliError::BadInput(e.to_string()))?;
    sweep::load_settings(loaded, &all).map_err(|e| {
        let text = std::fs::read_to_string(&loaded.path).unwrap_or_default();
        let message = match e {
            sweep::SweepError::Bad(m) => m,
            sweep::SweepError::Other(e) => format!("{e:#}"),
        };
        // The grid's line: the first quoted key the message names.
        let line = message
            .split('`')
            .skip(1)
            .step_by(2)
            .find_map(|key| {
                text.lines()
                    .position(|l| l.trim_start().starts_with(&format!("\"{key}\"")))
            })
            .map(|i| format!(":{}", i + 1))
            .unwrap_or_default();
        CliError::BadInput(format!("{}{line}: {message}", loaded.path.display()))
    })?;
    Ok(all.len())
}

pub fn default_out_dir(loaded: &LoadedScenario) -> PathBuf {
    Path::new("output").join(&loaded.scenario.run.name)
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

/// The key-value metadata every Parquet table of a run carries (COLUMNS.md lists it).
fn parquet_metadata(p: &scenario::Provenance, name: &str, seed: u64) -> Vec<(String, String)> {
    [
        ("mmsim.version", p.mmsim_version.clone()),
        ("mmsim.scenario_sha256", p.scenario_sha256.clone()),
        ("mmsim.seed", seed.to_string()),
        ("mmsim.scenario", name.to_string()),
    ]
    .map(|(k, v)| (k.to_string(), v))
    .to_vec()
}

/// One run with every output but the per-row tables into `dir`, as `mmsim
/// run --tables none --quiet` writes it: the full report `mmsim serve`
/// links to.
pub(crate) fn write_full_run(loaded: &LoadedScenario, dir: &Path) -> Result<(), CliError> {
    let out = OutDir::lock(dir, false).map_err(CliError::BadInput)?;
    run_command(loaded, out, true, crate::report::Tables::None, false)
}

/// Runs `loaded` on its own `run.seed` (the caller set it with `with_run`,
/// so the saved scenario.toml and its hash name the seed used).
fn run_command(
    loaded: &LoadedScenario,
    out_dir: OutDir,
    quiet: bool,
    tables: crate::report::Tables,
    announce: bool,
) -> Result<(), CliError> {
    let dir = out_dir.path();
    let s = &loaded.scenario;
    let seed = s.run.seed;
    let provenance = scenario::Provenance::of(s);
    let file_meta = parquet_metadata(&provenance, &s.run.name, seed);
    let bar = progress::Progress::simulated(quiet);
    let mut progress = |now: crate::model::SimTime, end: crate::model::SimTime| {
        // The message first: the plain line may print on the position.
        bar.set_message(format!(
            "{:.1}h of {:.1}h",
            now.as_secs_f64() / 3600.0,
            end.as_secs_f64() / 3600.0
        ));
        bar.set_position(now.as_ms() * 1000 / end.as_ms().max(1));
    };
    // Ticket and match rows stream to their tables while the run goes; the
    // tables take their names only once the run has finished.
    let (out, table_rows) = if tables == crate::report::Tables::All {
        let mut t = PartialFile::create(dir, "tickets.parquet")?;
        let mut m = PartialFile::create(dir, "matches.parquet")?;
        let roles = s.roles.as_ref().map(|r| r.names.clone());
        let regions = s
            .regions
            .as_ref()
            .map(|r| crate::report::tables::RegionNames {
                homes: r.homes.iter().map(|h| h.name.clone()).collect(),
                data_centres: r.data_centres.clone(),
            });
        let modes = s
            .modes
            .as_ref()
            .map(|m| m.queues.iter().map(|q| q.name.clone()).collect());
        let mut rows = crate::report::tables::ParquetRows::with_mode_columns(
            &mut t.out, &mut m.out, &file_meta, roles, regions, modes,
        )?;
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
            stories: out.explain.as_deref().unwrap_or(&[]),
        },
        tables,
        &file_meta,
    )?;
    write_whole(
        dir,
        "summary.json",
        &json_bytes(&with_provenance(&out.summary, &provenance)),
    )?;
    write_whole(dir, "scenario.toml", loaded.text.as_bytes())?;
    if let Some(stories) = &out.explain {
        write_whole(dir, explain::FILE, &explain::jsonl(stories))?;
    }
    write_whole(
        dir,
        crate::report::compare::QUANTILES_FILE,
        &json_bytes(&crate::report::compare::wait_quantiles_json(
            &out.view.waits,
        )),
    )?;
    write_artifacts(dir, &artifacts)?;
    if tables == crate::report::Tables::All {
        write_artifacts(
            dir,
            &[crate::report::tables::players_artifact_with(
                &out.players,
                &out.ladders,
                &file_meta,
            )?],
        )?;
    }
    write_whole(
        dir,
        "perf.json",
        &json_bytes(&with_provenance(&out.perf, &provenance)),
    )?;
    let target = out_dir.target().to_owned();
    out_dir.commit(&provenance.scenario_sha256)?;
    // A server's report is not announced: its stdout may be long gone.
    if announce {
        say!(
            "{}",
            crate::report::text::run_line(&s.run.name, &out.summary, &target)
        );
    }
    Ok(())
}
