//! The engagement figures (`[engagement]`): who is still playing hour by
//! hour and day by day, how long sessions last, who quits by skill decile,
//! and how much of the quitting the waits and the results explain. Kept
//! apart from the other accumulators, so a run without the section carries
//! none of them and its `summary.json` is what it was.

use super::dist::{Dist, MsHist};
use crate::model::churn::{sigmoid, ChurnTerms};
use serde::{Deserialize, Serialize};

/// How the summary attributes churn to its causes, in words for readers.
pub const ATTRIBUTION_METHOD: &str = "per quit: (p - p with the term set to 0) / p, summed over quits after warm-up and divided by them; the shares overlap and need not add to 1";

/// One player's decision after one match, as the engine drew it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Decision {
    /// The player's id.
    pub player: u32,
    /// The churn model's logit terms for this decision.
    pub terms: ChurnTerms,
    /// Whether the player stopped after the match.
    pub quit: bool,
    /// Of a quit: for good rather than for a while.
    pub for_good: bool,
    /// Whether the match formed during warm-up; left out of every figure.
    pub in_warmup: bool,
}

#[derive(Clone, Debug, Default, PartialEq)]
struct DecileAcc {
    player_matches: u64,
    quits: u64,
    gone_for_good: u64,
}

/// The accumulators; the engine feeds them as matches form and end.
#[derive(Clone, Debug)]
pub struct EngagementAcc {
    /// Skill decile (0-9) of each player by true skill over the population.
    decile: Vec<u8>,
    /// The last hour and day (since the start) each player played in, + 1 (0: never).
    last_hour: Vec<u32>,
    last_day: Vec<u32>,
    /// Distinct players whose match formed in each hour and day since the start.
    active_hour: Vec<u64>,
    active_day: Vec<u64>,
    /// Players neither away nor gone at the start of each hour.
    engaged_hour: Vec<u64>,
    deciles: Vec<DecileAcc>,
    p_sum: f64,
    share_wait: f64,
    share_result: f64,
    share_lopsided: f64,
    /// Sessions by their number of matches (index), the last bin holding
    /// every longer one; and their lengths, exact to the millisecond.
    session_matches: Vec<u64>,
    session_ms: MsHist,
    sessions_censored: u64,
    arrivals_absent: u64,
    warmup_hours: u32,
    engaged_at_end: u64,
    gone_at_end: u64,
}

impl EngagementAcc {
    /// `decile`: each player's skill decile (0 = lowest tenth); `hours`: the
    /// hours the run covers (a started hour counts); `warmup_s`: left out of
    /// the per-match and per-session figures.
    pub fn new(decile: Vec<u8>, hours: u32, warmup_s: f64) -> Self {
        let n = decile.len();
        let days = hours.div_ceil(24) as usize;
        EngagementAcc {
            decile,
            last_hour: vec![0; n],
            last_day: vec![0; n],
            active_hour: vec![0; hours as usize],
            active_day: vec![0; days],
            engaged_hour: vec![0; hours as usize],
            deciles: vec![DecileAcc::default(); 10],
            p_sum: 0.0,
            share_wait: 0.0,
            share_result: 0.0,
            share_lopsided: 0.0,
            session_matches: vec![0; MAX_SESSION_MATCHES + 1],
            session_ms: MsHist::default(),
            sessions_censored: 0,
            arrivals_absent: 0,
            warmup_hours: (warmup_s / 3600.0).ceil() as u32,
            engaged_at_end: 0,
            gone_at_end: 0,
        }
    }

    /// Player `p` is in a match formed at `ms` since the start.
    pub fn played(&mut self, p: u32, ms: u64) {
        let hour = (ms / 3_600_000) as usize;
        let i = p as usize;
        if hour < self.active_hour.len() && self.last_hour[i] != hour as u32 + 1 {
            self.last_hour[i] = hour as u32 + 1;
            self.active_hour[hour] += 1;
        }
        let day = hour / 24;
        if day < self.active_day.len() && self.last_day[i] != day as u32 + 1 {
            self.last_day[i] = day as u32 + 1;
            self.active_day[day] += 1;
        }
    }

