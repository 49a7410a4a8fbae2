//! Players built from spec strings: the one builder lives in `oware_trainer::players`, since a
//! network player needs the model crate.

pub use oware_trainer::players::{PlayerBuilder, build_player_from_str};
