//! Trace files in Parquet: a run's tickets written by `mmsim trace` as a
//! Parquet file, and a Parquet trace read into rows of text for the one
//! trace parser (`scenario::trace::parse_rows`), so both formats take the
//! same columns and give the same errors. Here because polars stays in `report/`.

use mmsim_scenario::trace::{ParquetRowsError, ParquetTable, TraceWriter};
use polars::prelude::*;

/// A trace with more columns than this is not one: the seven plain ones,
/// `region`, `roles` and a ping per data centre (32 at most) fit.
const MAX_COLUMNS: usize = 64;

/// The run's tickets as a Parquet file: the CSV's columns, times and
/// abandon times as float seconds (exact to the millisecond when read back),
/// ids as integers, pings as whole milliseconds, names as text.
pub fn parquet_bytes(w: &TraceWriter) -> anyhow::Result<Vec<u8>> {
    let n = w.rows();
    let secs = |ms: u64| ms as f64 / 1000.0;
    let mut values: Vec<Series> = vec![
        Series::new(
            "".into(),
            w.time_ms.iter().map(|&m| secs(m)).collect::<Vec<f64>>(),
        ),
        Series::new("".into(), w.ticket.as_slice()),
        Series::new("".into(), w.player.as_slice()),
        Series::new("".into(), w.rating.as_slice()),
        Series::new("".into(), w.true_skill.as_slice()),
        Series::new(
            "".into(),
            w.abandon_ms
                .iter()
                .map(|a| a.map(secs))
                .collect::<Vec<Option<f64>>>(),
        ),
        Series::new("".into(), w.requeue.as_slice()),
    ];
    if let Some((dcs, _)) = &w.ctx.regions {
        values.push(Series::new(
            "".into(),
            (0..n).map(|i| w.region_name(i)).collect::<Vec<&str>>(),
        ));
        for d in 0..dcs.len() {
            values.push(Series::new(
                "".into(),
                (0..n)
                    .map(|i| u32::from(w.row_pings(i)[d]))
                    .collect::<Vec<u32>>(),
            ));
        }
    }
    if w.ctx.roles.is_some() {
        values.push(Series::new(
            "".into(),
            (0..n).map(|i| w.roles_text(i)).collect::<Vec<String>>(),
        ));
    }
    let columns: Vec<Column> = values
        .into_iter()
        .zip(w.header())
        .map(|(s, name)| Column::from(s.with_name(name.into())))
        .collect();
    let mut df = DataFrame::new(n, columns)?;
    crate::tables::parquet_bytes(&mut df)
}

/// One column's cells as the parser reads them.
enum Cells {
    /// Floats, written with Rust's shortest text that reads back exactly.
    Float(Float64Chunked),
    /// Anything else polars can cast to text (integers, booleans, strings).
    Text(StringChunked),
}

impl Cells {
    fn text(&self, i: usize) -> String {
        match self {
            Cells::Float(c) => c.get(i).map(|x| x.to_string()).unwrap_or_default(),
            Cells::Text(c) => c.get(i).map(str::to_owned).unwrap_or_default(),
        }
    }
}

