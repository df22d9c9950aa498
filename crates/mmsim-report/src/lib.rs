//! The output layer: turns a finished run's records and summary into the files
//! an analyst reads (Parquet tables, plots, one HTML page) and compares two
//! runs' summaries. Everything here is a pure function returning bytes, so the
//! same run always gives the same files and only `cli::write_artifacts` touches disk.

pub mod bands;
pub mod compare;
mod engagement_plots;
pub mod explain;
pub mod fit_page;
pub mod headline;
pub mod html;
mod mode_plots;
pub mod plots;
mod region_plots;
pub mod replicated;
mod roles_plot;
pub mod sweep;
pub mod tables;
pub mod text;
pub mod trace_file;

use mmsim_core::metrics::{RunView, Summary};

/// One output file, named relative to the run's folder (`/` separates a subfolder).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Artifact {
    pub name: String,
    pub bytes: Vec<u8>,
}

/// What the output layer needs to know about a finished run.
#[derive(Clone, Copy, Debug)]
pub struct ReportInput<'a> {
    pub scenario_name: &'a str,
    /// The scenario file as given (after `--set` overrides), shown verbatim in the report.
    pub scenario_toml: &'a str,
    pub seed: u64,
    /// What the plots draw, from the same accumulators as the summary.
    pub view: &'a RunView,
    pub summary: &'a Summary,
    /// Rows written to `tickets.parquet` and `matches.parquet` (warm-up
    /// included), or `None` when the run wrote no row tables.
    pub table_rows: Option<(u64, u64)>,
    pub warmup_s: f64,
    pub duration_s: f64,
    /// With `--explain`: every ticket's story (empty otherwise); the report
    /// shows the longest wait's.
    pub stories: &'a [mmsim_core::metrics::explain::TicketStory],
}

/// Every file a run produces besides `summary.json`, `perf.json` and the
/// streamed row tables, in a fixed order: the queue table and the column
/// reference, then each plot as PNG and SVG, then `report.html`.
pub fn run_artifacts(input: &ReportInput) -> anyhow::Result<Vec<Artifact>> {
    run_artifacts_with(input, Tables::All, &[])
}

/// Whether a run writes its per-row Parquet tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tables {
    All,
    /// Plots, report and summary only: for sweeps and tuning, which read
    /// summaries, and for runs too large to want a row per ticket.
    None,
}

/// Each plot as its two files, `plots/NAME.png` and `plots/NAME.svg`: every
/// page (run, replicated run, sweep, comparison) writes its plots this way.
pub(crate) fn plot_artifacts(plots: &[plots::Plot]) -> impl Iterator<Item = Artifact> + '_ {
    plots.iter().flat_map(|p| {
        [
            Artifact {
                name: format!("{}/{}.png", plots::PLOT_DIR, p.name),
                bytes: p.png.clone(),
            },
            Artifact {
                name: format!("{}/{}.svg", plots::PLOT_DIR, p.name),
                bytes: p.svg.clone().into_bytes(),
            },
        ]
    })
}

/// `run_artifacts`, choosing whether the per-row tables are written, with
/// `meta` (the run's provenance) in the Parquet files' key-value metadata.
pub fn run_artifacts_with(
    input: &ReportInput,
    tables: Tables,
    meta: &tables::FileMetadata,
) -> anyhow::Result<Vec<Artifact>> {
    let mut out = Vec::new();
    if tables == Tables::All {
        out = tables::table_artifacts(&input.view.queue, &input.summary.by_hour, meta)?;
        // The column reference travels with the tables, so a copied run folder explains itself.
        out.push(Artifact {
            name: "COLUMNS.md".to_string(),
            bytes: tables::COLUMNS_MD.as_bytes().to_vec(),
        });
    }
    let plots = plots::run_plots(input)?;
    out.extend(plot_artifacts(&plots));
    out.push(Artifact {
        name: "report.html".to_string(),
        bytes: html::report_html(input, &plots).into_bytes(),
    });
    Ok(out)
}

#[cfg(test)]
pub(crate) mod testdata {
    //! Small hand-made runs shared by the report tests.

    use super::ReportInput;
    use mmsim_core::metrics::{
        Collector, MatchRecord, NoRows, QueueSample, RunMeta, RunRecords, RunView, Summary,
        TicketEnd, TicketRecord,
    };
    use mmsim_core::model::{MatchId, PlayerId, SimTime, TicketId};

