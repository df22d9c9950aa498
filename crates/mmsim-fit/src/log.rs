//! The ticket log `mmsim fit` reads: one row per player per ticket (the
//! trace's layout), with when each ticket left the queue and why. Read
//! from rows of text (CSV here; Parquet rows come as text from the report
//! crate, which holds polars), refusing a malformed row by its line and
//! column; written by `mmsim trace --ticket-log` from a run. docs/fit.md
//! documents the columns.

use serde::Serialize;
use std::collections::BTreeMap;

/// The columns every ticket log has.
pub const REQUIRED: [&str; 5] = ["enqueue_s", "ticket", "player", "leave_s", "reason"];
/// Columns a log may have; `ping_ms_<data centre>` too.
pub const OPTIONAL: [&str; 7] = [
    "party",
    "rating",
    "requeue",
    "match",
    "match_end_s",
    "region",
    "roles",
];
pub const PING_PREFIX: &str = "ping_ms_";
/// The most rows read (a day of a queue at about 20 parties a second);
/// a longer log is refused, not read until memory runs out.
pub const MAX_ROWS: usize = 4_000_000;
/// The longest log fitted: a year, the longest run a scenario may ask for.
pub const MAX_SPAN_S: f64 = 366.0 * 86_400.0;

/// Refuses a log whose tickets span more than `MAX_SPAN_S` (a time in the
/// wrong unit, milliseconds for seconds, most often), naming the first
/// ticket past it.
pub fn check_span(tickets: &[LogTicket], unit: &'static str) -> Result<(), LogError> {
    let first = tickets
        .iter()
        .map(|t| t.enqueue_s)
        .fold(f64::INFINITY, f64::min);
    let past = |x: f64| x.is_finite() && x - first > MAX_SPAN_S;
    for t in tickets {
        let field = if past(t.enqueue_s) {
            "enqueue_s"
        } else if past(t.leave_s) {
            "leave_s"
        } else if t.match_end_s.is_some_and(past) {
            "match_end_s"
        } else {
            continue;
        };
        return Err(bad(
            unit,
            t.line,
            field,
            format!(
                "ticket {} is more than 366 days after the log's first ticket (at {first} s): a log is fitted over a year at most; are the times in seconds?",
                t.ticket
            ),
        ));
    }
    Ok(())
}

/// How a stay in the queue ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    Matched,
    /// The player gave up (cancelled): the event patience is about.
    Abandoned,
    /// Still queued when the log ends.
    Waiting,
    /// The matchmaker gave up on it (FlexMatch's request timeout): the
    /// player might have waited longer, so censored like `waiting`.
    TimedOut,
}

impl Reason {
    pub fn parse(v: &str) -> Option<Reason> {
        Some(match v {
            "matched" => Reason::Matched,
            "abandoned" => Reason::Abandoned,
            "waiting" => Reason::Waiting,
            "timed_out" => Reason::TimedOut,
            _ => return None,
        })
    }
    pub fn label(self) -> &'static str {
        match self {
            Reason::Matched => "matched",
            Reason::Abandoned => "abandoned",
            Reason::Waiting => "waiting",
            Reason::TimedOut => "timed_out",
        }
    }
}

/// One member of a ticket.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LogPlayer {
    pub id: String,
    pub rating: Option<f64>,
    pub region: Option<String>,
    /// Ping to each data centre of the log's `ping_ms_*` columns, in their order.
    pub pings_ms: Vec<f64>,
    /// Main role first.
    pub roles: Vec<String>,
}

/// One party's stay in the queue.
#[derive(Clone, Debug, PartialEq)]
pub struct LogTicket {
    pub ticket: String,
    /// The line (or Parquet row, or JSON line) that opened it.
    pub line: usize,
    pub enqueue_s: f64,
    pub leave_s: f64,
    pub reason: Reason,
    pub players: Vec<LogPlayer>,
    /// A return after a match, when the log says (`requeue`).
    pub requeue: Option<bool>,
    pub match_id: Option<String>,
    /// When the ticket's match ended (the game session's end), if logged.
    pub match_end_s: Option<f64>,
}

impl LogTicket {
    pub fn wait_s(&self) -> f64 {
        self.leave_s - self.enqueue_s
    }
}

/// A log read whole: tickets by enqueue time (ties by ticket id).
#[derive(Clone, Debug, PartialEq)]
pub struct TicketLog {
    pub tickets: Vec<LogTicket>,
    /// The start of the hour the first ticket came in: the log's arrivals
    /// are counted from here.
    pub start_s: f64,
    /// The last time the log saw: its end, when waiting tickets are censored.
    pub end_s: f64,
    /// The `ping_ms_*` columns' data centres, in order.
    pub data_centres: Vec<String>,
    /// "line" for a text file, "row" for Parquet.
    pub unit: &'static str,
}

