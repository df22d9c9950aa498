//! Figures the docs state about the presets, checked on the presets' own
//! runs, so a doc cannot keep a number the simulator no longer gives; and
//! the prose that reads a checked-in table, checked against the table's
//! cells, so a regenerated table cannot leave a sentence behind. Each
//! figure is read from the doc's own text.

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

/// `text` with its line breaks and runs of spaces folded to single spaces,
/// so a sentence reads the same however the doc wraps it.
fn prose(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The numbers in the text between `before` and the next `after` (signs,
/// `%` and thousands commas dropped): what a sentence states, read from it.
fn numbers_between(text: &str, before: &str, after: &str) -> Vec<f64> {
    let start = text.find(before).unwrap_or_else(|| panic!("no {before:?}")) + before.len();
    let end = start
        + text[start..]
            .find(after)
            .unwrap_or_else(|| panic!("no {after:?} after {before:?}"));
    text[start..end]
        .split(|c: char| !(c.is_ascii_digit() || c == '.' || c == ','))
        .map(|w| w.trim_matches(|c| c == '.' || c == ',').replace(',', ""))
        .filter(|w| !w.is_empty())
        .map(|w| w.parse().unwrap_or_else(|_| panic!("{w:?}")))
        .collect()
}

/// A markdown table's body rows after the header line starting `head`, as
/// trimmed cells.
fn table_rows(doc: &str, head: &str) -> Vec<Vec<String>> {
    doc.lines()
        .skip_while(|l| !l.starts_with(head))
        .skip(2)
        .take_while(|l| l.starts_with("| "))
        .map(|l| {
            l.split('|')
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(str::to_string)
                .collect()
        })
        .collect()
}

/// A cell's leading number ("95.33% [95.27, 95.40]" -> 95.33), and its
/// interval when it has one.
fn cell(c: &str) -> (f64, Option<(f64, f64)>) {
    let n = |s: &str| -> f64 { s.trim().trim_end_matches('%').parse().unwrap() };
    let value = n(c.split_whitespace().next().unwrap());
    let interval = c.find('[').map(|i| {
        let inner = &c[i + 1..c.find(']').unwrap()];
        let (a, b) = inner.split_once(',').unwrap();
        (n(a), n(b))
    });
    (value, interval)
}

/// docs/policies.md's reading of its EOMM table (the paper's four matchers
/// over pool sizes) says what the table's cells say: the ranges of random's
/// and worst's loss against skill and of EOMM's margin are read from the
/// sentence and recomputed from the rows, the ordering is checked interval
/// against interval. The table is a long sweep's output; this checks the
/// prose against it, not the simulator (the engagement tests do that on a
/// smaller copy).
#[test]
fn the_eomm_tables_reading_is_what_its_cells_say() {
    let doc = include_str!("../../../../docs/policies.md");
    let rows = table_rows(doc, "| pool a minute | EOMM | skill | random | worst |");
    assert_eq!(rows.len(), 5, "{rows:?}");
    let text = prose(doc);
    let stated = |before: &str, after: &str| {
        let v = numbers_between(&text, before, after);
        assert_eq!(v.len(), 2, "{before:?}: {v:?}");
        (v[0], v[1])
    };
    let range = |xs: &[f64]| {
        let r = |x: f64| (x * 100.0).round() / 100.0;
        (
            r(xs.iter().copied().fold(f64::INFINITY, f64::min)),
            r(xs.iter().copied().fold(f64::NEG_INFINITY, f64::max)),
        )
    };
    let (mut random_loss, mut worst_loss, mut margins) = (vec![], vec![], vec![]);
    for row in &rows {
        let pool: f64 = row[0].parse().unwrap();
        let [eomm, skill, random, worst] = [1, 2, 3, 4].map(|i| cell(&row[i]));
        let (margin, margin_ci) = cell(&row[5]);
        // "EOMM > skill > random > worst, each step outside seed noise".
        for (hi, lo) in [(eomm, skill), (skill, random), (random, worst)] {
            assert!(hi.1.unwrap().0 > lo.1.unwrap().1, "pool {pool}: {row:?}");
        }
        assert!(margin_ci.unwrap().0 > 0.0, "pool {pool}: {row:?}");
        // The margin column is EOMM's retention over skill's (a paired mean
        // of ratios, so within rounding of the means' ratio).
        let ratio = 100.0 * (eomm.0 / skill.0 - 1.0);
        assert!(
            (ratio - margin).abs() < 0.015,
            "pool {pool}: {ratio} vs {margin}"
        );
        // "inside its 0.3%-5.5%", and "the paper's 0.8-0.9% for pools of
        // 200-500" (to the percent's tenth).
        assert!((0.3..=5.5).contains(&margin), "pool {pool}: {margin}");
        if pool >= 200.0 {
            assert!((0.75..0.95).contains(&margin), "pool {pool}: {margin}");
        }
        random_loss.push(skill.0 - random.0);
        worst_loss.push(skill.0 - worst.0);
        margins.push(margin);
    }
    assert_eq!(
        stated("random retains ", " points less"),
        range(&random_loss)
    );
    assert_eq!(
        stated("points less and worst ", " points less"),
        range(&worst_loss)
    );
    assert_eq!(
        stated("EOMM's margin over skill, ", ", is the paper's"),
        range(&margins)
    );
}

/// docs/policies.md's reading of the 1v1 policy table (the figures that
/// `the_policy_comparison_table_is_what_the_presets_give` checks against
/// the runs) says what the rows say.
#[test]
fn the_policy_tables_reading_is_what_its_rows_say() {
    let doc = include_str!("../../../../docs/policies.md");
    let rows = table_rows(doc, "| policy | wait p50 s | wait p90 s |");
    assert_eq!(rows.len(), 9);
    // policy -> [p50, p90, p99, top p90, spread mean, spread p90, abandon %, matches]
    let fig = |name: &str| -> Vec<f64> {
        let row = rows.iter().find(|r| r[0] == name).unwrap();
        row[1..]
            .iter()
            .map(|c| c.trim_end_matches('%').parse().unwrap())
            .collect()
    };
    let text = prose(doc);
    let (hours, warmup) = {
        let v = numbers_between(&text, "a fresh ticket every 20 s, ", " warm-up");
        (v[0], v[1])
    };
    let brackets = fig("adaptive-brackets");
    let others: Vec<Vec<f64>> = rows
        .iter()
        .filter(|r| r[0] != "adaptive-brackets")
        .map(|r| fig(&r[0]))
        .collect();
    // "adaptive-brackets waits least and abandons least, at twice the
    // spread of the others: the whole queue forms about 5 matches a minute"
    for o in &others {
        assert!(brackets[0] <= o[0] && brackets[1] < o[1] && brackets[2] < o[2]);
        assert!(brackets[6] < o[6]);
    }
    let spread = others.iter().map(|o| o[4]).sum::<f64>() / others.len() as f64;
    assert!(text.contains("abandons least, at twice the spread"));
    assert_eq!(
        (brackets[4] / spread).round(),
        2.0,
        "{} vs {spread}",
        brackets[4]
    );
    let per_minute = numbers_between(&text, "the whole queue forms about ", " matches a minute");
    let ran = brackets[7] / ((hours - warmup) * 60.0);
    assert_eq!(per_minute, vec![ran.round()], "{ran:.2} a minute");
    // "batch-weighted ... adds about a minute to the median wait, a fifth
    // of tickets give up"
    let batch = fig("batch-weighted");
    let mut p50s: Vec<f64> = others
        .iter()
        .filter(|o| **o != batch)
        .map(|o| o[0])
        .collect();
    p50s.sort_by(f64::total_cmp);
    assert_eq!(((batch[0] - p50s[p50s.len() / 2]) / 60.0).round(), 1.0);
    assert!(text.contains("a fifth of tickets give up"));
    assert_eq!((100.0 / batch[6]).round(), 5.0, "{}", batch[6]);
    // "The percent rule waits longest at the median ...; the percentile
    // window has the longest p90 of the group"
    let group = [
        "widening",
        "percent-widening",
        "percentile-window",
        "weighted-score",
        "sweep-prune",
        "virtual-decay",
    ];
    let longest = |i: usize| {
        *group
            .iter()
            .max_by(|a, b| fig(a)[i].total_cmp(&fig(b)[i]))
            .unwrap()
    };
    assert_eq!(longest(0), "percent-widening");
    assert_eq!(longest(1), "percentile-window");
}

/// docs/policies.md's account of the default churn table ("churn after a
/// win 3%, after a loss 5%, 8% / 12% / 16% after two, three, four losses in
/// a row") is the table the scenario layer uses.
#[test]
fn the_default_churn_table_is_the_one_the_docs_give() {
    let text = prose(include_str!("../../../../docs/policies.md"));
    let stated = numbers_between(&text, "(churn after a win ", " losses in a row)");
    let table: Vec<f64> = mmsim_core::model::churn::SequenceChurn::DEFAULT_TABLE
        .iter()
        .map(|&(_, p)| 100.0 * p)
        .collect();
    // The sentence also names "two, three, four" in words, not figures.
    assert_eq!(stated, table);
    let keys: Vec<&str> = mmsim_core::model::churn::SequenceChurn::DEFAULT_TABLE
        .iter()
        .map(|&(k, _)| k)
        .collect();
    assert_eq!(keys, ["W", "L", "LL", "LLL", "LLLL"]);
}
