//! All integration tests, in one binary so bevy links once. One module per
//! behaviour.

mod changing_costs;
mod chase;
mod chase_model;
mod common;

mod avoidance;
#[cfg(feature = "serialize")]
mod baked_maps;
mod bridges;
mod crowd_determinism;
mod crowd_flow;
mod crowd_model;
mod desync_report;
mod extreme_values;
mod fixed_update;
mod golden;
mod graph_builds;
mod grid_regions;
mod group_moves;
mod heap_vs_std;
mod id_determinism;
mod jump_points;
mod liveness;
mod map_edits;
mod maps_replaced;
mod model;
mod movement_classes;
mod movement_units;
mod movingai_files;
mod movingai_scenarios;
mod outcomes;
mod path_flags;
mod plugin_bad_requests;
mod plugin_budget;
mod plugin_determinism;
mod plugin_lifecycle;
mod plugin_map_changes;
mod plugin_order;
mod plugin_settings;
mod refinement;
mod save_resume;
mod search_vs_dijkstra;
mod shared_goals;
mod sliced_search;
#[cfg(feature = "tilemap")]
mod tilemap_sync;
mod unit_sizes;
mod vehicles;
