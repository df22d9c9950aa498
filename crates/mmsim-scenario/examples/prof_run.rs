use std::path::Path;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let loaded = mmsim_scenario::load(Path::new(&args[1]), &args[2..]).expect("load");
    let t = std::time::Instant::now();
    let out = mmsim_scenario::run::run_summary(
        &loaded.scenario,
        loaded.scenario.run.seed,
        &mut |_, _| {},
    );
    eprintln!("{} matches, {:?}", out.summary.matches, t.elapsed());
}
