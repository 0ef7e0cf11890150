//! Turning a request into cells: where it starts and ends on its map, and
//! what to search between, or the answer when nothing needs searching.

use bevy::platform::collections::HashMap;

use bevy::prelude::*;

use super::super::request::{PathRequest, PathTarget, Unreachable};
use super::super::result::{InvalidReason, PathStatus};
use crate::core::{Cell, ClassId, SearchConfig, SizeClass, UnitKind};
use crate::maps::{CellLookup, MapView};
use crate::schedule::PathfindingSettings;

/// A request resolved to cells, waiting for or holding a search.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub(super) struct Job {
    pub(super) entity: Entity,
    /// Arrival order; also tells a live request from a replaced one.
    pub(super) ticket: u64,
    pub(super) priority: i32,
    pub(super) map: Entity,
    /// The unit's class and size: its cells are anchors of that size
    /// class, for that movement class.
    pub(super) kind: UnitKind,
    /// Where the request starts and ends as it was asked (the start: where
    /// the unit stood, unless the request names one), to find the cells
    /// again on a map that is replaced.
    pub(super) asked: (PathTarget, PathTarget),
    /// The cell the unit stood on (or the start asked for): every plan
    /// starts from it, so a unit in a wall always starts from the walkable
    /// cell nearest to itself.
    pub(super) origin: Cell,
    /// The cell searched from: `origin`, or the walkable cell nearest to it.
    pub(super) start: Cell,
    /// The cell asked for.
    pub(super) requested_goal: Cell,
    pub(super) policy: Unreachable,
    /// The cell searched for: the requested goal, or the reachable cell
    /// nearest to it.
    pub(super) goal: Cell,
    /// The grid version `start` and `goal` were chosen on.
    pub(super) grid_version: u64,
    pub(super) frame_requested: u64,
    /// Searched alone, never in a shared search (it left one that could
    /// not serve it).
    pub(super) alone: bool,
    /// A chase: its goal is where a unit it names stands. Many chasers of
    /// one unit share one search wherever they start, a few never (see
    /// [`policy::shares`](super::policy::shares)); its search stops at the
    /// chase's lookahead.
    pub(super) chase: bool,
    /// A chase's earlier legs in a row that led it no nearer its target:
    /// its lookahead is doubled as many times.
    pub(super) stalled_legs: u8,
    /// Still to get a quick path first, on a map with terrain costs (see
    /// [`PathfindingSettings::refine`](crate::schedule::PathfindingSettings::refine)).
    pub(super) quick: bool,
}

/// The cell of a start or goal, or why there is none.
pub(crate) fn locate(
    view: &MapView,
    target: PathTarget,
    is_goal: bool,
) -> Result<Cell, InvalidReason> {
    let (out_of_bounds, non_finite) = if is_goal {
        (InvalidReason::GoalOutOfBounds, InvalidReason::NonFiniteGoal)
    } else {
        (
            InvalidReason::StartOutOfBounds,
            InvalidReason::NonFiniteStart,
        )
    };
    match target {
        PathTarget::Cell(cell) if view.grid.in_bounds(cell) => Ok(view.anchor_of(cell)),
        PathTarget::Cell(_) => Err(out_of_bounds),
        PathTarget::World(position) => match view.world_to_cell(position) {
            CellLookup::Inside(cell) => Ok(cell),
            CellLookup::Outside(..) => Err(out_of_bounds),
            CellLookup::NonFinite => Err(non_finite),
        },
        // Read as where the entity stands before it comes here
        // ([`asked`]).
        PathTarget::Entity(_) => Err(InvalidReason::TargetLost),
    }
}

/// Where a request starts and ends, as asked: its start, or where its unit
/// stands; a unit named as either is read as where it stands now
/// (`position_of`).
pub(super) fn asked(
    request: &PathRequest,
    transform: Option<&Transform>,
    position_of: impl Fn(Entity) -> Option<Vec2>,
) -> Result<(PathTarget, PathTarget), InvalidReason> {
    let standing = |target: PathTarget| match target {
        PathTarget::Entity(entity) => position_of(entity)
            .map(PathTarget::World)
            .ok_or(InvalidReason::TargetLost),
        place => Ok(place),
    };
    let start = match request.start {
        Some(start) => standing(start)?,
        None => PathTarget::World(
            transform
                .ok_or(InvalidReason::NoStartPosition)?
                .translation
                .truncate(),
        ),
    };
    Ok((start, standing(request.goal)?))
}

