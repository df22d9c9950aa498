//! The game-mode columns of the tickets and matches tables, present only
//! when the run has `[modes]`: which mode matched each ticket (or, unmatched,
//! the one it drew), whether it queued for several, and each match's mode.
//! A child of `tables` so the columns reuse its row-group framing.

use super::{
    col, frame, map, matches_frame_with, tickets_frame_with, tickets_frame_with_roles, ColType,
    FileMetadata, ParquetRows, RegionNames, RowFrame, Stream,
};
use mmsim_core::metrics::{MatchRecord, TicketRecord};
use polars::prelude::*;

/// Appended to the tickets table when the run has `[modes]`.
pub const TICKET_MODE_COLUMNS: &[(&str, ColType)] =
    &[("mode", ColType::Str), ("multi_queued", ColType::Bool)];

/// Appended to the matches table when the run has `[modes]`.
pub const MATCH_MODE_COLUMNS: &[(&str, ColType)] = &[("mode", ColType::Str)];

fn mode_name(names: &[String], i: Option<u8>) -> Option<&str> {
    i.and_then(|i| names.get(usize::from(i)))
        .map(String::as_str)
}

/// The tickets frame, with the mode columns when `modes` names the modes.
fn tickets_with_modes(
    rows: &[TicketRecord],
    roles: Option<&[String]>,
    regions: Option<&RegionNames>,
    modes: &[String],
) -> anyhow::Result<DataFrame> {
    let base = match roles {
        None => tickets_frame_with(rows, regions)?,
        Some(names) => tickets_frame_with_roles(rows, names, regions)?,
    };
    let extra = frame(
        rows.len(),
        vec![
            col(
                "mode",
                map(rows, |t| mode_name(modes, t.mode.map(|m| m.mode))),
            ),
            col("multi_queued", map(rows, |t| t.mode.map(|m| m.multi))),
        ],
        TICKET_MODE_COLUMNS,
    )?;
    Ok(base.hstack(extra.columns())?)
}

fn matches_with_modes(
    rows: &[MatchRecord],
    regions: Option<&RegionNames>,
    modes: &[String],
) -> anyhow::Result<DataFrame> {
    let base = matches_frame_with(rows, regions)?;
    let extra = frame(
        rows.len(),
        vec![col("mode", map(rows, |m| mode_name(modes, m.mode)))],
        MATCH_MODE_COLUMNS,
    )?;
    Ok(base.hstack(extra.columns())?)
}

impl<W: std::io::Write> ParquetRows<W> {
    /// As `with_columns`, and with `[modes]` (`modes`: the modes' names)
    /// the mode columns; without, exactly `with_columns`.
    pub fn with_mode_columns(
        tickets: W,
        matches: W,
        meta: &FileMetadata,
        roles: Option<Vec<String>>,
        regions: Option<RegionNames>,
        modes: Option<Vec<String>>,
    ) -> anyhow::Result<Self> {
        let Some(modes) = modes else {
            return Self::with_columns(tickets, matches, meta, roles, regions);
        };
        let (ticket_regions, ticket_modes) = (regions.clone(), modes.clone());
        let ticket_frame: RowFrame<TicketRecord> = Box::new(move |rows: &[TicketRecord]| {
            tickets_with_modes(
                rows,
                roles.as_deref(),
                ticket_regions.as_ref(),
                &ticket_modes,
            )
        });
        let match_frame: RowFrame<MatchRecord> = Box::new(move |rows: &[MatchRecord]| {
            matches_with_modes(rows, regions.as_ref(), &modes)
        });
        Ok(ParquetRows {
            tickets: Stream::new("tickets.parquet", tickets, ticket_frame, meta)?,
            matches: Stream::new("matches.parquet", matches, match_frame, meta)?,
            error: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mmsim_core::metrics::modes::TicketMode;
    use mmsim_core::metrics::TicketEnd;
    use mmsim_core::model::{MatchId, PlayerId, SimTime, TicketId};

    #[test]
    fn mode_columns_hold_the_mode_names_and_the_multi_queue_flag() {
        let t = |mode: Option<TicketMode>| TicketRecord {
            ticket: TicketId(0),
            lead: PlayerId(0),
            party_size: 1,
            enqueued: SimTime::ZERO,
            left: SimTime::from_ms(5_000),
            end: TicketEnd::Matched(MatchId(0)),
            rating: 0.0,
            true_skill: 0.0,
            requeue: false,
            in_warmup: false,
            roles: None,
            region: None,
            host_ping_ms: None,
            mode,
        };
        let rows = vec![
            t(Some(TicketMode {
                mode: 1,
                multi: true,
            })),
            t(Some(TicketMode {
                mode: 0,
                multi: false,
            })),
            t(None),
        ];
        let names = vec!["ranked".to_owned(), "casual".to_owned()];
        let df = tickets_with_modes(&rows, None, None, &names).unwrap();
        let mode = df.column("mode").unwrap().str().unwrap();
        let mode: Vec<Option<&str>> = (0..df.height()).map(|i| mode.get(i)).collect();
        assert_eq!(mode, vec![Some("casual"), Some("ranked"), None]);
        let multi = df.column("multi_queued").unwrap().bool().unwrap();
        let multi: Vec<Option<bool>> = (0..df.height()).map(|i| multi.get(i)).collect();
        assert_eq!(multi, vec![Some(true), Some(false), None]);
    }
}
