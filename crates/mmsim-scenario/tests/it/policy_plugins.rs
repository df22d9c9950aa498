//! Checks across all policies: bad parameters are refused with the key
//! named, the catalogue lists every policy, and every policy runs a real
//! scenario deterministically in both modes.
//!
//! Moved from mmsim-core's `policy/tests.rs`: these checks build their world from
//! scenario text, which only this crate reads.

#![allow(unused_imports)]
use mmsim_scenario::FromScenario;

use mmsim_core::policy::CATALOGUE;
use mmsim_scenario::{from_text, ScenarioError};
use std::path::Path;

fn base(policy: &str) -> String {
    format!(
        r#"[run]
name = "t"
seed = 3
duration = "2h"
warmup = "10m"

[population]
size = 800
skill = {{ dist = "normal", mean = 1500, sd = 350, min = 0, max = 3000 }}

[arrivals]
rate_per_s = 0.5
patience = {{ dist = "exponential", mean = "3m" }}
requeue_prob = 0.5
think_time = "30s"

[policy]
{policy}
"#
    )
}

fn error(policy: &str) -> String {
    match from_text(&base(policy), Path::new("t.toml"), &[]) {
        Ok(_) => panic!("accepted: {policy}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn bad_parameters_name_their_key() {
    let cases = [
        (
            "kind = \"percent-widening\"\nstep = \"0s\"",
            "policy.step",
            "longer than 0s",
        ),
        (
            "kind = \"percent-widening\"\nstep_pct = -5",
            "policy.step_pct",
            "zero or more",
        ),
        (
            "kind = \"percent-widening\"\nmax_pct = 2",
            "policy.max_pct",
            "at least `step_pct`",
        ),
        (
            "kind = \"percentile-window\"\nhalf_width_pct = 120",
            "policy.half_width_pct",
            "at most 100",
        ),
        (
            "kind = \"percentile-window\"\nrefresh = \"0s\"",
            "policy.refresh",
            "longer than 0s",
        ),
        (
            "kind = \"percentile-window\"\nwiden_pct_per_s = -1",
            "policy.widen_pct_per_s",
            "zero or more",
        ),
        (
            "kind = \"adaptive-brackets\"\nbrackets = 0",
            "policy.brackets",
            "1 or more",
        ),
        (
            "kind = \"adaptive-brackets\"\nwidth = 0",
            "policy.width",
            "more than 0",
        ),
        (
            "kind = \"adaptive-brackets\"\nsplit_at = 0",
            "policy.split_at",
            "1 or more",
        ),
        (
            "kind = \"adaptive-brackets\"\ninterval = \"0s\"",
            "policy.interval",
            "longer than 0s",
        ),
        (
            "kind = \"adaptive-brackets\"\nmerge_after = 0",
            "policy.merge_after",
            "1 or more",
        ),
        (
            "kind = \"batch-weighted\"\ntick = \"0s\"",
            "policy.tick",
            "longer than 0s",
        ),
        (
            "kind = \"batch-weighted\"\nmode = \"event\"",
            "policy.mode",
            "must be \"tick\"",
        ),
        (
            "kind = \"batch-weighted\"\ncandidates = 0",
            "policy.candidates",
            "1 or more",
        ),
        (
            "kind = \"weighted-score\"\nwait_weight = -1",
            "policy.wait_weight",
            "zero or more",
        ),
        (
            "kind = \"weighted-score\"\nrecent_weight = -0.5",
            "policy.recent_weight",
            "zero or more",
        ),
        (
            "kind = \"weighted-score\"\nrating_weight = 0",
            "policy.rating_weight",
            "more than 0",
        ),
        (
            "kind = \"weighted-score\"\nfade_matches = 0",
            "policy.fade_matches",
            "1 or more",
        ),
        (
            "kind = \"sweep-prune\"\nrate_per_s = -1",
            "policy.rate_per_s",
            "zero or more",
        ),
        (
            "kind = \"sweep-prune\"\nbase = 100\nmax = 50",
            "policy.max",
            "at least `base`",
        ),
        (
            "kind = \"sweep-prune\"\ntick = \"0s\"",
            "policy.tick",
            "longer than 0s",
        ),
        (
            "kind = \"virtual-decay\"\nmin_weight = 0",
            "policy.min_weight",
            "more than 0",
        ),
        (
            "kind = \"virtual-decay\"\nmax_decay = 0",
            "policy.max_decay",
            "more than 0",
        ),
        (
            "kind = \"virtual-decay\"\nlimit = -1",
            "policy.limit",
            "zero or more",
        ),
    ];
    for (policy, key, what) in cases {
        let err = error(policy);
        assert!(err.contains(key) && err.contains(what), "{policy}: {err}");
        assert!(err.contains("t.toml:"), "no line for {policy}: {err}");
    }
}

#[test]
fn unknown_keys_of_a_new_policy_are_refused() {
    let err = error("kind = \"sweep-prune\"\nbse = 100");
    assert!(err.contains("bse"), "{err}");
}

#[test]
fn the_catalogue_lists_every_policy_with_its_parameters() {
    let kinds = mmsim_core::policy::PolicyConfig::NAMES;
    assert_eq!(CATALOGUE.len(), kinds.len());
    // `ruleset` has no parameters of its own: it runs a [ruleset] file
    // (policy::ruleset's tests and tests/it/rulesets.rs).
    for &kind in kinds.iter().filter(|k| **k != "ruleset") {
        // `eomm` and `worst` predict with the engagement model: they need
        // the section.
        let extra = if kind == "eomm" || kind == "worst" {
            "\n[engagement]"
        } else {
            ""
        };
        let loaded = from_text(
            &base(&format!("kind = \"{kind}\"{extra}")),
            Path::new("t.toml"),
            &[],
        )
        .unwrap_or_else(|e| panic!("{kind} defaults invalid: {e}"));
        assert_eq!(loaded.scenario.policy.name(), kind);
        let entry = CATALOGUE
            .iter()
            .find(|e| e.name == kind)
            .unwrap_or_else(|| panic!("{kind} missing from CATALOGUE"));
        let (source, params) = (entry.source, entry.parameters);
        // Every policy names the seed passage it comes from.
        assert!(
            source.contains("gamedev thread")
                || source.contains("Dota 2 post")
                || source.contains("EOMM (WWW 2017)"),
            "{kind}"
        );
        // Every parameter the policy serialises is listed.
        let json = serde_json::to_value(&loaded.scenario.policy).unwrap();
        for key in json.as_object().unwrap().keys().filter(|k| *k != "kind") {
            assert!(
                params.contains(key.as_str()),
                "{kind}: `{key}` not in catalogue"
            );
        }
    }
}

#[test]
fn every_policy_runs_in_each_mode_and_repeats_itself() {
    // Every policy but quality and the EOMM paper's four, which have no
    // `mode`: they only tick (run in `eomm_pairs_every_tick_and_repeats_itself`
    // and `the_paper_baselines_pair_every_tick_and_repeat_themselves`).
    let kinds = mmsim_core::policy::PolicyConfig::NAMES
        .iter()
        .copied()
        .filter(|k| !["quality", "eomm", "skill", "random", "worst", "ruleset"].contains(k));
    for kind in kinds {
        for mode in ["event", "tick"] {
            let text = base(&format!("kind = \"{kind}\"\nmode = \"{mode}\""));
            let s = match from_text(&text, Path::new("t.toml"), &[]) {
                Ok(l) => l.scenario,
                Err(ScenarioError::Invalid { key, .. }) if kind == "batch-weighted" => {
                    assert_eq!(key, "policy.mode");
                    continue;
                }
                Err(e) => panic!("{kind} {mode}: {e}"),
            };
            let a = mmsim_scenario::run::run_keeping(&s, 3);
            let b = mmsim_scenario::run::run_keeping(&s, 3);
            assert_eq!(a.summary, b.summary, "{kind} {mode} not deterministic");
            let matches = a.summary["matches"].as_u64().unwrap_or(0);
            assert!(matches > 100, "{kind} {mode}: only {matches} matches");
        }
    }
}

#[test]
fn eomm_pairs_every_tick_and_repeats_itself() {
    let text = base("kind = \"eomm\"\n\n[engagement]\nloss = 1.0");
    let s = from_text(&text, Path::new("t.toml"), &[]).unwrap().scenario;
    let a = mmsim_scenario::run::run_keeping(&s, 3);
    let b = mmsim_scenario::run::run_keeping(&s, 3);
    assert_eq!(a.summary, b.summary, "eomm not deterministic");
    let matches = a.summary["matches"].as_u64().unwrap_or(0);
    assert!(matches > 100, "eomm: only {matches} matches");
    // Every pair is within the default 400-point gap.
    assert!(a.records.matches.iter().all(|m| m.spread_rating <= 400.0));
}

#[test]
fn the_paper_baselines_pair_every_tick_and_repeat_themselves() {
    for (kind, extra) in [
        ("skill", ""),
        ("random", ""),
        ("worst", "\n[engagement]\nmodel = \"sequence\""),
    ] {
        let text = base(&format!("kind = \"{kind}\"\n{extra}"));
        let s = from_text(&text, Path::new("t.toml"), &[]).unwrap().scenario;
        let a = mmsim_scenario::run::run_keeping(&s, 3);
        let b = mmsim_scenario::run::run_keeping(&s, 3);
        assert_eq!(a.summary, b.summary, "{kind} not deterministic");
        let matches = a.summary["matches"].as_u64().unwrap_or(0);
        assert!(matches > 100, "{kind}: only {matches} matches");
    }
}

#[test]
fn a_free_pass_walks_outward_and_skips_taken_tickets() {
    use mmsim_core::model::{PlayerId, SimTime, TicketId};
    use mmsim_core::policy::FreePass;
    use mmsim_core::pool::{Pool, WaitingTicket};
    let ratings = [1000.0, 1100.0, 1200.0, 1300.0, 1400.0, 1450.0];
    let pool = Pool::from_tickets(ratings.iter().enumerate().map(|(i, &r)| WaitingTicket {
        id: TicketId(i as u32),
        players: smallvec::smallvec![PlayerId(i as u32)],
        rating: r,
        enqueued: SimTime::from_ms(i as u64),
        requeue: false,
        roles: Default::default(),
    }));
    let mut pass = FreePass::new(&pool);
    let walk = |pass: &mut FreePass<'_>, pos: usize, max: f64| {
        let mut seen = Vec::new();
        pass.walk(pos, max, |d, _, t| {
            seen.push((t.id.0, d));
            true
        });
        seen
    };
    // From 1200: 1100 and 1300 tie at 100 (lower first), then 1000 and 1400.
    assert_eq!(
        walk(&mut pass, 2, 200.0),
        vec![(1, 100.0), (3, 100.0), (0, 200.0), (4, 200.0)]
    );
    pass.take(1);
    pass.take(3);
    pass.take(4);
    assert_eq!(walk(&mut pass, 2, 1000.0), vec![(0, 200.0), (5, 250.0)]);
    assert_eq!(pass.seed(1), None, "taken tickets are no longer seeds");
    assert_eq!(pass.seed(5).map(|(pos, t)| (pos, t.id.0)), Some((5, 5)));
}

#[test]
fn an_unknown_key_beside_the_shared_cadence_lists_every_key_in_order() {
    // The cadence is flattened in; the message must still list the keys
    // as serde does for a plain struct.
    let err = error("kind = \"sweep-prune\"\nbse = 100");
    assert!(
        err.contains(
            "`policy.bse` is not a key here; allowed: `base`, `rate_per_s`, `max`, `mode`, `recheck`, `tick`"
        ),
        "{err}"
    );
    let err = error("kind = \"fixed-limit\"\nrecheck = \"1s\"");
    assert!(
        err.contains("`policy.recheck` is not a key here; allowed: `limit`, `mode`, `tick`"),
        "{err}"
    );
}

#[test]
fn the_cadence_keeps_each_policy_default_mode() {
    use mmsim_core::policy::{Mode, PolicyConfig};
    for config in PolicyConfig::defaults() {
        let json = serde_json::to_value(&config).unwrap();
        let Some(mode) = json.get("mode") else {
            continue;
        };
        let tick_first = matches!(config.name(), "sweep-prune" | "batch-weighted");
        let want = if tick_first { Mode::Tick } else { Mode::Event };
        assert_eq!(
            mode,
            &serde_json::to_value(want).unwrap(),
            "{}",
            config.name()
        );
    }
}

#[test]
fn every_declared_name_is_its_serde_tag_and_round_trips() {
    use mmsim_core::policy::PolicyConfig;
    assert_eq!(PolicyConfig::defaults().len(), PolicyConfig::NAMES.len());
    for (config, name) in PolicyConfig::defaults().iter().zip(PolicyConfig::NAMES) {
        assert_eq!(config.name(), *name);
        let json = serde_json::to_value(config).unwrap();
        assert_eq!(json["kind"], *name);
        let text = toml::to_string(config).unwrap();
        assert_eq!(&toml::from_str::<PolicyConfig>(&text).unwrap(), config);
        if *name == "ruleset" {
            // Without the file its [ruleset] section names, it is refused.
            assert!(config.validate().is_err());
            continue;
        }
        config.validate().unwrap();
        config.build();
    }
}
