//! A ladder loaded from another run (`[population] ratings_file`): that
//! run's `players.parquet` gives each player's true skill, solo and party
//! ratings and record, so a run can start where another ended instead of
//! warming up from everyone at the initial rating.

use super::trace::{parquet_rows, read_bytes_bounded};
use super::Scenario;
use mmsim_core::engine::population::LoadedPlayer;
use mmsim_core::model::ParamError;
use mmsim_core::model::Rating;
use mmsim_core::rating::RatingConfig;
use std::path::Path;

const KEY: &str = "population.ratings_file";
/// A players table of the largest population a scenario may have is far
/// below this; the bound keeps a wrong file from filling memory.
const MAX_BYTES: u64 = 512 << 20;
const MAX_ROWS: usize = 50_000_000;

/// The columns read, as `players.parquet` names them.
const COLUMNS: [&str; 12] = [
    "player_id",
    "true_skill",
    "rating",
    "rating_deviation",
    "rating_volatility",
    "rating_games",
    "party_rating",
    "party_rating_deviation",
    "party_rating_volatility",
    "party_rating_games",
    "games",
    "wins",
];

/// What cannot go with a loaded ladder, before the file is read.
pub fn validate(s: &Scenario, file: &str) -> Result<(), ParamError> {
    if file.trim().is_empty() {
        return Err(ParamError::new(
            KEY,
            "must name a file (another run's players.parquet)",
        ));
    }
    if s.population.seasoned.is_some() {
        return Err(ParamError::new(
            KEY,
            "cannot be combined with population.seasoned: both set the starting ratings; keep one",
        ));
    }
    if s.arrivals.trace.is_some() {
        return Err(ParamError::new(
            KEY,
            "cannot be combined with arrivals.trace: the trace brings its own players and ratings",
        ));
    }
    if matches!(s.rating, RatingConfig::WinRate(_)) {
        return Err(ParamError::new(
            KEY,
            "does not apply to the win-rate rating system, whose ratings start from population.win_rate",
        ));
    }
    Ok(())
}

/// Reads the file `s` names (relative to the scenario file at `path`) into
/// `s`, or keeps `before`'s when it named the same file for as many players.
pub fn attach(s: &mut Scenario, before: &Scenario, path: &Path) -> Result<(), ParamError> {
    use sha2::{Digest, Sha256};
    let Some(file) = s.population.ratings_file.clone() else {
        return Ok(());
    };
    if before.population.ratings_file.as_ref() == Some(&file)
        && before.population.size == s.population.size
        && before.population.ratings_data.is_some()
    {
        s.population.ratings_data = before.population.ratings_data.clone();
        s.population.ratings_sha256 = before.population.ratings_sha256.clone();
        return Ok(());
    }
    let full = path.parent().unwrap_or(Path::new(".")).join(&file);
    let fail = |m: String| ParamError::new(KEY, format!("{}: {m}", full.display()));
    let bytes =
        read_bytes_bounded(&full, MAX_BYTES).map_err(|e| fail(format!("cannot read it: {e}")))?;
    let reader = parquet_rows()
        .ok_or_else(|| fail("a players.parquet file is read by the mmsim command".into()))?;
    let (header, rows) = reader(&bytes, MAX_ROWS).map_err(|e| fail(e.0))?;
    let players = parse(&header, rows, s.population.size as usize).map_err(|e| fail(e.0))?;
    s.population.ratings_data = Some(std::sync::Arc::new(players));
    s.population.ratings_sha256 = Some(super::provenance::hex(&Sha256::digest(&bytes)));
    Ok(())
}

/// Why a `players.parquet` table is not a ladder for this population: the
/// row (1-based) and column at fault, or the count that does not match.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct LadderError(String);

