//! Figures the docs state about the presets, checked on the presets' own
//! runs, so a doc cannot keep a number the simulator no longer gives.

use std::path::Path;

/// docs/policies.md: in the percentile-window preset's day, about a third
/// of the population never plays and keeps exactly the initial 1500, so
/// for a player at 1500 (every newcomer) the ±5-percentile window at entry
/// spans no rating points at all.
#[test]
fn the_percentile_window_at_1500_spans_no_points() {
    let text = include_str!("../../../../scenarios/gamedev-policies/percentile-window.toml");
    let scenario = mmsim_scenario::from_text(text, Path::new("percentile-window.toml"), &[])
        .unwrap()
        .scenario;
    let out = mmsim_scenario::run::run_summary(&scenario, scenario.run.seed, &mut |_, _| {});
    let n = out.players.len();
    let never = out.players.iter().filter(|p| p.rating.games == 0).count();
    let share = never as f64 / n as f64;
    // The docs say 36%.
    assert!((share - 0.36).abs() < 0.01, "{share}");
    assert!(out
        .players
        .iter()
        .filter(|p| p.rating.games == 0)
        .all(|p| p.rating.value == 1500.0));
    let mut ratings: Vec<f64> = out.players.iter().map(|p| p.rating.value).collect();
    ratings.sort_by(f64::total_cmp);
    let lo = ratings.partition_point(|&r| r < 1500.0);
    let hi = ratings.partition_point(|&r| r <= 1500.0);
    // The policy's percentile of a rating is its mid-rank.
    let mid = (lo + hi) as f64 / 2.0 / n as f64;
    let at = |p: f64| ratings[((p * n as f64) as usize).min(n - 1)];
    assert_eq!((at(mid - 0.05), at(mid + 0.05)), (1500.0, 1500.0));
}

/// docs/policies.md's comparison table of the thread's policies, row for
/// row, as `scripts/policy-table.sh` prints it from the nine presets' runs
/// (a row had gone stale: sweep-prune's spread p90 read 173 where the run
/// gives 172).
#[test]
fn the_policy_comparison_table_is_what_the_presets_give() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let docs = std::fs::read_to_string(root.join("docs/policies.md")).unwrap();
    let head = "| policy | wait p50 s | wait p90 s | wait p99 s | top decile wait p90 s";
    let rows: Vec<&str> = docs
        .lines()
        .skip_while(|l| !l.starts_with(head))
        .skip(2)
        .take_while(|l| l.starts_with("| "))
        .collect();
    assert_eq!(rows.len(), 9, "the table's rows: {rows:?}");
    for row in rows {
        let name = row.split('|').nth(1).unwrap().trim();
        let path = root.join(format!("scenarios/gamedev-policies/{name}.toml"));
        let text = std::fs::read_to_string(&path).unwrap();
        let s = mmsim_scenario::from_text(&text, &path, &[])
            .unwrap()
            .scenario;
        let out = mmsim_scenario::run::run_summary(&s, s.run.seed, &mut |_, _| {});
        let v = out.summary.to_value();
        let f = |p: &str| {
            p.split('.')
                .fold(&v, |v, k| match k.parse::<usize>() {
                    Ok(i) => &v[i],
                    Err(_) => &v[k],
                })
                .as_f64()
                .unwrap_or_else(|| panic!("{name}: {p}"))
        };
        let ran = format!(
            "| {name} | {:.1} | {:.1} | {:.1} | {:.1} | {:.0} | {:.0} | {:.1}% | {} |",
            f("wait_s.p50"),
            f("wait_s.p90"),
            f("wait_s.p99"),
            f("wait_s_by_skill_decile.9.p90"),
            f("spread_rating.mean"),
            f("spread_rating.p90"),
            100.0 * f("abandon_rate"),
            out.summary.matches
        );
        assert_eq!(row, ran, "docs/policies.md's row for {name}");
    }
}

