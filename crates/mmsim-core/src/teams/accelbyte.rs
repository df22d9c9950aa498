//! AccelByte's matchmaking rebalance (the AGS "Matchmaking rebalance" page):
//! permutation, combination and greedy, chosen by the ruleset the way the
//! page describes, so a designer can compare mmsim with what AGS would do.
//!
//! Every method scores a composition the page's way: first the member-count
//! difference between teams (largest team minus smallest), then the
//! attribute distance. The page's tables give the distance: for one
//! attribute (MMR) it is the difference of the two teams' mean MMR (Result 1
//! of the combination example: mean(70, 60, 60) - mean(40, 40, 10) =
//! 63.33 - 30 = 33.33). With more teams we take the highest team mean minus
//! the lowest (empty teams have no mean and are skipped); with more
//! attributes, the sum of those per-attribute distances.
//!
//! Tie-break. Both the permutation and the combination method compare each
//! new composition with the best so far; we let a composition that is no
//! worse (same member-count difference, distance equal within rounding)
//! replace the best. That reproduces the permutation example exactly:
//! Results 1, 5 and 6 tie at (1, 6.66) and the page picks Result 6, the last
//! one in its enumeration order (the recursive swap order, which we use too).
//! In the combination example the same rule picks Result 7, not the Result 6
//! the page names: Result 6 has distance 13.34, while Results 2 and 7 share
//! the smallest, 6.66, and the stated rule (smallest member-count difference,
//! then smallest distance) must pick one of them. Results 2 and 7 are the
//! same split with the team labels swapped ({A}{D}{E} against {B,C}{F}), so
//! the tie-break only decides which team is called team 1; we take 7, the
//! last in enumeration order, as in the permutation example (and the page's
//! "6" is one off from it).
//!
//! The page's greedy example writes {G,B} in step 3 where it means {G,H}
//! (party 6); the tests use {G,H}.

use super::fill::{can_fill, FillGuard};
use super::TeamFormer;
use crate::model::{ParamError, Player};
use rand_pcg::Pcg64;
use serde::{Deserialize, Serialize};

/// Which AccelByte method to use; `auto` follows the ruleset rule.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AccelByteMode {
    /// Combination below 12 players per match, greedy from 12 (AccelByte's rule for strict teams).
    #[default]
    Auto,
    /// Every order of the parties, each filling teams in turn.
    Permutation,
    /// Every way to choose each team's parties.
    Combination,
    /// Parties by total attribute value, largest first, each onto the team with the smallest total that has room.
    Greedy,
}

/// `[teams]` with `method = "accelbyte"`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AccelByteParams {
    /// `"auto"` (combination below 12 players per match, greedy from 12),
    /// `"permutation"`, `"combination"` or `"greedy"`.
    pub mode: AccelByteMode,
}

/// Players per match below which the combination method is used (the page:
/// "less than 12 players"). The page says greedy is for "more than 12" and
/// leaves exactly 12 open; we give 12 to greedy, since combination tries
/// every split and is the one whose cost must stay bounded.
pub const COMBINATION_MAX_PLAYERS: usize = 11;
/// Permutation tries every order of the parties (n!). In a simulation, where
/// it runs for every match, mmsim allows it only up to this many players.
pub const PERMUTATION_MAX_PLAYERS: usize = 8;
/// The most parties `mmsim rebalance` will permute (10! = 3.6 million orders).
pub const PERMUTATION_MAX_PARTIES: usize = 10;

impl AccelByteParams {
    /// Where the team former comes from, for `mmsim catalogue`.
    pub const SOURCE: &str =
        "AccelByte AGS, Matchmaking rebalance page: permutation, combination or greedy, by member-count difference then mean-MMR distance";
    /// Its keys, for `mmsim catalogue`.
    pub const PARAMETERS: &str = "mode";

