//! One matchmaking tick of every policy on pools of 1k, 10k and 100k waiting
//! tickets, to show that no policy compares every pair: time per tick should
//! grow no faster than n log n (per ticket, no faster than log n).
//!
//! Ratings are normal(1500, 400) clamped to 0..3000, ages uniform over the
//! last two minutes; the population is the tickets' players. Each iteration
//! builds a fresh policy (state such as percentile tables starts cold) and
//! runs `propose(Trigger::Tick)` once.
//!
//! `quality` re-scores every seed from scratch and takes seconds per tick at
//! 10k, so it is measured at 1k and 10k only: at 100k one sample would take
//! minutes. `scripts/bench.sh` turns these into docs/performance.md.
//!
//! Two groups measure the formats designers run: `tick-roles/widening`, the
//! widening policy filling 5v5 role-queue matches (1 tank, 1 healer, 3
//! damage; 15/15/70 mains, one in ten with a second role), and
//! `tick-ruleset/flexmatch-5v5`, a FlexMatch ruleset (a skill distance
//! rule, growing from each seed over its nearest candidates) on the same
//! pool without roles. The regional layer runs one such policy per data
//! centre over its share of the pool, so these bound it too.
//! `second-tick-roles/widening` is the role queue's steady state: a tick
//! one second after a first, by the policy that kept what the first found.

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, Throughput};
use mmsim::model::{Player, PlayerId, Rating, SimTime, TicketId};
use mmsim::policy::{
    BatchParams, BracketParams, Cadence, DecayParams, FixedLimitParams, MatchFormat, Mode,
    PercentWideningParams, PercentileParams, PolicyConfig, PoolView, QualityParams,
    SweepPruneParams, Trigger, WeightedScoreParams, WideningParams,
};
use mmsim::pool::{Pool, WaitingTicket};
use mmsim::ruleset::{Ruleset, Source};
use mmsim::teams::Composition;
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Normal};
use rand_pcg::Pcg64;
use std::sync::Arc;
use std::time::Duration;

const NOW_MS: u64 = 120_000;

/// Role masks for a 5v5 role queue's tickets: tank, healer or damage main
/// (15/15/70), one in ten also taking another role.
fn role_mask(rng: &mut Pcg64) -> u8 {
    let u: f64 = rng.random();
    let main = if u < 0.15 {
        0
    } else if u < 0.30 {
        1
    } else {
        2
    };
    let mut mask = 1u8 << main;
    if rng.random::<f64>() < 0.1 {
        mask |= 1 << ((main + 1 + rng.random_range(0..2)) % 3);
    }
    mask
}

/// `pool(n)` with every ticket given role masks.
fn role_pool(n: u32) -> (Pool, Vec<Player>) {
    let (pool, mut players) = pool(n);
    let mut rng = Pcg64::seed_from_u64(u64::from(n) + 1);
    let tickets: Vec<WaitingTicket> = (0..n)
        .map(|i| {
            let mut t = pool.get(TicketId(i)).expect("every ticket").clone();
            let mask = role_mask(&mut rng);
            players[i as usize].roles = mask;
            players[i as usize].main_role = mask.trailing_zeros() as u8;
            t.roles = vec![mask].into();
            t
        })
        .collect();
    (Pool::from_tickets(tickets), players)
}

/// A FlexMatch 5v5 whose skill distance allows 200 points, widened to 400
/// after 30 s.
fn flexmatch_5v5() -> PolicyConfig {
    let mut rs = Ruleset::parse(
        r#"{ "ruleLanguageVersion": "1.0",
             "playerAttributes": [{ "name": "skill", "type": "number" }],
             "teams": [{ "name": "t", "maxPlayers": 5, "quantity": 2 }],
             "rules": [{ "name": "Close", "type": "distance",
                 "measurements": ["max(flatten(teams[*].players.attributes[skill]))"],
                 "referenceValue": "min(flatten(teams[*].players.attributes[skill]))",
                 "maxDistance": 200 }],
             "expansions": [{ "target": "rules[Close].maxDistance",
                 "steps": [{ "waitTimeSeconds": 30, "value": 400 }] }] }"#,
    )
    .expect("the bench's ruleset parses");
    rs.bind(Source::by_convention, |_| None)
        .expect("skill binds to the rating");
    PolicyConfig::Ruleset(mmsim::policy::ruleset::RulesetParams {
        ruleset: Some(Arc::new(rs)),
    })
}

