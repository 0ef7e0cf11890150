//! The MovingAI reader accepts the format's variations and rejects
//! malformed files with the line at fault, without panicking.

use bevy_frontier::core::{Cell, MovingAiMap, ParseError, Scenario};

const MAP: &str = "type octile\nheight 3\nwidth 4\nmap\n.@..\n.GS.\nTOW.\n";

#[test]
fn reads_a_map() {
    let map = MovingAiMap::parse(MAP).unwrap();
    assert_eq!((map.width(), map.height()), (4, 3));
    let grid = map.to_nav_grid();
    assert!(grid.is_walkable(Cell::new(0, 0)));
    assert!(!grid.is_walkable(Cell::new(1, 0)));
    assert!(grid.is_walkable(Cell::new(1, 1)), "G is ground");
    assert!(
        grid.is_walkable(Cell::new(2, 1)),
        "S is passable in the benchmarks"
    );
    assert!(
        !grid.is_walkable(Cell::new(0, 2))
            && !grid.is_walkable(Cell::new(1, 2))
            && !grid.is_walkable(Cell::new(2, 2))
    );
}

#[test]
fn reads_crlf_and_both_version_headers() {
    let crlf = MAP.replace('\n', "\r\n");
    assert_eq!(
        MovingAiMap::parse(&crlf).unwrap(),
        MovingAiMap::parse(MAP).unwrap()
    );
    for header in ["version 1", "version 1.0"] {
        let text = format!(
            "{header}\r\n0\tm.map\t4\t3\t0\t0\t3\t2\t3.82842712\r\n1 m.map 4 3 3 0 0 0 3\n\n"
        );
        let scenarios = Scenario::parse_all(&text).unwrap();
        assert_eq!(scenarios.len(), 2);
        assert_eq!(scenarios[0].start, Cell::new(0, 0));
        assert_eq!(scenarios[0].goal, Cell::new(3, 2));
        assert_eq!(scenarios[1].bucket, 1);
        assert!(scenarios[0].matches(3.828427));
        assert!(!scenarios[0].matches(3.9));
    }
}

fn map_error(text: &str) -> ParseError {
    MovingAiMap::parse(text).expect_err("malformed map accepted")
}

#[test]
fn malformed_maps_name_their_line() {
    let cases: &[(&str, usize, &str)] = &[
        ("", 1, "file ends"),
        ("type octile\nheight x\nwidth 4\nmap\n", 2, "not a number"),
        ("type octile\nheight 3\nwide 4\nmap\n", 3, "width"),
        ("type octile\nheight 3\nwidth 4\nmop\n", 4, "map"),
        (
            "type octile\nheight 3\nwidth 4\nmap\n....\n...\n....\n",
            6,
            "3 cells",
        ),
        (
            "type octile\nheight 3\nwidth 4\nmap\n....\n..x.\n....\n",
            6,
            "column 3",
        ),
        (
            "type octile\nheight 3\nwidth 4\nmap\n....\n....\n",
            7,
            "file ends",
        ),
        (
            "type octile\nheight 2\nwidth 4\nmap\n....\n....\n....\n",
            7,
            "after",
        ),
        ("type octile\nheight 0\nwidth 4\nmap\n", 4, "empty"),
        (
            "type octile\nheight 99999\nwidth 99999\nmap\n",
            4,
            "too large",
        ),
        ("octile\nheight 3\nwidth 4\nmap\n", 1, "type"),
    ];
    for &(text, line, words) in cases {
        let error = map_error(text);
        assert_eq!(error.line, line, "{text:?}: {error}");
        assert!(
            error.to_string().contains(words),
            "{text:?}: {error} lacks {words:?}"
        );
    }
}

#[test]
fn malformed_scenarios_name_their_line() {
    let cases: &[(&str, usize)] = &[
        ("", 1),
        ("version 2\n", 1),
        ("version 1\n0 m.map 4 3 0 0 3 2\n", 2),
        (
            "version 1\n0 m.map 4 3 0 0 3 2 1.0\n0 m.map 4 3 0 -1 3 2 1.0\n",
            3,
        ),
        ("version 1\n0 m.map 4 3 0 0 3 2 NaN\n", 2),
        ("version 1\n0 m.map 4 3 0 0 3 2 abc\n", 2),
    ];
    for &(text, line) in cases {
        let error = Scenario::parse_all(text).expect_err("malformed scenario accepted");
        assert_eq!(error.line, line, "{text:?}: {error}");
        assert!(error.to_string().starts_with(&format!("line {line}:")));
    }
}

#[test]
fn missing_files_are_errors() {
    let error = MovingAiMap::load("/nonexistent/x.map").unwrap_err();
    assert!(error.to_string().contains("/nonexistent/x.map"));
    assert!(Scenario::load_all("/nonexistent/x.map.scen").is_err());
}

/// The RTS example's own map: it parses, has swamp (rough ground), and an
/// area of ground cut off from the main one.
#[test]
fn the_example_map_has_what_the_scene_shows() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/maps/frontier.map");
    let map = MovingAiMap::load(path).expect("assets/maps/frontier.map parses");
    assert!(map.terrain().contains(&b'S'), "no swamp");
    let grid = map.to_nav_grid();
    let mut by_region = std::collections::HashMap::<u32, usize>::new();
    for index in 0..grid.cell_count() {
        if let Some(region) = grid.region(grid.cell(index)) {
            *by_region.entry(region).or_default() += 1;
        }
    }
    assert_eq!(by_region.len(), grid.region_count() as usize);
    let mut sizes: Vec<usize> = by_region.into_values().collect();
    sizes.sort_unstable();
    assert!(sizes.len() >= 2, "nothing is cut off");
    assert!(
        sizes[sizes.len() - 2] >= 100,
        "the cut-off area is a real area"
    );
}
