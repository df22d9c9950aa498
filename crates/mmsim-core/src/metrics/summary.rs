//! `summary.json` as a type: every metric of one run, with its unit in its
//! name. The report, `compare`, replications and sweeps read these fields, so
//! renaming a metric is a compile error rather than a silent gap. No
//! wall-clock figure goes in, so the same scenario and seed give the same bytes.

use serde::{Deserialize, Serialize};

/// What the summary says about the run itself.
pub struct RunMeta<'a> {
    /// The scenario's name.
    pub scenario: &'a str,
    /// The run's seed.
    pub seed: u64,
    /// The policy's `kind`.
    pub policy: &'a str,
    /// The rating system's name.
    pub rating_system: &'a str,
    /// Simulated seconds, warm-up included.
    pub duration_s: f64,
    /// Seconds of warm-up.
    pub warmup_s: f64,
    /// Fresh arrivals dropped because a chosen player was busy.
    pub arrivals_blocked: u64,
}

/// One run's metrics. Tickets and matches that began during warm-up are left
/// out of every figure; waits are over matched tickets (the time a player
/// waited to play), `queue_time_s` over every ticket including those who gave up.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// The scenario's name.
    pub scenario: String,
    /// The run's seed: same seed, same arrivals.
    pub seed: u64,
    /// The policy's `kind`.
    pub policy: String,
    /// The rating system's name.
    pub rating_system: String,
    /// Simulated seconds, warm-up included.
    pub duration_s: f64,
    /// Seconds of warm-up; nothing that began in it is measured.
    pub warmup_s: f64,
    /// Tickets enqueued after warm-up.
    pub tickets: u64,
    /// Matches formed after warm-up.
    pub matches: u64,
    /// Matches formed per simulated hour after warm-up.
    pub matches_per_hour: f64,
    /// Tickets that gave up waiting.
    pub abandoned: u64,
    /// Share of tickets that gave up waiting.
    pub abandon_rate: Option<f64>,
    /// Tickets still in the queue when the run ended (censored).
    pub still_waiting: u64,
    /// Fresh arrivals dropped because a chosen player was busy.
    pub arrivals_blocked: u64,
    /// Players online in the matchmaker (waiting or in a match) over the
    /// queue samples after warm-up: the figure a population is sized by.
    pub concurrent_players: ConcurrentPlayers,
    /// Wait of matched tickets, in seconds.
    pub wait_s: Describe,
    /// Time in queue of every ticket, matched or not, in seconds.
    pub queue_time_s: Describe,
    /// `wait_s` by decile of the population's true skill (1 = lowest tenth).
    pub wait_s_by_skill_decile: Vec<DecileWait>,
    /// Highest minus lowest player rating in a match (rating points).
    pub spread_rating: MeanP50P90,
    /// Highest minus lowest true skill in a match (skill points).
    pub spread_skill: MeanP50P90,
    /// |P(team 0 wins) - 0.5| on true skill: how far from a coin flip.
    pub win_prob_gap: MeanP90,
    /// Share of finished matches the side favoured by true skill lost.
    pub upset_rate: Option<f64>,
    /// Share of matches in which two players on opposite teams played their previous match in the same match (as teammates or opponents).
    pub rematch_rate: Option<f64>,
    /// Mean squared error of the rating system's win prediction.
    pub brier_score: Option<f64>,
    /// Team-format figures, present when teams have more than one player.
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub team: Option<TeamMetrics>,
    /// Spearman correlation of rating and true skill at the end, over players who played.
    pub rating_skill_rank_corr: Option<f64>,
    /// Games before a player's rating first lay within one deviation of true skill.
    pub games_to_within_one_deviation: GamesToWithin,
    /// Mean absolute rating change by the number of the player's game.
    pub rating_change_by_game: Vec<RatingChange>,
    /// Players left alive on the winning side (battle outcome model only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub survivors_hist: Option<SurvivorsHist>,
    /// Share of finished matches won with 10 or more survivors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub survivors_10_plus_share: Option<f64>,
    /// Gold-difference integral (gold outcome model only), in gold-minutes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gold_integral: Option<GoldIntegral>,
    /// Rank correlation of rating and true skill over time, one point per measured queue sample.
    pub rating_skill_rank_corr_series: Vec<CorrPoint>,
    /// Wait, abandon rate, queue length and how well the ratings predict,
    /// per hour of the simulated day.
    pub by_hour: Vec<HourFigures>,
    /// Realised upset rate against the models' by gap between the two teams.
    pub upset_by_gap: UpsetByGap,
    /// The ready check's figures, when the scenario has `[acceptance]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acceptance: Option<super::backfill::AcceptanceSummary>,
    /// Leaves and backfills, when the scenario has `[backfill]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backfill: Option<super::backfill::BackfillSummary>,
    /// Waits by main role and roles played, with a role queue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roles: Option<super::RoleSummary>,
    /// Ping at the host, matches by data centre, waits by home region
    /// (`[regions]` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regions: Option<super::regions::RegionsSummary>,
    /// Tickets, matches, waits and abandons per game mode, and multi-queued
    /// tickets against single-queued ones (`[modes]` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modes: Option<super::modes::ModesSummary>,
    /// Active players, sessions, churn by skill decile and its attribution
    /// (`[engagement]` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engagement: Option<super::engagement::EngagementSummary>,
    /// What held tickets back (`--explain` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explain: Option<super::explain::ExplainSummary>,
}

