//! The summary computed the obvious way, from every record of a run held in
//! memory: the oracle the streaming `Collector` is tested against.

use super::stats::{describe, mean, mean_p50_p90, percentile};
use super::{RunRecords, TicketEnd};
use crate::model::Player;
use serde_json::{json, Map, Value};

/// Builds the summary. Tickets and matches that began during warm-up are
/// left out; waits are over matched tickets (the time a player waited to
/// play), `queue_time_s` over every ticket including those who gave up.
pub fn summarize_records(
    meta: &super::RunMeta<'_>,
    records: &RunRecords,
    players: &[Player],
    final_corr: Option<f64>,
) -> Value {
    let tickets: Vec<_> = records.tickets.iter().filter(|t| !t.in_warmup).collect();
    let matches: Vec<_> = records.matches.iter().filter(|m| !m.in_warmup).collect();
    let abandoned = tickets
        .iter()
        .filter(|t| t.end == TicketEnd::Abandoned)
        .count();
    let waiting = tickets
        .iter()
        .filter(|t| t.end == TicketEnd::Waiting)
        .count();
    let matched: Vec<_> = tickets
        .iter()
        .filter(|t| matches!(t.end, TicketEnd::Matched(_)))
        .collect();
    let mut waits: Vec<f64> = matched.iter().map(|t| t.wait_s()).collect();
    let mut queue_times: Vec<f64> = tickets.iter().map(|t| t.wait_s()).collect();
    let measured_h = (meta.duration_s - meta.warmup_s) / 3600.0;

    // Deciles of true skill over the whole population, so decile 10 is the
    // top tenth of players whoever happened to queue.
    let mut skills: Vec<f64> = players.iter().map(|p| p.true_skill).collect();
    skills.sort_by(f64::total_cmp);
    let cuts: Vec<f64> = (1..10)
        .map(|d| percentile(&skills, d as f64 / 10.0).unwrap_or(0.0))
        .collect();
    let mut by_decile: Vec<Vec<f64>> = vec![Vec::new(); 10];
    let mut decile_tickets = [0usize; 10];
    let mut decile_abandoned = [0usize; 10];
    for t in &tickets {
        let d = cuts.partition_point(|&c| c < t.true_skill);
        decile_tickets[d] += 1;
        match t.end {
            TicketEnd::Matched(_) => by_decile[d].push(t.wait_s()),
            TicketEnd::Abandoned => decile_abandoned[d] += 1,
            TicketEnd::Waiting | TicketEnd::Declined => {}
        }
    }
    let deciles: Vec<Value> = by_decile
        .iter_mut()
        .enumerate()
        .map(|(d, w)| {
            let mut v = describe(w);
            let obj = v.as_object_mut().expect("describe returns an object");
            obj.insert("decile".into(), json!(d + 1));
            obj.insert(
                "skill_from".into(),
                json!(if d == 0 {
                    skills.first().copied()
                } else {
                    Some(cuts[d - 1])
                }),
            );
            obj.insert(
                "skill_to".into(),
                json!(if d == 9 {
                    skills.last().copied()
                } else {
                    Some(cuts[d])
                }),
            );
            obj.insert("tickets".into(), json!(decile_tickets[d]));
            obj.insert(
                "abandon_rate".into(),
                json!(ratio(decile_abandoned[d], decile_tickets[d])),
            );
            v
        })
        .collect();

    let mut spread: Vec<f64> = matches.iter().map(|m| m.spread_rating).collect();
    let mut spread_skill: Vec<f64> = matches.iter().map(|m| m.spread_skill).collect();
    let mut gap: Vec<f64> = matches.iter().filter_map(|m| m.win_prob_gap()).collect();
    gap.sort_by(f64::total_cmp);
    let finished: Vec<_> = matches.iter().filter(|m| m.winner.is_some()).collect();
    let upsets: Vec<bool> = finished.iter().filter_map(|m| m.upset()).collect();
    let brier: Vec<f64> = finished
        .iter()
        .map(|m| {
            let won0 = if m.winner == Some(0) { 1.0 } else { 0.0 };
            (m.p_team0_predicted - won0).powi(2)
        })
        .collect();
    let rematches = matches.iter().filter(|m| m.rematch).count();

    let mut out = Map::new();
    out.insert("scenario".into(), json!(meta.scenario));
    out.insert("seed".into(), json!(meta.seed));
    out.insert("policy".into(), json!(meta.policy));
    out.insert("rating_system".into(), json!(meta.rating_system));
    out.insert("duration_s".into(), json!(meta.duration_s));
    out.insert("warmup_s".into(), json!(meta.warmup_s));
    out.insert("tickets".into(), json!(tickets.len()));
    out.insert("matches".into(), json!(matches.len()));
    out.insert(
        "matches_per_hour".into(),
        json!(matches.len() as f64 / measured_h),
    );
    out.insert("abandoned".into(), json!(abandoned));
    out.insert(
        "abandon_rate".into(),
        json!(ratio(abandoned, tickets.len())),
    );
    out.insert("still_waiting".into(), json!(waiting));
    out.insert("arrivals_blocked".into(), json!(meta.arrivals_blocked));
    let online: Vec<&super::QueueSample> = records
        .queue
        .iter()
        .filter(|q| q.t.as_secs_f64() >= meta.warmup_s)
        .collect();
    let all: Vec<f64> = online
        .iter()
        .map(|q| f64::from(q.waiting_players) + f64::from(q.players_in_matches))
        .collect();
    let waiting: Vec<f64> = online
        .iter()
        .map(|q| f64::from(q.waiting_players))
        .collect();
    let playing: Vec<f64> = online
        .iter()
        .map(|q| f64::from(q.players_in_matches))
        .collect();
    out.insert(
        "concurrent_players".into(),
        json!({
            "samples": online.len(),
            "mean": mean(&all),
            "max": max_u32(&all),
            "waiting_mean": mean(&waiting),
            "playing_mean": mean(&playing),
        }),
    );
    out.insert("wait_s".into(), describe(&mut waits));
    out.insert("queue_time_s".into(), describe(&mut queue_times));
    out.insert("wait_s_by_skill_decile".into(), Value::Array(deciles));
    out.insert("spread_rating".into(), mean_p50_p90(&mut spread));
    out.insert("spread_skill".into(), mean_p50_p90(&mut spread_skill));
    out.insert(
        "win_prob_gap".into(),
        json!({"mean": mean(&gap), "p90": percentile(&gap, 0.9)}),
    );
    out.insert(
        "upset_rate".into(),
        json!(ratio(upsets.iter().filter(|&&u| u).count(), upsets.len())),
    );
    out.insert(
        "rematch_rate".into(),
        json!(ratio(rematches, matches.len())),
    );
    out.insert("brier_score".into(), json!(mean(&brier)));
    if records.matches.iter().any(|m| m.team_size > 1) {
        team_metrics(&matches, &mut out);
    }
    out.insert("rating_skill_rank_corr".into(), json!(final_corr));
    out.insert(
        "games_to_within_one_deviation".into(),
        games_to_within_deviation(players),
    );
    let moves: Vec<Value> = records
        .rating_moves
        .iter()
        .enumerate()
        .filter(|(_, m)| m.updates > 0)
        .map(|(k, m)| json!({"game": k + 1, "mean_abs_change_rating": m.sum_abs_change / m.updates as f64, "updates": m.updates}))
        .collect();
    out.insert("rating_change_by_game".into(), Value::Array(moves));
    let survivors: Vec<u32> = finished.iter().filter_map(|m| m.survivors).collect();
    if !survivors.is_empty() {
        out.insert("survivors_hist".into(), survivors_hist(&survivors));
        let ten_plus = survivors.iter().filter(|&&s| s >= 10).count();
        out.insert(
            "survivors_10_plus_share".into(),
            json!(ratio(ten_plus, survivors.len())),
        );
    }
    let mut gold: Vec<f64> = finished.iter().filter_map(|m| m.gold_integral).collect();
    if !gold.is_empty() {
        gold.sort_by(f64::total_cmp);
        out.insert(
            "gold_integral".into(),
            json!({
                "unit": "gold-minutes",
                "n": gold.len(),
                "mean": mean(&gold),
                "p10": percentile(&gold, 0.1),
                "p50": percentile(&gold, 0.5),
                "p90": percentile(&gold, 0.9),
                "p99": percentile(&gold, 0.99),
            }),
        );
    }
    let series: Vec<Value> = records
        .queue
        .iter()
        .filter_map(|q| {
            q.rating_skill_rank_corr
                .map(|c| json!({"t_s": q.t.as_secs_f64(), "corr": c}))
        })
        .collect();
    out.insert("rating_skill_rank_corr_series".into(), Value::Array(series));
    out.insert(
        "by_hour".into(),
        by_hour(meta, &tickets, &matches, &records.queue),
    );
    let finished_two: Vec<_> = finished.iter().filter(|m| m.teams == 2).collect();
    out.insert(
        "upset_by_gap".into(),
        json!({
            "skill": gap_bins(finished_two.iter().filter_map(|m| m.skill_upset())),
            "rating": gap_bins(finished_two.iter().filter_map(|m| m.rating_upset())),
        }),
    );
    Value::Object(out)
}

