//! Asking a player for a move while a spinner ticks on stderr.

use oware_engine::{Choice, Game, Limits, Player, PlayerError};
use std::io::Write;
use std::sync::mpsc;
use std::time::{Duration, Instant};

const FRAMES: [char; 4] = ['|', '/', '-', '\\'];

/// Asks `player` for a move in `game` (not over). With `spinner` on, a thread draws a spinner
/// and the elapsed time on stderr until the player answers, then clears its line.
pub fn think(
    player: &mut dyn Player,
    game: &Game,
    spinner: bool,
    label: &str,
) -> Result<Choice, PlayerError> {
    if !spinner {
        return player.choose(game, Limits::default());
    }
    let (done, ticks) = mpsc::channel::<()>();
    std::thread::scope(|scope| {
        scope.spawn(move || {
            let start = Instant::now();
            // Quick answers draw nothing, so the spinner does not flash.
            if !matches!(
                ticks.recv_timeout(Duration::from_millis(150)),
                Err(mpsc::RecvTimeoutError::Timeout)
            ) {
                return;
            }
            let mut stderr = std::io::stderr();
            for frame in FRAMES.iter().cycle() {
                let secs = start.elapsed().as_secs_f32();
                let _ = write!(stderr, "\r{frame} {label} is thinking... {secs:.1}s");
                let _ = stderr.flush();
                // Stops when the sender says so or is dropped (also if `choose` panics).
                match ticks.recv_timeout(Duration::from_millis(100)) {
                    Err(mpsc::RecvTimeoutError::Timeout) => {}
                    _ => break,
                }
            }
            let _ = write!(stderr, "\r\x1b[2K");
            let _ = stderr.flush();
        });
        let choice = player.choose(game, Limits::default());
        let _ = done.send(());
        choice
    })
}
