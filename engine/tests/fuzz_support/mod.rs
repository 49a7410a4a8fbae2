//! What every crate's fuzz targets share (engine, model and trainer include this file with
//! `#[path]`): the case budget, a deterministic proptest configuration, and byte-level
//! mutations of valid inputs (the structure-aware half of each target).
//!
//! The fuzz targets are ordinary `cargo test` tests on the stable toolchain: a bounded run in
//! CI (the `cases` each target passes to [`config`]), and a long run of the `*_long` twins,
//! which are `#[ignore]`d and take their case count from the environment:
//!
//! ```sh
//! OWARE_FUZZ_CASES=200000 cargo test --release -p oware-engine --test fuzz -- --ignored
//! ```

#![allow(dead_code)] // each fuzz test binary uses its own subset

use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};

/// The environment variable that sets the case count of the long (`--ignored`) runs.
pub(crate) const CASES_ENV: &str = "OWARE_FUZZ_CASES";

/// Cases of a long run when [`CASES_ENV`] is not set.
pub(crate) const LONG_CASES: u32 = 20_000;

/// The case count of a long run: [`CASES_ENV`] if set, else [`LONG_CASES`].
pub(crate) fn long_cases() -> u32 {
    match std::env::var(CASES_ENV) {
        Ok(v) => match v.trim().parse() {
            Ok(n) => n,
            Err(_) => panic!("{CASES_ENV}={v} is not a number of cases"),
        },
        Err(_) => LONG_CASES,
    }
}

/// A proptest configuration for `cases` cases: a fixed seed (so CI runs are deterministic;
/// long runs take the seed from `OWARE_FUZZ_SEED` when set) and no regression files (every
/// crash found becomes a named regression test instead).
pub(crate) fn config(cases: u32) -> Config {
    let seed = std::env::var("OWARE_FUZZ_SEED")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0x0AE5_F022);
    Config {
        cases,
        failure_persistence: None,
        rng_seed: RngSeed::Fixed(seed),
        max_shrink_iters: 2_000,
        ..Config::default()
    }
}

/// One edit of a byte string.
#[derive(Clone, Debug)]
pub(crate) enum Mutation {
    /// XOR the byte at (a fraction of) the length with a mask.
    Flip(f64, u8),
    /// Set the byte there.
    Set(f64, u8),
    /// Insert bytes there.
    Insert(f64, Vec<u8>),
    /// Remove up to this many bytes there.
    Remove(f64, usize),
    /// Cut the input there.
    Truncate(f64),
    /// Copy a range of the input to another place (repeats structure).
    Splice(f64, f64, usize),
}

/// Bytes that matter to the parsers: separators, digits, signs, quotes, brackets, extremes.
fn interesting_byte() -> impl Strategy<Value = u8> {
    prop_oneof![
        any::<u8>(),
        prop::sample::select(b" \t\n\r#=,:.-+0123456789\"'[]{}\\eE\x00\xff".to_vec()),
    ]
}

/// A strategy for one mutation.
pub(crate) fn mutation() -> impl Strategy<Value = Mutation> {
    let at = 0.0..1.0f64;
    prop_oneof![
        (at.clone(), 1..=255u8).prop_map(|(a, m)| Mutation::Flip(a, m)),
        (at.clone(), interesting_byte()).prop_map(|(a, b)| Mutation::Set(a, b)),
        (at.clone(), prop::collection::vec(interesting_byte(), 1..8))
            .prop_map(|(a, b)| Mutation::Insert(a, b)),
        (at.clone(), 1..16usize).prop_map(|(a, n)| Mutation::Remove(a, n)),
        at.clone().prop_map(Mutation::Truncate),
        (at.clone(), at, 1..64usize).prop_map(|(a, b, n)| Mutation::Splice(a, b, n)),
    ]
}

/// A strategy for 1 to `max` mutations.
pub(crate) fn mutations(max: usize) -> impl Strategy<Value = Vec<Mutation>> {
    prop::collection::vec(mutation(), 1..=max)
}

fn index(at: f64, len: usize) -> usize {
    ((at * len as f64) as usize).min(len)
}

/// Applies `mutations` to `bytes` in order.
pub(crate) fn apply(bytes: &mut Vec<u8>, mutations: &[Mutation]) {
    for m in mutations {
        let len = bytes.len();
        match m {
            Mutation::Flip(a, mask) if len > 0 => bytes[index(*a, len - 1)] ^= mask,
            Mutation::Set(a, b) if len > 0 => bytes[index(*a, len - 1)] = *b,
            Mutation::Insert(a, b) => {
                let i = index(*a, len);
                bytes.splice(i..i, b.iter().copied());
            }
            Mutation::Remove(a, n) => {
                let i = index(*a, len);
                bytes.drain(i..(i + n).min(len));
            }
            Mutation::Truncate(a) => bytes.truncate(index(*a, len)),
            Mutation::Splice(from, to, n) if len > 0 => {
                let i = index(*from, len - 1);
                let chunk: Vec<u8> = bytes[i..(i + n).min(len)].to_vec();
                let j = index(*to, len);
                bytes.splice(j..j, chunk);
            }
            _ => {}
        }
    }
}

/// `text` mutated, as a string (invalid UTF-8 replaced, since the parsers take `&str`).
pub(crate) fn mutate_text(text: &str, mutations: &[Mutation]) -> String {
    let mut bytes = text.as_bytes().to_vec();
    apply(&mut bytes, mutations);
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Runs `test` on `cases` values of `strategy` with [`config`]; a failure (or a panic inside
/// `test`) fails the calling test with the smallest failing input proptest finds.
pub(crate) fn run<S: Strategy>(
    name: &str,
    cases: u32,
    strategy: S,
    test: impl Fn(S::Value) -> Result<(), TestCaseError>,
) {
    let mut runner = proptest::test_runner::TestRunner::new(config(cases));
    if let Err(e) = runner.run(&strategy, test) {
        panic!("fuzz target {name}: {e}");
    }
    if let Some(peak) = peak_memory_bytes() {
        assert!(
            peak < MAX_PEAK_BYTES,
            "fuzz target {name}: the process peaked at {peak} bytes of memory, more than {MAX_PEAK_BYTES}"
        );
    }
}

/// The most memory a fuzz test process may have used at its peak: every parser's memory must
/// stay bounded whatever its input, so a case that allocates gigabytes fails the target.
pub(crate) const MAX_PEAK_BYTES: u64 = 1 << 30;

/// The process's peak resident memory so far (Linux: `VmHWM` of `/proc/self/status`), or
/// `None` where that is not available.
pub(crate) fn peak_memory_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}
