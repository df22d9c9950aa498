//! The fitted scenario as TOML text: the rules scenario (policy, teams,
//! rating, outcome) kept as written, its run, population and arrivals
//! replaced by what the log gave, each fitted key with a comment saying
//! how it was fitted and how sure the fit is.

use crate::fit::Fit;
use crate::survival::{Estimate, Family};
use toml_edit::{value, Array, DocumentMut, InlineTable, Item, Table};

/// The rules a log is fitted under when no scenario gives them: a
/// widening window on an Elo ladder (docs/fit.md says why to give yours).
pub const DEFAULT_RULES: &str = r#"[run]
name = "fitted"
seed = 1

[population]
skill = { dist = "normal", mean = 1500, sd = 350 }

[policy]
kind = "widening"
base = 100
rate_per_s = 5
max = 400

[rating]
system = "elo"
"#;

fn secs(s: f64) -> String {
    format!("{}s", (s * 1000.0).round() / 1000.0)
}

fn ci(e: &Estimate, digits: usize) -> String {
    format!(
        "{:.*} [{:.*}, {:.*}]",
        digits, e.value, digits, e.lo, digits, e.hi
    )
}

fn comment(t: &mut Table, key: &str, lines: &[String]) {
    if let Some(mut k) = t.key_mut(key) {
        let text: String = lines.iter().map(|l| format!("# {l}\n")).collect();
        k.leaf_decor_mut().set_prefix(text);
    }
}

fn table<'a>(doc: &'a mut DocumentMut, name: &str) -> &'a mut Table {
    if !doc.contains_table(name) {
        doc.insert(name, Item::Table(Table::new()));
    }
    doc[name].as_table_mut().expect("a table")
}

/// The ratings the log saw, written as a ladder for `[population]
/// ratings_file` (`mmsim fit --ladder`): the file's name and its players.
pub struct Ladder<'a> {
    pub file: &'a str,
    pub players: usize,
}

/// Why the rules scenario (`--check`'s) cannot take a fit.
#[derive(Debug, thiserror::Error)]
pub enum FitScenarioError {
    /// The rules scenario's text is not TOML; what the parser said.
    #[error("the rules scenario is not TOML: {0}")]
    NotToml(String),
    /// The log names a role the rules' `[roles]` does not.
    #[error("the log's role `{role}` is not one of the rules scenario's [roles] names ({names})")]
    UnknownRole {
        /// The log's role.
        role: String,
        /// The rules' role names, comma-separated.
        names: String,
    },
}

