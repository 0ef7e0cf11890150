//! The coarse graphs quick routes run on: a [`CoarseGraphs`] component on
//! each map, one [`CoarseGraph`] per unit kind (class and size), built in the background and
//! never waited for.
//!
//! A map whose walkable cells do not all cost the same starts the build of
//! its graph for units of one cell the frame it is first seen (a graph for
//! a bigger size, the first time a quick route of that size is wanted).
//! With Bevy's `multi_threaded` feature the build runs on the async
//! compute task pool, split into parts over its threads, from a copy of the
//! grid; without it, in slices on the frame's thread. Either way it is
//! planned a window of frames from its size (about a core's work on this
//! project's benchmark machine, with a quarter to spare; see
//! [`build_frames`]) and taken up on the window's last frame, so quick
//! routes start in the same frames on every machine: a build not done by
//! then is finished on that frame, which waits for it (only a machine
//! slower or busier than the window assumes waits). With
//! [`GraphTakeUp::WhenReady`] a build not done by then is taken up the
//! first frame it is done instead: no frame waits, and results follow the
//! machine's timing. Until then requests get their final paths as without
//! quick routes. A graph a game bakes ([`CoarseGraphs::bake`]) or hands in
//! ([`CoarseGraphs::insert`]) is used as soon as it is there.

use std::sync::Arc;
use std::time::Duration;

use bevy::prelude::*;
use bevy::tasks::futures_lite::future;
use bevy::tasks::{AsyncComputeTaskPool, Task, TaskPool};
#[cfg(feature = "serialize")]
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::clock;
use crate::core::{ClassId, CoarseGraph, GraphBuild, NavGrid, SizeClass, UnitKind};
use crate::schedule::GraphTakeUp;

/// Whether Bevy's task pools have threads to run a build on (its
/// `multi_threaded` feature, which a game with Bevy's default features
/// has): without them a build runs in slices on the frame's thread.
const THREADED: bool = bevy::tasks::cfg::multi_threaded!();

/// Expansions of a graph's build ([`CoarseGraph::build_estimate`]) planned
/// for a frame: a core of the benchmark machine builds about 14 M a second
/// (230,000 a frame at 60 frames a second), so a window of frames at this
/// rate leaves a quarter to spare. A 1024×1024 city map with rough ground
/// (Berlin_0_1024) gets 24 frames, a 512×512 map 4–23.
pub const BUILD_EXPANSIONS_PER_FRAME: u64 = 128 * 1024;

/// Graphs of maps of at most this many cells are built at once, on the
/// frame that wants them (about a millisecond).
const AT_ONCE_CELLS: usize = 64 * 64;

/// A graph with more dirty clusters than this, and a quarter of all, is
/// built again rather than repaired (another level of the same size, most
/// of the map edited at once); a small map's is always repaired.
const MOSTLY_CHANGED_CLUSTERS: usize = 64;

/// The frames a build of about `estimate` expansions is given before it is
/// taken up (at least one).
pub fn build_frames(estimate: u64) -> u64 {
    estimate.div_ceil(BUILD_EXPANSIONS_PER_FRAME).max(1)
}

/// The coarse graphs of a map, one per unit kind (movement class and size), that quick routes run on
/// (see [`PathfindingSettings::refine`](crate::schedule::PathfindingSettings::refine)).
///
/// The plugin adds one to every map and builds what quick routes need in
/// the background, never holding a frame up for it. A game may instead
/// build or load graphs itself and hand them in, and a lockstep game, whose
/// frames must be the same on every machine whatever its speed, bakes them
/// while it loads:
///
/// ```
/// # use bevy::prelude::*;
/// # use bevy_frontier::prelude::*;
/// # use bevy_frontier::pathfinding::CoarseGraphs;
/// // In a loading state: start the bakes…
/// fn bake(mut maps: Query<(&NavGrid, &mut CoarseGraphs)>) {
///     for (grid, mut graphs) in &mut maps {
///         graphs.bake(grid, UnitKind::sized(1));
///     }
/// }
///
/// // …and leave it once they are done.
/// fn loaded(maps: Query<&CoarseGraphs>) -> bool {
///     maps.iter().all(|graphs| graphs.is_ready(UnitKind::sized(1)))
/// }
/// ```
#[derive(Component, Default)]
pub struct CoarseGraphs {
    /// Whether the game hands its graphs in, and the plugin builds none.
    supplied: bool,
    entries: Vec<Entry>,
}

