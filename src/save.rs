//! Saving the plugin's state with a game's, and loading it into a fresh
//! `App` that goes on bit for bit as the saved one would have (feature
//! `serialize`).
//!
//! [`FrontierSave::capture`] takes everything the plugin keeps between two
//! frames: its components on the game's units and maps (requests, results,
//! movers and their steering, velocities, rest places and passage turns,
//! chases, groups, each map's `NavGrid` with its journal of edits and its
//! coarse graphs, built or under way), the group entities it made, and its
//! resources (the request queue with its searches in flight, quick routes
//! and shared searches; the path index; the crowd's seats and rest
//! places; the passages it has looked at; the counters that order units
//! and requests; the checksum). What it keeps only to go faster (the
//! crowd's neighbour lists, scratch space, a frame's plans) is not saved
//! and is made again.
//!
//! A loaded game has no past: Bevy's change ticks and its systems' cursors
//! start again. So the save also says which changes the plugin had still
//! to read when it was taken (a request given in the frame after its queue
//! read the frame's requests, a result delivered after the index took the
//! frame's), and [`FrontierSave::restore`] hands those over, so the loaded
//! game reads them in the same frame the saved one would have.
//!
//! The game saves its own entities its own way, and on load spawns them
//! again, under new ids; it passes [`restore`](FrontierSave::restore) the
//! ids each saved entity has now, as Bevy's scenes give them
//! (`EntityHashMap<Entity>`, from the id in the save to the id in the
//! world). Every saved unit and map needs one: [`FrontierSave::entities`]
//! lists them. Groups are the plugin's own entities, and it spawns those
//! again itself. The loaded `App` must be built as the saved one was: the
//! same plugins, settings and schedule.
//!
//! A save is read as a game reads its own files: the header's hash finds
//! bytes damaged or cut ([`LoadError`]), not a save written by hand to be
//! read wrongly.
//!
//! ```
//! # use bevy::prelude::*;
//! # use bevy::ecs::entity::{EntityHashMap, EntityHashSet};
//! # use bevy_frontier::prelude::*;
//! # use bevy_frontier::save::FrontierSave;
//! # let mut app = App::new();
//! # app.add_plugins((MinimalPlugins, FrontierPlugins::default()));
//! let map = app.world_mut().spawn((NavGrid::new(16, 16).unwrap(), Transform::default())).id();
//! let unit = app
//!     .world_mut()
//!     .spawn((Transform::from_xyz(1.0, 1.0, 0.0), Mover { speed: 4.0 }, PathRequest::new(Vec2::new(14.0, 14.0))))
//!     .id();
//! app.update();
//! let save = FrontierSave::capture(app.world_mut()).unwrap();
//! let bytes = save.to_bytes();
//!
//! // Later, in a new app: the game spawns its entities again…
//! let mut loaded = App::new();
//! loaded.add_plugins((MinimalPlugins, FrontierPlugins::default()));
//! let new_map = loaded.world_mut().spawn_empty().id();
//! let new_unit = loaded.world_mut().spawn_empty().id();
//! // …and tells the plugin which is which.
//! let ids = EntityHashMap::from_iter([(map, new_map), (unit, new_unit)]);
//! let save = FrontierSave::from_bytes(bytes);
//! save.restore(loaded.world_mut(), &ids).unwrap();
//! loaded.update();
//! ```

use std::fmt;

use bevy::ecs::change_detection::{MAX_CHANGE_AGE, Tick};
use bevy::ecs::entity::{EntityHashMap, EntityHashSet};
use bevy::ecs::message::Messages;
use bevy::prelude::*;
use serde::{Deserialize, Serialize};

use crate::checksum::FrontierChecksum;
use crate::core::NavGrid;
use crate::core::serial::framed::{self, FrameError};
use crate::groups::{GroupMember, GroupMembers, GroupMove, GroupOrders, SharedRoute};
use crate::maps::{GridLayout, LastGridVersions, MapView};
use crate::movement::passage::Passages;
use crate::movement::{
    Arrived, Avoidance, EndedOrder, MissesGoal, Motion, Mover, OnProvisionalPath, Pursuit,
    RestingPlaces, RouteChecks, Seat, Seats, Steering,
};
use crate::ordinal::{Ordinal, OrdinalCounter};
use crate::pathfinding::{
    CoarseGraphs, Footprint, MovementClass, PathIndex, PathRequest, PathResult, PathfindingQueue,
    PathfindingStats,
};
use crate::remap::{Remap, no_entities};
use crate::schedule::ChangeMarks;

