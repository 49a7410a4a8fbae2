//! Building the tables of a directory, smallest first, keeping those already there.

use super::file::{FileError, OLDEST_READ_VERSION, read_table, table_path, write_table};
use super::index::{MAX_TABLE_SEEDS, table_len};
use super::solve::{SolveEvent, SolveOptions, SolveStats, solve_table_with};
use super::table::Table;
use std::path::{Path, PathBuf};

/// What a build reports while it works.
#[derive(Debug)]
pub enum BuildEvent<'a> {
    /// The table of `n` seeds was already in the directory and passed every check.
    Kept {
        /// Seeds.
        n: u8,
        /// Its positions.
        positions: u64,
    },
    /// The file of the table of `n` seeds was there but unusable or of an older format
    /// version (without entry values); it is built again.
    Replacing {
        /// Seeds.
        n: u8,
        /// Why the old file was not kept.
        error: &'a FileError,
    },
    /// Solving the table of `n` seeds begins.
    Started {
        /// Seeds.
        n: u8,
        /// Its positions.
        positions: u64,
    },
    /// Progress of the solver.
    Solve(SolveEvent),
    /// The table was solved and written.
    Written {
        /// Seeds.
        n: u8,
        /// The file.
        path: &'a Path,
        /// The solver's figures.
        stats: &'a SolveStats,
    },
}

/// One table of a build.
#[derive(Clone, Debug)]
pub struct TableReport {
    /// Seeds.
    pub n: u8,
    /// Positions.
    pub positions: u64,
    /// Positions with an exact value after every history.
    pub exact: u64,
    /// Positions with an exact entry value (after an empty history).
    pub entry_exact: u64,
    /// The file.
    pub path: PathBuf,
    /// The solver's figures; `None` when the table was kept.
    pub stats: Option<SolveStats>,
}

/// A build failed.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// More seeds than tables support.
    #[error("--max-seeds {0}: tables go up to {MAX_TABLE_SEEDS} seeds")]
    TooManySeeds(usize),
    /// The directory could not be made.
    #[error("creating the table directory {}: {source}", dir.display())]
    Dir {
        /// The directory.
        dir: PathBuf,
        /// What happened.
        source: std::io::Error,
    },
    /// A table file could not be written.
    #[error(transparent)]
    File(#[from] FileError),
}

/// [`build_tables_with`] with the default [`SolveOptions`].
pub fn build_tables(
    dir: &Path,
    max: usize,
    report: &(dyn Fn(BuildEvent<'_>) + Sync),
) -> Result<(Vec<TableReport>, Vec<Table>), BuildError> {
    build_tables_with(dir, max, &SolveOptions::default(), report)
}

/// Builds the tables of 0..=`max` seeds in `dir` (made if missing) on the current rayon pool.
/// A table whose file is present, of the current format version (with entry values) and
/// passes every check is kept; any other is solved (from the smaller ones, with `options`)
/// and written atomically. Returns one report per table and the tables.
pub fn build_tables_with(
    dir: &Path,
    max: usize,
    options: &SolveOptions,
    report: &(dyn Fn(BuildEvent<'_>) + Sync),
) -> Result<(Vec<TableReport>, Vec<Table>), BuildError> {
    if max > MAX_TABLE_SEEDS {
        return Err(BuildError::TooManySeeds(max));
    }
    std::fs::create_dir_all(dir).map_err(|source| BuildError::Dir {
        dir: dir.to_path_buf(),
        source,
    })?;
    let mut tables: Vec<Table> = Vec::with_capacity(max + 1);
    let mut reports = Vec::with_capacity(max + 1);
    for n in 0..=max {
        let positions = table_len(n);
        let nn = n as u8;
        match read_table(dir, n) {
            Ok(t) if !t.has_entries() => {
                let error = FileError::Outdated {
                    path: table_path(dir, n),
                    version: OLDEST_READ_VERSION,
                };
                report(BuildEvent::Replacing {
                    n: nn,
                    error: &error,
                });
            }
            Ok(t) => {
                report(BuildEvent::Kept { n: nn, positions });
                reports.push(TableReport {
                    n: nn,
                    positions,
                    exact: t.exact_count(),
                    entry_exact: t.entry_exact_count().unwrap_or(0),
                    path: table_path(dir, n),
                    stats: None,
                });
                tables.push(t);
                continue;
            }
            Err(e) if e.is_missing() => {}
            Err(e) => report(BuildEvent::Replacing { n: nn, error: &e }),
        }
        report(BuildEvent::Started { n: nn, positions });
        let (t, stats) = solve_table_with(nn, &tables, options, &|e| report(BuildEvent::Solve(e)));
        let path = write_table(dir, &t)?;
        report(BuildEvent::Written {
            n: nn,
            path: &path,
            stats: &stats,
        });
        reports.push(TableReport {
            n: nn,
            positions,
            exact: t.exact_count(),
            entry_exact: stats.entry_exact,
            path,
            stats: Some(stats),
        });
        tables.push(t);
    }
    Ok((reports, tables))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn a_build_keeps_good_tables_and_replaces_damaged_ones() {
        let dir = tempfile::tempdir().expect("temp dir");
        let sub = dir.path().join("tb");
        let (first, tables) = build_tables(&sub, 5, &|_| {}).expect("build");
        assert!(first.iter().all(|r| r.stats.is_some()));
        assert_eq!(tables.len(), 6);
        // Damage one file: the next build keeps the others and replaces it.
        let path = table_path(&sub, 4);
        let mut bytes = std::fs::read(&path).expect("read");
        let last = bytes.len() - 1;
        bytes[last] ^= 0x40;
        std::fs::write(&path, &bytes).expect("write");
        let events = Mutex::new(Vec::new());
        let (second, again) = build_tables(&sub, 6, &|e| {
            let tag = match e {
                BuildEvent::Kept { n, .. } => format!("kept {n}"),
                BuildEvent::Replacing { n, error } => format!("replacing {n}: {error}"),
                BuildEvent::Written { n, .. } => format!("written {n}"),
                _ => return,
            };
            events.lock().expect("lock").push(tag);
        })
        .expect("build");
        let events = events.into_inner().expect("lock");
        assert_eq!(&events[..4], ["kept 0", "kept 1", "kept 2", "kept 3"]);
        assert!(events[4].starts_with("replacing 4") && events[4].contains("oware-04.egtb"));
        assert_eq!(&events[5..], ["written 4", "kept 5", "written 6"]);
        assert_eq!(&again[..6], &tables[..]);
        assert!(second[4].stats.is_some() && second[5].stats.is_none());
        // A table of format version 3 (no entry values) is rebuilt.
        let old = Table::new(2, again[2].codes().to_vec()).expect("valid");
        write_table(&sub, &old).expect("write");
        let events = Mutex::new(Vec::new());
        let (_, third) = build_tables(&sub, 3, &|e| {
            if let BuildEvent::Replacing { n, error } = e {
                events.lock().expect("lock").push(format!("{n}: {error}"));
            }
        })
        .expect("build");
        let events = events.into_inner().expect("lock");
        assert_eq!(events.len(), 1, "{events:?}");
        assert!(events[0].starts_with("2: ") && events[0].contains("version 3"));
        assert_eq!(third[2], again[2]);
        assert!(matches!(
            build_tables(&sub, 22, &|_| {}),
            Err(BuildError::TooManySeeds(22))
        ));
    }
}
