//! Fuzz targets for the checkpoint files: `meta.json` (arbitrary bytes, mutated text, and
//! random values at every field) and the weight and optimizer files (`model.bpk`,
//! `optimizer.bpk`: bytes flipped, cut or spliced, with `meta.json`'s length and checksum
//! updated to match so that burn's decoder sees the damage). The property: loading never
//! panics, never takes unbounded memory, and fails with an error naming the file. The
//! `*_long` twins run the same for `OWARE_FUZZ_CASES` cases:
//! `cargo test --release -p oware-model --test fuzz -- --ignored`.

#[path = "../../engine/tests/fuzz_support/mod.rs"]
mod fuzz_support;

use fuzz_support::{apply, long_cases, mutate_text, mutations, run};
use oware_engine::Position;
use oware_model::checkpoint::{
    CheckpointMeta, META_FILE, MODEL_FILE, OPTIMIZER_FILE, load_checkpoint, load_evaluator,
    read_checkpoint_info, save_checkpoint,
};
use oware_model::{DeviceKind, Learner, ModelConfig, OptimConfig, TrainBatch, device};
use oware_search::{Evaluation, Evaluator};
use proptest::prelude::*;
use serde_json::Value;
use std::path::PathBuf;

/// A saved checkpoint of a tiny network after one training step: its directory and its three
/// files' bytes.
struct Saved {
    dir: PathBuf,
    meta: Vec<u8>,
    model: Vec<u8>,
    optimizer: Vec<u8>,
}

fn saved(name: &str) -> Saved {
    let root = std::env::temp_dir().join(format!("oware-fuzz-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let dir = root.join("step-0000001");
    let dev = device(DeviceKind::Cpu).expect("cpu");
    let cfg = ModelConfig::new().with_hidden(8).with_blocks(1);
    let mut learner = Learner::new(&cfg, &OptimConfig::default(), &dev);
    let batch = TrainBatch {
        positions: vec![Position::start(); 2],
        policy: vec![[1.0 / 6.0; 6]; 2],
        value: vec![1.0, -1.0],
        margin: vec![0.1, -0.1],
        short_value: Vec::new(),
    };
    learner.step(&batch, 1e-3).expect("one step");
    let meta = CheckpointMeta {
        step: 1,
        games: 2,
        positions: 2,
        ..CheckpointMeta::default()
    };
    save_checkpoint(&dir, &learner, &meta).expect("save");
    let read = |f: &str| std::fs::read(dir.join(f)).expect("read back");
    Saved {
        meta: read(META_FILE),
        model: read(MODEL_FILE),
        optimizer: read(OPTIMIZER_FILE),
        dir,
    }
}

impl Drop for Saved {
    fn drop(&mut self) {
        if let Some(root) = self.dir.parent() {
            let _ = std::fs::remove_dir_all(root);
        }
    }
}

/// FNV-1a 64, as `meta.json` records it (the checkpoint module's own checksum is private).
fn fnv1a64(data: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in data {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// Writes the three files, loads the checkpoint every way, and checks the property.
fn check(s: &Saved, meta: &[u8], model: &[u8], optimizer: &[u8]) -> Result<(), TestCaseError> {
    let io = |e: std::io::Error| TestCaseError::fail(e.to_string());
    std::fs::write(s.dir.join(META_FILE), meta).map_err(io)?;
    std::fs::write(s.dir.join(MODEL_FILE), model).map_err(io)?;
    std::fs::write(s.dir.join(OPTIMIZER_FILE), optimizer).map_err(io)?;
    let dev = device(DeviceKind::Cpu).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let named = |msg: String| -> Result<(), TestCaseError> {
        prop_assert!(msg.contains(&s.dir.display().to_string()), "{}", msg);
        Ok(())
    };
    if let Err(e) = read_checkpoint_info(&s.dir) {
        named(e.to_string())?;
    }
    match load_evaluator(&s.dir, &dev) {
        Ok((net, _)) => {
            // A loaded network evaluates or reports an error (damaged weights may give
            // non-finite outputs, which the evaluator refuses); it never crashes.
            let mut out = [Evaluation {
                policy: [0.0; 6],
                value: 0.0,
            }];
            if let Err(e) = net.evaluate(&[Position::start()], &mut out) {
                prop_assert!(!e.to_string().is_empty());
            }
        }
        Err(e) => named(e.to_string())?,
    }
    if let Err(e) = load_checkpoint(&s.dir, &dev) {
        named(e.to_string())?;
    }
    Ok(())
}

/// `meta.json` with the digest of `file` replaced by that of `data`.
fn resealed_meta(meta: &[u8], file: &str, data: &[u8]) -> Vec<u8> {
    let mut v: Value = match serde_json::from_slice(meta) {
        Ok(v) => v,
        Err(_) => return meta.to_vec(),
    };
    v["files"][file] = serde_json::json!({ "bytes": data.len(), "fnv1a64": fnv1a64(data) });
    serde_json::to_vec(&v).unwrap_or_else(|_| meta.to_vec())
}

/// A JSON value of any type, with numbers at and beyond the network's bounds.
fn json_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        prop::sample::select(vec![0u64, 1, 2, 7, 8, 64, 65, 4096, 4097]).prop_map(Value::from),
        "[a-z0-9]{0,16}".prop_map(Value::from),
        Just(serde_json::json!([1, 2, 3])),
        Just(serde_json::json!({ "a": 1 })),
    ]
}

/// A path into `meta.json`: its fields and their fields.
fn json_path() -> impl Strategy<Value = Vec<&'static str>> {
    prop::sample::select(vec![
        vec!["format_version"],
        vec!["model"],
        vec!["model", "hidden"],
        vec!["model", "blocks"],
        vec!["optim"],
        vec!["optim", "kind"],
        vec!["optim", "weight_decay"],
        vec!["meta"],
        vec!["meta", "step"],
        vec!["meta", "last_eval"],
        vec!["files"],
        vec!["files", "model.bpk"],
        vec!["files", "model.bpk", "bytes"],
        vec!["files", "model.bpk", "fnv1a64"],
        vec!["files", "optimizer.bpk", "bytes"],
        vec!["unknown"],
    ])
}

/// Sets the field at `path` (making objects of whatever lies on the way).
fn set_path(v: &mut Value, path: &[&str], value: Value) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut at = v;
    for key in parents {
        if !at.is_object() {
            *at = serde_json::json!({});
        }
        at = &mut at[*key];
    }
    if !at.is_object() {
        *at = serde_json::json!({});
    }
    at[*last] = value;
}