/// The largest of counts held as f64, as the u32 the summary writes.
fn max_u32(v: &[f64]) -> Option<u32> {
    v.iter().copied().reduce(f64::max).map(|x| x as u32)
}

/// Each hour of the day's tickets and queue samples, from the kept records.
fn by_hour(
    meta: &super::RunMeta<'_>,
    tickets: &[&super::TicketRecord],
    matches: &[&super::MatchRecord],
    queue: &[super::QueueSample],
) -> Value {
    let hour = |s: f64| ((s / 3600.0).floor() as u64 % 24) as u32;
    let rows: Vec<Value> = (0..24u32)
        .filter_map(|h| {
            let mine: Vec<_> = tickets
                .iter()
                .filter(|t| hour(t.enqueued.as_secs_f64()) == h)
                .collect();
            let (waits, abandoned) = waits_and_abandons(&mine);
            let in_hour: Vec<&super::QueueSample> = queue
                .iter()
                .filter(|s| s.t.as_secs_f64() >= meta.warmup_s && hour(s.t.as_secs_f64()) == h)
                .collect();
            let q: Vec<f64> = in_hour
                .iter()
                .map(|s| f64::from(s.waiting_tickets))
                .collect();
            let online: Vec<f64> = in_hour
                .iter()
                .map(|s| f64::from(s.waiting_players) + f64::from(s.players_in_matches))
                .collect();
            let formed: Vec<_> = matches
                .iter()
                .filter(|m| hour(m.formed.as_secs_f64()) == h)
                .collect();
            let rating_gaps: Vec<f64> = formed
                .iter()
                .map(|m| (m.p_team0_predicted - 0.5).abs())
                .collect();
            let true_gaps: Vec<f64> = formed.iter().filter_map(|m| m.win_prob_gap()).collect();
            let brier: Vec<f64> = formed
                .iter()
                .filter_map(|m| {
                    let won0 = if m.winner? == 0 { 1.0 } else { 0.0 };
                    Some((m.p_team0_predicted - won0).powi(2))
                })
                .collect();
            (!mine.is_empty() || !q.is_empty()).then(|| {
                json!({
                    "hour": h,
                    "tickets": mine.len(),
                    "matched": waits.len(),
                    "wait_p50_s": percentile(&waits, 0.5),
                    "wait_p90_s": percentile(&waits, 0.9),
                    "wait_p99_s": percentile(&waits, 0.99),
                    "abandon_rate": ratio(abandoned, mine.len()),
                    "queue_samples": q.len(),
                    "queue_mean_tickets": mean(&q),
                    "queue_max_tickets": max_u32(&q),
                    "concurrent_mean_players": mean(&online),
                    "concurrent_max_players": max_u32(&online),
                    "matches": formed.len(),
                    "rating_win_prob_gap": mean(&rating_gaps),
                    "true_win_prob_gap": mean(&true_gaps),
                    "brier_score": mean(&brier),
                    "rating_skill_rank_corr": mean(&in_hour.iter().filter_map(|s| s.rating_skill_rank_corr).collect::<Vec<_>>()),
                })
            })
        })
        .collect();
    Value::Array(rows)
}