/// Summary keys written only when their scenario section is present, so a
/// report test built without those sections does not expect them.
pub const SECTION_KEYS: &[&str] = &["acceptance", "backfill", "engagement", "explain", "modes"];

/// One hour of the simulated day (hour `h` holds every day's
/// `h:00`-`h:59`), warm-up excluded: tickets by the time they joined the
/// queue, queue samples by their time. Hours with neither are left out.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HourFigures {
    /// Hour of the day, 0 to 23.
    pub hour: u32,
    /// Tickets enqueued in this hour.
    pub tickets: u64,
    /// Of them, those that found a match (the waits below are theirs).
    pub matched: u64,
    /// Median wait of the matched, in seconds.
    pub wait_p50_s: Option<f64>,
    /// The same, 90th percentile.
    pub wait_p90_s: Option<f64>,
    /// The same, 99th percentile.
    pub wait_p99_s: Option<f64>,
    /// Share of the hour's tickets that gave up.
    pub abandon_rate: Option<f64>,
    /// Queue samples taken in this hour, and the tickets waiting in them.
    pub queue_samples: u64,
    /// Mean tickets waiting over those samples.
    pub queue_mean_tickets: Option<f64>,
    /// Most tickets waiting in one of them.
    pub queue_max_tickets: Option<u32>,
    /// Players waiting or in a match in those samples: mean and most.
    pub concurrent_mean_players: Option<f64>,
    /// Most players waiting or in a match in one of them.
    pub concurrent_max_players: Option<u32>,
    /// Matches formed in this hour, and how well ratings predicted them as
    /// the ladder matured: the mean |P(team 0 wins) - 0.5| by the rating
    /// system's own prediction (criterion 1 as the matchmaker sees it) and
    /// by true skill (as the players live it), and the rating system's
    /// Brier score over those that finished.
    pub matches: u64,
    /// Mean |P(team 0 wins) - 0.5| by the rating system's prediction.
    pub rating_win_prob_gap: Option<f64>,
    /// Mean |P(team 0 wins) - 0.5| by true skill.
    pub true_win_prob_gap: Option<f64>,
    /// The rating system's Brier score over the hour's finished matches.
    pub brier_score: Option<f64>,
    /// Spearman correlation of ratings and true skill over players who
    /// have played, averaged over the hour's queue samples.
    pub rating_skill_rank_corr: Option<f64>,
}

/// Upsets binned by the gap between two teams: `skill` by the gap in mean
/// true skill (upset: the side the outcome model favoured lost; model: its
/// mean probability of that), `rating` by the gap in mean rating (upset: the
/// higher-rated side lost; model: the rating system's mean predicted
/// probability of that). Finished two-team matches after warm-up; bins
/// without matches are left out.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct UpsetByGap {
    /// Bins by the gap in mean true skill.
    pub skill: Vec<GapBin>,
    /// Bins by the gap in mean rating.
    pub rating: Vec<GapBin>,
}

