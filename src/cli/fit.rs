//! `mmsim fit LOG --out DIR`: a live game's ticket log fitted into a
//! scenario (`scenario.toml`, `fit.json`, `fit.html`), and with `--check
//! RULES` that scenario run under the log's rules and set against the log.
//! Also the ticket log of a run (`mmsim trace RUN --ticket-log`), which is
//! how the recovery tests get logs from known scenarios.

use super::{write_artifacts, CliError, OutDir};
use crate::metrics::{KeepRows, TicketEnd};
use crate::report::Artifact;
use crate::scenario::{self, trace::TraceWriter, Scenario};
use mmsim_fit::log::{LogPlayer, LogTicket, Reason, TicketLog};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The largest log read.
pub const MAX_LOG_BYTES: u64 = 1 << 30;

/// How a log file is read: by `--format`, else by its extension
/// (`.parquet`, `.jsonl`/`.json` for FlexMatch events, else CSV).
pub fn read_log(path: &Path, format: Option<&str>) -> Result<TicketLog, CliError> {
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let kind = match format {
        Some(f @ ("csv" | "parquet" | "flexmatch")) => f,
        Some(f) => {
            return Err(CliError::BadInput(format!(
                "--format {f}: allowed are csv, parquet and flexmatch"
            )))
        }
        None => match ext.as_str() {
            "parquet" => "parquet",
            "jsonl" | "json" | "ndjson" => "flexmatch",
            _ => "csv",
        },
    };
    let cannot =
        |e: std::io::Error| CliError::BadInput(format!("cannot read {}: {e}", path.display()));
    let named = |e: mmsim_fit::LogError| CliError::BadInput(format!("{}: {e}", path.display()));
    match kind {
        "parquet" => {
            use std::io::Read as _;
            let mut bytes = Vec::new();
            std::fs::File::open(path)
                .and_then(|f| f.take(MAX_LOG_BYTES + 1).read_to_end(&mut bytes))
                .map_err(cannot)?;
            if bytes.len() as u64 > MAX_LOG_BYTES {
                return Err(CliError::BadInput(format!(
                    "{}: larger than the {} MB allowed",
                    path.display(),
                    MAX_LOG_BYTES >> 20
                )));
            }
            let (header, rows) = crate::report::trace_file::rows(&bytes, mmsim_fit::log::MAX_ROWS)
                .map_err(|e| CliError::BadInput(format!("{}: {e}", path.display())))?;
            let rows = rows.enumerate().map(|(i, r)| Ok((i + 1, r)));
            mmsim_fit::log::parse_rows(header, "row", rows).map_err(named)
        }
        _ => {
            let text = scenario::read_bounded(path, MAX_LOG_BYTES).map_err(cannot)?;
            if kind == "flexmatch" {
                mmsim_fit::flexmatch::parse(&text).map_err(named)
            } else {
                mmsim_fit::log::parse_csv(&text).map_err(named)
            }
        }
    }
}

/// Runs `s` on `seed` and returns its tickets as a ticket log: every
/// member with the rating, home, pings and roles they joined with (the
/// trace's rows), and how and when each ticket left (the run's records).
pub fn run_ticket_log(
    s: &Scenario,
    seed: u64,
) -> Result<(TicketLog, crate::run::RunOutput), CliError> {
    let mut writer = TraceWriter::new(scenario::trace::Context::of(s));
    let mut rows = KeepRows::default();
    let output = crate::run::run_logging(s, seed, &mut |_, _| {}, &mut rows, Some(&mut writer))?;
    let ended: BTreeMap<u32, Option<f64>> = rows
        .0
        .matches
        .iter()
        .map(|m| (m.id.0, m.ended.map(|t| t.as_secs_f64())))
        .collect();
    let mut members: BTreeMap<u32, Vec<LogPlayer>> = BTreeMap::new();
    let dcs: Vec<String> = writer
        .ctx
        .regions
        .as_ref()
        .map(|(d, _)| d.clone())
        .unwrap_or_default();
    for i in 0..writer.rows() {
        let list = members.entry(writer.ticket[i]).or_default();
        // A ticket sent back by a failed ready check is logged again; its
        // members are the same.
        let player = writer.player[i].to_string();
        if list.iter().any(|p| p.id == player) {
            continue;
        }
        list.push(LogPlayer {
            id: player,
            rating: Some(writer.rating[i]),
            region: writer
                .ctx
                .regions
                .is_some()
                .then(|| writer.region_name(i).to_owned()),
            pings_ms: writer.row_pings(i).iter().map(|&p| f64::from(p)).collect(),
            roles: if writer.ctx.roles.is_some() {
                writer.roles_text(i).split('|').map(str::to_owned).collect()
            } else {
                Vec::new()
            },
        });
    }
    let end_s = s.run.duration.0.as_secs_f64();
    let tickets: Vec<LogTicket> = rows
        .0
        .tickets
        .iter()
        .map(|t| {
            let (reason, match_id, match_end_s) = match t.end {
                TicketEnd::Matched(m) => (
                    Reason::Matched,
                    Some(m.0.to_string()),
                    ended.get(&m.0).copied().flatten(),
                ),
                TicketEnd::Abandoned => (Reason::Abandoned, None, None),
                // A player who declined a ready check left, but not for
                // want of patience: censored, as the matchmaker's timeout.
                TicketEnd::Declined => (Reason::TimedOut, None, None),
                TicketEnd::Waiting => (Reason::Waiting, None, None),
            };
            LogTicket {
                ticket: t.ticket.0.to_string(),
                line: 0,
                enqueue_s: t.enqueued.as_secs_f64(),
                leave_s: t.left.as_secs_f64(),
                reason,
                players: members.remove(&t.ticket.0).unwrap_or_default(),
                requeue: Some(t.requeue),
                match_id,
                match_end_s,
            }
        })
        .filter(|t| !t.players.is_empty())
        .collect();
    Ok((mmsim_fit::log::finish(tickets, end_s, dcs, "line"), output))
}