/// The players of a `players.parquet` table given as text: one row per
/// player of a population of `size`, in id order. Errors name the row
/// (1-based) and the column.
fn parse(
    header: &[String],
    rows: impl Iterator<Item = Vec<String>>,
    size: usize,
) -> Result<Vec<LoadedPlayer>, LadderError> {
    let mut at = [0usize; COLUMNS.len()];
    for (slot, name) in at.iter_mut().zip(COLUMNS) {
        *slot = header.iter().position(|h| h == name).ok_or_else(|| {
            LadderError(format!(
                "has no `{name}` column; a run's players.parquet has {}",
                COLUMNS.join(", ")
            ))
        })?;
    }
    let mut players = Vec::new();
    for (i, row) in rows.enumerate() {
        let line = i + 1;
        if players.len() == size {
            return Err(LadderError(format!(
                "has more players than population.size ({size}): the ladder must come from a run of the same population size"
            )));
        }
        let cell = |c: usize| row.get(at[c]).map(String::as_str).unwrap_or("");
        let bad = |c: usize, what: &str| {
            LadderError(format!(
                "row {line}, column `{}`: {what}, found `{}`",
                COLUMNS[c],
                cell(c)
            ))
        };
        let whole = |c: usize| {
            cell(c)
                .parse::<u32>()
                .map_err(|_| bad(c, "must be a whole number ≥ 0"))
        };
        let number = |c: usize, min: f64| match cell(c).parse::<f64>() {
            Ok(v) if v.is_finite() && v >= min => Ok(v),
            _ if min == 0.0 => Err(bad(c, "must be a finite number ≥ 0")),
            _ => Err(bad(c, "must be a finite number")),
        };
        if whole(0)? as usize != i {
            return Err(bad(
                0,
                &format!("must be {i}: rows are the players in id order"),
            ));
        }
        let rating = |v: usize, d: usize, vol: usize, g: usize| -> Result<Rating, LadderError> {
            let mut r = Rating::new(number(v, f64::MIN)?, number(d, 0.0)?, number(vol, 0.0)?);
            r.games = whole(g)?;
            Ok(r)
        };
        let games = whole(10)?;
        let wins = whole(11)?;
        if wins > games {
            return Err(bad(11, &format!("must be at most `games` ({games})")));
        }
        players.push(LoadedPlayer {
            true_skill: number(1, f64::MIN)?,
            rating: rating(2, 3, 4, 5)?,
            party_rating: rating(6, 7, 8, 9)?,
            games,
            wins,
        });
    }
    if players.len() != size {
        return Err(LadderError(format!(
            "has {} players, fewer than population.size ({size}): the ladder must come from a run of the same population size",
            players.len()
        )));
    }
    Ok(players)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> Vec<String> {
        COLUMNS.iter().map(|c| c.to_string()).collect()
    }

    fn row(id: u32, rating: &str, games: &str, wins: &str) -> Vec<String> {
        [
            id.to_string(),
            "1500.5".into(),
            rating.into(),
            "50".into(),
            "0.06".into(),
            "7".into(),
            "1490".into(),
            "60".into(),
            "0.06".into(),
            "3".into(),
            games.into(),
            wins.into(),
        ]
        .to_vec()
    }

    #[test]
    fn rows_become_players_with_their_ratings_and_record() {
        let rows = vec![row(0, "1612.25", "10", "6"), row(1, "1388", "4", "0")];
        let p = parse(&header(), rows.into_iter(), 2).unwrap();
        assert_eq!(p.len(), 2);
        assert_eq!(p[0].true_skill, 1500.5);
        assert_eq!(p[0].rating.value, 1612.25);
        assert_eq!(p[0].rating.deviation, 50.0);
        assert_eq!(p[0].rating.games, 7);
        assert_eq!(p[0].party_rating.value, 1490.0);
        assert_eq!(p[0].party_rating.games, 3);
        assert_eq!((p[0].games, p[0].wins), (10, 6));
        assert_eq!(p[1].rating.value, 1388.0);
    }

    #[test]
    fn errors_name_the_row_and_the_column() {
        let e = parse(&header(), vec![row(0, "nan", "1", "0")].into_iter(), 1)
            .unwrap_err()
            .0;
        assert!(e.starts_with("row 1, column `rating`:"), "{e}");
        let e = parse(&header(), vec![row(0, "1500", "2", "3")].into_iter(), 1)
            .unwrap_err()
            .0;
        assert!(
            e.starts_with("row 1, column `wins`: must be at most `games` (2)"),
            "{e}"
        );
        let rows = vec![row(0, "1500", "1", "0"), row(2, "1500", "1", "0")];
        let e = parse(&header(), rows.into_iter(), 2).unwrap_err().0;
        assert!(e.starts_with("row 2, column `player_id`: must be 1"), "{e}");
        let e = parse(&header(), vec![row(0, "1500", "1", "0")].into_iter(), 3)
            .unwrap_err()
            .0;
        assert!(
            e.contains("has 1 players, fewer than population.size (3)"),
            "{e}"
        );
        let mut h = header();
        h[4] = "vol".into();
        let e = parse(&h, std::iter::empty(), 0).unwrap_err().0;
        assert!(e.starts_with("has no `rating_volatility` column"), "{e}");
    }
}