    /// Players engaged (neither away nor gone) as hour `hour` begins.
    pub fn engaged(&mut self, hour: u32, players: u64) {
        if let Some(h) = self.engaged_hour.get_mut(hour as usize) {
            *h = players;
        }
    }

    /// A fresh arrival that picked a player who was away or gone.
    pub fn arrival_absent(&mut self) {
        self.arrivals_absent += 1;
    }

    /// Counts one player's decision after one match.
    pub fn decision(&mut self, d: Decision) {
        if d.in_warmup {
            return;
        }
        let acc = &mut self.deciles[self.decile[d.player as usize] as usize];
        acc.player_matches += 1;
        let t = d.terms;
        let p = sigmoid(t.logit());
        self.p_sum += p;
        if d.quit {
            acc.quits += 1;
            if d.for_good {
                acc.gone_for_good += 1;
            }
            let without = |x: f64| (p - sigmoid(t.logit() - x)) / p;
            self.share_wait += without(t.wait);
            self.share_result += without(t.result);
            self.share_lopsided += without(t.lopsided);
        }
    }

    /// A session that ended: its matches and its length from the first
    /// ticket's enqueue to the last match's end.
    pub fn session(&mut self, matches: u32, ms: u64, in_warmup: bool) {
        if !in_warmup && matches > 0 {
            self.session_matches[(matches as usize).min(MAX_SESSION_MATCHES)] += 1;
            self.session_ms.add_ms(ms);
        }
    }

    /// A session still going when the run ended (left out of the lengths).
    pub fn session_censored(&mut self) {
        self.sessions_censored += 1;
    }

    /// Players engaged, and gone for good, when the run ended.
    pub fn at_end(&mut self, engaged: u64, gone: u64) {
        self.engaged_at_end = engaged;
        self.gone_at_end = gone;
    }

    /// The `engagement` block of `summary.json`.
    pub fn summary(&self) -> EngagementSummary {
        let total = self
            .deciles
            .iter()
            .fold(DecileAcc::default(), |a, d| DecileAcc {
                player_matches: a.player_matches + d.player_matches,
                quits: a.quits + d.quits,
                gone_for_good: a.gone_for_good + d.gone_for_good,
            });
        let share = |s: f64| (total.quits > 0).then(|| s / total.quits as f64);
        // Whole days after warm-up only: a day cut short by the run's end
        // or half spent in warm-up would pull the mean down.
        let hours = self.active_hour.len() as u32;
        let full: Vec<u64> = (0..self.active_day.len() as u32)
            .filter(|&d| d * 24 >= self.warmup_hours && (d + 1) * 24 <= hours)
            .map(|d| self.active_day[d as usize])
            .collect();
        let counts = CountDist(&self.session_matches);
        let minutes = |v: Option<f64>| v.map(|s| s / 60.0);
        let h = &self.session_ms;
        EngagementSummary {
            players: self.decile.len() as u64,
            player_matches: total.player_matches,
            quits: total.quits,
            quit_rate: ratio(total.quits, total.player_matches),
            predicted_quit_rate: (total.player_matches > 0)
                .then(|| self.p_sum / total.player_matches as f64),
            gone_for_good: total.gone_for_good,
            engaged_at_end: self.engaged_at_end,
            gone_at_end: self.gone_at_end,
            arrivals_absent: self.arrivals_absent,
            daily_active_mean: (!full.is_empty())
                .then(|| full.iter().sum::<u64>() as f64 / full.len() as f64),
            hourly_active_mean: {
                let after: Vec<u64> = self
                    .active_hour
                    .iter()
                    .skip(self.warmup_hours as usize)
                    .copied()
                    .collect();
                (!after.is_empty()).then(|| after.iter().sum::<u64>() as f64 / after.len() as f64)
            },
            daily_active: self
                .active_day
                .iter()
                .enumerate()
                .map(|(d, &n)| DayActive {
                    day: d as u32,
                    active_players: n,
                })
                .collect(),
            by_hour: (0..self.active_hour.len())
                .map(|h| HourActive {
                    hour: h as u32,
                    active_players: self.active_hour[h],
                    engaged_players: self.engaged_hour[h],
                })
                .collect(),
            sessions: h.n(),
            sessions_censored: self.sessions_censored,
            session_matches: SessionDist {
                mean: counts.mean_sorted(),
                p50: counts.quantile(0.5),
                p90: counts.quantile(0.9),
            },
            session_minutes: SessionDist {
                mean: minutes(h.mean_exact_s()),
                p50: minutes(h.quantile(0.5)),
                p90: minutes(h.quantile(0.9)),
            },
            churn_by_skill_decile: self
                .deciles
                .iter()
                .enumerate()
                .map(|(i, d)| DecileChurn {
                    decile: i as u32 + 1,
                    player_matches: d.player_matches,
                    quits: d.quits,
                    gone_for_good: d.gone_for_good,
                    quit_rate: ratio(d.quits, d.player_matches),
                })
                .collect(),
            attribution: Attribution {
                method: ATTRIBUTION_METHOD.to_string(),
                wait_share: share(self.share_wait),
                result_share: share(self.share_result),
                lopsided_share: share(self.share_lopsided),
            },
        }
    }
}