    /// That the mode's cost stays bounded for this many players per match.
    pub fn validate(&self, teams: usize, team_size: usize) -> Result<(), ParamError> {
        let players = teams * team_size;
        match self.mode {
            AccelByteMode::Combination if players > COMBINATION_MAX_PLAYERS => Err(ParamError::new(
                "mode",
                format!(
                    "\"combination\" is for fewer than 12 players per match (it tries every split), got {teams} teams of {team_size} = {players}; use \"greedy\" or \"auto\""
                ),
            )),
            AccelByteMode::Permutation if players > PERMUTATION_MAX_PLAYERS => Err(ParamError::new(
                "mode",
                format!(
                    "\"permutation\" tries every order of the parties, so mmsim allows it for at most {PERMUTATION_MAX_PLAYERS} players per match, got {teams} teams of {team_size} = {players}; use \"auto\""
                ),
            )),
            _ => Ok(()),
        }
    }
}

/// One of the three methods.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// Every order of the parties, each filling teams in turn.
    Permutation,
    /// Every way to choose each team's parties.
    Combination,
    /// Parties by total attribute value, largest first, each onto the team with the smallest total that has room.
    Greedy,
}

impl Method {
    /// The method's name, as `[teams] mode` and `mmsim rebalance` write it.
    pub fn name(self) -> &'static str {
        match self {
            Method::Permutation => "permutation",
            Method::Combination => "combination",
            Method::Greedy => "greedy",
        }
    }
}

/// The ruleset's `alliance` block: team count and players per team, each a
/// range.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Alliance {
    /// Fewest teams in a match.
    pub min_number: usize,
    /// Most teams in a match; the rebalance forms this many.
    pub max_number: usize,
    /// Fewest players on a team.
    pub player_min_number: usize,
    /// Most players on a team.
    pub player_max_number: usize,
}

impl Alliance {
    /// Fixed team count and size, as every mmsim match format is.
    pub fn strict(teams: usize, team_size: usize) -> Self {
        Alliance {
            min_number: teams,
            max_number: teams,
            player_min_number: team_size,
            player_max_number: team_size,
        }
    }

    /// Whether teams and players per team are fixed (minimum equals maximum for both).
    pub fn is_strict(&self) -> bool {
        self.min_number == self.max_number && self.player_min_number == self.player_max_number
    }

    /// "number of teams * number of players", the page's size test.
    pub fn players(&self) -> usize {
        self.max_number * self.player_max_number
    }
}

/// The page's choice: permutation for a backfill or a loose team
/// configuration; for strict ones, combination below 12 players and greedy
/// from 12 (see [`COMBINATION_MAX_PLAYERS`]).
pub fn choose_method(alliance: &Alliance, backfill: bool) -> Method {
    if backfill || !alliance.is_strict() {
        Method::Permutation
    } else if alliance.players() <= COMBINATION_MAX_PLAYERS {
        Method::Combination
    } else {
        Method::Greedy
    }
}

/// A party as the rebalance sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct AbParty {
    /// Players in the party.
    pub size: usize,
    /// Sum over members of each balanced attribute, in attribute order.
    pub totals: Vec<f64>,
    /// Already in the session on this team (0-based): a backfill.
    pub team: Option<usize>,
}

/// How good a composition is: compared by `member_diff`, then `distance`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Score {
    /// The largest difference in players between two teams.
    pub member_diff: usize,
    /// How far apart the teams' attribute totals are (AccelByte's distance; smaller is better).
    pub distance: f64,
}

impl Score {
    /// Better or equal: the page's "compared with the previous best", with
    /// ties going to the newcomer (see the module docs).
    pub fn no_worse_than(&self, best: &Score) -> bool {
        self.member_diff < best.member_diff
            || (self.member_diff == best.member_diff
                && self.distance <= best.distance + tolerance(best.distance))
    }

    /// Strictly better: fewer member difference, or the same and a distance smaller beyond float noise.
    pub fn strictly_better(&self, other: &Score) -> bool {
        self.member_diff < other.member_diff
            || (self.member_diff == other.member_diff
                && self.distance < other.distance - tolerance(other.distance))
    }
}

fn tolerance(x: f64) -> f64 {
    1e-9 * (1.0 + x.abs())
}

