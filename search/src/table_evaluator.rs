//! Table values for MCTS: an [`Evaluator`] that asks another one, then corrects its values
//! with what the tables prove.

use crate::evaluator::{EvalError, Evaluation, Evaluator};
use oware_egtb::Tables;
use oware_engine::Position;
use std::sync::Arc;

/// Wraps an evaluator (a network): at every position the tables cover, the value is held to
/// the results the table interval allows — the exact result (1, 0 or −1) where the interval
/// decides it, otherwise the inner value clamped to the range between the worst and the best
/// result. The policy is the inner evaluator's.
///
/// The interval is the entry interval ([`Tables::entry`], exact wherever the table knows the
/// entry value) for a fresh position ([`Evaluator::evaluate_fresh`]: a capture's child or the
/// start of a game), and the interval that holds after every history ([`Tables::bounds`])
/// otherwise; [`Evaluator::evaluate`] treats every position as not fresh.
#[derive(Debug)]
pub struct TableEvaluator<E> {
    inner: E,
    tables: Arc<Tables>,
}

impl<E> TableEvaluator<E> {
    /// `inner` corrected by `tables`.
    pub fn new(inner: E, tables: Arc<Tables>) -> TableEvaluator<E> {
        TableEvaluator { inner, tables }
    }

    /// The tables.
    pub fn tables(&self) -> &Arc<Tables> {
        &self.tables
    }
}

impl<E: Evaluator> Evaluator for TableEvaluator<E> {
    fn evaluate(&self, positions: &[Position], out: &mut [Evaluation]) -> Result<(), EvalError> {
        self.inner.evaluate(positions, out)?;
        self.correct(positions, |_| false, out);
        Ok(())
    }

    fn evaluate_fresh(
        &self,
        positions: &[Position],
        fresh: &[bool],
        out: &mut [Evaluation],
    ) -> Result<(), EvalError> {
        self.inner.evaluate(positions, out)?;
        self.correct(positions, |i| fresh.get(i).copied().unwrap_or(false), out);
        Ok(())
    }
}

impl<E> TableEvaluator<E> {
    /// Holds each value to the results its table interval allows (`fresh(i)`: read the entry
    /// interval of position `i`).
    fn correct(
        &self,
        positions: &[Position],
        fresh: impl Fn(usize) -> bool,
        out: &mut [Evaluation],
    ) {
        for (i, (pos, e)) in positions.iter().zip(out.iter_mut()).enumerate() {
            if let Some(p) = self.tables.probe_with(pos, fresh(i)) {
                let (worst, best) = p.outcomes();
                e.value = e.value.clamp(worst.value(), best.value());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::UniformEvaluator;
    use oware_egtb::{Table, solve_table};
    use oware_engine::Side;

    /// The tables of 0..=6 seeds, entry values included.
    fn small_tables() -> Arc<Tables> {
        let mut tables: Vec<Table> = Vec::new();
        for n in 0..=6 {
            let (t, _) = solve_table(n, &tables, &|_| {});
            tables.push(t);
        }
        Arc::new(Tables::from_tables(std::path::Path::new("mem"), tables))
    }

    #[test]
    fn table_results_replace_the_inner_value() {
        let eval = TableEvaluator::new(UniformEvaluator, small_tables());
        // The forced capture chain: South gets all 6 seeds, 21 + 6 > 24 is a win. The grand
        // slam that fails: South gets none of 5, and 20 + 0 < 23 + 5 is a loss.
        let chain = [0, 0, 0, 0, 0, 2, 1, 2, 0, 0, 0, 1];
        let slam = [0, 0, 0, 0, 0, 2, 1, 2, 0, 0, 0, 0];
        let win = Position::from_parts(chain, [21, 21], Side::South).expect("valid");
        let loss = Position::from_parts(slam, [20, 23], Side::South).expect("valid");
        let far = Position::start();
        let mut out = [Evaluation {
            policy: [0.0; 6],
            value: 0.5,
        }; 3];
        eval.evaluate(&[win, loss, far], &mut out)
            .expect("evaluates");
        assert_eq!(out[0].value, 1.0);
        assert_eq!(out[1].value, -1.0);
        assert_eq!(
            out[2].value, 0.0,
            "beyond the tables the inner value stands"
        );
        assert_eq!(out[0].policy[5], 1.0);
    }

    /// A position whose result is open after some histories but decided by its entry value
    /// (nothing played since the last capture) gets the entry's result only when fresh.
    #[test]
    fn fresh_positions_take_the_entry_result() {
        let tables = small_tables();
        let found = (3..=6usize).find_map(|n| {
            let t = tables.table(n).expect("built");
            (0..t.len()).find_map(|index| {
                let board = oware_egtb::unrank(index, n).expect("in range");
                (0..=48 - n as u8).find_map(|south| {
                    let split = [south, 48 - n as u8 - south];
                    let pos = Position::from_parts(board, split, Side::South).ok()?;
                    let all = tables.probe(&pos)?;
                    let entry = tables.probe_with(&pos, true)?;
                    match (all.outcome(), entry.outcome()) {
                        (None, Some(o)) if o.value() != 0.0 => Some((pos, o)),
                        _ => None,
                    }
                })
            })
        });
        let (pos, outcome) =
            found.expect("some entry value decides what every history leaves open");
        let eval = TableEvaluator::new(UniformEvaluator, Arc::clone(&tables));
        let blank = Evaluation {
            policy: [0.0; 6],
            value: 0.0,
        };
        let mut out = [blank; 2];
        eval.evaluate_fresh(&[pos, pos], &[true, false], &mut out)
            .expect("evaluates");
        assert_eq!(out[0].value, outcome.value(), "fresh: the entry's result");
        assert_eq!(
            out[1].value, 0.0,
            "not fresh: the open interval keeps the inner value"
        );
        let mut plain = [blank];
        eval.evaluate(&[pos], &mut plain).expect("evaluates");
        assert_eq!(
            plain[0].value, 0.0,
            "evaluate treats every position as not fresh"
        );
    }
}
