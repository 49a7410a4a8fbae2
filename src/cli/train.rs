//! `oware train`: train a network from scratch, or continue a run with `--resume`.

use super::broker_tls::BrokerTlsArgs;
use super::device::parse_device;
use oware_model::DeviceKind;
use oware_trainer::{TrainOptions, install_ctrl_c, train};
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `oware train`.
#[derive(clap::Args, Debug)]
pub(super) struct Args {
    /// The config file (TOML); without it the built-in defaults (= configs/default.toml).
    #[arg(long, value_name = "FILE", conflicts_with = "resume")]
    config: Option<PathBuf>,
    /// The run directory; default: runs/run-YYYYMMDD-HHMMSS.
    #[arg(long, value_name = "DIR", conflicts_with = "resume")]
    run: Option<PathBuf>,
    /// Override one config key, e.g. --set schedule.minutes=5 (repeatable).
    #[arg(long = "set", value_name = "SECTION.KEY=VALUE")]
    sets: Vec<String>,
    /// Where the network runs: cpu, wgpu or cuda (GPU builds need the matching Cargo feature).
    #[arg(long, default_value = "cpu", value_parser = parse_device)]
    device: DeviceKind,
    /// Continue the run in DIR from its latest checkpoint (same step numbers).
    #[arg(long, value_name = "DIR")]
    resume: Option<PathBuf>,
    /// Plain log lines instead of a live progress line.
    #[arg(long, short)]
    quiet: bool,
    /// Also learn from `oware worker` processes through this Redis
    /// (redis://[[USER]:PASSWORD@]HOST[:PORT][/DB], rediss:// for TLS: see --broker-ca); with
    /// selfplay.workers = 0 the games come only from them. Never stored in the run directory;
    /// put a password in the OWARE_BROKER environment variable rather than on the command line.
    #[arg(long, value_name = "URL", env = "OWARE_BROKER", hide_env_values = true)]
    broker: Option<String>,
    #[command(flatten)]
    tls: BrokerTlsArgs,
}

/// `runs/run-YYYYMMDD-HHMMSS` in UTC.
fn default_run_dir() -> PathBuf {
    // Only a default name: a clock before 1970 names the run after 1970-01-01.
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Civil date from days since 1970-01-01 (proleptic Gregorian).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    PathBuf::from(format!(
        "runs/run-{year:04}{month:02}{day:02}-{:02}{:02}{:02}",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    ))
}

/// Runs `oware train`.
pub(super) fn run(args: Args) -> anyhow::Result<ExitCode> {
    let (run, resume) = match args.resume {
        Some(dir) => (dir, true),
        None => (args.run.unwrap_or_else(default_run_dir), false),
    };
    // The TLS files are read only with a broker (they may come from the environment).
    let tls = args.tls.files();
    let broker = args
        .broker
        .as_deref()
        .map(|url| oware_trainer::broker::BrokerUrl::parse_with_tls(url, &tls))
        .transpose()?;
    install_ctrl_c()?;
    train(&TrainOptions {
        run,
        config: args.config,
        sets: args.sets,
        resume,
        device: args.device,
        quiet: args.quiet,
        broker,
    })?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    #[test]
    fn default_run_dir_has_a_date() {
        let name = super::default_run_dir().display().to_string();
        assert!(name.starts_with("runs/run-20"), "{name}");
        assert_eq!(name.len(), "runs/run-YYYYMMDD-HHMMSS".len());
    }
}
