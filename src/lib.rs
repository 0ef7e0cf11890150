//! Pathfinding for real-time strategy games in Bevy that never stalls a
//! frame.
//!
//! A game adds [`FrontierPlugins`], puts a
//! [`PathRequest`](pathfinding::PathRequest) on a unit and gets a
//! [`PathResult`](pathfinding::PathResult) back. Searches are interruptible
//! A* (a jump point search on uniform-cost maps) run under a per-frame
//! budget of node expansions, with their state kept between frames; units
//! with a [`Mover`](movement::Mover) walk at once, on instinct, until their
//! path arrives; a [`GroupMove`](groups::GroupMove) moves many units on one
//! shared search.
//!
//! ```
//! use bevy::prelude::*;
//! use bevy_frontier::core::Cell;
//! use bevy_frontier::prelude::*;
//!
//! let mut app = App::new();
//! app.add_plugins((MinimalPlugins, FrontierPlugins::default()));
//! let mut grid = NavGrid::new(32, 32).unwrap();
//! grid.fill_rect(Cell::new(16, 0), Cell::new(16, 28), NavGrid::BLOCKED).unwrap();
//! app.world_mut().spawn((grid, Transform::default()));
//! let unit = app
//!     .world_mut()
//!     .spawn((Transform::from_xyz(2.0, 2.0, 0.0), PathRequest::new(Vec2::new(30.0, 2.0))))
//!     .id();
//! app.update();
//! let result = app.world().get::<PathResult>(unit).unwrap();
//! assert_eq!(result.status, PathStatus::Complete);
//! ```
//!
//! # Layers
//! Each layer uses only the ones above it in this list:
//!
//! | module | Bevy ECS? | holds |
//! |---|---|---|
//! | [`core`] | no | grid, clearance and size classes, moves and costs, heap, search, jump points, flood, MovingAI reader |
//! | [`checksum`] | yes | [`FrontierChecksum`](checksum::FrontierChecksum): each frame's hash, for lockstep games |
//! | [`ordinal`] | yes | [`Ordinal`](ordinal::Ordinal): the order the game gave units and requests in, which every tie follows |
//! | [`schedule`] | yes | [`FrontierSystems`](schedule::FrontierSystems), settings, the frame budget |
//! | [`maps`] | yes | layout, world ↔ cell, line of sight, the [`Maps`](maps::Maps) system param |
//! | [`pathfinding`] | yes | requests, the queue and its searches, results and their events |
//! | [`movement`] | yes | movers: instinct, routes, path following |
//! | [`groups`] | yes | group orders, shared routes, membership |
//! | `tilemap`, `debug`, `bake`, [`desync`], `save` | yes | bevy_ecs_tilemap sync (feature `tilemap`); the gizmo overlay (feature `debug_draw`); maps baked ahead and a game's save of the plugin's whole state (feature `serialize`); a frame's state as text, to find where two clients parted |
//!
//! [`guide`] has a recipe for each task a game does with the plugin.
//! `docs/architecture.md` in the repository follows one request and one
//! group order through these systems, frame by frame.
//!
//! # Features
//! - `tilemap` (default): `tilemap::TilemapNavPlugin` keeps a `NavGrid` on
//!   every square bevy_ecs_tilemap map.
//! - `debug_draw`: `debug::DebugDrawPlugin`, a gizmo overlay.
//! - `multi_threaded`: Bevy's multi-threaded task pools and executor (on in
//!   any game with Bevy's default features): search lanes, the crowd's
//!   parallel stages and coarse graph builds run on the task pools'
//!   threads, with the same results as without.
//! - `serialize`: `bake` (a grid and its coarse graphs baked ahead, as
//!   bytes and as `.navgrid` assets) and `save` (the plugin's whole state
//!   between two frames, for a game's save or a rejoining client, loaded
//!   back into a fresh app to go on bit for bit).
//! - `demo`: what the rendered examples need; nothing of the library.
#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "serialize")]
pub mod bake;
mod budget;
pub mod checksum;
mod clock;
pub mod core;
pub mod ordinal;
#[cfg(feature = "serialize")]
mod remap;
pub mod schedule;

pub mod maps;

pub mod pathfinding;

pub mod movement;

pub mod groups;

pub mod desync;
#[cfg(feature = "serialize")]
pub mod save;

#[cfg(feature = "debug_draw")]
pub mod debug;
#[cfg(feature = "tilemap")]
pub mod tilemap;

use bevy::app::PluginGroupBuilder;
use bevy::ecs::intern::Interned;
use bevy::ecs::schedule::ScheduleLabel;
use bevy::prelude::*;

