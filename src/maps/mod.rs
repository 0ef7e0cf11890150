//! Maps as the ECS sees them: where a [`NavGrid`]'s cells sit in the world,
//! what can be walked in a straight line, and the [`Maps`] system param
//! that finds a map and views it.
//!
//! A map entity carries a [`NavGrid`], a [`GridLayout`] (cell size and the
//! centre of cell (0, 0), in the map's local space) and usually a
//! `Transform` placing the map in the world. With the `tilemap` feature the
//! layout of a bevy_ecs_tilemap map is derived from the tilemap's own
//! components, so both agree on which tile a point is in.
//!
//! This is where the Bevy-free core meets the ECS: [`NavGrid`] becomes a
//! `Component` here (with `GridLayout` registered as required by the
//! plugins), and [`Cell`] becomes `Reflect`.

use bevy::ecs::component::{Mutable, StorageType};
use bevy::ecs::entity::{Entities, EntityHashMap};
use bevy::ecs::lifecycle::ComponentHook;
use bevy::ecs::query::QueryFilter;
use bevy::ecs::system::SystemParam;
use bevy::math::{DAffine2, DVec2};
use bevy::prelude::*;

use crate::core::{Cell, ClassId, MAX_UNIT_SIZE, NavGrid, SizeClass, Terrain, UnitKind};

/// The grid lives on its map entity. The derive would have to sit on the
/// core type, so the impl is written out here instead.
///
/// A `NavGrid` inserted over another (a game loading a level) is a new
/// map, whatever version number it carries: its hooks make it the old
/// grid's successor ([`NavGrid::supersede`]), exactly as if the old one had
/// been [replaced](NavGrid::replace) in place, so every search, path,
/// route and copy made on the old grid sees that everything changed.
impl Component for NavGrid {
    const STORAGE_TYPE: StorageType = StorageType::Table;
    type Mutability = Mutable;

    fn on_discard() -> Option<ComponentHook> {
        Some(|mut world, context| {
            let Some(version) = world.get::<NavGrid>(context.entity).map(NavGrid::version) else {
                return;
            };
            if let Some(mut last) = world.get_resource_mut::<LastGridVersions>() {
                last.0.insert(context.entity, version);
            }
        })
    }

    fn on_insert() -> Option<ComponentHook> {
        Some(|mut world, context| {
            let previous = world
                .get_resource_mut::<LastGridVersions>()
                .and_then(|mut last| last.0.remove(&context.entity));
            if let (Some(previous), Some(mut grid)) =
                (previous, world.get_mut::<NavGrid>(context.entity))
            {
                grid.supersede(previous);
            }
        })
    }
}

/// The version of the last grid each map entity held before it was
/// replaced or removed, so that a grid inserted after it succeeds it.
/// Entries of despawned entities are dropped every frame.
#[derive(Resource, Default)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub(crate) struct LastGridVersions(EntityHashMap<u64>);

/// Drops what [`LastGridVersions`] holds for despawned entities.
pub(crate) fn forget_despawned_maps(mut last: ResMut<LastGridVersions>, entities: &Entities) {
    if !last.0.is_empty() {
        last.0.retain(|&entity, _| entities.contains(entity));
    }
}

bevy::reflect::impl_reflect!(
    #[reflect(Debug, Default, PartialEq, Hash, Clone)]
    #[type_path = "bevy_frontier::core::grid"]
    struct Cell {
        x: u32,
        y: u32,
    }
);

bevy::reflect::impl_reflect!(
    #[reflect(Debug, Default, PartialEq, Hash, Clone)]
    #[type_path = "bevy_frontier::core::classes"]
    struct Terrain(u8);
);

bevy::reflect::impl_reflect_opaque!((in bevy_frontier::core::classes) ClassId(
    Debug, Default, PartialEq, Hash, Clone
));

/// Registers the map types once for any plugin of the crate: `Cell` and
/// `GridLayout` for reflection, and `GridLayout` as required by `NavGrid`.
pub(crate) fn register(app: &mut App) {
    app.register_type::<GridLayout>()
        .register_type::<Cell>()
        .register_type::<ClassId>()
        .register_type::<Terrain>()
        .init_resource::<LastGridVersions>();
    // Fails harmlessly when another plugin registered it first.
    let _ = app.try_register_required_components::<NavGrid, GridLayout>();
}