/// A refused log: where, which field, and what was wrong.
#[derive(Clone, Debug, PartialEq)]
pub struct LogError {
    pub unit: &'static str,
    pub line: Option<usize>,
    pub field: Option<String>,
    pub message: String,
}

impl std::fmt::Display for LogError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.line, &self.field) {
            (Some(l), Some(c)) => write!(f, "{} {l}, field `{c}`: ", self.unit)?,
            (Some(l), None) => write!(f, "{} {l}: ", self.unit)?,
            (None, Some(c)) => write!(f, "field `{c}`: ")?,
            (None, None) => {}
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for LogError {}

fn bad(unit: &'static str, line: usize, field: &str, message: impl Into<String>) -> LogError {
    LogError {
        unit,
        line: Some(line),
        field: Some(field.into()),
        message: message.into(),
    }
}

/// Parses a CSV ticket log.
pub fn parse_csv(text: &str) -> Result<TicketLog, LogError> {
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim_end_matches('\r')));
    let Some((_, head)) = lines.next() else {
        return Err(LogError {
            unit: "line",
            line: Some(1),
            field: None,
            message: "the log is empty: it needs a header line naming its columns".into(),
        });
    };
    let header = mmsim_scenario::trace::fields(head).ok_or_else(|| LogError {
        unit: "line",
        line: Some(1),
        field: None,
        message: "unbalanced quotes in the header".into(),
    })?;
    let rows = lines.filter(|(_, l)| !l.trim().is_empty()).map(|(n, l)| {
        mmsim_scenario::trace::fields(l)
            .map(|f| (n, f))
            .ok_or(LogError {
                unit: "line",
                line: Some(n),
                field: None,
                message: "unbalanced quotes".into(),
            })
    });
    parse_rows(header, "line", rows)
}

