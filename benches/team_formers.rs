//! One `split` call of every team former on one match's parties, the input
//! the engine gives it each time a match forms. Here n is the number of
//! players in the match (two teams of n/2), not the pool: a former never
//! sees the pool, so its cost per match depends only on the format.
//!
//! Parties are solos, duos and trios drawn per team so that the match can
//! always be split (as the engine guarantees), then shuffled; ratings are
//! normal(1500, 400). `dota` is the balanced former on the Dota post's
//! party-adjusted MMR and party ratings; `fill` is the exact-fill check every
//! former and policy asks before placing a party.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use mmsim::model::{Player, PlayerId, Rating};
use mmsim::teams::{
    can_fill, AbbaParams, AccelByteMode, AccelByteParams, BalancedParams, PartyAdjust,
    RatingSource, TeamsConfig,
};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Normal};
use rand_pcg::Pcg64;
use std::time::Duration;

/// Players of a two-team match of `n` players and its parties as player
/// indices.
fn matchup(n: usize) -> (Vec<Player>, Vec<Vec<usize>>) {
    let mut rng = Pcg64::seed_from_u64(n as u64);
    let normal = Normal::new(1500.0, 400.0).unwrap();
    let players: Vec<Player> = (0..n)
        .map(|i| {
            let r: f64 = normal.sample(&mut rng);
            Player::new(PlayerId(i as u32), r, Rating::new(r, 50.0, 0.06))
        })
        .collect();
    let mut parties = Vec::new();
    let mut next = 0;
    for _ in 0..2 {
        let mut room = n / 2;
        while room > 0 {
            let size = rng.random_range(1..=room.min(3));
            parties.push((next..next + size).collect());
            next += size;
            room -= size;
        }
    }
    parties.shuffle(&mut rng);
    (players, parties)
}

/// Each former with the match sizes (players) it is allowed or meant for.
fn formers() -> Vec<(&'static str, TeamsConfig, Vec<usize>)> {
    let big = vec![10, 30, 100];
    vec![
        (
            "balanced",
            TeamsConfig::Balanced(BalancedParams::default()),
            big.clone(),
        ),
        (
            "dota",
            TeamsConfig::Balanced(BalancedParams {
                rating: RatingSource::Party,
                party_adjust: Some(PartyAdjust::default()),
                ..BalancedParams::default()
            }),
            big.clone(),
        ),
        (
            "abba",
            TeamsConfig::Abba(AbbaParams::default()),
            big.clone(),
        ),
        (
            "accelbyte-greedy",
            TeamsConfig::Accelbyte(AccelByteParams {
                mode: AccelByteMode::Greedy,
            }),
            big,
        ),
        // Combination tries every split: allowed below 12 players.
        (
            "accelbyte-combination",
            TeamsConfig::Accelbyte(AccelByteParams {
                mode: AccelByteMode::Combination,
            }),
            vec![4, 6, 10],
        ),
        // Permutation tries every order of the parties: at most 8 players.
        (
            "accelbyte-permutation",
            TeamsConfig::Accelbyte(AccelByteParams {
                mode: AccelByteMode::Permutation,
            }),
            vec![4, 6, 8],
        ),
    ]
}

fn team_formers(c: &mut Criterion) {
    for (name, config, sizes) in formers() {
        let former = config.build();
        let mut group = c.benchmark_group(format!("split/{name}"));
        group.sample_size(10);
        group.warm_up_time(Duration::from_millis(300));
        group.measurement_time(Duration::from_secs(1));
        for n in sizes {
            let (players, parties) = matchup(n);
            let parties: Vec<Vec<&Player>> = parties
                .iter()
                .map(|p| p.iter().map(|&i| &players[i]).collect())
                .collect();
            group.throughput(Throughput::Elements(n as u64));
            group.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, &n| {
                let mut rng = Pcg64::seed_from_u64(5);
                b.iter(|| {
                    former
                        .split(&parties, 2, n / 2, &mut rng)
                        .expect("the parties fill two teams")
                });
            });
        }
        group.finish();
    }
    let mut group = c.benchmark_group("split/fill");
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(300));
    group.measurement_time(Duration::from_secs(1));
    for n in [10usize, 30, 100] {
        let (_, parties) = matchup(n);
        let sizes: Vec<usize> = parties.iter().map(Vec::len).collect();
        group.throughput(Throughput::Elements(n as u64));
        group.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, &n| {
            b.iter(|| assert!(can_fill(&sizes, &[n / 2, n / 2])));
        });
    }
    group.finish();
}

criterion_group!(benches, team_formers);
criterion_main!(benches);
