//! Player specs: the one parser of the strings every subcommand uses to name a player
//! (`docs/players.md`), e.g. `random`, `alphabeta:depth=8`, `alphabeta:ms=200`,
//! `mcts:rollouts,sims=1000`, `mcts:model=runs/NAME,sims=400,batch=64`,
//! `mcts:model=runs/NAME,ms=100,root=gumbel`, `human`.
//!
//! This is data only: building the player is the job of whoever knows all kinds (the binary),
//! since MCTS and networks live in other crates.

use std::fmt;
use std::str::FromStr;

/// The valid forms, listed in every error.
pub const VALID_FORMS: &str = "random | alphabeta:depth=N | alphabeta:ms=N | \
alphabeta:depth=N,ms=M[,eval=classic|tuned|FILE][,tt_mb=N][,tm=spend|finish][,asp=on|off][,qdepth=N][,book=FILE] | mcts:rollouts[,sims=N][,ms=M][,c=C] | \
mcts:model=PATH[,sims=N][,ms=M][,batch=B][,c=C][,fpu=F][,root=puct|gumbel] | human; \
alphabeta and mcts:model take egtb=DIR";

/// The keys of a player spec, as `oware pit --help` (and the other match commands) list them.
pub const SPEC_KEYS_HELP: &str = "\
Player specs:
  random                      a uniformly random legal move
  alphabeta:depth=N           alpha-beta, N plies (1..=120)
  alphabeta:ms=N              alpha-beta, N ms per move (1..=86400000); with depth=, depth caps it
Other keys of alphabeta: (docs/alphabeta.md)
  eval=classic|tuned|FILE     evaluation weights: shipped sets or a weights file (default tuned)
  tt_mb=N                     transposition table in MiB (1..=4096, default 2)
  tm=spend|finish             spend the whole time per move (default) or the old early stop
  asp=on|off                  aspiration windows (default off)
  qdepth=N                    plies of captures searched past the horizon (0..=32, 0 off; default 8)
  book=FILE                   play the moves of an opening book file (oware book build)
  mcts:rollouts[,...]         MCTS with random rollouts (sims=, ms=, c=)
  mcts:model=PATH[,...]       MCTS with a checkpoint or a run directory's latest checkpoint
  human                       you, at the keyboard (oware play)
Keys of mcts:model= (each one left out keeps the search the checkpoint was trained with, its
run's [mcts] section, without self-play noise and temperature; older checkpoints: the defaults):
  sims=N                      simulations per move (1..=1000000)
  ms=N                        time per move in ms (1..=86400000): an anytime search (sims= caps it)
  batch=B                     leaves per evaluator call (1..=1024)
  c=C                         constant PUCT exploration factor (> 0)
  fpu=F                       first-play-urgency reduction (0..=2)
  root=puct|gumbel            the root algorithm
  egtb=DIR                    endgame tables correcting the network's values (also alphabeta)";

/// The simulations an `mcts:rollouts` spec gets when it names none. A `mcts:model=` spec
/// without `sims=` searches with the simulations its checkpoint was trained with.
pub const DEFAULT_MCTS_SIMS: u32 = 400;

use oware_engine::bounds::{MAX_BATCH, MAX_DEPTH, MAX_MILLIS, MAX_SIMS, MAX_TT_MB};
use oware_search::alphabeta::{MAX_QDEPTH, TimeUse};
use oware_search::mcts::RootAlgorithm;

/// The largest first-play-urgency reduction `fpu=` accepts (values are in [-1, 1], so a
/// reduction of 2 already makes every unvisited child the worst).
pub const MAX_FPU: f32 = 2.0;

/// A parsed player spec.
#[derive(Clone, Debug, PartialEq)]
pub enum PlayerSpec {
    /// `random`: a uniformly random legal move.
    Random,
    /// `alphabeta:depth=N`, `alphabeta:ms=N` or both (the depth caps a timed search).
    AlphaBeta {
        /// Depth in plies.
        depth: Option<u32>,
        /// Time per move in milliseconds.
        millis: Option<u64>,
        /// Endgame tables to probe (`egtb=DIR`).
        egtb: Option<String>,
        /// Evaluation weights (`eval=classic|tuned|FILE`); `None`: the default (tuned).
        eval: Option<String>,
        /// Transposition table size in MiB (`tt_mb=N`).
        tt_mb: Option<u32>,
        /// How a timed search spends its time (`tm=spend|finish`).
        tm: Option<TimeUse>,
        /// Aspiration windows (`asp=on|off`).
        asp: Option<bool>,
        /// Plies of quiescence over captures (`qdepth=N`, 0 off).
        qdepth: Option<u32>,
        /// The opening book (`book=FILE`).
        book: Option<String>,
    },
    /// `mcts:...`: Monte Carlo tree search.
    Mcts(MctsSpec),
    /// `human`: moves typed by a person (interactive commands only).
    Human,
}

/// What judges leaves in an MCTS player.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum MctsEvaluator {
    /// `rollouts`: random playouts, no network.
    #[default]
    Rollouts,
    /// `model=PATH`: a checkpoint, or a run directory whose latest checkpoint is used.
    Model(String),
}