    /// A hand-made run with its summary and plot data, computed by the same
    /// collector a real run uses.
    pub struct Run {
        pub records: RunRecords,
        pub summary: Summary,
        pub view: RunView,
    }

    impl Run {
        pub fn from_records(records: RunRecords) -> Run {
            let mut rows = NoRows;
            let mut c = Collector::new(&[], &[], &mut rows);
            if records.tickets.iter().any(|t| t.roles.is_some()) {
                c.with_roles(vec!["tank".into(), "healer".into(), "damage".into()]);
            }
            if records.tickets.iter().any(|t| t.region.is_some()) {
                c.enable_regions(
                    vec!["eu".into(), "na".into()],
                    vec!["north".into(), "south".into()],
                );
            }
            c.feed(&records);
            let meta = RunMeta {
                scenario: "test-run",
                seed: 7,
                policy: "fixed_limit",
                rating_system: "elo",
                duration_s: 300.0,
                warmup_s: 30.0,
                arrivals_blocked: 0,
            };
            let (summary, view) = c.finish(&meta, &[], Some(0.71)).unwrap();
            Run {
                records,
                summary,
                view,
            }
        }

        pub fn input(&self) -> ReportInput<'_> {
            ReportInput {
                scenario_name: "test-run",
                scenario_toml: TOML,
                seed: 7,
                view: &self.view,
                summary: &self.summary,
                table_rows: Some((
                    self.records.tickets.len() as u64,
                    self.records.matches.len() as u64,
                )),
                warmup_s: 30.0,
                duration_s: 300.0,
                stories: &[],
            }
        }
    }

    fn ticket(i: u32, enq: u64, left: u64, end: TicketEnd, warm: bool) -> TicketRecord {
        TicketRecord {
            ticket: TicketId(i),
            lead: PlayerId(i * 2),
            party_size: 1 + i % 3,
            enqueued: SimTime::from_ms(enq),
            left: SimTime::from_ms(left),
            end,
            rating: 1200.0 + 37.0 * i as f64,
            true_skill: 1000.0 + 53.0 * ((i * 7) % 23) as f64,
            requeue: i.is_multiple_of(4),
            in_warmup: warm,
            roles: None,
            region: Some((i % 2) as u16),
            host_ping_ms: None,
            mode: None,
        }
    }

    /// A 5v5-style run with survivors and gold integrals, one unfinished
    /// match, one waiting and one abandoned ticket.
    pub fn team_run() -> Run {
        Run::from_records(team_records())
    }

    pub fn team_records() -> RunRecords {
        let mut tickets = Vec::new();
        for i in 0..40u32 {
            let enq = i as u64 * 9_000;
            let end = match i {
                37 => TicketEnd::Abandoned,
                38 | 39 => TicketEnd::Waiting,
                _ => TicketEnd::Matched(MatchId(i / 4)),
            };
            let wait = 1_000 + ((i as u64 * 7919) % 60) * 1_000;
            let mut t = ticket(i, enq, enq + wait, end, i < 4);
            // A role queue: members main role (i + k) % 3; every other
            // matched member plays it, the rest their second role.
            let main: smallvec::SmallVec<[u8; 5]> =
                (0..t.party_size).map(|k| ((i + k) % 3) as u8).collect();
            let matched = matches!(end, TicketEnd::Matched(_));
            t.roles = Some(mmsim_core::metrics::TicketRoles {
                accepted: main
                    .iter()
                    .map(|&r| (1 << r) | (1 << ((r + 1) % 3)))
                    .collect(),
                assigned: if matched {
                    main.iter()
                        .enumerate()
                        .map(|(k, &r)| if k % 2 == 0 { r } else { (r + 1) % 3 })
                        .collect()
                } else {
                    Default::default()
                },
                main,
            });
            tickets.push(t);
        }
        let mut matches = Vec::new();
        for m in 0..9u32 {
            let formed = 20_000 + m as u64 * 30_000;
            let finished = m != 8;
            matches.push(MatchRecord {
                id: MatchId(m),
                formed: SimTime::from_ms(formed),
                ended: finished.then(|| SimTime::from_ms(formed + 600_000)),
                teams: 2,
                team_size: 5,
                team_rating: smallvec::smallvec![1500.0 + m as f64 * 3.0, 1490.0 - m as f64 * 2.0],
                team_skill: smallvec::smallvec![1480.0, 1510.0 + m as f64],
                team_top_skill: smallvec::smallvec![1800.0, 1790.0],
                team_parties: smallvec::smallvec![3, 4],
                team_win_rate_pct: smallvec::smallvec![50.5, 49.0 + m as f64 * 0.3],
                spread_rating: 100.0 + 25.0 * m as f64,
                spread_skill: 150.0 + 10.0 * m as f64,
                p_team0: Some(0.45 + 0.01 * m as f64),
                p_team0_predicted: 0.5,
                winner: finished.then_some(m % 2),
                duration_s: Some(600.0),
                survivors: finished.then_some(3 + m % 5),
                gold_integral: finished.then_some(1.0e5 * (1 + m) as f64),
                rematch: m == 3,
                in_warmup: m == 0,
                host_dc: Some((m % 2) as u16),
                mode: None,
            });
        }
        let queue = (0..30u64)
            .map(|k| QueueSample {
                t: SimTime::from_ms(k * 10_000),
                waiting_tickets: (k % 7) as u32,
                waiting_players: (k % 7) as u32 * 2,
                players_in_matches: (k * 3) as u32,
                matches_formed: (k % 3) as u32,
                rating_skill_rank_corr: (k > 2).then_some(0.2 + 0.02 * k as f64),
            })
            .collect();
        RunRecords {
            tickets,
            matches,
            queue,
            ..RunRecords::default()
        }
    }

    /// A 1v1 run with none of the optional match data.
    pub fn duel_run() -> Run {
        let mut r = team_records();
        for m in &mut r.matches {
            m.team_size = 1;
            m.survivors = None;
            m.gold_integral = None;
            m.host_dc = None;
        }
        for t in &mut r.tickets {
            t.region = None;
        }
        for q in &mut r.queue {
            q.rating_skill_rank_corr = None;
        }
        for t in &mut r.tickets {
            t.roles = None;
        }
        Run::from_records(r)
    }

    pub const TOML: &str = "[run]\nname = \"test <&> run\"\nseed = 7\n";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn artifacts_come_in_a_fixed_order_and_repeat_byte_for_byte() {
        let r = testdata::team_run();
        let a = run_artifacts(&r.input()).unwrap();
        let b = run_artifacts(&r.input()).unwrap();
        assert_eq!(a, b);
        let names: Vec<&str> = a.iter().map(|x| x.name.as_str()).collect();
        assert_eq!(
            &names[..3],
            &["queue.parquet", "by_hour.parquet", "COLUMNS.md"]
        );
        assert_eq!(names.last(), Some(&"report.html"));
        assert!(names.contains(&"plots/wait_hist.png"));
        assert!(names.contains(&"plots/survivors_hist.svg"));
    }

    #[test]
    fn duel_run_has_no_team_or_landslide_plots() {
        let r = testdata::duel_run();
        let a = run_artifacts(&r.input()).unwrap();
        let names: Vec<&str> = a.iter().map(|x| x.name.as_str()).collect();
        for absent in ["team_gap", "survivors", "gold_integral", "rank_corr"] {
            assert!(
                !names.iter().any(|n| n.contains(absent)),
                "{absent} in {names:?}"
            );
        }
        assert!(names.contains(&"plots/queue_length.svg"));
    }

    // Moved from mmsim-core (metrics::collect), where no hand-made records are.

    #[test]
    fn background_rows_reach_the_inner_sink_in_order() {
        use mmsim_core::metrics::RowSink;
        let records = testdata::team_records();
        let mut inline = mmsim_core::metrics::KeepRows::default();
        let mut behind = mmsim_core::metrics::KeepRows::default();
        std::thread::scope(|scope| {
            let mut bg = mmsim_core::metrics::BackgroundRows::spawn(scope, &mut behind);
            // Enough rows for several hand-overs, interleaved as a run interleaves them.
            for k in 0..(3 * mmsim_core::metrics::HANDOFF_ROWS / records.tickets.len() + 1) {
                for (i, t) in records.tickets.iter().enumerate() {
                    let mut t = t.clone();
                    t.ticket = mmsim_core::model::TicketId((k * 1000 + i) as u32);
                    inline.ticket(t.clone());
                    bg.ticket(t);
                    if let Some(m) = records.matches.get(i) {
                        inline.match_row(m.clone());
                        bg.match_row(m.clone());
                    }
                }
            }
            bg.finish().unwrap();
        });
        assert_eq!(inline.0, behind.0);
        assert!(behind.0.tickets.len() > 3 * mmsim_core::metrics::HANDOFF_ROWS);
    }
}
