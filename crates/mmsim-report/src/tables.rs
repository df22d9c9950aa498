//! The run's records as Parquet tables (tickets, matches, queue samples), so
//! analysts can dig into one run with polars or any Parquet reader. Ticket and
//! match rows are streamed a row group at a time while the run goes, so a run
//! of any length holds one batch of rows, not all of them. Column names, types
//! and meanings are listed in `COLUMNS.md`; the column lists below are the
//! single source the tests check that file and the tables against.

mod modes;

use crate::artifact::Artifact;
use mmsim_core::engine::modes::LadderPlayers;
use mmsim_core::metrics::summary::HourFigures;
use mmsim_core::metrics::{MatchRecord, QueueSample, RowSink, TicketEnd, TicketRecord};
use mmsim_core::model::Player;
use polars::io::parquet::write::KeyValueMetadata;
use polars::prelude::*;

/// The column reference, shipped beside the tables in every run folder.
pub const COLUMNS_MD: &str = include_str!("COLUMNS.md");

/// Storage type of a column, kept small so the documented schema stays plain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColType {
    U32,
    F64,
    Bool,
    Str,
}

impl ColType {
    pub fn dtype(self) -> DataType {
        match self {
            ColType::U32 => DataType::UInt32,
            ColType::F64 => DataType::Float64,
            ColType::Bool => DataType::Boolean,
            ColType::Str => DataType::String,
        }
    }
}

pub const TICKET_COLUMNS: &[(&str, ColType)] = &[
    ("ticket_id", ColType::U32),
    ("lead_player_id", ColType::U32),
    ("party_size", ColType::U32),
    ("enqueued_s", ColType::F64),
    ("left_s", ColType::F64),
    ("outcome", ColType::Str),
    ("match_id", ColType::U32),
    ("wait_s", ColType::F64),
    ("rating", ColType::F64),
    ("true_skill", ColType::F64),
    ("requeue", ColType::Bool),
    ("in_warmup", ColType::Bool),
];

pub const MATCH_COLUMNS: &[(&str, ColType)] = &[
    ("match_id", ColType::U32),
    ("formed_s", ColType::F64),
    ("ended_s", ColType::F64),
    ("teams", ColType::U32),
    ("team_size", ColType::U32),
    ("team0_rating", ColType::F64),
    ("team1_rating", ColType::F64),
    ("team0_skill", ColType::F64),
    ("team1_skill", ColType::F64),
    ("team0_top_skill", ColType::F64),
    ("team1_top_skill", ColType::F64),
    ("team0_parties", ColType::U32),
    ("team1_parties", ColType::U32),
    ("team0_win_rate_pct", ColType::F64),
    ("team1_win_rate_pct", ColType::F64),
    ("spread_rating", ColType::F64),
    ("spread_skill", ColType::F64),
    ("team_rating_gap", ColType::F64),
    ("top_skill_gap", ColType::F64),
    ("win_rate_gap_pct", ColType::F64),
    ("p_team0", ColType::F64),
    ("p_team0_predicted", ColType::F64),
    ("win_prob_gap", ColType::F64),
    ("winner", ColType::U32),
    ("upset", ColType::Bool),
    ("duration_s", ColType::F64),
    ("survivors", ColType::U32),
    ("gold_integral", ColType::F64),
    ("rematch", ColType::Bool),
    ("in_warmup", ColType::Bool),
];

/// Appended to the tickets table when the run has `[regions]`.
pub const TICKET_REGION_COLUMNS: &[(&str, ColType)] =
    &[("region", ColType::Str), ("host_ping_ms", ColType::U32)];

/// Appended to the matches table when the run has `[regions]`.
pub const MATCH_REGION_COLUMNS: &[(&str, ColType)] = &[("host_dc", ColType::Str)];

/// The names of a run's home regions and data centres, which the regional
/// columns hold (records keep their indices).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RegionNames {
    pub homes: Vec<String>,
    pub data_centres: Vec<String>,
}

pub const QUEUE_COLUMNS: &[(&str, ColType)] = &[
    ("t_s", ColType::F64),
    ("waiting_tickets", ColType::U32),
    ("waiting_players", ColType::U32),
    ("players_in_matches", ColType::U32),
    ("matches_formed", ColType::U32),
    ("matches_per_min", ColType::F64),
    ("rating_skill_rank_corr", ColType::F64),
];

/// The day hour by hour, as `summary.json`'s `by_hour` has it: one row per
/// hour of the simulated day (0-23, every day of a longer run folded into
/// its hour) with tickets or queue samples after warm-up.
pub const BY_HOUR_COLUMNS: &[(&str, ColType)] = &[
    ("hour_of_day", ColType::U32),
    ("tickets", ColType::U32),
    ("matched", ColType::U32),
    ("wait_p50_s", ColType::F64),
    ("wait_p90_s", ColType::F64),
    ("wait_p99_s", ColType::F64),
    ("abandon_rate", ColType::F64),
    ("queue_samples", ColType::U32),
    ("queue_mean_tickets", ColType::F64),
    ("queue_max_tickets", ColType::U32),
    ("concurrent_mean_players", ColType::F64),
    ("concurrent_max_players", ColType::U32),
    ("matches", ColType::U32),
    ("rating_win_prob_gap", ColType::F64),
    ("true_win_prob_gap", ColType::F64),
    ("brier_score", ColType::F64),
    ("rating_skill_rank_corr", ColType::F64),
];

/// Every player's state at the end of the run: true skill, both ratings
/// and the record. `[population] ratings_file` reads it back, so a later
/// run can start from this run's ladder.
pub const PLAYERS_COLUMNS: &[(&str, ColType)] = &[
    ("player_id", ColType::U32),
    ("true_skill", ColType::F64),
    ("rating", ColType::F64),
    ("rating_deviation", ColType::F64),
    ("rating_volatility", ColType::F64),
    ("rating_games", ColType::U32),
    ("party_rating", ColType::F64),
    ("party_rating_deviation", ColType::F64),
    ("party_rating_volatility", ColType::F64),
    ("party_rating_games", ColType::U32),
    ("games", ColType::U32),
    ("wins", ColType::U32),
];