/// One bin of `upset_by_gap`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GapBin {
    /// The bin is `gap_from <= gap < gap_to`; `gap_to` is null for the last.
    pub gap_from: f64,
    /// Upper edge of the bin (exclusive); `None` for the last, open bin.
    pub gap_to: Option<f64>,
    /// Finished matches in the bin.
    pub matches: u64,
    /// Share of them the favoured side lost.
    pub upset_rate: Option<f64>,
    /// The model's mean probability of that upset.
    pub model_upset_rate: Option<f64>,
}

/// Left edges of the upset bins, in skill or rating points; the last bin is
/// open. 500 and 600 bracket the 1v1 thread's "under 3%" claim.
pub const GAP_EDGES: [f64; 10] = [
    0.0, 25.0, 50.0, 100.0, 150.0, 200.0, 300.0, 400.0, 500.0, 600.0,
];

/// The bin a gap falls into.
pub fn gap_bin(gap: f64) -> usize {
    GAP_EDGES.partition_point(|&e| e <= gap).saturating_sub(1)
}

/// Hour of the simulated day (0-23) of a time in milliseconds since the start.
pub fn hour_of_day(ms: u64) -> u32 {
    (ms / 3_600_000 % 24) as u32
}

/// `{n, mean, p50, p90, p99, max}`; the figures are null when n is 0.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Describe {
    /// Values counted.
    pub n: u64,
    /// Their mean.
    pub mean: Option<f64>,
    /// Their median.
    pub p50: Option<f64>,
    /// Their 90th percentile.
    pub p90: Option<f64>,
    /// Their 99th percentile.
    pub p99: Option<f64>,
    /// The largest.
    pub max: Option<f64>,
}

/// One true-skill decile's wait in `wait_s_by_skill_decile`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DecileWait {
    /// Wait of the decile's matched tickets, in seconds.
    #[serde(flatten)]
    pub wait_s: Describe,
    /// 1 = the lowest tenth of true skill, 10 = the highest.
    pub decile: u32,
    /// Lowest true skill in the decile.
    pub skill_from: Option<f64>,
    /// Highest true skill in the decile.
    pub skill_to: Option<f64>,
    /// Tickets of the decile enqueued after warm-up.
    pub tickets: u64,
    /// Share of them that gave up.
    pub abandon_rate: Option<f64>,
}

/// Mean, median and 90th percentile of a figure; null without data.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MeanP50P90 {
    /// The mean.
    pub mean: Option<f64>,
    /// The median.
    pub p50: Option<f64>,
    /// The 90th percentile.
    pub p90: Option<f64>,
}

/// Players waiting or in a match (lobby included) at the queue samples:
/// the mean and the most in one sample, and the mean of each part; all null
/// without samples after warm-up.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ConcurrentPlayers {
    /// Queue samples after warm-up.
    pub samples: u64,
    /// Mean players waiting or in a match.
    pub mean: Option<f64>,
    /// Most in one sample.
    pub max: Option<u32>,
    /// Mean players waiting.
    pub waiting_mean: Option<f64>,
    /// Mean players in a match (lobby included).
    pub playing_mean: Option<f64>,
}

/// Mean and 90th percentile of a figure; null without data.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MeanP90 {
    /// The mean.
    pub mean: Option<f64>,
    /// The 90th percentile.
    pub p90: Option<f64>,
}

/// Units: `team_rating_gap` in rating points (highest minus lowest team mean
/// rating), `top_player_gap_skill` in true-skill points (highest minus lowest
/// of the teams' best players), `party_count_gap` in parties.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TeamMetrics {
    /// Highest minus lowest team mean rating (rating points).
    pub team_rating_gap: MeanP50P90,
    /// Highest minus lowest of the teams' best players' true skill (skill points).
    pub top_player_gap_skill: MeanP50P90,
    /// The difference in parties between teams.
    pub party_count_gap: PartyCountGap,
    /// The gap between teams' mean shown win rates (percentage points).
    pub win_rate_gap_pp: WinRateGap,
}

/// How unevenly parties are spread over the teams.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PartyCountGap {
    /// Mean of the most parties on one team minus the fewest on another.
    pub mean: Option<f64>,
    /// Share of matches whose teams hold equally many parties.
    pub equal_share: Option<f64>,
}