/// Every bevy_frontier plugin, in one schedule: the schedule's sets and
/// budget ([`FrontierSchedulePlugin`](schedule::FrontierSchedulePlugin)),
/// [`PathfindingPlugin`](pathfinding::PathfindingPlugin),
/// [`MovementPlugin`](movement::MovementPlugin) with
/// [`PassagesPlugin`](movement::PassagesPlugin) (turns at one-lane
/// passages) and [`AvoidancePlugin`](movement::AvoidancePlugin) (bodies:
/// avoidance and separation), [`GroupsPlugin`](groups::GroupsPlugin) and,
/// with the `tilemap` feature, `tilemap::TilemapNavPlugin`. Any of them can
/// be switched off with `build().disable::<…>()`: a game with physics of
/// its own keeps paths and the velocities units would like, without
/// avoidance:
///
/// ```
/// use bevy::prelude::*;
/// use bevy_frontier::movement::AvoidancePlugin;
/// use bevy_frontier::prelude::*;
///
/// App::new().add_plugins((
///     MinimalPlugins,
///     FrontierPlugins::default().build().disable::<AvoidancePlugin>(),
/// ));
/// ```
///
/// The schedule defaults to `Update`; a lockstep game passes its own, and
/// every plugin of the group runs there in the same order:
///
/// ```
/// use bevy::prelude::*;
/// use bevy_frontier::prelude::*;
///
/// App::new().add_plugins((MinimalPlugins, FrontierPlugins::new(FixedUpdate)));
/// ```
pub struct FrontierPlugins {
    schedule: Interned<dyn ScheduleLabel>,
}

impl FrontierPlugins {
    /// Every plugin, running in `schedule`.
    pub fn new(schedule: impl ScheduleLabel) -> Self {
        Self {
            schedule: schedule.intern(),
        }
    }
}

impl Default for FrontierPlugins {
    fn default() -> Self {
        Self::new(Update)
    }
}

impl PluginGroup for FrontierPlugins {
    fn build(self) -> PluginGroupBuilder {
        let schedule = self.schedule;
        let group = PluginGroupBuilder::start::<Self>()
            .add(schedule::FrontierSchedulePlugin { schedule })
            .add(pathfinding::PathfindingPlugin { schedule })
            .add(movement::MovementPlugin { schedule })
            .add(movement::PassagesPlugin { schedule })
            .add(movement::AvoidancePlugin { schedule })
            .add(groups::GroupsPlugin { schedule });
        #[cfg(feature = "tilemap")]
        let group = group.add(tilemap::TilemapNavPlugin::new(schedule));
        group
    }
}

/// What a game touches every day: the plugins, the map (`NavGrid`, `Cell`,
/// `GridLayout`, `MovementClasses`, `Terrain`, `ClassId`), a unit's request,
/// size, movement class (`Footprint`, `MovementClass`, `UnitKind`) and
/// answer, how its order ended (`Arrived`, `Arrival`, `PathFailed`), its body
/// in a crowd (`Avoidance`, `CrowdSettings`), group orders and who is in
/// a group (`GroupMember`, `GroupMembers`), a map's coarse graphs
/// (`CoarseGraphs`, to bake while a level loads), the settings, the figures
/// of the last frame (`PathfindingStats`) and the lockstep checksum
/// (`FrontierChecksum`). Names
/// a game is likelier to have its own of (`Path`, `Route`, `Steering`, …)
/// stay in their modules; a game's own `Cell`, imported by name, wins over
/// this one.
pub mod prelude {
    pub use crate::FrontierPlugins;
    pub use crate::checksum::FrontierChecksum;
    pub use crate::core::{Cell, ClassId, MovementClasses, NavGrid, Terrain, UnitKind};
    #[cfg(feature = "debug_draw")]
    pub use crate::debug::{DebugDrawPlugin, FrontierGizmos};
    pub use crate::groups::{GroupMember, GroupMembers, GroupMove, GroupsPlugin};
    pub use crate::maps::GridLayout;
    pub use crate::movement::{
        Arrival, Arrived, Avoidance, CrowdSettings, MoveBlocked, MovementPlugin, Mover, Pursuit,
        TargetLost, UnitArrived,
    };
    pub use crate::pathfinding::{
        CoarseGraphs, Footprint, InvalidReason, MovementClass, PathFailed, PathInvalidated,
        PathReady, PathRequest, PathResult, PathStatus, PathTarget, PathfindingPlugin,
        PathfindingStats, Unreachable,
    };
    pub use crate::schedule::{FrontierSystems, PathfindingSettings};
    #[cfg(feature = "tilemap")]
    pub use crate::tilemap::{TileCost, TileTerrain, TilemapNavPlugin};
}

#[doc = include_str!("../docs/guide.md")]
pub mod guide {}

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
