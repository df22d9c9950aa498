use super::*;
use crate::model::{Player, PlayerId, Rating};

fn player(id: u32, rating: f64, languages: u32) -> Player {
    let mut p = Player::new(PlayerId(id), rating, Rating::new(rating, 50.0, 0.06));
    p.languages = languages;
    p
}

/// Parses and binds with the naming conventions; languages are en, fr, de.
fn ruleset(json: &str) -> Ruleset {
    let mut rs = Ruleset::parse(json).unwrap_or_else(|e| panic!("{e}"));
    rs.bind(Source::by_convention, |s| {
        (s == Source::Languages).then(|| vec!["en".into(), "fr".into(), "de".into()])
    })
    .unwrap_or_else(|e| panic!("{e}"));
    rs
}

/// A candidate of solo tickets: `teams[k]` lists team k's players.
fn cand<'a>(teams: &[&[&'a Player]]) -> Candidate<'a> {
    Candidate {
        teams: teams.len(),
        tickets: teams
            .iter()
            .enumerate()
            .flat_map(|(k, ps)| {
                ps.iter().map(move |p| CandTicket {
                    team: k,
                    players: smallvec::smallvec![*p],
                })
            })
            .collect(),
    }
}

const TWO_V_TWO: &str =
    r#""teams": [{ "name": "red", "maxPlayers": 2 }, { "name": "blue", "maxPlayers": 2 }]"#;

#[test]
fn a_comparison_rule_on_team_averages_compares_the_named_teams() {
    let rs = ruleset(&format!(
        r#"{{ "ruleLanguageVersion": "1.0",
             "playerAttributes": [{{ "name": "skill", "type": "number" }}],
             {TWO_V_TWO},
             "rules": [{{ "name": "RedNotWeaker", "type": "comparison",
                 "measurements": ["avg(teams[red].players.attributes[skill])"],
                 "referenceValue": "avg(teams[blue].players.attributes[skill])",
                 "operation": ">=" }}] }}"#
    ));
    let (a, b, c, d) = (
        player(0, 1000.0, 1),
        player(1, 1200.0, 1),
        player(2, 1050.0, 1),
        player(3, 1100.0, 1),
    );
    // Red averages 1100, blue 1075: red is not weaker.
    assert!(rs.passes(&cand(&[&[&a, &b], &[&c, &d]]), 0.0, false));
    // Swapped: red 1075 against blue 1100.
    assert!(!rs.passes(&cand(&[&[&c, &d], &[&a, &b]]), 0.0, false));
    // Equal averages (1100 and 1100) pass `>=`.
    let e = player(4, 1150.0, 1);
    assert!(rs.passes(&cand(&[&[&a, &b], &[&c, &e]]), 0.0, false));
}

#[test]
fn equal_team_averages_without_a_reference_need_every_team_equal() {
    let rs = ruleset(&format!(
        r#"{{ "playerAttributes": [{{ "name": "skill" }}], {TWO_V_TWO}, "ruleLanguageVersion": "1.0",
             "rules": [{{ "name": "Even", "type": "comparison", "operation": "=",
                 "measurements": ["avg(teams[*].players.attributes[skill])"] }}] }}"#
    ));
    let ps: Vec<Player> = [1000.0, 1200.0, 1050.0, 1150.0, 1100.0]
        .iter()
        .enumerate()
        .map(|(i, &r)| player(i as u32, r, 1))
        .collect();
    assert!(rs.passes(&cand(&[&[&ps[0], &ps[1]], &[&ps[2], &ps[3]]]), 0.0, false));
    assert!(!rs.passes(&cand(&[&[&ps[0], &ps[1]], &[&ps[2], &ps[4]]]), 0.0, false));
}

