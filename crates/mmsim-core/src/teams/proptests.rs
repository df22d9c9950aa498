//! The promise every method makes, checked over random party mixes: teams of
//! exactly the right size, every party used once and never split, and `None`
//! only when no exact fill exists.

use super::*;
use crate::model::{Category, PlayerId, Rating};
use proptest::prelude::*;
use rand::SeedableRng;

const CATEGORIES: [Category; 5] = [
    Category::MainBattleTank,
    Category::LightTank,
    Category::TankDestroyer,
    Category::ArmouredFighter,
    Category::Artillery,
];

#[derive(Clone, Debug)]
struct Mix {
    teams: usize,
    team_size: usize,
    sizes: Vec<usize>,
    players: Vec<Player>,
}

/// Party sizes drawn up to the team size and cut to the match's player
/// count; the last party takes whatever is left, so some mixes cannot fill
/// the teams (three pairs for two teams of three) and test the `None` side.
fn mix() -> impl Strategy<Value = Mix> {
    (2usize..=3, 1usize..=6)
        .prop_flat_map(|(teams, team_size)| {
            let n = teams * team_size;
            (
                Just(teams),
                Just(team_size),
                prop::collection::vec(1..=team_size, n),
                prop::collection::vec((900.0..2100.0f64, 1u8..=10, 0usize..6, 0.35..0.65f64), n),
            )
        })
        .prop_map(|(teams, team_size, draws, traits)| {
            let total = teams * team_size;
            let mut sizes = Vec::new();
            let mut sum = 0;
            for s in draws {
                if sum + s > total {
                    break;
                }
                sizes.push(s);
                sum += s;
            }
            if sum < total {
                sizes.push(total - sum);
            }
            let players = traits
                .iter()
                .enumerate()
                .map(|(i, &(rating, tier, cat, win_rate))| {
                    let mut p =
                        Player::new(PlayerId(i as u32), rating, Rating::new(rating, 50.0, 0.06));
                    p.tier = tier;
                    p.category = CATEGORIES.get(cat).copied();
                    p.win_rate = win_rate;
                    p
                })
                .collect();
            Mix {
                teams,
                team_size,
                sizes,
                players,
            }
        })
}

fn configs(teams: usize, team_size: usize) -> Vec<TeamsConfig> {
    let players = teams * team_size;
    let mut out = vec![
        TeamsConfig::default(),
        TeamsConfig::Balanced(BalancedParams {
            rating: RatingSource::Party,
            party_adjust: Some(PartyAdjust::default()),
            max_swaps: 8,
        }),
        TeamsConfig::Accelbyte(AccelByteParams::default()),
        TeamsConfig::Accelbyte(AccelByteParams {
            mode: AccelByteMode::Greedy,
        }),
    ];
    if teams == 2 {
        out.push(TeamsConfig::Abba(AbbaParams::default()));
        out.push(TeamsConfig::Abba(AbbaParams {
            smoothing: false,
            ..AbbaParams::default()
        }));
    }
    if players < 12 {
        out.push(TeamsConfig::Accelbyte(AccelByteParams {
            mode: AccelByteMode::Combination,
        }));
    }
    if players <= accelbyte::PERMUTATION_MAX_PLAYERS {
        out.push(TeamsConfig::Accelbyte(AccelByteParams {
            mode: AccelByteMode::Permutation,
        }));
    }
    out
}

/// `configs` is kept by hand (it varies each method's parameters): it must
/// reach every declared method, or a new one would escape the properties.
#[test]
fn the_configs_reach_every_declared_method() {
    let mut named: Vec<&str> = configs(2, 2).iter().map(|c| c.name()).collect();
    named.sort_unstable();
    named.dedup();
    let mut declared = TeamsConfig::NAMES.to_vec();
    declared.sort_unstable();
    assert_eq!(named, declared, "a team former is missing from configs()");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn every_method_fills_teams_exactly_and_never_splits_a_party(m in mix(), seed in any::<u64>()) {
        let mut parties: Vec<Vec<&Player>> = Vec::new();
        let mut next = 0;
        for &s in &m.sizes {
            parties.push(m.players[next..next + s].iter().collect());
            next += s;
        }
        let fillable = can_fill(&m.sizes, &vec![m.team_size; m.teams]);
        for config in configs(m.teams, m.team_size) {
            prop_assert!(config.validate(m.teams, m.team_size).is_ok());
            let former = config.build();
            let mut rng = Pcg64::seed_from_u64(seed);
            let split = former.split(&parties, m.teams, m.team_size, &mut rng);
            let Some(split) = split else {
                prop_assert!(!fillable, "{config:?} gave up on a fillable mix {:?}", m.sizes);
                continue;
            };
            prop_assert!(fillable, "{config:?} split an unfillable mix");
            prop_assert_eq!(split.len(), m.teams);
            for team in &split {
                let players: usize = team.iter().map(|&p| m.sizes[p]).sum();
                prop_assert_eq!(players, m.team_size, "{:?}: {:?} of {:?}", config, split, m.sizes);
            }
            // Party indices name whole parties, so "each index exactly once"
            // is "every party used once and never split".
            let mut used: Vec<usize> = split.concat();
            used.sort_unstable();
            prop_assert_eq!(used, (0..m.sizes.len()).collect::<Vec<_>>());
            // Same stream, same answer.
            let again = former.split(&parties, m.teams, m.team_size, &mut Pcg64::seed_from_u64(seed));
            prop_assert_eq!(Some(split), again);
        }
    }
}