/// Parses a log's rows (each with its line or row number).
pub fn parse_rows(
    header: Vec<String>,
    unit: &'static str,
    rows: impl Iterator<Item = Result<(usize, Vec<String>), LogError>>,
) -> Result<TicketLog, LogError> {
    let header_line = if unit == "line" { Some(1) } else { None };
    let head_err = |c: &str, m: String| LogError {
        unit,
        line: header_line,
        field: Some(c.into()),
        message: m,
    };
    let mut col: BTreeMap<String, usize> = BTreeMap::new();
    let mut pings: Vec<(String, usize)> = Vec::new();
    for (i, name) in header.iter().enumerate() {
        let name = name.trim();
        if col.contains_key(name)
            || pings
                .iter()
                .any(|(d, _)| format!("{PING_PREFIX}{d}") == name)
        {
            return Err(head_err(name, "named twice".into()));
        }
        if let Some(dc) = name.strip_prefix(PING_PREFIX) {
            if dc.is_empty() {
                return Err(head_err(
                    name,
                    "names no data centre after `ping_ms_`".into(),
                ));
            }
            pings.push((dc.to_owned(), i));
        } else if REQUIRED.contains(&name) || OPTIONAL.contains(&name) {
            col.insert(name.to_owned(), i);
        } else {
            return Err(head_err(
                name,
                format!(
                    "unknown column; a ticket log has {}, and may have {} and `ping_ms_<data centre>`",
                    REQUIRED.join(", "),
                    OPTIONAL.join(", ")
                ),
            ));
        }
    }
    for r in REQUIRED {
        if !col.contains_key(r) {
            return Err(head_err(
                r,
                format!("is missing; required columns: {}", REQUIRED.join(", ")),
            ));
        }
    }
    let mut tickets: Vec<LogTicket> = Vec::new();
    let mut by_id: BTreeMap<String, usize> = BTreeMap::new();
    let mut end_s = 0.0f64;
    let mut count = 0usize;
    for row in rows {
        let (line, f) = row?;
        count += 1;
        if count > MAX_ROWS {
            return Err(LogError {
                unit,
                line: Some(line),
                field: None,
                message: format!("a ticket log may have at most {MAX_ROWS} rows"),
            });
        }
        if f.len() != header.len() {
            return Err(LogError {
                unit,
                line: Some(line),
                field: None,
                message: format!(
                    "has {} fields but the header names {} columns",
                    f.len(),
                    header.len()
                ),
            });
        }
        let get = |c: &str| col.get(c).map(|&i| f[i].trim()).unwrap_or("");
        let number = |c: &str, v: &str| -> Result<Option<f64>, LogError> {
            if v.is_empty() {
                return Ok(None);
            }
            match v.parse::<f64>() {
                Ok(x) if x.is_finite() && x >= 0.0 => Ok(Some(x)),
                _ => Err(bad(
                    unit,
                    line,
                    c,
                    format!("expected a finite number of seconds, 0 or more, got {v:?}"),
                )),
            }
        };
        let enqueue_s = number("enqueue_s", get("enqueue_s"))?
            .ok_or_else(|| bad(unit, line, "enqueue_s", "is empty; every row needs it"))?;
        let ticket = get("ticket").to_owned();
        if ticket.is_empty() {
            return Err(bad(
                unit,
                line,
                "ticket",
                "is empty; rows of one ticket share a ticket id",
            ));
        }
        let player = get("player").to_owned();
        if player.is_empty() {
            return Err(bad(unit, line, "player", "is empty"));
        }
        let reason = Reason::parse(get("reason")).ok_or_else(|| {
            bad(
                unit,
                line,
                "reason",
                format!(
                    "expected matched, abandoned, waiting or timed_out, got {:?}",
                    get("reason")
                ),
            )
        })?;
        let leave = number("leave_s", get("leave_s"))?;
        let leave_s = match (leave, reason) {
            (Some(x), _) if x < enqueue_s => {
                return Err(bad(
                    unit,
                    line,
                    "leave_s",
                    format!("{x} is before the ticket's enqueue_s {enqueue_s}"),
                ))
            }
            (Some(x), _) => x,
            (None, Reason::Waiting) => f64::NAN,
            (None, r) => {
                return Err(bad(
                    unit,
                    line,
                    "leave_s",
                    format!(
                        "is empty for a ticket that {}: only a waiting ticket may leave it empty",
                        r.label()
                    ),
                ))
            }
        };
        let rating = match get("rating") {
            "" => None,
            v => match v.parse::<f64>() {
                Ok(x) if x.is_finite() => Some(x),
                _ => {
                    return Err(bad(
                        unit,
                        line,
                        "rating",
                        format!("expected a finite number, got {v:?}"),
                    ))
                }
            },
        };
        let requeue = match get("requeue") {
            "" => None,
            "true" | "1" => Some(true),
            "false" | "0" => Some(false),
            v => {
                return Err(bad(
                    unit,
                    line,
                    "requeue",
                    format!("expected true, false, 1, 0 or empty, got {v:?}"),
                ))
            }
        };
        let match_end_s = number("match_end_s", get("match_end_s"))?;
        let mut pings_ms = Vec::new();
        if pings.iter().any(|(_, i)| !f[*i].trim().is_empty()) {
            for (dc, i) in &pings {
                let name = format!("{PING_PREFIX}{dc}");
                match f[*i].trim().parse::<f64>() {
                    Ok(x) if x.is_finite() && (0.0..=60_000.0).contains(&x) => pings_ms.push(x),
                    _ => {
                        return Err(bad(
                            unit,
                            line,
                            &name,
                            format!("a ping in milliseconds from 0 to 60000 (every data centre's or none), got {:?}", f[*i].trim()),
                        ))
                    }
                }
            }
        }
        let roles: Vec<String> = match get("roles") {
            "" => Vec::new(),
            v => v.split('|').map(|r| r.trim().to_owned()).collect(),
        };
        if roles.iter().any(String::is_empty) {
            return Err(bad(
                unit,
                line,
                "roles",
                "an empty role name; write roles as `tank|healer`, main first",
            ));
        }
        let p = LogPlayer {
            id: player,
            rating,
            region: Some(get("region").to_owned()).filter(|r| !r.is_empty()),
            pings_ms,
            roles,
        };
        let match_id = Some(get("match").to_owned()).filter(|m| !m.is_empty());
        if let Some(&k) = by_id.get(&ticket) {
            let t = &mut tickets[k];
            let same_leave = (t.leave_s.is_nan() && leave_s.is_nan()) || t.leave_s == leave_s;
            let differs = if t.enqueue_s != enqueue_s {
                Some("enqueue_s")
            } else if !same_leave {
                Some("leave_s")
            } else if t.reason != reason {
                Some("reason")
            } else if t.match_id != match_id {
                Some("match")
            } else {
                None
            };
            if let Some(field) = differs {
                return Err(bad(
                    unit,
                    line,
                    field,
                    format!(
                        "differs from ticket {ticket}'s first row ({} {}): every row of a ticket gives the same {field}",
                        unit, t.line
                    ),
                ));
            }
            if t.players.iter().any(|q| q.id == p.id) {
                return Err(bad(
                    unit,
                    line,
                    "player",
                    format!("{:?} is already in ticket {ticket}", p.id),
                ));
            }
            t.players.push(p);
            continue;
        }
        by_id.insert(ticket.clone(), tickets.len());
        end_s = end_s
            .max(enqueue_s)
            .max(if leave_s.is_nan() { 0.0 } else { leave_s });
        tickets.push(LogTicket {
            ticket,
            line,
            enqueue_s,
            leave_s,
            reason,
            players: vec![p],
            requeue,
            match_id,
            match_end_s,
        });
    }
    if tickets.is_empty() {
        return Err(LogError {
            unit,
            line: None,
            field: None,
            message: "the log has no tickets".into(),
        });
    }
    check_span(&tickets, unit)?;
    Ok(finish(
        tickets,
        end_s,
        pings.into_iter().map(|(d, _)| d).collect(),
        unit,
    ))
}