/// Warns once per change about a map that cannot place cells (see
/// [`MapView::is_valid`]); its requests are answered
/// `InvalidReason::BadMapPlacement` and its units stand still.
#[allow(clippy::type_complexity)]
pub(crate) fn warn_bad_placement(
    maps: Query<
        (Entity, &NavGrid, &GridLayout, Option<&Transform>),
        Or<(Changed<GridLayout>, Changed<Transform>, Added<NavGrid>)>,
    >,
) {
    for (map, grid, layout, transform) in &maps {
        if !MapView::new(grid, layout, transform).is_valid() {
            warn!(
                "bevy_frontier: map {map} cannot place cells: GridLayout {layout:?} needs a finite, non-zero cell size, and its Transform must be finite and invertible"
            );
        }
    }
}

/// `x` rounded down, for finite `x`: a cast and a compare (`f64::floor` is
/// a call into libm on a baseline x86-64 target, and this runs for every
/// unit several times a frame). Beyond ±2⁵² every `f64` is whole already.
#[inline]
fn floor(x: f64) -> f64 {
    if x.abs() >= 4_503_599_627_370_496.0 {
        return x;
    }
    let whole = x as i64 as f64;
    if whole > x { whole - 1.0 } else { whole }
}

/// How a grid's cells map to the map entity's local space: cell `(x, y)` is
/// centred at `origin + (x, y) × cell_size` and spans half a cell each way.
#[derive(Component, Clone, Copy, Debug, PartialEq, Reflect)]
#[reflect(Component)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub struct GridLayout {
    /// Centre of cell (0, 0), in the map's local space.
    pub origin: Vec2,
    /// Width and height of one cell.
    pub cell_size: Vec2,
}

impl Default for GridLayout {
    fn default() -> Self {
        Self {
            origin: Vec2::ZERO,
            cell_size: Vec2::ONE,
        }
    }
}

/// Where a world position falls on a grid.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CellLookup {
    /// Inside the grid, in this cell.
    Inside(Cell),
    /// Outside the grid, at these (possibly negative) cell coordinates.
    Outside(i64, i64),
    /// The position is not a finite number, or the map cannot place cells
    /// ([`MapView::is_valid`] is false).
    NonFinite,
}

impl GridLayout {
    /// A layout with square cells of `size`, cell (0, 0) centred at `origin`.
    pub fn new(origin: Vec2, size: f32) -> Self {
        Self {
            origin,
            cell_size: Vec2::splat(size),
        }
    }

    /// The centre of `cell` in the map's local space.
    pub fn cell_center(&self, cell: Cell) -> Vec2 {
        self.origin + Vec2::new(cell.x as f32, cell.y as f32) * self.cell_size
    }

    /// Whether the layout can place cells: a finite, non-zero cell size and
    /// a finite origin.
    pub fn is_valid(&self) -> bool {
        self.origin.is_finite()
            && self.cell_size.is_finite()
            && self.cell_size.cmpne(Vec2::ZERO).all()
    }

    /// The cell coordinates of a local position, which may be outside the
    /// grid; `None` if it is not finite or the layout is degenerate.
    pub fn local_to_cell(&self, local: Vec2) -> Option<(i64, i64)> {
        self.local_to_cell_f64(local.as_dvec2())
    }

    /// [`GridLayout::local_to_cell`] in double precision, so that a finite
    /// position however far out gives finite (clamped) cell coordinates.
    fn local_to_cell_f64(&self, local: DVec2) -> Option<(i64, i64)> {
        let grid = self.local_to_grid(local)?;
        let floored = DVec2::new(floor(grid.x), floor(grid.y));
        // Beyond ±2⁶² the grid is out of reach anyway; clamping keeps the
        // conversion total.
        const LIMIT: f64 = 4.0e18;
        floored.is_finite().then(|| {
            (
                floored.x.clamp(-LIMIT, LIMIT) as i64,
                floored.y.clamp(-LIMIT, LIMIT) as i64,
            )
        })
    }

    /// A local position in grid units: cell `(x, y)` spans `x .. x + 1`
    /// by `y .. y + 1`. `None` if it is not finite or the layout is
    /// degenerate.
    fn local_to_grid(&self, local: DVec2) -> Option<DVec2> {
        if !self.is_valid() || !local.is_finite() {
            return None;
        }
        Some((local - self.origin.as_dvec2()) / self.cell_size.as_dvec2() + DVec2::splat(0.5))
    }
}