/// The first bytes of a save.
const MAGIC: [u8; 8] = *b"FRONTSAV";

/// The layout of a save's payload; a save of another is refused
/// ([`LoadError::Version`]), never misread.
pub const FORMAT_VERSION: u32 = 1;

/// The plugin's state between two frames, as bytes: a header (magic,
/// [`FORMAT_VERSION`], length, FNV-1a hash) and the state in postcard's
/// serde format. A game keeps it in its own save, as bytes
/// ([`to_bytes`](Self::to_bytes)) or through serde (it serializes as one
/// byte string). A game that saves with Bevy's scenes inserts it as a
/// resource (registered with `app.register_type::<FrontierSave>()`): it
/// reflects as an opaque value, written through serde. See the
/// [module docs](self).
#[derive(Resource, Reflect, Clone, PartialEq, Eq)]
#[reflect(opaque, Resource, Serialize, Deserialize, Clone, PartialEq)]
pub struct FrontierSave {
    bytes: Vec<u8>,
}

impl fmt::Debug for FrontierSave {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FrontierSave")
            .field("bytes", &self.bytes.len())
            .finish()
    }
}

impl Serialize for FrontierSave {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        crate::core::serial::bytes::serialize(&self.bytes, serializer)
    }
}

impl<'de> Deserialize<'de> for FrontierSave {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        crate::core::serial::bytes::deserialize(deserializer).map(|bytes| Self { bytes })
    }
}

/// Why the plugin's state could not be saved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SaveError {
    /// Part of it would not encode (the reason).
    Encode(String),
}

impl fmt::Display for SaveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SaveError::Encode(why) => write!(f, "the pathfinding state would not encode: {why}"),
        }
    }
}

impl std::error::Error for SaveError {}

/// Why a save could not be loaded. Nothing in the world is changed when
/// one of these is returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadError {
    /// The bytes do not start as a save does.
    NotASave,
    /// A save of another format version.
    Version {
        /// The version it has.
        found: u32,
    },
    /// The bytes are cut short or run on.
    Length {
        /// The length its header gives.
        expected: u64,
        /// The length it has.
        got: u64,
    },
    /// The payload does not match its hash.
    Corrupt,
    /// The payload does not decode (the reason).
    Malformed(String),
    /// A saved unit or map that the ids passed to
    /// [`FrontierSave::restore`] do not give a new id, or give one that is
    /// not in the world.
    Unmapped(Entity),
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::NotASave => write!(f, "not a pathfinding save"),
            LoadError::Version { found } => write!(
                f,
                "a pathfinding save of format {found}, not {FORMAT_VERSION}"
            ),
            LoadError::Length { expected, got } => {
                write!(f, "a pathfinding save of {got} bytes, not {expected}")
            }
            LoadError::Corrupt => write!(f, "a pathfinding save whose bytes were changed"),
            LoadError::Malformed(why) => write!(f, "a pathfinding save that does not read: {why}"),
            LoadError::Unmapped(entity) => write!(
                f,
                "saved entity {entity} has no entity in the world to load into"
            ),
        }
    }
}

impl std::error::Error for LoadError {}

no_entities!(
    Ordinal,
    Footprint,
    MovementClass,
    Mover,
    Seat,
    Avoidance,
    Arrived,
    OnProvisionalPath,
    GridLayout,
    Transform,
    CoarseGraphs,
    OrdinalCounter,
    PathfindingStats,
    FrontierChecksum,
    GridState,
);

/// A map's grid with its journal of edits (a baked map's `NavGrid` holds
/// none: a loaded map starts a new one, but a saved game's paths and
/// searches are checked against the edits before it).
#[derive(Deserialize)]
struct GridState {
    grid: NavGrid,
    journal_from: u64,
    journal: Vec<(u32, u8)>,
}

/// [`GridState`] as it is written.
#[derive(Serialize)]
struct GridStateRef<'a> {
    grid: &'a NavGrid,
    journal_from: u64,
    journal: Vec<(u32, u8)>,
}

/// A unit's result. Its waypoints are its cells' centres as its map places
/// them, for all but a few (a group's columns): those are left out and
/// placed again on load, on the restored map, the same to the bit.
#[derive(Serialize, Deserialize)]
struct ResultState {
    result: PathResult,
    /// Whether `result`'s waypoints were left out, being its cells'
    /// centres.
    centres: bool,
}

