//! Trace files: captured tickets, one CSV row per player per ticket, read
//! into the engine's `Trace` with errors naming the line and the column, and
//! written back from a run's own tickets (`mmsim trace`). The columns are
//! documented in docs/scenarios.md ("Replaying a trace").

use super::{Patience, Scenario};
use crate::engine::{LoggedMember, Trace, TracePlayer, TraceTicket};
use crate::model::{ParamError, Party, SimDuration, SimTime, TicketId};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The largest trace file read, and the most rows in it: a day of a busy
/// queue fits; a wrong path to a huge file stops at the limit.
pub const MAX_TRACE_BYTES: u64 = 256 << 20;
pub const MAX_TRACE_ROWS: usize = 2_000_000;
/// A simulated year, the longest run allowed.
const MAX_TRACE_TIME_S: f64 = 365.0 * 86_400.0;

/// The columns a trace may have, in the order `mmsim trace` writes them.
pub const COLUMNS: [&str; 7] = [
    "time_s",
    "ticket",
    "player",
    "rating",
    "true_skill",
    "abandon_s",
    "requeue",
];
const REQUIRED: [&str; 4] = ["time_s", "ticket", "player", "rating"];

/// The keys a trace replaces: a scenario with a trace may not set them
/// (their defaults are accepted, as if absent).
pub fn validate(s: &Scenario) -> Result<(), ParamError> {
    let refuse = |key: &str, why: &str| {
        Err(ParamError::new(
            key,
            format!("cannot be set with arrivals.trace: {why}"),
        ))
    };
    let from_trace = "the trace gives the players, their first ratings and true skills";
    let arrivals = "the trace gives every arrival; remove it";
    let p = &s.population;
    if p.size != 0 {
        return refuse("population.size", from_trace);
    }
    if p.skill.is_some() {
        return refuse("population.skill", from_trace);
    }
    if p.initial_rating.is_some() {
        return refuse("population.initial_rating", from_trace);
    }
    let a = &s.arrivals;
    if a.rate_per_s != 0.0 {
        return refuse("arrivals.rate_per_s", arrivals);
    }
    if a.daily_profile.is_some() {
        return refuse("arrivals.daily_profile", arrivals);
    }
    if a.party_sizes != [1.0] {
        return refuse(
            "arrivals.party_sizes",
            "the trace gives each ticket's party; remove it",
        );
    }
    if a.patience != Patience::default() {
        return refuse(
            "arrivals.patience",
            "each ticket's abandon time is the trace's `abandon_s` column (empty: it never abandons); remove it",
        );
    }
    if a.requeue_prob != 0.0 {
        return refuse(
            "arrivals.requeue_prob",
            "a trace already holds the returns after matches, as tickets of their own; remove it",
        );
    }
    if a.think_time.0 != SimDuration::from_secs(30) {
        return refuse(
            "arrivals.think_time",
            "the trace's return tickets carry their own times; remove it",
        );
    }
    if a.trace.as_deref().is_some_and(|t| t.trim().is_empty()) {
        return Err(ParamError::new("arrivals.trace", "must name a file"));
    }
    Ok(())
}

/// Reads the trace `s` names (relative to the scenario file at `path`)
/// into `s`, or keeps `before`'s when it named the same file (a sweep's
/// settings share one read). Errors name the file, line and column.
pub fn attach(s: &mut Scenario, before: &Scenario, path: &Path) -> Result<(), ParamError> {
    let Some(file) = s.arrivals.trace.clone() else {
        return Ok(());
    };
    if before.arrivals.trace.as_ref() == Some(&file) && before.arrivals.trace_data.is_some() {
        s.arrivals.trace_data = before.arrivals.trace_data.clone();
        s.arrivals.trace_sha256 = before.arrivals.trace_sha256.clone();
        return Ok(());
    }
    let full = path.parent().unwrap_or(Path::new(".")).join(&file);
    let (trace, sha) = read(&full, s.format.team_size as usize)
        .map_err(|e| ParamError::new("arrivals.trace", format!("{}: {e}", full.display())))?;
    if trace.players.len() < (s.format.teams * s.format.team_size) as usize {
        return Err(ParamError::new(
            "arrivals.trace",
            format!(
                "{}: has {} players but a match needs {}",
                full.display(),
                trace.players.len(),
                s.format.teams * s.format.team_size
            ),
        ));
    }
    s.arrivals.trace_data = Some(std::sync::Arc::new(trace));
    s.arrivals.trace_sha256 = Some(sha);
    Ok(())
}