/// A map as the pathfinder sees it: its grid, layout and placement in the
/// world. Converts between world positions and cells, and says what a unit
/// can walk in a straight line.
///
/// A view is for units of one size and movement class
/// ([`MapView::for_kind`], [`MapView::for_size`]; size 1 of the default
/// class unless said). For a unit of size `k` the cells it speaks of are anchors (see
/// [`SizeClass`]): a world position is the centre of the unit's `k × k`
/// footprint, [`MapView::world_to_cell`] gives the anchor of the footprint
/// centred there and [`MapView::cell_to_world`] the centre of an anchor's
/// footprint, and walking checks that the footprint fits.
#[derive(Clone, Copy, Debug)]
pub struct MapView<'a> {
    /// The grid.
    pub grid: &'a NavGrid,
    /// The cells' layout in the map's local space.
    pub layout: &'a GridLayout,
    /// The size of the units this view is for.
    size: u8,
    /// The grid as units of that size and class see it.
    size_class: SizeClass<'a>,
    /// The map entity's transform (identity when it has none).
    transform: Transform,
    /// World (z = 0) to the map's local space (x, y), worked out once per
    /// view.
    to_local: DAffine2,
    /// Whether the layout and transform can place cells.
    valid: bool,
}

impl<'a> MapView<'a> {
    /// A view of a map entity's components.
    pub fn new(grid: &'a NavGrid, layout: &'a GridLayout, transform: Option<&Transform>) -> Self {
        let transform = transform.copied().unwrap_or_default();
        let affine = transform.compute_affine();
        let valid = layout.is_valid() && affine.is_finite() && affine.matrix3.determinant() != 0.0;
        let to_local = if valid {
            let inverse = affine.as_daffine3().inverse();
            DAffine2::from_cols(
                inverse.matrix3.x_axis.truncate(),
                inverse.matrix3.y_axis.truncate(),
                inverse.translation.truncate(),
            )
        } else {
            DAffine2::IDENTITY
        };
        Self {
            grid,
            layout,
            size: 1,
            size_class: grid.size_class(1),
            transform,
            to_local,
            valid,
        }
    }

    /// This view for units of `size × size` cells (clamped to
    /// `1..=MAX_UNIT_SIZE`), of the movement class it was for.
    pub fn for_size(self, size: u8) -> Self {
        let class = self.size_class.class();
        self.for_kind(UnitKind::new(class, size))
    }

    /// This view for units of `kind`: its size (clamped to
    /// `1..=MAX_UNIT_SIZE`) and movement class (the default class for one
    /// the grid does not have: see [`MapView::knows`]).
    pub fn for_kind(mut self, kind: UnitKind) -> Self {
        self.size = kind.size.clamp(1, MAX_UNIT_SIZE);
        self.size_class = self.grid.kind_view(UnitKind::new(kind.class, self.size));
        self
    }

    /// Whether the grid has movement class `kind.class` (every grid has
    /// class 0).
    pub fn knows(&self, kind: UnitKind) -> bool {
        kind.class.table_row() < self.grid.class_count()
    }

    /// The size of the units this view is for.
    pub fn size(&self) -> u8 {
        self.size
    }

    /// The movement class and size of the units this view is for.
    pub fn kind(&self) -> UnitKind {
        self.size_class.kind()
    }

