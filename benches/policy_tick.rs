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

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, Throughput};
use mmsim::model::{Player, PlayerId, Rating, SimTime, TicketId};
use mmsim::policy::{
    BatchParams, BracketParams, Cadence, DecayParams, FixedLimitParams, MatchFormat, Mode,
    PercentWideningParams, PercentileParams, PolicyConfig, PoolView, QualityParams,
    SweepPruneParams, Trigger, WeightedScoreParams, WideningParams,
};
use mmsim::pool::{Pool, WaitingTicket};
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Normal};
use rand_pcg::Pcg64;
use std::time::Duration;

const NOW_MS: u64 = 120_000;

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

criterion_group!(benches, policy_tick);
criterion_main!(benches);