impl ResultState {
    fn of(world: &World, result: &PathResult) -> Self {
        let centres = centres(world, result).is_some_and(|placed| placed == result.waypoints);
        let mut result = result.clone();
        if centres {
            result.waypoints = Vec::new();
        }
        Self { result, centres }
    }
}

/// `result`'s cells' centres as its map places them now, if it has one.
fn centres(world: &World, result: &PathResult) -> Option<Vec<Vec2>> {
    let map = world.get_entity(result.map?).ok()?;
    let view = MapView::new(
        map.get::<NavGrid>()?,
        map.get::<GridLayout>()?,
        map.get::<Transform>(),
    );
    let view = view.for_kind(result.kind());
    Some(
        result
            .cells
            .iter()
            .map(|&cell| view.cell_to_world(cell))
            .collect(),
    )
}

/// The plugin's components, each an `Option` of the entity's, written
/// from references and read back owned, in this order (after the grid,
/// `Transform`, request and result, which need more than that): later
/// ones replace what the hooks of earlier ones set (a request stamps its
/// `Ordinal`, a mover takes a `Seat`). On load they read as unchanged
/// since long ago.
macro_rules! components {
    ($($field:ident: $ty:ty),* $(,)?) => {
        /// One saved entity's components, as written.
        #[derive(Serialize)]
        struct EntityRef<'a> {
            id: Entity,
            grid: Option<GridStateRef<'a>>,
            /// The game's component, but the crowd moves it.
            transform: Option<&'a Transform>,
            request: Option<&'a PathRequest>,
            /// Its result, without its waypoints when they are its cells'
            /// centres on its map (then placed again on load).
            result: Option<ResultState>,
            $($field: Option<&'a $ty>,)*
            /// Its group, when it is in one (the members are put back in
            /// their group's order, with the group).
            members: Option<&'a [Entity]>,
            /// Whether its request and its result are changes every
            /// system still has to read.
            request_fresh: bool,
            result_fresh: bool,
            /// Whether its order ended with its request unchanged since.
            ended: Option<bool>,
        }

        /// One saved entity's components, as read.
        #[derive(Deserialize)]
        struct EntityState {
            id: Entity,
            grid: Option<GridState>,
            transform: Option<Transform>,
            request: Option<PathRequest>,
            result: Option<ResultState>,
            $($field: Option<$ty>,)*
            members: Option<Vec<Entity>>,
            request_fresh: bool,
            result_fresh: bool,
            ended: Option<bool>,
        }

        impl EntityState {
            fn remap(&mut self, to: &mut dyn FnMut(Entity) -> Entity) {
                $(self.$field.remap(to);)*
                self.request.remap(to);
                self.members.remap(to);
                if let Some(result) = &mut self.result {
                    result.result.remap(to);
                }
            }

            /// Puts its components on `entity`, in order.
            fn insert(self, world: &mut World, entity: Entity) {
                let mut at = world.entity_mut(entity);
                if let Some(grid) = self.grid {
                    at.insert(grid.grid);
                }
                if let Some(transform) = self.transform {
                    at.insert(transform);
                }
                if let Some(request) = self.request {
                    at.insert(request);
                }
                if let Some(result) = self.result {
                    at.insert(result.result);
                }
                $(if let Some(value) = self.$field {
                    at.insert(value);
                })*
            }
        }

        /// Reads `entity`'s components.
        fn entity_ref<'w>(world: &'w World, entity: Entity, fresh: (bool, bool), ended: Option<bool>) -> EntityRef<'w> {
            let at = world.entity(entity);
            EntityRef {
                id: entity,
                transform: at.get::<Transform>(),
                request: at.get::<PathRequest>(),
                result: at.get::<PathResult>().map(|result| ResultState::of(world, result)),
                grid: at.get::<NavGrid>().map(|grid| {
                    let (journal_from, journal) = grid.journal_parts();
                    GridStateRef { grid, journal_from, journal }
                }),
                $($field: at.get::<$ty>(),)*
                members: at.get::<GroupMembers>().map(GroupMembers::units),
                request_fresh: fresh.0,
                result_fresh: fresh.1,
                ended,
            }
        }

        /// Takes the plugin's components off `entity` (what the game spawned
        /// again may hold some the save does not); its `Transform` is the
        /// game's, and only replaced by the saved one.
        fn strip(world: &mut World, entity: Entity) {
            let mut at = world.entity_mut(entity);
            at.remove::<(NavGrid, PathRequest, PathResult, GroupMember, EndedOrder)>();
            $(at.remove::<$ty>();)*
        }

        /// Marks every component restored on `entity` as unchanged since
        /// `old`, but a request and a result every system still had to
        /// read (`fresh`), which read as changed now.
        fn age_all(world: &mut World, entity: Entity, old: Tick, fresh: (bool, bool)) {
            age::<NavGrid>(world, entity, old, false);
            age::<Transform>(world, entity, old, false);
            age::<PathRequest>(world, entity, old, fresh.0);
            age::<PathResult>(world, entity, old, fresh.1);
            $(age::<$ty>(world, entity, old, false);)*
        }
    };
}