/// README's table of `dota2-5v5`'s ranked and normal modes and its ladders'
/// percentiles, row for row as the preset's run prints them.
#[test]
fn the_readmes_dota_ranked_and_normal_figures_are_what_the_preset_gives() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let path = root.join("scenarios/dota2-5v5.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let s = mmsim_scenario::from_text(&text, &path, &[])
        .unwrap()
        .scenario;
    let out = mmsim_scenario::run::run_summary(&s, s.run.seed, &mut |_, _| {});
    let modes = out.summary.modes.as_ref().expect("dota2-5v5 has modes");
    let thousands = |n: u64| {
        let s = n.to_string();
        match s.len() {
            4..=6 => format!("{},{}", &s[..s.len() - 3], &s[s.len() - 3..]),
            _ => s,
        }
    };
    for m in &modes.by_mode {
        let row = format!(
            "| {} | {} | {:.1} / {:.1} | {:.1}% | {} |{} |",
            m.mode,
            thousands(m.tickets),
            m.wait_p50_s.unwrap(),
            m.wait_p90_s.unwrap(),
            100.0 * m.abandon_rate.unwrap(),
            thousands(m.matches),
            m.refused
                .map_or(String::new(), |n| format!(" {}", thousands(n))),
        );
        assert!(readme.contains(&row), "README lacks the run's row {row}");
    }
    // The row it compares with: the same matchmaker on one queue.
    let path = root.join("scenarios/dota2-one-queue.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let s = mmsim_scenario::from_text(&text, &path, &[])
        .unwrap()
        .scenario;
    let one = mmsim_scenario::run::run_summary(&s, s.run.seed, &mut |_, _| {}).summary;
    let row = format!(
        "| the one queue before (`dota2-one-queue`) | {} | {:.1} / {:.1} | {:.1}% | {} | |",
        thousands(one.tickets),
        one.wait_s.p50.unwrap(),
        one.wait_s.p90.unwrap(),
        100.0 * one.abandon_rate.unwrap(),
        thousands(one.matches),
    );
    assert!(readme.contains(&row), "README lacks the run's row {row}");
    let pcts = |l: &mmsim_core::metrics::modes::LadderFigures| {
        let at = |f: fn(&mmsim_core::metrics::modes::RatingPercentile) -> f64| {
            [5, 25, 50, 75, 95]
                .iter()
                .map(|&p| {
                    let r = l.solo.iter().find(|r| r.pct == p).unwrap();
                    format!("{:.0}", f(r))
                })
                .collect::<Vec<_>>()
                .join(" / ")
        };
        (at(|r| r.rating), at(|r| r.true_skill))
    };
    // The README wraps the lines: compare with its whitespace collapsed.
    let flat = readme.split_whitespace().collect::<Vec<_>>().join(" ");
    for l in &modes.ladders {
        let (rating, skill) = pcts(l);
        let claim = format!("{} {rating} against {skill}", l.ladder);
        assert!(flat.contains(&claim), "README lacks {claim}");
        let corr = format!("{:.2}", l.rating_skill_rank_corr.unwrap());
        assert!(
            flat.contains(&corr),
            "README lacks {} corr {corr}",
            l.ladder
        );
    }
}

/// docs/policies.md's reading of its search-cadence table says what the
/// table's cells say: a regenerated table (`scripts/quality-cadence.sh`)
/// whose numbers moved fails here until the sentence is rewritten.
#[test]
fn the_cadence_tables_reading_is_what_its_cells_say() {
    let doc = include_str!("../../../../docs/policies.md");
    let section = &doc[doc
        .find("## The quality policy's search cadence")
        .expect("section")..];
    // metric -> the three cadences' (difference, inside seed noise).
    let row = |metric: &str| -> Vec<(f64, bool)> {
        let line = section
            .lines()
            .find(|l| l.starts_with(&format!("| {metric} |")))
            .unwrap_or_else(|| panic!("no row {metric}"));
        line.split('|')
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .skip(2)
            .map(|c| {
                let value = c.split_whitespace().next().expect("a value");
                (value.parse().expect("a number"), c.ends_with("(noise)"))
            })
            .collect()
    };
    let (p50, p90, abandon) = (row("wait p50 s"), row("wait p90 s"), row("abandon rate %"));
    let (quality, gap, matches) = (
        row("quality score"),
        row("true win-prob. gap"),
        row("matches"),
    );
    let reading = section.split("Reading it:").nth(1).expect("the reading");
    // "5 s costs about a second of median wait and nothing else measurable"
    assert!(reading.contains("5 s costs about a second of median wait and nothing else"));
    assert!(
        (0.5..1.5).contains(&p50[0].0) && !p50[0].1,
        "5 s p50 {:?}",
        p50[0]
    );
    for (name, r) in [
        ("p90", &p90),
        ("abandon", &abandon),
        ("quality", &quality),
        ("gap", &gap),
        ("matches", &matches),
    ] {
        assert!(r[0].1, "5 s moves {name} beyond noise: {:?}", r[0]);
    }
    // "10 s about 2 s of median and 4 s of p90 wait and a quarter point of
    // abandonment, with match quality and the true win-probability gap
    // inside seed noise"
    assert!(reading.contains("10 s about 2 s of median and 4 s of p90"));
    assert!((1.5..2.5).contains(&p50[1].0), "10 s p50 {:?}", p50[1]);
    assert!((3.0..5.0).contains(&p90[1].0), "10 s p90 {:?}", p90[1]);
    assert!(
        (0.15..0.35).contains(&abandon[1].0),
        "10 s abandon {:?}",
        abandon[1]
    );
    assert!(
        quality[1].1 && gap[1].1,
        "10 s: {:?} {:?}",
        quality[1],
        gap[1]
    );
    // "20 s about twice that, with a small loss of quality and fewer matches"
    assert!(reading.contains("20 s about twice that, with a small loss of quality"));
    let twice = p50[2].0 / p50[1].0;
    assert!(
        (1.5..2.5).contains(&twice),
        "20 s p50 is {twice:.2} times 10 s's"
    );
    assert!(
        quality[2].0 < 0.0 && !quality[2].1,
        "20 s quality {:?}",
        quality[2]
    );
    assert!(
        matches[2].0 < 0.0 && !matches[2].1,
        "20 s matches {:?}",
        matches[2]
    );
}
