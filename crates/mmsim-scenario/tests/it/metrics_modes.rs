//! read only here).
//!
//! Moved from mmsim-core's `metrics/modes.rs`: the per-mode figures
//! against the obvious recomputation, on the modes preset (scenario text is

use mmsim_core::metrics::{MatchRecord, TicketEnd, TicketRecord};
/// The per-mode block recomputed the obvious way from every record
/// (sorted waits, plain counts): the test oracle of the accumulators.
fn oracle(
    tickets: &[&TicketRecord],
    matches: &[&MatchRecord],
    names: &[String],
    set: u16,
) -> serde_json::Value {
    use mmsim_core::metrics::stats::percentile;
    use serde_json::json;
    let figures = |group: Vec<&&TicketRecord>| {
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
        json!({
            "tickets": group.len(),
            "matched": waits.len(),
            "abandon_rate": (!group.is_empty()).then(|| abandoned as f64 / group.len() as f64),
            "wait_p50_s": percentile(&waits, 0.5),
            "wait_p90_s": percentile(&waits, 0.9),
        })
    };
    let mode_of = |t: &TicketRecord| t.mode.map(|m| usize::from(m.mode));
    let multi = |t: &TicketRecord| t.mode.is_some_and(|m| m.multi);
    let multi_matched = |m: usize| {
        tickets
            .iter()
            .filter(|t| multi(t) && mode_of(t) == Some(m) && matches!(t.end, TicketEnd::Matched(_)))
            .count()
    };
    let multi_total: usize = (0..names.len()).map(multi_matched).sum();
    let by_mode: Vec<_> = names
        .iter()
        .enumerate()
        .map(|(m, name)| {
            let mut f = figures(tickets.iter().filter(|t| mode_of(t) == Some(m)).collect());
            let mine: Vec<_> = matches
                .iter()
                .filter(|x| x.mode.map(usize::from) == Some(m))
                .collect();
            let gaps: Vec<f64> = mine.iter().filter_map(|x| x.win_prob_gap()).collect();
            let o = f.as_object_mut().unwrap();
            o.insert("mode".into(), json!(name));
            o.insert("matches".into(), json!(mine.len()));
            o.insert(
                "spread_rating_mean".into(),
                json!((!mine.is_empty()).then(|| mine
                    .iter()
                    .map(|x| x.spread_rating)
                    .sum::<f64>()
                    / mine.len() as f64)),
            );
            o.insert(
                "win_prob_gap_mean".into(),
                json!((!gaps.is_empty()).then(|| gaps.iter().sum::<f64>() / gaps.len() as f64)),
            );
            o.insert("multi_queued_matched".into(), json!(multi_matched(m)));
            o.insert(
                "multi_queued_matched_share".into(),
                json!((multi_total > 0).then(|| multi_matched(m) as f64 / multi_total as f64)),
            );
            f
        })
        .collect();
    json!({
        "by_mode": by_mode,
        "multi_queued": figures(tickets.iter().filter(|t| multi(t)).collect()),
        "single_queued": figures(
            tickets
                .iter()
                .filter(|t| !multi(t) && mode_of(t).is_some_and(|m| set & (1 << m) != 0))
                .collect()
        ),
    })
}

/// Numbers equal (floats within a few ulps of relative error), the
/// same keys, the same nulls.
fn agree(path: &str, a: &serde_json::Value, b: &serde_json::Value, bad: &mut Vec<String>) {
    use serde_json::Value;
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let (mut kx, mut ky): (Vec<_>, Vec<_>) = (x.keys().collect(), y.keys().collect());
            kx.sort();
            ky.sort();
            if kx != ky {
                bad.push(format!("{path}: keys {kx:?} vs {ky:?}"));
                return;
            }
            for (k, v) in x {
                agree(&format!("{path}.{k}"), v, &y[k], bad);
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (v, w)) in x.iter().zip(y).enumerate() {
                agree(&format!("{path}[{i}]"), v, w, bad);
            }
        }
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            if (x - y).abs() > 1e-9 * x.abs().max(1.0) {
                bad.push(format!("{path}: {x} vs {y}"));
            }
        }
        _ if a == b => {}
        _ => bad.push(format!("{path}: {a} vs {b}")),
    }
}

#[test]
fn streamed_mode_figures_match_the_oracle_on_the_modes_preset() {
    use crate::metrics_oracle::{after_warmup, kept_preset};
    let (s, kept) = kept_preset(
        "modes-ranked-casual.toml",
        &["run.duration=70m", "run.warmup=30m"],
    );
    let m = s.modes.as_ref().expect("a modes scenario");
    let names: Vec<String> = m.queues.iter().map(|q| q.name.clone()).collect();
    let set = m
        .queues
        .iter()
        .enumerate()
        .filter(|(_, q)| m.multi_queue.contains(&q.name))
        .fold(0u16, |acc, (i, _)| acc | (1 << i));
    let (tickets, matches) = after_warmup(&kept);
    let oracle = oracle(&tickets, &matches, &names, set);
    let mut bad = Vec::new();
    agree(".modes", &oracle, &kept.summary["modes"], &mut bad);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    assert!(
        oracle["multi_queued"]["matched"].as_u64().unwrap() > 100,
        "{oracle}"
    );
}
