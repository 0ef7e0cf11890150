//! A model-based test: seeded random sequences of what a game does (maps
//! spawned and despawned, requests by cell and by world position, with
//! priorities and both unreachable policies, replaced, removed and
//! despawned, single cells and rectangles edited near and far from the
//! searches, rally points (units close together sent one by one to one
//! goal, which share a search), group orders naming despawned, duplicated and non-mover
//! entities, levels swapped (a new `NavGrid`, of another size or of the
//! same version number, inserted over a map's), late orders to the goal of
//! a shared search just after an edit (when edits may have pinned it to a
//! copy), edits round the goals of requests waiting for a quick path, and
//! settings changed down to one slot, a budget of one node, ageing of
//! one frame and a zero time cap (one slice of work a frame), and up to no
//! limits at all (`usize::MAX` slots and lanes, `u32::MAX` nodes, restarts
//! and ageing)), checked after every frame:
//!
//! - the frame's expansions stay within its budget;
//! - every path delivered is legal on the grid version it was answered on,
//!   and a `Complete` one costs what Dijkstra says on that version;
//! - every path delivered ends where its request leads on the version it
//!   was answered on: the goal if it is reachable from the path's start,
//!   else the reachable cell nearest to it (quick paths included);
//! - no request the game made is answered from a version of its map older
//!   than the one it was made on;
//! - every path held is legal on the map as it is now, or flagged;
//! - every path held (final, provisional, shared, a group's) is flagged in
//!   the frame after a cell under it changed cost, and a path newly
//!   flagged has such a cell (`path_flags::FlagWatch`);
//! - no unit is answered twice in one frame;
//! - movers never step into a wall (units of 2×2 and 3×3 cells: never to
//!   where their footprint does not fit);
//! - no mover walks on, two frames running, a route whose legs between the
//!   corners still ahead an edit cut (a path found on an older copy of the
//!   map may be walked for the one frame before it is flagged);
//! - and, once the orders stop (the edits do not), every live request is
//!   answered within a bound.
//!
//! `FRONTIER_MODEL_SEEDS=N` (or `A..B`) runs more seeds than the CI's
//! few; `FRONTIER_MODEL_SEED=S` runs seed S alone.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use bevy::ecs::change_detection::Tick;
use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_frontier::checksum::FrontierChecksum;
use bevy_frontier::core::{Cell, MAX_UNIT_SIZE};
use bevy_frontier::movement::Steering;
use bevy_frontier::ordinal::Ordinal;
use bevy_frontier::pathfinding::PathTarget;
use bevy_frontier::pathfinding::{PathfindingQueue, PathfindingStats};
use bevy_frontier::prelude::*;

use crate::common::{Rng, app, assert_cut_routes_dropped, clutter, random_grid, seeds_from_env};
use crate::path_flags::{FlagWatch, Versions};
use crate::search_vs_dijkstra::{close, dijkstra};
use crate::unit_sizes::footprint_fits;

/// Frames of random orders; then up to this many frames of edits only, in
/// which every request must be answered in time, and as many more with no
/// edits, by the end of which nothing may wait.
const ORDER_FRAMES: u32 = 600;
const DRAIN_FRAMES: u32 = 1_500;
/// Frames a request may wait while the edits go on (searches of up to
/// 3,136 cells, restarted a few times, one slot, 60 nodes a frame), on
/// top of its share of the backlog the drain began with.
const REQUEST_BOUND: u32 = 1_000;
/// Frames the backlog adds per request waiting when the drain began: at
/// 60 nodes a frame the queue answers about one request per 20 frames on
/// these maps (seed 706 begins with 99 waiting, all made before the drain,
/// and answers 50 of them in its first 1,000 frames: the last of them
/// waits about 2,000 frames however fair the queue).
const FRAMES_PER_BACKLOG: u32 = 20;

struct Map {
    entity: Entity,
    width: u32,
    height: u32,
}

struct Model {
    rng: Rng,
    maps: Vec<Map>,
    units: Vec<Entity>,
    /// Entities despawned, to name in orders.
    dead: Vec<Entity>,
    ready: Arc<Mutex<Vec<Entity>>>,
    frame: u32,
    /// Answers checked, and of them `Complete` ones checked against
    /// Dijkstra: the test must have seen enough of both.
    answers: u32,
    optimal: u32,
    /// Legs of routes a wall cut, as the last frame left them.
    cut: Vec<(Entity, Vec2, Vec2)>,
    /// Requests the game made since the last frame.
    made: Vec<Entity>,
    /// Per unit, the request the game last made (its change tick) and the
    /// version of its map then: an answer to that request comes from that
    /// version or a newer one.
    asked: HashMap<Entity, (Tick, Entity, u64)>,
    /// Answers checked to end where their request leads.
    ends: u32,
    /// Every frame's `FrontierChecksum`.
    checksums: Vec<u64>,
    /// The size and costs of each map at each version the test left it at
    /// (answers are given on those versions only).
    versions: Versions,
    /// Every path held, flagged after a change under it and only then.
    flags: FlagWatch,
    /// Whether its maps are baked (with their coarse graphs), written to
    /// bytes and loaded back before they are spawned.
    baked: bool,
}