/// Upsets binned by gap with the edges of `summary::GAP_EDGES`, non-empty bins only.
fn gap_bins(upsets: impl Iterator<Item = (f64, bool, f64)>) -> Value {
    let edges = super::summary::GAP_EDGES;
    let all: Vec<(f64, bool, f64)> = upsets.collect();
    let rows: Vec<Value> = (0..edges.len())
        .filter_map(|i| {
            let hi = edges.get(i + 1).copied().unwrap_or(f64::INFINITY);
            let inside: Vec<_> = all
                .iter()
                .filter(|(g, _, _)| *g >= edges[i] && *g < hi)
                .collect();
            let model: Vec<f64> = inside.iter().map(|x| x.2).collect();
            (!inside.is_empty()).then(|| {
                json!({
                    "gap_from": edges[i],
                    "gap_to": edges.get(i + 1),
                    "matches": inside.len(),
                    "upset_rate": ratio(inside.iter().filter(|x| x.1).count(), inside.len()),
                    "model_upset_rate": mean(&model),
                })
            })
        })
        .collect();
    Value::Array(rows)
}

/// Win-rate gaps at or below an edge count as inside it: team win rates are
/// means of quantised rates, so a gap meant to be exactly 1.0 may come out
/// a rounding error above it.
const EDGE_TOLERANCE_PP: f64 = 1e-9;