/// The Armored Warfare table over the gap between the teams' mean shown win
/// rates, in percentage points: `within_1` = gap <= 1, `within_2` = 1 < gap
/// <= 2, `3_or_more` = gap > 2 (the post's "+/- 3 or more" takes all above 2).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WinRateGap {
    /// Matches counted.
    pub n: u64,
    /// Share with a gap of at most 1 point.
    pub within_1: Option<f64>,
    /// Share with a gap above 1 and at most 2 points.
    pub within_2: Option<f64>,
    /// Share with a gap above 2 points.
    #[serde(rename = "3_or_more")]
    pub three_or_more: Option<f64>,
    /// Mean gap, in percentage points.
    pub mean: Option<f64>,
}

/// Games a player needed before the rating first lay within one deviation
/// of true skill, over players who got there.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GamesToWithin {
    /// Median games, over players who got there.
    pub median: Option<f64>,
    /// The 90th percentile.
    pub p90: Option<f64>,
    /// Players who got there.
    pub players: u64,
    /// Their share of the players who played.
    pub share_of_players_who_played: Option<f64>,
}

/// One game number's rating moves in `rating_change_by_game`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RatingChange {
    /// The game number (1 = a player's first rated game).
    pub game: u64,
    /// Mean |rating after - rating before| at that game (rating points).
    pub mean_abs_change_rating: f64,
    /// Rating updates at that game.
    pub updates: u64,
}

/// Finished matches by survivors on the winning side (battle model only).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SurvivorsHist {
    /// The most frequent number of survivors.
    pub mode: u64,
    /// Matches per number of survivors.
    pub counts: Vec<SurvivorsCount>,
}

/// One row of `survivors_hist`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SurvivorsCount {
    /// Survivors on the winning side.
    pub survivors: u64,
    /// Finished matches with that many.
    pub matches: u64,
    /// Their share of finished matches.
    pub share: f64,
}

/// The gold-difference integral's distribution (gold model only).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GoldIntegral {
    /// The unit of the figures (gold-minutes).
    pub unit: String,
    /// Finished matches counted.
    pub n: u64,
    /// Mean integral.
    pub mean: Option<f64>,
    /// 10th percentile.
    pub p10: Option<f64>,
    /// Median.
    pub p50: Option<f64>,
    /// 90th percentile.
    pub p90: Option<f64>,
    /// 99th percentile.
    pub p99: Option<f64>,
}

/// One point of `rating_skill_rank_corr_series`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CorrPoint {
    /// Seconds since the start.
    pub t_s: f64,
    /// Spearman correlation of rating and true skill at that time.
    pub corr: f64,
}

impl Summary {
    /// The summary as a JSON tree, for code that addresses metrics by a
    /// path typed by a user (`--metrics wait_s.p90`).
    pub fn to_value(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("a summary serializes")
    }
}