/// Sessions longer than this many matches share the last bin.
const MAX_SESSION_MATCHES: usize = 10_000;

/// Counts by value (index): a distribution of small whole numbers, exact.
struct CountDist<'a>(&'a [u64]);

impl Dist for CountDist<'_> {
    fn n(&self) -> u64 {
        self.0.iter().sum()
    }
    fn at_rank(&self, r: u64) -> f64 {
        let mut seen = 0;
        for (v, &c) in self.0.iter().enumerate() {
            seen += c;
            if seen > r {
                return v as f64;
            }
        }
        (self.0.len() - 1) as f64
    }
    fn for_each(&self, f: &mut dyn FnMut(f64, u64)) {
        for (v, &c) in self.0.iter().enumerate() {
            if c > 0 {
                f(v as f64, c);
            }
        }
    }
}

fn ratio(num: u64, den: u64) -> Option<f64> {
    (den > 0).then(|| num as f64 / den as f64)
}

/// `engagement` in `summary.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EngagementSummary {
    /// Players in the population.
    pub players: u64,
    /// Decisions after warm-up: one per player per finished match (leavers aside).
    pub player_matches: u64,
    /// Of them, the player stopped (for the day or for good).
    pub quits: u64,
    /// `quits` over `player_matches`.
    pub quit_rate: Option<f64>,
    /// The model's mean probability over the same decisions.
    pub predicted_quit_rate: Option<f64>,
    /// Quits that were for good.
    pub gone_for_good: u64,
    /// Players neither away nor gone at the end, and gone for good by then.
    pub engaged_at_end: u64,
    /// Players gone for good by the end.
    pub gone_at_end: u64,
    /// Fresh arrivals that picked a player away or gone (no ticket).
    pub arrivals_absent: u64,
    /// Mean distinct players per whole simulated day after warm-up.
    pub daily_active_mean: Option<f64>,
    /// Mean distinct players per simulated hour after warm-up.
    pub hourly_active_mean: Option<f64>,
    /// Distinct players per simulated day since the start.
    pub daily_active: Vec<DayActive>,
    /// Active and engaged players per simulated hour since the start.
    pub by_hour: Vec<HourActive>,
    /// Sessions ended after warm-up (a session: a fresh ticket and the
    /// requeues that follow it, until the player stops or does not queue again).
    pub sessions: u64,
    /// Sessions still going when the run ended (not in the distributions).
    pub sessions_censored: u64,
    /// Matches per ended session.
    pub session_matches: SessionDist,
    /// Minutes per ended session, from the first ticket's enqueue to the last match's end.
    pub session_minutes: SessionDist,
    /// Decisions and quits by the player's true-skill decile.
    pub churn_by_skill_decile: Vec<DecileChurn>,
    /// How much of the quitting each term of the churn model made.
    pub attribution: Attribution,
}

