//! One source for every number on the report: each preset is run briefly by
//! the real binary, and every figure its report prints in a plot caption or
//! the headline strip is checked against the `summary.json` beside it.

use crate::common::{mmsim, scenario, stderr};
use serde_json::Value;

/// A printed number (`12.5`, `1.2k`, `3.25M`, `27.74%`) and how far from the
/// exact value its last digit allows.
fn parse(printed: &str) -> (f64, f64) {
    let t = printed.trim_end_matches(['%', '.', ',', ';', ')']);
    let (num, mult) = match t.strip_suffix('k') {
        Some(n) => (n, 1e3),
        None => match t.strip_suffix('M') {
            Some(n) => (n, 1e6),
            None => (t, 1.0),
        },
    };
    let x: f64 = num
        .parse()
        .unwrap_or_else(|_| panic!("not a number: {printed}"));
    let decimals = num.split_once('.').map_or(0, |(_, d)| d.len()) as i32;
    (x * mult, 0.5 * 10f64.powi(-decimals) * mult + 1e-9)
}

/// Asserts that `printed` is `exact` to the digits printed.
fn same(what: &str, printed: &str, exact: f64) {
    let (x, tol) = parse(printed);
    assert!(
        (x - exact).abs() <= tol,
        "{what}: the page says {printed}, summary.json {exact}"
    );
}

/// The word after `before` in `text` (a number, by the captions' wording).
fn after<'a>(text: &'a str, before: &str) -> &'a str {
    let i = text
        .find(before)
        .unwrap_or_else(|| panic!("{before:?} not in {text:?}"));
    text[i + before.len()..].split_whitespace().next().unwrap()
}

fn at<'a>(v: &'a Value, path: &str) -> &'a Value {
    path.split('.').fold(v, |v, k| &v[k])
}

fn num(v: &Value, path: &str) -> f64 {
    at(v, path)
        .as_f64()
        .unwrap_or_else(|| panic!("{path} is not a number"))
}

/// Every `<figcaption>` by its figure's id.
fn captions(page: &str) -> Vec<(String, String)> {
    page.split("<figure id=\"")
        .skip(1)
        .map(|f| {
            let id = f[..f.find('"').unwrap()].to_string();
            let c = f.split("<figcaption>").nth(1).unwrap();
            let c = c[..c.find(" <a class=\"file\"").unwrap()].replace("&#39;", "'");
            (id, c)
        })
        .collect()
}