components!(
    layout: GridLayout,
    graphs: CoarseGraphs,
    footprint: Footprint,
    class: MovementClass,
    avoidance: Avoidance,
    shared_route: SharedRoute,
    mover: Mover,
    steering: Steering,
    motion: Motion,
    seat: Seat,
    arrived: Arrived,
    provisional: OnProvisionalPath,
    misses_goal: MissesGoal,
    pursuit: Pursuit,
    ordinal: Ordinal,
);

/// Sets the change ticks of `entity`'s `T`: long ago (no system, even one
/// that never ran, reads it as changed), unless `fresh`.
fn age<T: Component<Mutability = bevy::ecs::component::Mutable>>(
    world: &mut World,
    entity: Entity,
    old: Tick,
    fresh: bool,
) {
    if fresh {
        return;
    }
    if let Some(mut value) = world.get_mut::<T>(entity) {
        value.set_last_added(old);
        value.set_last_changed(old);
    }
}

/// The plugin's resources, each an `Option` (a plugin left out has none).
macro_rules! resources {
    ($($field:ident: $ty:ty),* $(,)?) => {
        #[derive(Serialize)]
        struct ResourcesRef<'a> {
            $($field: Option<&'a $ty>,)*
        }

        #[derive(Deserialize)]
        struct Resources {
            $($field: Option<$ty>,)*
        }

        impl Resources {
            fn remap(&mut self, to: &mut dyn FnMut(Entity) -> Entity) {
                $(self.$field.remap(to);)*
            }

            fn insert(self, world: &mut World) {
                $(if let Some(value) = self.$field {
                    world.insert_resource(value);
                })*
            }
        }

        fn resources_ref(world: &World) -> ResourcesRef<'_> {
            ResourcesRef {
                $($field: world.get_resource::<$ty>(),)*
            }
        }
    };
}

resources!(
    counter: OrdinalCounter,
    queue: PathfindingQueue,
    index: PathIndex,
    versions: LastGridVersions,
    places: RestingPlaces,
    seats: Seats,
    route_checks: RouteChecks,
    passages: Passages,
    stats: PathfindingStats,
    checksum: FrontierChecksum,
);

/// The whole save, as written.
#[derive(Serialize)]
struct StateRef<'a> {
    resources: ResourcesRef<'a>,
    entities: Vec<EntityRef<'a>>,
    /// Requests `collect_requests` had not read, and results
    /// `invalidate_paths` had not.
    unread_requests: Vec<Entity>,
    unread_results: Vec<Entity>,
    /// Group orders sent and not read yet, and the next group's number.
    unread_orders: Vec<GroupMove>,
    group_sequence: u64,
}

/// The whole save, as read.
#[derive(Deserialize)]
struct State {
    resources: Resources,
    entities: Vec<EntityState>,
    unread_requests: Vec<Entity>,
    unread_results: Vec<Entity>,
    unread_orders: Vec<GroupMove>,
    group_sequence: u64,
}