/// The start and goal cells of a request on its map.
pub(super) fn locate_request(
    view: &MapView,
    (start, goal): (PathTarget, PathTarget),
) -> Result<(Cell, Cell), InvalidReason> {
    if !view.is_valid() {
        return Err(InvalidReason::BadMapPlacement);
    }
    Ok((locate(view, start, false)?, locate(view, goal, true)?))
}

/// `(map, grid version, unit kind, goal, start region)`.
pub(super) type NearestKey = (Entity, u64, UnitKind, Cell, u32);

/// Reachable cell nearest to an unreachable goal, per (map, grid version,
/// unit size, goal, start region): a group ordered onto a lake asks once.
pub(super) type NearestCache = HashMap<NearestKey, Option<Cell>>;

/// What one frame's planning finds and keeps for the rest of the frame
/// (emptied at its start, so it never outgrows one frame's orders).
#[derive(Default)]
pub(super) struct Plans {
    /// Reachable cell nearest to an unreachable goal, per (map, grid
    /// version, unit size, goal, start region): a group ordered onto a lake
    /// asks once.
    pub(super) nearest: NearestCache,
    /// Copies of maps made this frame for searches that stop following
    /// edits, shared by all of them.
    pub(super) copies: HashMap<(Entity, u64), std::sync::Arc<crate::core::NavGrid>>,
}

impl Plans {
    /// Empties them for a new frame.
    pub(super) fn clear(&mut self) {
        self.nearest.clear();
        self.copies.clear();
    }
}

/// Where a resolved request should search to, or its answer when no search
/// is needed.
pub(super) enum Plan {
    Search { start: Cell, goal: Cell },
    Answer(PathStatus, Vec<Cell>),
}

/// Chooses the cells to search between on the grid as it is now: a start
/// in a wall moves to the nearest walkable cell (a unit a wall went up
/// under must still be able to walk out), and an unreachable goal becomes
/// the nearest reachable cell or an `Unreachable` answer, without a node
/// expanded.
pub(super) fn plan(
    nearest: &mut NearestCache,
    map: Entity,
    grid: SizeClass<'_>,
    start: Cell,
    goal: Cell,
    policy: Unreachable,
) -> Plan {
    let start = if grid.is_walkable(start) {
        start
    } else {
        match grid.nearest_walkable((start.x as i64, start.y as i64), None) {
            Some(cell) => cell,
            None => {
                return Plan::Answer(PathStatus::Invalid(InvalidReason::NoWalkableStart), vec![]);
            }
        }
    };
    let goal = if grid.connected(start, goal) {
        goal
    } else if policy == Unreachable::Fail {
        return Plan::Answer(PathStatus::Unreachable, vec![]);
    } else {
        let Some(region) = grid.region(start) else {
            return Plan::Answer(PathStatus::Invalid(InvalidReason::NoWalkableStart), vec![]);
        };
        let key = (map, grid.version(), grid.kind(), goal, region);
        let found = *nearest
            .entry(key)
            .or_insert_with(|| grid.nearest_walkable((goal.x as i64, goal.y as i64), Some(region)));
        match found {
            Some(cell) if cell == start => {
                return Plan::Answer(PathStatus::NearestReachable, vec![start]);
            }
            Some(cell) => cell,
            None => return Plan::Answer(PathStatus::Unreachable, vec![]),
        }
    };
    if start == goal {
        return Plan::Answer(PathStatus::Complete, vec![start]);
    }
    Plan::Search { start, goal }
}

/// What choosing a job's cells again on an edited map gave.
pub(super) enum Replan {
    /// Still a search, between the same cells as before.
    Same,
    /// Still a search, between other cells.
    Moved,
    /// No search needed any more: the answer.
    Answer(PathStatus, Vec<Cell>),
}

