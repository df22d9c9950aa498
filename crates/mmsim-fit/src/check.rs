//! Does the fitted model reproduce the log? The log's waits and abandons
//! set against a run of the fitted scenario under the log's rules, hour of
//! day by hour of day: the two-sample Kolmogorov-Smirnov distance of the
//! waits (matched tickets) and the abandon rates, with plain words where
//! they differ by more than chance allows.

use crate::fit::wilson;
use crate::log::{Reason, TicketLog};
use serde::Serialize;

/// The largest gap between the two samples' empirical CDFs.
pub fn ks_distance(a: &[f64], b: &[f64]) -> f64 {
    if a.is_empty() || b.is_empty() {
        return f64::NAN;
    }
    let (mut a, mut b) = (a.to_vec(), b.to_vec());
    a.sort_by(f64::total_cmp);
    b.sort_by(f64::total_cmp);
    let (mut i, mut j, mut d) = (0, 0, 0.0f64);
    while i < a.len() && j < b.len() {
        let x = a[i].min(b[j]);
        while i < a.len() && a[i] <= x {
            i += 1;
        }
        while j < b.len() && b[j] <= x {
            j += 1;
        }
        d = d.max((i as f64 / a.len() as f64 - j as f64 / b.len() as f64).abs());
    }
    d
}

/// The distance two samples of these sizes exceed 5% of the time when
/// they come from one distribution (asymptotic: 1.358 √((n+m)/(nm))).
pub fn ks_critical(n: usize, m: usize) -> f64 {
    let (n, m) = (n as f64, m as f64);
    1.358 * ((n + m) / (n * m)).sqrt()
}

#[derive(Clone, Debug, Serialize)]
pub struct HourCheck {
    /// Hour of the day, or `None` for the whole log.
    pub hour: Option<u32>,
    pub log_tickets: usize,
    pub sim_tickets: usize,
    pub ks_wait: f64,
    /// The KS distance of two runs of the fitted model on different
    /// seeds: what chance alone gives when the model is right. Waits in a
    /// queue are correlated in time, so this is usually well above the
    /// textbook critical value, which assumes independent waits.
    pub ks_between_seeds: f64,
    pub ks_critical: f64,
    /// The distance past which the waits are said to differ:
    /// max(ks_critical, 2 × ks_between_seeds).
    pub ks_threshold: f64,
    pub log_abandon: f64,
    pub sim_abandon: f64,
    /// Whether the simulated abandon rate is inside the log's 95% interval,
    /// or nearer the log's than twice the distance between two seeds.
    pub abandon_ok: bool,
    pub verdict: String,
}

/// The waits of matched tickets, the tickets and the abandons that came
/// in hour `hour` of the day (every hour: `None`) from `from_s` on.
fn by_hour(log: &TicketLog, hour: Option<u32>, from_s: f64) -> (Vec<f64>, usize, usize) {
    let mut waits = Vec::new();
    let (mut n, mut ab) = (0, 0);
    for t in log.tickets.iter().filter(|t| t.enqueue_s >= from_s) {
        if hour.is_some_and(|h| (t.enqueue_s / 3600.0).floor() as u64 % 24 != u64::from(h)) {
            continue;
        }
        n += 1;
        match t.reason {
            Reason::Matched => waits.push(t.wait_s()),
            Reason::Abandoned => ab += 1,
            _ => {}
        }
    }
    (waits, n, ab)
}

fn compare(
    log: &TicketLog,
    sim: &TicketLog,
    again: &TicketLog,
    hour: Option<u32>,
) -> Option<HourCheck> {
    // The runs' warm-up (the hours before the log's first) is left out.
    let (lw, ln, la) = by_hour(log, hour, 0.0);
    let (sw, sn, sa) = by_hour(sim, hour, log.start_s);
    let (aw, an, aa) = by_hour(again, hour, log.start_s);
    if ln < 20 || sn < 20 || an < 20 || lw.is_empty() || sw.is_empty() || aw.is_empty() {
        return None;
    }
    let ks = ks_distance(&lw, &sw);
    let noise = ks_distance(&sw, &aw);
    let crit = ks_critical(lw.len(), sw.len());
    let threshold = crit.max(2.0 * noise);
    let interval = wilson(la, ln);
    let sim_abandon = sa as f64 / sn as f64;
    // Chance as the log's interval sees it, or as two seeds of the model
    // differ, whichever is wider (abandons cluster in time too).
    let abandon_ok = interval.covers(sim_abandon)
        || (sim_abandon - interval.value).abs()
            <= 2.0 * (sim_abandon - aa as f64 / an as f64).abs();
    let mut words = Vec::new();
    if ks > threshold {
        words.push(format!(
            "waits differ (KS {ks:.3}, past {threshold:.3}: twice what two seeds of the model differ by, {noise:.3}, and the 5% critical value {crit:.3})"
        ));
    }
    if !abandon_ok {
        words.push(format!(
            "abandons {:.1}% simulated against {:.1}% [{:.1}, {:.1}] logged",
            100.0 * sim_abandon,
            100.0 * interval.value,
            100.0 * interval.lo,
            100.0 * interval.hi
        ));
    }
    Some(HourCheck {
        hour,
        log_tickets: ln,
        sim_tickets: sn,
        ks_wait: ks,
        ks_between_seeds: noise,
        ks_critical: crit,
        ks_threshold: threshold,
        log_abandon: interval.value,
        sim_abandon,
        abandon_ok,
        verdict: if words.is_empty() {
            "fits".into()
        } else {
            words.join("; ")
        },
    })
}

/// The whole log first, then each hour of the day with 20 tickets in the
/// log and in both runs (`sim` and `again`: the fitted model on two seeds).
pub fn check(log: &TicketLog, sim: &TicketLog, again: &TicketLog) -> Vec<HourCheck> {
    std::iter::once(None)
        .chain((0..24).map(Some))
        .filter_map(|h| compare(log, sim, again, h))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ks_of_known_samples() {
        assert_eq!(ks_distance(&[1.0, 2.0, 3.0], &[1.0, 2.0, 3.0]), 0.0);
        assert_eq!(ks_distance(&[1.0, 2.0], &[3.0, 4.0]), 1.0);
        // ECDFs at 2: 2/4 against 0; at 3: 3/4 against 1/2; at 4: 1 against 1/2.
        assert!((ks_distance(&[1.0, 2.0, 3.0, 4.0], &[3.0, 5.0]) - 0.5).abs() < 1e-12);
        assert!((ks_distance(&[1.0, 2.0, 3.0, 4.0], &[1.5]) - 0.75).abs() < 1e-12);
    }
}
