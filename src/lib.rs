#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

pub mod grid;
pub mod heap;
pub mod movingai;
pub mod search;

/// The types most users need.
pub mod prelude {
    pub use crate::grid::{Cell, GridError, NavGrid, Neighborhood};
    pub use crate::movingai::{MovingAiMap, ParseError, Scenario};
    pub use crate::search::{
        Path, Scratch, ScratchPool, Search, SearchConfig, SearchError, SearchStatus, find_path,
    };
}