/// A composition as a method considers it: party indices per team, in the
/// order they were placed. Borrowed, so that enumerating thousands costs no
/// allocation; clone what you keep.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Candidate<'a> {
    /// The party sequence it came from (permutation), or the parties in
    /// team order (combination).
    pub sequence: &'a [usize],
    /// Party indices per team.
    pub teams: &'a [Vec<usize>],
    /// Its score.
    pub score: Score,
}

/// The chosen composition.
#[derive(Clone, Debug, PartialEq)]
pub struct Rebalanced {
    /// The method that chose it.
    pub method: Method,
    /// Party indices per team.
    pub teams: Vec<Vec<usize>>,
    /// Its score.
    pub score: Score,
    /// Which candidate won, 1-based in enumeration order (the "Result n" of
    /// the page's tables); `None` for greedy, which enumerates none.
    pub candidate: Option<usize>,
}

/// Running per-team sizes and totals, for incremental scoring.
#[derive(Clone, Debug)]
struct Tally {
    sizes: Vec<usize>,
    totals: Vec<Vec<f64>>,
    members: Vec<Vec<usize>>,
}

impl Tally {
    /// Teams start with the session's parties (those with `team` set).
    fn new(parties: &[AbParty], teams: usize, attrs: usize) -> Option<Self> {
        let mut t = Tally {
            sizes: vec![0; teams],
            totals: vec![vec![0.0; attrs]; teams],
            members: vec![Vec::new(); teams],
        };
        for (i, p) in parties.iter().enumerate() {
            if let Some(team) = p.team {
                if team >= teams {
                    return None;
                }
                t.add(parties, i, team);
            }
        }
        Some(t)
    }

    fn add(&mut self, parties: &[AbParty], i: usize, team: usize) {
        self.sizes[team] += parties[i].size;
        for (a, v) in parties[i].totals.iter().enumerate() {
            self.totals[team][a] += v;
        }
        self.members[team].push(i);
    }

    /// Undoes the last `add` of party `i` to `team`.
    fn remove(&mut self, parties: &[AbParty], i: usize, team: usize) {
        self.sizes[team] -= parties[i].size;
        for (a, v) in parties[i].totals.iter().enumerate() {
            self.totals[team][a] -= v;
        }
        self.members[team].pop();
    }

    fn score(&self) -> Score {
        score_of(&self.sizes, &self.totals)
    }

    /// The score if party `i` joined `team`, without changing anything.
    fn score_with(&mut self, parties: &[AbParty], i: usize, team: usize) -> Score {
        self.sizes[team] += parties[i].size;
        for (a, v) in parties[i].totals.iter().enumerate() {
            self.totals[team][a] += v;
        }
        let s = self.score();
        self.sizes[team] -= parties[i].size;
        for (a, v) in parties[i].totals.iter().enumerate() {
            self.totals[team][a] -= v;
        }
        s
    }
}

fn score_of(sizes: &[usize], totals: &[Vec<f64>]) -> Score {
    let member_diff = sizes.iter().max().unwrap_or(&0) - sizes.iter().min().unwrap_or(&0);
    let attrs = totals.first().map_or(0, Vec::len);
    let mut distance = 0.0;
    for a in 0..attrs {
        let means = sizes
            .iter()
            .zip(totals)
            .filter(|(&n, _)| n > 0)
            .map(|(&n, t)| t[a] / n as f64);
        let (lo, hi) = means.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), m| {
            (lo.min(m), hi.max(m))
        });
        if hi >= lo {
            distance += hi - lo;
        }
    }
    Score {
        member_diff,
        distance,
    }
}

/// The score of a finished composition (party indices per team).
pub fn score(parties: &[AbParty], teams: &[Vec<usize>]) -> Score {
    let attrs = parties.first().map_or(0, |p| p.totals.len());
    let sizes: Vec<usize> = teams
        .iter()
        .map(|t| t.iter().map(|&i| parties[i].size).sum())
        .collect();
    let totals: Vec<Vec<f64>> = teams
        .iter()
        .map(|t| {
            (0..attrs)
                .map(|a| t.iter().map(|&i| parties[i].totals[a]).sum())
                .collect()
        })
        .collect();
    score_of(&sizes, &totals)
}

