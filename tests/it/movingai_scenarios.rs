//! Every scenario of every map in the MovingAI folder is solved at its
//! published optimal length, by jump point search (the default on these
//! uniform-cost maps) and by plain A*.

use bevy_frontier::core::{MovingAiMap, Scenario, ScratchPool, Search, SearchConfig, SearchStatus};

use crate::common::{movingai_dir, movingai_pairs};

#[test]
fn every_scenario_is_optimal() {
    let Some(dir) = movingai_dir("movingai_scenarios::every_scenario_is_optimal") else {
        return;
    };
    let pairs = movingai_pairs(&dir);
    assert!(
        !pairs.is_empty(),
        "no map/scenario pairs in {}",
        dir.display()
    );
    let mut pool = ScratchPool::new();
    let mut solved = 0;
    let mut failures = Vec::new();
    for (map_path, scen_path) in pairs {
        let map = MovingAiMap::load(&map_path).unwrap();
        let grid = map.to_nav_grid();
        let scenarios = Scenario::load_all(&scen_path).unwrap();
        for jump_points in [true, false] {
            let config = SearchConfig {
                jump_points,
                ..SearchConfig::default()
            };
            for (i, scenario) in scenarios.iter().enumerate() {
                assert_eq!(
                    (scenario.width, scenario.height),
                    (map.width(), map.height())
                );
                let mut search =
                    Search::new_in(&mut pool, &grid, scenario.start, scenario.goal, config)
                        .unwrap();
                search.run(&grid);
                match search.path() {
                    Some(path)
                        if search.status() == SearchStatus::Found
                            && scenario.matches(path.cost) => {}
                    other => failures.push(format!(
                        "{} #{i} (jump points {jump_points}): {:?} cost {:?}, optimal {}",
                        map_path.display(),
                        search.status(),
                        other.map(|p| p.cost),
                        scenario.optimal_length
                    )),
                }
                solved += 1;
                pool.give(search.into_scratch());
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {solved} mismatched:\n{}",
        failures.len(),
        failures.join("\n")
    );
    println!("{solved} scenarios solved optimally");
}
