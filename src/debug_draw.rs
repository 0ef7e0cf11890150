//! A gizmo overlay (feature `debug_draw`): each unit's route, the shared
//! paths of group moves, the frontier of every search in flight, and the
//! map's connected regions.

use bevy::prelude::*;

use crate::group::MoveGroup;
use crate::layout::MapView;
use crate::movement::{Mover, Steering};
use crate::scheduler::{MapData, PathfindingQueue, map_view};

/// What the overlay draws; flip [`DebugDraw::enabled`] to show or hide it.
#[derive(Resource, Clone, Debug, PartialEq, Reflect)]
#[reflect(Resource)]
pub struct DebugDraw {
    /// Draw anything at all.
    pub enabled: bool,
    /// Each moving unit's way: its route, or a line to its goal while it
    /// walks on instinct.
    pub paths: bool,
    /// The shared middle (every lane) of each group move, and its goal.
    pub groups: bool,
    /// The open cells of every search in flight this frame.
    pub searches: bool,
    /// Every walkable cell, coloured by its connected region.
    pub regions: bool,
}

impl Default for DebugDraw {
    fn default() -> Self {
        Self {
            enabled: false,
            paths: true,
            groups: true,
            searches: true,
            regions: false,
        }
    }
}

/// Adds [`DebugDraw`] and the systems that draw it (in `PostUpdate`).
pub struct DebugDrawPlugin;

impl Plugin for DebugDrawPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<DebugDraw>()
            .register_type::<DebugDraw>()
            .add_systems(
                PostUpdate,
                (draw_regions, draw_searches, draw_groups, draw_paths)
                    .run_if(|draw: Res<DebugDraw>| draw.enabled),
            );
    }
}

type Maps<'w, 's> = Query<'w, 's, MapData>;

/// A distinct, stable colour for a number.
fn hue(n: u32) -> f32 {
    (n as f32 * 137.508) % 360.0
}

fn draw_paths(
    draw: Res<DebugDraw>,
    units: Query<(&Transform, &Steering), With<Mover>>,
    mut gizmos: Gizmos,
) {
    if !draw.paths {
        return;
    }
    for (transform, steering) in &units {
        let here = transform.translation.truncate();
        match steering {
            Steering::Idle => {}
            Steering::Instinct { goal, .. } => {
                gizmos.line_2d(here, *goal, Color::srgba(1.0, 0.6, 0.2, 0.35));
            }
            Steering::Following { route, .. } => {
                gizmos.linestrip_2d(
                    std::iter::once(here).chain(route.remaining()),
                    Color::srgba(0.3, 0.9, 1.0, 0.5),
                );
            }
        }
    }
}

fn draw_groups(draw: Res<DebugDraw>, groups: Query<&MoveGroup>, maps: Maps, mut gizmos: Gizmos) {
    if !draw.groups {
        return;
    }
    for group in &groups {
        let Some(view) = map_view(&maps, group.map()) else {
            continue;
        };
        let cell = view.layout.cell_size.min_element().abs();
        for lane in group.lanes() {
            gizmos.linestrip_2d(lane.iter().copied(), Color::srgb(1.0, 0.9, 0.1));
        }
        let goal = view.cell_to_world(group.goal());
        gizmos.circle_2d(
            Isometry2d::from_translation(goal),
            cell,
            Color::srgb(1.0, 0.9, 0.1),
        );
        for &(_, slot) in group.slots() {
            let at = view.cell_to_world(slot);
            gizmos.cross_2d(
                Isometry2d::from_translation(at),
                cell * 0.2,
                Color::srgba(1.0, 0.9, 0.1, 0.6),
            );
        }
    }
}

fn draw_searches(
    draw: Res<DebugDraw>,
    queue: Option<Res<PathfindingQueue>>,
    maps: Maps,
    mut gizmos: Gizmos,
) {
    let Some(queue) = queue.filter(|_| draw.searches) else {
        return;
    };
    for (_, map, search) in queue.searches() {
        let Some(view) = map_view(&maps, map) else {
            continue;
        };
        let size = view.layout.cell_size.abs() * 0.8;
        for cell in search.open_cells(view.grid) {
            let at = view.cell_to_world(cell);
            gizmos.rect_2d(
                Isometry2d::from_translation(at),
                size,
                Color::srgba(1.0, 0.3, 0.8, 0.7),
            );
        }
    }
}

fn draw_regions(draw: Res<DebugDraw>, maps: Maps, mut gizmos: Gizmos) {
    if !draw.regions {
        return;
    }
    for (_, grid, layout, transform) in &maps {
        let view = MapView::new(grid, layout, transform);
        let size = layout.cell_size.abs() * 0.6;
        for index in 0..grid.cell_count() {
            let cell = grid.cell(index);
            if let Some(region) = grid.region(cell) {
                let color = Color::hsla(hue(region), 0.8, 0.55, 0.45);
                gizmos.rect_2d(
                    Isometry2d::from_translation(view.cell_to_world(cell)),
                    size,
                    color,
                );
            }
        }
    }
}