/// One unit kind's graph.
struct Entry {
    kind: UnitKind,
    state: State,
}

enum State {
    /// Being built; taken up on frame `due` (if set; else once done). With
    /// `window_to_come`, a task on a thread works out the build's window
    /// of frames, to be added to `due` (the frame it began).
    Building {
        build: Build,
        due: Option<u64>,
        window_to_come: Option<Task<u64>>,
    },
    Ready(Box<CoarseGraph>),
}

enum Build {
    /// On the async compute pool, from a copy of the grid (its window of
    /// frames estimated by a task of its own there too, so that the frame
    /// that starts it does no more than copy the grid).
    Task(Task<CoarseGraph>),
    /// In slices on the frame's thread, on the grid as it is each frame.
    Sliced(Box<CoarseGraph>),
    /// Built on a thread before its window ended: taken up when it does.
    Done(Box<CoarseGraph>),
}

impl CoarseGraphs {
    /// Graphs the game hands in ([`insert`](Self::insert),
    /// [`bake`](Self::bake)): the plugin builds none for this map, and
    /// until one is there its requests get their final paths only.
    pub fn supplied_by_game() -> Self {
        Self {
            supplied: true,
            entries: Vec::new(),
        }
    }

    /// Whether the game hands the graphs in (see
    /// [`supplied_by_game`](Self::supplied_by_game)).
    pub fn is_supplied_by_game(&self) -> bool {
        self.supplied
    }

    /// The graph for units of `kind` (a movement class and size), once built (edits since may have left
    /// clusters to repair, which quick routes do on the budget).
    pub fn graph(&self, kind: UnitKind) -> Option<&CoarseGraph> {
        match &self.entry(kind)?.state {
            State::Ready(graph) => Some(graph),
            State::Building { .. } => None,
        }
    }

    /// Whether the graph for units of `kind` is built.
    pub fn is_ready(&self, kind: UnitKind) -> bool {
        self.graph(kind).is_some()
    }

    /// Whether a graph is being built.
    pub fn is_building(&self) -> bool {
        self.entries
            .iter()
            .any(|entry| matches!(entry.state, State::Building { .. }))
    }

    /// Hands in a graph (built or loaded by the game): it replaces the one
    /// for its unit size, and is used as soon as a quick route wants it. One
    /// made for another grid, or another level of the same size, is built
    /// again (it is checked against the grid when used).
    pub fn insert(&mut self, graph: CoarseGraph) {
        let kind = graph.kind();
        self.set(kind, State::Ready(Box::new(graph)));
    }

    /// Starts building the graph of `grid` for units of `kind` now (in the
    /// background with threads, else in slices over the next frames), to
    /// be taken up as soon as it is done, with no window of frames: for a
    /// game's loading state. [`is_ready`](Self::is_ready) says when it is.
    pub fn bake(&mut self, grid: &NavGrid, kind: UnitKind) {
        let state = match start(grid, kind) {
            Started::Built(graph) => State::Ready(graph),
            Started::Building(build, _) => State::Building {
                build,
                due: None,
                window_to_come: None,
            },
        };
        self.set(kind, state);
    }

    /// Bytes of memory the built graphs hold (and the copies of grids
    /// builds on threads work from are not counted).
    pub fn memory_bytes(&self) -> usize {
        self.entries
            .iter()
            .map(|entry| match &entry.state {
                State::Ready(graph) => graph.memory_bytes(),
                State::Building {
                    build: Build::Sliced(graph) | Build::Done(graph),
                    ..
                } => graph.memory_bytes(),
                State::Building { .. } => 0,
            })
            .sum()
    }

    fn entry(&self, kind: UnitKind) -> Option<&Entry> {
        self.entries.iter().find(|entry| entry.kind == kind)
    }

    fn set(&mut self, kind: UnitKind, state: State) {
        match self.entries.iter_mut().find(|entry| entry.kind == kind) {
            Some(entry) => entry.state = state,
            None => self.entries.push(Entry { kind, state }),
        }
    }

    /// Starts the plugin's build for `kind` on frame `frame`, due after its
    /// window of frames.
    fn begin(&mut self, grid: &NavGrid, kind: UnitKind, frame: u64) {
        let state = match start(grid, kind) {
            Started::Built(graph) => State::Ready(graph),
            Started::Building(build, window) => {
                let (frames, window_to_come) = match window {
                    Window::Known(frames) => (frames, None),
                    Window::ToCome(task) => (0, Some(task)),
                };
                State::Building {
                    build,
                    due: Some(frame + frames),
                    window_to_come,
                }
            }
        };
        self.set(kind, state);
    }

