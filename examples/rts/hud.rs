//! The heads-up display: the budget, the frame's expansions, searches in
//! flight and queued, frames from order to path, FPS and the controls.

use std::collections::{HashMap, VecDeque};

use bevy::diagnostic::{DiagnosticsStore, FrameTimeDiagnosticsPlugin};
use bevy::ecs::system::SystemParam;
use bevy::prelude::*;
use bevy_frontier::movement::Steering;
use bevy_frontier::pathfinding::{PathfindingQueue, PathfindingStats};
use bevy_frontier::prelude::*;

use crate::SceneSystems;
use crate::units::Selected;

/// Shows the HUD and measures how long orders wait for their paths.
pub struct HudPlugin;

impl Plugin for HudPlugin {
    fn build(&self, app: &mut App) {
        app.add_plugins(FrameTimeDiagnosticsPlugin::default())
            .init_resource::<OrderTimes>()
            .add_systems(Startup, spawn_hud)
            .add_systems(
                Update,
                (track_orders, hud).chain().in_set(SceneSystems::Display),
            );
    }
}

#[derive(Component)]
struct HudText;

/// Frames from an order to the unit's path, per unit, and the last 256
/// measured.
#[derive(Resource, Default)]
pub struct OrderTimes {
    /// Frames so far.
    pub frame: u64,
    /// Units ordered and still waiting, with the frame of their order.
    pub pending: HashMap<Entity, u64>,
    recent: VecDeque<u64>,
}

fn spawn_hud(mut commands: Commands) {
    commands.spawn((
        HudText,
        Text::new(""),
        TextFont::from_font_size(13.0),
        Node {
            position_type: PositionType::Absolute,
            top: Val::Px(8.0),
            left: Val::Px(8.0),
            padding: UiRect::all(Val::Px(6.0)),
            ..default()
        },
        BackgroundColor(Color::srgba(0.0, 0.0, 0.0, 0.6)),
    ));
}

/// Frames from order to path: a unit has its path once it follows a route
/// (or was answered without one).
fn track_orders(mut times: ResMut<OrderTimes>, units: Query<&Steering>) {
    times.frame += 1;
    let frame = times.frame;
    let mut done = Vec::new();
    times.pending.retain(|&unit, &mut ordered| {
        let waiting = matches!(units.get(unit), Ok(Steering::Instinct { .. }));
        if !waiting && frame > ordered + 1 {
            done.push(frame - ordered - 1);
        }
        waiting || frame <= ordered + 1
    });
    for frames in done {
        if times.recent.len() == 256 {
            times.recent.pop_front();
        }
        times.recent.push_back(frames);
    }
}

/// What pathfinding reports: its settings, last frame and queue, and the
/// maps (their classes' names).
#[derive(SystemParam)]
struct Pathfinding<'w, 's> {
    settings: Res<'w, PathfindingSettings>,
    stats: Res<'w, PathfindingStats>,
    queue: Res<'w, PathfindingQueue>,
    maps: Query<'w, 's, &'static NavGrid>,
}

fn hud(
    pathfinding: Pathfinding,
    times: Res<OrderTimes>,
    diagnostics: Res<DiagnosticsStore>,
    gizmos: Res<GizmoConfigStore>,
    selected: Query<(), With<Selected>>,
    arrived: Query<&Arrived>,
    mut text: Query<&mut Text, With<HudText>>,
) {
    let Ok(mut text) = text.single_mut() else {
        return;
    };
    let (overlay, draw) = gizmos.config::<FrontierGizmos>();
    let fps = diagnostics
        .get(&FrameTimeDiagnosticsPlugin::FPS)
        .and_then(|fps| fps.smoothed())
        .unwrap_or(0.0);
    let (mean, worst) = match times.recent.len() {
        0 => (0.0, 0),
        n => (
            times.recent.iter().sum::<u64>() as f64 / n as f64,
            times.recent.iter().copied().max().unwrap_or(0),
        ),
    };
    text.0 = format!(
        "node budget per frame: {} (+/-)\n\
         expansions this frame: {}\n\
         searches in flight: {}   queued: {}\n\
         frames from order to path: mean {mean:.1}, worst {worst} (last {} units)\n\
         selected: {}   stopped in a jam (grey): {}   FPS: {fps:.0}\n\
         overlay (F1): {}   regions (F2): {}\n\
         drag: select   right-click: group move   shift+right: one by one\n\
         middle or W+click: wall   T+click: terrain",
        pathfinding.settings.nodes_per_frame,
        pathfinding.stats.frame_expansions,
        pathfinding.queue.in_flight(),
        pathfinding.queue.queued(),
        times.recent.len(),
        selected.iter().count(),
        arrived
            .iter()
            .filter(|a| a.outcome == Arrival::Blocked)
            .count(),
        if overlay.enabled { "on" } else { "off" },
        regions_shown(draw, &pathfinding.maps),
    );
}

/// Which class's regions the overlay draws (F2 cycles them), by name.
fn regions_shown(draw: &FrontierGizmos, maps: &Query<&NavGrid>) -> String {
    if !draw.regions {
        return "off".to_string();
    }
    let class = draw.regions_of;
    maps.iter()
        .find_map(|grid| grid.classes()?.name(class).map(str::to_string))
        .unwrap_or_else(|| format!("class {}", class.index()))
}