/// What is wrong with a trace file: the 1-based line and, for a bad value,
/// its column.
#[derive(Debug, PartialEq)]
pub struct TraceError {
    pub line: Option<usize>,
    pub column: Option<String>,
    pub message: String,
}

impl std::fmt::Display for TraceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(l) = self.line {
            write!(f, "line {l}")?;
            if let Some(c) = &self.column {
                write!(f, ", column `{c}`")?;
            }
            write!(f, ": ")?;
        }
        write!(f, "{}", self.message)
    }
}

fn err(line: usize, column: Option<&str>, message: impl Into<String>) -> TraceError {
    TraceError {
        line: Some(line),
        column: column.map(str::to_owned),
        message: message.into(),
    }
}

/// Reads a trace file for a match of `team_size` players a side, with the
/// SHA-256 of its bytes (hex).
pub fn read(path: &Path, team_size: usize) -> Result<(Trace, String), TraceError> {
    use sha2::{Digest, Sha256};
    let text = super::read_bounded(path, MAX_TRACE_BYTES).map_err(|e| TraceError {
        line: None,
        column: None,
        message: format!("cannot read {}: {e}", path.display()),
    })?;
    let sha = super::provenance::hex(&Sha256::digest(text.as_bytes()));
    Ok((parse(&text, team_size)?, sha))
}

/// Splits one CSV line into fields; a field may be double-quoted (with `""`
/// for a quote inside), so player ids may hold commas.
fn fields(line: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = line.chars().peekable();
    let mut quoted = false;
    let mut was_quoted = false;
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                cur.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => cur.push(c),
            (false, '"') if cur.is_empty() && !was_quoted => {
                quoted = true;
                was_quoted = true;
            }
            (false, ',') => {
                out.push(std::mem::take(&mut cur));
                was_quoted = false;
            }
            (false, c) => {
                if was_quoted {
                    return None;
                }
                cur.push(c)
            }
        }
    }
    if quoted {
        return None;
    }
    out.push(cur);
    Some(out)
}

/// One ticket while it is read: its first line and its rows' values.
struct Open {
    key: String,
    line: usize,
    at: SimTime,
    at_text: String,
    abandon: Option<SimDuration>,
    requeue: bool,
    members: Party,
}