#[test]
fn a_team_average_distance_rule_expands_with_the_wait() {
    // Example 1's FairTeamSkill: each team's average within 10 of the
    // match's, 50 from 5 s. Teams average 1000 and 1060: 30 from the mean.
    let rs = ruleset(&format!(
        r#"{{ "ruleLanguageVersion": "1.0", "playerAttributes": [{{ "name": "skill" }}], {TWO_V_TWO},
             "rules": [{{ "name": "FairTeamSkill", "type": "distance",
                 "measurements": ["avg(teams[*].players.attributes[skill])"],
                 "referenceValue": "avg(flatten(teams[*].players.attributes[skill]))",
                 "maxDistance": 10 }}],
             "expansions": [{{ "target": "rules[FairTeamSkill].maxDistance",
                 "steps": [{{ "waitTimeSeconds": 5, "value": 50 }}] }}] }}"#
    ));
    let ps: Vec<Player> = [950.0, 1050.0, 1000.0, 1120.0]
        .iter()
        .enumerate()
        .map(|(i, &r)| player(i as u32, r, 1))
        .collect();
    let c = cand(&[&[&ps[0], &ps[1]], &[&ps[2], &ps[3]]]);
    assert!(!rs.passes(&c, 4.999, false));
    assert!(rs.passes(&c, 5.0, false));
    assert!(!rs.rules[0].team_free, "team averages depend on the split");
}

#[test]
fn a_compound_rule_passes_when_either_named_rule_does_and_they_bind_only_through_it() {
    let rs = ruleset(
        r#"{ "ruleLanguageVersion": "1.0",
             "playerAttributes": [{ "name": "skill" }, { "name": "languages", "type": "string_list" }],
             "teams": [{ "name": "p", "maxPlayers": 1, "quantity": 2 }],
             "rules": [
               { "name": "Close", "type": "batchDistance", "batchAttribute": "skill", "maxDistance": 50 },
               { "name": "SameLanguage", "type": "collection", "operation": "intersection",
                 "measurements": ["flatten(teams[*].players.attributes[languages])"], "minCount": 1 },
               { "name": "Either", "type": "compound", "statement": "or(Close, SameLanguage)" }
             ] }"#,
    );
    assert!(rs.rules[0].in_compound && rs.rules[1].in_compound);
    assert!(!rs.rules[2].in_compound);
    let en = player(0, 1000.0, 0b001);
    let en_far = player(1, 1300.0, 0b011);
    let fr_far = player(2, 1300.0, 0b010);
    let de_near = player(3, 1030.0, 0b100);
    // Far apart but both speak English.
    assert!(rs.passes(&cand(&[&[&en], &[&en_far]]), 0.0, false));
    // Far apart, no common language.
    assert!(!rs.passes(&cand(&[&[&en], &[&fr_far]]), 0.0, false));
    // No common language, but within 50.
    assert!(rs.passes(&cand(&[&[&en], &[&de_near]]), 0.0, false));
}

#[test]
fn a_reference_intersection_count_counts_players_with_a_reference_name() {
    let rs = ruleset(
        r#"{ "ruleLanguageVersion": "1.0",
             "playerAttributes": [{ "name": "languages", "type": "string_list" }],
             "teams": [{ "name": "p", "maxPlayers": 2, "quantity": 2 }],
             "rules": [{ "name": "FewFrench", "type": "collection", "operation": "reference_intersection_count",
                 "measurements": ["flatten(teams[*].players.attributes[languages])"],
                 "referenceValue": ["fr"], "maxCount": 2 }] }"#,
    );
    let fr = |i| player(i, 1000.0, 0b010);
    let en = |i| player(i, 1000.0, 0b001);
    let (a, b, c, d) = (fr(0), fr(1), en(2), en(3));
    assert!(rs.passes(&cand(&[&[&a, &b], &[&c, &d]]), 0.0, false));
    let e = fr(4);
    assert!(!rs.passes(&cand(&[&[&a, &b], &[&c, &e]]), 0.0, false));
}

