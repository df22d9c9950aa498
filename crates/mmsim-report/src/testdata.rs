//! Small hand-made runs shared by the report tests.

use crate::input::ReportInput;
use mmsim_core::metrics::{
    Collector, MatchRecord, NoRows, QueueSample, RunMeta, RunRecords, RunView, Summary, TicketEnd,
    TicketRecord,
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
