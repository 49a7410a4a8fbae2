//! Terminal progress on stderr: a live status line (an `indicatif` bar, cut to the terminal's
//! width instead of wrapping) when stderr is a terminal; otherwise, or with `--quiet`, plain
//! log lines, at most one every [`PLAIN_EVERY`]. [`StatusLine`] serves every command (pit,
//! selfplay, ladder, training), and [`MatchStatus`] counts a match's games and score on it.

use indicatif::{HumanDuration, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// How often a plain (not live) status line is printed at most.
pub const PLAIN_EVERY: Duration = Duration::from_secs(10);

/// Positions of a [`StatusLine::fraction`] bar: the done fraction in thousandths.
const PERMILLE: u64 = 1000;

/// What the status line counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Items of a known total, with ETA.
    Counter,
    /// A done fraction; the message says the rest.
    Fraction,
}

/// A status line on stderr, shared by reference between threads.
pub struct StatusLine {
    bar: ProgressBar,
    live: bool,
    kind: Kind,
    unit: &'static str,
    last_plain: Mutex<Instant>,
}

impl StatusLine {
    fn new(kind: Kind, total: u64, unit: &'static str, quiet: bool) -> StatusLine {
        let live = !quiet && std::io::stderr().is_terminal();
        let template = match kind {
            Kind::Counter => "[{bar:20}] {pos}/{len} {prefix}, ETA {eta} | {wide_msg}",
            Kind::Fraction => "[{bar:20}] {wide_msg}",
        };
        let style = ProgressStyle::with_template(template)
            .expect("the status templates are valid")
            .progress_chars("##-");
        let target = if live {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
        let bar = ProgressBar::with_draw_target(Some(total), target)
            .with_style(style)
            .with_prefix(unit);
        if live {
            bar.enable_steady_tick(Duration::from_millis(250));
        }
        StatusLine {
            bar,
            live,
            kind,
            unit,
            last_plain: Mutex::new(Instant::now()),
        }
    }

    /// A counter of `total` items named `unit` (e.g. "games"): bar, count, ETA and a message.
    /// `quiet` forces plain lines.
    pub fn counter(total: u64, unit: &'static str, quiet: bool) -> StatusLine {
        StatusLine::new(Kind::Counter, total, unit, quiet)
    }

    /// A bar over a done fraction (see [`StatusLine::set_fraction`]) and a message that says
    /// the rest. `quiet` forces plain lines.
    pub fn fraction(quiet: bool) -> StatusLine {
        StatusLine::new(Kind::Fraction, PERMILLE, "", quiet)
    }

    /// Whether the line is drawn live (stderr is a terminal and not `--quiet`).
    pub fn is_live(&self) -> bool {
        self.live
    }

    /// Counts `n` more items done and shows `msg`.
    pub fn inc(&self, n: u64, msg: impl Into<String>) {
        self.bar.inc(n);
        self.show(msg.into());
    }

    /// Sets the done fraction (0..1) of a [`StatusLine::fraction`] line and shows `msg`.
    pub fn set_fraction(&self, done: f64, msg: impl Into<String>) {
        let permille = (done.clamp(0.0, 1.0) * PERMILLE as f64).round() as u64;
        self.bar.set_position(permille);
        self.show(msg.into());
    }

    /// Shows `msg` without counting anything.
    pub fn message(&self, msg: impl Into<String>) {
        self.show(msg.into());
    }

    fn show(&self, msg: String) {
        if self.live {
            self.bar.set_message(msg);
            return;
        }
        let Ok(mut last) = self.last_plain.lock() else {
            return;
        };
        if last.elapsed() < PLAIN_EVERY {
            return;
        }
        *last = Instant::now();
        match self.kind {
            Kind::Counter => eprintln!(
                "{}/{} {}, ETA {} | {msg}",
                self.bar.position(),
                self.bar.length().unwrap_or(0),
                self.unit,
                HumanDuration(self.bar.eta())
            ),
            Kind::Fraction => eprintln!("{msg}"),
        }
    }

    /// A message on a line of its own (above the live line, which stays).
    pub fn note(&self, msg: &str) {
        if self.live {
            self.bar.println(msg);
        } else {
            eprintln!("{msg}");
        }
    }

    /// Removes the live line (plain output has nothing to remove).
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

impl Drop for StatusLine {
    fn drop(&mut self) {
        // An error path that returns early must not leave a half-drawn line behind.
        self.bar.finish_and_clear();
    }
}

/// The status line of a match (or of several in a row): games done, A's score so far, ETA.
pub struct MatchStatus {
    line: StatusLine,
    label: Mutex<String>,
    done: AtomicU32,
    points2: AtomicU32,
}

impl MatchStatus {
    /// A status line for `games` games; `quiet` forces plain lines.
    pub fn new(games: u64, quiet: bool) -> MatchStatus {
        MatchStatus {
            line: StatusLine::counter(games, "games", quiet),
            label: Mutex::new(String::new()),
            done: AtomicU32::new(0),
            points2: AtomicU32::new(0),
        }
    }

    /// Starts counting A's score afresh for the next match, named `label` on the line.
    pub fn start(&self, label: &str) {
        if let Ok(mut l) = self.label.lock() {
            label.clone_into(&mut l);
        }
        self.done.store(0, Ordering::SeqCst);
        self.points2.store(0, Ordering::SeqCst);
    }

    /// Counts a finished game that gave A `points` (1, ½ or 0).
    pub fn game_done(&self, points: f64) {
        let p2 = (points * 2.0).round() as u32;
        let done = self.done.fetch_add(1, Ordering::SeqCst) + 1;
        let p2 = self.points2.fetch_add(p2, Ordering::SeqCst) + p2;
        let score = 50.0 * f64::from(p2) / f64::from(done);
        // A poisoned lock only loses the label of a status line.
        let label = self.label.lock().map(|l| l.clone()).unwrap_or_default();
        self.line.inc(1, format!("{label}A scores {score:.1}%"));
    }

    /// The status line itself (for notes and the end).
    pub fn line(&self) -> &StatusLine {
        &self.line
    }
}

impl oware_arena::ladder::LadderProgress for MatchStatus {
    fn start(&self, label: &str) {
        MatchStatus::start(self, label);
    }

    fn game_done(&self, a_points: f64) {
        MatchStatus::game_done(self, a_points);
    }

    fn note(&self, text: &str) {
        self.line().note(text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_lines_count_without_a_terminal() {
        // Tests run with stderr captured or redirected: the line is never live, and quiet
        // forces plain lines anyway.
        let line = StatusLine::counter(10, "games", true);
        assert!(!line.is_live());
        line.inc(3, "A scores 50%");
        line.inc(2, "A scores 60%");
        assert_eq!(line.bar.position(), 5);
        line.finish();
        let f = StatusLine::fraction(true);
        f.set_fraction(0.25, "step 10");
        assert_eq!(f.bar.position(), 250);
        f.set_fraction(7.0, "past the end");
        assert_eq!(f.bar.position(), PERMILLE);
    }
}