impl Job {
    /// The cell the unit stood on and the goal cell asked for, on its map
    /// as `view` shows it now: those the job was planned with, or, if the
    /// map was replaced since (cells of the old grid may mean other places,
    /// or none, on the new one), found again from the request as asked.
    fn cells_now(&self, view: &MapView) -> Result<(Cell, Cell), InvalidReason> {
        if view.grid.rebuilt_since(self.grid_version) {
            locate_request(view, self.asked)
        } else {
            Ok((self.origin, self.requested_goal))
        }
    }

    /// The cells the job would search between on its map as `view` shows
    /// it now, or its answer if it needs no search: what [`plan`] chooses
    /// from its cells now ([`Job::cells_now`]).
    pub(super) fn plan_now(&self, nearest: &mut NearestCache, view: &MapView) -> Plan {
        match self.cells_now(view) {
            Ok(cells) => self.plan_between(nearest, view, cells),
            Err(reason) => Plan::Answer(PathStatus::Invalid(reason), vec![]),
        }
    }

    /// What [`plan`] chooses for the job between `origin` and `goal` on its
    /// map as `view` shows it.
    fn plan_between(
        &self,
        nearest: &mut NearestCache,
        view: &MapView,
        (origin, goal): (Cell, Cell),
    ) -> Plan {
        plan(
            nearest,
            self.map,
            view.size_class(),
            origin,
            goal,
            self.policy,
        )
    }

    /// Chooses the job's cells again on its map as `view` shows it now, if
    /// it was planned on an older version (see [`Job::plan_now`]).
    pub(super) fn replan(&mut self, nearest: &mut NearestCache, view: &MapView) -> Replan {
        let grid = view.grid;
        if self.grid_version == grid.version() {
            return Replan::Same;
        }
        let (origin, goal) = match self.cells_now(view) {
            Ok(cells) => cells,
            Err(reason) => return Replan::Answer(PathStatus::Invalid(reason), vec![]),
        };
        (self.origin, self.requested_goal) = (origin, goal);
        match self.plan_between(nearest, view, (origin, goal)) {
            Plan::Answer(status, cells) => Replan::Answer(status, cells),
            Plan::Search { start, goal } => {
                self.grid_version = grid.version();
                let moved = (start, goal) != (self.start, self.goal);
                self.start = start;
                self.goal = goal;
                if moved { Replan::Moved } else { Replan::Same }
            }
        }
    }

    /// The status of a path found to the job's goal.
    pub(super) fn found_status(&self) -> PathStatus {
        if self.goal != self.requested_goal {
            PathStatus::NearestReachable
        } else {
            PathStatus::Complete
        }
    }

    /// The most expansions the job's search may spend under `settings`:
    /// the requests' cap, and a chase's lookahead.
    pub(super) fn expansion_cap(&self, settings: &PathfindingSettings) -> Option<u32> {
        // At least one expansion: a leg of a cell still leads on. Doubled
        // for each leg in a row that led nowhere (a wall between, longer
        // than the lookahead explores round): a chaser is never stuck.
        let lookahead = settings
            .chase_lookahead
            .filter(|_| self.chase)
            .map(|lookahead| {
                let doubled = u64::from(lookahead.max(1)) << self.stalled_legs.min(32);
                doubled.min(u64::from(u32::MAX)) as u32
            });
        [settings.max_expansions_per_request, lookahead]
            .into_iter()
            .flatten()
            .min()
    }
}

/// How searches run under `settings`.
pub(super) fn search_config(settings: &PathfindingSettings) -> SearchConfig {
    SearchConfig {
        heuristic_weight: settings.heuristic_weight,
        max_expansions: settings.max_expansions_per_request,
        jump_points: settings.jump_points,
        size: 1,
        class: ClassId::DEFAULT,
        ignore_costs: false,
    }
}

#[cfg(feature = "serialize")]
crate::remap::remap_fields!(Job { entity, map, asked });
