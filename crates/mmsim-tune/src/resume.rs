//! Sweeps and replications that resume: each finished run is handed to a
//! `RunStore` as it completes, and a rerun of an interrupted sweep takes
//! back the runs whose key matches instead of simulating them again. The
//! store's files are the command line's business (`cli` writes them).

use mmsim_scenario::provenance;
use mmsim_scenario::Scenario;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What identifies one finished run: the build, the scenario as run (its
/// canonical hash, so any changed key, `--set` or sweep value misses), the
/// sweep setting and the seed. A stored run is reused only on an exact match.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunKey {
    pub mmsim_version: String,
    pub scenario_sha256: String,
    /// The sweep setting's index; `None` for a replication.
    pub setting: Option<usize>,
    pub seed: u64,
}

impl RunKey {
    pub fn new(scenario: &Scenario, setting: Option<usize>, seed: u64) -> RunKey {
        RunKey {
            mmsim_version: env!("CARGO_PKG_VERSION").to_owned(),
            scenario_sha256: provenance::scenario_sha256(scenario),
            setting,
            seed,
        }
    }

    /// A file name unique per setting and seed.
    pub fn file_name(&self) -> String {
        match self.setting {
            Some(i) => format!("setting-{i}-seed-{}.json", self.seed),
            None => format!("seed-{}.json", self.seed),
        }
    }
}

/// Where finished runs go as they finish. `load` returns the record saved
/// under exactly this key, or `None` (never saved, or saved under another
/// key: another scenario, build or seed).
pub trait RunStore: Sync {
    fn load(&self, key: &RunKey) -> Option<Value>;
    fn save(&self, key: &RunKey, record: &Value) -> anyhow::Result<()>;
}

/// The record saved for `key`, or `run()`'s, saved before it is returned.
pub fn load_or_run(
    store: Option<&dyn RunStore>,
    key: impl FnOnce() -> RunKey,
    run: impl FnOnce() -> Value,
) -> anyhow::Result<Value> {
    let Some(store) = store else {
        return Ok(run());
    };
    let key = key();
    if let Some(record) = store.load(&key) {
        return Ok(record);
    }
    let record = run();
    store.save(&key, &record)?;
    Ok(record)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[derive(Default)]
    struct Memory(Mutex<Vec<(RunKey, Value)>>);

    impl RunStore for Memory {
        fn load(&self, key: &RunKey) -> Option<Value> {
            let v = self.0.lock().unwrap();
            v.iter().find(|(k, _)| k == key).map(|(_, r)| r.clone())
        }
        fn save(&self, key: &RunKey, record: &Value) -> anyhow::Result<()> {
            self.0.lock().unwrap().push((key.clone(), record.clone()));
            Ok(())
        }
    }

    #[test]
    fn a_stored_run_is_reused_only_under_its_exact_key() {
        let store = Memory::default();
        let key = |hash: &str, seed| RunKey {
            mmsim_version: "1".into(),
            scenario_sha256: hash.into(),
            setting: Some(2),
            seed,
        };
        let mut runs = 0;
        let mut go = |hash: &str, seed: u64| {
            load_or_run(
                Some(&store),
                || key(hash, seed),
                || {
                    runs += 1;
                    Value::from(runs)
                },
            )
            .unwrap()
        };
        assert_eq!(go("a", 1), Value::from(1));
        assert_eq!(go("a", 1), Value::from(1));
        assert_eq!(go("b", 1), Value::from(2));
        assert_eq!(go("a", 2), Value::from(3));
        assert_eq!(key("a", 7).file_name(), "setting-2-seed-7.json");
    }
}