impl Model {
    /// A game of `seed`, its crowd visiting its units in the order they
    /// joined, or shuffled by `shuffle` (0: not), after other entities
    /// spawned and despawned (`cluttered`: the game's units get other
    /// entity ids).
    fn new(seed: u64, shuffle: u64, cluttered: bool, baked: bool) -> (App, Self) {
        let mut app = app();
        bevy_frontier::ordinal::shuffle_crowd_ranks(app.world_mut(), shuffle);
        app.init_resource::<FrontierChecksum>();
        if cluttered {
            clutter(&mut app, &mut Rng::new(seed ^ 0xC1));
        }
        // Frames of a fixed length, so a seed replays exactly.
        app.insert_resource(TimeUpdateStrategy::ManualDuration(
            std::time::Duration::from_millis(1_000 / 30),
        ));
        let ready = Arc::new(Mutex::new(Vec::new()));
        let sink = ready.clone();
        app.add_observer(move |event: On<PathReady>| sink.lock().unwrap().push(event.entity));
        let mut model = Self {
            rng: Rng::new(seed),
            maps: vec![],
            units: vec![],
            dead: vec![],
            ready,
            frame: 0,
            cut: Vec::new(),
            answers: 0,
            optimal: 0,
            made: Vec::new(),
            asked: HashMap::new(),
            ends: 0,
            checksums: Vec::new(),
            versions: Versions::default(),
            flags: FlagWatch::default(),
            baked,
        };
        model.spawn_map(&mut app, Vec2::ZERO);
        (app, model)
    }

    fn spawn_map(&mut self, app: &mut App, offset: Vec2) {
        let (width, height) = (16 + self.rng.below(40), 16 + self.rng.below(40));
        let walls = 10 + self.rng.below(25);
        let max_cost = if self.rng.below(2) == 0 { 1 } else { 4 };
        let grid = random_grid(&mut self.rng, width, height, walls, max_cost);
        let mut map = app
            .world_mut()
            .spawn(Transform::from_translation(offset.extend(0.0)));
        self.put_level(&mut map, grid);
        let entity = map.id();
        self.maps.push(Map {
            entity,
            width,
            height,
        });
    }

