//! When bevy_frontier's systems run and how much they may spend: the
//! [`FrontierSystems`] sets, the [`PathfindingSettings`] and the
//! [`FrameBudget`] of node expansions every budgeted system draws from.
//!
//! Every plugin of [`FrontierPlugins`](crate::FrontierPlugins) adds its
//! systems to these sets in the one schedule the group was given, so a
//! lockstep game that runs everything in `FixedUpdate` gets the same order
//! as the default `Update`.

use std::time::Duration;

use bevy::ecs::change_detection::Tick;
use bevy::ecs::intern::Interned;
use bevy::ecs::schedule::ScheduleLabel;
use bevy::prelude::*;

pub use crate::budget::FrameBudget;

/// The phases of a frame of pathfinding, chained in this order in the
/// plugins' schedule. Order your own systems around them, for example
/// `.before(FrontierSystems::First)` to edit maps or give orders that are
/// served this frame, or `.after(FrontierSystems::Move)` to read where
/// units walked.
#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FrontierSystems {
    /// Empty; a hook for running before anything else here.
    First,
    /// The frame's [`FrameBudget`] is refilled; [`GroupMove`] orders become
    /// group entities searching their shared path, and groups no unit is
    /// left in are despawned (`GroupsPlugin`).
    ///
    /// [`GroupMove`]: crate::groups::GroupMove
    Orders,
    /// Maps are brought up to date: bevy_ecs_tilemap maps get and update
    /// their `NavGrid` and `GridLayout` (feature `tilemap`).
    SyncMaps,
    /// New maps get their region labels and warm scratch space; finished
    /// paths that a cell changed since last frame makes illegal (on the
    /// path, or beside one of its diagonal steps) are flagged
    /// ([`PathResult::invalidated`] and a [`PathInvalidated`] event).
    ///
    /// [`PathResult::invalidated`]: crate::pathfinding::PathResult::invalidated
    /// [`PathInvalidated`]: crate::pathfinding::PathInvalidated
    Invalidate,
    /// New, changed and removed `PathRequest`s are read: bad and
    /// unreachable ones are answered at once, the rest queued.
    Collect,
    /// Group moves whose shared path arrived run their floods on the
    /// frame's budget, and members get their routes a few dozen a frame
    /// (`GroupsPlugin`).
    GroupRoutes,
    /// Searches run on what is left of the budget; finished ones are
    /// delivered as `PathResult` components, events and messages.
    Search,
    /// Movers start walking on new orders, join newly found paths, ask
    /// again for paths and routes a map change cut, set the velocity they
    /// would like, and take turns at passages one unit wide
    /// (`MovementPlugin`).
    Steering,
    /// Local avoidance: movers' velocities are changed so that they do not
    /// run into each other (ORCA; `movement::avoidance`). Off with
    /// `CrowdSettings::enabled`, or per unit with an `Avoidance`
    /// component.
    Avoidance,
    /// Movers walk their velocity on the grid, arrive and come to rest;
    /// bodies still touching are pushed apart (`MovementPlugin`).
    Move,
    /// Empty; a hook for running after everything else here.
    Last,
}