    /// The grid as the units this view is for see it: where they fit, and
    /// which anchors they can reach. (Named for the size class it is, as
    /// [`NavGrid::size_class`] is: a "class" alone is a movement class.)
    pub fn size_class(&self) -> SizeClass<'a> {
        self.size_class
    }

    /// The anchor of the footprint centred on `cell`'s centre, for the
    /// units this view is for (`cell` itself for size 1).
    pub fn anchor_of(&self, cell: Cell) -> Cell {
        let back = (self.size as u32 - 1) / 2;
        Cell::new(cell.x.saturating_sub(back), cell.y.saturating_sub(back))
    }

    /// From a footprint's centre to the centre of its anchor cell, in the
    /// map's local space.
    fn footprint_offset(&self) -> Vec2 {
        self.layout.cell_size * (self.size as f32 - 1.0) / 2.0
    }
    /// The map entity's transform (identity when it has none).
    pub fn transform(&self) -> &Transform {
        &self.transform
    }

    /// Whether the map can place cells in the world: a valid layout (see
    /// [`GridLayout::is_valid`]) and a finite, invertible transform.
    pub fn is_valid(&self) -> bool {
        self.valid
    }

    /// The cell a world position falls in. Worked out in double precision,
    /// so a finite position far outside the map is
    /// [`Outside`](CellLookup::Outside), never `NonFinite`.
    pub fn world_to_cell(&self, world: Vec2) -> CellLookup {
        if !world.is_finite() || !self.valid {
            return CellLookup::NonFinite;
        }
        match self.layout.local_to_cell_f64(self.anchor_local(world)) {
            None => CellLookup::NonFinite,
            Some((x, y)) => match (u32::try_from(x), u32::try_from(y)) {
                (Ok(cx), Ok(cy)) if self.grid.in_bounds(Cell::new(cx, cy)) => {
                    CellLookup::Inside(Cell::new(cx, cy))
                }
                _ => CellLookup::Outside(x, y),
            },
        }
    }

    /// A world position in the map's local space, moved from a footprint's
    /// centre to its anchor cell's centre.
    fn anchor_local(&self, world: Vec2) -> DVec2 {
        self.to_local.transform_point2(world.as_dvec2()) - self.footprint_offset().as_dvec2()
    }

    /// A world position in grid units of the map: cell `(x, y)` spans
    /// `x .. x + 1` by `y .. y + 1`. `None` if it is not finite or the map
    /// cannot place cells.
    pub(crate) fn world_to_grid(&self, world: Vec2) -> Option<Vec2> {
        if !self.valid || !world.is_finite() {
            return None;
        }
        let local = self.to_local.transform_point2(world.as_dvec2());
        self.layout
            .local_to_grid(local)
            .map(|p| p.as_vec2())
            .filter(|p| p.is_finite())
    }

    /// The world position of a point in grid units (see
    /// [`MapView::world_to_grid`]).
    pub(crate) fn grid_to_world(&self, point: Vec2) -> Vec2 {
        let local = self.layout.origin + (point - Vec2::splat(0.5)) * self.layout.cell_size;
        self.transform.transform_point(local.extend(0.0)).truncate()
    }

    /// The world position of a cell's centre (for a view of units bigger
    /// than a cell: the centre of the footprint anchored at `cell`).
    pub fn cell_to_world(&self, cell: Cell) -> Vec2 {
        let local = self.layout.cell_center(cell) + self.footprint_offset();
        self.transform.transform_point(local.extend(0.0)).truncate()
    }
}

/// How close (in cells) to a cell corner a segment may pass and still count
/// as passing through it.
const CORNER_TOLERANCE: f64 = 1e-5;

/// Longest step taken at once when walking a segment, in cells: short
/// enough never to jump over a wall cell or past a corner unchecked.
const MAX_SUBSTEP: f32 = 0.25;