fn parse_duration(flag: &str, v: &str) -> Result<f64, CliError> {
    crate::model::parse_duration(v)
        .map(|d| d.as_secs_f64())
        .map_err(|e| CliError::BadInput(format!("{flag} {v}: {e}")))
}

/// `mmsim fit`'s arguments.
#[derive(clap::Args, Debug)]
pub struct FitArgs {
    /// The log: .csv, .parquet, or .jsonl for FlexMatch events.
    pub log: PathBuf,
    /// Output folder.
    #[arg(long)]
    pub out: PathBuf,
    /// The log's matchmaking rules as a scenario (its policy, match
    /// format, rating and outcome are kept): run the fitted scenario
    /// under them and compare its waits and abandons with the log's.
    #[arg(long, value_name = "RULES.toml")]
    pub check: Option<PathBuf>,
    /// csv, parquet or flexmatch (default: by the log's extension).
    #[arg(long)]
    pub format: Option<String>,
    /// Without a `requeue` column: a party queueing again this soon
    /// after its match is a return (default 2h).
    #[arg(long)]
    pub return_window: Option<String>,
    /// The fitted scenario's run.name (default fitted-<log name>).
    #[arg(long)]
    pub name: Option<String>,
    /// Also write the log's players at their first ratings as
    /// DIR/players.parquet, the scenario's ratings_file (the ladder as
    /// it stood, instead of a drawn one).
    #[arg(long)]
    pub ladder: bool,
}

/// The log's players, in order of first appearance, each at their first
/// rating, as `players.parquet` rows (`[population] ratings_file`).
fn ladder_players(log: &TicketLog) -> Result<Vec<crate::model::Player>, CliError> {
    use crate::model::{Player, PlayerId, Rating};
    let mut seen = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    for t in &log.tickets {
        for p in &t.players {
            if !seen.insert(p.id.as_str()) {
                continue;
            }
            let r = p.rating.ok_or_else(|| {
                CliError::BadInput(format!(
                    "--ladder: player {:?} (ticket {}) has no rating; a ladder needs every player's",
                    p.id, t.ticket
                ))
            })?;
            let id = PlayerId(out.len() as u32);
            // Glicko's usual settled deviation and Glicko-2's default
            // volatility: the log says neither.
            out.push(Player::new(id, r, Rating::new(r, 50.0, 0.06)));
        }
    }
    Ok(out)
}

