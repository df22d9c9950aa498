//! `mmsim explain RUN --ticket N`: one ticket's story from the run's
//! `explain.jsonl`, so "why did this player wait four minutes?" has an answer
//! without opening the file.

use super::CliError;
use crate::metrics::explain::TicketStory;
use std::io::BufRead;
use std::path::Path;

/// The stories' file in a run folder: one JSON object per line, by ticket id.
pub const FILE: &str = "explain.jsonl";

/// The stories as JSON lines.
pub fn jsonl(stories: &[TicketStory]) -> Vec<u8> {
    let mut out = Vec::new();
    for s in stories {
        serde_json::to_writer(&mut out, s).expect("in-memory JSON serializes");
        out.push(b'\n');
    }
    out
}

pub fn explain_command(run: &Path, ticket: u32) -> Result<(), CliError> {
    let path = run.join(FILE);
    let file = std::fs::File::open(&path).map_err(|e| {
        CliError::BadInput(format!(
            "cannot read {}: {e} (run the scenario with `mmsim run --explain` to write it)",
            path.display()
        ))
    })?;
    for (n, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|e| {
            CliError::BadInput(format!(
                "cannot read {} line {}: {e}",
                path.display(),
                n + 1
            ))
        })?;
        let story: TicketStory = serde_json::from_str(&line).map_err(|e| {
            CliError::BadInput(format!(
                "{} line {}: not a ticket story: {e}",
                path.display(),
                n + 1
            ))
        })?;
        if story.ticket_id == ticket {
            say_raw!("{}", crate::report::explain::ticket_story(&story));
            return Ok(());
        }
    }
    Err(CliError::BadInput(format!(
        "--ticket {ticket}: no such ticket in {} (stories are kept for at most {} tickets; see `explain.stories_dropped` in summary.json)",
        path.display(),
        crate::metrics::explain::MAX_STORIES
    )))
}
