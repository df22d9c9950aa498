//! AWS GameLift FlexMatch's event stream (one EventBridge/SNS event per
//! line, as the service delivers them) turned into the same ticket log
//! mmsim's own format gives: a ticket joins at its `startTime`, leaves at
//! the event that ends it (`MatchmakingSucceeded`: matched;
//! `MatchmakingCancelled`: abandoned; `MatchmakingTimedOut` and
//! `MatchmakingFailed`: the matchmaker gave up, censored). docs/fit.md
//! gives the mapping field by field.

use crate::log::{self, LogError, LogPlayer, LogTicket, Reason, TicketLog};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

fn bad(line: usize, field: &str, message: impl Into<String>) -> LogError {
    LogError {
        unit: "line",
        line: Some(line),
        field: Some(field.into()),
        message: message.into(),
    }
}

/// Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Seconds since the Unix epoch of an ISO 8601 UTC time as FlexMatch
/// writes it (`2017-08-08T21:15:35.676Z`).
pub fn parse_time(text: &str) -> Option<f64> {
    let t = text.trim();
    let t = t.strip_suffix('Z').or_else(|| t.strip_suffix("+00:00"))?;
    let (date, time) = t.split_once('T')?;
    let mut d = date.split('-');
    let (y, mo, da): (i64, i64, i64) = (
        d.next()?.parse().ok()?,
        d.next()?.parse().ok()?,
        d.next()?.parse().ok()?,
    );
    if d.next().is_some() || !(1..=12).contains(&mo) || !(1..=31).contains(&da) {
        return None;
    }
    let mut c = time.split(':');
    let (h, mi): (i64, i64) = (c.next()?.parse().ok()?, c.next()?.parse().ok()?);
    let s: f64 = c.next()?.parse().ok()?;
    if c.next().is_some()
        || !(0..24).contains(&h)
        || !(0..60).contains(&mi)
        || !(0.0..61.0).contains(&s)
    {
        return None;
    }
    Some(days_from_civil(y, mo, da) as f64 * 86_400.0 + (h * 3600 + mi * 60) as f64 + s)
}

/// The attribute names read as a player's rating, first found wins.
pub const RATING_ATTRIBUTES: [&str; 3] = ["skill", "mmr", "rating"];

struct Open {
    line: usize,
    start: f64,
    players: Vec<LogPlayer>,
    pings: Vec<BTreeMap<String, f64>>,
    end: Option<(f64, Reason, Option<String>)>,
}