#[test]
fn a_latency_rule_keeps_its_expansion_steps() {
    let rs = ruleset(
        r#"{ "ruleLanguageVersion": "1.0", "teams": [{ "name": "p", "maxPlayers": 5, "quantity": 2 }],
             "rules": [{ "name": "FastConnection", "type": "latency", "maxLatency": 50 }],
             "expansions": [{ "target": "rules[FastConnection].maxLatency",
                 "steps": [{ "waitTimeSeconds": 10, "value": 100 }, { "waitTimeSeconds": 20, "value": 150 }] }] }"#,
    );
    let (rule, steps) = rs.latency().expect("a latency rule");
    assert_eq!(rule.name, "FastConnection");
    assert_eq!(steps.steps, vec![(10.0, 100.0), (20.0, 150.0)]);
    assert_eq!(
        (steps.at(9.99), steps.at(10.0), steps.at(25.0)),
        (50.0, 100.0, 150.0)
    );
}

#[test]
fn accelbyte_region_expansion_becomes_latency_steps() {
    let rs = ruleset(
        r#"{ "alliance": { "min_number": 2, "max_number": 2, "player_min_number": 1, "player_max_number": 1 },
             "region_expansion_rate_ms": 5000, "region_expansion_range_ms": 50,
             "region_latency_initial_range_ms": 100, "region_latency_max_ms": 220 }"#,
    );
    let (_, steps) = rs.latency().expect("region expansion");
    assert_eq!(steps.base, 100.0);
    assert_eq!(
        steps.steps,
        vec![(5.0, 150.0), (10.0, 200.0), (15.0, 220.0)]
    );
}

fn refusal(json: &str) -> RulesetError {
    Ruleset::parse(json).expect_err("refused")
}

#[test]
fn an_unsupported_rule_type_is_refused_naming_rule_and_type() {
    let e = refusal(
        r#"{ "ruleLanguageVersion": "1.0", "teams": [{ "name": "p", "maxPlayers": 1, "quantity": 2 }],
             "rules": [{ "name": "SortBySkill", "type": "distanceSort", "sortAttribute": "skill" }] }"#,
    );
    assert_eq!(e.path, "rule `SortBySkill`");
    assert!(e.message.contains("`distanceSort`"), "{e}");
}

#[test]
fn unsupported_fields_are_refused_with_their_path() {
    let e = refusal(
        r#"{ "alliance": { "min_number": 2, "max_number": 2, "player_max_number": 5 },
             "match_options": { "options": [] } }"#,
    );
    assert_eq!(e.path, "match_options");
    let e = refusal(
        r#"{ "alliance": { "min_number": 2, "max_number": 2, "player_max_number": 1 },
             "matching_rule": [{ "attribute": "mmr", "criteria": "equal", "reference": 1 }] }"#,
    );
    assert_eq!(e.path, "rule `mmr`");
    assert!(e.message.contains("`equal`"), "{e}");
    let e = refusal(
        r#"{ "ruleLanguageVersion": "1.0", "teams": [{ "name": "a", "maxPlayers": 5 }, { "name": "b", "maxPlayers": 4 }] }"#,
    );
    assert_eq!(e.path, "teams");
    let e = refusal(
        r#"{ "ruleLanguageVersion": "1.0", "playerAttributes": [{ "name": "skill" }],
             "teams": [{ "name": "p", "maxPlayers": 1, "quantity": 2 }],
             "rules": [{ "name": "X", "type": "distance", "maxDistance": 5,
                 "measurements": ["stddev(flatten(teams[*].players.attributes[skill]))"] }] }"#,
    );
    assert_eq!(e.path, "rules[0].measurements");
    assert!(e.message.contains("`stddev`"), "{e}");
}

#[test]
fn an_attribute_the_population_lacks_is_named() {
    let mut rs = Ruleset::parse(
        r#"{ "ruleLanguageVersion": "1.0", "playerAttributes": [{ "name": "prestige" }],
             "teams": [{ "name": "p", "maxPlayers": 1, "quantity": 2 }],
             "rules": [{ "name": "X", "type": "batchDistance", "batchAttribute": "prestige", "maxDistance": 5 }] }"#,
    )
    .unwrap();
    let e = rs.bind(Source::by_convention, |_| None).unwrap_err();
    assert_eq!(e.path, "attribute `prestige`");
}