    /// Moves builds on, frame `frame`: a build on a thread is taken up on
    /// its due frame, waited for there if it is not done (with
    /// [`GraphTakeUp::WhenReady`], taken up the first frame from then on
    /// that it is done); a build in slices does its slice (enough to be
    /// done well within its window) and is taken up when done and due. A
    /// map with rough ground gets its graph for units of one cell started
    /// (unless the game hands its graphs in, or `build` is off). Returns
    /// how long the frame waited.
    pub(crate) fn poll(
        &mut self,
        grid: &NavGrid,
        frame: u64,
        build: bool,
        take_up: GraphTakeUp,
    ) -> Duration {
        if build
            && !self.supplied
            && self.entry(UnitKind::sized(1)).is_none()
            && wants_quick_routes(grid, UnitKind::sized(1))
        {
            self.begin(grid, UnitKind::sized(1), frame);
        }
        let mut waited = Duration::ZERO;
        for entry in &mut self.entries {
            let kind = entry.kind;
            let State::Building {
                build,
                due,
                window_to_come,
            } = &mut entry.state
            else {
                continue;
            };
            // The window, from the frame after the build began: its
            // estimate (one pass over the grid) is the first thing the
            // pool runs, and a frame waits for it only if the pool had
            // not got to it by then.
            if let Some(task) = window_to_come
                && (task.is_finished() || due.is_some_and(|began| frame > began))
            {
                let began = clock::now();
                let frames = future::block_on(task);
                waited += clock::since(began);
                *window_to_come = None;
                *due = due.map(|began| began + frames);
            }
            let due_now = window_to_come.is_none() && due.is_none_or(|due| frame >= due);
            if let Build::Task(task) = build {
                let finish_now = due_now && due.is_some() && take_up == GraphTakeUp::OnSchedule;
                if !task.is_finished() && !finish_now {
                    continue;
                }
                // Done, or due and finished here.
                let began = clock::now();
                let graph = future::block_on(task);
                waited += clock::since(began);
                *build = Build::Done(Box::new(graph));
            }
            let graph = match build {
                Build::Task(_) => continue,
                Build::Done(graph) => {
                    if !due_now {
                        continue;
                    }
                    std::mem::replace(graph, Box::new(CoarseGraph::new(&grid.kind_view(kind))))
                }
                Build::Sliced(graph) => {
                    let size_class = grid.kind_view(kind);
                    if !graph.fits(&size_class) {
                        // The grid was replaced by one of another size.
                        **graph = CoarseGraph::new(&size_class);
                    }
                    graph.repair(&size_class, 2 * BUILD_EXPANSIONS_PER_FRAME);
                    if !(graph.is_ready(&size_class) && due_now) {
                        continue;
                    }
                    std::mem::replace(graph, Box::new(CoarseGraph::new(&size_class)))
                }
            };
            entry.state = State::Ready(graph);
        }
        waited
    }

    /// The graph for `kind`, brought up to date with `grid` for a quick
    /// route on frame `frame`: started if there is none (unless the game
    /// hands its graphs in, or another kind's graph is being built: one
    /// build at a time, so that each is done within the window of frames
    /// planned for it, on a machine of two cores too, and routes start in
    /// the same frames on every machine fast enough), built again if it
    /// was made for a grid of another size or most of it changed (another
    /// level of the same size), and otherwise repaired where edits made it
    /// dirty, on at most `most` units of the frame's budget (at
    /// [`REPAIR_EXPANSIONS_PER_UNIT`](crate::core::coarse::REPAIR_EXPANSIONS_PER_UNIT)
    /// repair expansions a unit). Returns the units spent (at most `most`).
    pub(crate) fn prepare(&mut self, grid: &NavGrid, kind: UnitKind, frame: u64, most: u64) -> u64 {
        let size_class = grid.kind_view(kind);
        let Some(index) = self.entries.iter().position(|entry| entry.kind == kind) else {
            if !self.supplied && !self.is_building() {
                self.begin(grid, kind, frame);
            }
            return 0;
        };
        let State::Ready(graph) = &mut self.entries[index].state else {
            return 0;
        };
        // Another grid (a level loaded over it), or most of this one changed:
        // built again rather than repaired cluster by cluster on the budget.
        // A few edits leave it usable meanwhile, on its old records where
        // they touched.
        let dirty = if graph.fits(&size_class) {
            graph.note_edits(&size_class)
        } else {
            usize::MAX
        };
        let mostly =
            dirty > MOSTLY_CHANGED_CLUSTERS && dirty.saturating_mul(4) > graph.cluster_count();
        if mostly || !graph.is_usable(&size_class) {
            if self.supplied {
                // The game's graph is for another grid: it is dropped, and
                // quick routes wait for one the game hands in.
                self.entries.remove(index);
            } else {
                self.begin(grid, kind, frame);
            }
            return 0;
        }
        // Repairs are charged at their cost in the frame's units.
        let per_unit = crate::core::coarse::REPAIR_EXPANSIONS_PER_UNIT;
        let spent = graph.repair(&size_class, most.saturating_mul(per_unit));
        spent.div_ceil(per_unit)
    }

