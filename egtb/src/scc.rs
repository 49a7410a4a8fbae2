//! Strongly connected components of a table's quiet-move graph, found by an iterative form of
//! Pearce's space-efficient variant of Tarjan's algorithm: one `u32` per position plus two
//! stacks of `u32`, and each component is handed over the moment it is complete, after every
//! component it reaches (reverse topological order).
//!
//! Word of a position in `ids`: 0 before it is visited, a visit number (`1, 2, …`, lowered to
//! the smallest one it reaches while it is open) while its component is open, and the
//! component's id once that is complete. Ids count down from [`DONE`] − 1, so they stay above
//! every visit number (a table has fewer than 2²⁷ positions) and a finished position never
//! lowers an open one.

/// The id of a position outside the graph (settled before the search, e.g. without a quiet
/// move): it belongs to no component handed over.
pub(crate) const DONE: u32 = u32::MAX;

/// The most positions a graph may have: a frame packs a position in 27 bits.
pub(crate) const MAX_NODES: u64 = 1 << 27;

const NODE_BITS: u32 = 27;
const NODE_MASK: u32 = (1 << NODE_BITS) - 1;
const ROOT: u32 = 1 << 30;

/// One open position on the search's path: the position, the next child slot to look at
/// (0..=6) and whether it is still the root of its component.
#[inline]
fn frame(v: u32, slot: u32, root: bool) -> u32 {
    v | slot << NODE_BITS | if root { ROOT } else { 0 }
}

#[inline]
fn unframe(f: u32) -> (u32, u32, bool) {
    (f & NODE_MASK, (f >> NODE_BITS) & 7, f & ROOT != 0)
}

/// Finds the components of the graph on `0..ids.len()` whose edges `children(v, out)` writes
/// into `out` (returning how many; edges to positions whose id is [`DONE`] are ignored). `ids`
/// comes in with 0 for positions to search and [`DONE`] for the others, and leaves with every
/// searched position's component id. `found(members, id, ids)` is called once per component,
/// sinks first, with its positions (their ids already set to `id`; it may reorder them).
///
/// # Panics
/// If the graph has [`MAX_NODES`] positions or more.
pub(crate) fn components(
    ids: &mut [u32],
    mut children: impl FnMut(u32, &mut [u32; 6]) -> usize,
    mut found: impl FnMut(&mut [u32], u32, &[u32]),
) {
    assert!(
        (ids.len() as u64) < MAX_NODES,
        "{} positions: too many for one search",
        ids.len()
    );
    // Both stacks may grow to every position: reserving them up front avoids copies that would
    // briefly double them (untouched pages cost no memory).
    let mut path: Vec<u32> = Vec::with_capacity(ids.len());
    let mut open: Vec<u32> = Vec::with_capacity(ids.len());
    let mut kids = [0u32; 6];
    let mut visit = 1u32;
    let mut next_id = DONE - 1;
    for start in 0..ids.len() as u32 {
        if ids[start as usize] != 0 {
            continue;
        }
        ids[start as usize] = visit;
        visit += 1;
        path.push(frame(start, 0, true));
        while let Some(&top) = path.last() {
            let (v, mut slot, mut root) = unframe(top);
            let k = children(v, &mut kids);
            let mut descended = false;
            while (slot as usize) < k {
                let w = kids[slot as usize];
                slot += 1;
                let iw = ids[w as usize];
                if iw == 0 {
                    if let Some(f) = path.last_mut() {
                        *f = frame(v, slot, root);
                    }
                    ids[w as usize] = visit;
                    visit += 1;
                    path.push(frame(w, 0, true));
                    descended = true;
                    break;
                }
                if iw < ids[v as usize] {
                    ids[v as usize] = iw;
                    root = false;
                }
            }
            if descended {
                continue;
            }
            path.pop();
            if root {
                // v's component: v and the open positions above every earlier one.
                let own = ids[v as usize];
                let mut first = open.len();
                while first > 0 && ids[open[first - 1] as usize] >= own {
                    first -= 1;
                }
                open.push(v);
                for &m in &open[first..] {
                    ids[m as usize] = next_id;
                }
                found(&mut open[first..], next_id, ids);
                open.truncate(first);
                next_id -= 1;
            } else {
                open.push(v);
            }
            if let Some(p) = path.last_mut() {
                let (pv, pslot, _) = unframe(*p);
                if ids[v as usize] < ids[pv as usize] {
                    ids[pv as usize] = ids[v as usize];
                    *p = frame(pv, pslot, false);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    /// The components of a small graph by brute force: mutual reachability.
    fn by_reachability(edges: &[Vec<u32>]) -> Vec<HashSet<u32>> {
        let n = edges.len();
        let reach: Vec<HashSet<u32>> = (0..n)
            .map(|s| {
                let mut seen = HashSet::from([s as u32]);
                let mut todo = vec![s as u32];
                while let Some(v) = todo.pop() {
                    for &w in &edges[v as usize] {
                        if seen.insert(w) {
                            todo.push(w);
                        }
                    }
                }
                seen
            })
            .collect();
        (0..n as u32)
            .map(|v| {
                (0..n as u32)
                    .filter(|&w| reach[v as usize].contains(&w) && reach[w as usize].contains(&v))
                    .collect()
            })
            .collect()
    }

    #[test]
    fn components_match_mutual_reachability_and_come_sinks_first() {
        // Random graphs of out-degree up to 6, sparse and dense, with a few excluded nodes.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        for round in 0..200 {
            let n = 1 + next(60) as usize;
            let degree = 1 + (round % 6) as u64;
            let excluded: HashSet<u32> = (0..n as u32).filter(|_| next(10) == 0).collect();
            let edges: Vec<Vec<u32>> = (0..n)
                .map(|v| {
                    if excluded.contains(&(v as u32)) {
                        return Vec::new();
                    }
                    (0..next(degree + 1))
                        .map(|_| next(n as u64) as u32)
                        .collect()
                })
                .collect();
            let mut ids: Vec<u32> = (0..n as u32)
                .map(|v| if excluded.contains(&v) { DONE } else { 0 })
                .collect();
            let mut order: Vec<(u32, Vec<u32>)> = Vec::new();
            components(
                &mut ids,
                |v, out| {
                    let e = &edges[v as usize];
                    out[..e.len()].copy_from_slice(e);
                    e.len()
                },
                |members, id, ids| {
                    assert!(members.iter().all(|&m| ids[m as usize] == id));
                    order.push((id, members.to_vec()));
                },
            );
            // Graph without the excluded nodes' edges (they have none), whose components
            // are singletons and are not handed over.
            let truth = by_reachability(&edges);
            let mut covered = HashSet::new();
            for (id, members) in &order {
                let set: HashSet<u32> = members.iter().copied().collect();
                assert_eq!(set.len(), members.len(), "round {round}: a member twice");
                for &m in members {
                    assert!(!excluded.contains(&m));
                    let t: HashSet<u32> = truth[m as usize]
                        .iter()
                        .copied()
                        .filter(|w| !excluded.contains(w))
                        .collect();
                    assert_eq!(set, t, "round {round}: component of {m}");
                    assert!(covered.insert(m));
                    // Every edge leaves to a component handed over earlier (a larger id), to
                    // this one, or to an excluded node.
                    for &w in &edges[m as usize] {
                        let iw = ids[w as usize];
                        assert!(iw == DONE || iw >= *id, "round {round}: {m} -> {w}");
                    }
                }
            }
            assert_eq!(covered.len(), n - excluded.len(), "round {round}");
        }
    }
}
