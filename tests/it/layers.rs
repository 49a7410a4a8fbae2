//! The crates form layers: each may depend only on crates before it in [`ORDER`] (the order
//! `docs/architecture.md` explains), read from `cargo metadata`.

use serde_json::Value;
use std::process::Command;

/// The workspace's crates, lowest layer first.
const ORDER: [&str; 10] = [
    "oware-engine",
    "oware-egtb",
    "oware-search",
    "oware-arena",
    "oware-model",
    "oware-players",
    "oware-report",
    "oware-trainer",
    "oware-web",
    "oware",
];

#[test]
fn no_crate_depends_on_a_crate_above_it() {
    let out = Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let packages = meta["packages"].as_array().expect("packages");
    let rank = |name: &str| ORDER.iter().position(|n| *n == name);
    let mut edges = 0;
    for p in packages {
        let name = p["name"].as_str().expect("a name");
        let me = rank(name).unwrap_or_else(|| {
            panic!("{name} is not in the layer order: place it in ORDER and docs/architecture.md")
        });
        for d in p["dependencies"].as_array().expect("dependencies") {
            let dep = d["name"].as_str().expect("a name");
            let Some(them) = rank(dep) else { continue };
            edges += 1;
            assert!(
                them < me,
                "{name} depends on {dep} ({} dependency), which is not below it in {ORDER:?}",
                d["kind"].as_str().unwrap_or("normal")
            );
        }
    }
    // Not vacuous: the workspace's crates do depend on each other.
    assert!(
        packages.len() >= 8 && edges >= 15,
        "{} crates, {edges} edges",
        packages.len()
    );
}
