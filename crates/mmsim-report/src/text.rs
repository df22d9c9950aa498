//! The terminal text of every command (run summary line, `compare`,
//! `check`, sweep, tune and replication tables), its numbers written by
//! `number`, and the one duration formatter.

use crate::number::{half_width, num, opt, sig, signed};
use mmsim_tune::check::CheckLine;
use mmsim_tune::search::TuneResult;
use mmsim_tune::stats::lookup;
use mmsim_tune::Ci;
use serde_json::Value;
use std::path::Path;

/// A length of time as people write it, to the second: `90` as `1m30s`,
/// `86400` as `24h`, `3700` as `1h1m40s`, `0` as `0s`; the units a scenario
/// file takes, so a figure can be pasted back. Every command and page
/// prints durations with it.
pub fn duration(secs: f64) -> String {
    let s = if secs.is_finite() && secs > 0.0 {
        secs.round() as u64
    } else {
        0
    };
    let (h, m, sec) = (s / 3600, s % 3600 / 60, s % 60);
    let mut out = String::new();
    if h > 0 {
        out += &format!("{h}h");
    }
    if m > 0 {
        out += &format!("{m}m");
    }
    if sec > 0 || s == 0 {
        out += &format!("{sec}s");
    }
    out
}

/// A mean with its 95% interval, `12.5 [11.2, 13.8]`; the mean alone when
/// there is no interval (one seed), `-` when there is no mean.
pub fn ci(c: &Ci) -> String {
    match (c.mean, c.ci95_low, c.ci95_high) {
        (Some(m), Some(lo), Some(hi)) => format!("{} [{}, {}]", num(m), num(lo), num(hi)),
        (Some(m), _, _) => num(m),
        _ => "-".into(),
    }
}

/// The line `mmsim run` ends with: the run's headline numbers and its folder.
pub fn run_line(name: &str, summary: &mmsim_core::metrics::Summary, dir: &Path) -> String {
    let opt = |x: Option<f64>| x.map_or_else(|| "-".to_string(), |x| sig(x, 3));
    format!(
        "{name}: {} tickets, {} matches, wait p50 {}s p90 {}s, abandon {}%, spread mean {} → {}",
        summary.tickets,
        summary.matches,
        opt(summary.wait_s.p50),
        opt(summary.wait_s.p90),
        opt(summary.abandon_rate.map(|r| r * 100.0)),
        opt(summary.spread_rating.mean),
        dir.display()
    )
}

/// The line `mmsim run --replications` ends with: the headline numbers'
/// means and 95% intervals over the seeds (`agg` from `tune::replicate::aggregate`),
/// to three significant digits like `run_line`. Every figure here is a count,
/// a rate or a wait, never negative, so a t interval's lower bound below
/// zero is shown as 0.
pub fn replications_line(name: &str, seeds: &[u64], agg: &Value, dir: &Path) -> String {
    let ci_of = |path: &str, scale: f64| {
        let node = lookup(agg, path);
        let get = |k: &str| {
            node.and_then(|n| n.get(k))
                .and_then(Value::as_f64)
                .map(|v| (v * scale).max(0.0))
        };
        headline_ci(get("mean"), get("ci95_low"), get("ci95_high"))
    };
    format!(
        "{name} over {} seeds ({}..{}), mean [95% CI]: wait p50 {}s, p90 {}s, abandon {}%, spread mean {}, matches {} → {}",
        seeds.len(),
        seeds.first().copied().unwrap_or_default(),
        seeds.last().copied().unwrap_or_default(),
        ci_of("wait_s.p50", 1.0),
        ci_of("wait_s.p90", 1.0),
        ci_of("abandon_rate", 100.0),
        ci_of("spread_rating.mean", 1.0),
        ci_of("matches", 1.0),
        dir.display()
    )
}

/// `12.5 [11.2, 13.8]` to three significant digits; the mean alone without
/// bounds, `-` without a mean.
fn headline_ci(mean: Option<f64>, lo: Option<f64>, hi: Option<f64>) -> String {
    match (mean, lo, hi) {
        (Some(m), Some(lo), Some(hi)) => {
            format!("{} [{}, {}]", sig(m, 3), sig(lo, 3), sig(hi, 3))
        }
        (Some(m), _, _) => sig(m, 3),
        _ => "-".into(),
    }
}