/// The options of an `mcts:` spec. Each option left out (`None`) keeps the setting the player
/// would have without it: a network player's checkpoint's own search settings (see
/// `oware_players::play_mcts_config`), or the rollout player's defaults.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct MctsSpec {
    /// Rollouts or a model.
    pub evaluator: MctsEvaluator,
    /// Simulations per move (`sims=N`), if given.
    pub sims: Option<u32>,
    /// Time per move in milliseconds (`ms=N`), if given: an anytime search stopped by the clock
    /// (and `sims=`, when both are given, caps it).
    pub millis: Option<u64>,
    /// Positions per evaluation batch (`batch=B`), if given.
    pub batch: Option<u32>,
    /// The exploration constant (`c=X`), if given.
    pub c: Option<f32>,
    /// The first-play-urgency reduction (`fpu=X`, model only), if given.
    pub fpu: Option<f32>,
    /// The root algorithm (`root=puct|gumbel`, model only), if given.
    pub root: Option<RootAlgorithm>,
    /// Endgame tables whose values correct the evaluator's (`egtb=DIR`, with a model only).
    pub egtb: Option<String>,
}

/// A spec string that is not a valid player.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid player spec '{spec}': {reason}; valid forms: {VALID_FORMS}")]
pub struct SpecError {
    /// The spec as given.
    pub spec: String,
    /// What is wrong with it.
    pub reason: String,
}

impl PlayerSpec {
    /// The kind: `random`, `alphabeta`, `mcts` or `human`.
    pub const fn kind(&self) -> &'static str {
        match self {
            PlayerSpec::Random => "random",
            PlayerSpec::AlphaBeta { .. } => "alphabeta",
            PlayerSpec::Mcts(_) => "mcts",
            PlayerSpec::Human => "human",
        }
    }
}

fn parse_num<T>(key: &str, value: &str, min: T, max: T) -> Result<T, String>
where
    T: FromStr + PartialOrd + fmt::Display + Copy,
{
    match value.parse::<T>() {
        Ok(v) if v >= min && v <= max => Ok(v),
        Ok(_) => Err(format!("{key}={value} is out of range {min}..={max}")),
        Err(_) => Err(format!("{key}={value} is not a number")),
    }
}

/// Splits `key=value`; a bare word gives an empty value and `false`.
fn split_option(item: &str) -> (&str, &str, bool) {
    match item.split_once('=') {
        Some((k, v)) => (k.trim(), v.trim(), true),
        None => (item.trim(), "", false),
    }
}

fn set_once<T>(slot: &mut Option<T>, key: &str, value: T) -> Result<(), String> {
    if slot.is_some() {
        return Err(format!("{key} is given twice"));
    }
    *slot = Some(value);
    Ok(())
}

/// An `egtb=DIR` option's directory.
fn parse_egtb(slot: &mut Option<String>, v: &str) -> Result<(), String> {
    if v.is_empty() {
        return Err("egtb needs a directory: egtb=DIR".to_string());
    }
    set_once(slot, "egtb", v.to_string())
}

