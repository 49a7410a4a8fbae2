//! The transposition table: a fixed-size array of two-entry buckets, keyed by a 64-bit hash of
//! the position. One slot of a bucket keeps the deepest result, the other the most recent.

use oware_engine::Move;

/// How a stored score relates to the true value of the position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// The score is exact.
    Exact,
    /// The true value is at least the score (a beta cut-off).
    Lower,
    /// The true value is at most the score (no move reached alpha).
    Upper,
}

/// One stored search result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Remaining depth the score was searched to.
    pub depth: u8,
    /// What kind of bound the score is.
    pub bound: Bound,
    /// The score, from the side to move, with win distances relative to this node.
    pub score: i16,
    /// The best (or refuting) move found, if any.
    pub best: Option<Move>,
    /// The search that stored the entry (a counter the searcher advances per search; it
    /// wraps after 65,536 searches).
    pub generation: u16,
}

const NO_MOVE: u64 = 0xFF;

#[derive(Clone, Copy, Default)]
struct Slot {
    key: u64,
    data: u64,
}

impl Slot {
    fn pack(e: Entry) -> u64 {
        let mv = e.best.map_or(NO_MOVE, |m| m.house() as u64);
        let bound = match e.bound {
            Bound::Exact => 1u64,
            Bound::Lower => 2,
            Bound::Upper => 3,
        };
        mv | (e.depth as u64) << 8
            | bound << 16
            | ((e.score as u16) as u64) << 24
            | (e.generation as u64) << 40
    }

    fn unpack(data: u64) -> Option<Entry> {
        let bound = match (data >> 16) & 0xFF {
            1 => Bound::Exact,
            2 => Bound::Lower,
            3 => Bound::Upper,
            _ => return None,
        };
        let mv = data & 0xFF;
        Some(Entry {
            depth: ((data >> 8) & 0xFF) as u8,
            bound,
            score: ((data >> 24) & 0xFFFF) as u16 as i16,
            generation: ((data >> 40) & 0xFFFF) as u16,
            best: if mv == NO_MOVE {
                None
            } else {
                Move::new(mv as usize)
            },
        })
    }

    fn depth(&self) -> u8 {
        ((self.data >> 8) & 0xFF) as u8
    }
}

/// A fixed-size transposition table. It allocates once, at construction.
pub struct TranspositionTable {
    slots: Vec<Slot>,
    mask: usize,
}

impl TranspositionTable {
    /// A table of about `megabytes` MiB (rounded down to a power of two, at least 64 KiB).
    pub fn new(megabytes: usize) -> TranspositionTable {
        let bytes = megabytes.clamp(0, 1 << 16) << 20;
        let wanted = (bytes / std::mem::size_of::<Slot>()).max(1 << 12);
        let buckets = (wanted / 2).next_power_of_two().max(1 << 11);
        let buckets = if buckets * 2 > wanted {
            buckets / 2
        } else {
            buckets
        };
        TranspositionTable {
            slots: vec![Slot::default(); buckets * 2],
            mask: buckets - 1,
        }
    }

    /// Forgets every entry.
    pub fn clear(&mut self) {
        self.slots.fill(Slot::default());
    }

    /// The number of entries the table holds.
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    #[inline]
    fn bucket(&self, hash: u64) -> usize {
        // A zero key marks an empty slot, so the stored key is never zero.
        ((hash >> 32) as usize & self.mask) * 2
    }

    #[inline]
    fn stored_key(hash: u64) -> u64 {
        hash | 1
    }

    /// The entry stored for `hash`, if any.
    #[inline]
    pub fn probe(&self, hash: u64) -> Option<Entry> {
        let b = self.bucket(hash);
        let key = Self::stored_key(hash);
        for slot in &self.slots[b..b + 2] {
            if slot.key == key {
                return Slot::unpack(slot.data);
            }
        }
        None
    }

    /// Stores an entry for `hash`. Replaces the same position's entry, else the depth-preferred
    /// slot when the new entry is at least as deep, else the always-replace slot.
    #[inline]
    pub fn store(&mut self, hash: u64, entry: Entry) {
        let b = self.bucket(hash);
        let key = Self::stored_key(hash);
        let data = Slot::pack(entry);
        let idx = if self.slots[b].key == key {
            b
        } else if self.slots[b + 1].key == key {
            // Keep one copy per position: move a deeper result to the deep slot when it fits.
            if entry.depth >= self.slots[b].depth() {
                self.slots[b + 1] = Slot::default();
                b
            } else {
                b + 1
            }
        } else if entry.depth >= self.slots[b].depth() || self.slots[b].key == 0 {
            // The old deep entry moves down to the always-replace slot.
            self.slots[b + 1] = self.slots[b];
            b
        } else {
            b + 1
        };
        self.slots[idx] = Slot { key, data };
    }
}

impl std::fmt::Debug for TranspositionTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TranspositionTable({} entries)", self.slots.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stores_and_probes_entries() {
        let mut tt = TranspositionTable::new(1);
        let e = Entry {
            depth: 7,
            bound: Bound::Lower,
            score: -1234,
            best: Move::new(9),
            generation: 65_535,
        };
        tt.store(0xDEAD_BEEF_0000_1234, e);
        assert_eq!(tt.probe(0xDEAD_BEEF_0000_1234), Some(e));
        assert_eq!(tt.probe(0xDEAD_BEEF_0000_1236), None);
        let none = Entry {
            depth: 0,
            bound: Bound::Exact,
            score: 30000,
            best: None,
            generation: 0,
        };
        tt.store(42 << 32, none);
        assert_eq!(tt.probe(42 << 32), Some(none));
        tt.clear();
        assert_eq!(tt.probe(0xDEAD_BEEF_0000_1234), None);
    }

    #[test]
    fn a_deep_entry_survives_a_shallow_collision() {
        let mut tt = TranspositionTable::new(1);
        let deep = Entry {
            depth: 10,
            bound: Bound::Exact,
            score: 5,
            best: None,
            generation: 3,
        };
        let shallow = Entry { depth: 1, ..deep };
        // Same bucket (same high bits), different keys.
        let (h1, h2, h3) = (7u64 << 32 | 2, 7u64 << 32 | 4, 7u64 << 32 | 8);
        tt.store(h1, deep);
        tt.store(h2, shallow);
        tt.store(h3, shallow);
        assert_eq!(tt.probe(h1), Some(deep));
        assert_eq!(tt.probe(h3), Some(shallow));
        assert!(tt.capacity() >= 4096);
    }
}