impl MapView<'_> {
    /// The cell a world position falls in, if it is on the map.
    pub fn cell_at(&self, world: Vec2) -> Option<Cell> {
        match self.world_to_cell(world) {
            CellLookup::Inside(cell) => Some(cell),
            _ => None,
        }
    }

    /// Whether a unit of this view's class and size standing at `from`
    /// can get to `to` (world positions, footprint centres) at all: both
    /// on the map, where it may stand, and in one connected region. O(1)
    /// once the regions are labelled, as a game's AI asks before ordering
    /// (a boat to a lake with no way out, infantry across a river).
    ///
    /// ```
    /// use bevy::prelude::*;
    /// use bevy_frontier::maps::MapView;
    /// use bevy_frontier::prelude::*;
    ///
    /// const LAND: Terrain = Terrain(1);
    /// const WATER: Terrain = Terrain(2);
    /// let mut classes = MovementClasses::new();
    /// classes.add("foot", [(LAND, 1)]);
    /// let boat = classes.add("boat", [(WATER, 1)]);
    /// let mut grid = NavGrid::new(12, 6).unwrap().with_classes(classes).unwrap();
    /// grid.fill_terrain(Cell::new(0, 0), Cell::new(11, 5), LAND).unwrap();
    /// grid.fill_terrain(Cell::new(5, 0), Cell::new(6, 5), WATER).unwrap();
    /// let layout = GridLayout::default();
    /// let view = MapView::new(&grid, &layout, None);
    /// let (west, east) = (Vec2::new(1.0, 1.0), Vec2::new(10.0, 1.0));
    /// assert!(!view.can_reach(west, east));
    /// let boats = view.for_kind(UnitKind::new(boat, 1));
    /// assert!(boats.can_reach(Vec2::new(5.0, 0.0), Vec2::new(6.0, 5.0)));
    /// // The nearest place a boat put ashore may float: the river's bank.
    /// assert_eq!(boats.nearest_standable(west), Some(Vec2::new(5.0, 1.0)));
    /// ```
    pub fn can_reach(&self, from: Vec2, to: Vec2) -> bool {
        match (self.cell_at(from), self.cell_at(to)) {
            (Some(a), Some(b)) => self.size_class.connected(a, b),
            _ => false,
        }
    }

    /// The nearest place to `near` (a world position, even off the map)
    /// where a unit of this view's class and size may stand: the
    /// footprint centre of the anchor nearest to the anchor of a footprint
    /// centred at `near`. `None` if it may stand nowhere on the map, or
    /// `near` is not finite.
    pub fn nearest_standable(&self, near: Vec2) -> Option<Vec2> {
        let target = match self.world_to_cell(near) {
            CellLookup::Inside(cell) => (cell.x as i64, cell.y as i64),
            CellLookup::Outside(x, y) => (x, y),
            CellLookup::NonFinite => return None,
        };
        let cell = self.size_class.nearest_walkable(target, None)?;
        Some(self.cell_to_world(cell))
    }

    /// Length of the steps a walk along a segment is checked in, in world
    /// units.
    pub fn substep(&self) -> f32 {
        MAX_SUBSTEP * self.layout.cell_size.min_element().abs().max(f32::EPSILON)
    }

    /// Whether a short move from `from` to `to` (at most a substep) passes
    /// only through walkable cells (for a unit bigger than a cell: anchors
    /// where its footprint fits), and through a wall's corner point only
    /// where both cells beside it are walkable. A step into a diagonal
    /// cell checks the cell beside it that the segment really crosses, so
    /// a unit may pass close by a wall's corner, but never over it. Within
    /// one cell nothing is crossed, and a unit standing in a wall (one went
    /// up under it) may move any way, so it can always walk out.
    pub fn can_move(&self, from: Vec2, to: Vec2) -> bool {
        let (Some(p), Some(q)) = (self.grid_point(from), self.grid_point(to)) else {
            return false;
        };
        let (Some(a), Some(b)) = (self.grid_cell(p), self.grid_cell(q)) else {
            return false;
        };
        let fits = |cell: Cell| self.size_class.is_walkable(cell);
        // Out of a wall any way: the path starts at the walkable cell
        // nearest the unit, which may lie past a wall's corner.
        if a == b || !fits(a) {
            return true;
        }
        if !fits(b) {
            return false;
        }
        if a.x != b.x && a.y != b.y {
            // A step from one cell to a diagonal one passes through one of
            // the two cells beside both, or exactly through their common
            // corner: that cell must be walkable, or both at a corner.
            let corner = DVec2::new(a.x.max(b.x) as f64, a.y.max(b.y) as f64);
            // When the segment reaches the corner's column and its row.
            let (tx, ty) = ((corner - p) / (q - p)).into();
            let (x_first, y_first) = (Cell::new(b.x, a.y), Cell::new(a.x, b.y));
            // Within a hair of the corner counts as through it, so that
            // rounding never decides which way a unit squeezes past.
            let through_corner = (tx - ty).abs() * (q - p).length() <= CORNER_TOLERANCE;
            return if through_corner {
                fits(x_first) && fits(y_first)
            } else if tx < ty {
                fits(x_first)
            } else {
                fits(y_first)
            };
        }
        true
    }

    /// A world position in grid units, from the footprint's centre to its
    /// anchor (see [`GridLayout::local_to_grid`]); `None` where
    /// [`MapView::world_to_cell`] says `NonFinite`.
    fn grid_point(&self, world: Vec2) -> Option<DVec2> {
        if !world.is_finite() || !self.valid {
            return None;
        }
        self.layout.local_to_grid(self.anchor_local(world))
    }

    /// The cell a point in grid units falls in, if it is on the grid: what
    /// [`MapView::cell_at`] gives for the world position.
    fn grid_cell(&self, point: DVec2) -> Option<Cell> {
        let (x, y) = (floor(point.x), floor(point.y));
        let inside =
            x >= 0.0 && y >= 0.0 && x < self.grid.width() as f64 && y < self.grid.height() as f64;
        inside.then(|| Cell::new(x as u32, y as u32))
    }

    /// Walks at most `distance` straight toward `target` in substeps;
    /// stops early at a wall or a wall's corner. Returns the distance
    /// walked.
    pub fn walk_straight(&self, position: &mut Vec2, target: Vec2, distance: f32) -> f32 {
        let step_length = self.substep();
        let mut walked = 0.0;
        while walked < distance {
            let left = position.distance(target);
            if left <= 1e-6 {
                *position = target;
                break;
            }
            let step = (distance - walked).min(step_length).min(left);
            let next = if step == left {
                target
            } else {
                *position + (target - *position) / left * step
            };
            if !self.can_move(*position, next) {
                break;
            }
            *position = next;
            walked += step;
        }
        walked
    }

    /// The box of grid cells (lowest and highest corner, both included) a
    /// change of which can decide [`MapView::segment_clear`] from `from` to
    /// `to` for the units this view is for: the cells the segment's
    /// anchors cover, one more each way for the cells beside a diagonal
    /// step. `None` where a point is not finite or the view cannot place
    /// cells.
    pub(crate) fn segment_box(&self, from: Vec2, to: Vec2) -> Option<(Cell, Cell)> {
        let (p, q) = (self.grid_point(from)?, self.grid_point(to)?);
        // A footprint anchored at x covers cells up to x + size − 1.
        let clamp = |v: f64| v.clamp(0.0, u32::MAX as f64) as u32;
        let low = |a: f64, b: f64| clamp(floor(a.min(b)) - 1.0);
        let high = |a: f64, b: f64| clamp(floor(a.max(b)) + 1.0 + (self.size as f64 - 1.0));
        Some((
            Cell::new(low(p.x, q.x), low(p.y, q.y)),
            Cell::new(high(p.x, q.x), high(p.y, q.y)),
        ))
    }

    /// Whether a unit can walk the straight segment from `from` to `to`
    /// ([`MapView::walk_straight`] would get there): every cell the segment
    /// passes through fits, and where it passes exactly through a corner,
    /// both cells beside it do. Worked out cell by cell along the segment,
    /// not in substeps (but for a segment starting in a wall, which may
    /// leave it any way, to an end that fits).
    pub fn segment_clear(&self, from: Vec2, to: Vec2) -> bool {
        self.segment_clear_within(from, to, u8::MAX)
    }

    /// [`MapView::segment_clear`] over cells that cost at most `max_cost`
    /// after the first (where the unit already stands): a straight line
    /// that crosses no dearer ground.
    pub fn segment_clear_within(&self, from: Vec2, to: Vec2, max_cost: u8) -> bool {
        self.segment_clear_where(from, to, |cell| {
            self.size_class.is_walkable_within(cell, max_cost)
        })
    }

    /// [`MapView::segment_clear`] with `fits` saying which anchors the
    /// segment may pass through after the one it starts on (a segment that
    /// starts in a wall is walked in substeps, which leave it any way, as
    /// there).
    pub(crate) fn segment_clear_where(
        &self,
        from: Vec2,
        to: Vec2,
        fits: impl Fn(Cell) -> bool,
    ) -> bool {
        let (Some(p), Some(q)) = (self.grid_point(from), self.grid_point(to)) else {
            return false;
        };
        let (Some(mut cell), Some(last)) = (self.grid_cell(p), self.grid_cell(q)) else {
            return false;
        };
        let delta = q - p;
        let step = |d: f64| {
            if d > 0.0 {
                1
            } else if d < 0.0 {
                -1
            } else {
                0
            }
        };
        let (step_x, step_y) = (step(delta.x), step(delta.y));
        // The segment is p + t·delta, t in 0..=1: when it crosses the next
        // column and the next row of cell borders (a cell spans x..x+1, so
        // going down from a border crosses it at once).
        let first = |v: f64, d: f64, step: i64| match step {
            0 => f64::INFINITY,
            1 => (floor(v) + 1.0 - v) / d,
            _ => (floor(v) - v) / d,
        };
        let (mut t_x, mut t_y) = (first(p.x, delta.x, step_x), first(p.y, delta.y, step_y));
        let (dt_x, dt_y) = (1.0 / delta.x.abs(), 1.0 / delta.y.abs());
        let length = delta.length();
        let at = |x: i64, y: i64| {
            let cell = Cell::new(u32::try_from(x).ok()?, u32::try_from(y).ok()?);
            self.grid.in_bounds(cell).then_some(cell)
        };
        if !self.size_class.is_walkable(cell) {
            // Leaving a wall (one went up under the unit) any way: what
            // that allows depends on the steps, so take them. The steps
            // may go on from wall to wall, so the end must fit too.
            let mut probe = from;
            self.walk_straight(&mut probe, to, f32::MAX);
            return probe == to && fits(last);
        }
        let mut steps_left = cell.x.abs_diff(last.x) + cell.y.abs_diff(last.y);
        while cell != last {
            let (x, y) = (cell.x as i64, cell.y as i64);
            let through_corner = (t_x - t_y).abs() * length <= CORNER_TOLERANCE;
            let (next, steps) = if !through_corner && t_x < t_y {
                t_x += dt_x;
                (at(x + step_x, y), 1)
            } else if !through_corner {
                t_y += dt_y;
                (at(x, y + step_y), 1)
            } else {
                // Exactly through a corner: both cells beside it.
                let beside = [at(x + step_x, y), at(x, y + step_y)];
                if !beside.iter().all(|c| c.is_some_and(&fits)) {
                    return false;
                }
                t_x += dt_x;
                t_y += dt_y;
                (at(x + step_x, y + step_y), 2)
            };
            let Some(next) = next.filter(|_| steps <= steps_left) else {
                // Rounding led the walk off the segment's cells: ask the
                // walk in substeps instead.
                let mut probe = from;
                self.walk_straight(&mut probe, to, f32::MAX);
                return probe == to;
            };
            steps_left -= steps;
            if !fits(next) {
                return false;
            }
            cell = next;
        }
        true
    }
}

