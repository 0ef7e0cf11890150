//! Where a [`NavGrid`]'s cells sit in the world.
//!
//! A map entity carries a [`NavGrid`], a [`GridLayout`] (cell size and the
//! centre of cell (0, 0), in the map's local space) and usually a
//! `Transform` placing the map in the world. With the `tilemap` feature the
//! layout of a bevy_ecs_tilemap map is derived from the tilemap's own
//! components, so both agree on which tile a point is in.

use bevy::prelude::*;

use crate::grid::{Cell, NavGrid};

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
    /// The position (or the map's transform) is not a finite number.
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

    /// The cell coordinates of a local position, which may be outside the
    /// grid; `None` if it is not finite or the layout is degenerate.
    pub fn local_to_cell(&self, local: Vec2) -> Option<(i64, i64)> {
        let scaled = (local - self.origin) / self.cell_size + Vec2::splat(0.5);
        let floored = scaled.floor();
        // Beyond ±2⁶² the grid is out of reach anyway; clamping keeps the
        // conversion total.
        const LIMIT: f32 = 4.0e18;
        floored.is_finite().then(|| {
            (
                floored.x.clamp(-LIMIT, LIMIT) as i64,
                floored.y.clamp(-LIMIT, LIMIT) as i64,
            )
        })
    }
}

/// A map as the pathfinder sees it: its grid, layout and placement in the
/// world. Converts between world positions and cells.
#[derive(Clone, Copy, Debug)]
pub struct MapView<'a> {
    /// The grid.
    pub grid: &'a NavGrid,
    /// The cells' layout in the map's local space.
    pub layout: &'a GridLayout,
    /// The map entity's transform (identity when it has none).
    pub transform: Transform,
}

impl<'a> MapView<'a> {
    /// A view of a map entity's components.
    pub fn new(grid: &'a NavGrid, layout: &'a GridLayout, transform: Option<&Transform>) -> Self {
        Self {
            grid,
            layout,
            transform: transform.copied().unwrap_or_default(),
        }
    }

    /// The cell a world position falls in.
    pub fn world_to_cell(&self, world: Vec2) -> CellLookup {
        if !world.is_finite() {
            return CellLookup::NonFinite;
        }
        let affine = self.transform.compute_affine();
        if affine.matrix3.determinant() == 0.0 || !affine.is_finite() {
            return CellLookup::NonFinite;
        }
        let local = affine
            .inverse()
            .transform_point3(world.extend(0.0))
            .truncate();
        match self.layout.local_to_cell(local) {
            None => CellLookup::NonFinite,
            Some((x, y)) => match (u32::try_from(x), u32::try_from(y)) {
                (Ok(cx), Ok(cy)) if self.grid.in_bounds(Cell::new(cx, cy)) => {
                    CellLookup::Inside(Cell::new(cx, cy))
                }
                _ => CellLookup::Outside(x, y),
            },
        }
    }

    /// The world position of a cell's centre.
    pub fn cell_to_world(&self, cell: Cell) -> Vec2 {
        self.transform
            .transform_point(self.layout.cell_center(cell).extend(0.0))
            .truncate()
    }
}