/// Sorts by enqueue time (ties by ticket id, numerically when both are
/// numbers), closes waiting tickets at the log's end, and moves every time
/// back by whole days so that the first ticket falls in the first day (a
/// log in Unix seconds keeps its hours of the day, in UTC).
pub fn finish(
    mut tickets: Vec<LogTicket>,
    end_s: f64,
    data_centres: Vec<String>,
    unit: &'static str,
) -> TicketLog {
    let first = tickets
        .iter()
        .map(|t| t.enqueue_s)
        .fold(f64::INFINITY, f64::min);
    let day0 = if first.is_finite() {
        (first / 86_400.0).floor() * 86_400.0
    } else {
        0.0
    };
    for t in &mut tickets {
        if t.leave_s.is_nan() {
            t.leave_s = end_s;
        }
        t.enqueue_s -= day0;
        t.leave_s -= day0;
        if let Some(e) = &mut t.match_end_s {
            *e -= day0;
        }
    }
    let end_s = end_s - day0;
    let start_s = if first.is_finite() {
        ((first - day0) / 3600.0).floor() * 3600.0
    } else {
        0.0
    };
    tickets.sort_by(|a, b| {
        a.enqueue_s.total_cmp(&b.enqueue_s).then_with(|| {
            match (a.ticket.parse::<u64>(), b.ticket.parse::<u64>()) {
                (Ok(x), Ok(y)) => x.cmp(&y),
                _ => a.ticket.cmp(&b.ticket),
            }
        })
    });
    TicketLog {
        tickets,
        start_s,
        end_s,
        data_centres,
        unit,
    }
}

/// Milliseconds as seconds with exactly three decimals, as traces write them.
pub fn ms_text(s: f64) -> String {
    let ms = (s * 1000.0).round() as u64;
    format!("{}.{:03}", ms / 1000, ms % 1000)
}

fn quoted(v: &str) -> String {
    if v.contains([',', '"']) || v.trim() != v {
        format!("\"{}\"", v.replace('"', "\"\""))
    } else {
        v.to_owned()
    }
}

