//! Progress a person can see: a bar on a terminal, and off one (a CI log,
//! `nohup`, a pipe) a plain line to standard error at most every 10 s
//! (done/total, elapsed, an estimate of what is left), so a long sweep is
//! never silent for minutes. `--quiet` silences both.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal as _;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Seconds between plain lines; `MMSIM_PROGRESS_EVERY_S` overrides the 10
/// (tests set it low to see lines from a short run).
fn every() -> Duration {
    std::env::var("MMSIM_PROGRESS_EVERY_S")
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map_or(Duration::from_secs(10), Duration::from_secs_f64)
}

/// What is counted, for the plain line.
#[derive(Clone, Copy)]
enum Unit {
    /// Runs of a sweep, tuning or replications.
    Runs,
    /// Per mille of a run's simulated time; the message says how far.
    Simulated,
}

struct Plain {
    unit: Unit,
    done: u64,
    total: u64,
    message: String,
    start: Instant,
    last: Instant,
    every: Duration,
}

/// A progress display: an indicatif bar, plain lines, or nothing.
pub struct Progress {
    bar: Option<ProgressBar>,
    plain: Option<Mutex<Plain>>,
}

impl Progress {
    fn new(quiet: bool, unit: Unit, length: u64, template: &str) -> Progress {
        if quiet {
            return Progress {
                bar: None,
                plain: None,
            };
        }
        if std::io::stderr().is_terminal() {
            let bar = ProgressBar::with_draw_target(Some(length), ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template(template)
                    .expect("static template")
                    .progress_chars("=> "),
            );
            return Progress {
                bar: Some(bar),
                plain: None,
            };
        }
        let now = Instant::now();
        Progress {
            bar: None,
            plain: Some(Mutex::new(Plain {
                unit,
                done: 0,
                total: length,
                message: String::new(),
                start: now,
                last: now,
                every: every(),
            })),
        }
    }

    /// A run's progress through its simulated time (positions in per mille).
    pub fn simulated(quiet: bool) -> Progress {
        Progress::new(
            quiet,
            Unit::Simulated,
            1000,
            "{spinner} simulated {msg} [{bar:40}] {percent}% ({elapsed})",
        )
    }

    /// Progress counted in runs, for work spread over seeds and settings.
    pub fn runs(quiet: bool) -> Progress {
        Progress::new(
            quiet,
            Unit::Runs,
            0,
            "{spinner} runs {pos}/{len} [{bar:40}] ({elapsed}, eta {eta})",
        )
    }

    fn plain(&self, f: impl FnOnce(&mut Plain)) {
        if let Some(p) = &self.plain {
            let mut p = p.lock().unwrap_or_else(|e| e.into_inner());
            f(&mut p);
            p.maybe_print();
        }
    }

    pub fn inc(&self, n: u64) {
        if let Some(b) = &self.bar {
            b.inc(n);
        }
        self.plain(|p| p.done += n);
    }

    pub fn set_length(&self, n: u64) {
        if let Some(b) = &self.bar {
            b.set_length(n);
        }
        self.plain(|p| p.total = n);
    }

    pub fn set_position(&self, n: u64) {
        if let Some(b) = &self.bar {
            b.set_position(n);
        }
        self.plain(|p| p.done = n);
    }

    pub fn set_message(&self, m: String) {
        if let Some(b) = &self.bar {
            b.set_message(m.clone());
        }
        if let Some(p) = &self.plain {
            p.lock().unwrap_or_else(|e| e.into_inner()).message = m;
        }
    }

    pub fn finish_and_clear(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

impl Plain {
    fn maybe_print(&mut self) {
        let now = Instant::now();
        if now.duration_since(self.last) < self.every || self.total == 0 {
            return;
        }
        self.last = now;
        let line = self.line(now.duration_since(self.start));
        tell!("{line}");
    }

    /// The plain line at `elapsed`.
    fn line(&self, elapsed: Duration) -> String {
        let share = (self.done as f64 / self.total as f64).clamp(0.0, 1.0);
        let left = if self.done > 0 {
            let secs = elapsed.as_secs_f64() * (1.0 / share - 1.0);
            format!("about {} left", crate::report::text::duration(secs))
        } else {
            "time left not yet known".to_string()
        };
        let done = match self.unit {
            Unit::Runs => format!("runs {}/{}", self.done, self.total),
            Unit::Simulated => format!("simulated {}", self.message),
        };
        format!(
            "mmsim: {done} ({:.0}%), {} elapsed, {left}",
            share * 100.0,
            crate::report::text::duration(elapsed.as_secs_f64())
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plain_line_says_done_elapsed_and_left() {
        let now = Instant::now();
        let mut p = Plain {
            unit: Unit::Runs,
            done: 3,
            total: 12,
            message: String::new(),
            start: now,
            last: now,
            every: Duration::from_secs(10),
        };
        assert_eq!(
            p.line(Duration::from_secs(30)),
            "mmsim: runs 3/12 (25%), 30s elapsed, about 1m30s left"
        );
        p.done = 0;
        assert!(p
            .line(Duration::from_secs(5))
            .ends_with("time left not yet known"));
        p.unit = Unit::Simulated;
        p.message = "6.0h".into();
        p.done = 250;
        p.total = 1000;
        assert_eq!(
            p.line(Duration::from_secs(3700)),
            "mmsim: simulated 6.0h (25%), 1h1m40s elapsed, about 3h5m left"
        );
    }
}
