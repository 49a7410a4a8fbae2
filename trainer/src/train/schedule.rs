//! The learner loop's decisions, as pure functions of its counters: when to stop, whether a
//! step may train, when a periodic step (sync, log, evaluation, checkpoint) is due.

use crate::config::ScheduleConfig;

/// Why the learner loop ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum End {
    /// The step or time limit was reached.
    Done,
    /// Ctrl-C.
    Interrupted,
    /// A self-play worker failed; `diverged` when it saw the network output NaN or infinity.
    WorkerFailed { diverged: bool },
    /// Every worker stopped without an error (should not happen while the learner runs).
    WorkersGone,
}

/// Why the run must stop now, if it must: a failed worker (`failure`: whether it saw the
/// network diverge) first, then Ctrl-C, then the step or time limit of `sched` at `step` and
/// `elapsed_secs` of training.
pub(crate) fn stop_reason(
    sched: &ScheduleConfig,
    failure: Option<bool>,
    interrupted: bool,
    step: u64,
    elapsed_secs: f64,
) -> Option<End> {
    if let Some(diverged) = failure {
        return Some(End::WorkerFailed { diverged });
    }
    if interrupted {
        return Some(End::Interrupted);
    }
    let steps_done = sched.step_limit().is_some_and(|limit| step >= limit);
    let time_up = sched.minutes > 0.0 && elapsed_secs >= sched.minutes * 60.0;
    (steps_done || time_up).then_some(End::Done)
}

/// Whether the learner may take a step: the buffer holds `min_samples` (at least one), and
/// the samples trained on after this batch stay within `samples_per_position` times the new
/// positions self-play has brought.
pub(crate) fn may_train(
    sched: &ScheduleConfig,
    buffered: usize,
    min_samples: usize,
    new_samples: u64,
    trained_samples: u64,
) -> bool {
    let allowed = (new_samples as f64 * sched.samples_per_position) as u64;
    buffered >= min_samples.max(1) && trained_samples + sched.batch_size as u64 <= allowed
}

/// Whether a periodic step every `every` learner steps is due at `step` (`every = 0`: never).
pub(crate) fn due(step: u64, every: u64) -> bool {
    every > 0 && step.is_multiple_of(every)
}

/// The mean of the game lengths, 0 for none.
pub(crate) fn mean_plies(plies: &[u32]) -> f64 {
    if plies.is_empty() {
        0.0
    } else {
        plies.iter().map(|&p| f64::from(p)).sum::<f64>() / plies.len() as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TrainConfig;

    fn schedule(sets: &[&str]) -> ScheduleConfig {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        TrainConfig::load(None, &sets).expect("valid").schedule
    }

    #[test]
    fn failures_come_before_interrupts_before_limits() {
        let s = schedule(&["schedule.max_steps=100", "schedule.minutes=1"]);
        assert_eq!(stop_reason(&s, None, false, 5, 1.0), None);
        assert_eq!(stop_reason(&s, None, false, 100, 1.0), Some(End::Done));
        assert_eq!(stop_reason(&s, None, false, 5, 60.0), Some(End::Done));
        assert_eq!(
            stop_reason(&s, None, true, 100, 60.0),
            Some(End::Interrupted)
        );
        assert_eq!(
            stop_reason(&s, Some(true), true, 100, 60.0),
            Some(End::WorkerFailed { diverged: true })
        );
        let no_time = schedule(&["schedule.max_steps=100", "schedule.minutes=0"]);
        assert_eq!(stop_reason(&no_time, None, false, 99, 1e9), None);
    }

    #[test]
    fn training_waits_for_the_buffer_and_the_sample_budget() {
        let s = schedule(&["schedule.batch_size=10", "schedule.samples_per_position=2"]);
        // Too few buffered positions.
        assert!(!may_train(&s, 5, 6, 1000, 0));
        assert!(may_train(&s, 6, 6, 1000, 0));
        // 100 new positions allow 200 trained samples: 190 + 10 is the last step.
        assert!(may_train(&s, 100, 1, 100, 190));
        assert!(!may_train(&s, 100, 1, 100, 191));
        // An empty buffer never trains, even with a minimum of 0.
        assert!(!may_train(&s, 0, 0, 100, 0));
    }

    #[test]
    fn periodic_steps_and_means() {
        assert!(due(20, 10) && !due(25, 10) && !due(20, 0));
        assert_eq!(mean_plies(&[]), 0.0);
        assert_eq!(mean_plies(&[10, 20]), 15.0);
    }
}