fn movable(parties: &[AbParty]) -> Vec<usize> {
    (0..parties.len())
        .filter(|&i| parties[i].team.is_none())
        .collect()
}

fn attr_count(parties: &[AbParty]) -> usize {
    parties.first().map_or(0, |p| p.totals.len())
}

/// Permutation: every order of the parties not yet in the session; each
/// order is placed "horizontally", each party to the team (with room under
/// `player_max`) whose resulting member-count difference, then distance, is
/// smallest, first team on a tie. Compositions leaving a team under
/// `player_min` are dropped. `visit` sees every composition in order.
pub fn permutation_candidates(
    parties: &[AbParty],
    teams: usize,
    player_min: usize,
    player_max: usize,
    visit: &mut dyn FnMut(&Candidate<'_>),
) {
    let Some(tally) = Tally::new(parties, teams, attr_count(parties)) else {
        return;
    };
    let mut search = Permutations {
        parties,
        order: movable(parties),
        tally,
        player_min,
        player_max,
        visit,
    };
    search.place_from(0);
}

/// The permutation search. Orders come in the recursive swap order (the
/// page's tables list them in it); orders sharing a prefix share its
/// placement, so each prefix is placed once rather than once per order.
struct Permutations<'p, 'v> {
    parties: &'p [AbParty],
    order: Vec<usize>,
    tally: Tally,
    player_min: usize,
    player_max: usize,
    visit: &'v mut dyn FnMut(&Candidate<'_>),
}

impl Permutations<'_, '_> {
    fn place_from(&mut self, k: usize) {
        if k == self.order.len() {
            if self.tally.sizes.iter().all(|&n| n >= self.player_min) {
                (self.visit)(&Candidate {
                    sequence: &self.order,
                    score: self.tally.score(),
                    teams: &self.tally.members,
                });
            }
            return;
        }
        for j in k..self.order.len() {
            self.order.swap(k, j);
            let i = self.order[k];
            // An order whose party fits no team is dropped with all its
            // continuations.
            if let Some(t) = self.best_team(i) {
                self.tally.add(self.parties, i, t);
                self.place_from(k + 1);
                self.tally.remove(self.parties, i, t);
            }
            self.order.swap(k, j);
        }
    }

    /// The team with room whose member-count difference, then distance,
    /// would be smallest with party `i`; the first such team on a tie.
    fn best_team(&mut self, i: usize) -> Option<usize> {
        let mut best: Option<(Score, usize)> = None;
        for t in 0..self.tally.sizes.len() {
            if self.tally.sizes[t] + self.parties[i].size > self.player_max {
                continue;
            }
            let s = self.tally.score_with(self.parties, i, t);
            if best.is_none_or(|(b, _)| s.strictly_better(&b)) {
                best = Some((s, t));
            }
        }
        best.map(|(_, t)| t)
    }
}

/// Combination: teams filled "vertically" to exactly `team_size`, trying
/// every set of parties for the first team (in lexicographic order of party
/// index), then for the next from what is left, and so on.
pub fn combination_candidates(
    parties: &[AbParty],
    teams: usize,
    team_size: usize,
    visit: &mut dyn FnMut(&Candidate<'_>),
) {
    let Some(tally) = Tally::new(parties, teams, attr_count(parties)) else {
        return;
    };
    if tally.sizes.iter().any(|&n| n > team_size) {
        return;
    }
    let mut search = Combinations {
        parties,
        free: movable(parties),
        used: vec![false; parties.len()],
        tally,
        team_size,
        sequence: Vec::new(),
        visit,
    };
    search.fill(0);
}

/// The combination search, adding and removing parties in place.
struct Combinations<'p, 'v> {
    parties: &'p [AbParty],
    free: Vec<usize>,
    used: Vec<bool>,
    tally: Tally,
    team_size: usize,
    sequence: Vec<usize>,
    visit: &'v mut dyn FnMut(&Candidate<'_>),
}