/// A separate ladder's columns of `players.parquet`, each named
/// `ladder_<name>_<key>`.
pub const LADDER_COLUMNS: &[(&str, ColType)] = &[
    ("rating", ColType::F64),
    ("rating_deviation", ColType::F64),
    ("rating_games", ColType::U32),
    ("party_rating", ColType::F64),
    ("party_rating_deviation", ColType::F64),
    ("party_rating_games", ColType::U32),
    ("games", ColType::U32),
];

/// Where a table came from, written into each Parquet file's footer as
/// key-value metadata (`mmsim.version`, `mmsim.scenario_sha256`,
/// `mmsim.seed`, `mmsim.scenario`), so a table copied out of its run folder
/// still names its input. Keys in a fixed order, so the bytes repeat.
pub type FileMetadata = [(String, String)];

fn key_values(meta: &FileMetadata) -> Option<KeyValueMetadata> {
    (!meta.is_empty()).then(|| KeyValueMetadata::from_static(meta.to_vec()))
}

/// The queue table as a Parquet artifact (one row per sample: a run keeps
/// these, a few thousand at most).
pub fn table_artifacts(
    queue: &[QueueSample],
    by_hour: &[HourFigures],
    meta: &FileMetadata,
) -> anyhow::Result<Vec<Artifact>> {
    let encode = |mut df: DataFrame, name: &str| -> anyhow::Result<Artifact> {
        let mut bytes = Vec::new();
        let written = parquet_writer(&mut bytes)
            .with_key_value_metadata(key_values(meta))
            .finish(&mut df);
        anyhow::Context::with_context(written, || format!("encoding {name}"))?;
        Ok(Artifact {
            name: name.to_string(),
            bytes,
        })
    };
    Ok(vec![
        encode(queue_frame(queue)?, "queue.parquet")?,
        encode(by_hour_frame(by_hour)?, "by_hour.parquet")?,
    ])
}

/// The players at the end of the run as a Parquet artifact (`players.parquet`).
pub fn players_artifact(players: &[Player], meta: &FileMetadata) -> anyhow::Result<Artifact> {
    players_artifact_with(players, &[], meta)
}

/// `players_artifact` with each separate ladder's columns after the others.
pub fn players_artifact_with(
    players: &[Player],
    ladders: &[LadderPlayers],
    meta: &FileMetadata,
) -> anyhow::Result<Artifact> {
    let mut df = players_frame(players)?;
    for l in ladders {
        df.hstack_mut(ladder_frame(l)?.columns())?;
    }
    let mut bytes = Vec::new();
    let written = parquet_writer(&mut bytes)
        .with_key_value_metadata(key_values(meta))
        .finish(&mut df);
    anyhow::Context::with_context(written, || "encoding players.parquet")?;
    Ok(Artifact {
        name: "players.parquet".to_string(),
        bytes,
    })
}

/// One row per player, in id order.
pub fn players_frame(players: &[Player]) -> anyhow::Result<DataFrame> {
    let columns = vec![
        col("player_id", map(players, |p| p.id.0)),
        col("true_skill", map(players, |p| p.true_skill)),
        col("rating", map(players, |p| p.rating.value)),
        col("rating_deviation", map(players, |p| p.rating.deviation)),
        col("rating_volatility", map(players, |p| p.rating.volatility)),
        col("rating_games", map(players, |p| p.rating.games)),
        col("party_rating", map(players, |p| p.party_rating.value)),
        col(
            "party_rating_deviation",
            map(players, |p| p.party_rating.deviation),
        ),
        col(
            "party_rating_volatility",
            map(players, |p| p.party_rating.volatility),
        ),
        col("party_rating_games", map(players, |p| p.party_rating.games)),
        col("games", map(players, |p| p.games)),
        col("wins", map(players, |p| p.wins)),
    ];
    frame(players.len(), columns, PLAYERS_COLUMNS)
}

/// The columns of one separate ladder (`ladder_<name>_*`, COLUMNS.md), in
/// player id order as `players_frame`.
pub fn ladder_frame(l: &LadderPlayers) -> anyhow::Result<DataFrame> {
    let name = |k: &str| format!("ladder_{}_{k}", l.name);
    let p = &l.players;
    let columns = vec![
        col(&name("rating"), map(p, |p| p.rating.value)),
        col(&name("rating_deviation"), map(p, |p| p.rating.deviation)),
        col(&name("rating_games"), map(p, |p| p.rating.games)),
        col(&name("party_rating"), map(p, |p| p.party_rating.value)),
        col(
            &name("party_rating_deviation"),
            map(p, |p| p.party_rating.deviation),
        ),
        col(
            &name("party_rating_games"),
            map(p, |p| p.party_rating.games),
        ),
        col(&name("games"), l.played.clone()),
    ];
    let names: Vec<String> = LADDER_COLUMNS.iter().map(|(k, _)| name(k)).collect();
    let spec: Vec<(&str, ColType)> = names
        .iter()
        .zip(LADDER_COLUMNS)
        .map(|(n, (_, t))| (n.as_str(), *t))
        .collect();
    frame(p.len(), columns, &spec)
}