/// A Parquet trace's column names and its rows as text (nulls empty),
/// refusing more than `max_rows` rows before decoding any.
pub fn rows(bytes: &[u8], max_rows: usize) -> Result<ParquetTable, ParquetRowsError> {
    let mut reader = ParquetReader::new(std::io::Cursor::new(bytes.to_vec()));
    let n = reader
        .num_rows()
        .map_err(|e| format!("not a readable Parquet file ({e})"))?;
    if n > max_rows {
        return Err(format!("has {n} rows; a trace may have at most {max_rows}").into());
    }
    let df = reader
        .finish()
        .map_err(|e| format!("not a readable Parquet file ({e})"))?;
    if df.width() > MAX_COLUMNS {
        return Err(format!(
            "has {} columns; a trace has at most {MAX_COLUMNS}",
            df.width()
        )
        .into());
    }
    let mut header = Vec::with_capacity(df.width());
    let mut cells = Vec::with_capacity(df.width());
    for c in df.columns() {
        let name = c.name().to_string();
        let cast = |to: &DataType| {
            c.cast(to).map_err(|_| {
                format!(
                    "column `{name}`: a {} column cannot be read as a trace's numbers or text",
                    c.dtype()
                )
            })
        };
        let column = if c.dtype().is_float() {
            let f = cast(&DataType::Float64)?;
            let f = f.f64().map_err(|e| e.to_string())?;
            Cells::Float(f.rechunk().into_owned())
        } else {
            let s = cast(&DataType::String)?;
            let s = s.str().map_err(|e| e.to_string())?;
            Cells::Text(s.rechunk().into_owned())
        };
        header.push(name);
        cells.push(column);
    }
    let rows = (0..n).map(move |i| cells.iter().map(|c| c.text(i)).collect());
    Ok((header, Box::new(rows)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use mmsim_core::engine::{LoggedMember, TicketLog, TraceRoles};
    use mmsim_core::model::{PlayerId, SimDuration, SimTime, TicketId};
    use mmsim_scenario::trace::{self, Context};

    fn regional() -> Context {
        Context {
            team_size: 5,
            regions: Some((
                vec!["eu".into(), "us".into()],
                vec!["europe".into(), "america".into()],
            )),
            roles: Some(vec!["tank".into(), "damage".into()]),
        }
    }

    fn written() -> TraceWriter {
        let mut w = TraceWriter::new(regional());
        let m = |p: u32, r: f64, pings: &'static [u16]| LoggedMember {
            player: PlayerId(p),
            rating: r,
            true_skill: r * 0.9 + 0.1,
            home: Some(1),
            pings_ms: pings,
            roles: Some(TraceRoles { main: 1, mask: 3 }),
        };
        w.enqueued(
            SimTime::from_ms(1_001),
            TicketId(0),
            &[m(3, 1500.25, &[90, 31]), m(8, 0.1 + 0.2, &[88, 40])],
            Some(SimDuration::from_ms(61_007)),
            false,
        );
        w.enqueued(
            SimTime::from_ms(7_250),
            TicketId(1),
            &[m(3, 1512.5, &[90, 31])],
            None,
            true,
        );
        w
    }

    fn read_file(name: &str, bytes: &[u8]) -> Result<mmsim_core::engine::Trace, String> {
        trace::read_parquet_with(rows);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        trace::read(&path, &regional())
            .map(|(t, _)| t)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn a_parquet_trace_reads_to_the_same_trace_as_its_csv_twin() {
        let w = written();
        let from_csv = trace::parse(&w.csv(), &regional()).unwrap();
        let from_parquet = read_file("t.parquet", &parquet_bytes(&w).unwrap()).unwrap();
        assert_eq!(from_parquet, from_csv);
        assert_eq!(from_parquet.players[1].rating, 0.1 + 0.2);
        assert_eq!(
            from_parquet.tickets[0].abandon_after.unwrap().as_ms(),
            61_007
        );
        assert_eq!(from_parquet.players[0].pings_ms, vec![90, 31]);
    }

    #[test]
    fn a_bad_parquet_cell_names_its_row_and_column() {
        let mut df = polars::df!(
            "time_s" => [1.0, 2.0],
            "ticket" => ["a", "b"],
            "player" => [1i64, 2],
            "rating" => [1500.0, 1500.0],
            "region" => [Some("europe"), Some("asia")],
        )
        .unwrap();
        let bytes = crate::tables::parquet_bytes(&mut df).unwrap();
        assert_eq!(
            read_file("bad.parquet", &bytes).unwrap_err(),
            "row 2, column `region`: unknown region \"asia\"; [[regions.homes]] names are europe, america"
        );
        let mut df = polars::df!("time_s" => [1.0], "ticket" => ["a"], "player" => ["p"], "rating" => [1.0], "mmr" => [2.0]).unwrap();
        let bytes = crate::tables::parquet_bytes(&mut df).unwrap();
        assert!(read_file("bad.parquet", &bytes)
            .unwrap_err()
            .starts_with("column `mmr`: unknown column"));
        assert!(read_file("junk.parquet", b"not parquet")
            .unwrap_err()
            .starts_with("not a readable Parquet file"));
    }
}
