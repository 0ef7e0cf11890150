//! A gizmo overlay: each unit's route, the shared paths of group moves, the
//! frontier of every search in flight, and the map's connected regions
//! for one movement class at a time.
//! Needs the `debug_draw` feature.
//!
//! The overlay is a gizmo config group, [`FrontierGizmos`]: turn it on and
//! choose what it draws through Bevy's `GizmoConfigStore`:
//!
//! ```
//! use bevy::prelude::*;
//! use bevy_frontier::debug::FrontierGizmos;
//!
//! fn toggle_overlay(mut store: ResMut<GizmoConfigStore>) {
//!     let (config, overlay) = store.config_mut::<FrontierGizmos>();
//!     config.enabled = !config.enabled;
//!     overlay.regions = false;
//! }
//! # bevy::ecs::system::assert_is_system(toggle_overlay);
//! ```

use bevy::prelude::*;

use crate::core::{ClassId, UnitKind};
use crate::groups::SharedRoute;
use crate::maps::Maps;
use crate::movement::{Mover, Steering};
use crate::pathfinding::PathfindingQueue;

/// What the overlay draws. Off until its `GizmoConfig` is enabled.
#[derive(Reflect, GizmoConfigGroup, Clone, Debug, PartialEq)]
#[reflect(Default)]
pub struct FrontierGizmos {
    /// Each moving unit's way: its route, or a line to its goal while it
    /// walks on instinct.
    pub paths: bool,
    /// The shared middle (every column) of each group move, its goal and its
    /// end slots.
    pub groups: bool,
    /// The open cells of every search in flight.
    pub searches: bool,
    /// Every cell a unit of class [`regions_of`](Self::regions_of) can
    /// stand on, coloured by its connected region for that class.
    pub regions: bool,
    /// The movement class whose regions are drawn (the grid's own by
    /// default; a map without it draws none). Boats and walkers see other
    /// regions on the same map.
    pub regions_of: ClassId,
}

impl FrontierGizmos {
    /// Steps the regions drawn on, for a map of `classes` movement classes:
    /// from none to the first class's, then the next class's, and after
    /// the last back to none (what a key that cycles them does).
    ///
    /// ```
    /// use bevy_frontier::debug::FrontierGizmos;
    /// use bevy_frontier::prelude::ClassId;
    ///
    /// let mut overlay = FrontierGizmos::default();
    /// overlay.cycle_regions(2);
    /// assert!(overlay.regions && overlay.regions_of == ClassId::DEFAULT);
    /// overlay.cycle_regions(2);
    /// assert_eq!(overlay.regions_of, ClassId::from_index(1));
    /// overlay.cycle_regions(2);
    /// assert!(!overlay.regions);
    /// ```
    pub fn cycle_regions(&mut self, classes: usize) {
        let next = self.regions_of.index() as usize + 1;
        if !self.regions {
            self.regions = true;
            self.regions_of = ClassId::DEFAULT;
        } else if next < classes.min(u8::MAX as usize + 1) {
            self.regions_of = ClassId::from_index(next as u8);
        } else {
            self.regions = false;
            self.regions_of = ClassId::DEFAULT;
        }
    }
}

impl Default for FrontierGizmos {
    fn default() -> Self {
        Self {
            paths: true,
            groups: true,
            searches: true,
            regions: false,
            regions_of: ClassId::DEFAULT,
        }
    }
}

/// Adds the [`FrontierGizmos`] config group, disabled, and the systems that
/// draw it (in `PostUpdate`, only while it is enabled).
pub struct DebugDrawPlugin;

impl Plugin for DebugDrawPlugin {
    fn build(&self, app: &mut App) {
        app.insert_gizmo_config(
            FrontierGizmos::default(),
            GizmoConfig {
                enabled: false,
                ..default()
            },
        )
        .add_systems(
            PostUpdate,
            (draw_regions, draw_searches, draw_groups, draw_paths).run_if(overlay_enabled),
        );
    }
}

fn overlay_enabled(store: Res<GizmoConfigStore>) -> bool {
    store.config::<FrontierGizmos>().0.enabled
}

/// A distinct, stable colour for a number.
fn hue(n: u32) -> f32 {
    (n as f32 * 137.508) % 360.0
}

fn draw_paths(
    units: Query<(&Transform, &Steering), With<Mover>>,
    mut gizmos: Gizmos<FrontierGizmos>,
) {
    if !gizmos.config_ext.paths {
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

fn draw_groups(groups: Query<&SharedRoute>, maps: Maps, mut gizmos: Gizmos<FrontierGizmos>) {
    if !gizmos.config_ext.groups {
        return;
    }
    for group in &groups {
        let Some(view) = maps.get(group.map()) else {
            continue;
        };
        let cell = view.layout.cell_size.min_element().abs();
        for column in group.columns() {
            gizmos.linestrip_2d(column.iter().copied(), Color::srgb(1.0, 0.9, 0.1));
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
    queue: Option<Res<PathfindingQueue>>,
    maps: Maps,
    mut gizmos: Gizmos<FrontierGizmos>,
) {
    let Some(queue) = queue.filter(|_| gizmos.config_ext.searches) else {
        return;
    };
    for (_, map, search) in queue.searches() {
        let Some(view) = maps.get(map) else {
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

fn draw_regions(maps: Maps, mut gizmos: Gizmos<FrontierGizmos>) {
    if !gizmos.config_ext.regions {
        return;
    }
    let kind = UnitKind::new(gizmos.config_ext.regions_of, 1);
    for (_, view) in maps.iter() {
        let grid = view.grid;
        let Some(class) = grid.view(kind) else {
            continue;
        };
        let size = view.layout.cell_size.abs() * 0.6;
        for index in 0..grid.cell_count() {
            let cell = grid.cell(index);
            if let Some(region) = class.region(cell) {
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
