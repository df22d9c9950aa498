//! Separate ladders and unlocks (`[modes] ladders`, `ladder`,
//! `unlock_games`) on a small run: each ladder rates only its own modes'
//! matches, nobody plays a locked mode before reaching its games, ladders
//! over the same players drift apart, a mode's policy pairs by its own
//! ladder's ratings (the ticket's and the player records'), and one named
//! ladder is the shared ladder under another name. Checked from the run's
//! end state against the match records, not against the engine's own
//! counters alone.

use mmsim_core::engine::modes::LadderPlayers;
use mmsim_scenario::run::{run_keeping, KeptRun};
use std::path::Path;

/// Games a player needs for ranked in `SCENARIO`.
const UNLOCK: u32 = 20;

/// 2v2 with duos, everyone new (no games before the run): ranked opens
/// after `UNLOCK` games, normal to all; each on its own ladder.
const SCENARIO: &str = r#"
[run]
name = "ladders"
seed = 3
duration = "10h"
warmup = "1h"

[population]
size = 240
skill = { dist = "normal", mean = 1500, sd = 350 }

[arrivals]
rate_per_s = 0.3
party_sizes = [0.7, 0.3]
patience = { dist = "exponential", mean = "10m" }
requeue_prob = 0.9
think_time = "30s"

[match]
teams = 2
team_size = 2
lobby = "30s"

[policy]
kind = "widening"
base = 100
rate_per_s = 5
max = 600

[rating]
system = "glicko1"

[outcome]
model = "logistic"
duration = "10m"
duration_sd = "2m"
duration_min = "5m"

[modes]
ladders = ["ranked", "normal"]

[[modes.queues]]
name = "ranked"
share = 0.5
ladder = "ranked"
unlock_games = 20

[[modes.queues]]
name = "normal"
share = 0.5
ladder = "normal"
"#;

fn run(text: &str) -> KeptRun {
    let s = mmsim_scenario::from_text(text, Path::new("ladders.toml"), &[])
        .unwrap()
        .scenario;
    run_keeping(&s, s.run.seed)
}

fn ladder<'a>(k: &'a KeptRun, name: &str) -> &'a LadderPlayers {
    k.output
        .ladders
        .iter()
        .find(|l| l.name == name)
        .unwrap_or_else(|| panic!("no ladder {name}"))
}

#[test]
fn each_ladder_rates_only_its_own_modes_matches() {
    let k = run(SCENARIO);
    let initial = ladder(&k, "ranked").players[0].clone();
    assert_eq!(k.output.ladders.len(), 2);
    for (l, mode) in [("ranked", 0u8), ("normal", 1u8)] {
        let lad = ladder(&k, l);
        // Every rated game of a player on this ladder is a match of its
        // mode: the solo and party updates add up to the matches played
        // there (everyone starts with no games rated).
        for (p, &n) in lad.players.iter().zip(&lad.played) {
            assert_eq!(p.rating.games + p.party_rating.games, n, "{l}: {p:?}");
            if n == 0 {
                assert_eq!(
                    (p.rating.value, p.party_rating.value),
                    (initial.rating.value, initial.rating.value),
                    "{l}: a player who never played here was rated: {p:?}"
                );
            }
        }
        // And those are the finished matches of the mode, from the records.
        let finished = k
            .records
            .matches
            .iter()
            .filter(|m| m.mode == Some(mode) && m.winner.is_some())
            .count() as u64;
        let played: u64 = lad.played.iter().map(|&n| u64::from(n)).sum();
        assert!(finished > 100, "{l}: {finished} matches");
        assert_eq!(played, finished * 4, "{l}");
    }
    // The players table's own ratings are the first ladder's.
    let ranked = ladder(&k, "ranked");
    for (a, b) in k.output.players.iter().zip(&ranked.players) {
        assert_eq!((a.rating, a.party_rating), (b.rating, b.party_rating));
    }
}

#[test]
fn no_one_plays_ranked_before_the_unlock_and_refusals_are_counted() {
    let k = run(SCENARIO);
    let ranked = ladder(&k, "ranked");
    let mut on_ranked = 0;
    for (p, &n) in k.output.players.iter().zip(&ranked.played) {
        if n > 0 {
            on_ranked += 1;
            // Their first ranked match came after `UNLOCK` games, and every
            // ranked match since is one more game.
            assert!(p.games >= UNLOCK + n, "{p:?} played {n} ranked");
        }
    }
    assert!(on_ranked > 100, "{on_ranked} players reached ranked");
    let by_mode = &k.summary["modes"]["by_mode"];
    let refused = by_mode[0]["refused"]
        .as_u64()
        .expect("ranked counts refusals");
    assert!(refused > 50, "{refused}");
    // Normal has no unlock: nothing to refuse, no figure.
    assert!(by_mode[1].get("refused").is_none(), "{by_mode}");
    assert_eq!(by_mode[0]["ladder"], "ranked");
}