    /// Puts `grid` on a map entity: as it is, or in a game of baked maps
    /// baked with the graphs of every unit size the model orders, written
    /// to bytes and loaded back (graphs handed in as a game does, then
    /// edited like any map's).
    fn put_level(&self, map: &mut EntityWorldMut, grid: NavGrid) {
        if !self.baked {
            map.insert(grid);
            return;
        }
        #[cfg(feature = "serialize")]
        {
            use bevy_frontier::bake::BakedMap;
            use bevy_frontier::core::UnitKind;
            let kinds = [1, 2, 3].map(UnitKind::sized);
            let bytes = BakedMap::bake(grid, &kinds).to_bytes().unwrap();
            let baked = BakedMap::from_bytes(&bytes).unwrap();
            let graphs = baked.coarse_graphs();
            map.insert((baked.grid, graphs));
        }
        #[cfg(not(feature = "serialize"))]
        unreachable!("baked maps need the serialize feature: {}", grid.version());
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> Option<T> {
        (!items.is_empty()).then(|| items[self.rng.below(items.len() as u32) as usize])
    }

    /// A random cell of map `m`, sometimes outside it.
    fn cell(&mut self, m: usize) -> Cell {
        let map = &self.maps[m];
        let (w, h) = (map.width, map.height);
        if self.rng.below(20) == 0 {
            Cell::new(w + self.rng.below(5), self.rng.below(h))
        } else {
            Cell::new(self.rng.below(w), self.rng.below(h))
        }
    }

    fn request(&mut self, app: &App, m: usize) -> PathRequest {
        let goal = self.cell(m);
        let offset = app
            .world()
            .get::<Transform>(self.maps[m].entity)
            .unwrap()
            .translation
            .truncate();
        let mut request = match self.rng.below(4) {
            0 => PathRequest::new(offset + Vec2::new(goal.x as f32, goal.y as f32) + 0.3),
            _ => PathRequest::new(goal),
        };
        if self.rng.below(8) > 0 || self.maps.len() == 1 && self.rng.below(2) == 0 {
            request = request.on_map(self.maps[m].entity);
        }
        if self.rng.below(5) == 0 {
            request = request.from(self.cell(m));
        }
        if self.rng.below(3) == 0 {
            request = request.fail_if_unreachable();
        }
        if self.rng.below(6) == 0 {
            request = request.without_refinement();
        }
        request.with_priority(self.rng.below(5) as i32 - 2)
    }

    fn settings(&mut self) -> PathfindingSettings {
        let nodes_per_frame = [1, 7, 60, 500, 4096, u32::MAX][self.rng.below(6) as usize];
        let lanes = [1, 1, 2, 3, usize::MAX][self.rng.below(5) as usize];
        PathfindingSettings {
            nodes_per_frame,
            max_in_flight: [1, 2, 3, 16, usize::MAX][self.rng.below(5) as usize],
            aging_frames: [0, 1, 2, 30, u32::MAX][self.rng.below(5) as usize],
            max_restarts: [0, 1, 2, 3, u32::MAX][self.rng.below(5) as usize],
            jump_points: self.rng.below(3) > 0,
            max_expansions_per_request: [None, None, None, None, None, Some(300), Some(0)]
                [self.rng.below(7) as usize],
            chase_lookahead: [None, Some(1), Some(300), Some(500)][self.rng.below(4) as usize],
            search_lanes: lanes,
            threads: [0, 1, 2, usize::MAX][self.rng.below(4) as usize],
            share_goals: self.rng.below(4) > 0,
            heuristic_weight: if self.rng.below(10) == 0 {
                f32::NAN
            } else {
                1.0
            },
            refine: self.rng.below(4) > 0,
            // One slice of work a frame, the least a time cap allows.
            max_frame_time: (self.rng.below(5) == 0).then_some(std::time::Duration::ZERO),
            // The model's maps (at most 56×56) get their graphs at once.
            graph_take_up: default(),
        }
    }

    /// Edits map `m`: a cell or a small rectangle, wall, ground or rough.
    fn edit(&mut self, app: &mut App, m: usize) {
        let a = self.cell(m);
        let cost = [NavGrid::BLOCKED, 1, 1, 3][self.rng.below(4) as usize];
        let map = self.maps[m].entity;
        let mut grid = app.world_mut().get_mut::<NavGrid>(map).unwrap();
        if self.rng.below(3) == 0 {
            let b = Cell::new(a.x + self.rng.below(4), a.y + self.rng.below(4));
            let _ = grid.fill_rect(a, b, cost);
        } else {
            let _ = grid.set_cost(a, cost);
        }
    }

    /// A rally point: a few units standing close together, each sent alone
    /// to one goal in the same frame (they share a search).
    fn rally(&mut self, app: &mut App, m: usize) {
        let goal = self.cell(m);
        let at = self.cell(m);
        let map = self.maps[m].entity;
        let offset = app.world().get::<Transform>(map).unwrap().translation;
        for _ in 0..2 + self.rng.below(7) {
            let cell = Vec3::new(
                (at.x + self.rng.below(4)) as f32,
                (at.y + self.rng.below(4)) as f32,
                0.0,
            );
            let request = PathRequest::new(goal).on_map(map);
            let mut unit = app
                .world_mut()
                .spawn((Transform::from_translation(offset + cell), request));
            if self.rng.below(2) == 0 {
                unit.insert(Mover { speed: 3.0 });
            }
            if self.rng.below(5) == 0 {
                unit.insert(Footprint(2));
            }
            self.units.push(unit.id());
            self.made.push(unit.id());
        }
    }

    /// Edits near the running searches: beside their start cells (the
    /// goal of a shared search).
    fn edit_near_searches(&mut self, app: &mut App) {
        let queue = app.world().resource::<PathfindingQueue>();
        let starts: Vec<(Entity, Cell)> = queue
            .searches()
            .map(|(_, map, search)| (map, search.start()))
            .chain(
                queue
                    .shared_searches()
                    .map(|(map, _, flood)| (map, flood.source())),
            )
            .collect();
        let Some((map, start)) = self.pick(&starts) else {
            return;
        };
        let cell = Cell::new(
            (start.x + self.rng.below(5)).saturating_sub(2),
            (start.y + self.rng.below(5)).saturating_sub(2),
        );
        if cell == start {
            return;
        }
        let cost = [NavGrid::BLOCKED, 1][self.rng.below(2) as usize];
        if let Some(mut grid) = app.world_mut().get_mut::<NavGrid>(map) {
            let _ = grid.set_cost(cell, cost);
        }
    }

    /// A new level on map `m`: a `NavGrid` inserted over its own, of
    /// another size or the same, sometimes of the very version number the
    /// old one has.
    fn swap_level(&mut self, app: &mut App, m: usize) {
        let map = self.maps[m].entity;
        let old = app.world().get::<NavGrid>(map).unwrap().version();
        let (width, height) = if self.rng.below(2) == 0 {
            (self.maps[m].width, self.maps[m].height)
        } else {
            (16 + self.rng.below(40), 16 + self.rng.below(40))
        };
        let max_cost = if self.rng.below(2) == 0 { 1 } else { 4 };
        let walls = 10 + self.rng.below(25);
        let mut grid = random_grid(&mut self.rng, width, height, walls, max_cost);
        // Often brought to the old grid's version number by edits of its
        // own: the number alone cannot tell the two apart.
        while self.rng.below(4) > 0 && grid.version() < old {
            let cell = Cell::new(self.rng.below(width), self.rng.below(height));
            let cost = grid.cost(cell).unwrap();
            let _ = grid.set_cost(cell, if cost == 1 { 2 } else { 1 });
        }
        self.put_level(&mut app.world_mut().entity_mut(map), grid);
        let new = app.world().get::<NavGrid>(map).unwrap().version();
        assert!(new > old, "a level swapped in succeeds the old one");
        self.versions.swapped(map, new);
        self.maps[m].width = width;
        self.maps[m].height = height;
    }

    /// Units ordered to the goal of a shared search in flight right after
    /// an edit of its map (which may pin the search to a copy, or already
    /// has): they must not be answered from a map older than their order.
    fn late_rally(&mut self, app: &mut App) {
        let queue = app.world().resource::<PathfindingQueue>();
        let floods: Vec<(Entity, Cell)> = queue
            .shared_searches()
            .map(|(map, _, flood)| (map, flood.source()))
            .collect();
        let Some((map, goal)) = self.pick(&floods) else {
            return;
        };
        let Some(m) = self.maps.iter().position(|m| m.entity == map) else {
            return;
        };
        self.edit(app, m);
        let at = self.cell(m);
        let offset = app.world().get::<Transform>(map).unwrap().translation;
        for _ in 0..1 + self.rng.below(4) {
            let cell = Vec3::new(
                (at.x + self.rng.below(3)) as f32,
                (at.y + self.rng.below(3)) as f32,
                0.0,
            );
            let unit = app
                .world_mut()
                .spawn((
                    Transform::from_translation(offset + cell),
                    PathRequest::new(goal).on_map(map),
                ))
                .id();
            self.units.push(unit);
            self.made.push(unit);
        }
    }

    /// Edits round the goal of a request that may be waiting for its quick
    /// path: the goal walled off or opened up again.
    fn edit_near_goals(&mut self, app: &mut App) {
        let mut requests = app
            .world_mut()
            .query::<(&Ordinal, &PathRequest, Option<&PathResult>)>();
        let mut goals: Vec<(u64, Option<Entity>, Cell)> = requests
            .iter(app.world())
            .filter(|(.., result)| result.is_none_or(|r| !r.status.is_final()))
            .filter_map(|(ordinal, request, _)| match request.goal {
                PathTarget::Cell(cell) => Some((ordinal.joined(), request.map, cell)),
                PathTarget::World(_) | PathTarget::Entity(_) => None,
            })
            .collect();
        // In the order the game made its units, not the query's (which
        // follows whatever else was ever spawned).
        goals.sort_unstable_by_key(|&(joined, ..)| joined);
        let goals: Vec<(Option<Entity>, Cell)> = goals
            .into_iter()
            .map(|(_, map, cell)| (map, cell))
            .collect();
        let Some((map, goal)) = self.pick(&goals) else {
            return;
        };
        let Some(map) = map.or(self.maps.first().map(|m| m.entity)) else {
            return;
        };
        let cost = [NavGrid::BLOCKED, 1, 2][self.rng.below(3) as usize];
        if let Some(mut grid) = app.world_mut().get_mut::<NavGrid>(map) {
            let (x, y) = (goal.x.saturating_sub(1), goal.y.saturating_sub(1));
            let _ = grid.fill_rect(Cell::new(x, y), Cell::new(goal.x + 1, goal.y + 1), cost);
        }
    }

    /// One random thing a game does.
    fn act(&mut self, app: &mut App) {
        let m = self.rng.below(self.maps.len() as u32) as usize;
        match self.rng.below(24) {
            0..=4 => {
                let request = self.request(app, m);
                let at = self.cell(m);
                let offset = app
                    .world()
                    .get::<Transform>(self.maps[m].entity)
                    .unwrap()
                    .translation;
                let mut unit = app.world_mut().spawn((
                    Transform::from_translation(offset + Vec3::new(at.x as f32, at.y as f32, 0.0)),
                    request,
                ));
                if self.rng.below(2) == 0 {
                    unit.insert(Mover { speed: 3.0 });
                }
                // Vehicles of 2×2 and 3×3 cells, and now and then a size
                // no grid answers for.
                let size = match self.rng.below(40) {
                    0 => [0, MAX_UNIT_SIZE + 1][self.rng.below(2) as usize],
                    1..=8 => 2,
                    9..=12 => 3,
                    _ => 1,
                };
                if size != 1 {
                    unit.insert(Footprint(size));
                }
                self.units.push(unit.id());
                self.made.push(unit.id());
            }
            5..=7 => {
                if let Some(unit) = self.pick(&self.units.clone()) {
                    let request = self.request(app, m);
                    app.world_mut().entity_mut(unit).insert(request);
                    self.made.push(unit);
                }
            }
            8 => {
                if let Some(unit) = self.pick(&self.units.clone()) {
                    app.world_mut().entity_mut(unit).remove::<PathRequest>();
                }
            }
            9 => {
                if let Some(unit) = self.pick(&self.units.clone()) {
                    app.world_mut().despawn(unit);
                    self.units.retain(|&u| u != unit);
                    self.dead.push(unit);
                }
            }
            10..=14 => self.edit(app, m),
            15 => self.edit_near_searches(app),
            16 => {
                let mut members = vec![];
                for _ in 0..self.rng.below(12) {
                    let pool = match self.rng.below(6) {
                        0 => self.dead.clone(),
                        _ => self.units.clone(),
                    };
                    members.extend(self.pick(&pool));
                }
                if let Some(&first) = members.first() {
                    members.push(first);
                }
                let goal = self.cell(m);
                let mut order = GroupMove::new(members, goal);
                order.map = Some(self.maps[m].entity);
                order.columns = self.rng.below(5) as u8;
                order.column_spacing = [0.6, f32::NAN, -1.0, 3.0][self.rng.below(4) as usize];
                order.max_spread = [24.0, f32::NAN, 0.0][self.rng.below(3) as usize];
                order.splice_steps = self.rng.below(20);
                app.world_mut().write_message(order);
            }
            17 => {
                let settings = self.settings();
                app.insert_resource(settings);
            }
            19 => self.rally(app, m),
            // A level now and then.
            20 if self.rng.below(4) == 0 => self.swap_level(app, m),
            21 => self.late_rally(app),
            22 | 23 => self.edit_near_goals(app),
            18 => {
                if self.maps.len() == 1 {
                    self.spawn_map(app, Vec2::new(200.0, -50.0));
                } else {
                    let map = self.maps.pop().unwrap();
                    app.world_mut().despawn(map.entity);
                }
            }
            _ => {}
        }
    }

    /// Runs a frame and checks everything the module promises.
    fn frame(&mut self, app: &mut App, walkers: &mut HashMap<Entity, Vec2>) {
        // Remember the grids as the frame will see them.
        self.versions.note(app.world_mut());
        // The game's requests of this frame, with their maps' versions now.
        for unit in std::mem::take(&mut self.made) {
            let Some(request) = app
                .world()
                .get_entity(unit)
                .ok()
                .and_then(|unit| unit.get_ref::<PathRequest>())
            else {
                continue;
            };
            let map = request.map.or(match self.maps.as_slice() {
                [only] => Some(only.entity),
                _ => None,
            });
            let version =
                map.and_then(|map| Some((map, app.world().get::<NavGrid>(map)?.version())));
            if let Some((map, version)) = version {
                self.asked
                    .insert(unit, (request.last_changed(), map, version));
            }
        }
        let before = app.world().read_change_tick();
        app.update();
        let checksum = app.world().resource::<FrontierChecksum>().frame();
        self.checksums.push(checksum);
        self.frame += 1;
        let frame = self.frame;
        assert_cut_routes_dropped(app.world_mut(), &mut self.cut, || format!("frame {frame}"));
        let world = app.world_mut();
        let budget = world.resource::<PathfindingSettings>().nodes_per_frame;
        let stats = world.resource::<PathfindingStats>();
        // Expansions and the reading back of shared searches' paths.
        let spent = stats.frame_expansions + stats.frame_reading;
        assert!(spent <= budget as u64, "frame {frame}: {spent} > {budget}");

        let mut ready = std::mem::take(&mut *self.ready.lock().unwrap());
        ready.sort();
        for pair in ready.windows(2) {
            assert_ne!(pair[0], pair[1], "frame {frame}: answered twice");
        }
        for &unit in &ready {
            let Some(answer) = world.get::<PathResult>(unit) else {
                continue; // despawned by a command this frame
            };
            let changed = world
                .entity(unit)
                .get_ref::<PathResult>()
                .unwrap()
                .last_changed();
            assert!(changed.is_newer_than(before, world.read_change_tick()));
            if let Some(&(tick, map, version)) = self.asked.get(&unit)
                && answer.map == Some(map)
                && answer.status.has_path()
                && world
                    .entity(unit)
                    .get_ref::<PathRequest>()
                    .is_some_and(|request| request.last_changed() == tick)
            {
                assert!(
                    answer.grid_version >= version,
                    "frame {frame}: {unit}'s request, made on version {version}, answered \
                     from version {} ({:?})",
                    answer.grid_version,
                    answer.status
                );
            }
            self.check_answer(world, unit, answer, frame);
        }

        // Paths held are legal now or flagged.
        let mut results = world.query::<(Entity, &PathResult)>();
        for (unit, answer) in results.iter(world) {
            let Some(grid) = answer.map.and_then(|map| world.get::<NavGrid>(map)) else {
                continue;
            };
            if answer.status.has_path() && !answer.invalidated {
                for step in answer.cells.windows(2) {
                    let legal = match answer.size {
                        1 => grid.can_step(step[0], step[1]),
                        size => footprint_step_legal(grid, step[0], step[1], size),
                    };
                    assert!(
                        legal,
                        "frame {frame}: {unit}'s path steps {} -> {} unflagged \
                         ({:?}, answered on version {} of {}, {} frames waited)",
                        step[0],
                        step[1],
                        answer.status,
                        answer.grid_version,
                        grid.version(),
                        answer.frames_waited,
                    );
                }
            }
        }

        // Paths held are flagged after a cell under them changed, and
        // only then.
        self.flags.check(world, &self.versions, frame);

        // Movers never step into a wall cell from ground (one walled in
        // may walk out through walls), on the grid the frame moved them on.
        let mut movers = world
            .query_filtered::<(Entity, &Transform, &Steering, Option<&Footprint>), With<Mover>>();
        let Some(map) = self.maps.first() else {
            return;
        };
        let grid = world.get::<NavGrid>(map.entity).unwrap();
        // The anchor of a footprint centred at `at`, in f64 as the plugin
        // computes it: in f32, a unit resting against a wall at y = 0.49999997
        // would round into the wall's cell.
        let cell_of = |at: Vec2, size: u8| {
            let (at, back) = (at.as_dvec2(), (size as f64 - 1.0) / 2.0);
            let (x, y) = ((at.x - back + 0.5).floor(), (at.y - back + 0.5).floor());
            (x >= 0.0 && y >= 0.0)
                .then(|| Cell::new(x as u32, y as u32))
                .filter(|&cell| grid.in_bounds(cell))
        };
        for (unit, transform, steering, footprint) in movers.iter(world) {
            let at = transform.translation.truncate();
            assert!(at.is_finite(), "frame {frame}: {unit} at {at}");
            let size = footprint.map_or(1, |f| f.0).clamp(1, MAX_UNIT_SIZE);
            if let Some(was) = walkers.insert(unit, at)
                && steering.map().is_none_or(|m| m == map.entity)
                && let (Some(from), Some(to)) = (cell_of(was, size), cell_of(at, size))
            {
                let fits = |cell: Cell| footprint_fits(grid, cell, size as u32);
                assert!(
                    from == to || !fits(from) || fits(to),
                    "frame {frame}: {unit} of size {size} walked from {from} to {to}, \
                     where it does not fit"
                );
            }
        }
    }

    fn check_answer(&mut self, world: &World, unit: Entity, answer: &PathResult, frame: u32) {
        self.answers += 1;
        if !answer.status.has_path() {
            return;
        }
        let Some(map) = self.maps.iter().find(|m| Some(m.entity) == answer.map) else {
            return;
        };
        let version = self
            .versions
            .at(map.entity, answer.grid_version)
            .unwrap_or_else(|| panic!("frame {frame}: answered on unknown version"));
        // A unit bigger than a cell walks the grid of its footprints.
        let grid = version.grid(answer.size);
        let (first, last) = (answer.cells[0], *answer.cells.last().unwrap());
        // A quick route's first stretch ends short of the goal.
        if let Some(request) = world.get::<PathRequest>(unit)
            && answer.status != PathStatus::Partial
            && !answer.ends_short
        {
            let offset = world
                .get::<Transform>(map.entity)
                .unwrap()
                .translation
                .truncate();
            let end = expected_end(&grid, answer.size, request, offset, first);
            assert_eq!(
                Some(last),
                end,
                "frame {frame}: {unit}'s {:?} path from {first} ends at {last}, but its \
                 request ({:?}) leads to {end:?} on version {}",
                answer.status,
                request.goal,
                answer.grid_version
            );
            self.ends += 1;
        }
        let mut cost = 0.0;
        for step in answer.cells.windows(2) {
            cost += grid
                .step_cost(step[0], step[1])
                .unwrap_or_else(|| panic!("frame {frame}: {unit} illegal step {step:?}"));
        }
        assert!(
            close(cost, answer.cost as f64),
            "frame {frame}: {unit} cost {} but its steps {cost}: {:?} size {} {} cells, version {}",
            answer.cost,
            answer.status,
            answer.size,
            answer.cells.len(),
            answer.grid_version
        );
        if answer.status == PathStatus::Complete {
            let best = dijkstra(&grid, first, last).unwrap();
            assert!(
                close(best, answer.cost as f64) || (answer.cost as f64 - best).abs() < 1e-3,
                "frame {frame}: {unit} cost {} but Dijkstra {best}",
                answer.cost
            );
            self.optimal += 1;
        }
        let _ = world;
    }
}

fn run(seed: u64) {
    run_game(seed, 0, false);
}

/// Seed `seed`'s game with the crowd's order shuffled by `shuffle`, after
/// other entities if `cluttered`; every frame's `FrontierChecksum`.
fn run_game(seed: u64, shuffle: u64, cluttered: bool) -> Vec<u64> {
    play(Model::new(seed, shuffle, cluttered, false), seed)
}

/// Plays a model game to its end; every frame's `FrontierChecksum`.
fn play((mut app, mut model): (App, Model), seed: u64) -> Vec<u64> {
    let mut walkers = HashMap::new();
    // `FRONTIER_MODEL_FRAMES`: longer games (what builds up over a long
    // game shows only in one).
    let order_frames = std::env::var("FRONTIER_MODEL_FRAMES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(ORDER_FRAMES);
    for _ in 0..order_frames {
        for _ in 0..model.rng.below(4) {
            model.act(&mut app);
        }
        model.frame(&mut app, &mut walkers);
    }
    // No new orders; a busy queue, and edits every frame, some beside the
    // searches.
    app.insert_resource(PathfindingSettings {
        nodes_per_frame: 60,
        max_in_flight: 1,
        aging_frames: 2,
        max_restarts: model.rng.below(4),
        ..default()
    });
    // Every request made now is answered within a bound, though the edits
    // go on (and keep cutting paths, which movers ask for again).
    let mut pending: HashMap<Entity, (Tick, u32)> = HashMap::new();
    let bound = REQUEST_BOUND + FRAMES_PER_BACKLOG * unanswered(&mut app).len() as u32;
    for frame in 0..DRAIN_FRAMES {
        let m = model.rng.below(model.maps.len() as u32) as usize;
        model.edit(&mut app, m);
        model.edit_near_searches(&mut app);
        model.frame(&mut app, &mut walkers);
        let waiting = unanswered(&mut app);
        pending.retain(|unit, (tick, _)| waiting.iter().any(|&(u, t)| u == *unit && t == *tick));
        for (unit, tick) in waiting {
            let (_, since) = pending.entry(unit).or_insert((tick, frame));
            assert!(
                frame - *since <= bound,
                "seed {seed}: {unit}'s request unanswered for {bound} frames under edits"
            );
        }
    }
    // And once the edits stop, the queue empties.
    for _ in 0..DRAIN_FRAMES {
        model.frame(&mut app, &mut walkers);
        if unanswered(&mut app).is_empty() {
            eprintln!(
                "seed {seed}: {} frames, {} answers, {} optimal paths checked",
                model.frame, model.answers, model.optimal
            );
            assert!(model.answers > 100 && model.optimal > 30 && model.ends > 100);
            return model.checksums;
        }
    }
    for (unit, _) in unanswered(&mut app) {
        let world = app.world();
        eprintln!(
            "{unit}: {:?} {:?} {:?} {:?}",
            world.get::<PathRequest>(unit),
            world
                .get::<PathResult>(unit)
                .map(|r| (r.status, r.invalidated)),
            world.get::<Steering>(unit),
            world.get::<Mover>(unit),
        );
    }
    let world = app.world();
    panic!(
        "seed {seed}: requests still unanswered {DRAIN_FRAMES} frames after the last edit; queue {} waiting, {} in flight",
        world.resource::<PathfindingQueue>().queued(),
        world.resource::<PathfindingQueue>().in_flight()
    );
}

/// Units whose request has no answer yet, with the tick it was made at.
fn unanswered(app: &mut App) -> Vec<(Entity, Tick)> {
    let world = app.world_mut();
    let now = world.read_change_tick();
    let mut requests = world.query::<(Entity, Ref<PathRequest>, Option<Ref<PathResult>>)>();
    requests
        .iter(world)
        .filter(|(_, request, result)| {
            result.as_ref().is_none_or(|r| {
                // A quick path is not the answer: the real one follows.
                r.status == PathStatus::Provisional
                    || !r.last_changed().is_newer_than(request.last_changed(), now)
            })
        })
        .map(|(unit, request, _)| (unit, request.last_changed()))
        .collect()
}

/// The seeds are dealt out to four tests (seed `s` to quarter `s % 4`),
/// which the test harness runs side by side: in one test they were the
/// suite's longest by far, and kept a core busy after the rest had ended.
///
/// One seed in eight is played twice, the second time after other
/// entities were spawned and despawned (every unit gets another entity
/// id): every frame's checksum must be the same.
fn run_quarter(quarter: u64) {
    let seeds = seeds_from_env("FRONTIER_MODEL_SEEDS", "FRONTIER_MODEL_SEED", 100);
    for seed in seeds.filter(|seed| seed % 4 == quarter) {
        if seed % 8 == quarter {
            let plain = run_game(seed, 0, false);
            let cluttered = run_game(seed, 0, true);
            assert_same_game(seed, &plain, &cluttered);
        } else {
            run(seed);
        }
    }
}

/// Two plays of one seed's game gave the same checksum every frame.
fn assert_same_game(seed: u64, plain: &[u64], other: &[u64]) {
    let parted = plain.iter().zip(other).position(|(a, b)| a != b);
    assert!(
        parted.is_none() && plain.len() == other.len(),
        "seed {seed}: the game played after other entities parts on frame {parted:?}"
    );
}

#[test]
fn random_games_are_answered_legally_and_in_time_quarter_1() {
    run_quarter(0);
}

#[test]
fn random_games_are_answered_legally_and_in_time_quarter_2() {
    run_quarter(1);
}

#[test]
fn random_games_are_answered_legally_and_in_time_quarter_3() {
    run_quarter(2);
}

#[test]
fn random_games_are_answered_legally_and_in_time_quarter_4() {
    run_quarter(3);
}

/// The model's games on baked maps (feature `serialize`): every map and
/// every level swapped in is baked with its coarse graphs, written to
/// bytes and loaded back, then played and edited as any other (a baked
/// map once panicked at its first edit). CI runs it in its all-features
/// step; `FRONTIER_BAKED_SEEDS=N` (or `A..B`, `FRONTIER_BAKED_SEED=S`)
/// runs more.
#[cfg(feature = "serialize")]
#[test]
fn random_games_on_baked_maps_are_answered_legally_and_in_time() {
    for seed in seeds_from_env("FRONTIER_BAKED_SEEDS", "FRONTIER_BAKED_SEED", 16) {
        play(Model::new(seed, 0, false, true), seed);
    }
}

/// Seeds that found faults, kept whatever `FRONTIER_MODEL_SEEDS` says and
/// however many seeds CI runs: a unit standing in a wall could not leave
/// it (90, the first seed to catch the old ageing rule too); a waiting job
/// joined a shared search pinned to a newer copy of its map (187); a job
/// planned twice in one frame by the quick searches (261); a group handed
/// a unit it no longer held its slot over a new order (462); a backlog of
/// 99 requests at 60 nodes a frame, which set each request's bound (706);
/// and group members walking a shared leg a wall had cut two frames
/// before: with the units visited in entity order rather than query order
/// (7), and on a group's head route (1034); both pass in the order the
/// plugin visits units today. A seed replays its game only while the model
/// draws the same operations, so a change to the model's draws moves these
/// games on: they are kept as seeds that once mattered.
#[test]
fn seeds_that_found_faults_still_pass() {
    for seed in [7, 90, 187, 261, 462, 706, 1034] {
        run(seed);
    }
}

/// The two group faults that showed only in some orders of visiting the
/// crowd (7, 1034) pass whatever the order: the crowd's order shuffled
/// four ways. Seed 1034 with the second shuffle found the cause: a group
/// whose head flood ended frames before its tail flood handed out head
/// routes checked only against the edits after the tail's end, so a wall
/// put up in between went unseen. (Forty ways each passed after the fix:
/// `FRONTIER_MODEL_SHUFFLES=40`.)
#[test]
fn seeds_that_found_order_faults_pass_in_any_order() {
    let shuffles: u64 = std::env::var("FRONTIER_MODEL_SHUFFLES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4);
    for seed in [7, 1034] {
        for shuffle in 1..=shuffles {
            run_game(seed, shuffle, false);
        }
    }
}

/// Where a path for `request`, starting at `start` on `grid` (the grid a
/// unit of `size` walks, on a map placed at `offset`), must end: its goal's
/// anchor if `start` reaches it, else the reachable anchor nearest to it
/// (`None`: no path, or a goal off the map).
fn expected_end(
    grid: &NavGrid,
    size: u8,
    request: &PathRequest,
    offset: Vec2,
    start: Cell,
) -> Option<Cell> {
    let back = (size as i64 - 1) / 2;
    let (x, y) = match request.goal {
        PathTarget::Cell(cell) => ((cell.x as i64 - back).max(0), (cell.y as i64 - back).max(0)),
        PathTarget::World(at) => {
            let local = (at - offset).as_dvec2() - glam_back(size);
            (
                (local.x + 0.5).floor() as i64,
                (local.y + 0.5).floor() as i64,
            )
        }
        // The model orders no chases.
        PathTarget::Entity(_) => return None,
    };
    let goal = Cell::new(u32::try_from(x).ok()?, u32::try_from(y).ok()?);
    if !grid.in_bounds(goal) {
        return None;
    }
    if grid.connected(start, goal) {
        return Some(goal);
    }
    grid.nearest_walkable((goal.x as i64, goal.y as i64), grid.region(start))
}

/// From a footprint's centre to its anchor cell's centre, in cells.
fn glam_back(size: u8) -> bevy::math::DVec2 {
    bevy::math::DVec2::splat((size as f64 - 1.0) / 2.0)
}

/// Whether a unit of `size` may step from anchor `a` to the adjacent `b`,
/// from the rules alone: its footprint fits at both, and for a diagonal at
/// both anchors beside it.
fn footprint_step_legal(grid: &NavGrid, a: Cell, b: Cell, size: u8) -> bool {
    let fits = |cell: Cell| footprint_fits(grid, cell, size as u32);
    let diagonal = a.x != b.x && a.y != b.y;
    fits(a) && fits(b) && (!diagonal || fits(Cell::new(a.x, b.y)) && fits(Cell::new(b.x, a.y)))
}