impl FrontierSave {
    /// Takes the plugin's state now, between two frames (not from inside
    /// the plugin's schedule). Coarse graphs being built on other threads
    /// are waited for first: taken up on their frame, the same whenever
    /// they were done, so the game goes on as before.
    pub fn capture(world: &mut World) -> Result<Self, SaveError> {
        let mut maps = world.query::<&mut CoarseGraphs>();
        for mut graphs in maps.iter_mut(world) {
            graphs.bypass_change_detection().settle();
        }
        let now = world.read_change_tick();
        let marks = world
            .get_resource::<ChangeMarks>()
            .copied()
            .unwrap_or_default();
        let newer = |tick: Tick, mark: Tick| tick.is_newer_than(mark, now);
        let mut saved = world.query_filtered::<(Entity, Option<&Ordinal>), Or<(
            With<Ordinal>,
            With<NavGrid>,
            With<SharedRoute>,
            With<PathResult>,
        )>>();
        let mut ids: Vec<(u64, Entity)> = (saved.iter(world))
            .map(|(entity, ordinal)| (ordinal.map_or(u64::MAX, Ordinal::joined), entity))
            .collect();
        ids.sort_unstable();
        // Those a restore handed over that no frame has read since.
        let resumed_requests: EntityHashSet = (world.get_resource::<PathfindingQueue>())
            .map(|queue| queue.resumed().iter().copied().collect())
            .unwrap_or_default();
        let resumed_results: EntityHashSet = (world.get_resource::<PathIndex>())
            .map(|index| index.resumed.iter().copied().collect())
            .unwrap_or_default();
        let (mut unread_requests, mut unread_results) = (Vec::new(), Vec::new());
        let mut entities = Vec::with_capacity(ids.len());
        for &(_, entity) in &ids {
            let at = world.entity(entity);
            let request = at.get_change_ticks::<PathRequest>();
            let result = at.get_change_ticks::<PathResult>();
            if request.is_some_and(|t| newer(t.changed, marks.collect))
                || resumed_requests.contains(&entity)
            {
                unread_requests.push(entity);
            }
            if result.is_some_and(|t| newer(t.changed, marks.index))
                || resumed_results.contains(&entity)
            {
                unread_results.push(entity);
            }
            let fresh = (
                request.is_some_and(|t| newer(t.changed, marks.orders)),
                result.is_some_and(|t| newer(t.changed, marks.adopt)),
            );
            let ended = at
                .get::<EndedOrder>()
                .map(|ended| request.is_some_and(|t| t.changed == ended.0));
            entities.push(entity_ref(world, entity, fresh, ended));
        }
        let (unread_orders, group_sequence) = match world.get_resource::<GroupOrders>() {
            Some(orders) => {
                let mut cursor = orders.cursor.clone();
                let sent = world.get_resource::<Messages<GroupMove>>();
                let mut unread = orders.resumed.clone();
                if let Some(sent) = sent {
                    unread.extend(cursor.read(sent).cloned());
                }
                (unread, orders.sequence)
            }
            None => (Vec::new(), 0),
        };
        let state = StateRef {
            resources: resources_ref(world),
            entities,
            unread_requests,
            unread_results,
            unread_orders,
            group_sequence,
        };
        let payload =
            postcard::to_allocvec(&state).map_err(|error| SaveError::Encode(error.to_string()))?;
        let bytes = framed::frame(MAGIC, FORMAT_VERSION, &payload);
        Ok(Self { bytes })
    }

