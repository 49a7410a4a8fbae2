//! Table files: a 72-byte header, then one code per position in index order (the interval
//! valid after every history), then, from format version 4 on, one entry code per position in
//! index order (the interval of the value after an empty history; see the crate docs).
//!
//! | bytes  | field                                                                |
//! |--------|----------------------------------------------------------------------|
//! | 0..8   | magic `OWAREGTB`                                                     |
//! | 8..12  | format version, u32 little-endian ([`FORMAT_VERSION`])               |
//! | 12..44 | rules and meaning of the values, ASCII, zero-padded ([`RULES`])      |
//! | 44..48 | seeds on the board, u32                                              |
//! | 48..56 | positions, u64 (`C(n + 11, 11)`)                                     |
//! | 56..64 | checksum of all the codes after the header, u64 ([`oware_engine::checksum::checksum`], FNV-1a) |
//! | 64..72 | checksum of bytes 0..64, u64                                         |
//!
//! Files are written with [`oware_engine::atomic_file::write_atomic_with`], so a crash leaves the old file
//! or the new one. Reading checks every field, the length and both checksums, then every code;
//! each failure is an error that names the file. Files of version 3 (no entry codes) are
//! still read, as tables without entry values; a build replaces them.

use super::index::{MAX_TABLE_SEEDS, table_len};
use super::table::{Table, TableError};
use oware_engine::checksum::checksum;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The file format's version. 4: the codes of version 3 (an interval valid for every
/// history), then an entry code per position (the value after an empty history). Version 3
/// tables are solved component by component; version 2 ones are looser and not read.
pub const FORMAT_VERSION: u32 = 4;
/// The oldest format version still read: version 3, without entry codes.
pub const OLDEST_READ_VERSION: u32 = 3;
/// The rules the tables are built for and what their values mean: Abapa (captures of 2 and 3
/// chained backwards, grand slam cancelled, must feed, no move and repetition end the game
/// with each side taking its row), values bounded over all histories, then entry values.
pub const RULES: &str = "abapa;rep=own-rows;all+entry";
/// What version 3 files carry in the rules field.
const RULES_V3: &str = "abapa;rep=own-rows;all-histories";
/// The header's length in bytes.
pub const HEADER_LEN: usize = 72;
const MAGIC: &[u8; 8] = b"OWAREGTB";

/// The file name of the table of `n` seeds: `oware-NN.egtb`.
pub fn file_name(n: usize) -> String {
    format!("oware-{n:02}.egtb")
}

/// The path of the table of `n` seeds in `dir`.
pub fn table_path(dir: &Path, n: usize) -> PathBuf {
    dir.join(file_name(n))
}

/// What is wrong with a table file.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// The file does not exist.
    #[error("{}: no such table file (build it with `oware egtb build`)", path.display())]
    Missing {
        /// The file.
        path: PathBuf,
    },
    /// Reading or writing failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What happened.
        source: io::Error,
    },
    /// The file is an intact table of an older format version, without entry values: it is
    /// read (see [`read_table`]) but a build replaces it.
    #[error("{}: format version {version}, without entry values: `oware egtb build` rebuilds it", path.display())]
    Outdated {
        /// The file.
        path: PathBuf,
        /// Its format version.
        version: u32,
    },
    /// The file's content is not the table it should be.
    #[error("{}: {reason}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
}

impl FileError {
    /// Whether the file is simply not there (as opposed to unreadable or damaged).
    pub fn is_missing(&self) -> bool {
        matches!(self, FileError::Missing { .. })
    }
}

/// The header of a file of `version` (3 or 4) with `positions` positions and `data` after it.
fn header_of(version: u32, n: usize, positions: u64, data: &[u8]) -> [u8; HEADER_LEN] {
    let rules = if version == 3 { RULES_V3 } else { RULES };
    let mut h = [0u8; HEADER_LEN];
    h[..8].copy_from_slice(MAGIC);
    h[8..12].copy_from_slice(&version.to_le_bytes());
    h[12..12 + rules.len()].copy_from_slice(rules.as_bytes());
    h[44..48].copy_from_slice(&(n as u32).to_le_bytes());
    h[48..56].copy_from_slice(&positions.to_le_bytes());
    h[56..64].copy_from_slice(&checksum(data).to_le_bytes());
    let hc = checksum(&h[..64]);
    h[64..72].copy_from_slice(&hc.to_le_bytes());
    h
}

/// The file's bytes after the header: the codes, then the entry codes when there are any.
fn body(table: &Table) -> Vec<u8> {
    let mut data = table.codes().to_vec();
    if let Some(e) = table.entry_codes() {
        data.extend_from_slice(e);
    }
    data
}

