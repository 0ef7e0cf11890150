//! The search core: grids, moves, the indexed heap, resumable A* and jump
//! point search, the flood and the MovingAI reader. Nothing in this folder
//! uses Bevy, so a benchmark, a test or a game's own system can drive it
//! alone:
//!
//! ```
//! use bevy_frontier::core::{Cell, NavGrid, Search, SearchConfig, SearchStatus};
//!
//! let mut grid = NavGrid::new(64, 64).unwrap();
//! grid.fill_rect(Cell::new(32, 0), Cell::new(32, 60), NavGrid::BLOCKED).unwrap();
//!
//! let mut search =
//!     Search::new(&grid, Cell::new(0, 0), Cell::new(63, 0), SearchConfig::default()).unwrap();
//! // At most 256 expansions per frame, until the search ends.
//! while search.step(&grid, 256) == SearchStatus::Running {}
//! assert_eq!(search.status(), SearchStatus::Found);
//! ```
//!
//! The ECS side sees the core through two impls that live with the maps
//! (`bevy_frontier::maps`): [`NavGrid`] is a `Component` and [`Cell`] is
//! `Reflect`.
//!
//! | module | holds |
//! |---|---|
//! | [`grid`] | [`NavGrid`]: costs, walls, regions, walk bitmaps, clearance, the journal of edits; [`Cell`] |
//! | [`size_class`] | [`SizeClass`]: the grid as a unit of `k × k` cells sees it |
//! | [`classes`] | [`MovementClasses`]: terrain types and what each class of unit pays for them; [`UnitKind`]: a unit's class and size |
//! | [`moves`] | the move table, fixed-point move costs and the octile distance |
//! | [`heap`] | the indexed binary heap ([`OpenList`], [`IndexedHeap`]) |
//! | [`search`] | [`Search`]: resumable A*, a jump point search on uniform-cost maps; [`find_path`] |
//! | [`flood`] | [`Flood`]: a resumable Dijkstra from one cell to many |
//! | [`coarse`] | [`CoarseGraph`]: clusters and super-clusters, their entrances and the costs between them; [`CoarseRoute`]: a route over them refined to cells, a budget at a time |
//! | [`movingai`] | reader for MovingAI `.map` and `.scen` benchmark files |
//!
//! Searches and floods keep their per-cell records in a [`Scratch`] (16
//! bytes a cell, reset in O(1)), reused through a [`ScratchPool`].

pub mod classes;
pub mod coarse;
pub mod flood;
pub mod grid;
pub mod heap;
mod jump;
mod layer;
pub mod moves;
pub mod movingai;
mod regions;
mod scratch;
pub mod search;
#[cfg(feature = "serialize")]
pub(crate) mod serial;
pub mod size_class;
mod walk_bits;

pub use classes::{ClassError, ClassId, MAX_CLASSES, MovementClasses, Terrain, UnitKind};
pub use coarse::{BuiltPart, CoarseGraph, CoarseRoute, GraphBuild, RouteStatus, RouteWork};
pub use flood::{Flood, FloodDirection};
pub use grid::{Cell, GridChanges, GridError, NavGrid, Neighborhood};
pub use heap::{IndexedHeap, OpenList};
pub use movingai::{MovingAiMap, ParseError, Scenario};
pub use scratch::{Scratch, ScratchPool};
pub use search::{Path, Search, SearchConfig, SearchError, SearchStatus, find_path};
pub use size_class::{MAX_UNIT_SIZE, SizeClass};
