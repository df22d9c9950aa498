//! Engine throughput: whole runs of a 1v1 queue, reported as simulated
//! events per second. `cargo bench --bench engine`; `scripts/bench.sh` puts
//! the figures in docs/performance.md.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use mmsim::run::run_summary as run;
use mmsim::scenario::from_text;
use std::path::Path;

fn scenario(hours: u32, rate: f64, policy: &str) -> mmsim::scenario::Scenario {
    let text = format!(
        r#"
[run]
name = "bench"
seed = 1
duration = "{hours}h"
[population]
size = 200000
skill = {{ dist = "normal", mean = 1500, sd = 400, min = 0, max = 3000 }}
[arrivals]
rate_per_s = {rate}
patience = {{ dist = "exponential", mean = "5m" }}
requeue_prob = 0.6
think_time = "1m"
[policy]
{policy}
[rating]
system = "elo"
[outcome]
model = "logistic"
duration = "8m"
"#
    );
    from_text(&text, Path::new("bench.toml"), &[])
        .expect("bench scenario is valid")
        .scenario
}

fn engine(c: &mut Criterion) {
    let mut group = c.benchmark_group("engine");
    // Ten whole runs per case keep `scripts/bench.sh` within minutes.
    group.sample_size(10);
    group.warm_up_time(std::time::Duration::from_secs(1));
    for (name, policy) in [
        ("fixed-limit", "kind = \"fixed-limit\"\nlimit = 150"),
        (
            "widening",
            "kind = \"widening\"\nbase = 100\nrate_per_s = 5\nmax = 500",
        ),
    ] {
        let s = scenario(2, 14.0, policy);
        let events = run(&s, 1, &mut |_, _| {}).perf.events;
        group.throughput(Throughput::Elements(events));
        group.bench_with_input(
            BenchmarkId::new(name, format!("{events} events")),
            &s,
            |b, s| b.iter(|| run(s, 1, &mut |_, _| {})),
        );
    }
    group.finish();
}

criterion_group!(benches, engine);
criterion_main!(benches);
