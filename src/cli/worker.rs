//! `oware worker`: self-play for a learner started with `oware train --broker URL`, on any
//! machine that reaches its Redis.

use super::broker_tls::BrokerTlsArgs;
use super::device::parse_device;
use oware_model::DeviceKind;
use oware_trainer::broker::BrokerUrl;
use oware_trainer::broker::sign::Trust;
use oware_trainer::broker::worker::{WorkerOptions, run_worker_process};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

/// Arguments of `oware worker`.
#[derive(clap::Args, Debug)]
pub(super) struct Args {
    /// The learner's Redis (redis://[[USER]:PASSWORD@]HOST[:PORT][/DB], rediss:// for TLS:
    /// see --broker-ca); put a password in the OWARE_BROKER environment variable rather than on
    /// the command line.
    #[arg(long, value_name = "URL", env = "OWARE_BROKER", hide_env_values = true)]
    broker: String,
    #[command(flatten)]
    tls: BrokerTlsArgs,
    /// The run: its name (the last component of the learner's run directory) or that
    /// directory itself, as `oware train --run` was given it.
    #[arg(long, value_name = "NAME|DIR")]
    run: String,
    /// Self-play threads; 0 means one per CPU core.
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// Where the network runs: cpu, wgpu or cuda (GPU builds need the matching Cargo feature).
    #[arg(long, default_value = "cpu", value_parser = parse_device)]
    device: DeviceKind,
    /// Stop after this many games (once they are sent); default: until Ctrl-C.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    games: Option<u64>,
    /// Print the summary at the end as one JSON object on stdout.
    #[arg(long)]
    json: bool,
    /// No rate lines every 10 s.
    #[arg(long, short)]
    quiet: bool,
    /// The learner's public key (64 hex digits, from RUN/broker-key.pub), its fingerprint
    /// (sha256:...: the learner prints it at its start) or a file holding either: only weights
    /// signed by it are loaded. Without it the worker trusts the key of the first signed
    /// weights it sees.
    #[arg(long, value_name = "KEY", env = "OWARE_LEARNER_KEY")]
    learner_key: Option<String>,
}

/// Set by Ctrl-C: finish the current searches, send the finished games, exit.
static STOP: AtomicBool = AtomicBool::new(false);

/// Runs `oware worker`.
pub(super) fn run(args: Args) -> anyhow::Result<ExitCode> {
    let url = BrokerUrl::parse_with_tls(&args.broker, &args.tls.files())?;
    let trust = Trust::from_arg(args.learner_key.as_deref())?;
    if args.threads > 1024 {
        anyhow::bail!("--threads {} is more than 1024", args.threads);
    }
    ctrlc::set_handler(|| STOP.store(true, Ordering::SeqCst))
        .map_err(|e| anyhow::anyhow!("installing the Ctrl-C handler: {e}"))?;
    let summary = run_worker_process(
        &WorkerOptions {
            url,
            run: oware_trainer::broker::run_name_of(&args.run)?,
            threads: args.threads,
            device: args.device,
            games: args.games,
            quiet: args.quiet,
            trust,
        },
        &STOP,
    )?;
    if args.json {
        println!("{}", serde_json::to_string(&summary)?);
    } else {
        println!(
            "worker {}: {} games ({} sent{}{}), {} positions in {:.1} s: {:.0} positions/s, {:.2} games/s, {:.0} sims/s; weights version {} ({} loaded{}), signed by {}",
            summary.worker,
            summary.games,
            summary.sent,
            if summary.dropped > 0 {
                format!(", {} dropped while Redis was away", summary.dropped)
            } else {
                String::new()
            },
            if summary.unsent > 0 {
                format!(", {} unsent: Redis was away at the end", summary.unsent)
            } else {
                String::new()
            },
            summary.positions,
            summary.seconds,
            summary.positions_per_sec,
            summary.games_per_sec,
            summary.sims_per_sec,
            summary.version,
            summary.weights_loaded,
            if summary.refused > 0 {
                format!(", {} refused", summary.refused)
            } else {
                String::new()
            },
            summary.learner_key
        );
    }
    Ok(ExitCode::SUCCESS)
}