fn parse_alphabeta(options: &str) -> Result<PlayerSpec, String> {
    let mut depth = None;
    let mut millis = None;
    let mut egtb = None;
    let mut eval = None;
    let mut tt_mb = None;
    let mut tm = None;
    let mut asp = None;
    let mut qdepth = None;
    let mut book = None;
    for item in options.split(',') {
        match split_option(item) {
            ("egtb", v, true) => parse_egtb(&mut egtb, v)?,
            ("depth", v, true) => {
                set_once(&mut depth, "depth", parse_num("depth", v, 1, MAX_DEPTH)?)?
            }
            ("ms", v, true) => set_once(&mut millis, "ms", parse_num("ms", v, 1, MAX_MILLIS)?)?,
            ("eval", "", true) => {
                return Err("eval needs classic, tuned or a weights file: eval=FILE".to_string());
            }
            ("eval", v, true) => set_once(&mut eval, "eval", v.to_string())?,
            ("tt_mb", v, true) => {
                set_once(&mut tt_mb, "tt_mb", parse_num("tt_mb", v, 1, MAX_TT_MB)?)?
            }
            ("tm", "spend", true) => set_once(&mut tm, "tm", TimeUse::Spend)?,
            ("tm", "finish", true) => set_once(&mut tm, "tm", TimeUse::Finish)?,
            ("tm", v, true) => {
                return Err(format!("tm={v} is not a time manager (spend or finish)"));
            }
            ("asp", "on", true) => set_once(&mut asp, "asp", true)?,
            ("asp", "off", true) => set_once(&mut asp, "asp", false)?,
            ("asp", v, true) => return Err(format!("asp={v} must be on or off")),
            ("qdepth", v, true) => set_once(
                &mut qdepth,
                "qdepth",
                parse_num("qdepth", v, 0, MAX_QDEPTH)?,
            )?,
            ("book", "", true) => {
                return Err("book needs a book file: book=FILE".to_string());
            }
            ("book", v, true) => set_once(&mut book, "book", v.to_string())?,
            ("", _, _) => return Err("empty option".to_string()),
            (k, _, true) => {
                return Err(format!(
                    "unknown alphabeta option '{k}' (expected depth, ms, eval, tt_mb, tm, asp, qdepth, book or egtb)"
                ));
            }
            (k, _, false) => return Err(format!("alphabeta option '{k}' needs a value")),
        }
    }
    Ok(PlayerSpec::AlphaBeta {
        depth,
        millis,
        egtb,
        eval,
        tt_mb,
        tm,
        asp,
        qdepth,
        book,
    })
}

fn parse_mcts(options: &str) -> Result<PlayerSpec, String> {
    let mut evaluator = None;
    let mut sims = None;
    let mut batch = None;
    let mut c = None;
    let mut millis = None;
    let mut fpu = None;
    let mut root = None;
    let mut egtb = None;
    for item in options.split(',') {
        match split_option(item) {
            ("egtb", v, true) => parse_egtb(&mut egtb, v)?,
            ("ms", v, true) => set_once(&mut millis, "ms", parse_num("ms", v, 1, MAX_MILLIS)?)?,
            ("fpu", v, true) => set_once(&mut fpu, "fpu", parse_num("fpu", v, 0.0, MAX_FPU)?)?,
            ("root", "puct", true) => set_once(&mut root, "root", RootAlgorithm::Puct)?,
            ("root", "gumbel", true) => set_once(&mut root, "root", RootAlgorithm::Gumbel)?,
            ("root", v, true) => {
                return Err(format!("root={v} is not a root algorithm (puct or gumbel)"));
            }
            ("rollouts", "", false) => {
                set_once(&mut evaluator, "rollouts/model", MctsEvaluator::Rollouts)?
            }
            ("model", v, true) if !v.is_empty() => set_once(
                &mut evaluator,
                "rollouts/model",
                MctsEvaluator::Model(v.to_string()),
            )?,
            ("model", _, _) => return Err("model needs a path: model=PATH".to_string()),
            ("sims", v, true) => set_once(&mut sims, "sims", parse_num("sims", v, 1, MAX_SIMS)?)?,
            ("batch", v, true) => {
                set_once(&mut batch, "batch", parse_num("batch", v, 1, MAX_BATCH)?)?
            }
            ("c", v, true) => set_once(&mut c, "c", parse_num("c", v, f32::MIN_POSITIVE, 1e6)?)?,
            ("", _, _) => return Err("empty option".to_string()),
            (k, _, _) => {
                return Err(format!(
                    "unknown mcts option '{k}' (expected rollouts, model=PATH, sims, ms, batch, c, fpu, root or egtb)"
                ));
            }
        }
    }
    let evaluator = evaluator.ok_or_else(|| "mcts needs 'rollouts' or 'model=PATH'".to_string())?;
    if egtb.is_some() && evaluator == MctsEvaluator::Rollouts {
        return Err("egtb=DIR corrects a network's values: it needs model=PATH".to_string());
    }
    if evaluator == MctsEvaluator::Rollouts && (fpu.is_some() || root.is_some()) {
        return Err("fpu= and root= set a network's search: they need model=PATH".to_string());
    }
    Ok(PlayerSpec::Mcts(MctsSpec {
        evaluator,
        sims,
        millis,
        batch,
        c,
        fpu,
        root,
        egtb,
    }))
}