#[test]
fn a_reference_that_is_a_list_or_a_string_list_compared_as_numbers_is_refused() {
    let e = refusal(
        r#"{ "ruleLanguageVersion": "1.0", "playerAttributes": [{ "name": "skill" }],
             "teams": [{ "name": "p", "maxPlayers": 2, "quantity": 2 }],
             "rules": [{ "name": "X", "type": "distance", "maxDistance": 5,
                 "measurements": ["avg(teams[*].players.attributes[skill])"],
                 "referenceValue": "avg(teams[*].players.attributes[skill])" }] }"#,
    );
    assert_eq!(e.path, "rules[0].referenceValue");
    let e = refusal(
        r#"{ "ruleLanguageVersion": "1.0", "playerAttributes": [{ "name": "languages", "type": "string_list" }],
             "teams": [{ "name": "p", "maxPlayers": 2, "quantity": 2 }],
             "rules": [{ "name": "X", "type": "comparison", "operation": "=",
                 "measurements": ["flatten(teams[*].players.attributes[languages])"] }] }"#,
    );
    assert!(e.message.contains("`languages` is a string_list"), "{e}");
    // One value: a single team's aggregate, or an aggregate of per-team ones.
    for ok in [
        "count(teams[p_1].players)",
        "min(count(teams[*].players))",
        "avg(flatten(teams[*].players.attributes[skill]))",
    ] {
        Ruleset::parse(&format!(
            r#"{{ "ruleLanguageVersion": "1.0", "playerAttributes": [{{ "name": "skill" }}],
                 "teams": [{{ "name": "p", "maxPlayers": 2, "quantity": 2 }}],
                 "rules": [{{ "name": "X", "type": "distance", "maxDistance": 5,
                     "measurements": ["avg(teams[*].players.attributes[skill])"],
                     "referenceValue": "{ok}" }}] }}"#
        ))
        .unwrap_or_else(|e| panic!("{ok}: {e}"));
    }
}

/// Issue 31: a key given twice in one object was read as its last value,
/// silently. Refused, naming the key and where.
#[test]
fn a_key_given_twice_is_refused_naming_it_and_its_line() {
    let twice = r#"{ "alliance": { "min_number": 2, "max_number": 2,
        "player_min_number": 1, "player_max_number": 1 },
      "matching_rule": [{ "attribute": "mmr", "criteria": "distance",
        "reference": 100, "reference": 900 }] }"#;
    let e = Ruleset::parse(twice).unwrap_err().to_string();
    assert!(
        e.contains("\"reference\" is given twice") && e.contains("line 4"),
        "{e}"
    );
    let once = twice.replace(r#", "reference": 900"#, "");
    Ruleset::parse(&once).unwrap();
    // The same key in two objects is no repetition.
    let e = Ruleset::parse(r#"{"teams": [{"name": "a"}, {"name": "b"}], "teams": []}"#)
        .unwrap_err()
        .to_string();
    assert!(e.contains("\"teams\" is given twice"), "{e}");
}

/// Issue 31: a compound rule that named itself through another was
/// accepted (and a pass over it would never end). Refused with the chain.
#[test]
fn a_compound_rule_that_names_itself_through_another_is_refused() {
    let json = |second: &str| {
        format!(
            r#"{{ "ruleLanguageVersion": "1.0",
                 "playerAttributes": [{{ "name": "skill" }}],
                 "teams": [{{ "name": "t", "maxPlayers": 1, "quantity": 2 }}],
                 "rules": [
                   {{ "name": "Close", "type": "distance",
                      "measurements": ["max(flatten(teams[*].players.attributes[skill]))"],
                      "referenceValue": "min(flatten(teams[*].players.attributes[skill]))",
                      "maxDistance": 50 }},
                   {{ "name": "A", "type": "compound", "statement": "and(Close, B)" }},
                   {{ "name": "B", "type": "compound", "statement": "{second}" }}
                 ] }}"#
        )
    };
    let e = Ruleset::parse(&json("or(Close, A)"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("rule `A`") && e.contains("names itself through others: A -> B -> A"),
        "{e}"
    );
    Ruleset::parse(&json("not(Close)")).unwrap();
}
