//! The training run's status line: the learner's step, losses, self-play speeds, ETA and the
//! last evaluation, on a [`StatusLine`]; notes on lines of their own.

use crate::status::{PLAIN_EVERY, StatusLine};
use oware_arena::eval_log::EvalLine;
use std::time::Instant;

/// The losses of the last logged learner step.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LossFigures {
    /// What was minimised.
    pub total: f32,
    /// The policy's cross-entropy.
    pub policy: f32,
    /// The value's mean squared error.
    pub value: f32,
}

/// Self-play speeds over a recent window.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SelfplayRates {
    /// Training positions per second.
    pub positions_per_sec: f64,
    /// Simulations per second.
    pub sims_per_sec: f64,
}

/// `1h02m` or `3m07s`.
fn clock(secs: f64) -> String {
    let s = secs.max(0.0) as u64;
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, (s % 3600) / 60)
    } else {
        format!("{}m{:02}s", s / 60, s % 60)
    }
}

/// The terminal output of a training run: the status line with the learner's step, losses,
/// speeds, ETA and the last evaluation; notes on lines of their own.
pub struct Progress {
    line: StatusLine,
    max_steps: u64,
    minutes: f64,
    start_step: u64,
    started: Instant,
    last_eval: String,
    last_step: Option<Instant>,
    suffix: String,
}

impl Progress {
    /// A progress printer for a run that stops at `step_limit` learner steps (`None`: no step
    /// limit, the time limit alone sets the ETA) or after `minutes` (0: no time limit), from
    /// `start_step` on; `quiet` forces plain lines.
    pub fn new(quiet: bool, step_limit: Option<u64>, minutes: f64, start_step: u64) -> Progress {
        Progress {
            line: StatusLine::fraction(quiet),
            max_steps: step_limit.unwrap_or(u64::MAX),
            minutes,
            start_step,
            started: Instant::now(),
            last_eval: String::new(),
            last_step: None,
            suffix: String::new(),
        }
    }

    /// A message on a line of its own.
    pub fn note(&mut self, msg: &str) {
        self.line.note(msg);
    }

    /// Text appended to the status line from now on (the broker's workers and rates).
    pub fn set_suffix(&mut self, text: &str) {
        self.suffix = if text.is_empty() {
            String::new()
        } else {
            format!(" | {text}")
        };
    }

    /// While the learner waits for self-play data (shown only while no step is being logged).
    pub fn waiting(&mut self, have: usize, need: usize, rates: &SelfplayRates) {
        if self.last_step.is_some_and(|t| t.elapsed() < PLAIN_EVERY) {
            return;
        }
        let done = if need > 0 {
            have as f64 / need as f64
        } else {
            1.0
        };
        self.line.set_fraction(
            done,
            format!(
                "self-play: {have}/{need} positions in the buffer, {:.0} positions/s, {:.0} sims/s{}",
                rates.positions_per_sec, rates.sims_per_sec, self.suffix
            ),
        );
    }

    /// After a logged learner step.
    pub fn step(
        &mut self,
        step: u64,
        losses: &LossFigures,
        rates: &SelfplayRates,
        elapsed_secs: f64,
        games: u64,
    ) {
        self.last_step = Some(Instant::now());
        let done = step.saturating_sub(self.start_step) as f64;
        let run = self.started.elapsed().as_secs_f64();
        let by_steps = if done > 0.0 {
            (self.max_steps.saturating_sub(step)) as f64 * run / done
        } else {
            f64::INFINITY
        };
        let by_time = if self.minutes > 0.0 {
            self.minutes * 60.0 - elapsed_secs
        } else {
            f64::INFINITY
        };
        let eta = by_steps.min(by_time);
        let fraction = if self.minutes > 0.0 && by_time <= by_steps {
            elapsed_secs / (self.minutes * 60.0)
        } else {
            step as f64 / self.max_steps.max(1) as f64
        };
        // The most useful parts first: a narrow terminal cuts the end of the line.
        let text = format!(
            "step {step} | ETA {} | loss {:.3} (p {:.3} v {:.3}) | {:.0} pos/s {:.0} sims/s | {games} games{}",
            if eta.is_finite() {
                clock(eta)
            } else {
                "?".into()
            },
            losses.total,
            losses.policy,
            losses.value,
            rates.positions_per_sec,
            rates.sims_per_sec,
            if self.last_eval.is_empty() {
                String::new()
            } else {
                format!(" | {}", self.last_eval)
            },
        );
        let text = format!("{text}{}", self.suffix);
        self.line.set_fraction(fraction, text);
    }

    /// After an evaluation match.
    pub fn eval(&mut self, line: &EvalLine) {
        self.last_eval = format!("{} {:.0}%", line.opponent_tag(), 100.0 * line.score);
    }

    /// Ends the live line.
    pub fn finish(&mut self) {
        self.line.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_reads_minutes_and_hours() {
        assert_eq!(clock(187.0), "3m07s");
        assert_eq!(clock(3720.0), "1h02m");
        assert_eq!(clock(-5.0), "0m00s");
    }
}
