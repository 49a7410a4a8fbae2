//! Tests of the inference service against the direct path, under concurrent weight swaps, and
//! with failing networks.

use super::*;
use crate::config::ModelConfig;
use crate::evaluator::tests::{poisoned, some_positions};
use burn::tensor::Device;
use std::sync::atomic::AtomicBool;

fn blank(n: usize) -> Vec<Evaluation> {
    vec![
        Evaluation {
            policy: [0.0; 6],
            value: 0.0,
        };
        n
    ]
}

fn direct(ev: &NetEvaluator, positions: &[Position]) -> Vec<Evaluation> {
    let mut out = blank(positions.len());
    ev.evaluate(positions, &mut out).expect("finite network");
    out
}

/// Equal up to float rounding: a row's numbers may depend on the batch it is computed in.
fn close(a: &[Evaluation], b: &[Evaluation]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| {
            (x.value - y.value).abs() < 1e-5
                && x.policy
                    .iter()
                    .zip(&y.policy)
                    .all(|(p, q)| (p - q).abs() < 1e-5)
        })
}

fn net(seed_hidden: usize) -> NetEvaluator {
    NetEvaluator::random(
        &ModelConfig::new().with_hidden(seed_hidden).with_blocks(1),
        &Device::flex(),
    )
}

#[test]
fn merged_batches_give_the_direct_evaluations() {
    let ev = net(32);
    let pos = some_positions();
    let service = InferenceService::start(
        ev.clone(),
        ServiceConfig {
            max_batch: 100_000,
            // Long enough that the four callers' first requests are merged.
            max_wait: Duration::from_secs(2),
            clients: 4,
        },
    )
    .expect("starts");
    std::thread::scope(|s| {
        for t in 0..4 {
            let client = service.client();
            let (ev, pos) = (&ev, &pos);
            s.spawn(move || {
                for round in 0..10 {
                    // Different slices per thread and round.
                    let start = (t * 5 + round) % (pos.len() - 1);
                    let len = 1 + (t + round * 3) % (pos.len() - start);
                    let slice = &pos[start..start + len];
                    let mut out = blank(len);
                    let version = client.evaluate_versioned(slice, &mut out).expect("ok");
                    assert_eq!(version, 0);
                    assert!(close(&out, &direct(ev, slice)), "thread {t} round {round}");
                }
            });
        }
    });
    let stats = service.stats();
    assert_eq!(stats.requests.load(Ordering::Relaxed), 40);
    assert!(
        stats.batches.load(Ordering::Relaxed) < 40,
        "requests were merged: {} batches",
        stats.batches.load(Ordering::Relaxed)
    );
    assert!(stats.mean_batch() > 0.0);
    // An empty request is answered too.
    let mut none: Vec<Evaluation> = Vec::new();
    service.client().evaluate(&[], &mut none).expect("empty");
}

#[test]
fn weights_swap_while_callers_submit_without_a_lost_or_mixed_batch() {
    let pos = some_positions();
    // Three different networks; version v runs networks[v % 3].
    let networks = [net(16), net(24), net(32)];
    let expected: Vec<Vec<Evaluation>> = networks.iter().map(|n| direct(n, &pos)).collect();
    for (i, a) in expected.iter().enumerate() {
        for b in &expected[i + 1..] {
            assert!(!close(a, b), "the test networks differ");
        }
    }
    let service = InferenceService::start(
        networks[0].clone(),
        ServiceConfig {
            max_batch: 4 * pos.len(),
            max_wait: Duration::from_millis(1),
            clients: 6,
        },
    )
    .expect("starts");
    let done = AtomicBool::new(false);
    let calls_per_thread = 60;
    let seen = std::thread::scope(|s| {
        let handles: Vec<_> = (0..6)
            .map(|_| {
                let client = service.client();
                let (pos, expected) = (&pos, &expected);
                s.spawn(move || {
                    let mut versions = Vec::new();
                    for _ in 0..calls_per_thread {
                        let mut out = blank(pos.len());
                        let v = client
                            .evaluate_versioned(pos, &mut out)
                            .expect("no batch is lost");
                        // The whole reply is one version's: it matches that version's network
                        // and no other.
                        let matching: Vec<usize> =
                            (0..3).filter(|&k| close(&out, &expected[k])).collect();
                        assert_eq!(matching, vec![(v % 3) as usize], "version {v}");
                        versions.push(v);
                    }
                    versions
                })
            })
            .collect();
        let mut published = 0u64;
        while !handles.iter().all(|h| h.is_finished()) && published < 500 {
            published += 1;
            let v = service.set_weights(networks[(published % 3) as usize].clone());
            assert_eq!(v, published);
            std::thread::sleep(Duration::from_micros(300));
        }
        done.store(true, Ordering::SeqCst);
        handles
            .into_iter()
            .map(|h| h.join().expect("caller thread"))
            .collect::<Vec<_>>()
    });
    assert!(done.load(Ordering::SeqCst));
    let mut distinct = std::collections::BTreeSet::new();
    for versions in &seen {
        assert_eq!(versions.len(), calls_per_thread);
        // A caller never goes back to older weights.
        assert!(versions.windows(2).all(|w| w[0] <= w[1]), "{versions:?}");
        distinct.extend(versions.iter().copied());
    }
    assert!(
        distinct.len() >= 3,
        "weights swapped during the run: {distinct:?}"
    );
    assert_eq!(
        service.stats().requests.load(Ordering::Relaxed),
        6 * calls_per_thread as u64
    );
    // After the last swap, the next batch runs the newest weights.
    let newest = service.version();
    let mut out = blank(pos.len());
    let v = service
        .client()
        .evaluate_versioned(&pos, &mut out)
        .expect("ok");
    assert_eq!(v, newest);
    assert!(close(&out, &expected[(newest % 3) as usize]));
}

#[test]
fn a_diverged_network_is_an_error_for_every_caller() {
    let config = ModelConfig::new().with_hidden(16).with_blocks(1);
    let bad = NetEvaluator::new(
        &poisoned(&config, f32::NAN, true),
        config.clone(),
        &Device::flex(),
    );
    let good = NetEvaluator::random(&config, &Device::flex());
    let pos = some_positions();
    let service = InferenceService::start(
        good,
        ServiceConfig {
            clients: 2,
            ..ServiceConfig::default()
        },
    )
    .expect("starts");
    let client = service.client();
    let mut out = blank(pos.len());
    client.evaluate(&pos, &mut out).expect("good weights");
    service.set_weights(bad);
    std::thread::scope(|s| {
        for _ in 0..2 {
            let (client, pos) = (service.client(), &pos);
            s.spawn(move || {
                let mut out = blank(pos.len() - 3);
                let err = client.evaluate(&pos[3..], &mut out).expect_err("NaN");
                // The index is the position's within this caller's request.
                assert!(
                    matches!(err, EvalError::NonFinite { index: 0, .. }),
                    "{err}"
                );
            });
        }
    });
}

#[test]
fn a_stopped_service_answers_with_an_error() {
    let service = InferenceService::start(net(8), ServiceConfig::default()).expect("starts");
    let client = service.client();
    let pos = some_positions();
    let mut out = blank(pos.len());
    client.evaluate(&pos, &mut out).expect("running");
    drop(service);
    let err = client.evaluate(&pos, &mut out).expect_err("stopped");
    assert!(err.to_string().contains("stopped"), "{err}");
    let mut short = blank(1);
    let err = client.evaluate(&pos, &mut short).expect_err("wrong length");
    assert!(matches!(err, EvalError::WrongLength { .. }), "{err}");
}