/// Writes `table` into `dir` (atomically) and returns the file's path: a version 4 file when
/// the table has entry values, else one of version 3 (what a table without them was).
pub fn write_table(dir: &Path, table: &Table) -> Result<PathBuf, FileError> {
    let n = table.seeds() as usize;
    let path = table_path(dir, n);
    let data = body(table);
    let version = if table.has_entries() {
        FORMAT_VERSION
    } else {
        OLDEST_READ_VERSION
    };
    let h = header_of(version, n, table.len(), &data);
    oware_engine::atomic_file::write_atomic_with(&path, |w: &mut dyn Write| {
        w.write_all(&h)?;
        w.write_all(&data)
    })
    .map_err(|e| FileError::Io {
        path: path.clone(),
        source: e.source,
    })?;
    Ok(path)
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(x)
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    let mut x = [0u8; 4];
    x.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(x)
}

/// Reads the table of `n` seeds from `dir`, checking everything.
pub fn read_table(dir: &Path, n: usize) -> Result<Table, FileError> {
    let path = table_path(dir, n);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(FileError::Missing { path }),
        Err(source) => return Err(FileError::Io { path, source }),
    };
    parse_table(&bytes, n).map_err(|reason| FileError::Invalid { path, reason })
}

/// Checks a table file's bytes and makes the table of `n` seeds from them.
fn parse_table(bytes: &[u8], n: usize) -> Result<Table, String> {
    if n > MAX_TABLE_SEEDS {
        return Err(format!("tables go up to {MAX_TABLE_SEEDS} seeds, not {n}"));
    }
    if bytes.len() < HEADER_LEN {
        return Err(format!(
            "truncated: {} bytes, shorter than the {HEADER_LEN}-byte header",
            bytes.len()
        ));
    }
    let h = &bytes[..HEADER_LEN];
    if &h[..8] != MAGIC {
        return Err("not an endgame table (wrong magic bytes)".to_string());
    }
    if checksum(&h[..64]) != u64_at(h, 64) {
        return Err("damaged header (checksum mismatch)".to_string());
    }
    let version = u32_at(h, 8);
    if !(OLDEST_READ_VERSION..=FORMAT_VERSION).contains(&version) {
        return Err(format!(
            "format version {version}, this program reads versions {OLDEST_READ_VERSION} to {FORMAT_VERSION}: rebuild the tables"
        ));
    }
    let expected_rules = if version == 3 { RULES_V3 } else { RULES };
    let rules_end = h[12..44].iter().position(|&b| b == 0).unwrap_or(32);
    let rules = String::from_utf8_lossy(&h[12..12 + rules_end]);
    if rules != expected_rules {
        return Err(format!(
            "built for rules '{rules}', this program uses '{expected_rules}': rebuild the tables"
        ));
    }
    let seeds = u32_at(h, 44) as usize;
    if seeds != n {
        return Err(format!("holds the table of {seeds} seeds, expected {n}"));
    }
    let mut c = [0u8; 8];
    c.copy_from_slice(&h[48..56]);
    let count = u64::from_le_bytes(c);
    let expected = table_len(n);
    if count != expected {
        return Err(format!(
            "says {count} positions, the table of {n} seeds has {expected}"
        ));
    }
    let data = &bytes[HEADER_LEN..];
    // Version 4 holds two codes per position.
    let per = if version >= 4 { 2 } else { 1 };
    let want = count * per;
    if (data.len() as u64) < want {
        return Err(format!(
            "truncated: {} of {want} bytes of codes present",
            data.len()
        ));
    }
    if data.len() as u64 > want {
        return Err(format!("{} bytes too long", data.len() as u64 - want));
    }
    if checksum(data) != u64_at(h, 56) {
        return Err("damaged (checksum of the values does not match)".to_string());
    }
    let (codes, entries) = data.split_at(count as usize);
    if version >= 4 {
        Table::with_entries(n, codes.to_vec(), entries.to_vec())
    } else {
        Table::new(n, codes.to_vec())
    }
    .map_err(|e: TableError| e.to_string())
}

