//! `mmsim rebalance FILE`: a designer pastes a list of players (and,
//! optionally, an AccelByte ruleset) and sees the teams a method forms,
//! without writing a scenario. The work is in the `rebalance` module; this file
//! only reads the file, picks the rendering, and maps errors to exit 2.

use super::CliError;
use crate::rebalance::{parse_input, rebalance, InputError, RebalanceMethod};
use std::path::Path;

/// Seed of the random tie-breaks of `balanced` and `abba`, fixed so the same
/// file always prints the same teams.
pub const SEED: u64 = 1;

pub fn rebalance_command(file: &Path, method: &str, json: bool) -> Result<(), CliError> {
    let method: RebalanceMethod = method
        .parse()
        .map_err(|e: String| CliError::BadInput(format!("--method: {e}")))?;
    let text = crate::scenario::read_bounded(file, 16 << 20)
        .map_err(|e| CliError::BadInput(format!("cannot read {}: {e}", file.display())))?;
    let bad = |e: InputError| CliError::BadInput(format!("{}: {e}", file.display()));
    let input = parse_input(&text).map_err(bad)?;
    let result = rebalance(&input, method, SEED).map_err(bad)?;
    if json {
        say_raw!("{}", String::from_utf8_lossy(&super::json_bytes(&result)));
    } else {
        // The text may not end in a newline; a terminal prompt must not follow on its line.
        say!("{}", result.to_text().trim_end());
    }
    Ok(())
}
