//! Path geometry that units and groups both use: joining a path from where
//! a unit stands (`join_path`), string pulling (`smooth`), and testing a
//! route's legs against the edits made since it was planned (`Edits`,
//! `Cut`, `route_cut_ahead`), on plain data: a map view, cells and
//! waypoints, no `App`.

use bevy::platform::collections::HashSet;
use bevy::prelude::*;

use super::state::Route;
use crate::core::{Cell, GridChanges};
use crate::maps::MapView;

/// How a unit standing at `here`, in `cell`, joins the path through
/// `cells`: string-pulled waypoints from the furthest cell it can see, so
/// it never walks back to where the order was given. `None` when it sees
/// none. A unit a wall went up under starts at the path's first cell, the
/// walkable cell nearest to it.
pub(crate) fn join_path(
    view: &MapView,
    here: Vec2,
    cell: Cell,
    cells: &[Cell],
) -> Option<Vec<Vec2>> {
    let size_class = view.size_class();
    let in_wall = !size_class.is_walkable(cell);
    // The dearest ground the path has crossed up to each cell: a unit
    // joins it over no dearer ground (not across a swamp it goes round).
    let here_cost = size_class.cost(cell).unwrap_or(0);
    let dearest: Vec<u8> = cells
        .iter()
        .scan(here_cost, |most, &c| {
            *most = (*most).max(size_class.cost(c).unwrap_or(0));
            Some(*most)
        })
        .collect();
    let join = (0..cells.len()).rev().find(|&i| {
        in_wall && i == 0 || size_class.line_of_sight_within(cell, cells[i], dearest[i])
    })?;
    let mut waypoints = smooth(view, &cells[join..]);
    // The waypoint is in sight of the unit's cell centre; from where the
    // unit stands, near the cell's edge, the way may clip a corner: then
    // step to the centre first.
    if !in_wall
        && waypoints
            .first()
            .is_some_and(|&first| !view.segment_clear(here, first))
    {
        waypoints.insert(0, view.cell_to_world(cell));
    }
    Some(waypoints)
}

/// String pulling: from each kept waypoint, the furthest later one in
/// sight over ground no dearer than the path's between them, so open
/// ground is crossed in straight lines, not 45° zig-zags, and terrain the
/// path goes round stays gone round.
pub(crate) fn smooth(view: &MapView, cells: &[Cell]) -> Vec<Vec2> {
    let size_class = view.size_class();
    let cost = |cell: Cell| size_class.cost(cell).unwrap_or(0);
    let mut kept = Vec::new();
    let mut at = 0;
    while at < cells.len() {
        kept.push(view.cell_to_world(cells[at]));
        let mut next = at + 1;
        // Over ground no dearer than the cells the straight line replaces.
        let mut dearest = cost(cells[at]).max(cells.get(next).map_or(0, |&c| cost(c)));
        while next + 1 < cells.len() {
            dearest = dearest.max(cost(cells[next + 1]));
            if !size_class.line_of_sight_within(cells[at], cells[next + 1], dearest) {
                break;
            }
            next += 1;
        }
        at = next;
    }
    kept
}

/// What edits did to a route's way on ([`Edits::cut`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cut {
    /// A wall stands across a leg still to walk.
    Blocked,
    /// A leg still to walk crosses ground made dearer, but no wall.
    Dearer,
}

/// Side of the blocks [`Edits`] files many changed cells under.
const EDIT_BLOCK: u32 = 8;

/// The cells of a map made dearer (or walled) since some version, ready to
/// test routes against: a few cells one by one, many by the blocks they
/// fall in and a set, so that one big edit costs each leg a handful of
/// look-ups, not one per cell.
pub(crate) struct Edits {
    /// From [`NavGrid::dearer_since`].
    changes: GridChanges,
    /// The cells filed by block and by cell, when there are many.
    many: Option<Many>,
}

/// Many changed cells, filed for look-ups.
struct Many {
    /// The blocks of [`EDIT_BLOCK`]² cells holding one.
    blocks: HashSet<(u32, u32)>,
    cells: HashSet<Cell>,
}

impl Edits {
    /// The changes, filed for testing.
    pub(crate) fn new(changes: GridChanges) -> Self {
        const FEW: usize = 16;
        let many = match &changes {
            GridChanges::Cells(cells) if cells.len() > FEW => Some(Many {
                blocks: cells
                    .iter()
                    .map(|c| (c.x / EDIT_BLOCK, c.y / EDIT_BLOCK))
                    .collect(),
                cells: cells.iter().copied().collect(),
            }),
            _ => None,
        };
        Self { changes, many }
    }

    /// Whether a changed cell (or, with many, a block holding one) lies in
    /// the box from `low` to `high`.
    fn touch(&self, (low, high): (Cell, Cell)) -> bool {
        match (&self.changes, &self.many) {
            (GridChanges::Everything, _) => true,
            (_, Some(Many { blocks, .. })) => {
                (low.y / EDIT_BLOCK..=high.y / EDIT_BLOCK).any(|by| {
                    (low.x / EDIT_BLOCK..=high.x / EDIT_BLOCK).any(|bx| blocks.contains(&(bx, by)))
                })
            }
            (GridChanges::Cells(cells), None) => cells
                .iter()
                .any(|c| (low.x..=high.x).contains(&c.x) && (low.y..=high.y).contains(&c.y)),
        }
    }