fn pool(n: u32) -> (Pool, Vec<Player>) {
    let mut rng = Pcg64::seed_from_u64(u64::from(n));
    let normal = Normal::new(1500.0, 400.0).unwrap();
    let mut players = Vec::with_capacity(n as usize);
    let mut tickets = Vec::with_capacity(n as usize);
    for i in 0..n {
        let r: f64 = normal.sample(&mut rng);
        let r = r.clamp(0.0, 3000.0);
        players.push(Player::new(PlayerId(i), r, Rating::new(r, 50.0, 0.06)));
        tickets.push(WaitingTicket {
            id: TicketId(i),
            players: vec![PlayerId(i)].into(),
            rating: r,
            enqueued: SimTime::from_ms(rng.random_range(0..NOW_MS)),
            requeue: false,
            roles: Default::default(),
        });
    }
    (Pool::from_tickets(tickets), players)
}

fn policies() -> Vec<PolicyConfig> {
    vec![
        PolicyConfig::FixedLimit(FixedLimitParams {
            mode: Mode::Tick,
            ..Default::default()
        }),
        PolicyConfig::Widening(WideningParams {
            cadence: Cadence::in_mode(Mode::Tick),
            ..Default::default()
        }),
        PolicyConfig::PercentWidening(PercentWideningParams {
            cadence: Cadence::in_mode(Mode::Tick),
            ..Default::default()
        }),
        PolicyConfig::PercentileWindow(PercentileParams {
            cadence: Cadence::in_mode(Mode::Tick),
            widen_pct_per_s: 0.1,
            max_half_width_pct: 25.0,
            ..Default::default()
        }),
        PolicyConfig::AdaptiveBrackets(BracketParams {
            mode: Mode::Tick,
            ..Default::default()
        }),
        PolicyConfig::BatchWeighted(BatchParams::default()),
        PolicyConfig::WeightedScore(WeightedScoreParams {
            cadence: Cadence::in_mode(Mode::Tick),
            ..Default::default()
        }),
        PolicyConfig::SweepPrune(SweepPruneParams {
            cadence: Cadence::in_mode(Mode::Tick),
            ..Default::default()
        }),
        PolicyConfig::VirtualDecay(DecayParams {
            cadence: Cadence::in_mode(Mode::Tick),
            ..Default::default()
        }),
        PolicyConfig::Quality(QualityParams::default()),
    ]
}

fn policy_tick(c: &mut Criterion) {
    let sizes = [1_000u32, 10_000, 100_000];
    let pools: Vec<_> = sizes.iter().map(|&n| (n, pool(n))).collect();
    let format = MatchFormat {
        teams: 2,
        team_size: 1,
        roles: None,
    };
    for config in policies() {
        let largest = match config {
            PolicyConfig::Quality(_) => 10_000,
            _ => u32::MAX,
        };
        let mut group = c.benchmark_group(format!("tick/{}", config.name()));
        group.sample_size(10);
        group.warm_up_time(Duration::from_millis(500));
        group.measurement_time(Duration::from_secs(2));
        for (n, (pool, players)) in pools.iter().filter(|(n, _)| *n <= largest) {
            group.throughput(Throughput::Elements(u64::from(*n)));
            group.bench_with_input(BenchmarkId::from_parameter(n), n, |b, _| {
                let view = PoolView {
                    now: SimTime::from_ms(NOW_MS),
                    pool,
                    players,
                    format,
                    rerated: 0,
                };
                b.iter_batched(
                    || (config.build(), Pcg64::seed_from_u64(5), Vec::new()),
                    |(mut policy, mut rng, mut out)| {
                        policy.propose(&view, Trigger::Tick, &mut rng, &mut out);
                        out.len()
                    },
                    BatchSize::LargeInput,
                );
            });
        }
        group.finish();
    }
}

