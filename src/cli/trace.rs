//! `mmsim trace RUN_DIR`: a run's own tickets written as a trace file (CSV,
//! or Parquet by `--format` or the file's extension), so
//! the same queue can be replayed under another policy. The tables keep only
//! a party's first member and no patience for tickets that matched, so the
//! run is played again from its saved scenario and seed, and must give the
//! summary it saved (else the folder came from another mmsim, or was edited).

use super::{json_bytes, with_provenance, write_whole, CliError};
use crate::scenario::{self, trace::TraceWriter};
use std::path::{Path, PathBuf};

pub fn trace_command(
    run_dir: &Path,
    out: Option<PathBuf>,
    format: Option<&str>,
    ticket_log: bool,
) -> Result<(), CliError> {
    if ticket_log
        && (format == Some("parquet") || out.as_deref().is_some_and(super::fit::is_parquet))
    {
        return Err(CliError::BadInput(
            "--ticket-log writes CSV (the log `mmsim fit` reads); drop --format parquet or the .parquet name".into(),
        ));
    }
    let by_name = out.as_deref().and_then(|o| {
        let ext = o.extension()?.to_string_lossy().to_ascii_lowercase();
        matches!(ext.as_str(), "csv" | "parquet").then_some(ext)
    });
    let parquet = match (format, by_name.as_deref()) {
        (Some(f), Some(e)) if f != e && matches!(f, "csv" | "parquet") => {
            return Err(CliError::BadInput(format!(
                "--format {f} but --out ends in .{e}: a trace is read by its extension, so they must agree"
            )))
        }
        (Some("parquet"), _) | (None, Some("parquet")) => true,
        (Some("csv"), _) | (None, _) => false,
        (Some(f), _) => {
            return Err(CliError::BadInput(format!(
                "--format {f}: allowed are csv and parquet"
            )))
        }
    };
    let scenario_file = run_dir.join("scenario.toml");
    let summary_file = run_dir.join("summary.json");
    if !scenario_file.is_file() || !summary_file.is_file() {
        return Err(CliError::BadInput(format!(
            "{} is not a run folder: it needs the scenario.toml and summary.json `mmsim run` writes",
            run_dir.display()
        )));
    }
    let loaded =
        scenario::load(&scenario_file, &[]).map_err(|e| CliError::BadInput(e.to_string()))?;
    let saved = std::fs::read(&summary_file)
        .map_err(|e| CliError::BadInput(format!("cannot read {}: {e}", summary_file.display())))?;
    let s = &loaded.scenario;
    let mut writer = TraceWriter::new(scenario::trace::Context::of(s));
    let mut log = None;
    let output = if ticket_log {
        let (l, output) = super::fit::run_ticket_log(s, s.run.seed)?;
        log = Some(l);
        output
    } else {
        crate::run::run_logging(
            s,
            s.run.seed,
            &mut |_, _| {},
            &mut crate::metrics::NoRows,
            Some(&mut writer),
        )?
    };
    let again = json_bytes(&with_provenance(
        &output.summary,
        &scenario::Provenance::of(s),
    ));
    if again != saved {
        return Err(CliError::BadInput(format!(
            "running {} again does not give the run's {}: the folder was written by another mmsim version or changed since, so its tickets cannot be recovered",
            scenario_file.display(),
            summary_file.display()
        )));
    }
    let default = if ticket_log {
        "ticket-log.csv"
    } else if parquet {
        "trace.parquet"
    } else {
        "trace.csv"
    };
    let target = out.unwrap_or_else(|| run_dir.join(default));
    let (dir, name) = match (target.parent(), target.file_name()) {
        (Some(d), Some(n)) => (d.to_owned(), n.to_string_lossy().into_owned()),
        _ => {
            return Err(CliError::BadInput(format!(
                "--out {}: not a file name",
                target.display()
            )))
        }
    };
    let rows = log.as_ref().map_or(writer.rows(), |l| {
        l.tickets.iter().map(|t| t.players.len()).sum()
    });
    let bytes = if let Some(l) = &log {
        l.csv().into_bytes()
    } else if parquet {
        crate::report::trace_file::parquet_bytes(&writer)?
    } else {
        writer.csv().into_bytes()
    };
    write_whole(
        if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            &dir
        },
        &name,
        &bytes,
    )?;
    say!(
        "{}: {} tickets ({rows} rows) of {} written to {}",
        s.run.name,
        output.perf.tickets,
        run_dir.display(),
        target.display()
    );
    Ok(())
}
