//! Everything `mmsim fit` estimates from a ticket log, as data: arrivals by
//! hour of day, the party mix, patience, returns, ratings, the population's
//! size and the shares of regions and roles. Each quantity the log is too
//! short for is named in `notes` with what it fell back to.

use crate::log::{Reason, TicketLog};
use crate::survival::{self, Comparison, Estimate, KmStep, Obs, Z95};
use serde::Serialize;
use statrs::distribution::{ChiSquared, ContinuousCDF};
use std::collections::{BTreeMap, BTreeSet};

/// Knobs of the fit that the log cannot give.
#[derive(Clone, Debug)]
pub struct Options {
    /// A ticket counts as a return when the same party queues again
    /// within this long after its match formed (used only when the log has
    /// no `requeue` column).
    pub return_window_s: f64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            return_window_s: 7200.0,
        }
    }
}

/// Fewest abandons for the three families to be compared.
pub const MIN_ABANDONS: usize = 10;
/// Fewest seconds of an hour of the day for its own rate.
pub const MIN_HOUR_EXPOSURE_S: f64 = 600.0;

#[derive(Clone, Debug, Serialize)]
pub struct Note {
    pub quantity: String,
    pub message: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct HourRate {
    pub hour: u32,
    pub arrivals: usize,
    pub exposure_s: f64,
    /// Fresh parties per second, with an exact Poisson 95% interval;
    /// `None` when the log spends under 10 minutes in this hour.
    pub rate_per_s: Option<Estimate>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Arrivals {
    pub fresh_tickets: usize,
    pub hours: Vec<HourRate>,
    /// The mean of the hourly rates (the scenario's `rate_per_s`).
    pub rate_per_s: Estimate,
    /// 24 multipliers of `rate_per_s`; `None` when the log is too short.
    pub daily_profile: Option<Vec<f64>>,
}

#[derive(Clone, Debug, Serialize)]
pub struct PartySize {
    pub size: usize,
    pub tickets: usize,
    /// Share of fresh tickets, with Wilson's 95% interval.
    pub share: Estimate,
}

#[derive(Clone, Debug, Serialize)]
pub struct Patience {
    pub tickets: usize,
    pub abandons: usize,
    /// The Kaplan-Meier curve, at most 400 of its steps.
    pub kaplan_meier: Vec<KmStep>,
    pub comparison: Comparison,
}

#[derive(Clone, Debug, Serialize)]
pub struct Returns {
    /// Matched tickets early enough in the log for a return to be seen.
    pub matched_eligible: usize,
    pub returned: usize,
    pub requeue_prob: Option<Estimate>,
    /// Mean pause before queueing again (exponential MLE).
    pub think_s: Option<Estimate>,
    /// What the pause is measured from: "match_end" (the log has match
    /// ends) or "match_formed" (it then includes the match's length).
    pub measured_from: &'static str,
    /// How returns were recognised: "requeue column" or "same party within
    /// the return window".
    pub recognised_by: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct Ratings {
    pub players: usize,
    pub mean: Estimate,
    pub sd: Estimate,
    /// (cumulative probability, rating), strictly increasing in both.
    pub quantiles: Vec<[f64; 2]>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Share {
    pub name: String,
    pub players: usize,
    pub share: Estimate,
}

#[derive(Clone, Debug, Serialize)]
pub struct Population {
    pub distinct_players: usize,
    pub players_drawn: usize,
    /// Players in the game (those the log saw and those it did not):
    /// solves D = N(1 − exp(−A/N)) for uniform draws.
    pub size: usize,
    /// The 95% interval from the draws' sampling alone: the sizes whose
    /// expected distinct count lies within 1.96 sd of the one seen (no
    /// upper end when the log barely repeats). `None` for the fallback.
    pub interval: Option<(f64, Option<f64>)>,
    pub how: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct Format {
    pub teams: u32,
    pub team_size: u32,
    pub from: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct Fit {
    pub tickets: usize,
    /// The hour the log's first ticket came in, in seconds from midnight.
    pub log_start_s: f64,
    pub log_end_s: f64,
    pub arrivals: Arrivals,
    pub party_sizes: Vec<PartySize>,
    pub patience: Patience,
    pub returns: Returns,
    pub ratings: Option<Ratings>,
    pub population: Population,
    pub format: Option<Format>,
    pub regions: Vec<Share>,
    pub main_roles: Vec<Share>,
    /// Mean ping to each data centre over the players who give one.
    pub mean_ping_ms: Vec<(String, f64)>,
    /// Per home region, the median ping of its players to each data
    /// centre (`[regions.homes] ping_ms`); empty without regions and pings.
    pub home_pings: Vec<HomePings>,
    /// The sd of ln(ping / its home's median) over every player and data
    /// centre: `[regions] ping_spread`, where the log has regions and pings.
    pub ping_spread: Option<f64>,
    /// Players who accept a second role, of those whose roles the log gives
    /// (`[roles] second_prob`).
    pub second_role: Option<Estimate>,
    pub notes: Vec<Note>,
}

/// A home region's median ping to each data centre, in the log's order of
/// data centres.
#[derive(Clone, Debug, Serialize)]
pub struct HomePings {
    pub name: String,
    pub players: usize,
    pub median_ping_ms: Vec<f64>,
}

/// Wilson's score interval for k of n.
pub fn wilson(k: usize, n: usize) -> Estimate {
    let (k, n) = (k as f64, n as f64);
    let p = k / n;
    let z2 = Z95 * Z95;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = Z95 * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / (1.0 + z2 / n);
    Estimate {
        value: p,
        lo: (centre - half).max(0.0),
        hi: (centre + half).min(1.0),
    }
}

/// Exact (Garwood) 95% interval of a Poisson rate: n events in `exposure_s`.
pub fn poisson_rate(n: usize, exposure_s: f64) -> Estimate {
    let lo = if n == 0 {
        0.0
    } else {
        ChiSquared::new(2.0 * n as f64)
            .expect("positive degrees of freedom")
            .inverse_cdf(0.025)
            / 2.0
    };
    let hi = ChiSquared::new(2.0 * n as f64 + 2.0)
        .expect("positive degrees of freedom")
        .inverse_cdf(0.975)
        / 2.0;
    Estimate {
        value: n as f64 / exposure_s,
        lo: lo / exposure_s,
        hi: hi / exposure_s,
    }
}

/// Seconds of [start_s, end_s) falling in each hour of the day (time 0 is
/// midnight; `start_s` on an hour).
fn hour_exposure(start_s: f64, end_s: f64) -> [f64; 24] {
    let mut e = [0.0; 24];
    let mut k = (start_s / 3600.0).floor() as u64;
    while (k as f64) * 3600.0 < end_s {
        let from = k as f64 * 3600.0;
        e[(k % 24) as usize] += (end_s - from).min(3600.0);
        k += 1;
    }
    e
}

fn note(notes: &mut Vec<Note>, quantity: &str, message: String) {
    notes.push(Note {
        quantity: quantity.into(),
        message,
    });
}

/// Which tickets are returns after a match, and the matched ticket each
/// came back from.
fn returns_of(log: &TicketLog, opts: &Options) -> (Vec<Option<usize>>, bool) {
    let flagged = log.tickets.iter().any(|t| t.requeue.is_some());
    let mut last: BTreeMap<&str, usize> = BTreeMap::new();
    let mut from = vec![None; log.tickets.len()];
    for (i, t) in log.tickets.iter().enumerate() {
        let lead = t.players[0].id.as_str();
        if let Some(&p) = last.get(lead) {
            let prev = &log.tickets[p];
            let after_match = prev.reason == Reason::Matched && prev.leave_s <= t.enqueue_s;
            let is_return = if flagged {
                t.requeue == Some(true) && after_match
            } else {
                let same: BTreeSet<&str> = t.players.iter().map(|q| q.id.as_str()).collect();
                let before: BTreeSet<&str> = prev.players.iter().map(|q| q.id.as_str()).collect();
                after_match && same == before && t.enqueue_s - prev.leave_s <= opts.return_window_s
            };
            if is_return {
                from[i] = Some(p);
            }
        }
        for q in &t.players {
            last.insert(q.id.as_str(), i);
        }
    }
    (from, flagged)
}

pub fn fit(log: &TicketLog, opts: &Options) -> Fit {
    let mut notes = Vec::new();
    let (back_from, flagged) = returns_of(log, opts);
    // A ticket the log calls a return is one even when the match it came
    // back from is before the log's start.
    let is_fresh = |i: usize| back_from[i].is_none() && log.tickets[i].requeue != Some(true);
    let fresh: Vec<usize> = (0..log.tickets.len()).filter(|&i| is_fresh(i)).collect();

    // Arrivals by hour of day, each fresh party weighted by how likely it
    // was to get in at all: a game draws a party from its players, and a
    // party with a member already queued or playing never reaches the log.
    let (distinct, drawn) = players_seen(log, &fresh);
    let population = population_of(distinct, drawn, &mut notes);
    let weights = arrival_weights(log, &back_from, population.size as f64);
    let exposure = hour_exposure(log.start_s, log.end_s);
    let mut counts = [0usize; 24];
    let mut weighted = [0.0f64; 24];
    for &i in &fresh {
        let h = ((log.tickets[i].enqueue_s / 3600.0).floor() as u64 % 24) as usize;
        counts[h] += 1;
        weighted[h] += weights[i];
    }
    let scaled = |n: usize, w: f64, e: f64| {
        let r = poisson_rate(n, e);
        let f = if n > 0 { w / n as f64 } else { 1.0 };
        Estimate {
            value: w / e,
            lo: r.lo * f,
            hi: r.hi * f,
        }
    };
    let hours: Vec<HourRate> = (0..24)
        .map(|h| HourRate {
            hour: h as u32,
            arrivals: counts[h],
            exposure_s: exposure[h],
            rate_per_s: (exposure[h] >= MIN_HOUR_EXPOSURE_S)
                .then(|| scaled(counts[h], weighted[h], exposure[h])),
        })
        .collect();
    let covered: Vec<&HourRate> = hours.iter().filter(|h| h.rate_per_s.is_some()).collect();
    let overall = scaled(
        fresh.len(),
        weighted.iter().sum(),
        (log.end_s - log.start_s).max(1.0),
    );
    let (rate, daily_profile) = if covered.len() >= 2 {
        let mean = covered
            .iter()
            .map(|h| h.rate_per_s.unwrap().value)
            .sum::<f64>()
            / covered.len() as f64;
        // The mean of hourly rates: its variance is the sum of each hour's
        // (Poisson: n/e², scaled by the weights) over the hours squared.
        let var = covered
            .iter()
            .map(|h| {
                let r = h.rate_per_s.unwrap();
                let f = if h.arrivals > 0 {
                    r.value * h.exposure_s / h.arrivals as f64
                } else {
                    1.0
                };
                f * f * h.arrivals as f64 / (h.exposure_s * h.exposure_s)
            })
            .sum::<f64>()
            / (covered.len() as f64).powi(2);
        let profile: Vec<f64> = hours
            .iter()
            .map(|h| {
                h.rate_per_s
                    .map_or(1.0, |r| if mean > 0.0 { r.value / mean } else { 1.0 })
            })
            .collect();
        if covered.len() < 24 {
            let missing: Vec<String> = hours
                .iter()
                .filter(|h| h.rate_per_s.is_none())
                .map(|h| h.hour.to_string())
                .collect();
            note(
                &mut notes,
                "arrivals.daily_profile",
                format!(
                    "the log spends under {} min in hours {} of the day: they take the mean rate (multiplier 1)",
                    MIN_HOUR_EXPOSURE_S / 60.0,
                    missing.join(", ")
                ),
            );
        }
        (Estimate::plain(mean, var.sqrt()), Some(profile))
    } else {
        note(
            &mut notes,
            "arrivals.daily_profile",
            format!(
                "the log covers {:.0} min, under two hours of the day with {} min each: one rate for the whole day, no profile",
                (log.end_s - log.start_s) / 60.0,
                MIN_HOUR_EXPOSURE_S / 60.0
            ),
        );
        (overall, None)
    };

    // Party mix of fresh tickets.
    let mut by_size: BTreeMap<usize, (usize, f64)> = BTreeMap::new();
    for &i in &fresh {
        let e = by_size.entry(log.tickets[i].players.len()).or_default();
        e.0 += 1;
        e.1 += weights[i];
    }
    let total_w: f64 = by_size.values().map(|v| v.1).sum();
    let party_sizes = by_size
        .iter()
        .map(|(&size, &(n, w))| {
            // Wilson's interval of the count, moved with the weighting.
            let plain = wilson(n, fresh.len().max(1));
            let share = w / total_w;
            let f = if plain.value > 0.0 {
                share / plain.value
            } else {
                1.0
            };
            PartySize {
                size,
                tickets: n,
                share: Estimate {
                    value: share,
                    lo: plain.lo * f,
                    hi: (plain.hi * f).min(1.0),
                },
            }
        })
        .collect();

    // Patience: abandons are events, every other end censors.
    let obs: Vec<Obs> = log
        .tickets
        .iter()
        .map(|t| Obs {
            wait_s: t.wait_s().max(0.0),
            abandoned: t.reason == Reason::Abandoned,
        })
        .collect();
    let abandons = obs.iter().filter(|o| o.abandoned).count();
    let km = survival::kaplan_meier(&obs);
    let kaplan_meier = if km.len() > 400 {
        let step = km.len() as f64 / 399.0;
        (0..400)
            .map(|j| km[((j as f64 * step) as usize).min(km.len() - 1)])
            .collect()
    } else {
        km
    };
    let comparison = if abandons >= MIN_ABANDONS {
        survival::compare(&obs)
    } else {
        let mut c = Comparison {
            fits: Vec::new(),
            not_fitted: Vec::new(),
        };
        if abandons > 0 {
            c.fits
                .push(survival::fit_exponential(&obs).expect("abandons > 0"));
        }
        note(
            &mut notes,
            "arrivals.patience",
            if abandons == 0 {
                "no ticket abandoned: patience cannot be fitted; the scenario says nobody gives up (dist = \"never\")".into()
            } else {
                format!("only {abandons} abandons (under {MIN_ABANDONS}): exponential only, the families are not compared")
            },
        );
        c
    };

    // Returns and think time.
    let has_ends = log.tickets.iter().any(|t| t.match_end_s.is_some());
    let gap_of = |i: usize, m: usize| -> f64 {
        let prev = &log.tickets[m];
        let from = if has_ends {
            prev.match_end_s.unwrap_or(prev.leave_s)
        } else {
            prev.leave_s
        };
        (log.tickets[i].enqueue_s - from).max(0.0)
    };
    let gaps: Vec<f64> = (0..log.tickets.len())
        .filter_map(|i| back_from[i].map(|m| gap_of(i, m)))
        .collect();
    let mean_gap = if gaps.is_empty() {
        0.0
    } else {
        gaps.iter().sum::<f64>() / gaps.len() as f64
    };
    // A match near the log's end had no time to be followed by a return:
    // only those at least this long before the end count.
    let horizon = if flagged {
        (10.0 * mean_gap).max(600.0)
    } else {
        opts.return_window_s
    };
    let returned_from: BTreeSet<usize> = back_from.iter().flatten().copied().collect();
    let (mut eligible, mut returned) = (0, 0);
    let mut eligible_gaps = Vec::new();
    for (m, t) in log.tickets.iter().enumerate() {
        if t.reason != Reason::Matched {
            continue;
        }
        let from = if has_ends {
            match t.match_end_s {
                Some(e) => e,
                None => continue,
            }
        } else {
            t.leave_s
        };
        if from + horizon > log.end_s {
            continue;
        }
        eligible += 1;
        if returned_from.contains(&m) {
            returned += 1;
        }
    }
    for (i, b) in back_from.iter().enumerate() {
        if let Some(m) = *b {
            let t = &log.tickets[m];
            let from = if has_ends {
                t.match_end_s.unwrap_or(t.leave_s)
            } else {
                t.leave_s
            };
            if from + horizon <= log.end_s {
                eligible_gaps.push(gap_of(i, m));
            }
        }
    }
    let requeue_prob = (eligible >= 20).then(|| wilson(returned, eligible));
    if requeue_prob.is_none() {
        note(
            &mut notes,
            "arrivals.requeue_prob",
            format!("only {eligible} matched tickets early enough to see a return (under 20): nobody queues again (0)"),
        );
    }
    let think_s = (eligible_gaps.len() >= 5).then(|| {
        let n = eligible_gaps.len() as f64;
        let mean = eligible_gaps.iter().sum::<f64>() / n;
        Estimate::log_scale(mean, 1.0 / n.sqrt())
    });
    if think_s.is_none() && requeue_prob.is_some_and(|p| p.value > 0.0) {
        note(
            &mut notes,
            "arrivals.think_time",
            "fewer than 5 returns: the think time keeps mmsim's default (30s)".into(),
        );
    }
    if !has_ends && !gaps.is_empty() {
        note(
            &mut notes,
            "arrivals.think_time",
            "the log has no match ends (`match_end_s`): the pause is measured from the match forming, so it includes the match itself; subtract the match's length if you know it".into(),
        );
    }
    let returns = Returns {
        matched_eligible: eligible,
        returned,
        requeue_prob,
        think_s,
        measured_from: if has_ends {
            "match_end"
        } else {
            "match_formed"
        },
        recognised_by: if flagged {
            "requeue column".into()
        } else {
            format!(
                "same party queueing again within {} s of its match",
                opts.return_window_s
            )
        },
    };

    // Ratings: each player's first.
    let mut first_rating: BTreeMap<&str, f64> = BTreeMap::new();
    let mut first_region: BTreeMap<&str, &str> = BTreeMap::new();
    let mut first_role: BTreeMap<&str, &str> = BTreeMap::new();
    let mut ping_sum = vec![(0.0f64, 0usize); log.data_centres.len()];
    // Each home's players' pings to each data centre, and roles counted.
    let mut home_pings: BTreeMap<&str, Vec<Vec<f64>>> = BTreeMap::new();
    let (mut with_roles, mut two_roles) = (0usize, 0usize);
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    for t in &log.tickets {
        for p in &t.players {
            if !seen.insert(p.id.as_str()) {
                continue;
            }
            if let Some(r) = p.rating {
                first_rating.insert(&p.id, r);
            }
            if let Some(r) = &p.region {
                first_region.insert(&p.id, r);
            }
            if let Some(r) = p.roles.first() {
                first_role.insert(&p.id, r);
                with_roles += 1;
                if p.roles.len() >= 2 {
                    two_roles += 1;
                }
            }
            for (k, x) in p.pings_ms.iter().enumerate() {
                ping_sum[k].0 += x;
                ping_sum[k].1 += 1;
            }
            if let (Some(r), false) = (&p.region, p.pings_ms.is_empty()) {
                let dcs = log.data_centres.len();
                let per_dc = home_pings
                    .entry(r.as_str())
                    .or_insert_with(|| vec![Vec::new(); dcs]);
                for (k, &x) in p.pings_ms.iter().enumerate().take(dcs) {
                    per_dc[k].push(x);
                }
            }
        }
    }
    let ratings = ratings_of(first_rating.values().copied().collect(), &mut notes);
    let shares = |m: &BTreeMap<&str, &str>| -> Vec<Share> {
        let mut c: BTreeMap<&str, usize> = BTreeMap::new();
        for v in m.values() {
            *c.entry(v).or_default() += 1;
        }
        c.into_iter()
            .map(|(name, n)| Share {
                name: name.into(),
                players: n,
                share: wilson(n, m.len()),
            })
            .collect()
    };
    let format = format_of(log);
    let (home_pings, ping_spread) = home_pings_of(&home_pings);
    let second_role = (with_roles > 0).then(|| wilson(two_roles, with_roles));
    Fit {
        tickets: log.tickets.len(),
        log_start_s: log.start_s,
        log_end_s: log.end_s,
        arrivals: Arrivals {
            fresh_tickets: fresh.len(),
            hours,
            rate_per_s: rate,
            daily_profile,
        },
        party_sizes,
        patience: Patience {
            tickets: obs.len(),
            abandons,
            kaplan_meier,
            comparison,
        },
        returns,
        ratings,
        population,
        format,
        regions: shares(&first_region),
        main_roles: shares(&first_role),
        mean_ping_ms: log
            .data_centres
            .iter()
            .zip(&ping_sum)
            .filter(|(_, (_, n))| *n > 0)
            .map(|(d, (s, n))| (d.clone(), s / *n as f64))
            .collect(),
        home_pings,
        ping_spread,
        second_role,
        notes,
    }
}

/// Each home's median ping to each data centre, and the spread of the
/// players' pings about them: the sd of ln(ping / median), the log-normal
/// factor's sigma that `[regions] ping_spread` draws with (pings of 0 ms,
/// which have no logarithm, left out).
fn home_pings_of(pings: &BTreeMap<&str, Vec<Vec<f64>>>) -> (Vec<HomePings>, Option<f64>) {
    let median = |xs: &[f64]| -> f64 {
        let mut v = xs.to_vec();
        v.sort_by(f64::total_cmp);
        match v.len() {
            0 => f64::NAN,
            n if n % 2 == 1 => v[n / 2],
            n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
        }
    };
    let mut homes = Vec::new();
    let (mut sum, mut sq, mut n) = (0.0f64, 0.0f64, 0usize);
    for (name, per_dc) in pings {
        let medians: Vec<f64> = per_dc.iter().map(|xs| median(xs)).collect();
        if medians.iter().any(|m| !m.is_finite()) {
            continue;
        }
        for (xs, &m) in per_dc.iter().zip(&medians) {
            for &x in xs {
                if x > 0.0 && m > 0.0 {
                    let z = (x / m).ln();
                    sum += z;
                    sq += z * z;
                    n += 1;
                }
            }
        }
        homes.push(HomePings {
            name: name.to_string(),
            players: per_dc.first().map_or(0, Vec::len),
            median_ping_ms: medians,
        });
    }
    let spread = (n >= 2).then(|| {
        let mean = sum / n as f64;
        ((sq / n as f64 - mean * mean).max(0.0)).sqrt()
    });
    (homes, spread)
}

/// Distinct players, and players drawn by the fresh tickets.
fn players_seen(log: &TicketLog, fresh: &[usize]) -> (usize, usize) {
    let seen: BTreeSet<&str> = log
        .tickets
        .iter()
        .flat_map(|t| t.players.iter().map(|p| p.id.as_str()))
        .collect();
    let drawn = fresh.iter().map(|&i| log.tickets[i].players.len()).sum();
    (seen.len(), drawn)
}

/// Each ticket's weight as an arrival: 1 / (1 − b)^k for a party of k when
/// a share b of the `n` players was busy (queued, playing, or pausing
/// before a return) just before it came, the chance that k players drawn
/// at random were all free. A player is busy from enqueue to leave, and a
/// matched one until the match ends (the log's end when the log has match
/// ends but not this one's; the leave when it has none).
fn arrival_weights(log: &TicketLog, back_from: &[Option<usize>], n: f64) -> Vec<f64> {
    let has_ends = log.tickets.iter().any(|t| t.match_end_s.is_some());
    let free_at = |t: &crate::log::LogTicket| match t.reason {
        Reason::Matched if has_ends => t.match_end_s.unwrap_or(log.end_s),
        _ => t.leave_s,
    };
    let mut events: Vec<(f64, i64)> = Vec::with_capacity(4 * log.tickets.len());
    for (i, t) in log.tickets.iter().enumerate() {
        let k = t.players.len() as i64;
        events.push((t.enqueue_s, k));
        events.push((free_at(t), -k));
        if let Some(m) = back_from[i] {
            // Pausing between the match and the return.
            events.push((free_at(&log.tickets[m]), k));
            events.push((t.enqueue_s, -k));
        }
    }
    events.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut w = vec![1.0; log.tickets.len()];
    let (mut j, mut busy) = (0usize, 0i64);
    for (i, t) in log.tickets.iter().enumerate() {
        while j < events.len() && events[j].0 < t.enqueue_s {
            busy += events[j].1;
            j += 1;
        }
        let b = (busy.max(0) as f64 / n).min(0.99);
        w[i] = (1.0 - b).powi(-(t.players.len() as i32));
    }
    w
}

fn ratings_of(mut r: Vec<f64>, notes: &mut Vec<Note>) -> Option<Ratings> {
    if r.len() < 30 {
        note(
            notes,
            "population.skill",
            format!("ratings for {} players (under 30): the skill prior is not fitted; the rules scenario's (or mmsim's default) stays", r.len()),
        );
        return None;
    }
    r.sort_by(f64::total_cmp);
    let n = r.len() as f64;
    let mean = r.iter().sum::<f64>() / n;
    let var = r.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    let sd = var.sqrt();
    let chi = ChiSquared::new(n - 1.0).expect("n > 1");
    let sd_est = Estimate {
        value: sd,
        lo: ((n - 1.0) * var / chi.inverse_cdf(0.975)).sqrt(),
        hi: ((n - 1.0) * var / chi.inverse_cdf(0.025)).sqrt(),
    };
    let mut quantiles: Vec<[f64; 2]> = Vec::new();
    for p in [0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99] {
        // Linear interpolation between order statistics (type 7).
        let h = (n - 1.0) * p;
        let (lo, frac) = (h.floor() as usize, h - h.floor());
        let v = r[lo] + frac * (r[(lo + 1).min(r.len() - 1)] - r[lo]);
        if quantiles.last().is_none_or(|q| v > q[1]) {
            quantiles.push([p, v]);
        }
    }
    if sd == 0.0 || quantiles.len() < 2 {
        note(
            notes,
            "population.skill",
            format!("every player's rating is {}: a new ladder, which says nothing of skill; the skill prior is not fitted", r[0]),
        );
        return None;
    }
    Some(Ratings {
        players: r.len(),
        mean: Estimate::plain(mean, sd / n.sqrt()),
        sd: sd_est,
        quantiles,
    })
}

fn population_of(distinct: usize, drawn: usize, notes: &mut Vec<Note>) -> Population {
    let (d, a) = (distinct as f64, drawn as f64);
    if drawn == 0 || d >= 0.99 * a {
        note(
            notes,
            "population.size",
            format!("{distinct} players in {drawn} fresh draws: almost nobody came twice, so the log cannot tell how many players there are; 10 × the players seen"),
        );
        return Population {
            distinct_players: distinct,
            players_drawn: drawn,
            size: (10 * distinct).max(2),
            interval: None,
            how: "fallback: 10 × the distinct players".into(),
        };
    }
    let size = occupancy_inverse(d, a);
    // The distinct count's sd for A uniform draws from N (the occupancy
    // problem's variance), at the estimate; the interval is the sizes whose
    // expected count lies within 1.96 sd of the count seen.
    let sd = {
        let q1 = (1.0 - 1.0 / size).powf(a);
        let q2 = (1.0 - 2.0 / size).powf(a);
        (size * (size - 1.0) * q2 + size * q1 - size * size * q1 * q1)
            .max(0.0)
            .sqrt()
    };
    let lo = occupancy_inverse((d - Z95 * sd).max(1.0), a);
    let hi = (d + Z95 * sd < 0.99 * a).then(|| occupancy_inverse(d + Z95 * sd, a));
    Population {
        distinct_players: distinct,
        players_drawn: drawn,
        size: size.round() as usize,
        interval: Some((lo, hi)),
        how: "solves distinct = N(1 − exp(−draws/N)) for fresh parties drawn uniformly".into(),
    }
}

/// The N with N(1 − e^{−A/N}) = d: that grows with N towards A, so bisect.
fn occupancy_inverse(d: f64, a: f64) -> f64 {
    let f = |n: f64| n * (1.0 - (-a / n).exp()) - d;
    let (mut lo, mut hi) = (d.max(1.0), d.max(1.0) * 1e6);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if f(mid) < 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// The match format from the log's `match` column: players per match,
/// split into two teams.
fn format_of(log: &TicketLog) -> Option<Format> {
    let mut per: BTreeMap<&str, usize> = BTreeMap::new();
    for t in &log.tickets {
        if let (Some(m), Reason::Matched) = (&t.match_id, t.reason) {
            *per.entry(m).or_default() += t.players.len();
        }
    }
    let mut hist: BTreeMap<usize, usize> = BTreeMap::new();
    for n in per.values() {
        *hist.entry(*n).or_default() += 1;
    }
    let (&players, _) = hist
        .iter()
        .max_by_key(|(n, c)| (**c, std::cmp::Reverse(**n)))?;
    (players >= 2 && players % 2 == 0).then(|| Format {
        teams: 2,
        team_size: (players / 2) as u32,
        from: format!(
            "{} matches, most with {players} players: two teams of {}",
            per.len(),
            players / 2
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poisson_interval_matches_the_chi_square_formula() {
        // 10 events in 1 s: Garwood's interval is [4.795, 18.39].
        let e = poisson_rate(10, 1.0);
        assert!(
            (e.lo - 4.7954).abs() < 1e-3 && (e.hi - 18.3904).abs() < 1e-3,
            "{e:?}"
        );
        assert_eq!(poisson_rate(0, 2.0).lo, 0.0);
    }

    #[test]
    fn wilson_interval_of_a_known_case() {
        // 8 of 10: [0.4902, 0.9433].
        let w = wilson(8, 10);
        assert!(
            (w.lo - 0.4902).abs() < 1e-3 && (w.hi - 0.9433).abs() < 1e-3,
            "{w:?}"
        );
    }

    #[test]
    fn hours_of_a_day_and_a_half() {
        let e = hour_exposure(0.0, 36.0 * 3600.0 + 1800.0);
        assert_eq!(e[0], 7200.0);
        // Hour 12: all of the first day's, half of the second's.
        assert_eq!(e[12], 5400.0);
        assert_eq!(e[13], 3600.0);
        // From 22:00: two hours of the first day, then the next day's.
        let e = hour_exposure(22.0 * 3600.0, 26.0 * 3600.0);
        assert_eq!(
            (e[21], e[22], e[23], e[0], e[1]),
            (0.0, 3600.0, 3600.0, 3600.0, 3600.0)
        );
    }

    #[test]
    fn population_size_inverts_the_occupancy_formula() {
        let n = 5000.0f64;
        let a = 12_000.0f64;
        let d = (n * (1.0 - (-a / n).exp())).round() as usize;
        let p = population_of(d, a as usize, &mut Vec::new());
        assert!((p.size as f64 - n).abs() < 10.0, "{}", p.size);
        let (lo, hi) = p.interval.expect("an interval");
        let hi = hi.expect("an upper end");
        assert!(lo < n && n < hi, "{lo} {hi}");
    }

    /// The interval covers the true size in about 95% of simulated logs:
    /// A uniform draws from N players, the distinct ones counted.
    #[test]
    fn the_population_interval_covers_the_size_it_was_drawn_from() {
        use rand::{Rng, SeedableRng};
        let (n, a) = (3000usize, 6000usize);
        let mut covered = 0;
        for seed in 0..200 {
            let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
            let mut seen = vec![false; n];
            for _ in 0..a {
                seen[rng.random_range(0..n)] = true;
            }
            let d = seen.iter().filter(|&&s| s).count();
            let p = population_of(d, a, &mut Vec::new());
            let (lo, hi) = p.interval.unwrap();
            if lo <= n as f64 && hi.is_none_or(|h| n as f64 <= h) {
                covered += 1;
            }
        }
        // 95% of 200, with room for 3 sd (about 9).
        assert!((181..=200).contains(&covered), "{covered} of 200");
    }
}
