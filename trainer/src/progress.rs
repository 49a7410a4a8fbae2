//! Terminal output of a training run: a live status line with ETA on a terminal, plain log
//! lines otherwise (or with `--quiet`).

use crate::config::TrainConfig;
use crate::eval::EvalLine;
use crate::rates::Rates;
use oware_model::Losses;
use std::io::{IsTerminal, Write};
use std::time::Instant;

/// Prints progress to stderr.
pub struct Progress {
    live: bool,
    max_steps: u64,
    minutes: f64,
    start_step: u64,
    started: Instant,
    last_plain: Instant,
    last_eval: String,
    line_open: bool,
    last_step: Option<Instant>,
    suffix: String,
}

fn clock(secs: f64) -> String {
    let s = secs.max(0.0) as u64;
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, (s % 3600) / 60)
    } else {
        format!("{}m{:02}s", s / 60, s % 60)
    }
}

impl Progress {
    /// A progress printer; `quiet` forces plain lines.
    pub fn new(quiet: bool, config: &TrainConfig, start_step: u64) -> Progress {
        Progress {
            live: !quiet && std::io::stderr().is_terminal(),
            // No step limit: the time limit alone sets the ETA.
            max_steps: config.schedule.step_limit().unwrap_or(u64::MAX),
            minutes: config.schedule.minutes,
            start_step,
            started: Instant::now(),
            last_plain: Instant::now(),
            last_eval: String::new(),
            line_open: false,
            last_step: None,
            suffix: String::new(),
        }
    }

    fn close_line(&mut self) {
        if self.line_open {
            eprintln!();
            self.line_open = false;
        }
    }

    /// A message on a line of its own.
    pub fn note(&mut self, msg: &str) {
        self.close_line();
        eprintln!("{msg}");
    }

    fn status(&mut self, text: &str) {
        if self.live {
            eprint!("\r\x1b[2K{text}");
            let _ = std::io::stderr().flush();
            self.line_open = true;
        } else if self.last_plain.elapsed().as_secs_f64() >= 10.0 {
            eprintln!("{text}");
            self.last_plain = Instant::now();
        }
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
    pub fn waiting(&mut self, have: usize, need: usize, rates: &Rates) {
        if self
            .last_step
            .is_some_and(|t| t.elapsed().as_secs_f64() < 10.0)
        {
            return;
        }
        let text = format!(
            "self-play: {have}/{need} positions in the buffer, {:.0} positions/s, {:.0} sims/s{}",
            rates.positions_per_sec, rates.sims_per_sec, self.suffix
        );
        self.status(&text);
    }

    /// After a logged learner step.
    pub fn step(
        &mut self,
        step: u64,
        losses: &Losses,
        rates: &Rates,
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
        let pct = if self.minutes > 0.0 && by_time <= by_steps {
            100.0 * elapsed_secs / (self.minutes * 60.0)
        } else {
            100.0 * step as f64 / self.max_steps as f64
        };
        let bar_len = 20usize;
        let filled = ((pct / 100.0) * bar_len as f64)
            .round()
            .clamp(0.0, bar_len as f64) as usize;
        let text = format!(
            "[{}{}] step {step} | loss {:.3} (p {:.3} v {:.3}) | {:.0} pos/s {:.0} sims/s | {games} games | ETA {}{}",
            "#".repeat(filled),
            "-".repeat(bar_len - filled),
            losses.total,
            losses.policy,
            losses.value,
            rates.positions_per_sec,
            rates.sims_per_sec,
            if eta.is_finite() {
                clock(eta)
            } else {
                "?".into()
            },
            if self.last_eval.is_empty() {
                String::new()
            } else {
                format!(" | {}", self.last_eval)
            },
        );
        let text = format!("{text}{}", self.suffix);
        self.status(&text);
    }

    /// After an evaluation match.
    pub fn eval(&mut self, line: &EvalLine) {
        self.last_eval = format!("{} {:.0}%", line.opponent_tag(), 100.0 * line.score);
    }

    /// Ends the live line.
    pub fn finish(&mut self) {
        self.close_line();
    }
}
