//! All integration tests, in one binary so bevy links once. One module per
//! behaviour.

mod common;

mod grid_regions;
mod heap_vs_std;
mod movingai_files;
mod movingai_scenarios;
mod search_vs_dijkstra;
mod sliced_search;