fn meta_files(cases: u32) {
    let s = saved("meta");
    run(
        "meta.json (arbitrary bytes)",
        cases,
        prop::collection::vec(any::<u8>(), 0..300),
        |bytes| check(&s, &bytes, &s.model, &s.optimizer),
    );
    run("meta.json (mutated text)", cases, mutations(5), |m| {
        let text = String::from_utf8_lossy(&s.meta).into_owned();
        check(
            &s,
            mutate_text(&text, &m).as_bytes(),
            &s.model,
            &s.optimizer,
        )
    });
    run(
        "meta.json (random field values)",
        cases,
        prop::collection::vec((json_path(), json_value()), 1..3),
        |edits| {
            let mut v: Value = serde_json::from_slice(&s.meta).expect("valid meta");
            for (path, value) in edits {
                set_path(&mut v, &path, value);
            }
            let bytes = serde_json::to_vec(&v).expect("json");
            check(&s, &bytes, &s.model, &s.optimizer)
        },
    );
}

#[test]
fn fuzz_meta_json() {
    meta_files(120);
}

#[test]
#[ignore = "long fuzz run: OWARE_FUZZ_CASES sets the case count"]
fn fuzz_meta_json_long() {
    meta_files(long_cases());
}

fn weight_files(cases: u32) {
    let s = saved("weights");
    for (file, valid) in [(MODEL_FILE, &s.model), (OPTIMIZER_FILE, &s.optimizer)] {
        let with = |data: &[u8]| -> (Vec<u8>, Vec<u8>) {
            if file == MODEL_FILE {
                (data.to_vec(), s.optimizer.clone())
            } else {
                (s.model.clone(), data.to_vec())
            }
        };
        run(&format!("{file} (mutated)"), cases, mutations(4), |m| {
            let mut data = valid.clone();
            apply(&mut data, &m);
            let (model, optimizer) = with(&data);
            check(&s, &s.meta, &model, &optimizer)
        });
        run(
            &format!("{file} (mutated, meta.json resealed)"),
            cases,
            mutations(4),
            |m| {
                let mut data = valid.clone();
                apply(&mut data, &m);
                let (model, optimizer) = with(&data);
                check(&s, &resealed_meta(&s.meta, file, &data), &model, &optimizer)
            },
        );
    }
}

#[test]
fn fuzz_checkpoint_files() {
    weight_files(120);
}

#[test]
#[ignore = "long fuzz run: OWARE_FUZZ_CASES sets the case count"]
fn fuzz_checkpoint_files_long() {
    weight_files(long_cases());
}

/// Regression (found while writing the `meta.json` target): a `meta.json` claiming a network of
/// the largest allowed shape (hidden 4096, 64 blocks: over a billion parameters, 4 GB) over a
/// small weights file had that network built in full before its weights were read. It is now
/// refused first, with an error naming the file and the parameter count.
#[test]
fn a_meta_claiming_a_huge_network_is_refused_before_it_is_built() {
    let s = saved("huge");
    let mut v: Value = serde_json::from_slice(&s.meta).expect("valid meta");
    v["model"]["hidden"] = Value::from(4096);
    v["model"]["blocks"] = Value::from(64);
    std::fs::write(s.dir.join(META_FILE), serde_json::to_vec(&v).expect("json")).expect("write");
    let dev = device(DeviceKind::Cpu).expect("cpu");
    let err = match load_evaluator(&s.dir, &dev) {
        Ok(_) => panic!("a 4096-wide network loaded from {} bytes", s.model.len()),
        Err(e) => e.to_string(),
    };
    assert!(err.contains(MODEL_FILE), "{err}");
    let params = ModelConfig::new()
        .with_hidden(4096)
        .with_blocks(64)
        .num_params();
    assert!(params > 1_000_000_000);
    assert!(
        err.contains(&format!("too few for the {params} parameters")),
        "{err}"
    );
}