fn check_preset(file: &str, sets: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let mut args = vec!["run", file, "--quiet", "--out", out.to_str().unwrap()];
    for s in sets {
        args.extend(["--set", s]);
    }
    let path = scenario(file);
    args[1] = &path;
    let o = mmsim(&args);
    assert!(o.status.success(), "{file}: {}", stderr(&o));
    let s: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(!page.contains("NaN") && !page.contains("[]"), "{file}");

    // The headline strip: each card's value is the summary's at its key.
    let mut cards = 0;
    for card in page.split("<div class=\"card\" data-key=\"").skip(1) {
        let key = &card[..card.find('"').unwrap()];
        let value = card.split("<div class=\"value\">").nth(1).unwrap();
        let value = &value[..value.find("</div>").unwrap()];
        let printed = value.split_whitespace().next().unwrap();
        if printed == "–" {
            assert!(
                at(&s, key).is_null(),
                "{file}: {key} shows a dash but has a value"
            );
            cards += 1;
            continue;
        }
        let exact = num(&s, key);
        let scale = if value.ends_with('%') || value.ends_with(" pp") {
            100.0
        } else {
            1.0
        };
        same(&format!("{file} headline {key}"), printed, scale * exact);
        cards += 1;
    }
    assert!(cards >= 8, "{file}: {cards} headline cards");

    // Every caption figure, plot by plot.
    let caps = captions(&page);
    assert!(caps.len() >= 5, "{file}: {} plots", caps.len());
    let matches = num(&s, "matches");
    for (id, c) in &caps {
        let what = format!("{file} {id}");
        match id.as_str() {
            "wait_hist" => same(&what, after(c, "found a match."), num(&s, "wait_s.n")),
            "wait_cdf" => {
                same(&what, after(c, "Share of the"), num(&s, "wait_s.n"));
                for p in ["p50", "p90", "p99", "max"] {
                    same(
                        &what,
                        after(c, &format!(" {p} ")),
                        num(&s, &format!("wait_s.{p}")),
                    );
                }
            }
            "wait_by_decile" => same(&what, after(c, "wait of the"), num(&s, "wait_s.n")),
            "spread_hist" | "team_gap_hist" => same(&what, after(c, "after warm-up."), matches),
            "gold_integral_hist" => same(
                &what,
                after(c, "a closer game."),
                num(&s, "gold_integral.n"),
            ),
            "survivors_hist" => {
                let counts = at(&s, "survivors_hist.counts").as_array().unwrap();
                let total: f64 = counts.iter().map(|c| num(c, "matches")).sum();
                let big: f64 = counts
                    .iter()
                    .filter(|c| num(c, "survivors") >= 10.0)
                    .map(|c| num(c, "matches"))
                    .sum();
                same(&what, after(c, "side, over"), total);
                same(&what, after(c, "warm-up;"), big);
                same(
                    &what,
                    after(c, "of them (").trim_end_matches("%)"),
                    100.0 * num(&s, "survivors_10_plus_share"),
                );
            }
            "queue_length" => {
                let hours = at(&s, "by_hour").as_array().unwrap();
                let samples: f64 = hours.iter().map(|h| num(h, "queue_samples")).sum();
                let most = hours
                    .iter()
                    .filter_map(|h| h["queue_max_tickets"].as_f64())
                    .fold(0.0, f64::max);
                same(&what, after(c, "After warm-up:"), samples);
                same(&what, after(c, "at most"), most);
            }
            "wait_by_hour" => {
                let hours = at(&s, "by_hour").as_array().unwrap();
                let with = hours.iter().filter(|h| num(h, "matched") > 0.0).count();
                same(&what, after(c, "warm-up;"), with as f64);
            }
            "ladder_by_hour" => {
                let hours = at(&s, "by_hour").as_array().unwrap();
                let with = hours.iter().filter(|h| num(h, "matches") > 0.0).count();
                same(&what, after(c, "after warm-up ("), with as f64);
            }
            "upset_by_gap" => {
                let bins = at(&s, "upset_by_gap.skill").as_array().unwrap();
                let n: f64 = bins.iter().map(|b| num(b, "matches")).sum();
                same(&what, after(c, "after warm-up ("), n);
            }
            "wait_by_mode" => {
                let modes = at(&s, "modes.by_mode").as_array().unwrap();
                let matched: f64 = modes.iter().map(|m| num(m, "matched")).sum();
                same(&what, after(c, "wait of the"), matched);
            }
            "rank_corr" => assert!(
                !c.chars().any(|ch| ch.is_ascii_digit() && ch != '1'),
                "{what}: {c}"
            ),
            other => panic!("{file}: plot {other} has no caption check: add one"),
        }
    }
}

// The presets as shipped (each runs in a few seconds); the Dota day shrunk
// to a small population and rate, kept a full day so by_hour has 24 hours.
#[test]
fn every_caption_and_headline_figure_is_the_summarys_gamedev_1v1() {
    check_preset("gamedev-1v1.toml", &[]);
}

#[test]
fn every_caption_and_headline_figure_is_the_summarys_armored_warfare() {
    check_preset("armored-warfare-15v15.toml", &[]);
}

#[test]
fn every_caption_and_headline_figure_is_the_summarys_dota2() {
    check_preset("dota2-5v5.toml", &[]);
}

#[test]
fn every_caption_and_headline_figure_is_the_summarys_dota2_day() {
    check_preset(
        "dota2-day.toml",
        &["population.size=20000", "arrivals.rate_per_s=1"],
    );
}