/// Scenario text for `fit` under `rules` (a scenario's TOML); errors name
/// what in `rules` cannot take a fit.
pub fn scenario_text(
    fit: &Fit,
    rules: Option<&str>,
    name: &str,
    ladder: Option<&Ladder>,
) -> Result<String, FitScenarioError> {
    let mut doc: DocumentMut = rules
        .unwrap_or(DEFAULT_RULES)
        .parse()
        .map_err(|e: toml_edit::TomlError| FitScenarioError::NotToml(e.to_string()))?;
    // What a fit replaces, and what would contradict it.
    doc.remove("sweep");
    doc.remove("arrivals");
    let hours = (fit.log_end_s / 3600.0).ceil().max(1.0);
    {
        let run = table(&mut doc, "run");
        run.insert("name", value(name));
        run.insert("duration", value(format!("{hours}h")));
        let warmup_h = (fit.log_start_s / 3600.0).round();
        run.insert("warmup", value(format!("{warmup_h}h")));
        run.remove("replications");
        comment(
            run,
            "duration",
            &[format!(
                "the log's length, {:.0} s, in whole hours; time 0 is the log's first midnight",
                fit.log_end_s
            )],
        );
        comment(
            run,
            "warmup",
            &[if warmup_h > 0.0 {
                format!("the hours of the first day before the log's first ticket, at the fitted rates; the log is taken to start with an empty queue at {warmup_h:02}h")
            } else {
                "the log is taken to start with an empty queue at time 0, as a run does".into()
            }],
        );
    }
    if rules.is_none() {
        if let Some(f) = &fit.format {
            let m = table(&mut doc, "match");
            m.insert("teams", value(i64::from(f.teams)));
            m.insert("team_size", value(i64::from(f.team_size)));
            comment(
                m,
                "teams",
                &[format!("from the log's `match` column: {}", f.from)],
            );
        }
    }
    {
        let p = table(&mut doc, "population");
        p.remove("trace");
        p.remove("ratings_file");
        p.insert("size", value(fit.population.size as i64));
        comment(
            p,
            "size",
            &[format!(
                "{} distinct players in {} fresh draws; {}{}",
                fit.population.distinct_players,
                fit.population.players_drawn,
                fit.population.how,
                match fit.population.interval {
                    Some((lo, Some(hi))) => format!(
                        "; 95% interval [{lo:.0}, {hi:.0}] from the draws' sampling alone; players queued, playing or about to queue again cannot be drawn fresh, so a busy game shows fewer repeats than uniform draws give and the size runs high (docs/fit.md)"
                    ),
                    Some((lo, None)) => format!(
                        "; 95% interval from {lo:.0} up, no upper end: the log barely repeats"
                    ),
                    None => String::new(),
                }
            )],
        );
        if let Some(r) = &fit.ratings {
            // A seasoned ladder draws ratings as skill plus noise that
            // leaves a correlation ρ: the ratings' spread is the skills'
            // over ρ, so the skills are the ratings pulled in by ρ about
            // their mean (exact for normal skills).
            let rho = p
                .get("seasoned")
                .and_then(|s| s.get("correlation"))
                .and_then(|c| c.as_float().or_else(|| c.as_integer().map(|i| i as f64)))
                .filter(|r| *r > 0.0 && *r <= 1.0);
            let centre = r.mean.value;
            let mut t = InlineTable::new();
            t.insert("dist", "quantiles".into());
            let mut rows = Array::new();
            for q in &r.quantiles {
                let v = match rho {
                    Some(rho) => centre + rho * (q[1] - centre),
                    None => q[1],
                };
                let mut row = Array::new();
                row.push(q[0]);
                row.push((v * 10.0).round() / 10.0);
                rows.push(row);
            }
            t.insert("table", toml_edit::Value::Array(rows));
            let shrink = rho.map(|rho| {
                format!("pulled in by the rules' seasoned correlation {rho} about their mean (ratings are skill plus noise)")
            });
            p.insert("skill", value(t));
            if let Some(l) = ladder {
                p.remove("seasoned");
                p.insert("size", value(l.players as i64));
                p.insert("ratings_file", value(l.file));
                comment(
                    p,
                    "ratings_file",
                    &[format!(
                        "the ladder the log saw: its {} players, each at their first rating (taken as their true skill too; the skill prior above then only names the scale)",
                        l.players
                    )],
                );
                comment(
                    p,
                    "size",
                    &[format!(
                        "the {} players of the ladder file (the log's {} fresh draws suggest {} in all)",
                        l.players, fit.population.players_drawn, fit.population.size
                    )],
                );
            }
            comment(
                p,
                "skill",
                &[
                    format!(
                        "the {} players' first ratings as the skill prior (empirical quantiles){}",
                        r.players,
                        shrink.map_or(String::new(), |s| format!(", {s}"))
                    ),
                    format!(
                        "normal view: mean {}, sd {} (95% intervals)",
                        ci(&r.mean, 1),
                        ci(&r.sd, 1)
                    ),
                ],
            );
        }
    }
    let a = table(&mut doc, "arrivals");
    let ar = &fit.arrivals;
    a.insert("rate_per_s", value(round6(ar.rate_per_s.value)));
    comment(
        a,
        "rate_per_s",
        &[format!(
            "{} fresh parties (returns after a match left out); the mean of the hourly rates, 95% interval {}",
            ar.fresh_tickets,
            ci(&ar.rate_per_s, 5)
        )],
    );
    if let Some(profile) = &ar.daily_profile {
        let mut arr = Array::new();
        for m in profile {
            arr.push(round6(*m));
        }
        a.insert("daily_profile", value(arr));
        let mut lines = vec![
            "parties per second in each hour of the day (exact Poisson 95% interval), over the mean:".to_string(),
        ];
        for h in &ar.hours {
            lines.push(match h.rate_per_s {
                Some(r) => format!(
                    "  {:02}h: {} parties in {:.0} s: {}",
                    h.hour,
                    h.arrivals,
                    h.exposure_s,
                    ci(&r, 5)
                ),
                None => format!("  {:02}h: not in the log (multiplier 1)", h.hour),
            });
        }
        comment(a, "daily_profile", &lines);
    }
    let sizes = fit.party_sizes.iter().map(|p| p.size).max().unwrap_or(1);
    let mut weights = Array::new();
    for s in 1..=sizes {
        let w = fit
            .party_sizes
            .iter()
            .find(|p| p.size == s)
            .map_or(0.0, |p| p.share.value);
        weights.push(round6(w));
    }
    a.insert("party_sizes", value(weights));
    let mut lines = vec!["share of fresh tickets by party size (Wilson 95% interval):".to_string()];
    for p in &fit.party_sizes {
        lines.push(format!(
            "  {}: {} tickets, {}",
            p.size,
            p.tickets,
            ci(&p.share, 4)
        ));
    }
    comment(a, "party_sizes", &lines);

    let pat = &fit.patience;
    let mut t = InlineTable::new();
    let mut lines = vec![format!(
        "survival analysis of {} waits: {} abandons are events, matched and still-waiting tickets censored",
        pat.tickets, pat.abandons
    )];
    match pat.comparison.best() {
        None => {
            t.insert("dist", "never".into());
        }
        Some(best) => {
            let p = |n: &str| best.param(n).expect("a fitted family has its parameters");
            match best.family {
                Family::Exponential => {
                    t.insert("dist", "exponential".into());
                    t.insert("mean", secs(p("mean_s").value).into());
                    lines.push(format!(
                        "exponential MLE: mean {} s (95%)",
                        ci(&p("mean_s"), 1)
                    ));
                }
                Family::Weibull => {
                    t.insert("dist", "weibull".into());
                    t.insert("shape", round6(p("shape").value).into());
                    t.insert("scale", secs(p("scale_s").value).into());
                    lines.push(format!(
                        "Weibull MLE: shape {}, scale {} s (95%)",
                        ci(&p("shape"), 3),
                        ci(&p("scale_s"), 1)
                    ));
                }
                Family::LogNormal => {
                    t.insert("dist", "log-normal".into());
                    t.insert("median", secs(p("median_s").value).into());
                    t.insert("sigma", round6(p("sigma").value).into());
                    lines.push(format!(
                        "log-normal MLE: median {} s, sigma {} (95%)",
                        ci(&p("median_s"), 1),
                        ci(&p("sigma"), 3)
                    ));
                }
            }
            lines.push("chosen by AIC among:".into());
            for f in &pat.comparison.fits {
                lines.push(format!(
                    "  {}: AIC {:.1} (+{:.1}), mean {} s",
                    f.family.name(),
                    f.aic,
                    f.delta_aic,
                    ci(&f.param("mean_s").expect("every family has a mean"), 1)
                ));
            }
        }
    }
    a.insert("patience", value(t));
    comment(a, "patience", &lines);

    let r = &fit.returns;
    let q = r.requeue_prob.map_or(0.0, |p| p.value);
    a.insert("requeue_prob", value(round6(q)));
    comment(
        a,
        "requeue_prob",
        &[match &r.requeue_prob {
            Some(p) => format!(
                "{} of {} matched tickets queued again ({}); Wilson 95% interval {}",
                r.returned,
                r.matched_eligible,
                r.recognised_by,
                ci(p, 4)
            ),
            None => "too few matched tickets to fit: 0".into(),
        }],
    );
    if let Some(th) = &r.think_s {
        a.insert("think_time", value(secs(th.value)));
        comment(
            a,
            "think_time",
            &[format!(
                "mean pause from the {} to the return, exponential MLE, 95% interval {} s",
                r.measured_from.replace('_', " "),
                ci(th, 1)
            )],
        );
    }
    let mut notes: Vec<String> = fit
        .notes
        .iter()
        .map(|n| format!("# note ({}): {}\n", n.quantity, n.message))
        .collect();
    notes.extend(regions(&mut doc, fit));
    notes.extend(roles(&mut doc, fit)?);
    let mut text = doc.to_string();
    let mut header = String::from(
        "# Fitted by `mmsim fit` from a ticket log; fit.json and fit.html beside it hold every estimate.\n",
    );
    for n in notes {
        header.push_str(&n);
    }
    text.insert_str(0, &header);
    Ok(text)
}