/// The format version of the table file of `n` seeds in `dir`, read from its header alone
/// (`None` when the file is missing or too short to hold one).
pub fn file_version(dir: &Path, n: usize) -> Option<u32> {
    use std::io::Read;
    let mut f = std::fs::File::open(table_path(dir, n)).ok()?;
    let mut h = [0u8; 12];
    f.read_exact(&mut h).ok()?;
    (&h[..8] == MAGIC).then(|| u32_at(&h, 8))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bounds::Bounds;
    use crate::solve::solve_table;

    fn small_tables(max: u8) -> Vec<Table> {
        let mut tables = Vec::new();
        for n in 0..=max {
            let (t, _) = solve_table(n, &tables, &|_| {});
            tables.push(t);
        }
        tables
    }

    #[test]
    fn version_3_files_are_read_without_entries_and_entries_must_lie_inside() {
        let dir = tempfile::tempdir().expect("temp dir");
        let tables = small_tables(4);
        let t = &tables[4];
        assert!(t.has_entries());
        // A version 3 file: the all-history codes only.
        let old = Table::new(4, t.codes().to_vec()).expect("valid");
        let path = write_table(dir.path(), &old).expect("write");
        assert_eq!(file_version(dir.path(), 4), Some(3));
        let back = read_table(dir.path(), 4).expect("read v3");
        assert!(!back.has_entries());
        assert_eq!(back.codes(), t.codes());
        // The current version holds the entries.
        write_table(dir.path(), t).expect("write");
        assert_eq!(file_version(dir.path(), 4), Some(FORMAT_VERSION));
        assert_eq!(&read_table(dir.path(), 4).expect("read v4"), t);
        // An entry interval outside the all-history one is refused, checksum or not.
        let mut bytes = std::fs::read(&path).expect("read");
        let i = (0..t.len() as usize)
            .find(|&i| t.at(i as u64).lo > 0)
            .expect("a position securing something");
        let len = t.len() as usize;
        bytes[HEADER_LEN + len + i] = Bounds::exact(0).code();
        let h = header_of(FORMAT_VERSION, 4, t.len(), &bytes[HEADER_LEN..]);
        bytes[..HEADER_LEN].copy_from_slice(&h);
        std::fs::write(&path, &bytes).expect("write");
        let e = read_table(dir.path(), 4).expect_err("entry outside");
        assert!(e.to_string().contains("entry code"), "{e}");
    }

    #[test]
    fn tables_round_trip_through_files() {
        let dir = tempfile::tempdir().expect("temp dir");
        for t in small_tables(4) {
            let path = write_table(dir.path(), &t).expect("write");
            assert!(path.ends_with(file_name(t.seeds() as usize)));
            let back = read_table(dir.path(), t.seeds() as usize).expect("read");
            assert_eq!(back, t);
        }
    }

    #[test]
    fn missing_truncated_damaged_and_mismatched_files_are_errors_naming_the_file() {
        let dir = tempfile::tempdir().expect("temp dir");
        let tables = small_tables(3);
        let e = read_table(dir.path(), 3).expect_err("missing");
        assert!(
            e.is_missing() && e.to_string().contains("oware-03.egtb"),
            "{e}"
        );
        let path = write_table(dir.path(), &tables[3]).expect("write");
        let good = std::fs::read(&path).expect("read");
        let cases: Vec<(Vec<u8>, &str)> = vec![
            (good[..good.len() - 5].to_vec(), "truncated"),
            (good[..30].to_vec(), "truncated"),
            (
                {
                    let mut b = good.clone();
                    b[HEADER_LEN + 7] ^= 1;
                    b
                },
                "checksum",
            ),
            (
                {
                    let mut b = good.clone();
                    b[45] ^= 1;
                    b
                },
                "header",
            ),
            (
                {
                    let mut b = good.clone();
                    b.push(0);
                    b
                },
                "too long",
            ),
            (
                b"PK\x03\x04 something else entirely, long enough to hold a full header, and more."
                    .to_vec(),
                "magic",
            ),
        ];
        for (bytes, why) in cases {
            std::fs::write(&path, &bytes).expect("write");
            let e = read_table(dir.path(), 3).expect_err(why);
            let s = e.to_string();
            assert!(s.contains("oware-03.egtb") && s.contains(why), "{why}: {s}");
        }
        // The table of another seed count under this name.
        let other = write_table(dir.path(), &tables[2]).expect("write");
        std::fs::rename(&other, &path).expect("rename");
        let e = read_table(dir.path(), 3).expect_err("mismatch");
        assert!(e.to_string().contains("expected 3"), "{e}");
        // A valid checksum over an invalid code.
        let mut bad = good.clone();
        bad[HEADER_LEN] = 250;
        let fixed = header_of(FORMAT_VERSION, 3, table_len(3), &bad[HEADER_LEN..]);
        bad[..HEADER_LEN].copy_from_slice(&fixed);
        std::fs::write(&path, &bad).expect("write");
        let e = read_table(dir.path(), 3).expect_err("bad code");
        assert!(e.to_string().contains("invalid code 250"), "{e}");
    }
}