/// What each top-level key of `summary.json` means, for the report. A test
/// checks that this list and the serialized keys are the same set.
pub const MEANINGS: &[(&str, &str)] = &[
    (
        "acceptance",
        "the ready check ([acceptance]): accept rates per player and per match, matches cancelled, ticket-seconds lost to declines",
    ),
    (
        "backfill",
        "leaves from running matches ([backfill]): leaves per match, share filled, time to backfill, share finished short-handed; with [acceptance] backfill joiners' ready checks and declines; with [roles] leaves, fills and time to backfill by the role of the open slot",
    ),
    (
        "engagement",
        "players who quit and come back ([engagement]): daily and hourly active players, session length, churn by skill decile, churn attributed to waits and results",
    ),
    (
        "explain",
        "what held tickets back (--explain): ticket-seconds each rule (party split, roles, latency, rating window, fill) blocked, overall and by wait",
    ),
    ("scenario", "the scenario's name"),
    ("seed", "the run's seed: same seed, same arrivals"),
    ("policy", "the matchmaking policy"),
    ("rating_system", "the rating system"),
    ("duration_s", "simulated time, seconds"),
    (
        "warmup_s",
        "simulated warm-up left out of every figure, seconds",
    ),
    ("tickets", "tickets enqueued after warm-up"),
    ("matches", "matches formed after warm-up"),
    (
        "matches_per_hour",
        "matches formed per simulated hour after warm-up",
    ),
    ("abandoned", "tickets that gave up waiting"),
    ("abandon_rate", "share of tickets that gave up waiting"),
    ("still_waiting", "tickets still waiting when the run ended"),
    (
        "concurrent_players",
        "players online in the matchmaker (waiting or in a match) over the queue samples after warm-up: mean, most in one sample, and the mean waiting and playing; the figure a population is sized by",
    ),
    (
        "arrivals_blocked",
        "fresh arrivals dropped because a chosen player was busy",
    ),
    ("wait_s", "wait of matched tickets, seconds"),
    (
        "queue_time_s",
        "time in queue of every ticket, matched or not, seconds",
    ),
    (
        "wait_s_by_skill_decile",
        "wait of matched tickets by decile of the population's true skill (1 = lowest)",
    ),
    (
        "spread_rating",
        "highest minus lowest player rating in a match, rating points",
    ),
    ("spread_skill", "highest minus lowest true skill in a match"),
    (
        "win_prob_gap",
        "|P(team 0 wins) - 0.5| on true skill: distance from a coin flip",
    ),
    (
        "upset_rate",
        "share of finished matches the side favoured by true skill lost",
    ),
    (
        "rematch_rate",
        "share of matches in which two players on opposite teams played their previous match in the same match (as teammates or opponents)",
    ),
    (
        "brier_score",
        "mean squared error of the rating system's win prediction (0.25 = coin flip)",
    ),
    (
        "team_rating_gap",
        "highest minus lowest team mean rating, rating points",
    ),
    (
        "top_player_gap_skill",
        "gap between the teams' best players' true skill",
    ),
    (
        "party_count_gap",
        "difference in the number of parties per team",
    ),
    (
        "win_rate_gap_pp",
        "gap between the teams' mean shown win rates, percentage points (Armored Warfare's table)",
    ),
    (
        "rating_skill_rank_corr",
        "Spearman correlation of rating and true skill at the end (1 = same order)",
    ),
    (
        "games_to_within_one_deviation",
        "games before a player's rating first lay within one deviation of true skill",
    ),
    (
        "rating_change_by_game",
        "mean absolute rating change at each game number: the calibration period",
    ),
    (
        "survivors_hist",
        "players alive on the winning side at the end: the landslide histogram",
    ),
    (
        "survivors_10_plus_share",
        "share of finished matches won with 10 or more survivors",
    ),
    (
        "gold_integral",
        "integral of the gold difference since it last crossed zero, gold-minutes",
    ),
    (
        "rating_skill_rank_corr_series",
        "rank correlation of rating and true skill over time",
    ),
    (
        "by_hour",
        "per hour of the simulated day (0-23), warm-up excluded: tickets enqueued, matched, wait p50/p90/p99 of the matched (s), abandon rate, tickets waiting in the queue samples (mean, max), players waiting or in a match in them (mean, max), and how the ladder learns: matches formed, their mean |P - 0.5| by the ratings' prediction and by true skill, the ratings' Brier score, and the rank correlation of ratings with true skill",
    ),
    (
        "roles",
        "role queue only: by main role, players, wait of the matched (s), abandon rate, share who played their main role, and players who played the role; over all matched players, the share who played their main role and a role they accept",
    ),
    (
        "upset_by_gap",
        "upset rate by gap between the two teams, realised against the model's (mean predicted chance the favourite loses): by true-skill gap (outcome model) and by rating gap (rating system)",
    ),
    (
        "regions",
        "with [regions]: each matched player's ping to the hosting data centre (ms: mean, p50, p90, max), matches by data centre and their share, tickets, abandon rate and wait p50/p90 (s) by the lead player's home region",
    ),
    (
        "modes",
        "with [modes]: per mode, tickets counted where they matched (or, unmatched, in the mode they drew), matched, abandon rate, wait p50/p90 of the matched (s), matches, mean rating spread and win-probability gap, and the multi-queued tickets it matched with their share; multi-queued tickets against single-queued ones drawn for a mode of the set (tickets, matched, abandon rate, wait p50/p90)",
    ),
];

/// The meaning of a top-level summary key, or of a dotted path's first part.
pub fn meaning(key: &str) -> Option<&'static str> {
    let head = key.split(['.', '[']).next().unwrap_or(key);
    MEANINGS.iter().find(|(k, _)| *k == head).map(|(_, m)| *m)
}