impl FromStr for PlayerSpec {
    type Err = SpecError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = |reason: String| SpecError {
            spec: s.to_string(),
            reason,
        };
        let text = s.trim();
        let (kind, options) = match text.split_once(':') {
            Some((k, o)) => (k.trim(), Some(o)),
            None => (text, None),
        };
        match (kind, options) {
            ("random", None) => Ok(PlayerSpec::Random),
            ("human", None) => Ok(PlayerSpec::Human),
            ("random" | "human", Some(_)) => Err(err(format!("{kind} takes no options"))),
            ("alphabeta", Some(o)) => parse_alphabeta(o).map_err(err),
            ("alphabeta", None) => Err(err("alphabeta needs depth=N or ms=N".to_string())),
            ("mcts", Some(o)) => parse_mcts(o).map_err(err),
            ("mcts", None) => Err(err("mcts needs 'rollouts' or 'model=PATH'".to_string())),
            ("", _) => Err(err("the spec is empty".to_string())),
            (k, _) => Err(err(format!("unknown player kind '{k}'"))),
        }
    }
}

impl fmt::Display for PlayerSpec {
    /// The canonical spec string; parsing it gives the same spec back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlayerSpec::Random => f.write_str("random"),
            PlayerSpec::Human => f.write_str("human"),
            PlayerSpec::AlphaBeta {
                depth,
                millis,
                egtb,
                eval,
                tt_mb,
                tm,
                asp,
                qdepth,
                book,
            } => {
                // The options given, in the canonical order, after a ':' and between ','.
                let mut options: Vec<String> = Vec::new();
                if let Some(d) = depth {
                    options.push(format!("depth={d}"));
                }
                if let Some(ms) = millis {
                    options.push(format!("ms={ms}"));
                }
                if let Some(e) = eval {
                    options.push(format!("eval={e}"));
                }
                if let Some(mb) = tt_mb {
                    options.push(format!("tt_mb={mb}"));
                }
                if let Some(tm) = tm {
                    options.push(format!("tm={}", tm.name()));
                }
                if let Some(asp) = asp {
                    options.push(format!("asp={}", if *asp { "on" } else { "off" }));
                }
                if let Some(q) = qdepth {
                    options.push(format!("qdepth={q}"));
                }
                if let Some(b) = book {
                    options.push(format!("book={b}"));
                }
                if let Some(dir) = egtb {
                    options.push(format!("egtb={dir}"));
                }
                f.write_str("alphabeta")?;
                if !options.is_empty() {
                    write!(f, ":{}", options.join(","))?;
                }
                Ok(())
            }
            PlayerSpec::Mcts(m) => {
                match &m.evaluator {
                    MctsEvaluator::Rollouts => f.write_str("mcts:rollouts")?,
                    MctsEvaluator::Model(path) => write!(f, "mcts:model={path}")?,
                }
                if let Some(s) = m.sims {
                    write!(f, ",sims={s}")?;
                }
                if let Some(ms) = m.millis {
                    write!(f, ",ms={ms}")?;
                }
                if let Some(b) = m.batch {
                    write!(f, ",batch={b}")?;
                }
                if let Some(c) = m.c {
                    write!(f, ",c={c}")?;
                }
                if let Some(fpu) = m.fpu {
                    write!(f, ",fpu={fpu}")?;
                }
                match m.root {
                    Some(RootAlgorithm::Puct) => f.write_str(",root=puct")?,
                    Some(RootAlgorithm::Gumbel) => f.write_str(",root=gumbel")?,
                    None => {}
                }
                if let Some(dir) = &m.egtb {
                    write!(f, ",egtb={dir}")?;
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> PlayerSpec {
        match s.parse() {
            Ok(p) => p,
            Err(e) => panic!("{s}: {e}"),
        }
    }

    #[test]
    fn parses_every_form() {
        assert_eq!(parse("random"), PlayerSpec::Random);
        assert_eq!(parse(" human "), PlayerSpec::Human);
        assert_eq!(
            parse("alphabeta:depth=8"),
            PlayerSpec::AlphaBeta {
                depth: Some(8),
                millis: None,
                egtb: None,
                eval: None,
                tt_mb: None,
                tm: None,
                asp: None,
                qdepth: None,
                book: None,
            }
        );
        assert_eq!(
            parse("alphabeta:ms=200"),
            PlayerSpec::AlphaBeta {
                depth: None,
                millis: Some(200),
                egtb: None,
                eval: None,
                tt_mb: None,
                tm: None,
                asp: None,
                qdepth: None,
                book: None,
            }
        );
        assert_eq!(
            parse("mcts:rollouts,sims=1000"),
            PlayerSpec::Mcts(MctsSpec {
                evaluator: MctsEvaluator::Rollouts,
                sims: Some(1000),
                ..MctsSpec::default()
            })
        );
        assert_eq!(
            parse("mcts:model=runs/x y,sims=400,batch=64,c=1.5"),
            PlayerSpec::Mcts(MctsSpec {
                evaluator: MctsEvaluator::Model("runs/x y".to_string()),
                sims: Some(400),
                batch: Some(64),
                c: Some(1.5),
                ..MctsSpec::default()
            })
        );
        assert_eq!(
            parse("mcts:model=net,root=gumbel,fpu=0.5,ms=100"),
            PlayerSpec::Mcts(MctsSpec {
                evaluator: MctsEvaluator::Model("net".to_string()),
                millis: Some(100),
                fpu: Some(0.5),
                root: Some(RootAlgorithm::Gumbel),
                ..MctsSpec::default()
            })
        );
        // Left-out options stay unset: the builder fills them in.
        assert_eq!(parse("mcts:rollouts").to_string(), "mcts:rollouts");
    }

    #[test]
    fn display_round_trips() {
        for s in [
            "random",
            "human",
            "alphabeta:depth=8",
            "alphabeta:ms=200",
            "alphabeta:depth=12,ms=500",
            "mcts:rollouts,sims=1000",
            "mcts:rollouts,sims=50,c=1.4",
            "mcts:model=runs/NAME,sims=400",
            "mcts:model=runs/a/checkpoints/step-0000100,sims=20,batch=8,c=2",
            "alphabeta:depth=8,egtb=tables/16",
            "alphabeta:ms=50,egtb=tb",
            "alphabeta:ms=100,eval=classic,tt_mb=64,tm=finish,asp=on,egtb=tb",
            "alphabeta:depth=6,eval=models/alphabeta/eval-tuned.txt",
            "alphabeta:ms=10,tm=spend,asp=off",
            "alphabeta:ms=20,qdepth=0",
            "alphabeta:depth=6,asp=on,qdepth=12,book=b.txt,egtb=tb",
            "alphabeta:ms=5,book=models/alphabeta/book.txt",
            "mcts:model=net,sims=400,egtb=tb",
            "mcts:model=net",
            "mcts:model=net,ms=100",
            "mcts:rollouts,ms=20",
            "mcts:model=net,sims=800,ms=250,batch=16,c=1.25,fpu=0,root=gumbel",
            "mcts:model=net,fpu=0.3,root=puct,egtb=tb",
        ] {
            let p = parse(s);
            assert_eq!(p.to_string(), s);
            assert_eq!(parse(&p.to_string()), p);
        }
        // Order of options does not matter; the canonical form is printed.
        assert_eq!(
            parse("alphabeta:ms=5,depth=3").to_string(),
            "alphabeta:depth=3,ms=5"
        );
        assert_eq!(
            parse("mcts:sims=9,rollouts").to_string(),
            "mcts:rollouts,sims=9"
        );
    }

    #[test]
    fn bad_specs_say_why_and_list_the_forms() {
        for (s, why) in [
            ("", "empty"),
            ("minimax:depth=3", "unknown player kind 'minimax'"),
            ("alphabeta", "needs depth=N or ms=N"),
            ("alphabeta:depth=x", "depth=x is not a number"),
            ("alphabeta:depth=0", "out of range"),
            ("alphabeta:depth=-3", "not a number"),
            ("alphabeta:depth=4,depth=5", "twice"),
            ("alphabeta:nodes=5", "unknown alphabeta option 'nodes'"),
            ("alphabeta:depth", "needs a value"),
            ("alphabeta:depth=3,", "empty option"),
            ("random:fast", "takes no options"),
            ("mcts:sims=3", "needs 'rollouts' or 'model=PATH'"),
            ("mcts", "needs 'rollouts'"),
            ("mcts:rollouts,sims=lots", "sims=lots is not a number"),
            ("mcts:rollouts,temp=1", "unknown mcts option 'temp'"),
            ("mcts:rollouts,model=x", "twice"),
            ("mcts:model=,sims=3", "needs a path"),
            ("mcts:rollouts,c=-1", "out of range"),
            ("mcts:rollouts,sims=1000001", "out of range 1..=1000000"),
            ("mcts:rollouts,batch=1025", "out of range 1..=1024"),
            ("alphabeta:depth=121", "out of range 1..=120"),
            ("alphabeta:ms=86400001", "out of range 1..=86400000"),
            ("alphabeta:depth=4,egtb=", "egtb needs a directory"),
            ("alphabeta:depth=4,egtb=a,egtb=b", "twice"),
            (
                "alphabeta:depth=4,eval=",
                "eval needs classic, tuned or a weights file",
            ),
            ("alphabeta:depth=4,eval=a,eval=b", "eval is given twice"),
            (
                "alphabeta:depth=4,tt_mb=0",
                "tt_mb=0 is out of range 1..=4096",
            ),
            ("alphabeta:depth=4,tt_mb=4097", "out of range 1..=4096"),
            ("alphabeta:depth=4,tt_mb=big", "tt_mb=big is not a number"),
            ("alphabeta:ms=4,tm=fast", "tm=fast is not a time manager"),
            ("alphabeta:ms=4,tm=spend,tm=finish", "tm is given twice"),
            ("alphabeta:ms=4,asp=yes", "asp=yes must be on or off"),
            (
                "alphabeta:ms=4,qdepth=33",
                "qdepth=33 is out of range 0..=32",
            ),
            ("alphabeta:ms=4,qdepth=on", "qdepth=on is not a number"),
            ("alphabeta:ms=4,qdepth=1,qdepth=2", "qdepth is given twice"),
            ("alphabeta:ms=4,book=", "book needs a book file"),
            ("alphabeta:ms=4,book=a,book=b", "book is given twice"),
            ("mcts:rollouts,egtb=tb", "it needs model=PATH"),
            (
                "mcts:model=n,root=alphazero",
                "root=alphazero is not a root algorithm",
            ),
            ("mcts:model=n,root=puct,root=gumbel", "twice"),
            ("mcts:model=n,fpu=-0.1", "out of range"),
            ("mcts:model=n,fpu=3", "out of range"),
            ("mcts:model=n,fpu=x", "not a number"),
            ("mcts:model=n,ms=0", "out of range"),
            ("mcts:model=n,ms=86400001", "out of range"),
            ("mcts:model=n,ms=5,ms=6", "twice"),
            ("mcts:rollouts,root=gumbel", "they need model=PATH"),
            ("mcts:rollouts,fpu=0.2", "they need model=PATH"),
        ] {
            let e = match s.parse::<PlayerSpec>() {
                Ok(p) => panic!("{s} parsed as {p:?}"),
                Err(e) => e.to_string(),
            };
            assert!(e.contains(why), "{s}: {e}");
            assert!(
                e.contains("alphabeta:depth=N") && e.contains("mcts:rollouts"),
                "{e}"
            );
            assert!(e.contains(&format!("'{s}'")), "{e}");
        }
    }
}