/// The printed table: every comparison, the moved ones marked.
pub fn check_table(lines: &[CheckLine]) -> String {
    let mut out = format!(
        "{:<22} {:<20} {:>12} {:>12} {:>12} {:>8} {:>12}  {}\n",
        "scenario", "metric", "baseline", "now", "change", "change%", "tolerance", "status"
    );
    for l in lines {
        let now = l.now.map(num).unwrap_or_else(|| "missing".into());
        let change = l.change().map(signed).unwrap_or_else(|| "-".into());
        let pct = match l.change() {
            Some(d) if l.baseline != 0.0 => format!("{}%", signed(100.0 * d / l.baseline.abs())),
            _ => "-".into(),
        };
        out.push_str(&format!(
            "{:<22} {:<20} {:>12} {:>12} {:>12} {:>8} {:>12}  {}\n",
            l.scenario,
            l.metric,
            num(l.baseline),
            now,
            change,
            pct,
            num(l.tolerance),
            if l.moved() { "MOVED" } else { "ok" }
        ));
    }
    out
}

/// `mmsim tune`'s table of every point evaluated, in parameter order, and
/// the chosen setting with its intervals.
pub fn tune_table(r: &TuneResult) -> String {
    let names: Vec<String> = std::iter::once(r.objective.clone())
        .chain(r.constraints.iter().map(|c| c.metric.clone()))
        .collect();
    let mut out = String::new();
    let mut header: Vec<String> = r.params.iter().map(|p| p.key.clone()).collect();
    header.extend(names.iter().cloned());
    header.push("ok".into());
    out.push_str(
        &header
            .iter()
            .map(|h| format!("{h:>20}"))
            .collect::<String>(),
    );
    out.push('\n');
    let mut order: Vec<usize> = (0..r.points.len()).collect();
    order.sort_by(|&a, &b| {
        r.points[a]
            .values
            .iter()
            .zip(&r.points[b].values)
            .map(|(x, y)| x.total_cmp(y))
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    for i in order {
        let p = &r.points[i];
        let mut row: Vec<String> = p
            .values
            .iter()
            .map(|&v| format!("{:>20}", num(v)))
            .collect();
        let ci = |s: &Ci| match (s.ci95_low, s.ci95_high) {
            (Some(lo), Some(hi)) => format!("{} ±{}", opt(s.mean), half_width((hi - lo) / 2.0)),
            _ => opt(s.mean),
        };
        row.extend(p.stats.iter().map(|s| format!("{:>20}", ci(s))));
        let mark = match (Some(i) == r.best, p.feasible) {
            (true, _) if r.tied.is_empty() => "BEST",
            (true, _) => "best (noise)",
            (false, true) if r.tied.contains(&i) => "tied",
            (false, true) => "yes",
            (false, false) => "no",
        };
        row.push(format!("{mark:>20}"));
        out.push_str(&row.concat());
        out.push('\n');
    }
    let seeds = format!(
        "{} seeds ({}..{})",
        r.seeds.len(),
        r.seeds[0],
        r.seeds[r.seeds.len() - 1]
    );
    match r.best {
        Some(b) => {
            let p = &r.points[b];
            let setting: Vec<String> = r
                .params
                .iter()
                .zip(&p.values)
                .map(|(k, &v)| format!("{}={}", k.key, num(v)))
                .collect();
            out.push_str(&format!(
                "chosen: {} ({} points evaluated, {seeds} each)\n",
                setting.join(" "),
                r.points.len()
            ));
            let show = |name: &str, c: &Ci, bound: String| {
                format!(
                    "  {name} {} [95% CI {}, {}]{bound}\n",
                    opt(c.mean),
                    opt(c.ci95_low),
                    opt(c.ci95_high),
                )
            };
            out.push_str(&show(&r.objective, &p.stats[0], " (minimised)".into()));
            if r.tied.is_empty() {
                out.push_str(&format!(
                    "  every other feasible setting is worse on {} at 95%, paired over the seeds\n",
                    r.objective
                ));
            } else {
                let near: Vec<String> = r
                    .tied
                    .iter()
                    .map(|&t| {
                        let q = &r.points[t];
                        let at: Vec<String> = (r.params.iter().zip(&q.values))
                            .map(|(k, &v)| format!("{}={}", k.key, num(v)))
                            .collect();
                        let d = mmsim_tune::search::paired_difference(q, p);
                        let sign = if d.mean.is_some_and(|m| m >= 0.0) {
                            "+"
                        } else {
                            ""
                        };
                        format!(
                            "{} ({sign}{} [{}, {}])",
                            at.join(" "),
                            opt(d.mean),
                            opt(d.ci95_low),
                            opt(d.ci95_high)
                        )
                    })
                    .collect();
                out.push_str(&format!(
                    "  cannot be told from the best at 95% (paired over the seeds, {} minus chosen): {}; \
                     the choice among them is inside seed noise: add --seeds or pick by another metric\n",
                    r.objective,
                    near.join(", ")
                ));
            }
            for (c, s) in r.constraints.iter().zip(&p.stats[1..]) {
                out.push_str(&show(
                    &c.metric,
                    s,
                    format!(" (subject to {} {})", c.op_text(), num(c.value)),
                ));
            }
        }
        None => out.push_str(&format!(
            "no point of {} meets the constraints over {seeds}\n",
            r.points.len()
        )),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_print_as_a_scenario_file_writes_them() {
        assert_eq!(duration(0.0), "0s");
        assert_eq!(duration(0.4), "0s");
        assert_eq!(duration(59.6), "1m");
        assert_eq!(duration(90.0), "1m30s");
        assert_eq!(duration(3700.0), "1h1m40s");
        assert_eq!(duration(86400.0), "24h");
        assert_eq!(duration(f64::NAN), "0s");
    }

    #[test]
    fn the_replications_line_has_no_negative_zero_and_three_digits() {
        // All seeds waited 0 at the median: bounds come out as -0.0 and 0.0.
        let agg = serde_json::json!({
            "wait_s": {"p50": {"mean": 0.0, "ci95_low": -0.0, "ci95_high": 0.0},
                       "p90": {"mean": 12.345678, "ci95_low": -1.5, "ci95_high": 26.19}},
            "abandon_rate": {"mean": 0.0123456, "ci95_low": 0.01, "ci95_high": 0.0147},
            "spread_rating": {"mean": {"mean": 88.88888, "ci95_low": null, "ci95_high": null}},
            "matches": {"mean": 6620.4, "ci95_low": 6500.0, "ci95_high": 6740.8}
        });
        let line = replications_line("s", &[1, 2], &agg, Path::new("out"));
        assert!(
            line.contains("wait p50 0 [0, 0]s, p90 12.3 [0, 26.2]s, abandon 1.23 [1, 1.47]%, spread mean 88.9, matches 6620 [6500, 6741]"),
            "{line}"
        );
        assert!(!line.contains("-0"));
    }

    #[test]
    fn the_check_table_marks_moved_metrics_with_signed_changes() {
        let line = |now: Option<f64>| CheckLine {
            scenario: "s".into(),
            metric: "matches".into(),
            baseline: 110.0,
            now,
            tolerance: 34.759_863,
        };
        let table = check_table(&[line(Some(150.0)), line(Some(110.0)), line(None)]);
        let rows: Vec<&str> = table.lines().collect();
        assert!(
            rows[1].contains("+40") && rows[1].contains("+36.3636%"),
            "{table}"
        );
        assert!(
            rows[1].ends_with("MOVED") && rows[2].ends_with("ok"),
            "{table}"
        );
        assert!(
            rows[3].contains("missing") && rows[3].ends_with("MOVED"),
            "{table}"
        );
    }

    #[test]
    fn intervals_show_the_mean_alone_without_one() {
        let two = mmsim_tune::ci95(&[1.0, 3.0]);
        assert!(ci(&two).starts_with("2 ["), "{}", ci(&two));
        assert_eq!(ci(&mmsim_tune::ci95(&[2.5])), "2.5");
        assert_eq!(ci(&mmsim_tune::ci95(&[])), "-");
    }
}