/// Every usable map's view, looked up once, for a pass over many units
/// that may run on several threads.
pub(crate) struct AllViews<'a> {
    views: bevy::platform::collections::HashMap<Entity, MapView<'a>>,
    /// The first map: most games have one, and its look-up costs a compare.
    first: Option<(Entity, MapView<'a>)>,
}

impl<'a> AllViews<'a> {
    pub(crate) fn new<F: QueryFilter + 'static>(maps: &'a Maps<'_, '_, F>) -> Self {
        let views: bevy::platform::collections::HashMap<Entity, MapView<'a>> =
            maps.iter().filter(|(_, view)| view.is_valid()).collect();
        let first = views.iter().next().map(|(&map, &view)| (map, view));
        Self { views, first }
    }

    /// The view of `map` if it is a map that can place cells.
    pub(crate) fn get(&self, map: Entity) -> Option<MapView<'a>> {
        match self.first {
            Some((first, view)) if first == map => Some(view),
            _ => self.views.get(&map).copied(),
        }
    }
}

/// Why no map could be chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MapError {
    /// There is no map (no entity with a `NavGrid`), or the named entity
    /// has none.
    NoMap,
    /// Several maps exist and none was named.
    Ambiguous,
}

/// What [`Maps`] reads of a map entity.
type MapData = (
    Entity,
    &'static NavGrid,
    &'static GridLayout,
    Option<&'static Transform>,
);

