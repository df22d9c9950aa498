//! The from-scratch quality search, kept as the oracle the incremental
//! `Quality` is tested against: every pass searches and scores every seed
//! again, oldest first, as the policy did before it kept anything.

use super::*;
use crate::engine::Pool;
use crate::model::{MatchId, Player, PlayerId, Rating};
use crate::policy::MatchFormat;
use proptest::prelude::*;

/// The obvious pass: no memory between passes but the run's split seed.
pub(crate) struct QualityOracle {
    params: QualityParams,
    run_seed: Option<u64>,
}

impl QualityOracle {
    pub(crate) fn new(params: QualityParams) -> Self {
        QualityOracle {
            params,
            run_seed: None,
        }
    }
}

impl Policy for QualityOracle {
    fn schedule(&self) -> Schedule {
        Schedule {
            on_join: false,
            tick: Some(self.params.tick.0),
        }
    }

    fn propose(
        &mut self,
        view: &PoolView<'_>,
        _trigger: Trigger,
        rng: &mut Pcg64,
        out: &mut Vec<Proposal>,
    ) {
        let run_seed = *self.run_seed.get_or_insert_with(|| rand::Rng::random(rng));
        if view.pool.players() < view.format.players() {
            return;
        }
        let p = &self.params;
        let mut taken = BTreeSet::new();
        let mut cache = BTreeMap::new();
        for seed in view.pool.oldest_first() {
            if taken.contains(&seed.id) {
                continue;
            }
            let mut s = search(p, view, seed, &taken, &mut cache, run_seed);
            let scored = score(p, view.format.team_size, &mut s.candidates, view.now);
            if let Some((best, ci, si)) = scored.best {
                if best >= p.threshold_at(seed.age_s(view.now)) {
                    let prop = proposal(&s.candidates[ci], si);
                    taken.extend(prop.tickets.iter().copied());
                    out.push(prop);
                }
            }
        }
    }
}

#[derive(Clone, Debug)]
enum Op {
    /// A party joins: rating, size, language bits, games.
    Join(f64, usize, u32, u32),
    /// The `n`-th waiting ticket (mod the pool) gives up.
    Abandon(usize),
    /// Time passes by `dt_ms`, then both pass; `form` false has the engine
    /// reject every proposal of the pass (the tickets stay).
    Tick(u64, bool),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (1000.0..3000.0f64, 1usize..=4, 1u32..4, 0u32..2000)
            .prop_map(|(r, n, l, g)| Op::Join(r, n, l, g)),
        1 => (0usize..1000).prop_map(Op::Abandon),
        4 => (0u64..40_000, prop::bool::weighted(0.9)).prop_map(|(dt, f)| Op::Tick(dt, f)),
    ]
}

fn params() -> impl Strategy<Value = QualityParams> {
    (0.6..0.95f64, 0.0..0.01f64, 2u32..12, 10u64..200).prop_map(|(thr, fall, k, scale)| {
        QualityParams {
            threshold: thr,
            threshold_floor: 0.5,
            threshold_fall_per_s: fall,
            neighbours: k,
            wait_scale: HumanDuration::from_secs(scale),
            ..QualityParams::default()
        }
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Over random pools, joins, departures, rejections and time, the
    /// incremental policy proposes exactly what the from-scratch pass does.
    #[test]
    fn incremental_proposes_exactly_what_the_oracle_does(
        p in params(),
        ops in prop::collection::vec(op(), 1..160),
        seed in any::<u64>(),
    ) {
        let format = MatchFormat { teams: 2, team_size: 3 };
        let mut fast = Quality::new(p.clone());
        let mut slow = QualityOracle::new(p);
        let (mut rng_fast, mut rng_slow) = (Pcg64::seed_from_u64(seed), Pcg64::seed_from_u64(seed));
        let mut pool = Pool::default();
        let mut players: Vec<Player> = Vec::new();
        let (mut now_ms, mut next_id, mut matches) = (0u64, 0u32, 0u32);
        for op in ops {
            match op {
                Op::Join(r, n, langs, games) => {
                    let members: Vec<PlayerId> = (0..n)
                        .map(|k| {
                            let id = PlayerId(players.len() as u32);
                            let mut pl = Player::new(id, r, Rating::new(r + 37.0 * k as f64, 50.0, 0.06));
                            pl.games = games + 13 * k as u32;
                            pl.languages = langs;
                            players.push(pl);
                            id
                        })
                        .collect();
                    let t = WaitingTicket {
                        id: TicketId(next_id),
                        players: members.into_iter().collect(),
                        rating: r,
                        enqueued: SimTime::from_ms(now_ms),
                    };
                    next_id += 1;
                    pool.insert(t.clone());
                    fast.on_join(&t);
                }
                Op::Abandon(k) => {
                    let id = pool.oldest_first().nth(k % pool.len().max(1)).map(|t| t.id);
                    if let Some(id) = id {
                        let t = pool.remove(id).unwrap();
                        fast.on_abandon(&t);
                    }
                }
                Op::Tick(dt, form) => {
                    now_ms += dt;
                    let now = SimTime::from_ms(now_ms);
                    let (mut a, mut b) = (Vec::new(), Vec::new());
                    let view = PoolView { now, pool: &pool, players: &players, format };
                    fast.propose(&view, Trigger::Tick, &mut rng_fast, &mut a);
                    slow.propose(&view, Trigger::Tick, &mut rng_slow, &mut b);
                    prop_assert_eq!(&a, &b, "at {} ms", now_ms);
                    if form {
                        for prop in a {
                            let removed: Vec<WaitingTicket> =
                                prop.tickets.iter().map(|id| pool.remove(*id).unwrap()).collect();
                            fast.on_formed(&FormedMatch { id: MatchId(matches), now, tickets: &removed });
                            matches += 1;
                        }
                    }
                }
            }
        }
    }
}

/// The dota2-5v5 preset, shortened, gives identical ticket and match records
/// with the incremental policy and with the oracle.
#[test]
fn dota2_preset_records_match_the_oracle() {
    use crate::engine::{Parts, Simulation};
    let path = std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scenarios/dota2-5v5.toml"
    ));
    let sets = [
        "run.duration=\"75m\"".to_string(),
        "run.warmup=\"0s\"".to_string(),
    ];
    let scenario = crate::scenario::load(path, &sets).unwrap().scenario;
    let crate::policy::PolicyConfig::Quality(params) = &scenario.policy else {
        panic!("dota2-5v5 uses the quality policy");
    };
    let run = |policy: Box<dyn Policy>| {
        let mut parts = Parts::from_scenario(&scenario);
        parts.policy = policy;
        Simulation::new(&scenario, scenario.run.seed, parts).run(&mut |_, _| {})
    };
    let fast = run(Box::new(Quality::new(params.clone())));
    let slow = run(Box::new(QualityOracle::new(params.clone())));
    assert!(
        fast.records.matches.len() > 20,
        "{}",
        fast.records.matches.len()
    );
    // Debug text, not `==`: a match still running holds NaN fields.
    let text =
        |o: &crate::engine::SimOutput| format!("{:?}\n{:?}", o.records.matches, o.records.tickets);
    assert!(text(&fast) == text(&slow), "records differ");
}