/// One tick of `config` on pools of each size, in `format`: a fresh
/// policy's first tick, or (`steady`) a tick one second after a first one,
/// by the policy that ran the first, on the pool the first left (its
/// matches gone). The second is the steady state of a policy that keeps
/// its seeds' results between passes (`widening` keeps a role queue's
/// failed fills).
fn tick_group(
    c: &mut Criterion,
    name: &str,
    config: &PolicyConfig,
    pools: &[(u32, (Pool, Vec<Player>))],
    format: MatchFormat,
    steady: bool,
) {
    let mut group = c.benchmark_group(name);
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(2));
    let first_tick = |view: &PoolView<'_>| {
        let mut policy = config.build();
        let mut rng = Pcg64::seed_from_u64(5);
        let mut out = Vec::new();
        if steady {
            policy.propose(view, Trigger::Tick, &mut rng, &mut out);
        }
        (policy, rng, out)
    };
    for (n, (pool, players)) in pools {
        let first = PoolView {
            now: SimTime::from_ms(NOW_MS),
            pool,
            players,
            format,
            rerated: 0,
        };
        // The pool the first tick left, the same for every iteration.
        let left = steady.then(|| {
            let matched: std::collections::BTreeSet<TicketId> = first_tick(&first)
                .2
                .iter()
                .flat_map(|p| p.tickets.iter().copied())
                .collect();
            Pool::from_tickets(
                pool.oldest_first()
                    .filter(|t| !matched.contains(&t.id))
                    .cloned(),
            )
        });
        group.throughput(Throughput::Elements(u64::from(*n)));
        group.bench_with_input(BenchmarkId::from_parameter(n), n, |b, _| {
            let view = PoolView {
                now: SimTime::from_ms(NOW_MS + if steady { 1_000 } else { 0 }),
                pool: left.as_ref().unwrap_or(pool),
                players,
                format,
                rerated: 0,
            };
            b.iter_batched(
                || {
                    let (policy, rng, mut out) = first_tick(&first);
                    out.clear();
                    (policy, rng, out)
                },
                |(mut policy, mut rng, mut out)| {
                    policy.propose(&view, Trigger::Tick, &mut rng, &mut out);
                    out.len()
                },
                BatchSize::LargeInput,
            );
        });
    }
    group.finish();
}

/// The role queue and the vendor's ruleset, 5v5, at 1k, 10k and 100k.
fn designers_formats(c: &mut Criterion) {
    let sizes = [1_000u32, 10_000, 100_000];
    let roles: Vec<_> = sizes.iter().map(|&n| (n, role_pool(n))).collect();
    let plain: Vec<_> = sizes.iter().map(|&n| (n, pool(n))).collect();
    let widening = PolicyConfig::Widening(WideningParams {
        cadence: Cadence::in_mode(Mode::Tick),
        ..Default::default()
    });
    let five = |roles| MatchFormat {
        teams: 2,
        team_size: 5,
        roles,
    };
    tick_group(
        c,
        "tick-roles/widening",
        &widening,
        &roles,
        five(Some(Composition::new(&[1, 1, 3]))),
        false,
    );
    tick_group(
        c,
        "second-tick-roles/widening",
        &widening,
        &roles,
        five(Some(Composition::new(&[1, 1, 3]))),
        true,
    );
    tick_group(
        c,
        "tick-ruleset/flexmatch-5v5",
        &flexmatch_5v5(),
        &plain,
        five(None),
        false,
    );
}

criterion_group!(benches, policy_tick, designers_formats);
criterion_main!(benches);