/// `summary.json`'s `by_hour` as a table (the same values, null where the
/// summary has none).
pub fn by_hour_frame(hours: &[HourFigures]) -> anyhow::Result<DataFrame> {
    let count = |n: u64| u32::try_from(n).unwrap_or(u32::MAX);
    let columns = vec![
        col("hour_of_day", map(hours, |h| h.hour)),
        col("tickets", map(hours, |h| count(h.tickets))),
        col("matched", map(hours, |h| count(h.matched))),
        col("wait_p50_s", map(hours, |h| h.wait_p50_s)),
        col("wait_p90_s", map(hours, |h| h.wait_p90_s)),
        col("wait_p99_s", map(hours, |h| h.wait_p99_s)),
        col("abandon_rate", map(hours, |h| h.abandon_rate)),
        col("queue_samples", map(hours, |h| count(h.queue_samples))),
        col("queue_mean_tickets", map(hours, |h| h.queue_mean_tickets)),
        col("queue_max_tickets", map(hours, |h| h.queue_max_tickets)),
        col(
            "concurrent_mean_players",
            map(hours, |h| h.concurrent_mean_players),
        ),
        col(
            "concurrent_max_players",
            map(hours, |h| h.concurrent_max_players),
        ),
        col("matches", map(hours, |h| count(h.matches))),
        col("rating_win_prob_gap", map(hours, |h| h.rating_win_prob_gap)),
        col("true_win_prob_gap", map(hours, |h| h.true_win_prob_gap)),
        col("brier_score", map(hours, |h| h.brier_score)),
        col(
            "rating_skill_rank_corr",
            map(hours, |h| h.rating_skill_rank_corr),
        ),
    ];
    frame(hours.len(), columns, BY_HOUR_COLUMNS)
}

/// The writer with settings fixed here rather than left to library defaults,
/// so a polars upgrade that changes a default cannot silently change the
/// bytes: zstd at level 1, statistics on, 1 MiB data pages. Level 1, not
/// zstd's default 3: on `bench-1v1` the writer's compression was a sixth of
/// the whole process's CPU time, and level 1 cuts the process's wall time by
/// about 9% for files about 9% larger. Polars writes no timestamp, so equal
/// rows give equal bytes.
fn parquet_writer<W: std::io::Write>(w: W) -> ParquetWriter<W> {
    ParquetWriter::new(w)
        .with_compression(ParquetCompression::Zstd(Some(
            polars_parquet::write::ZstdLevel::try_new(1).expect("1 is a zstd level"),
        )))
        .with_statistics(StatisticsOptions::default())
        .with_row_group_size(Some(BATCH_ROWS))
        .with_data_page_size(Some(1024 * 1024))
}

/// Encodes a whole frame, one row group per `BATCH_ROWS` rows.
pub fn parquet_bytes(df: &mut DataFrame) -> anyhow::Result<Vec<u8>> {
    let mut buf = Vec::new();
    parquet_writer(&mut buf).finish(df)?;
    Ok(buf)
}

/// Rows per row group of a streamed table: what a run holds of its rows at
/// any moment (about 16 MB of match rows).
pub const BATCH_ROWS: usize = 64 * 1024;

/// One streamed table: rows wait in `buf` until a row group is full.
struct Stream<W: std::io::Write, R> {
    /// The file's name, for error messages.
    name: &'static str,
    writer: polars::io::parquet::write::BatchedWriter<W>,
    buf: Vec<R>,
    rows: u64,
    frame: RowFrame<R>,
}

/// Builds a row group's frame (its columns can depend on the run: a role
/// queue's tickets carry their roles).
type RowFrame<R> = Box<dyn Fn(&[R]) -> anyhow::Result<DataFrame> + Send>;

impl<W: std::io::Write, R> Stream<W, R> {
    fn new(
        name: &'static str,
        w: W,
        frame: RowFrame<R>,
        meta: &FileMetadata,
    ) -> anyhow::Result<Self> {
        let schema = frame(&[])?.schema().clone();
        Ok(Stream {
            name,
            writer: parquet_writer(w)
                .with_key_value_metadata(key_values(meta))
                .batched(&schema)?,
            buf: Vec::with_capacity(BATCH_ROWS),
            rows: 0,
            frame,
        })
    }

    /// Rows handed in so far, written or waiting.
    fn len(&self) -> u64 {
        self.rows + self.buf.len() as u64
    }

