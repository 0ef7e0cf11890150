#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

#[cfg(feature = "debug_draw")]
pub mod debug_draw;
pub mod flood;
pub mod grid;
pub mod group;
pub mod heap;
mod jump;
pub mod layout;
pub mod movement;
pub mod movingai;
pub mod plugin;
pub mod request;
mod scheduler;
pub mod search;
#[cfg(feature = "tilemap")]
pub mod tilemap;

pub use scheduler::{PathfindingQueue, PathfindingStats};

/// The types most users need.
pub mod prelude {
    #[cfg(feature = "debug_draw")]
    pub use crate::debug_draw::{DebugDraw, DebugDrawPlugin};
    pub use crate::flood::{Flood, FloodDirection};
    pub use crate::grid::{Cell, GridChanges, GridError, NavGrid, Neighborhood};
    pub use crate::group::{GroupMember, GroupMove, MoveGroup};
    pub use crate::layout::{CellLookup, GridLayout, MapView};
    pub use crate::movement::{Arrived, MovementPlugin, Mover, Route, Steering, UnitArrived};
    pub use crate::movingai::{MovingAiMap, ParseError, Scenario};
    pub use crate::plugin::{
        FrontierPlugins, PathfindingPlugin, PathfindingSettings, PathfindingSystems,
    };
    pub use crate::request::{
        InvalidReason, PathInvalidated, PathReady, PathReadyMessage, PathRequest, PathResult,
        PathStatus, PathTarget, Unreachable,
    };
    pub use crate::scheduler::{PathfindingQueue, PathfindingStats};
    pub use crate::search::{
        Path, Scratch, ScratchPool, Search, SearchConfig, SearchError, SearchStatus, find_path,
    };
    #[cfg(feature = "tilemap")]
    pub use crate::tilemap::{TileCost, TilemapNavPlugin};
}