    /// Whether a changed cell lies under the `size`×`size` footprint
    /// anchored at `anchor`.
    fn under(&self, anchor: Cell, size: u32) -> bool {
        let covers =
            |c: &Cell| c.x.wrapping_sub(anchor.x) < size && c.y.wrapping_sub(anchor.y) < size;
        match (&self.changes, &self.many) {
            (GridChanges::Everything, _) => true,
            (_, Some(Many { cells, .. })) => (0..size).any(|dy| {
                (0..size).any(|dx| cells.contains(&Cell::new(anchor.x + dx, anchor.y + dy)))
            }),
            (GridChanges::Cells(cells), None) => cells.iter().any(covers),
        }
    }

    /// Whether these edits cut the way on of a unit at `position` along
    /// `route`, or made it dearer, looking at the legs near a changed cell
    /// (from the unit to its next corner, and between two corners after):
    /// [`Cut::Blocked`] if one is no longer clear, else [`Cut::Dearer`] if
    /// one crosses a changed cell (past the one it starts on).
    pub(crate) fn cut(&self, view: &MapView, position: Vec2, route: &Route) -> Option<Cut> {
        let size = view.size() as u32;
        let size_class = view.size_class();
        let mut from = position;
        let mut found = None;
        for corner in route.remaining() {
            let (a, b) = (from, corner);
            from = corner;
            if !view.segment_box(a, b).is_none_or(|area| self.touch(area))
                || view.segment_clear_where(a, b, |anchor| {
                    size_class.is_walkable(anchor) && !self.under(anchor, size)
                })
            {
                continue;
            }
            if !view.segment_clear(a, b) {
                return Some(Cut::Blocked);
            }
            found = Some(Cut::Dearer);
        }
        found
    }
}

/// Whether a unit at `position` cannot walk `route` on as it stands: its
/// next corner is out of sight, or a wall cuts the way from that corner to
/// the one after.
pub(crate) fn route_cut_ahead(view: &MapView, position: Vec2, route: &Route) -> bool {
    let mut corners = route.remaining();
    let Some(next) = corners.next() else {
        return false;
    };
    !view.segment_clear(position, next)
        || corners
            .next()
            .is_some_and(|after| !view.segment_clear(next, after))
}

/// How far a unit at `position` has still to walk along `route`.
pub(crate) fn walk_left(route: &Route, position: Vec2) -> f32 {
    let mut from = position;
    route
        .remaining()
        .map(|corner| {
            let leg = from.distance(corner);
            from = corner;
            leg
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::NavGrid;
    use crate::maps::GridLayout;

    /// Edits since a route was planned, tested against its legs: a wall
    /// across a leg cuts it, dearer ground under one only makes it dearer,
    /// and an edit away from every leg leaves it alone.
    #[test]
    fn edits_cut_a_route_or_make_it_dearer_only_where_its_legs_run() {
        let layout = GridLayout::default();
        let route = Route::new(vec![Vec2::new(10.0, 2.0), Vec2::new(10.0, 12.0)]);
        let here = Vec2::new(2.0, 2.0);
        let cut_by = |edit: &dyn Fn(&mut NavGrid)| {
            let mut grid = NavGrid::new(16, 16).unwrap();
            let planned = grid.version();
            edit(&mut grid);
            let view = MapView::new(&grid, &layout, None);
            Edits::new(grid.dearer_since(planned)).cut(&view, here, &route)
        };
        let wall = |grid: &mut NavGrid| {
            grid.set_cost(Cell::new(6, 2), NavGrid::BLOCKED).unwrap();
        };
        let swamp = |grid: &mut NavGrid| {
            grid.set_cost(Cell::new(10, 7), 5).unwrap();
        };
        let elsewhere = |grid: &mut NavGrid| {
            grid.set_cost(Cell::new(14, 14), NavGrid::BLOCKED).unwrap();
        };
        assert_eq!(cut_by(&wall), Some(Cut::Blocked));
        assert_eq!(cut_by(&swamp), Some(Cut::Dearer));
        assert_eq!(cut_by(&elsewhere), None);
        // Many edits at once are filed by block: the same answers.
        let many = |grid: &mut NavGrid| {
            for x in 0..16 {
                grid.set_cost(Cell::new(x, 15), 3).unwrap();
            }
            wall(grid);
        };
        assert_eq!(cut_by(&many), Some(Cut::Blocked));
    }

    /// String pulling crosses open ground in one straight leg, and goes
    /// round dearer ground the path went round.
    #[test]
    fn smoothing_keeps_to_the_ground_the_path_kept_to() {
        let layout = GridLayout::default();
        let mut grid = NavGrid::new(12, 12).unwrap();
        let diagonal: Vec<Cell> = (0..8).map(|k| Cell::new(k, k)).collect();
        let view = MapView::new(&grid, &layout, None);
        assert_eq!(smooth(&view, &diagonal), vec![Vec2::ZERO, Vec2::splat(7.0)]);
        // An L round a swamp in the corner it cuts: the L stays an L.
        for x in 1..6 {
            for y in 1..6 {
                grid.set_cost(Cell::new(x, y), 9).unwrap();
            }
        }
        let view = MapView::new(&grid, &layout, None);
        let around: Vec<Cell> = (0..6)
            .map(|y| Cell::new(0, y))
            .chain((1..6).map(|x| Cell::new(x, 6)))
            .collect();
        let waypoints = smooth(&view, &around);
        assert!(waypoints.len() < around.len(), "{waypoints:?}");
        for leg in waypoints.windows(2) {
            for k in 0..=50 {
                let at = leg[0].lerp(leg[1], k as f32 / 50.0).round();
                let cell = Cell::new(at.x as u32, at.y as u32);
                assert_eq!(grid.cost(cell), Some(1), "{waypoints:?} crosses the swamp");
            }
        }
    }
}