impl Combinations<'_, '_> {
    fn fill(&mut self, team: usize) {
        if team == self.tally.sizes.len() {
            if self.free.iter().all(|&i| self.used[i]) {
                self.sequence.clear();
                self.sequence.extend(self.tally.members.iter().flatten());
                (self.visit)(&Candidate {
                    sequence: &self.sequence,
                    score: self.tally.score(),
                    teams: &self.tally.members,
                });
            }
            return;
        }
        let room = self.team_size - self.tally.sizes[team];
        self.pick(team, 0, room);
    }

    /// Every set of unused parties, by increasing position in `free`, whose
    /// sizes make exactly `room`.
    fn pick(&mut self, team: usize, from: usize, room: usize) {
        if room == 0 {
            self.fill(team + 1);
            return;
        }
        for k in from..self.free.len() {
            let i = self.free[k];
            let size = self.parties[i].size;
            if self.used[i] || size > room {
                continue;
            }
            self.used[i] = true;
            self.tally.add(self.parties, i, team);
            self.pick(team, k + 1, room - size);
            self.tally.remove(self.parties, i, team);
            self.used[i] = false;
        }
    }
}

/// The best of a set of candidates, ties to the later one; `visit` sees
/// every candidate first (`mmsim rebalance` lists them).
fn best_of(
    method: Method,
    generate: impl FnOnce(&mut dyn FnMut(&Candidate<'_>)),
    visit: &mut dyn FnMut(&Candidate<'_>),
) -> Option<Rebalanced> {
    let mut best: Option<(usize, Score, Vec<Vec<usize>>)> = None;
    let mut count = 0;
    generate(&mut |c: &Candidate<'_>| {
        count += 1;
        visit(c);
        if best
            .as_ref()
            .is_none_or(|(_, b, _)| c.score.no_worse_than(b))
        {
            best = Some((count, c.score, c.teams.to_vec()));
        }
    });
    best.map(|(candidate, score, teams)| Rebalanced {
        method,
        teams,
        score,
        candidate: Some(candidate),
    })
}

/// The best composition over every order of the parties, teams holding `player_min` to `player_max` players; `None` when none fills them.
pub fn permutation(
    parties: &[AbParty],
    teams: usize,
    player_min: usize,
    player_max: usize,
) -> Option<Rebalanced> {
    best_of(
        Method::Permutation,
        |v| permutation_candidates(parties, teams, player_min, player_max, v),
        &mut |_| {},
    )
}

/// The best composition over every choice of each team's parties, teams of exactly `team_size`; `None` when none fills them.
pub fn combination(parties: &[AbParty], teams: usize, team_size: usize) -> Option<Rebalanced> {
    best_of(
        Method::Combination,
        |v| combination_candidates(parties, teams, team_size, v),
        &mut |_| {},
    )
}

/// Greedy partitioning: parties by total attribute value, largest first
/// (the first attribute decides, later ones break ties, then input order);
/// each goes to the team with the smallest total of the first attribute
/// (session members included; first team on a tie) that has room. Unlike
/// the page, which assumes parties always fit, a team is skipped when taking
/// the party would leave the remaining parties unable to fill every team
/// exactly, so strict sizes are always met when they can be.
pub fn greedy(parties: &[AbParty], teams: usize, team_size: usize) -> Option<Rebalanced> {
    let mut tally = Tally::new(parties, teams, attr_count(parties))?;
    let mut order = movable(parties);
    let caps: Vec<usize> = tally
        .sizes
        .iter()
        .map(|&n| team_size.checked_sub(n))
        .collect::<Option<_>>()?;
    let sizes: Vec<usize> = order.iter().map(|&i| parties[i].size).collect();
    if !can_fill(&sizes, &caps) {
        return None;
    }
    order.sort_by(|&a, &b| {
        let (ta, tb) = (&parties[a].totals, &parties[b].totals);
        tb.iter()
            .zip(ta)
            .map(|(x, y)| x.total_cmp(y))
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.cmp(&b))
    });
    let mut guard = FillGuard::new(&sizes, &caps);
    for &i in &order {
        let primary = |t: usize| tally.totals[t].first().copied().unwrap_or(0.0);
        let team = (0..teams)
            .filter(|&t| guard.can_place(parties[i].size, t))
            .min_by(|&a, &b| primary(a).total_cmp(&primary(b)).then(a.cmp(&b)))?;
        guard.place(parties[i].size, team);
        tally.add(parties, i, team);
    }
    Some(Rebalanced {
        method: Method::Greedy,
        score: tally.score(),
        teams: tally.members,
        candidate: None,
    })
}

/// Runs `method` on a ruleset: permutation uses the alliance ranges (team
/// count `max_number`), combination and greedy the strict size
/// `player_max_number`.
pub fn run(parties: &[AbParty], alliance: &Alliance, method: Method) -> Option<Rebalanced> {
    run_visiting(parties, alliance, method, &mut |_| {})
}

/// [`run`], showing `visit` every candidate permutation or combination
/// considers, in enumeration order (greedy considers none).
pub fn run_visiting(
    parties: &[AbParty],
    alliance: &Alliance,
    method: Method,
    visit: &mut dyn FnMut(&Candidate<'_>),
) -> Option<Rebalanced> {
    let teams = alliance.max_number;
    let (min, max) = (alliance.player_min_number, alliance.player_max_number);
    match method {
        Method::Permutation => best_of(
            method,
            |v| permutation_candidates(parties, teams, min, max, v),
            visit,
        ),
        Method::Combination => best_of(
            method,
            |v| combination_candidates(parties, teams, max, v),
            visit,
        ),
        Method::Greedy => greedy(parties, teams, max),
    }
}

impl AccelByteMode {
    /// The method this mode runs on `alliance`: the named one, or for
    /// `auto` the page's choice ([`choose_method`]).
    pub fn resolve(self, alliance: &Alliance, backfill: bool) -> Method {
        match self {
            AccelByteMode::Auto => choose_method(alliance, backfill),
            AccelByteMode::Permutation => Method::Permutation,
            AccelByteMode::Combination => Method::Combination,
            AccelByteMode::Greedy => Method::Greedy,
        }
    }
}

/// The AccelByte former: each party's attribute is its members' summed
/// rating; no session, strict sizes.
#[derive(Clone, Debug)]
pub struct AccelByte {
    /// Its parameters (`[teams]`).
    pub params: AccelByteParams,
}

impl AccelByte {
    /// The former for these parameters (validated).
    pub fn new(params: AccelByteParams) -> Self {
        AccelByte { params }
    }

    /// The method it uses for a match of `teams` teams of `team_size` (its mode, `auto` resolved by AccelByte's rule).
    pub fn method_for(&self, teams: usize, team_size: usize) -> Method {
        self.params
            .mode
            .resolve(&Alliance::strict(teams, team_size), false)
    }
}

impl TeamFormer for AccelByte {
    fn split(
        &self,
        parties: &[Vec<&Player>],
        teams: usize,
        team_size: usize,
        _rng: &mut Pcg64,
    ) -> Option<Vec<Vec<usize>>> {
        let ab: Vec<AbParty> = parties
            .iter()
            .map(|p| AbParty {
                size: p.len(),
                totals: vec![p.iter().map(|m| m.rating.value).sum()],
                team: None,
            })
            .collect();
        let method = self.method_for(teams, team_size);
        let result = run(&ab, &Alliance::strict(teams, team_size), method)?;
        if result
            .teams
            .iter()
            .any(|t| t.iter().map(|&i| ab[i].size).sum::<usize>() != team_size)
        {
            return None;
        }
        Some(
            result
                .teams
                .into_iter()
                .map(|mut t| {
                    t.sort_unstable();
                    t
                })
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn party(size: usize, mmr_each: f64) -> AbParty {
        AbParty {
            size,
            totals: vec![mmr_each * size as f64],
            team: None,
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 0.01
    }

    /// The page's permutation example: session 1 holds A (party 1, MMR 70)
    /// on team 1; B 60, C 10 and the pair D, E (40 each) queue. Teams of 1
    /// to 3 players, up to 2 teams.
    fn permutation_example() -> Vec<AbParty> {
        let mut a = party(1, 70.0);
        a.team = Some(0);
        vec![a, party(1, 60.0), party(1, 10.0), party(2, 40.0)]
    }

    /// A row of the page's table: sequence, team 1, team 2, diff, distance.
    type Row = (
        &'static [usize],
        &'static [usize],
        &'static [usize],
        usize,
        f64,
    );

    #[test]
    fn permutation_example_gives_the_pages_table_and_result_6() {
        let parties = permutation_example();
        let mut seen = Vec::new();
        permutation_candidates(&parties, 2, 1, 3, &mut |c| {
            seen.push((c.sequence.to_vec(), c.teams.to_vec(), c.score))
        });
        // (sequence, team 1, team 2, diff, distance) as in the page's table;
        // party 0 = {A}, 1 = {B}, 2 = {C}, 3 = {D,E}.
        let table: [Row; 6] = [
            (&[1, 2, 3], &[0, 2], &[1, 3], 1, 6.66),
            (&[1, 3, 2], &[0, 3], &[1, 2], 1, 15.0),
            (&[2, 1, 3], &[0, 3], &[2, 1], 1, 15.0),
            (&[2, 3, 1], &[0, 3], &[2, 1], 1, 15.0),
            (&[3, 2, 1], &[0, 2, 1], &[3], 1, 6.66),
            (&[3, 1, 2], &[0, 1, 2], &[3], 1, 6.66),
        ];
        assert_eq!(seen.len(), 6);
        for ((sequence, teams, score), (seq, t1, t2, diff, dist)) in seen.iter().zip(table) {
            assert_eq!(sequence, seq);
            assert_eq!(teams, &vec![t1.to_vec(), t2.to_vec()]);
            assert_eq!(score.member_diff, diff);
            assert!((score.distance - dist).abs() < 0.01, "{score:?}");
        }
        let best = permutation(&parties, 2, 1, 3).unwrap();
        assert_eq!(best.teams, vec![vec![0, 1, 2], vec![3]]);
        assert_eq!(best.score.member_diff, 1);
        assert!(close(best.score.distance, 140.0 / 3.0 - 40.0));
        let alliance = Alliance {
            min_number: 1,
            max_number: 2,
            player_min_number: 1,
            player_max_number: 3,
        };
        assert_eq!(choose_method(&alliance, true), Method::Permutation);
    }

    /// The page's combination example: A 70, {B, C} 60 each, D 40, E 40,
    /// F 10; two teams of exactly 3.
    fn combination_example() -> Vec<AbParty> {
        vec![
            party(1, 70.0),
            party(2, 60.0),
            party(1, 40.0),
            party(1, 40.0),
            party(1, 10.0),
        ]
    }

    #[test]
    fn combination_example_gives_the_pages_table_and_picks_result_7() {
        let parties = combination_example();
        let mut seen = Vec::new();
        combination_candidates(&parties, 2, 3, &mut |c| {
            seen.push((c.teams.to_vec(), c.score))
        });
        let team1: Vec<Vec<usize>> = seen.iter().map(|(teams, _)| teams[0].clone()).collect();
        assert_eq!(
            team1,
            vec![
                vec![0, 1],
                vec![0, 2, 3],
                vec![0, 2, 4],
                vec![0, 3, 4],
                vec![1, 2],
                vec![1, 3],
                vec![1, 4],
                vec![2, 3, 4]
            ]
        );
        let distances: Vec<f64> = seen.iter().map(|(_, s)| s.distance).collect();
        for (ours, page) in distances
            .iter()
            .zip([33.34, 6.66, 13.34, 13.34, 13.34, 13.34, 6.66, 33.34])
        {
            assert!((ours - page).abs() < 0.01, "{distances:?}");
        }
        assert!(seen.iter().all(|(_, s)| s.member_diff == 0));
        // Results 2 and 7 tie at 6.66; the later one (7) wins: team 1 is
        // {B,C},{F}, team 2 is {A},{D},{E}.
        let best = combination(&parties, 2, 3).unwrap();
        assert_eq!(best.teams, vec![vec![1, 4], vec![0, 2, 3]]);
        assert!(close(best.score.distance, 50.0 - 130.0 / 3.0));
        assert_eq!(
            choose_method(&Alliance::strict(2, 3), false),
            Method::Combination
        );
    }

    /// The page's greedy example: eight parties, two teams of exactly 7.
    fn greedy_example() -> Vec<AbParty> {
        vec![
            party(1, 70.0), // 0: {A}
            party(2, 40.0), // 1: {B,C}
            party(1, 40.0), // 2: {D}
            party(1, 60.0), // 3: {E}
            party(1, 50.0), // 4: {F}
            party(2, 70.0), // 5: {G,H}
            party(3, 60.0), // 6: {I,J,K}
            party(3, 50.0), // 7: {L,M,N}
        ]
    }

    #[test]
    fn greedy_example_places_parties_in_the_pages_steps() {
        let best = greedy(&greedy_example(), 2, 7).unwrap();
        // In placement order: steps 1, 4, 5, 7 to team 1; 2, 3, 6, 8 to team 2.
        assert_eq!(best.teams, vec![vec![6, 1, 0, 4], vec![7, 5, 3, 2]]);
        let parties = greedy_example();
        let totals: Vec<f64> = best
            .teams
            .iter()
            .map(|t| t.iter().map(|&i| parties[i].totals[0]).sum())
            .collect();
        assert_eq!(totals, vec![380.0, 390.0]);
        assert_eq!(best.score.member_diff, 0);
        assert!(close(best.score.distance, 10.0 / 7.0));
        assert_eq!(
            choose_method(&Alliance::strict(2, 7), false),
            Method::Greedy
        );
    }

    #[test]
    fn twelve_players_go_to_greedy() {
        assert_eq!(
            choose_method(&Alliance::strict(2, 6), false),
            Method::Greedy
        );
        assert_eq!(
            choose_method(&Alliance::strict(1, 11), false),
            Method::Combination
        );
        let loose = Alliance {
            player_min_number: 4,
            ..Alliance::strict(2, 6)
        };
        assert_eq!(choose_method(&loose, false), Method::Permutation);
    }

    #[test]
    fn greedy_skips_a_team_that_would_strand_a_party() {
        // Teams of 7 from sizes 4, 3, 3, 2, 2 in value order 4, 3, 3, 2, 2:
        // plain greedy puts the second 3 on the lighter team 2 (3 + 3 = 6),
        // after which the two pairs cannot fill the 3 and 1 seats left.
        let parties = vec![
            party(4, 100.0),
            party(3, 90.0),
            party(3, 80.0),
            party(2, 70.0),
            party(2, 60.0),
        ];
        let best = greedy(&parties, 2, 7).unwrap();
        for team in &best.teams {
            assert_eq!(team.iter().map(|&i| parties[i].size).sum::<usize>(), 7);
        }
        assert!(greedy(&[party(2, 1.0), party(2, 1.0), party(2, 1.0)], 2, 3).is_none());
    }

    #[test]
    fn distance_sums_attributes_and_skips_empty_teams() {
        let parties = vec![
            AbParty {
                size: 1,
                totals: vec![10.0, 1.0],
                team: None,
            },
            AbParty {
                size: 2,
                totals: vec![40.0, 6.0],
                team: None,
            },
        ];
        let s = score(&parties, &[vec![0], vec![1], vec![]]);
        assert_eq!(s.member_diff, 2);
        assert!(close(s.distance, (20.0 - 10.0) + (3.0 - 1.0)));
    }

    #[test]
    fn validate_refuses_modes_that_do_not_fit() {
        let comb = AccelByteParams {
            mode: AccelByteMode::Combination,
        };
        assert!(comb.validate(2, 5).is_ok());
        let e = comb.validate(2, 6).unwrap_err();
        assert_eq!(e.key, "mode");
        assert!(
            e.message.contains("fewer than 12") && e.message.contains("12"),
            "{}",
            e.message
        );
        let perm = AccelByteParams {
            mode: AccelByteMode::Permutation,
        };
        assert!(perm.validate(2, 4).is_ok());
        assert!(perm.validate(2, 5).is_err());
        assert!(AccelByteParams::default().validate(2, 15).is_ok());
    }
}
