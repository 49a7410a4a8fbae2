//! Opponents at the network's own time per move: `ms=auto` in an `[eval] opponents` spec is
//! replaced by the network's measured time per move before the evaluation plays.

use oware_engine::Game;
use oware_search::{Budget, Player};
use std::time::{Duration, Instant};

/// The option of an opponent spec that `[eval]` replaces by the network's time per move.
pub const AUTO_MS: &str = "ms=auto";

/// Moves timed to measure the network's time per move (after one untimed warm-up move).
pub const TIMED_MOVES: usize = 8;

/// Whether `spec` asks for the network's time per move.
pub fn has_auto_ms(spec: &str) -> bool {
    spec.split_once(':')
        .is_some_and(|(_, options)| options.split(',').any(|o| o == AUTO_MS))
}

/// `spec` with `ms=auto` replaced by `ms=MILLIS`; `spec` itself when it has no `ms=auto`.
pub fn resolve_auto_ms(spec: &str, millis: u64) -> String {
    let Some((kind, options)) = spec.split_once(':') else {
        return spec.to_string();
    };
    let options: Vec<String> = options
        .split(',')
        .map(|o| {
            if o == AUTO_MS {
                format!("ms={millis}")
            } else {
                o.to_string()
            }
        })
        .collect();
    format!("{kind}:{}", options.join(","))
}

/// The mean time per move of `player` in milliseconds (rounded up, at least 1): one warm-up
/// move, then [`TIMED_MOVES`] moves of a game from the start, each searched alone on this
/// thread, as an equal-time opponent would search.
pub fn measure_millis_per_move(player: &mut dyn Player) -> anyhow::Result<u64> {
    let mut game = Game::new();
    let mut spent = Duration::ZERO;
    let mut timed = 0u32;
    for i in 0..=TIMED_MOVES {
        if game.is_over() {
            break;
        }
        let start = Instant::now();
        let choice = player
            .choose(&game, Budget::default())
            .map_err(|e| anyhow::anyhow!("timing the network's moves: {e}"))?;
        if i > 0 {
            spent += start.elapsed();
            timed += 1;
        }
        game.play(choice.mv)
            .map_err(|e| anyhow::anyhow!("timing the network's moves: {e}"))?;
    }
    let mean = spent.as_secs_f64() * 1000.0 / f64::from(timed.max(1));
    Ok((mean.ceil() as u64).max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_ms_is_found_and_replaced() {
        assert!(has_auto_ms("alphabeta:ms=auto"));
        assert!(has_auto_ms("alphabeta:egtb=t,ms=auto"));
        assert!(!has_auto_ms("alphabeta:ms=20"));
        assert!(!has_auto_ms("random"));
        assert_eq!(resolve_auto_ms("alphabeta:ms=auto", 7), "alphabeta:ms=7");
        assert_eq!(
            resolve_auto_ms("alphabeta:egtb=t,ms=auto", 12),
            "alphabeta:egtb=t,ms=12"
        );
        assert_eq!(resolve_auto_ms("random", 5), "random");
    }
}
