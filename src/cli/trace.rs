//! `mmsim trace RUN_DIR`: a run's own tickets written as a trace file, so
//! the same queue can be replayed under another policy. The tables keep only
//! a party's first member and no patience for tickets that matched, so the
//! run is played again from its saved scenario and seed, and must give the
//! summary it saved (else the folder came from another mmsim, or was edited).

use super::{json_bytes, with_provenance, write_whole, CliError};
use crate::scenario::{self, trace::TraceWriter};
use std::path::{Path, PathBuf};

pub fn trace_command(run_dir: &Path, out: Option<PathBuf>) -> Result<(), CliError> {
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
    let mut writer = TraceWriter::new();
    let output = crate::run::run_logging(
        s,
        s.run.seed,
        &mut |_, _| {},
        &mut crate::metrics::NoRows,
        Some(&mut writer),
    )?;
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
    let target = out.unwrap_or_else(|| run_dir.join("trace.csv"));
    let (dir, name) = match (target.parent(), target.file_name()) {
        (Some(d), Some(n)) => (d.to_owned(), n.to_string_lossy().into_owned()),
        _ => {
            return Err(CliError::BadInput(format!(
                "--out {}: not a file name",
                target.display()
            )))
        }
    };
    let text = writer.into_text();
    let rows = text.lines().count() - 1;
    write_whole(
        if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            &dir
        },
        &name,
        text.as_bytes(),
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
