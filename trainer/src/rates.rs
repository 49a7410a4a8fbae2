//! Self-play rates for the terminal and TensorBoard.

use crate::selfplay::SelfplayStats;
use std::sync::atomic::Ordering;
use std::time::Instant;

/// Self-play rates over a sliding window.
pub struct RateWindow<'a> {
    stats: &'a SelfplayStats,
    since: Instant,
    base: (u64, u64, u64, u64),
}

/// Rates for display and logging.
#[derive(Clone, Copy, Debug, Default)]
pub struct Rates {
    /// Training positions per second.
    pub positions_per_sec: f64,
    /// Games per second.
    pub games_per_sec: f64,
    /// Simulations per second.
    pub sims_per_sec: f64,
    /// Network evaluations per second.
    pub evals_per_sec: f64,
}

impl Rates {
    /// The speeds the status line shows.
    pub fn display(&self) -> oware_report::train_status::SelfplayRates {
        oware_report::train_status::SelfplayRates {
            positions_per_sec: self.positions_per_sec,
            sims_per_sec: self.sims_per_sec,
        }
    }
}

impl<'a> RateWindow<'a> {
    /// Starts a window over `stats`.
    pub fn new(stats: &'a SelfplayStats) -> RateWindow<'a> {
        RateWindow {
            stats,
            since: Instant::now(),
            base: (0, 0, 0, 0),
        }
    }

    /// The rates since the window started (it restarts every 30 s); `new_samples` is the
    /// training positions produced so far.
    pub fn rates(&mut self, new_samples: u64) -> Rates {
        let now = (
            new_samples,
            self.stats.games.load(Ordering::Relaxed),
            self.stats.sims.load(Ordering::Relaxed),
            self.stats.evals.load(Ordering::Relaxed),
        );
        let dt = self.since.elapsed().as_secs_f64().max(1e-9);
        let r = Rates {
            positions_per_sec: now.0.saturating_sub(self.base.0) as f64 / dt,
            games_per_sec: now.1.saturating_sub(self.base.1) as f64 / dt,
            sims_per_sec: now.2.saturating_sub(self.base.2) as f64 / dt,
            evals_per_sec: now.3.saturating_sub(self.base.3) as f64 / dt,
        };
        if dt > 30.0 {
            self.since = Instant::now();
            self.base = now;
        }
        r
    }
}