impl TicketLog {
    /// The log as CSV, the columns it has data for.
    pub fn csv(&self) -> String {
        use std::fmt::Write as _;
        let any = |f: &dyn Fn(&LogTicket) -> bool| self.tickets.iter().any(f);
        let has_rating = any(&|t| t.players.iter().any(|p| p.rating.is_some()));
        let has_requeue = any(&|t| t.requeue.is_some());
        let has_match = any(&|t| t.match_id.is_some());
        let has_end = any(&|t| t.match_end_s.is_some());
        let has_region = any(&|t| t.players.iter().any(|p| p.region.is_some()));
        let has_roles = any(&|t| t.players.iter().any(|p| !p.roles.is_empty()));
        let mut head = vec!["enqueue_s", "ticket", "player"];
        if has_rating {
            head.push("rating");
        }
        head.extend(["leave_s", "reason"]);
        if has_requeue {
            head.push("requeue");
        }
        if has_match {
            head.push("match");
        }
        if has_end {
            head.push("match_end_s");
        }
        if has_region {
            head.push("region");
        }
        let mut out = head.join(",");
        for d in &self.data_centres {
            write!(out, ",{PING_PREFIX}{}", quoted(d)).expect("to a String");
        }
        if has_roles {
            out.push_str(",roles");
        }
        out.push('\n');
        for t in &self.tickets {
            for p in &t.players {
                write!(
                    out,
                    "{},{},{}",
                    ms_text(t.enqueue_s),
                    quoted(&t.ticket),
                    quoted(&p.id)
                )
                .expect("to a String");
                if has_rating {
                    out.push(',');
                    if let Some(r) = p.rating {
                        write!(out, "{r}").expect("to a String");
                    }
                }
                write!(out, ",{},{}", ms_text(t.leave_s), t.reason.label()).expect("to a String");
                if has_requeue {
                    write!(
                        out,
                        ",{}",
                        t.requeue.map_or(String::new(), |r| r.to_string())
                    )
                    .expect("to a String");
                }
                if has_match {
                    write!(
                        out,
                        ",{}",
                        t.match_id.as_deref().map_or(String::new(), quoted)
                    )
                    .expect("to a String");
                }
                if has_end {
                    write!(out, ",{}", t.match_end_s.map_or(String::new(), ms_text))
                        .expect("to a String");
                }
                if has_region {
                    write!(
                        out,
                        ",{}",
                        p.region.as_deref().map_or(String::new(), quoted)
                    )
                    .expect("to a String");
                }
                for k in 0..self.data_centres.len() {
                    out.push(',');
                    if let Some(x) = p.pings_ms.get(k) {
                        write!(out, "{x}").expect("to a String");
                    }
                }
                if has_roles {
                    write!(out, ",{}", quoted(&p.roles.join("|"))).expect("to a String");
                }
                out.push('\n');
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "enqueue_s,ticket,player,rating,leave_s,reason,requeue\n\
        0.5,1,a,1500,10.0,matched,false\n\
        0.5,1,b,1600,10.0,matched,false\n\
        2.0,2,c,1400,50.0,abandoned,false\n\
        70.0,3,a,1510,,waiting,true\n";

    #[test]
    fn a_log_reads_into_tickets_with_their_parties_and_reads_back_the_same() {
        let log = parse_csv(LOG).unwrap();
        assert_eq!(log.tickets.len(), 3);
        assert_eq!(log.tickets[0].players.len(), 2);
        assert_eq!(log.end_s, 70.0);
        // A waiting ticket with no leave time is censored at the log's end.
        assert_eq!(log.tickets[2].leave_s, 70.0);
        assert_eq!(log.tickets[2].requeue, Some(true));
        let again = parse_csv(&log.csv()).unwrap();
        assert_eq!(again, log);
    }

    #[test]
    fn unix_seconds_keep_their_hour_of_the_day_and_start_at_their_first_hour() {
        // 2026-11-02 08:20:00 UTC is 1_793_607_600 s.
        let log = parse_csv(
            "enqueue_s,ticket,player,leave_s,reason\n1793607600,1,a,1793607660,abandoned\n",
        )
        .unwrap();
        let t = &log.tickets[0];
        assert_eq!(
            (t.enqueue_s, t.leave_s),
            (8.0 * 3600.0 + 1200.0, 8.0 * 3600.0 + 1260.0)
        );
        assert_eq!(
            (log.start_s, log.end_s),
            (8.0 * 3600.0, 8.0 * 3600.0 + 1260.0)
        );
    }

    #[test]
    fn a_bad_row_is_refused_by_its_line_and_field() {
        let bad_reason = LOG.replace("abandoned", "gave-up");
        let e = parse_csv(&bad_reason).unwrap_err();
        assert_eq!((e.line, e.field.as_deref()), (Some(4), Some("reason")));
        assert!(e.to_string().starts_with("line 4, field `reason`"), "{e}");
        let e = parse_csv(&LOG.replace("2.0,2,c,1400,50.0", "2.0,2,c,1400,1.0")).unwrap_err();
        assert_eq!((e.line, e.field.as_deref()), (Some(4), Some("leave_s")));
        let e = parse_csv(&LOG.replace("0.5,1,b,1600,10.0", "0.5,1,b,1600,11.0")).unwrap_err();
        assert_eq!((e.line, e.field.as_deref()), (Some(3), Some("leave_s")));
        let e = parse_csv(&LOG.replace("0.5,1,b,1600", "x,1,b,1600")).unwrap_err();
        assert_eq!((e.line, e.field.as_deref()), (Some(3), Some("enqueue_s")));
        let e = parse_csv(&LOG.replace("70.0,3,a", "7e9,3,a")).unwrap_err();
        assert_eq!((e.line, e.field.as_deref()), (Some(5), Some("enqueue_s")));
        let e = parse_csv(&LOG.replace("requeue", "colour")).unwrap_err();
        assert_eq!((e.line, e.field.as_deref()), (Some(1), Some("colour")));
        let e = parse_csv(&LOG.replace(",matched,false\n0.5", ",matched\n0.5")).unwrap_err();
        assert_eq!((e.line, e.field), (Some(2), None));
    }
}