#[test]
fn ladders_over_the_same_players_drift_apart() {
    let k = run(SCENARIO);
    let (r, n) = (ladder(&k, "ranked"), ladder(&k, "normal"));
    let both: Vec<(f64, f64)> = (0..r.players.len())
        .filter(|&i| r.players[i].rating.games >= 5 && n.players[i].rating.games >= 5)
        .map(|i| (r.players[i].rating.value, n.players[i].rating.value))
        .collect();
    assert!(both.len() > 50, "{} players on both", both.len());
    let differ = both.iter().filter(|(a, b)| (a - b).abs() > 1.0).count();
    assert!(differ * 10 > both.len() * 9, "{differ} of {}", both.len());
    // Both still measure the same skills.
    let figures = k.summary["modes"]["ladders"].as_array().unwrap();
    for f in figures {
        let corr = f["rating_skill_rank_corr"].as_f64().unwrap();
        assert!(corr > 0.5, "{f}");
    }
}

#[test]
fn one_named_ladder_is_the_shared_ladder() {
    let unnamed = SCENARIO
        .replace("ladders = [\"ranked\", \"normal\"]\n", "")
        .replace("ladder = \"ranked\"\n", "")
        .replace("ladder = \"normal\"\n", "");
    let one = SCENARIO
        .replace("ladders = [\"ranked\", \"normal\"]", "ladders = [\"all\"]")
        .replace("ladder = \"ranked\"", "ladder = \"all\"")
        .replace("ladder = \"normal\"", "ladder = \"all\"");
    let (a, b) = (run(&unnamed), run(&one));
    assert!(a.output.ladders.is_empty());
    assert_eq!(b.output.ladders.len(), 1);
    assert_eq!(b.output.ladders[0].players, b.output.players);
    assert_eq!(a.records.matches, b.records.matches);
    assert_eq!(a.records.tickets, b.records.tickets);
    assert_eq!(a.output.players, b.output.players);
    // The one ladder's name labels the modes and its figures are
    // reported; nothing else moved.
    assert_eq!(b.summary["modes"]["by_mode"][0]["ladder"], "all");
    assert_eq!(b.summary["modes"]["ladders"][0]["modes"][1], "normal");
    assert!(a.summary["modes"]["by_mode"][0].get("ladder").is_none());
}

/// Two 1v1 modes, each on its own ladder, each pairing only tickets within
/// 100 points: every match is within 100 points on its own ladder, which
/// holds only if each mode's policy saw that ladder's ratings.
#[test]
fn a_modes_policy_pairs_by_its_own_ladders_ratings() {
    let text = SCENARIO
        .replace("team_size = 2", "team_size = 1")
        .replace("party_sizes = [0.7, 0.3]", "party_sizes = [1.0]")
        .replace("unlock_games = 20\n", "")
        .replace(
            "kind = \"widening\"\nbase = 100\nrate_per_s = 5\nmax = 600",
            "kind = \"fixed-limit\"\nlimit = 100",
        );
    let k = run(&text);
    let mut by_mode = [0; 2];
    for m in &k.records.matches {
        assert!(m.spread_rating <= 100.0 + 1e-9, "{m:?}");
        by_mode[usize::from(m.mode.unwrap())] += 1;
    }
    assert!(by_mode.iter().all(|&n| n > 200), "{by_mode:?}");
    // And the ladders did part: a pair within 100 on one is not on the other.
    let (r, n) = (ladder(&k, "ranked"), ladder(&k, "normal"));
    let apart = (0..r.players.len())
        .filter(|&i| (r.players[i].rating.value - n.players[i].rating.value).abs() > 100.0)
        .count();
    assert!(apart > 20, "{apart}");
}

/// The same with the quality policy, which reads the players' records
/// (each party's MMR) rather than the ticket's rating: scoring only the
/// skill range, at a bar of 0.9 over a range of 1000 points, every match
/// spans at most 100 points on its own ladder.
#[test]
fn a_modes_quality_policy_reads_its_own_ladders_player_records() {
    let text = SCENARIO
        .replace("team_size = 2", "team_size = 1")
        .replace("party_sizes = [0.7, 0.3]", "party_sizes = [1.0]")
        .replace("unlock_games = 20\n", "")
        .replace(
            "kind = \"widening\"\nbase = 100\nrate_per_s = 5\nmax = 600",
            "kind = \"quality\"\nthreshold = 0.9\nthreshold_floor = 0.9\n\
             threshold_fall_per_s = 0\nskill_range = 1000\ntick = \"2s\"\n\n\
             [policy.weights]\nbalance = 0\nskill = 1\nexperience = 0\ntop_player = 0\n\
             parties = 0\nteam_language = 0\nmatch_language = 0\nwait = 0",
        );
    let k = run(&text);
    let mut by_mode = [0; 2];
    for m in &k.records.matches {
        assert!(m.spread_rating <= 100.0 + 1e-9, "{m:?}");
        by_mode[usize::from(m.mode.unwrap())] += 1;
    }
    assert!(by_mode.iter().all(|&n| n > 200), "{by_mode:?}");
}
