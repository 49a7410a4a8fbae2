//! Asking a player for a move while a spinner ticks on stderr.

use indicatif::{ProgressBar, ProgressStyle};
use oware_engine::Game;
use oware_search::{Budget, Choice, Player, PlayerError};
use std::sync::mpsc;
use std::time::Duration;

/// Quick answers draw nothing, so the spinner does not flash.
const SHOW_AFTER: Duration = Duration::from_millis(150);

/// Asks `player` for a move in `game` (not over). With `spinner` on, a thread draws a spinner
/// and the elapsed time on stderr until the player answers, then clears its line.
pub(super) fn think(
    player: &mut dyn Player,
    game: &Game,
    spinner: bool,
    label: &str,
) -> Result<Choice, PlayerError> {
    if !spinner {
        return player.choose(game, Budget::default());
    }
    let (done, answered) = mpsc::channel::<()>();
    std::thread::scope(|scope| {
        scope.spawn(move || {
            if !matches!(
                answered.recv_timeout(SHOW_AFTER),
                Err(mpsc::RecvTimeoutError::Timeout)
            ) {
                return;
            }
            let style = ProgressStyle::with_template("{spinner} {msg} {elapsed}")
                .expect("the spinner template is valid")
                .tick_chars("|/-\\ ");
            let bar = ProgressBar::new_spinner()
                .with_style(style)
                .with_message(format!("{label} is thinking..."));
            bar.enable_steady_tick(Duration::from_millis(100));
            // Stops when the sender says so or is dropped (also if `choose` panics); the
            // result of the wait does not matter.
            let _ = answered.recv();
            bar.finish_and_clear();
        });
        let choice = player.choose(game, Budget::default());
        let _ = done.send(());
        choice
    })
}