    /// The save as bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.bytes.clone()
    }

    /// Its bytes, without a copy.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// A save from bytes [`to_bytes`](Self::to_bytes) gave; they are
    /// checked when it is restored (or by [`entities`](Self::entities)).
    pub fn from_bytes(bytes: Vec<u8>) -> Self {
        Self { bytes }
    }

    /// The ids, as they were when it was saved, of the game's entities
    /// the save holds the plugin's state of (its units and maps; not the
    /// groups, which the plugin spawns again itself): each needs an entity
    /// in the world it is restored into.
    pub fn entities(&self) -> Result<Vec<Entity>, LoadError> {
        let state = self.decode()?;
        Ok(state
            .entities
            .iter()
            .filter(|entity| entity.shared_route.is_none())
            .map(|entity| entity.id)
            .collect())
    }

    /// Checks the header and decodes the payload.
    fn decode(&self) -> Result<State, LoadError> {
        let payload =
            framed::unframe(&self.bytes, MAGIC, FORMAT_VERSION).map_err(|error| match error {
                FrameError::Magic => LoadError::NotASave,
                FrameError::Version(found) => LoadError::Version { found },
                FrameError::Length { expected, got } => LoadError::Length { expected, got },
                FrameError::Corrupt => LoadError::Corrupt,
            })?;
        postcard::from_bytes(payload).map_err(|error| LoadError::Malformed(error.to_string()))
    }

    /// Loads the state into `world`, whose game entities the game has
    /// spawned again: `entities` gives each saved unit's and map's id now
    /// (keyed by its id in the save, as Bevy's scenes map them). The
    /// plugin's components on them and its resources are replaced by the
    /// saved ones, and the groups it had are spawned again. On an error
    /// the world is left as it was.
    pub fn restore(
        &self,
        world: &mut World,
        entities: &EntityHashMap<Entity>,
    ) -> Result<(), LoadError> {
        let mut state = self.decode()?;
        for saved in &mut state.entities {
            if let Some(grid) = &mut saved.grid
                && !grid.grid.restore_journal(grid.journal_from, &grid.journal)
            {
                let why = "a map's journal of edits does not fit its grid";
                return Err(LoadError::Malformed(why.to_string()));
            }
        }
        for saved in &state.entities {
            let mapped = entities.get(&saved.id).copied();
            let groups_own = saved.shared_route.is_some();
            if !groups_own && mapped.is_none_or(|entity| world.get_entity(entity).is_err()) {
                return Err(LoadError::Unmapped(saved.id));
            }
        }
        let mut ids = entities.clone();
        for saved in &state.entities {
            if saved.shared_route.is_some() && !ids.contains_key(&saved.id) {
                ids.insert(saved.id, world.spawn_empty().id());
            }
        }
        // An entity the state names that was gone when it was saved (a
        // request of a unit despawned in the frame, to be dropped) is one
        // that is gone here too.
        let mut gone: EntityHashMap<Entity> = EntityHashMap::default();
        let mut to = |old: Entity| match ids.get(&old) {
            Some(&new) => new,
            None => *gone.entry(old).or_insert_with(|| {
                let dead = world.spawn_empty().id();
                world.despawn(dead);
                dead
            }),
        };
        for saved in &mut state.entities {
            saved.id.remap(&mut to);
            saved.remap(&mut to);
        }
        state.resources.remap(&mut to);
        state.unread_requests.remap(&mut to);
        state.unread_results.remap(&mut to);
        state.unread_orders.remap(&mut to);

        for saved in &state.entities {
            strip(world, saved.id);
        }
        let mut groups = Vec::new();
        let mut ended = Vec::new();
        let mut saved_entities = Vec::with_capacity(state.entities.len());
        let mut placed_again = Vec::new();
        for mut saved in state.entities {
            let entity = saved.id;
            if let Some(members) = saved.members.take() {
                groups.push((entity, members));
            }
            if let Some(eq) = saved.ended {
                ended.push((entity, eq));
            }
            let fresh = (saved.request_fresh, saved.result_fresh);
            if saved.result.as_ref().is_some_and(|result| result.centres) {
                placed_again.push(entity);
            }
            saved.insert(world, entity);
            saved_entities.push((entity, fresh));
        }
        // Results' waypoints left out are placed again, on the maps
        // restored.
        for entity in placed_again {
            let placed =
                (world.get::<PathResult>(entity)).and_then(|result| centres(world, result));
            if let Some(placed) = placed
                && let Some(mut result) = world.get_mut::<PathResult>(entity)
            {
                result.bypass_change_detection().waypoints = placed;
            }
        }
        // Members join their group in the group's order.
        for (group, members) in groups {
            for unit in members {
                if world.get_entity(unit).is_ok() {
                    world.entity_mut(unit).insert(GroupMember { group });
                }
            }
        }
        state.resources.insert(world);
        let now = world.change_tick();
        let old = Tick::new(now.get().wrapping_sub(MAX_CHANGE_AGE));
        for (entity, fresh) in saved_entities {
            age_all(world, entity, old, fresh);
        }
        for (entity, eq) in ended {
            let request = world.entity(entity).get_change_ticks::<PathRequest>();
            let tick = match request {
                Some(ticks) if eq => ticks.changed,
                // Never the tick of a request, now or to come.
                _ => Tick::new(old.get().wrapping_sub(1)),
            };
            world.entity_mut(entity).insert(EndedOrder(tick));
            age::<EndedOrder>(world, entity, old, false);
        }
        if let Some(mut queue) = world.get_resource_mut::<PathfindingQueue>() {
            queue
                .bypass_change_detection()
                .resumed_mut()
                .extend(state.unread_requests);
        }
        if let Some(mut index) = world.get_resource_mut::<PathIndex>() {
            index
                .bypass_change_detection()
                .resumed
                .extend(state.unread_results);
        }
        if let Some(mut orders) = world.get_resource_mut::<GroupOrders>() {
            orders.resumed = state.unread_orders;
            orders.sequence = state.group_sequence;
        }
        // What was restored now reads as changed after these, for a save
        // taken before the next frame.
        let before = Tick::new(now.get().wrapping_sub(1));
        world.insert_resource(ChangeMarks {
            collect: before,
            index: before,
            orders: before,
            adopt: before,
        });
        Ok(())
    }
}