/// Finds maps and views them: a system param over every entity with a
/// [`NavGrid`] and a [`GridLayout`].
///
/// `F` filters the maps, as for a `Query`. A system that also writes
/// `Transform`s of other entities (units) needs the two disjoint, for
/// example `Maps<Without<Mover>>`.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_frontier::maps::Maps;
///
/// fn cell_under_cursor(maps: Maps, cursor: Res<CursorPosition>) {
///     if let Ok((_, view)) = maps.find(None) {
///         info!("cursor over {:?}", view.cell_at(cursor.0));
///     }
/// }
/// # #[derive(Resource)]
/// # struct CursorPosition(Vec2);
/// # bevy::ecs::system::assert_is_system(cell_under_cursor);
/// ```
#[derive(SystemParam)]
pub struct Maps<'w, 's, F: QueryFilter + 'static = ()> {
    maps: Query<'w, 's, MapData, F>,
}

impl<F: QueryFilter + 'static> Maps<'_, '_, F> {
    /// The view of `map`, if it is a map.
    pub fn get(&self, map: Entity) -> Option<MapView<'_>> {
        let (_, grid, layout, transform) = self.maps.get(map).ok()?;
        Some(MapView::new(grid, layout, transform))
    }

    /// The map named, or the only map there is.
    pub fn find(&self, map: Option<Entity>) -> Result<(Entity, MapView<'_>), MapError> {
        let found = match map {
            Some(map) => self.maps.get(map).map_err(|_| MapError::NoMap)?,
            None => {
                let mut all = self.maps.iter();
                match (all.next(), all.next()) {
                    (Some(only), None) => only,
                    (None, _) => return Err(MapError::NoMap),
                    (Some(_), Some(_)) => return Err(MapError::Ambiguous),
                }
            }
        };
        let (entity, grid, layout, transform) = found;
        Ok((entity, MapView::new(grid, layout, transform)))
    }

    /// Every map and its view.
    pub fn iter(&self) -> impl Iterator<Item = (Entity, MapView<'_>)> {
        self.maps.iter().map(|(entity, grid, layout, transform)| {
            (entity, MapView::new(grid, layout, transform))
        })
    }
}