/// Active players on one simulated day (`engagement.daily_active`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DayActive {
    /// Day since the start (0 = the first 24 hours).
    pub day: u32,
    /// Distinct players in a match formed that day.
    pub active_players: u64,
}

/// Active and engaged players in one simulated hour (`engagement.by_hour`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HourActive {
    /// Hour since the start.
    pub hour: u32,
    /// Distinct players in a match formed that hour.
    pub active_players: u64,
    /// Players neither away nor gone as the hour began.
    pub engaged_players: u64,
}

/// A distribution's mean, median and 90th percentile.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SessionDist {
    /// Its mean.
    pub mean: Option<f64>,
    /// Its median.
    pub p50: Option<f64>,
    /// Its 90th percentile.
    pub p90: Option<f64>,
}

/// One true-skill decile's churn (`engagement.churn_by_skill_decile`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DecileChurn {
    /// 1 = the lowest tenth of true skill.
    pub decile: u32,
    /// Decisions after warm-up by players of the decile.
    pub player_matches: u64,
    /// Of them, quits.
    pub quits: u64,
    /// Quits that were for good.
    pub gone_for_good: u64,
    /// `quits` over `player_matches`.
    pub quit_rate: Option<f64>,
}

/// The quits' causes (`engagement.attribution`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Attribution {
    /// How the shares are computed, in words (`ATTRIBUTION_METHOD`).
    pub method: String,
    /// Mean over quits of the share of the quit's probability the wait term made.
    pub wait_share: Option<f64>,
    /// The same for the loss and losing-streak terms together.
    pub result_share: Option<f64>,
    /// The same for the lopsidedness term.
    pub lopsided_share: Option<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(result: f64, wait: f64) -> ChurnTerms {
        ChurnTerms {
            base: -2.0,
            result,
            lopsided: 0.0,
            wait,
        }
    }

    #[test]
    fn attribution_and_activity_by_hand() {
        let mut acc = EngagementAcc::new(vec![0, 9, 9], 48, 0.0);
        // A quit with logit -2 + 1 + 1 = 0 (p = 0.5): without the wait p =
        // sigmoid(-1) = 0.268941, so the wait made (0.5 - 0.268941) / 0.5 =
        // 0.462117 of it, and the result the same.
        acc.decision(Decision {
            player: 0,
            terms: terms(1.0, 1.0),
            quit: true,
            for_good: false,
            in_warmup: false,
        });
        // A quit with no wait term: the wait made none of it.
        acc.decision(Decision {
            player: 1,
            terms: terms(1.0, 0.0),
            quit: true,
            for_good: true,
            in_warmup: false,
        });
        acc.decision(Decision {
            player: 2,
            terms: terms(0.0, 0.0),
            quit: false,
            for_good: false,
            in_warmup: false,
        });
        // Player 0 plays twice in hour 0, player 1 in hours 0 and 25.
        for (p, ms) in [(0, 1_000), (0, 2_000), (1, 3_000), (1, 25 * 3_600_000)] {
            acc.played(p, ms);
        }
        let s = acc.summary();
        assert!((s.attribution.wait_share.unwrap() - 0.462_117 / 2.0).abs() < 1e-6);
        // Result: quit 1 at logit -1 (p 0.268941) falls to sigmoid(-2) = 0.119203 without it.
        let r1 = (0.268_941 - 0.119_203) / 0.268_941;
        assert!((s.attribution.result_share.unwrap() - (0.462_117 + r1) / 2.0).abs() < 1e-5);
        assert_eq!(s.quit_rate, Some(2.0 / 3.0));
        assert_eq!(s.churn_by_skill_decile[9].player_matches, 2);
        assert_eq!(s.churn_by_skill_decile[9].gone_for_good, 1);
        assert_eq!(s.by_hour[0].active_players, 2);
        assert_eq!(s.by_hour[25].active_players, 1);
        assert_eq!(
            s.daily_active
                .iter()
                .map(|d| d.active_players)
                .collect::<Vec<_>>(),
            vec![2, 1]
        );
        assert_eq!(s.daily_active_mean, Some(1.5));
    }
}