/// The log's home regions and their pings as `[regions]`, under the rules'
/// own latency rule (`max_ping_ms`, `expansions`, `min_ping_ms` kept): the
/// data centres the log names, each home's share of the players and its
/// players' median ping to each, and the spread about those medians. A log
/// with regions but rules without a latency rule gets a note instead: a
/// latency limit is the matchmaker's, not the log's. Returns the notes.
fn regions(doc: &mut DocumentMut, fit: &Fit) -> Vec<String> {
    if fit.home_pings.is_empty() {
        return Vec::new();
    }
    let Some(r) = doc.get_mut("regions").and_then(Item::as_table_mut) else {
        return vec![
            "# note (regions): the log gives home regions and pings (fit.json); they are written here as [regions] when the rules scenario (--check) has a [regions] section, whose latency rule they run under\n".into(),
        ];
    };
    let dcs: Array = fit.mean_ping_ms.iter().map(|(d, _)| d.as_str()).collect();
    r.insert("data_centres", value(dcs));
    comment(
        r,
        "data_centres",
        &[
            "the data centres the log's pings name; the latency rule below is the rules scenario's"
                .into(),
        ],
    );
    let players: usize = fit.home_pings.iter().map(|h| h.players).sum();
    let mut homes = toml_edit::ArrayOfTables::new();
    for h in &fit.home_pings {
        let mut t = Table::new();
        t.insert("name", value(h.name.as_str()));
        let share = fit
            .regions
            .iter()
            .find(|s| s.name == h.name)
            .map(|s| s.share);
        t.insert(
            "share",
            value(round6(
                share
                    .as_ref()
                    .map_or(h.players as f64 / players as f64, |s| s.value),
            )),
        );
        let pings: Array = h
            .median_ping_ms
            .iter()
            .map(|m| (m.round() as i64).clamp(0, 60_000))
            .collect();
        t.insert("ping_ms", value(pings));
        comment(
            &mut t,
            "share",
            &[match &share {
                Some(s) => format!(
                    "{} of the log's players live here; Wilson 95% interval {}",
                    h.players,
                    ci(s, 4)
                ),
                None => format!("{} of the log's players live here", h.players),
            }],
        );
        comment(
            &mut t,
            "ping_ms",
            &["the median ping of its players to each data centre".into()],
        );
        homes.push(t);
    }
    r.insert("homes", Item::ArrayOfTables(homes));
    if let Some(spread) = fit.ping_spread {
        r.insert("ping_spread", value(round6(spread.clamp(0.0, 2.0))));
        comment(
            r,
            "ping_spread",
            &["the sd of ln(ping / its home's median) over every player and data centre".into()],
        );
    }
    Vec::new()
}