/// Team-format metrics (team_size > 1). Units: `team_rating_gap` in rating
/// points (highest minus lowest team mean rating), `top_player_gap_skill` in
/// true-skill points (highest minus lowest of the teams' best players),
/// `party_count_gap` in parties. `win_rate_gap_pp` is the Armored Warfare
/// table over the gap between the teams' mean shown win rates, in percentage
/// points: `within_1` = gap <= 1, `within_2` = 1 < gap <= 2, `3_or_more` =
/// gap > 2 (the post's "+/- 3 or more" bucket takes everything above 2).
fn team_metrics(matches: &[&super::MatchRecord], out: &mut Map<String, Value>) {
    let sorted = |f: &dyn Fn(&super::MatchRecord) -> f64| {
        let mut v: Vec<f64> = matches.iter().map(|m| f(m)).collect();
        v.sort_by(f64::total_cmp);
        v
    };
    let mut gap = sorted(&|m| m.team_rating_gap());
    out.insert("team_rating_gap".into(), mean_p50_p90(&mut gap));
    let mut top = sorted(&|m| super::records::range(&m.team_top_skill));
    out.insert("top_player_gap_skill".into(), mean_p50_p90(&mut top));
    let parties = sorted(&|m| {
        let most = m.team_parties.iter().max().copied().unwrap_or(0);
        let fewest = m.team_parties.iter().min().copied().unwrap_or(0);
        f64::from(most - fewest)
    });
    out.insert(
        "party_count_gap".into(),
        json!({
            "mean": mean(&parties),
            "equal_share": ratio(parties.iter().filter(|g| **g == 0.0).count(), parties.len()),
        }),
    );
    let wr = sorted(&|m| super::records::range(&m.team_win_rate_pct));
    let within = |hi: f64| wr.iter().filter(|g| **g <= hi + EDGE_TOLERANCE_PP).count();
    let (w1, w2) = (within(1.0), within(2.0));
    out.insert(
        "win_rate_gap_pp".into(),
        json!({
            "n": wr.len(),
            "within_1": ratio(w1, wr.len()),
            "within_2": ratio(w2 - w1, wr.len()),
            "3_or_more": ratio(wr.len() - w2, wr.len()),
            "mean": mean(&wr),
        }),
    );
}

/// The role queue's section (`summary.json`'s `roles`) from the tickets'
/// role columns: per main role, its players (each member of a party), the
/// waits of those matched, the share who gave up, the share of those given
/// a role by their match's split who played their main role, and how many
/// played each role; overall, the shares who got their main role and a role
/// they accept. Backfill joiners count in the role of the slot they took.
pub fn roles_section(tickets: &[&super::TicketRecord], names: &[String]) -> Value {
    struct Per {
        players: usize,
        abandoned: usize,
        assigned: usize,
        got_main: usize,
        played: usize,
        waits: Vec<f64>,
    }
    let mut per: Vec<Per> = names
        .iter()
        .map(|_| Per {
            players: 0,
            abandoned: 0,
            assigned: 0,
            got_main: 0,
            played: 0,
            waits: Vec::new(),
        })
        .collect();
    let (mut matched, mut assigned, mut first, mut preferred) = (0usize, 0usize, 0usize, 0usize);
    for t in tickets {
        let Some(r) = &t.roles else { continue };
        for (i, &main) in r.main.iter().enumerate() {
            let main = main as usize;
            per[main].players += 1;
            match t.end {
                TicketEnd::Matched(_) => {
                    matched += 1;
                    per[main].waits.push(t.wait_s());
                    if let Some(&role) = r.assigned.get(i) {
                        assigned += 1;
                        per[main].assigned += 1;
                        per[role as usize].played += 1;
                        first += usize::from(role as usize == main);
                        per[main].got_main += usize::from(role as usize == main);
                        preferred += usize::from(r.accepted[i] & (1 << role) != 0);
                    }
                }
                TicketEnd::Abandoned => per[main].abandoned += 1,
                TicketEnd::Waiting | TicketEnd::Declined => {}
            }
        }
    }
    let by_main_role: Vec<Value> = names
        .iter()
        .zip(per.iter_mut())
        .map(|(name, p)| {
            json!({
                "role": name,
                "players": p.players,
                "wait_s": describe(&mut p.waits),
                "abandon_rate": ratio(p.abandoned, p.players),
                "first_choice_share": ratio(p.got_main, p.assigned),
                "played": p.played,
            })
        })
        .collect();
    json!({
        "by_main_role": by_main_role,
        "matched_players": matched,
        "first_choice_share": ratio(first, assigned),
        "preferred_share": ratio(preferred, assigned),
    })
}