pub fn parse(text: &str, team_size: usize) -> Result<Trace, TraceError> {
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim_end_matches('\r')));
    let Some((_, header)) = lines.next() else {
        return Err(err(
            1,
            None,
            "the trace is empty: it needs a header line naming its columns",
        ));
    };
    let header = fields(header).ok_or_else(|| err(1, None, "unbalanced quotes in the header"))?;
    let mut col: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, name) in header.iter().enumerate() {
        let name = name.trim();
        let Some(&known) = COLUMNS.iter().find(|c| **c == name) else {
            return Err(err(
                1,
                Some(name),
                format!(
                    "unknown column; a trace has {} (region, ping and role columns come with those features)",
                    COLUMNS.join(", ")
                ),
            ));
        };
        if col.insert(known, i).is_some() {
            return Err(err(1, Some(name), "named twice"));
        }
    }
    for r in REQUIRED {
        if !col.contains_key(r) {
            return Err(err(
                1,
                Some(r),
                format!("is missing; required columns: {}", REQUIRED.join(", ")),
            ));
        }
    }
    let mut players: Vec<TracePlayer> = Vec::new();
    let mut ids: BTreeMap<String, u32> = BTreeMap::new();
    let mut seen_tickets: BTreeSet<String> = BTreeSet::new();
    let mut tickets: Vec<TraceTicket> = Vec::new();
    let mut open: Option<Open> = None;
    let mut rows = 0usize;
    let close = |o: Open, tickets: &mut Vec<TraceTicket>| {
        tickets.push(TraceTicket {
            at: o.at,
            members: o.members,
            abandon_after: o.abandon,
            requeue: o.requeue,
        });
    };
    for (line, raw) in lines {
        if raw.trim().is_empty() {
            continue;
        }
        rows += 1;
        if rows > MAX_TRACE_ROWS {
            return Err(err(
                line,
                None,
                format!("a trace may have at most {MAX_TRACE_ROWS} rows"),
            ));
        }
        let f = fields(raw).ok_or_else(|| err(line, None, "unbalanced quotes"))?;
        if f.len() != header.len() {
            return Err(err(
                line,
                None,
                format!(
                    "has {} fields but the header names {} columns",
                    f.len(),
                    header.len()
                ),
            ));
        }
        let get = |c: &str| col.get(c).map(|&i| f[i].trim());
        let number = |c: &str| -> Result<Option<f64>, TraceError> {
            match get(c) {
                None | Some("") => Ok(None),
                Some(v) => match v.parse::<f64>() {
                    Ok(x) if x.is_finite() => Ok(Some(x)),
                    _ => Err(err(
                        line,
                        Some(c),
                        format!("expected a finite number, got {v:?}"),
                    )),
                },
            }
        };
        let required = |c: &str| -> Result<f64, TraceError> {
            number(c)?.ok_or_else(|| err(line, Some(c), "is empty; every row needs it"))
        };
        let time_s = required("time_s")?;
        if time_s < 0.0 {
            return Err(err(
                line,
                Some("time_s"),
                format!("seconds from the run's start: must be 0 or more, got {time_s}"),
            ));
        }
        if time_s > MAX_TRACE_TIME_S {
            return Err(err(
                line,
                Some("time_s"),
                "is later than the longest run allowed",
            ));
        }
        let ticket = get("ticket").unwrap_or("").to_owned();
        if ticket.is_empty() {
            return Err(err(
                line,
                Some("ticket"),
                "is empty; rows of one ticket share a ticket id",
            ));
        }
        let player = get("player").unwrap_or("").to_owned();
        if player.is_empty() {
            return Err(err(line, Some("player"), "is empty"));
        }
        let rating = required("rating")?;
        let true_skill = number("true_skill")?.unwrap_or(rating);
        let abandon = match number("abandon_s")? {
            Some(x) if x < 0.0 => {
                return Err(err(
                    line,
                    Some("abandon_s"),
                    format!("seconds after arrival: must be 0 or more, got {x}"),
                ))
            }
            Some(x) => Some(SimDuration::from_secs_f64(x)),
            None => None,
        };
        let requeue = match get("requeue") {
            None | Some("") | Some("false") | Some("0") => false,
            Some("true") | Some("1") => true,
            Some(v) => {
                return Err(err(
                    line,
                    Some("requeue"),
                    format!("expected true, false, 1, 0 or empty, got {v:?}"),
                ))
            }
        };
        let next_id = players.len() as u32;
        let id = *ids.entry(player.clone()).or_insert(next_id);
        if id == next_id {
            players.push(TracePlayer { rating, true_skill });
        }
        let id = crate::model::PlayerId(id);
        let at_text = get("time_s").unwrap_or("").to_owned();
        if let Some(o) = open.as_mut().filter(|o| o.key == ticket) {
            if at_text != o.at_text {
                return Err(err(
                    line,
                    Some("time_s"),
                    format!("differs from line {} of the same ticket {ticket:?}", o.line),
                ));
            }
            if abandon != o.abandon || requeue != o.requeue {
                let c = if abandon != o.abandon {
                    "abandon_s"
                } else {
                    "requeue"
                };
                return Err(err(
                    line,
                    Some(c),
                    format!("differs from line {} of the same ticket {ticket:?}", o.line),
                ));
            }
            if o.members.contains(&id) {
                return Err(err(
                    line,
                    Some("player"),
                    format!("{player:?} is already in ticket {ticket:?}"),
                ));
            }
            if o.members.len() >= team_size {
                return Err(err(
                    line,
                    Some("ticket"),
                    format!("ticket {ticket:?} has more players than a team holds ({team_size}); it could never be matched"),
                ));
            }
            o.members.push(id);
            continue;
        }
        if let Some(o) = open.take() {
            close(o, &mut tickets);
        }
        if !seen_tickets.insert(ticket.clone()) {
            return Err(err(
                line,
                Some("ticket"),
                format!("{ticket:?} appeared earlier: the rows of one ticket must be next to each other, and a new stay needs a new ticket id"),
            ));
        }
        open = Some(Open {
            key: ticket,
            line,
            at: SimTime::from_secs_f64(time_s),
            at_text,
            abandon,
            requeue,
            members: smallvec::smallvec![id],
        });
    }
    if let Some(o) = open.take() {
        close(o, &mut tickets);
    }
    if tickets.is_empty() {
        return Err(err(1, None, "the trace has a header but no rows"));
    }
    // Stable: tickets at the same millisecond keep the file's order.
    tickets.sort_by_key(|t| t.at);
    Ok(Trace { players, tickets })
}

