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
use bevy::ecs::query::QueryFilter;
use bevy::ecs::system::SystemParam;
use bevy::math::{DAffine3, DVec2};
use bevy::prelude::*;

use crate::core::{Cell, MAX_UNIT_SIZE, NavGrid, SizeClass};

/// The grid lives on its map entity. The derive would have to sit on the
/// core type, so the impl is written out here instead.
impl Component for NavGrid {
    const STORAGE_TYPE: StorageType = StorageType::Table;
    type Mutability = Mutable;
}

bevy::reflect::impl_reflect!(
    #[reflect(Debug, Default, PartialEq, Hash, Clone)]
    #[type_path = "bevy_frontier::core::grid"]
    struct Cell {
        x: u32,
        y: u32,
    }
);

/// Registers the map types once for any plugin of the crate: `Cell` and
/// `GridLayout` for reflection, and `GridLayout` as required by `NavGrid`.
pub(crate) fn register(app: &mut App) {
    app.register_type::<GridLayout>().register_type::<Cell>();
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

/// How a grid's cells map to the map entity's local space: cell `(x, y)` is
/// centred at `origin + (x, y) × cell_size` and spans half a cell each way.
#[derive(Component, Clone, Copy, Debug, PartialEq, Reflect)]
#[reflect(Component)]
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
        let floored = self.local_to_grid(local)?.floor();
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
/// A view is for units of one size ([`MapView::for_size`]; 1 unless
/// said). For a unit of size `k` the cells it speaks of are anchors (see
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
    /// The grid as units of that size see it.
    class: SizeClass<'a>,
    /// The map entity's transform (identity when it has none).
    transform: Transform,
    /// World to the map's local space, worked out once per view.
    to_local: DAffine3,
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
            affine.as_daffine3().inverse()
        } else {
            DAffine3::IDENTITY
        };
        Self {
            grid,
            layout,
            size: 1,
            class: grid.size_class(1),
            transform,
            to_local,
            valid,
        }
    }

    /// This view for units of `size × size` cells (clamped to
    /// `1..=MAX_UNIT_SIZE`).
    pub fn for_size(mut self, size: u8) -> Self {
        self.size = size.clamp(1, MAX_UNIT_SIZE);
        self.class = self.grid.size_class(self.size);
        self
    }

    /// The size of the units this view is for.
    pub fn size(&self) -> u8 {
        self.size
    }

    /// The grid as the units this view is for see it: where they fit, and
    /// which anchors they can reach.
    pub fn class(&self) -> SizeClass<'a> {
        self.class
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
        self.to_local
            .transform_point3(world.as_dvec2().extend(0.0))
            .truncate()
            - self.footprint_offset().as_dvec2()
    }

    /// The world position of a cell's centre (for a view of units bigger
    /// than a cell: the centre of the footprint anchored at `cell`).
    pub fn cell_to_world(&self, cell: Cell) -> Vec2 {
        let local = self.layout.cell_center(cell) + self.footprint_offset();
        self.transform.transform_point(local.extend(0.0)).truncate()
    }
}

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
        let (Some(a), Some(b)) = (self.cell_at(from), self.cell_at(to)) else {
            return false;
        };
        let fits = |cell: Cell| self.class.is_walkable(cell);
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
            let grid_point = |p: Vec2| self.layout.local_to_grid(self.anchor_local(p));
            let (Some(p), Some(q)) = (grid_point(from), grid_point(to)) else {
                return false;
            };
            let corner = DVec2::new(a.x.max(b.x) as f64, a.y.max(b.y) as f64);
            // When the segment reaches the corner's column and its row.
            let (tx, ty) = ((corner - p) / (q - p)).into();
            let (x_first, y_first) = (Cell::new(b.x, a.y), Cell::new(a.x, b.y));
            return if tx < ty {
                fits(x_first)
            } else if ty < tx {
                fits(y_first)
            } else {
                fits(x_first) && fits(y_first)
            };
        }
        true
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

    /// Whether a unit can walk the straight segment from `from` to `to`.
    pub fn segment_clear(&self, from: Vec2, to: Vec2) -> bool {
        let mut probe = from;
        self.walk_straight(&mut probe, to, f32::MAX);
        probe == to
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