/// How much pathfinding may cost per frame, and how searches behave.
///
/// Added with `init_resource`, so a value the app inserts, before or after
/// adding the plugins, wins.
#[derive(Resource, Clone, Debug, PartialEq, Reflect)]
#[reflect(Resource)]
pub struct PathfindingSettings {
    /// Node expansions all searches and group floods together may spend per
    /// run of the plugins' schedule. Counted in expansions, not time, so
    /// every machine finds the same paths in the same frames. 0 pauses
    /// searching (requests that need no search are still answered).
    pub nodes_per_frame: u32,
    /// Searches kept in flight at once (admitted, their state kept between
    /// frames); more requests wait in a queue. Memory follows the searches
    /// that have run, not this number: a search takes its scratch, 16 bytes
    /// per cell of its map plus its open list (16 MiB on a 1024×1024 map),
    /// when it first runs, and holds it until it ends (one that loses its
    /// place in flight to a more urgent request keeps it too, up to one such per
    /// place in flight). Scratch given back waits in a pool of at most one per search
    /// a round deals (one with one lane, four per lane with more, no more
    /// than `max_in_flight`, 16 at most) for the next search; the rest is
    /// freed. With one lane, searches run one at a
    /// time, so only a few ever hold scratch at once; `usize::MAX` means no
    /// limit.
    pub max_in_flight: usize,
    /// Give up a search after this many expansions and answer
    /// `PathStatus::Partial` with a path to the explored cell nearest the
    /// goal. `None`: no cap.
    pub max_expansions_per_request: Option<u32>,
    /// Expansions a chase's search may spend (a request whose goal is a
    /// unit, [`PathTarget::Entity`](crate::pathfinding::PathTarget::Entity)),
    /// at most: a lookahead, as in Moving Target Search. A search that
    /// reaches it ends [`PathStatus::Partial`](crate::pathfinding::PathStatus::Partial),
    /// its path leading to the explored cell nearest the target: a leg of
    /// the way, which the chaser walks, asking for the next a few cells
    /// before its end, from where the target stands then. A leg that led
    /// no nearer the target (a wall between, longer than the lookahead
    /// explores round) doubles the next search's lookahead, and so on
    /// until one leads on or the search ends, so no chaser is stuck. A
    /// chaser far away needs only the next stretch of its way: the target
    /// will not be where it is now when the chaser gets there. Measured
    /// with the `chase` example (1,000 chasers, budget 4,096), a lookahead
    /// of [`CHASE_LOOKAHEAD`](Self::CHASE_LOOKAHEAD) against none: with 100
    /// targets on random512-10-0 the chasers catch on frame 2,004.8 on
    /// average against 2,229.9 (1,911.2 for chasers that always know the
    /// best way) for 2.06 M expansions against 5.72 M; on AR0011SR 2,726.7
    /// against 2,761.0 (1.40 M and 1.18 M expansions), on Berlin_0_1024
    /// 4,429.0 against 4,374.2 (1.70 M and 1.91 M). Chasers of one target
    /// sharing a search share the sum of their lookaheads (like
    /// [`max_expansions_per_request`](Self::max_expansions_per_request),
    /// which caps chases too). `None` searches every chase to its end.
    pub chase_lookahead: Option<u32>,
    /// Optional wall-clock cap on the budgeted work per frame (group floods
    /// and searches), checked every
    /// [`PathfindingSettings::TIME_CHECK_INTERVAL`] expansions. Every frame
    /// still does at least one such slice of work, so even a zero cap
    /// answers every request, one slice a frame. The one setting that
    /// makes results depend on the machine: leave it `None` for a lockstep
    /// game.
    pub max_frame_time: Option<Duration>,
    /// Heuristic weight: 1 (the default) gives optimal paths. Above 1 is a
    /// promise: every final path ([`PathStatus::Complete`](crate::pathfinding::PathStatus::Complete))
    /// costs at most this factor times the best one (weighted A*; paths
    /// from searches shared by units with one goal and group floods stay
    /// optimal), for fewer expansions where the heuristic misleads the
    /// search. Measured on 1,000 units with the stress test's terrain
    /// (`stress --terrain --weight W`): see `docs/benchmarks.md`. From 0
    /// to 1 paths stay optimal (0 is Dijkstra's algorithm); a negative or
    /// non-finite weight is taken as 1.
    pub heuristic_weight: f32,
    /// Jump point search on maps where it applies (see
    /// [`SearchConfig::jump_points`](crate::core::SearchConfig::jump_points)).
    pub jump_points: bool,
    /// A request gains one priority level per this many frames since it
    /// was made, so low-priority requests are served even under a steady
    /// stream of urgent ones. 0 turns ageing off. Ageing is continuous and
    /// applies to every request alike, so two requests never swap places as
    /// they age: a search that lost its place in flight to a request cannot take it
    /// back from that request, and no two searches throw each other out.
    pub aging_frames: u32,
    /// How often map edits may make one search start over before it stops
    /// following them: it then finishes on a copy of the map as it is at
    /// that moment, and its result is flagged
    /// ([`PathResult::invalidated`](crate::pathfinding::PathResult::invalidated))
    /// at once if a later edit touched its path, so the unit asks again from
    /// where it has got to. Edits a search has not looked at never restart
    /// it (see [`Search::step`](crate::core::Search::step)); an edit that
    /// moves the cells it searches between (a goal walled off, say) counts
    /// as a restart. At most [`MAX_RESTARTS`](Self::MAX_RESTARTS).
    pub max_restarts: u32,
    /// Units sent one by one to the same cell (same map, unit size and
    /// [priority](crate::pathfinding::PathRequest::priority)) from starts
    /// close together share one search, run backwards from that cell until
    /// every start it serves is settled: each still gets its own optimal
    /// path, answered as soon as its start is settled (so in the order of
    /// their starts' distance from the goal, not of the requests), for a
    /// fraction of the work of a search each. Requests that arrive while it
    /// runs join it, or are answered at once when their start is already
    /// settled, unless the map changed since the search was pinned to a
    /// copy of it: a request is never answered from a map older than
    /// itself. `false`: a search per request.
    pub share_goals: bool,
    /// On maps with terrain costs (walkable cells that cost more than
    /// others), a request that its real search did not answer in the frame
    /// it was made in first gets a quick route over the map's coarse graph
    /// ([`CoarseGraph`](crate::core::CoarseGraph): clusters of 16×16 cells,
    /// the entrances between them and the real costs across each, built on
    /// a worker thread the first time a map is used and repaired cluster by
    /// cluster as it is edited), refined to cells with real costs: about
    /// 1.06–1.10 times the best path's cost on the benchmark maps with
    /// rough ground, at a work that grows with the route's length, not the
    /// map's size. Quick routes run on the whole frame's budget while no request
    /// has waited two and a half seconds (150 frames) and on up to half of it after
    /// that (so a steady stream of new orders cannot starve the searches
    /// with real costs), delivered with
    /// [`PathStatus::Provisional`](crate::pathfinding::PathStatus::Provisional)
    /// as soon as it is found, so the unit starts along a sensible route;
    /// the search with real costs runs on what the quick routes leave of
    /// the budget and its result replaces the quick one. A `Mover` switches
    /// to the new path where it can see it ahead. Units in a shared search
    /// (see [`share_goals`](Self::share_goals)) get their real path
    /// directly. On by default; a request can opt out with
    /// [`PathRequest::refine`](crate::pathfinding::PathRequest::refine).
    pub refine: bool,
    /// Searches, quick paths and group floods run side by side in this many
    /// lanes (at most [`MAX_LANES`](Self::MAX_LANES)): each lane spends an
    /// equal part of the frame's budget over the frame's rounds of work; the
    /// group floods (in order of the groups' orders), the quick routes and
    /// the searches in flight (best first) are dealt in turn to the lanes
    /// with the most left, and within a lane the first runs first and hands
    /// what it leaves to the next. With 1 (the default) the best search in
    /// flight always runs first and takes everything it needs, so results
    /// come strictly by priority; with more, lanes run in parallel on
    /// [`threads`](Self::threads) threads, and a lower-ranked search can
    /// finish first. Results depend on the lanes, never on the threads.
    /// Give [`max_in_flight`](Self::max_in_flight) at least four per lane,
    /// so that every lane has searches to run.
    pub search_lanes: usize,
    /// Threads of Bevy's compute task pool the lanes run on: 0 (the
    /// default), or more than that, for all the pool has plus the frame's
    /// own thread. The same results in the same frames for every number.
    pub threads: usize,
    /// When a coarse graph built in the background for quick routes (see
    /// [`refine`](Self::refine)) is taken up: on a frame its work alone
    /// decides (the default, [`GraphTakeUp::OnSchedule`]), so that results
    /// are the same on every machine, or the first frame it is done
    /// ([`GraphTakeUp::WhenReady`]), so that no frame ever waits for one.
    pub graph_take_up: GraphTakeUp,
}