pub fn fit_command(a: FitArgs) -> Result<(), CliError> {
    let started = std::time::Instant::now();
    let mut opts = mmsim_fit::Options::default();
    if let Some(w) = &a.return_window {
        opts.return_window_s = parse_duration("--return-window", w)?;
        if opts.return_window_s <= 0.0 {
            return Err(CliError::BadInput(format!(
                "--return-window {w}: must be longer than 0s"
            )));
        }
    }
    // The rules first: a bad rules file is refused before the log is read.
    let rules = match &a.check {
        Some(p) => {
            let loaded = scenario::load(p, &[])?;
            let text = scenario::read_bounded(p, scenario::MAX_SCENARIO_BYTES)
                .map_err(|e| CliError::BadInput(format!("cannot read {}: {e}", p.display())))?;
            Some((p.clone(), text, loaded.scenario.run.seed))
        }
        None => None,
    };
    let held = OutDir::lock(&a.out, false).map_err(CliError::BadInput)?;
    let log = read_log(&a.log, a.format.as_deref())?;
    let fit = mmsim_fit::fit(&log, &opts);
    let name = a.name.clone().unwrap_or_else(|| {
        a.log
            .file_stem()
            .map(|s| format!("fitted-{}", s.to_string_lossy()))
            .unwrap_or_else(|| "fitted".into())
    });
    let ladder = if a.ladder {
        if fit.ratings.is_none() {
            return Err(CliError::BadInput(
                "--ladder: the log's ratings give no skill prior (see the notes without --ladder)"
                    .into(),
            ));
        }
        Some(ladder_players(&log)?)
    } else {
        None
    };
    let text = mmsim_fit::scenario::scenario_text(
        &fit,
        rules.as_ref().map(|r| r.1.as_str()),
        &name,
        ladder
            .as_ref()
            .map(|l| mmsim_fit::scenario::Ladder {
                file: "players.parquet",
                players: l.len(),
            })
            .as_ref(),
    )
    .map_err(|e| CliError::BadInput(e.to_string()))?;
    if let Some(players) = &ladder {
        // Written first, so that the fitted scenario validates against it.
        let file = crate::report::tables::players_artifact(players, &[])?;
        write_artifacts(held.path(), &[file])?;
    }
    // Relative files the rules name resolve from the rules' folder; the
    // ladder from the output's.
    let base = match &rules {
        Some(r) if ladder.is_none() => r.0.clone(),
        _ => held.path().join("scenario.toml"),
    };
    let loaded = scenario::from_text(&text, &base, &[]).map_err(|e| {
        CliError::BadInput(format!(
            "the fitted scenario does not validate{}: {e}",
            if rules.is_some() {
                " under the rules given"
            } else {
                " (give the log's rules with --check RULES.toml)"
            }
        ))
    })?;
    let mut check_rows = None;
    let mut check_view = None;
    if let Some((path, _, seed)) = &rules {
        let (sim, _) = run_ticket_log(&loaded.scenario, *seed)?;
        let (again, _) = run_ticket_log(&loaded.scenario, seed.wrapping_add(1))?;
        let rows = mmsim_fit::check::check(&log, &sim, &again);
        let waits = |l: &TicketLog| -> Vec<f64> {
            l.tickets
                .iter()
                .filter(|t| t.reason == Reason::Matched)
                .map(|t| t.wait_s())
                .collect()
        };
        check_view = Some((waits(&log), waits(&sim), path.display().to_string()));
        check_rows = Some(rows);
    }
    let view = match (&check_rows, &check_view) {
        (Some(hours), Some((lw, sw, rules))) => Some(crate::report::fit_page::CheckView {
            hours,
            log_cdf: crate::report::fit_page::cdf(lw),
            sim_cdf: crate::report::fit_page::cdf(sw),
            rules: rules.clone(),
        }),
        _ => None,
    };
    let check_json = check_rows
        .as_ref()
        .map(|r| serde_json::to_value(r).expect("the check serializes"));
    let mut artifacts = crate::report::fit_page::artifacts(&fit, view.as_ref(), check_json, &text)?;
    artifacts.push(Artifact {
        name: "scenario.toml".into(),
        bytes: text.clone().into_bytes(),
    });
    write_artifacts(held.path(), &artifacts)?;
    held.commit(&super::artifacts_sha256(&artifacts))?;
    let best = fit
        .patience
        .comparison
        .best()
        .map_or("none".to_string(), |b| b.family.name().to_string());
    say!(
        "{}: {} tickets, {} fresh, rate {:.4}/s, patience {} (AIC), requeue {} → {} ({:.2}s)",
        a.log.display(),
        fit.tickets,
        fit.arrivals.fresh_tickets,
        fit.arrivals.rate_per_s.value,
        best,
        fit.returns
            .requeue_prob
            .map_or("not fitted".into(), |p| format!("{:.3}", p.value)),
        a.out.display(),
        started.elapsed().as_secs_f64()
    );
    for n in &fit.notes {
        say!("note: {}: {}", n.quantity, n.message);
    }
    if let Some(rows) = &check_rows {
        for r in rows {
            if r.verdict != "fits" {
                say!(
                    "check {}: {}",
                    r.hour.map_or("all hours".into(), |h| format!("{h:02}h")),
                    r.verdict
                );
            }
        }
        if let Some(all) = rows.iter().find(|r| r.hour.is_none()) {
            say!(
                "check: waits KS {:.3} (two seeds of the model: {:.3}; 5% critical {:.3}), abandons {:.2}% logged, {:.2}% simulated",
                all.ks_wait,
                all.ks_between_seeds,
                all.ks_critical,
                100.0 * all.log_abandon,
                100.0 * all.sim_abandon
            );
        }
    }
    Ok(())
}

pub fn is_parquet(p: &Path) -> bool {
    p.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("parquet"))
}