    /// The graph for `kind` if routes may run on it on `grid` (built for
    /// it, edits since noted; see [`CoarseGraph::is_usable`]).
    pub(crate) fn ready(&self, kind: UnitKind, grid: &NavGrid) -> Option<&CoarseGraph> {
        self.graph(kind)
            .filter(|graph| graph.is_usable(&grid.kind_view(kind)))
    }
}

/// Whether units of `kind` get quick routes on `grid`: the walkable
/// anchors of their class cost more in some places than in others, or
/// those of another class in use on the grid do (one whose layer a unit of
/// it has had built: asking of the others would build theirs). The classes
/// of a map share one budget, so on a map of land and water a class whose
/// ground costs the same everywhere (hover) would otherwise wait for its
/// real searches behind the other classes' long ones, with no path at all.
pub(crate) fn wants_quick_routes(grid: &NavGrid, kind: UnitKind) -> bool {
    let uneven =
        |size_class: SizeClass| size_class.min_walkable_cost() != size_class.max_walkable_cost();
    uneven(grid.kind_view(kind))
        || (0..grid.class_count())
            .map(|class| ClassId::from_index(class as u8))
            .filter(|&class| class != kind.class)
            .filter_map(|class| grid.view_if_built(UnitKind::new(class, 1)))
            .any(uneven)
}

/// A build started: a small map's graph, built at once, or a build under
/// way with its window of frames.
enum Started {
    Built(Box<CoarseGraph>),
    Building(Build, Window),
}

/// A build's window of frames: known, or being estimated on a thread.
enum Window {
    Known(u64),
    ToCome(Task<u64>),
}

/// Starts a build of `grid`'s graph for `kind`: on the async compute pool
/// with threads, in slices without; a small map's at once.
fn start(grid: &NavGrid, kind: UnitKind) -> Started {
    let size_class = grid.kind_view(kind);
    if grid.cell_count() <= AT_ONCE_CELLS {
        return Started::Built(Box::new(CoarseGraph::build(&size_class)));
    }
    if !THREADED {
        let frames = build_frames(CoarseGraph::build_estimate(&size_class));
        return Started::Building(
            Build::Sliced(Box::new(CoarseGraph::new(&size_class))),
            Window::Known(frames),
        );
    }
    let copy = Arc::new(grid.clone());
    let pool = AsyncComputeTaskPool::get_or_init(TaskPool::default);
    let estimate = {
        let copy = copy.clone();
        pool.spawn(async move { build_frames(CoarseGraph::build_estimate(&copy.kind_view(kind))) })
    };
    let task = pool.spawn(build_in_parts(copy, kind));
    Started::Building(Build::Task(task), Window::ToCome(estimate))
}

/// Builds the graph of `grid` for `kind` in parts side by side on the async
/// compute pool's threads (a few parts a thread, so that they even out):
/// the clusters, then the super-clusters. The same graph for any number of
/// threads.
async fn build_in_parts(grid: Arc<NavGrid>, kind: UnitKind) -> CoarseGraph {
    let pool = AsyncComputeTaskPool::get_or_init(TaskPool::default);
    let parts = 4 * pool.thread_num().max(1);
    let mut build = GraphBuild::new(&grid.kind_view(kind));
    while !build.is_done() {
        let shared = Arc::new(build);
        let tasks: Vec<Task<_>> = shared
            .parts(parts)
            .into_iter()
            .map(|part| {
                let (build, grid) = (shared.clone(), grid.clone());
                pool.spawn(async move { build.build_part(&grid.kind_view(kind), part) })
            })
            .collect();
        let mut built = Vec::with_capacity(tasks.len());
        for task in tasks {
            built.push(task.await);
        }
        build = Arc::try_unwrap(shared).unwrap_or_else(|shared| (*shared).clone());
        build.install(built);
    }
    build.into_graph()
}