#[cfg(feature = "serialize")]
crate::remap::remap_fields!(LastGridVersions { 0 });

#[cfg(test)]
mod tests {
    use super::*;

    /// A small xorshift generator.
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: u32) -> u32 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as u32
        }
    }

    /// `segment_clear` works cell by cell. Between cell centres it must say
    /// what the grid's own line of sight says (through a corner exactly,
    /// both cells beside it); between other points, what walking the
    /// segment in substeps says, to an end that fits. On grids with walls, for units of every
    /// size, on a map that is moved and scaled.
    #[test]
    fn segment_clear_agrees_with_line_of_sight_and_walking() {
        let mut rng = Rng(0x2545_F491_4F6C_DD1D);
        let layout = GridLayout::default();
        let transform = Transform::from_xyz(3.0, -2.0, 0.0).with_scale(Vec3::new(1.5, 1.5, 1.0));
        let (mut blocked, mut clear, mut walled_ends) = (0, 0, 0);
        for round in 0..60 {
            let mut grid = NavGrid::new(24, 24).unwrap();
            for _ in 0..(round * 3) {
                let cell = Cell::new(rng.below(24), rng.below(24));
                grid.set_cost(cell, NavGrid::BLOCKED).unwrap();
            }
            for size in 1..=2 {
                let view = MapView::new(&grid, &layout, Some(&transform)).for_size(size);
                let size_class = view.size_class();
                for _ in 0..200 {
                    let a = Cell::new(rng.below(24), rng.below(24));
                    let b = Cell::new(rng.below(24), rng.below(24));
                    if size_class.is_walkable(a) {
                        let (from, to) = (view.cell_to_world(a), view.cell_to_world(b));
                        let sight = size_class.line_of_sight(a, b);
                        assert_eq!(
                            view.segment_clear(from, to),
                            sight,
                            "{a} to {b}, size {size}"
                        );
                        if sight { clear += 1 } else { blocked += 1 }
                    }
                    let offset = |rng: &mut Rng| {
                        Vec2::new(rng.below(1000) as f32, rng.below(1000) as f32) / 1000.0 - 0.5
                    };
                    let from = view.cell_to_world(a) + offset(&mut rng);
                    let to = view.cell_to_world(b) + offset(&mut rng);
                    let mut probe = from;
                    view.walk_straight(&mut probe, to, f32::MAX);
                    let fits = |p: Vec2| view.cell_at(p).is_some_and(|c| size_class.is_walkable(c));
                    // Out of a wall the steps go any way, wall to wall
                    // too; a segment there is clear only to an end that
                    // fits.
                    walled_ends += (probe == to && !fits(to)) as u32;
                    assert_eq!(
                        view.segment_clear(from, to),
                        probe == to && fits(to),
                        "{from} to {to}, size {size}"
                    );
                }
            }
        }
        assert!(
            blocked > 1000 && clear > 1000 && walled_ends > 10,
            "{blocked} blocked, {clear} clear, {walled_ends} walked wall to wall"
        );
    }
}