/// When a coarse graph built in the background is taken up (see
/// [`PathfindingSettings::graph_take_up`]). A build is planned a window of
/// frames from its estimated work (`CoarseGraph::build_estimate`, at
/// [`BUILD_EXPANSIONS_PER_FRAME`](crate::pathfinding::BUILD_EXPANSIONS_PER_FRAME)
/// a frame: about half of what a core of the benchmark machine builds in
/// a frame at 60 frames a second).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Reflect)]
pub enum GraphTakeUp {
    /// On its window's last frame, done or not: a build not done by then
    /// is finished on that frame, which waits for it. Quick routes then
    /// start in the same frames on every machine, whatever its speed and
    /// load, and the frame waits only on a machine slower or busier than
    /// the window assumes ([`PathfindingStats::graph_wait`](crate::pathfinding::PathfindingStats::graph_wait)
    /// says how long).
    #[default]
    OnSchedule,
    /// On its window's last frame if it is done, else the first frame it
    /// is: no frame ever waits, but where a build runs late (a slow or
    /// busy machine) quick routes start later, and results follow the
    /// machine's timing. For a game that prefers never waiting to
    /// determinism; baking (`CoarseGraphs::bake`) gives both.
    WhenReady,
}

impl PathfindingSettings {
    /// Expansions between two clock reads when
    /// [`PathfindingSettings::max_frame_time`] is set.
    pub const TIME_CHECK_INTERVAL: u32 = crate::budget::TIME_CHECK_INTERVAL;