// A map's graphs in a save (`crate::save`): each kind's graph as it
// stands, built or under way, with the frame it is due. A build on a
// thread is waited for first (`CoarseGraphs::settle`).

/// A graph in its live form ([`CoarseGraph::serialize_live`]).
#[cfg(feature = "serialize")]
struct Live(Box<CoarseGraph>);

/// A graph being written in its live form.
#[cfg(feature = "serialize")]
struct LiveRef<'a>(&'a CoarseGraph);

#[cfg(feature = "serialize")]
impl Serialize for LiveRef<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize_live(serializer)
    }
}

#[cfg(feature = "serialize")]
impl<'de> Deserialize<'de> for Live {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        CoarseGraph::deserialize_live(deserializer).map(|graph| Self(Box::new(graph)))
    }
}

/// One kind's graph: how far it is, and the graph.
#[cfg(feature = "serialize")]
#[derive(Serialize, Deserialize)]
enum Stage {
    Ready,
    /// Built in slices on the frame's thread, due on a frame.
    Sliced(Option<u64>),
    /// Built, to be taken up on a frame.
    Done(Option<u64>),
}

#[cfg(feature = "serialize")]
impl CoarseGraphs {
    /// Waits for the builds on threads and their windows, so that every
    /// graph is data. It changes nothing the plugin decides: a build is
    /// taken up on its frame, and its window counted from the frame it
    /// began, whenever either was done.
    pub(crate) fn settle(&mut self) {
        for entry in &mut self.entries {
            let State::Building {
                build,
                due,
                window_to_come,
            } = &mut entry.state
            else {
                continue;
            };
            if let Some(task) = window_to_come.take() {
                let frames = future::block_on(task);
                *due = due.map(|began| began + frames);
            }
            if let Build::Task(task) = build {
                let graph = future::block_on(task);
                *build = Build::Done(Box::new(graph));
            }
        }
    }
}

#[cfg(feature = "serialize")]
impl Serialize for CoarseGraphs {
    /// Fails for a build still on a thread (a save waits for those first).
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut entries = Vec::with_capacity(self.entries.len());
        for entry in &self.entries {
            let (stage, graph) = match &entry.state {
                State::Ready(graph) => (Stage::Ready, graph),
                State::Building {
                    build,
                    due,
                    window_to_come: None,
                } => match build {
                    Build::Sliced(graph) => (Stage::Sliced(*due), graph),
                    Build::Done(graph) => (Stage::Done(*due), graph),
                    Build::Task(_) => {
                        return Err(serde::ser::Error::custom("a graph build in flight"));
                    }
                },
                State::Building { .. } => {
                    return Err(serde::ser::Error::custom("a graph build in flight"));
                }
            };
            entries.push((entry.kind, stage, LiveRef(graph)));
        }
        (self.supplied, entries).serialize(serializer)
    }
}

#[cfg(feature = "serialize")]
impl<'de> Deserialize<'de> for CoarseGraphs {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let (supplied, entries): (bool, Vec<(UnitKind, Stage, Live)>) =
            Deserialize::deserialize(deserializer)?;
        let entries = entries.into_iter().map(|(kind, stage, Live(graph))| {
            let state = match stage {
                Stage::Ready => State::Ready(graph),
                Stage::Sliced(due) => State::Building {
                    build: Build::Sliced(graph),
                    due,
                    window_to_come: None,
                },
                Stage::Done(due) => State::Building {
                    build: Build::Done(graph),
                    due,
                    window_to_come: None,
                },
            };
            Entry { kind, state }
        });
        let entries: Vec<Entry> = entries.collect();
        if entries
            .iter()
            .enumerate()
            .any(|(i, a)| entries[..i].iter().any(|b| b.kind == a.kind))
        {
            return Err(serde::de::Error::custom("two graphs for one unit kind"));
        }
        Ok(Self { supplied, entries })
    }
}
