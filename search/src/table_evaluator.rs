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
        for (pos, e) in positions.iter().zip(out.iter_mut()) {
            if let Some(p) = self.tables.probe(pos) {
                let (worst, best) = p.outcomes();
                e.value = e.value.clamp(worst.value(), best.value());
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::UniformEvaluator;
    use oware_egtb::{Table, solve_table};
    use oware_engine::Side;

    #[test]
    fn table_results_replace_the_inner_value() {
        let mut tables: Vec<Table> = Vec::new();
        for n in 0..=6 {
            let (t, _) = solve_table(n, &tables, &|_| {});
            tables.push(t);
        }
        let tables = Arc::new(Tables::from_tables(std::path::Path::new("mem"), tables));
        let eval = TableEvaluator::new(UniformEvaluator, tables);
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
}