/// Reads a FlexMatch event stream, one JSON event per line.
pub fn parse(text: &str) -> Result<TicketLog, LogError> {
    let mut open: BTreeMap<String, Open> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    let mut last_s = f64::NEG_INFINITY;
    let mut last_line = 0;
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        if raw.trim().is_empty() {
            continue;
        }
        if line > log::MAX_ROWS {
            return Err(bad(line, "", format!("at most {} events", log::MAX_ROWS)));
        }
        let ev: Value = serde_json::from_str(raw).map_err(|e| LogError {
            unit: "line",
            line: Some(line),
            field: None,
            message: format!("not a JSON event: {e}"),
        })?;
        let time = ev
            .get("time")
            .and_then(Value::as_str)
            .and_then(parse_time)
            .ok_or_else(|| {
                bad(
                    line,
                    "time",
                    "missing or not an ISO 8601 UTC time such as \"2017-08-08T21:15:36.421Z\"",
                )
            })?;
        let detail = ev
            .get("detail")
            .and_then(Value::as_object)
            .ok_or_else(|| bad(line, "detail", "missing or not an object"))?;
        let kind = detail
            .get("type")
            .and_then(Value::as_str)
            .ok_or_else(|| bad(line, "detail.type", "missing or not a string"))?;
        let end = match kind {
            "MatchmakingSearching" | "PotentialMatchCreated" | "AcceptMatch" | "AcceptMatchCompleted" => None,
            "MatchmakingSucceeded" => Some(Reason::Matched),
            "MatchmakingCancelled" => Some(Reason::Abandoned),
            "MatchmakingTimedOut" | "MatchmakingFailed" => Some(Reason::TimedOut),
            other => {
                return Err(bad(
                    line,
                    "detail.type",
                    format!("unknown event type {other:?}; FlexMatch's are MatchmakingSearching, PotentialMatchCreated, AcceptMatch, AcceptMatchCompleted, MatchmakingSucceeded, MatchmakingTimedOut, MatchmakingCancelled and MatchmakingFailed"),
                ))
            }
        };
        let match_id = detail
            .get("matchId")
            .and_then(Value::as_str)
            .map(str::to_owned);
        if end == Some(Reason::Matched) && match_id.is_none() {
            return Err(bad(
                line,
                "detail.matchId",
                "missing: a MatchmakingSucceeded event names its match",
            ));
        }
        let tickets = detail
            .get("tickets")
            .and_then(Value::as_array)
            .ok_or_else(|| bad(line, "detail.tickets", "missing or not an array"))?;
        for (k, t) in tickets.iter().enumerate() {
            let field = |f: &str| format!("detail.tickets[{k}].{f}");
            let id = t
                .get("ticketId")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .ok_or_else(|| bad(line, &field("ticketId"), "missing or empty"))?;
            let start = t
                .get("startTime")
                .and_then(Value::as_str)
                .and_then(parse_time)
                .ok_or_else(|| {
                    bad(
                        line,
                        &field("startTime"),
                        "missing or not an ISO 8601 UTC time",
                    )
                })?;
            let players = t
                .get("players")
                .and_then(Value::as_array)
                .filter(|p| !p.is_empty())
                .ok_or_else(|| bad(line, &field("players"), "missing or empty"))?;
            if time < start {
                return Err(bad(
                    line,
                    "time",
                    format!("is before ticket {id}'s startTime"),
                ));
            }
            let o = match open.get_mut(id) {
                Some(o) => o,
                None => {
                    let mut ps = Vec::new();
                    let mut pings = Vec::new();
                    for (j, p) in players.iter().enumerate() {
                        let pf = |f: &str| field(&format!("players[{j}].{f}"));
                        let pid = p
                            .get("playerId")
                            .and_then(Value::as_str)
                            .filter(|s| !s.is_empty())
                            .ok_or_else(|| bad(line, &pf("playerId"), "missing or empty"))?;
                        let mut rating = None;
                        if let Some(attrs) = p.get("playerAttributes") {
                            let attrs = attrs.as_object().ok_or_else(|| {
                                bad(line, &pf("playerAttributes"), "not an object")
                            })?;
                            if let Some((name, a)) = RATING_ATTRIBUTES
                                .iter()
                                .find_map(|n| attrs.get(*n).map(|a| (n, a)))
                            {
                                rating = Some(
                                    a.get("N")
                                        .and_then(Value::as_f64)
                                        .filter(|x| x.is_finite())
                                        .ok_or_else(|| {
                                            bad(
                                                line,
                                                &pf(&format!("playerAttributes.{name}")),
                                                "a number attribute is written {\"N\": 1500}",
                                            )
                                        })?,
                                );
                            }
                        }
                        let mut lat = BTreeMap::new();
                        if let Some(l) = p.get("latencyInMs") {
                            let l = l.as_object().ok_or_else(|| {
                                bad(line, &pf("latencyInMs"), "not an object of region: ms")
                            })?;
                            for (region, ms) in l {
                                let ms = ms
                                    .as_f64()
                                    .filter(|x| x.is_finite() && *x >= 0.0)
                                    .ok_or_else(|| {
                                        bad(
                                            line,
                                            &pf(&format!("latencyInMs.{region}")),
                                            "a latency in ms, 0 or more",
                                        )
                                    })?;
                                lat.insert(region.clone(), ms);
                            }
                        }
                        ps.push(LogPlayer {
                            id: pid.to_owned(),
                            rating,
                            ..LogPlayer::default()
                        });
                        pings.push(lat);
                    }
                    order.push(id.to_owned());
                    open.entry(id.to_owned()).or_insert(Open {
                        line,
                        start,
                        players: ps,
                        pings,
                        end: None,
                    })
                }
            };
            if let Some(r) = end {
                if o.end.is_none() {
                    o.end = Some((time, r, match_id.clone()));
                }
            }
        }
        if time > last_s {
            (last_s, last_line) = (time, line);
        }
    }
    if open.is_empty() {
        return Err(LogError {
            unit: "line",
            line: None,
            field: None,
            message: "the stream has no tickets".into(),
        });
    }
    let first = open.values().map(|o| o.start).fold(f64::INFINITY, f64::min);
    let midnight = (first / 86_400.0).floor() * 86_400.0;
    let dcs: Vec<String> = open
        .values()
        .flat_map(|o| o.pings.iter().flat_map(|p| p.keys().cloned()))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let end_s = last_s - midnight;
    if end_s > log::MAX_SPAN_S {
        return Err(bad(
            last_line,
            "time",
            "is more than 366 days after the first ticket's day: a log is fitted over a year at most",
        ));
    }
    let tickets = order
        .into_iter()
        .map(|id| {
            let o = open.remove(&id).expect("every ordered ticket is open");
            let (leave, reason, match_id) = o.end.unwrap_or((f64::NAN, Reason::Waiting, None));
            let players = o
                .players
                .into_iter()
                .zip(o.pings)
                .map(|(mut p, lat)| {
                    // Every data centre's ping or none, as the log format asks.
                    if dcs.iter().all(|d| lat.contains_key(d)) {
                        p.pings_ms = dcs.iter().map(|d| lat[d]).collect();
                    }
                    p
                })
                .collect();
            LogTicket {
                ticket: id,
                line: o.line,
                enqueue_s: o.start - midnight,
                leave_s: leave - midnight,
                reason,
                players,
                requeue: None,
                match_id,
                match_end_s: None,
            }
        })
        .collect();
    Ok(log::finish(tickets, end_s, dcs, "line"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_read_as_seconds_since_the_epoch() {
        assert_eq!(parse_time("1970-01-02T00:00:01Z"), Some(86_401.0));
        // 2017-08-08 is day 17386.
        assert_eq!(
            parse_time("2017-08-08T21:15:35.676Z"),
            Some(17_386.0 * 86_400.0 + 76_535.676)
        );
        assert_eq!(parse_time("2017-13-08T21:15:35Z"), None);
        assert_eq!(parse_time("2017-08-08 21:15:35"), None);
    }

    #[test]
    fn a_ticket_joins_at_its_start_and_leaves_at_its_last_event() {
        let s = r#"{"time":"2017-08-08T00:00:05Z","detail":{"type":"MatchmakingSearching","tickets":[{"ticketId":"t1","startTime":"2017-08-08T00:00:04Z","players":[{"playerId":"p1","playerAttributes":{"skill":{"N":1500}}}]}]}}
{"time":"2017-08-08T00:01:00Z","detail":{"type":"MatchmakingCancelled","tickets":[{"ticketId":"t1","startTime":"2017-08-08T00:00:04Z","players":[{"playerId":"p1"}]}]}}
"#;
        let log = parse(s).unwrap();
        let t = &log.tickets[0];
        assert_eq!(
            (t.enqueue_s, t.leave_s, t.reason),
            (4.0, 60.0, Reason::Abandoned)
        );
        assert_eq!(t.players[0].rating, Some(1500.0));
        let e = parse(&s.replace("MatchmakingCancelled", "MatchmakingExploded")).unwrap_err();
        assert_eq!((e.line, e.field.as_deref()), (Some(2), Some("detail.type")));
        let e = parse(&s.replace(
            "\"startTime\":\"2017-08-08T00:00:04Z\",\"players\":[{\"playerId\":\"p1\",",
            "\"players\":[{\"playerId\":\"p1\",",
        ))
        .unwrap_err();
        assert_eq!(
            (e.line, e.field.as_deref()),
            (Some(1), Some("detail.tickets[0].startTime"))
        );
    }
}