    /// The default [`chase_lookahead`](Self::chase_lookahead).
    pub const CHASE_LOOKAHEAD: u32 = 500;

    /// The most [`max_restarts`](Self::max_restarts) can be.
    pub const MAX_RESTARTS: u32 = 32;

    /// The most lanes searches run in, whatever
    /// [`search_lanes`](Self::search_lanes) says.
    pub const MAX_LANES: usize = 64;

    /// The lanes searches run in: [`search_lanes`](Self::search_lanes),
    /// from 1 to [`MAX_LANES`](Self::MAX_LANES).
    pub fn lanes(&self) -> usize {
        self.search_lanes.clamp(1, Self::MAX_LANES)
    }
}

impl Default for PathfindingSettings {
    fn default() -> Self {
        Self {
            nodes_per_frame: 4096,
            max_in_flight: 8,
            max_expansions_per_request: None,
            chase_lookahead: Some(Self::CHASE_LOOKAHEAD),
            max_frame_time: None,
            heuristic_weight: 1.0,
            jump_points: true,
            aging_frames: 120,
            max_restarts: 3,
            share_goals: true,
            refine: true,
            search_lanes: 1,
            threads: 0,
            graph_take_up: GraphTakeUp::OnSchedule,
        }
    }
}

fn refill_budget(mut settings: ResMut<PathfindingSettings>, mut budget: ResMut<FrameBudget>) {
    if settings.is_changed() {
        settings.bypass_change_detection().validate();
    }
    budget.refill(
        settings.nodes_per_frame,
        settings.max_frame_time,
        settings.lanes(),
    );
}

impl PathfindingSettings {
    /// Puts settings that make no sense back to something that works, with
    /// a warning naming each: a heuristic weight that is NaN, infinite or
    /// negative becomes 1 (optimal paths), no places in flight becomes one, and
    /// more restarts than [`MAX_RESTARTS`](Self::MAX_RESTARTS) become that
    /// many (a search must stop following edits at some point, or edits
    /// could keep it from ever ending). Every other value, however large,
    /// works as documented: a `max_in_flight` of `usize::MAX` means no
    /// limit on searches in flight and allocates nothing up front.
    /// Returns whether anything was changed. The plugin calls it whenever
    /// the settings change.
    pub fn validate(&mut self) -> bool {
        let mut changed = false;
        let weight = self.heuristic_weight;
        if !weight.is_finite() || weight < 0.0 {
            warn!(
                "bevy_frontier: PathfindingSettings::heuristic_weight = {weight} is not a finite number ≥ 0; using 1"
            );
            self.heuristic_weight = 1.0;
            changed = true;
        }
        if self.max_restarts > Self::MAX_RESTARTS {
            warn!(
                "bevy_frontier: PathfindingSettings::max_restarts = {} would let edits starve a search; using {}",
                self.max_restarts,
                Self::MAX_RESTARTS
            );
            self.max_restarts = Self::MAX_RESTARTS;
            changed = true;
        }
        if self.max_in_flight == 0 {
            warn!(
                "bevy_frontier: PathfindingSettings::max_in_flight = 0 leaves no place in flight; using 1"
            );
            self.max_in_flight = 1;
            changed = true;
        }
        changed
    }
}