/// The regional layer's matches by data centre and tickets by home region
/// (`summary.json`'s `regions.by_data_centre` and `.by_home_region`), from
/// the records' `host_dc` and `region` columns. The players' host pings are
/// not in the records (a ticket keeps its worst member's), so
/// `host_ping_ms` has no oracle here.
pub fn regions_section(
    tickets: &[&super::TicketRecord],
    matches: &[&super::MatchRecord],
    data_centres: &[String],
    homes: &[String],
) -> Value {
    let mut hosted = vec![0usize; data_centres.len()];
    for m in matches {
        if let Some(dc) = m.host_dc {
            hosted[usize::from(dc)] += 1;
        }
    }
    let total: usize = hosted.iter().sum();
    let by_data_centre: Vec<Value> = data_centres
        .iter()
        .zip(&hosted)
        .map(|(name, &n)| json!({"data_centre": name, "matches": n, "share": ratio(n, total)}))
        .collect();
    let by_home_region: Vec<Value> = homes
        .iter()
        .enumerate()
        .map(|(h, name)| {
            let mine: Vec<_> = tickets
                .iter()
                .filter(|t| t.region.map(usize::from) == Some(h))
                .collect();
            let (waits, abandoned) = waits_and_abandons(&mine);
            json!({
                "region": name,
                "tickets": mine.len(),
                "matched": waits.len(),
                "abandon_rate": ratio(abandoned, mine.len()),
                "wait_p50_s": percentile(&waits, 0.5),
                "wait_p90_s": percentile(&waits, 0.9),
            })
        })
        .collect();
    json!({"by_data_centre": by_data_centre, "by_home_region": by_home_region})
}

/// Of a group of tickets: the waits of those matched, sorted, and how many
/// gave up.
fn waits_and_abandons(group: &[&&super::TicketRecord]) -> (Vec<f64>, usize) {
    let mut waits: Vec<f64> = group
        .iter()
        .filter(|t| matches!(t.end, TicketEnd::Matched(_)))
        .map(|t| t.wait_s())
        .collect();
    waits.sort_by(f64::total_cmp);
    let abandoned = group
        .iter()
        .filter(|t| t.end == TicketEnd::Abandoned)
        .count();
    (waits, abandoned)
}

fn ratio(num: usize, den: usize) -> Option<f64> {
    (den > 0).then(|| num as f64 / den as f64)
}

/// Count and share of matches per number of survivors on the winning team,
/// from 1 to the most seen; `mode` is the most frequent count.
fn survivors_hist(survivors: &[u32]) -> Value {
    let max = survivors.iter().copied().max().unwrap_or(0) as usize;
    let mut counts = vec![0usize; max + 1];
    for &s in survivors {
        counts[s as usize] += 1;
    }
    let mode = (0..=max)
        .max_by_key(|&k| (counts[k], std::cmp::Reverse(k)))
        .unwrap_or(0);
    let rows: Vec<Value> = (1..=max.max(1))
        .map(|k| {
            let n = counts.get(k).copied().unwrap_or(0);
            json!({"survivors": k, "matches": n, "share": n as f64 / survivors.len() as f64})
        })
        .collect();
    json!({"mode": mode, "counts": rows})
}

/// Median number of games a player needed before the rating first lay within
/// one deviation of true skill, over players who got there, and the share of
/// players with games who did.
fn games_to_within_deviation(players: &[Player]) -> Value {
    let played = players.iter().filter(|p| p.games > 0).count();
    let mut games: Vec<f64> = players
        .iter()
        .filter_map(|p| p.games_to_within_deviation.map(f64::from))
        .collect();
    games.sort_by(f64::total_cmp);
    json!({
        "median": percentile(&games, 0.5),
        "p90": percentile(&games, 0.9),
        "players": games.len(),
        "share_of_players_who_played": ratio(games.len(), played),
    })
}
