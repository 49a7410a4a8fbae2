//! The options of every command that plays matches (`oware pit`, `oware ladder`): openings,
//! threads, seed and the device of network players, and the match they describe.

use super::device::parse_device;
use oware_arena::MatchOptions;
use oware_engine::DEFAULT_MAX_PLIES;
use oware_engine::bounds::MAX_THREADS;
use oware_model::DeviceKind;

/// How the games of a match are played.
#[derive(clap::Args, Debug)]
pub(super) struct MatchArgs {
    /// Random plies before the players take over [default: 2 to 4, drawn per opening].
    #[arg(long, value_parser = clap::value_parser!(u32).range(0..=200))]
    pub opening_plies: Option<u32>,
    /// Match threads, at most 256 [default: the number of CPUs]: each plays one game at a time,
    /// or, when a side is a batched network player, keeps many games in flight.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_THREADS)))]
    pub threads: Option<u32>,
    /// Seed of the openings and of the players' random choices.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Device for network players: cpu, wgpu or cuda.
    #[arg(long, default_value = "cpu", value_parser = parse_device)]
    pub device: DeviceKind,
}

impl MatchArgs {
    /// Games played at once: `--threads`, or the number of CPUs.
    pub(super) fn threads(&self) -> usize {
        match self.threads {
            Some(t) => t as usize,
            None => std::thread::available_parallelism()
                .map_or(1, |n| n.get().min(MAX_THREADS as usize)),
        }
    }

    /// The match of `games` games with these options, seeded with `seed`.
    pub(super) fn options(&self, games: u32, seed: u64) -> MatchOptions {
        MatchOptions {
            games,
            opening_plies: self.opening_plies,
            seed,
            threads: self.threads(),
            max_plies: DEFAULT_MAX_PLIES,
        }
    }
}