/// Configures [`FrontierSystems`] in one schedule and adds the
/// [`PathfindingSettings`] and the [`FrameBudget`]. Every other plugin of
/// the crate adds it (with its own schedule) if the app has not.
///
/// # Systems
/// In [`FrontierSystems::Orders`]: `refill_budget` (which also checks the
/// settings when they change, see [`PathfindingSettings::validate`]).
pub struct FrontierSchedulePlugin {
    /// The schedule the sets are configured in.
    pub schedule: Interned<dyn ScheduleLabel>,
}

impl FrontierSchedulePlugin {
    /// The sets, configured in `schedule`.
    pub fn new(schedule: impl ScheduleLabel) -> Self {
        Self {
            schedule: schedule.intern(),
        }
    }

    /// Adds the plugin for `schedule` unless the app already has it.
    pub(crate) fn add_once(app: &mut App, schedule: Interned<dyn ScheduleLabel>) {
        if !app.is_plugin_added::<Self>() {
            app.add_plugins(Self { schedule });
        }
    }
}

/// When the plugin's systems that act on changed components last ran (the
/// tick Bevy compares a component's change with): a save tells from these
/// which changes each has still to read (`crate::save`), and a loaded game
/// hands those to it again, since its systems start with no past.
#[derive(Resource, Clone, Copy, Debug)]
#[cfg_attr(not(feature = "serialize"), allow(dead_code))]
pub(crate) struct ChangeMarks {
    /// `collect_requests`: new and changed requests.
    pub(crate) collect: Tick,
    /// `invalidate_paths`: new results, into the path index.
    pub(crate) index: Tick,
    /// `begin_orders`: movers given a new order.
    pub(crate) orders: Tick,
    /// `adopt_paths` (and the other steering systems after it in its chain
    /// that read new results): movers taking a new path.
    pub(crate) adopt: Tick,
}

impl Default for ChangeMarks {
    fn default() -> Self {
        let never = Tick::new(0);
        Self {
            collect: never,
            index: never,
            orders: never,
            adopt: never,
        }
    }
}

impl Default for FrontierSchedulePlugin {
    fn default() -> Self {
        Self::new(Update)
    }
}

impl Plugin for FrontierSchedulePlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<PathfindingSettings>()
            .init_resource::<FrameBudget>()
            .init_resource::<crate::ordinal::OrdinalCounter>()
            .init_resource::<ChangeMarks>()
            .register_type::<crate::ordinal::Ordinal>()
            .register_type::<PathfindingSettings>()
            .configure_sets(
                self.schedule,
                (
                    FrontierSystems::First,
                    FrontierSystems::Orders,
                    FrontierSystems::SyncMaps,
                    FrontierSystems::Invalidate,
                    FrontierSystems::Collect,
                    FrontierSystems::GroupRoutes,
                    FrontierSystems::Search,
                    FrontierSystems::Steering,
                    FrontierSystems::Avoidance,
                    FrontierSystems::Move,
                    FrontierSystems::Last,
                )
                    .chain(),
            )
            .add_systems(self.schedule, refill_budget.in_set(FrontierSystems::Orders))
            .add_systems(
                self.schedule,
                crate::checksum::close_frame
                    .run_if(resource_exists::<crate::checksum::FrontierChecksum>)
                    .in_set(FrontierSystems::Last),
            );
    }
}