/// Collects a run's tickets as it makes them, in the order they join, and
/// writes them as a trace (one line per member; the run's player ids).
#[derive(Default)]
pub struct TraceWriter {
    out: String,
}

/// Seconds with the millisecond exactly, so a trace reads back to the same times.
fn ms_text(ms: u64) -> String {
    format!("{}.{:03}", ms / 1000, ms % 1000)
}

impl TraceWriter {
    pub fn new() -> Self {
        TraceWriter {
            out: COLUMNS.join(",") + "\n",
        }
    }
    pub fn into_text(self) -> String {
        self.out
    }
}

impl crate::engine::TicketLog for TraceWriter {
    fn enqueued(
        &mut self,
        at: SimTime,
        ticket: TicketId,
        members: &[LoggedMember],
        patience: Option<SimDuration>,
        requeue: bool,
    ) {
        use std::fmt::Write as _;
        let abandon = patience.map(|p| ms_text(p.as_ms())).unwrap_or_default();
        for m in members {
            // f64's Display is the shortest text that reads back to the same value.
            writeln!(
                self.out,
                "{},{},{},{},{},{},{}",
                ms_text(at.as_ms()),
                ticket.0,
                m.player.0,
                m.rating,
                m.true_skill,
                abandon,
                requeue
            )
            .expect("writing to a String cannot fail");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "time_s,ticket,player,rating,true_skill,abandon_s,requeue\n\
        5.000,a,p1,1500,1400,,false\n\
        1.5,b,p2,1600,,30,false\n\
        1.5,b,p3,1620,1700,30,false\n\
        9,c,p1,1510,1400,,true\n";

    #[test]
    fn parties_players_and_order_come_from_the_rows() {
        let t = parse(GOOD, 5).unwrap();
        assert_eq!(t.players.len(), 3);
        // p1 first, then p2, p3; p2 has no true skill: its first rating.
        assert_eq!(
            t.players[1],
            TracePlayer {
                rating: 1600.0,
                true_skill: 1600.0
            }
        );
        // Sorted stably by time: b (1.5 s) before a (5 s), then c.
        let at: Vec<u64> = t.tickets.iter().map(|t| t.at.as_ms()).collect();
        assert_eq!(at, vec![1500, 5000, 9000]);
        assert_eq!(t.tickets[0].members.len(), 2);
        assert_eq!(t.tickets[0].abandon_after, Some(SimDuration::from_secs(30)));
        assert_eq!(t.tickets[1].abandon_after, None);
        assert!(t.tickets[2].requeue && !t.tickets[1].requeue);
        assert_eq!(t.tickets[2].members[0], t.tickets[1].members[0]);
    }

    #[test]
    fn bad_rows_name_their_line_and_column() {
        let bad = |text: &str| parse(text, 5).unwrap_err().to_string();
        let h = "time_s,ticket,player,rating\n";
        assert_eq!(
            bad(&format!("{h}1,a,p,1500\n2,b,q,abc\n")),
            "line 3, column `rating`: expected a finite number, got \"abc\""
        );
        assert!(bad(&format!("{h}-1,a,p,1500\n")).starts_with("line 2, column `time_s`: seconds"));
        assert!(bad(&format!("{h}1,a,p,1500\n2,b,q,1\n3,a,r,1\n"))
            .starts_with("line 4, column `ticket`"));
        assert!(bad(&format!("{h}1,a,p,1500\n1,a,p,1500\n")).starts_with("line 3, column `player`"));
        assert!(bad(&format!("{h}1,a,p,1500\n2,a,q,1500\n"))
            .starts_with("line 3, column `time_s`: differs from line 2"));
        assert!(bad("time_s,ticket,player,rating,region\n")
            .starts_with("line 1, column `region`: unknown column"));
        assert!(bad("time_s,ticket,player\n").starts_with("line 1, column `rating`: is missing"));
        assert!(bad(&format!("{h}1,a,p\n")).starts_with("line 2: has 3 fields"));
        assert_eq!(
            parse(&format!("{h}1,a,p,1\n1,a,q,1\n"), 1)
                .unwrap_err()
                .line,
            Some(3)
        );
    }

    /// p and q match at once and play for at least a minute; p's and q's
    /// next tickets come due while they play, wait until the match ends,
    /// then join (and match) at its end; r's ticket, free, joins on time.
    #[test]
    fn a_ticket_of_a_busy_player_joins_when_the_player_is_free() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(
            tmp.path().join("t.csv"),
            "time_s,ticket,player,rating\n0,a,p,1500\n0,b,q,1500\n10,c,p,1500\n20,d,q,1500\n30,e,r,3000\n",
        )
        .unwrap();
        let text = "[run]\nname = \"t\"\nduration = \"1h\"\n\
            [arrivals]\ntrace = \"t.csv\"\n\
            [policy]\nkind = \"fixed-limit\"\nlimit = 1000\n\
            [outcome]\nmodel = \"logistic\"\nduration = \"5m\"\nduration_min = \"1m\"\n";
        let loaded = crate::scenario::from_text(text, &tmp.path().join("s.toml"), &[]).unwrap();
        let kept = crate::run::run_keeping(&loaded.scenario, 1);
        let mut tickets = kept.records.tickets.clone();
        tickets.sort_by_key(|t| t.ticket);
        let first = &kept.records.matches[0];
        let ended = first.ended.expect("a 5-minute match ends within the hour");
        assert!(ended.as_ms() >= 60_000);
        let enqueued: Vec<u64> = tickets.iter().map(|t| t.enqueued.as_ms()).collect();
        // r joins on time (30 s), before p and q are free again.
        assert_eq!(enqueued, vec![0, 0, 30_000, ended.as_ms(), ended.as_ms()]);
        assert_eq!(kept.records.matches.len(), 2);
        assert_eq!(kept.records.matches[1].formed, ended);
        assert_eq!(kept.output.perf.trace_tickets_delayed, Some(2));
    }

    #[test]
    fn quoted_player_ids_may_hold_commas() {
        let t = parse(
            "time_s,ticket,player,rating\n1,a,\"x,y\",1\n2,b,\"x,y\",3\n",
            1,
        )
        .unwrap();
        assert_eq!(t.players.len(), 1);
        assert!(fields("a,\"b\"c").is_none());
    }

    #[test]
    fn a_written_trace_reads_back_to_the_same_tickets() {
        use crate::engine::TicketLog;
        use crate::model::PlayerId;
        let mut w = TraceWriter::new();
        let m = |p, r: f64| LoggedMember {
            player: PlayerId(p),
            rating: r,
            true_skill: r / 3.0,
        };
        w.enqueued(
            SimTime::from_ms(1_234),
            TicketId(0),
            &[m(7, 1500.1)],
            Some(SimDuration::from_ms(61_001)),
            false,
        );
        w.enqueued(
            SimTime::from_ms(1_234),
            TicketId(1),
            &[m(3, 0.1 + 0.2), m(7, 1e-7)],
            None,
            true,
        );
        let t = parse(&w.into_text(), 2).unwrap();
        assert_eq!(t.tickets.len(), 2);
        assert_eq!(t.tickets[0].at.as_ms(), 1_234);
        assert_eq!(t.tickets[0].abandon_after.unwrap().as_ms(), 61_001);
        assert_eq!(t.players[0].true_skill, 1500.1 / 3.0);
        assert_eq!(t.players[1].rating, 0.1 + 0.2);
        assert_eq!(t.tickets[1].members.as_slice(), &[PlayerId(1), PlayerId(0)]);
    }
}
