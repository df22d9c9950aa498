//! mmsim-core cannot read), named after the module they check.
//!
//! The scenario crate's integration tests: one binary. Most modules are
//! checks of mmsim-core that build their world from scenario text (which

mod docs_claims;
mod engine_acceptance;
mod engine_backfill;
mod engine_backfill_ready;
mod engine_backfill_roles;
mod engine_explain;
mod engine_explain_policies;
mod engine_ladders;
mod engine_modes;
mod engine_population;
mod engine_regions;
mod engine_sim;
mod engine_theory;
mod metrics_modes;
mod metrics_oracle;
mod outcome_sections;
mod policy_plugins;
mod policy_quality_cadence;
mod policy_ruleset_memory;
mod policy_widening_kept;
mod rating_ladder;
mod rating_sections;
mod teams_sections;

/// Builds a policy from a scenario's `[policy]`: an oracle test's stand-in.
type BuildPolicy = dyn Fn(&mmsim_core::policy::PolicyConfig) -> Box<dyn mmsim_core::policy::Policy>;

/// The policy oracle tests' run: every ticket and match row of `s`, with
/// its policy and each data centre's replaced by `policy(&s.policy)` when
/// given (an oracle, or the policy built another way), and the engine's
/// counts.
fn oracle_rows(
    s: &mmsim_scenario::Scenario,
    policy: Option<&BuildPolicy>,
) -> (
    mmsim_core::metrics::RunRecords,
    mmsim_core::engine::EngineStats,
) {
    use mmsim_core::engine::{Config, Parts, Simulation};
    use mmsim_scenario::FromScenario;
    let mut parts = Parts::from_scenario(s);
    if let Some(policy) = policy {
        parts.policy = policy(&s.policy);
        for p in &mut parts.regional {
            *p = policy(&s.policy);
        }
    }
    let mut kept = mmsim_core::metrics::KeepRows::default();
    let stats = Simulation::new(Config::from_scenario(s), s.run.seed, parts, &mut kept)
        .run(&mut |_, _| {})
        .stats;
    (kept.0, stats)
}