    fn push(&mut self, row: R) -> anyhow::Result<()> {
        self.buf.push(row);
        if self.buf.len() >= BATCH_ROWS {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> anyhow::Result<()> {
        if !self.buf.is_empty() {
            let written =
                (self.frame)(&self.buf).and_then(|df| Ok(self.writer.write_batch(&df)?));
            anyhow::Context::with_context(written, || format!("writing {}", self.name))?;
            self.rows += self.buf.len() as u64;
            self.buf.clear();
        }
        Ok(())
    }

    fn finish(&mut self) -> anyhow::Result<()> {
        self.flush()?;
        anyhow::Context::with_context(self.writer.finish(), || format!("closing {}", self.name))?;
        Ok(())
    }
}

/// Streams a run's ticket and match rows into `tickets.parquet` and
/// `matches.parquet` (to whatever writers the caller opened), in the order
/// the rows were finished: a ticket when it leaves the queue, a match when it
/// ends; those still waiting or playing at the run's end come last.
pub struct ParquetRows<W: std::io::Write> {
    tickets: Stream<W, TicketRecord>,
    matches: Stream<W, MatchRecord>,
    error: Option<anyhow::Error>,
}

impl<W: std::io::Write> ParquetRows<W> {
    pub fn new(tickets: W, matches: W, meta: &FileMetadata) -> anyhow::Result<Self> {
        Self::with_columns(tickets, matches, meta, None, None)
    }

    /// As `new`, with the columns of the optional features the run has: a
    /// role queue's role names add each party's main and assigned roles to
    /// the tickets table; regions add the home region, the host data centre
    /// and its ping.
    pub fn with_columns(
        tickets: W,
        matches: W,
        meta: &FileMetadata,
        roles: Option<Vec<String>>,
        regions: Option<RegionNames>,
    ) -> anyhow::Result<Self> {
        let ticket_regions = regions.clone();
        let ticket_frame: RowFrame<TicketRecord> = match roles {
            None => Box::new(move |rows: &[TicketRecord]| {
                tickets_frame_with(rows, ticket_regions.as_ref())
            }),
            Some(names) => Box::new(move |rows: &[TicketRecord]| {
                tickets_frame_with_roles(rows, &names, ticket_regions.as_ref())
            }),
        };
        let match_frame: RowFrame<MatchRecord> =
            Box::new(move |rows: &[MatchRecord]| matches_frame_with(rows, regions.as_ref()));
        Ok(ParquetRows {
            tickets: Stream::new("tickets.parquet", tickets, ticket_frame, meta)?,
            matches: Stream::new("matches.parquet", matches, match_frame, meta)?,
            error: None,
        })
    }

    /// Rows written so far to the tickets and the matches table.
    pub fn rows(&self) -> (u64, u64) {
        (self.tickets.len(), self.matches.len())
    }

    /// Keeps the first error; after it, rows are dropped (the run goes on and
    /// `finish` reports the error).
    fn keep(&mut self, r: impl FnOnce(&mut Self) -> anyhow::Result<()>) {
        if self.error.is_none() {
            if let Err(e) = r(self) {
                self.error = Some(e);
            }
        }
    }
}

impl<W: std::io::Write> RowSink for ParquetRows<W> {
    fn ticket(&mut self, t: TicketRecord) {
        self.keep(|s| s.tickets.push(t));
    }
    fn match_row(&mut self, m: MatchRecord) {
        self.keep(|s| s.matches.push(m));
    }
    fn finish(&mut self) -> anyhow::Result<()> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.tickets.finish()?;
        self.matches.finish()
    }
}

fn col<T, P>(name: &str, values: T) -> Column
where
    Series: NamedFrom<T, P>,
    P: ?Sized,
{
    Column::new(name.into(), values)
}

fn frame(
    height: usize,
    columns: Vec<Column>,
    spec: &[(&str, ColType)],
) -> anyhow::Result<DataFrame> {
    debug_assert_eq!(columns.len(), spec.len());
    // Casting pins every column to its documented type even when it is empty
    // or all null, where polars would otherwise infer a different one.
    let columns = columns
        .into_iter()
        .zip(spec)
        .map(|(c, (name, ty))| {
            debug_assert_eq!(c.name().as_str(), *name);
            c.cast(&ty.dtype())
        })
        .collect::<PolarsResult<Vec<_>>>()?;
    Ok(DataFrame::new(height, columns)?)
}

pub fn tickets_frame(tickets: &[TicketRecord]) -> anyhow::Result<DataFrame> {
    tickets_frame_with(tickets, None)
}

/// A name by index, null when the index is absent (or out of the list).
fn named(names: &[String], i: Option<u16>) -> Option<&str> {
    i.and_then(|i| names.get(usize::from(i)))
        .map(String::as_str)
}

fn tickets_frame_with(
    tickets: &[TicketRecord],
    regions: Option<&RegionNames>,
) -> anyhow::Result<DataFrame> {
    let n = tickets.len();
    let match_id: Vec<Option<u32>> = tickets
        .iter()
        .map(|t| match t.end {
            TicketEnd::Matched(m) => Some(m.0),
            _ => None,
        })
        .collect();
    let columns = vec![
        col("ticket_id", map(tickets, |t| t.ticket.0)),
        col("lead_player_id", map(tickets, |t| t.lead.0)),
        col("party_size", map(tickets, |t| t.party_size)),
        col("enqueued_s", map(tickets, |t| t.enqueued.as_secs_f64())),
        col("left_s", map(tickets, |t| t.left.as_secs_f64())),
        col("outcome", map(tickets, |t| t.end.label())),
        col("match_id", match_id),
        col("wait_s", map(tickets, |t| t.wait_s())),
        col("rating", map(tickets, |t| t.rating)),
        col("true_skill", map(tickets, |t| t.true_skill)),
        col("requeue", map(tickets, |t| t.requeue)),
        col("in_warmup", map(tickets, |t| t.in_warmup)),
    ];
    let Some(r) = regions else {
        return frame(n, columns, TICKET_COLUMNS);
    };
    let mut columns = columns;
    columns.push(col("region", map(tickets, |t| named(&r.homes, t.region))));
    columns.push(col(
        "host_ping_ms",
        map(tickets, |t| t.host_ping_ms.map(u32::from)),
    ));
    let spec: Vec<(&str, ColType)> = TICKET_COLUMNS
        .iter()
        .chain(TICKET_REGION_COLUMNS)
        .copied()
        .collect();
    frame(n, columns, &spec)
}

/// The role columns a role queue adds to the tickets table.
pub const TICKET_ROLE_COLUMNS: &[(&str, ColType)] = &[
    ("main_roles", ColType::Str),
    ("assigned_roles", ColType::Str),
];

/// `tickets_frame` with the role columns: members' roles by name, in member
/// order, joined by commas; `assigned_roles` null unless the ticket matched.
pub fn tickets_frame_with_roles(
    tickets: &[TicketRecord],
    names: &[String],
    regions: Option<&RegionNames>,
) -> anyhow::Result<DataFrame> {
    let base = tickets_frame_with(tickets, regions)?;
    let join = |roles: &[u8]| {
        roles
            .iter()
            .map(|&r| names.get(r as usize).map_or("?", String::as_str))
            .collect::<Vec<_>>()
            .join(",")
    };
    let main: Vec<Option<String>> = tickets
        .iter()
        .map(|t| t.roles.as_ref().map(|r| join(&r.main)))
        .collect();
    let assigned: Vec<Option<String>> = tickets
        .iter()
        .map(|t| {
            t.roles
                .as_ref()
                .filter(|r| !r.assigned.is_empty())
                .map(|r| join(&r.assigned))
        })
        .collect();
    let extra = frame(
        tickets.len(),
        vec![col("main_roles", main), col("assigned_roles", assigned)],
        TICKET_ROLE_COLUMNS,
    )?;
    Ok(base.hstack(extra.columns())?)
}

pub fn matches_frame(matches: &[MatchRecord]) -> anyhow::Result<DataFrame> {
    matches_frame_with(matches, None)
}

fn matches_frame_with(
    matches: &[MatchRecord],
    regions: Option<&RegionNames>,
) -> anyhow::Result<DataFrame> {
    let n = matches.len();
    let team_f64 = |f: fn(&MatchRecord) -> &[f64], i: usize| -> Vec<Option<f64>> {
        matches.iter().map(|m| f(m).get(i).copied()).collect()
    };
    let team_u32 = |f: fn(&MatchRecord) -> &[u32], i: usize| -> Vec<Option<u32>> {
        matches.iter().map(|m| f(m).get(i).copied()).collect()
    };
    // A gap needs two teams to compare; a shorter vector means the data is absent.
    let gap = |f: fn(&MatchRecord) -> &[f64]| -> Vec<Option<f64>> {
        matches
            .iter()
            .map(|m| (f(m).len() >= 2).then(|| spread(f(m))))
            .collect()
    };
    let columns = vec![
        col("match_id", map(matches, |m| m.id.0)),
        col("formed_s", map(matches, |m| m.formed.as_secs_f64())),
        col(
            "ended_s",
            map(matches, |m| m.ended.map(|t| t.as_secs_f64())),
        ),
        col("teams", map(matches, |m| m.teams)),
        col("team_size", map(matches, |m| m.team_size)),
        col("team0_rating", team_f64(|m| &m.team_rating[..], 0)),
        col("team1_rating", team_f64(|m| &m.team_rating[..], 1)),
        col("team0_skill", team_f64(|m| &m.team_skill[..], 0)),
        col("team1_skill", team_f64(|m| &m.team_skill[..], 1)),
        col("team0_top_skill", team_f64(|m| &m.team_top_skill[..], 0)),
        col("team1_top_skill", team_f64(|m| &m.team_top_skill[..], 1)),
        col("team0_parties", team_u32(|m| &m.team_parties[..], 0)),
        col("team1_parties", team_u32(|m| &m.team_parties[..], 1)),
        col(
            "team0_win_rate_pct",
            team_f64(|m| &m.team_win_rate_pct[..], 0),
        ),
        col(
            "team1_win_rate_pct",
            team_f64(|m| &m.team_win_rate_pct[..], 1),
        ),
        col("spread_rating", map(matches, |m| m.spread_rating)),
        col("spread_skill", map(matches, |m| m.spread_skill)),
        col("team_rating_gap", gap(|m| &m.team_rating[..])),
        col("top_skill_gap", gap(|m| &m.team_top_skill[..])),
        col("win_rate_gap_pct", gap(|m| &m.team_win_rate_pct[..])),
        col("p_team0", map(matches, |m| m.p_team0)),
        col("p_team0_predicted", map(matches, |m| m.p_team0_predicted)),
        col("win_prob_gap", map(matches, |m| m.win_prob_gap())),
        col("winner", map(matches, |m| m.winner)),
        col("upset", map(matches, |m| m.upset())),
        col("duration_s", map(matches, |m| m.duration_s)),
        col("survivors", map(matches, |m| m.survivors)),
        col("gold_integral", map(matches, |m| m.gold_integral)),
        col("rematch", map(matches, |m| m.rematch)),
        col("in_warmup", map(matches, |m| m.in_warmup)),
    ];
    let Some(r) = regions else {
        return frame(n, columns, MATCH_COLUMNS);
    };
    let mut columns = columns;
    columns.push(col(
        "host_dc",
        map(matches, |m| named(&r.data_centres, m.host_dc)),
    ));
    let spec: Vec<(&str, ColType)> = MATCH_COLUMNS
        .iter()
        .chain(MATCH_REGION_COLUMNS)
        .copied()
        .collect();
    frame(n, columns, &spec)
}

pub fn queue_frame(queue: &[QueueSample]) -> anyhow::Result<DataFrame> {
    let n = queue.len();
    // Rate over the interval since the previous sample (or the run's start),
    // so uneven sampling still gives comparable numbers; null for a zero-length interval.
    let per_min: Vec<Option<f64>> = queue
        .iter()
        .enumerate()
        .map(|(i, q)| {
            let prev = if i == 0 {
                0.0
            } else {
                queue[i - 1].t.as_secs_f64()
            };
            let dt = q.t.as_secs_f64() - prev;
            (dt > 0.0).then(|| q.matches_formed as f64 * 60.0 / dt)
        })
        .collect();
    let columns = vec![
        col("t_s", map(queue, |q| q.t.as_secs_f64())),
        col("waiting_tickets", map(queue, |q| q.waiting_tickets)),
        col("waiting_players", map(queue, |q| q.waiting_players)),
        col("players_in_matches", map(queue, |q| q.players_in_matches)),
        col("matches_formed", map(queue, |q| q.matches_formed)),
        col("matches_per_min", per_min),
        col(
            "rating_skill_rank_corr",
            map(queue, |q| q.rating_skill_rank_corr),
        ),
    ];
    frame(n, columns, QUEUE_COLUMNS)
}

/// Largest minus smallest value; same definition as `MatchRecord::team_rating_gap`.
fn spread(v: &[f64]) -> f64 {
    let max = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let min = v.iter().copied().fold(f64::INFINITY, f64::min);
    max - min
}

fn map<R, T>(rows: &[R], f: impl Fn(&R) -> T) -> Vec<T> {
    rows.iter().map(f).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata;
    use mmsim_core::metrics::RunRecords;
    use std::io::Cursor;

    fn read_back(bytes: &[u8]) -> DataFrame {
        ParquetReader::new(Cursor::new(bytes.to_vec()))
            .finish()
            .unwrap()
    }

    fn check_schema(df: &DataFrame, spec: &[(&str, ColType)]) {
        let names: Vec<&str> = df.get_column_names().iter().map(|s| s.as_str()).collect();
        let want: Vec<&str> = spec.iter().map(|(n, _)| *n).collect();
        assert_eq!(names, want);
        for (name, ty) in spec {
            assert_eq!(df.column(name).unwrap().dtype(), &ty.dtype(), "{name}");
        }
    }

    fn meta() -> Vec<(String, String)> {
        [
            ("mmsim.version", "9.9.9"),
            ("mmsim.scenario_sha256", "ab12"),
            ("mmsim.seed", "7"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .to_vec()
    }

    /// The three tables of a run, the ticket and match rows streamed as a run streams them.
    fn tables(r: &RunRecords) -> [Vec<u8>; 3] {
        let (mut t, mut m) = (Vec::new(), Vec::new());
        let mut rows = ParquetRows::new(&mut t, &mut m, &meta()).unwrap();
        r.tickets.iter().for_each(|x| rows.ticket(x.clone()));
        r.matches.iter().for_each(|x| rows.match_row(x.clone()));
        rows.finish().unwrap();
        drop(rows);
        let q = table_artifacts(&r.queue, &[], &meta())
            .unwrap()
            .remove(0)
            .bytes;
        [t, m, q]
    }

    #[test]
    fn regional_columns_appear_only_with_regions_and_hold_names() {
        let r = testdata::team_records();
        let names = RegionNames {
            homes: vec!["north".into(), "south".into()],
            data_centres: vec!["eu".into(), "na".into()],
        };
        let (mut t, mut m) = (Vec::new(), Vec::new());
        let mut rows =
            ParquetRows::with_columns(&mut t, &mut m, &meta(), None, Some(names)).unwrap();
        r.tickets.iter().for_each(|x| rows.ticket(x.clone()));
        r.matches.iter().for_each(|x| rows.match_row(x.clone()));
        rows.finish().unwrap();
        drop(rows);
        let (t, m) = (read_back(&t), read_back(&m));
        let spec: Vec<_> = TICKET_COLUMNS
            .iter()
            .chain(TICKET_REGION_COLUMNS)
            .copied()
            .collect();
        check_schema(&t, &spec);
        let spec: Vec<_> = MATCH_COLUMNS
            .iter()
            .chain(MATCH_REGION_COLUMNS)
            .copied()
            .collect();
        check_schema(&m, &spec);
        let region = t.column("region").unwrap().str().unwrap();
        assert_eq!(region.get(0), Some("north"));
        assert_eq!(region.get(1), Some("south"));
        let host = m.column("host_dc").unwrap().str().unwrap();
        assert_eq!(host.get(1), Some("na"));
        assert_eq!(t.column("host_ping_ms").unwrap().null_count(), t.height());
        // Without regions, the same records give the usual tables.
        let [t, m, _] = tables(&r);
        check_schema(&read_back(&t), TICKET_COLUMNS);
        check_schema(&read_back(&m), MATCH_COLUMNS);
    }

    #[test]
    fn tables_read_back_with_one_row_per_record_and_the_documented_schema() {
        let r = testdata::team_records();
        let specs = [TICKET_COLUMNS, MATCH_COLUMNS, QUEUE_COLUMNS];
        let rows = [r.tickets.len(), r.matches.len(), r.queue.len()];
        for ((bytes, spec), n) in tables(&r).iter().zip(specs).zip(rows) {
            let df = read_back(bytes);
            assert_eq!(df.height(), n);
            check_schema(&df, spec);
        }
    }

    #[test]
    fn the_hour_table_holds_the_summary_s_hours_with_nulls_kept() {
        let hours = vec![
            HourFigures {
                hour: 3,
                tickets: 120,
                matched: 100,
                wait_p50_s: Some(4.5),
                wait_p90_s: Some(12.0),
                wait_p99_s: Some(30.25),
                abandon_rate: Some(0.125),
                queue_samples: 60,
                queue_mean_tickets: Some(7.5),
                queue_max_tickets: Some(19),
                concurrent_mean_players: Some(120.5),
                concurrent_max_players: Some(131),
                matches: 11,
                rating_win_prob_gap: Some(0.0125),
                true_win_prob_gap: Some(0.25),
                brier_score: Some(0.2375),
                rating_skill_rank_corr: Some(0.5),
            },
            HourFigures {
                hour: 4,
                tickets: 0,
                matched: 0,
                wait_p50_s: None,
                wait_p90_s: None,
                wait_p99_s: None,
                abandon_rate: None,
                queue_samples: 60,
                queue_mean_tickets: Some(0.0),
                queue_max_tickets: Some(0),
                concurrent_mean_players: Some(40.0),
                concurrent_max_players: Some(44),
                matches: 0,
                rating_win_prob_gap: None,
                true_win_prob_gap: None,
                brier_score: None,
                rating_skill_rank_corr: None,
            },
        ];
        let arts = table_artifacts(&[], &hours, &meta()).unwrap();
        assert_eq!(arts[1].name, "by_hour.parquet");
        let df = read_back(&arts[1].bytes);
        check_schema(&df, BY_HOUR_COLUMNS);
        assert_eq!(df.height(), 2);
        let hour = df.column("hour_of_day").unwrap().u32().unwrap();
        assert_eq!((hour.get(0), hour.get(1)), (Some(3), Some(4)));
        let p99 = df.column("wait_p99_s").unwrap().f64().unwrap();
        assert_eq!((p99.get(0), p99.get(1)), (Some(30.25), None));
        let abandon = df.column("abandon_rate").unwrap().f64().unwrap();
        assert_eq!(abandon.get(0), Some(0.125));
        let brier = df.column("brier_score").unwrap().f64().unwrap();
        assert_eq!((brier.get(0), brier.get(1)), (Some(0.2375), None));
        assert_eq!(
            df.column("queue_max_tickets")
                .unwrap()
                .u32()
                .unwrap()
                .get(0),
            Some(19)
        );
    }

    #[test]
    fn empty_run_still_gives_typed_tables() {
        for (bytes, spec) in tables(&RunRecords::default()).iter().zip([
            TICKET_COLUMNS,
            MATCH_COLUMNS,
            QUEUE_COLUMNS,
        ]) {
            let df = read_back(bytes);
            assert_eq!(df.height(), 0);
            check_schema(&df, spec);
        }
    }

    #[test]
    fn streamed_rows_come_back_in_order_across_row_groups() {
        // More rows than one row group holds, so the file has several.
        let one = testdata::team_records();
        let mut r = RunRecords::default();
        for k in 0..(BATCH_ROWS / one.tickets.len() + 2) as u32 {
            for t in &one.tickets {
                let mut t = t.clone();
                t.ticket = mmsim_core::model::TicketId(t.ticket.0 + 40 * k);
                r.tickets.push(t);
            }
        }
        let [t, _, _] = tables(&r);
        let df = read_back(&t);
        assert_eq!(df.height(), r.tickets.len());
        let ids = df.column("ticket_id").unwrap().u32().unwrap().clone();
        for (i, t) in r.tickets.iter().enumerate().step_by(997) {
            assert_eq!(ids.get(i), Some(t.ticket.0));
        }
        // Same rows, same bytes.
        assert_eq!(tables(&r), tables(&r));
    }

    #[test]
    fn only_matched_tickets_carry_a_match_id() {
        let r = testdata::team_records();
        let df = tickets_frame(&r.tickets).unwrap();
        let ids = df.column("match_id").unwrap().u32().unwrap().clone();
        let ends = df.column("outcome").unwrap().str().unwrap().clone();
        for (i, t) in r.tickets.iter().enumerate() {
            match t.end {
                TicketEnd::Matched(m) => assert_eq!(ids.get(i), Some(m.0)),
                TicketEnd::Waiting | TicketEnd::Abandoned | TicketEnd::Declined => {
                    assert_eq!(ids.get(i), None)
                }
            }
            assert_eq!(ends.get(i), Some(t.end.label()));
        }
        assert_eq!(ends.get(38), Some("waiting"));
        assert_eq!(ids.get(38), None);
    }

    #[test]
    fn unfinished_matches_and_missing_teams_are_null() {
        let mut r = testdata::team_records();
        r.matches[1].teams = 1;
        r.matches[1].team_rating.truncate(1);
        let df = matches_frame(&r.matches).unwrap();
        let winner = df.column("winner").unwrap().u32().unwrap().clone();
        let ended = df.column("ended_s").unwrap().f64().unwrap().clone();
        assert_eq!(winner.get(8), None);
        assert_eq!(ended.get(8), None);
        assert_eq!(winner.get(1), Some(1));
        let t1 = df.column("team1_rating").unwrap().f64().unwrap().clone();
        let gap = df.column("team_rating_gap").unwrap().f64().unwrap().clone();
        assert_eq!(t1.get(1), None);
        assert_eq!(gap.get(1), None);
        assert_eq!(gap.get(2), Some(r.matches[2].team_rating_gap()));
    }

    #[test]
    fn a_match_still_in_the_lobby_has_null_outcome_columns_not_nan() {
        let mut r = testdata::team_records();
        r.matches[8].p_team0 = None;
        r.matches[8].duration_s = None;
        let df = matches_frame(&r.matches).unwrap();
        for col in ["p_team0", "win_prob_gap", "duration_s"] {
            let c = df.column(col).unwrap().f64().unwrap().clone();
            assert_eq!(c.get(8), None, "{col}");
            assert!(c.get(7).is_some_and(f64::is_finite), "{col}");
            assert_eq!(c.null_count(), 1, "{col}");
        }
    }

    #[test]
    fn matches_per_minute_uses_the_interval_since_the_previous_sample() {
        let r = testdata::team_records();
        let df = queue_frame(&r.queue).unwrap();
        let rate = df.column("matches_per_min").unwrap().f64().unwrap().clone();
        // Sample 0 sits at t = 0: no interval yet.
        assert_eq!(rate.get(0), None);
        // Sample 2 formed 2 matches in 10 s.
        assert_eq!(rate.get(2), Some(12.0));
    }

    #[test]
    fn parquet_bytes_repeat_exactly() {
        let r = testdata::team_records();
        assert_eq!(tables(&r), tables(&r));
    }

    #[test]
    fn every_column_is_documented() {
        let doc = COLUMNS_MD;
        for spec in [
            TICKET_COLUMNS,
            TICKET_ROLE_COLUMNS,
            MATCH_COLUMNS,
            QUEUE_COLUMNS,
            BY_HOUR_COLUMNS,
            TICKET_REGION_COLUMNS,
            MATCH_REGION_COLUMNS,
            modes::TICKET_MODE_COLUMNS,
            modes::MATCH_MODE_COLUMNS,
        ] {
            for (name, ty) in spec {
                let tyname = match ty {
                    ColType::U32 => "u32",
                    ColType::F64 => "f64",
                    ColType::Bool => "bool",
                    ColType::Str => "string",
                };
                let row = format!("| `{name}` | {tyname} |");
                assert!(doc.contains(&row), "COLUMNS.md lacks row starting {row}");
            }
        }
    }

    #[test]
    fn each_ladder_adds_its_documented_columns_to_the_players_table() {
        use mmsim_core::model::{PlayerId, Rating};
        let players: Vec<Player> = (0..3)
            .map(|i| Player::new(PlayerId(i), 1500.0, Rating::new(1500.0, 100.0, 0.0)))
            .collect();
        let mut normal = players.clone();
        normal[1].party_rating.value = 1234.0;
        let ladders = [
            LadderPlayers {
                name: "ranked".into(),
                players: players.clone(),
                played: vec![0, 2, 5],
            },
            LadderPlayers {
                name: "normal".into(),
                players: normal,
                played: vec![1, 1, 0],
            },
        ];
        let art = players_artifact_with(&players, &ladders, &[]).unwrap();
        let df = ParquetReader::new(Cursor::new(art.bytes)).finish().unwrap();
        assert_eq!(df.width(), PLAYERS_COLUMNS.len() + 2 * LADDER_COLUMNS.len());
        let games = df.column("ladder_ranked_games").unwrap().u32().unwrap();
        let games: Vec<Option<u32>> = (0..3).map(|i| games.get(i)).collect();
        assert_eq!(games, vec![Some(0), Some(2), Some(5)]);
        let party = df.column("ladder_normal_party_rating").unwrap();
        assert_eq!(party.f64().unwrap().get(1), Some(1234.0));
        for (name, ty) in LADDER_COLUMNS {
            let tyname = if *ty == ColType::U32 { "u32" } else { "f64" };
            let row = format!("| `ladder_<name>_{name}` | {tyname} |");
            assert!(
                COLUMNS_MD.contains(&row),
                "COLUMNS.md lacks row starting {row}"
            );
        }
        // Without ladders the table is as before.
        let plain = players_artifact(&players, &[]).unwrap();
        let df = ParquetReader::new(Cursor::new(plain.bytes))
            .finish()
            .unwrap();
        assert_eq!(df.width(), PLAYERS_COLUMNS.len());
    }

    #[test]
    fn every_table_carries_the_run_provenance_in_its_footer() {
        for bytes in tables(&testdata::team_records()) {
            let md = ParquetReader::new(Cursor::new(bytes))
                .get_metadata()
                .unwrap()
                .clone();
            let kv: Vec<(String, Option<String>)> = md
                .key_value_metadata()
                .as_ref()
                .unwrap()
                .iter()
                .map(|x| (x.key.clone(), x.value.clone()))
                .collect();
            for (k, v) in meta() {
                assert!(
                    kv.contains(&(k.clone(), Some(v))),
                    "{k} missing from {kv:?}"
                );
            }
        }
    }

    /// SQL:2016's reserved words (and a few every engine reserves): a column
    /// named after one needs quoting in every query, so none is allowed.
    const SQL_RESERVED: &[&str] = &[
        "abs",
        "all",
        "allocate",
        "alter",
        "and",
        "any",
        "are",
        "array",
        "as",
        "asensitive",
        "asymmetric",
        "at",
        "atomic",
        "authorization",
        "avg",
        "begin",
        "between",
        "bigint",
        "binary",
        "blob",
        "boolean",
        "both",
        "by",
        "call",
        "called",
        "cardinality",
        "cascaded",
        "case",
        "cast",
        "ceil",
        "ceiling",
        "char",
        "character",
        "check",
        "clob",
        "close",
        "collate",
        "collect",
        "column",
        "commit",
        "condition",
        "connect",
        "constraint",
        "convert",
        "corr",
        "corresponding",
        "count",
        "create",
        "cross",
        "cube",
        "current",
        "cursor",
        "cycle",
        "date",
        "day",
        "deallocate",
        "dec",
        "decimal",
        "declare",
        "default",
        "delete",
        "deref",
        "describe",
        "deterministic",
        "disconnect",
        "distinct",
        "double",
        "drop",
        "dynamic",
        "each",
        "element",
        "else",
        "end",
        "escape",
        "every",
        "except",
        "exec",
        "execute",
        "exists",
        "exp",
        "external",
        "extract",
        "false",
        "fetch",
        "filter",
        "float",
        "floor",
        "for",
        "foreign",
        "free",
        "from",
        "full",
        "function",
        "fusion",
        "get",
        "global",
        "grant",
        "group",
        "grouping",
        "groups",
        "having",
        "hold",
        "hour",
        "identity",
        "in",
        "indicator",
        "inner",
        "inout",
        "insensitive",
        "insert",
        "int",
        "integer",
        "intersect",
        "intersection",
        "interval",
        "into",
        "is",
        "join",
        "lag",
        "language",
        "large",
        "last_value",
        "lateral",
        "lead",
        "leading",
        "left",
        "like",
        "limit",
        "ln",
        "local",
        "localtime",
        "localtimestamp",
        "lower",
        "match",
        "max",
        "member",
        "merge",
        "method",
        "min",
        "minute",
        "mod",
        "modifies",
        "module",
        "month",
        "multiset",
        "national",
        "natural",
        "nchar",
        "nclob",
        "new",
        "no",
        "none",
        "normalize",
        "not",
        "null",
        "nullif",
        "numeric",
        "of",
        "offset",
        "old",
        "on",
        "only",
        "open",
        "or",
        "order",
        "out",
        "outer",
        "over",
        "overlaps",
        "overlay",
        "parameter",
        "partition",
        "percent",
        "period",
        "position",
        "power",
        "precision",
        "prepare",
        "primary",
        "procedure",
        "range",
        "rank",
        "reads",
        "real",
        "recursive",
        "ref",
        "references",
        "referencing",
        "release",
        "result",
        "return",
        "returns",
        "revoke",
        "right",
        "rollback",
        "rollup",
        "row",
        "row_number",
        "rows",
        "savepoint",
        "scope",
        "scroll",
        "search",
        "second",
        "select",
        "sensitive",
        "session_user",
        "set",
        "similar",
        "smallint",
        "some",
        "specific",
        "sql",
        "sqlexception",
        "sqlstate",
        "sqlwarning",
        "sqrt",
        "start",
        "static",
        "stddev_pop",
        "submultiset",
        "sum",
        "symmetric",
        "system",
        "system_user",
        "table",
        "tablesample",
        "then",
        "time",
        "timestamp",
        "to",
        "trailing",
        "translate",
        "translation",
        "treat",
        "trigger",
        "trim",
        "true",
        "truncate",
        "uescape",
        "union",
        "unique",
        "unknown",
        "unnest",
        "update",
        "upper",
        "user",
        "using",
        "value",
        "values",
        "var_pop",
        "varchar",
        "varying",
        "when",
        "whenever",
        "where",
        "width_bucket",
        "window",
        "with",
        "within",
        "without",
        "year",
    ];

    #[test]
    fn no_column_is_named_after_an_sql_reserved_word() {
        for spec in [
            TICKET_COLUMNS,
            MATCH_COLUMNS,
            QUEUE_COLUMNS,
            BY_HOUR_COLUMNS,
            TICKET_REGION_COLUMNS,
            MATCH_REGION_COLUMNS,
            modes::TICKET_MODE_COLUMNS,
            modes::MATCH_MODE_COLUMNS,
        ] {
            for (name, _) in spec {
                assert!(
                    !SQL_RESERVED.contains(name),
                    "{name} is an SQL reserved word"
                );
            }
        }
        // The list does catch the one the tickets table used to have.
        assert!(SQL_RESERVED.contains(&"end"));
    }
}