/// The log's main roles as `[roles]` shares, and the share of players who
/// also accept a second role, under the rules' own role names and
/// composition (the log has players, not teams' compositions). A role the
/// log names that the rules do not is refused; rules without `[roles]` get
/// a note. Returns the notes.
fn roles(doc: &mut DocumentMut, fit: &Fit) -> Result<Vec<String>, FitScenarioError> {
    if fit.main_roles.is_empty() {
        return Ok(Vec::new());
    }
    let Some(r) = doc.get_mut("roles").and_then(Item::as_table_mut) else {
        return Ok(vec![
            "# note (roles): the log gives players' roles (fit.json); they are written here as [roles] when the rules scenario (--check) has a [roles] section, whose composition they fill\n".into(),
        ]);
    };
    let names: Vec<String> = r
        .get("names")
        .and_then(Item::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    if let Some(extra) = fit.main_roles.iter().find(|s| !names.contains(&s.name)) {
        return Err(FitScenarioError::UnknownRole {
            role: extra.name.clone(),
            names: names.join(", "),
        });
    }
    let shares: Array = names
        .iter()
        .map(|n| {
            round6(
                fit.main_roles
                    .iter()
                    .find(|s| &s.name == n)
                    .map_or(0.0, |s| s.share.value),
            )
        })
        .collect();
    r.insert("shares", value(shares));
    let lines: Vec<String> = fit
        .main_roles
        .iter()
        .map(|s| {
            format!(
                "{}: main role of {} players; Wilson 95% interval {}",
                s.name,
                s.players,
                ci(&s.share, 4)
            )
        })
        .collect();
    comment(r, "shares", &lines);
    if let Some(p) = &fit.second_role {
        r.insert("second_prob", value(round6(p.value)));
        comment(
            r,
            "second_prob",
            &[format!(
                "players the log gives two roles or more, of those with roles; Wilson 95% interval {}",
                ci(p, 4)
            )],
        );
    }
    Ok(Vec::new())
}

fn round6(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}
