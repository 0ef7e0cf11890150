//! Where two clients parted: two clients of one game (the second with
//! other entity ids, after a menu's entities came and went) dump the same
//! state every frame until one of them gives one unit another order; on
//! the first frame their checksums differ, the dumps' first difference
//! between units names that unit, and the dumps read back from their text
//! as they were.

use bevy::prelude::*;
use bevy_frontier::checksum::FrontierChecksum;
use bevy_frontier::desync::FrontierDump;
use bevy_frontier::ordinal::Ordinal;
use bevy_frontier::prelude::*;

use crate::common::{Rng, clutter, crowd_app, spawn_map, spawn_mover};

/// The frame the second client sends unit `CHANGED` elsewhere.
const CHANGE_AT: u32 = 30;
const CHANGED: usize = 13;

/// A client: a field with a wall, and 24 movers sent across it a few at
/// a time, with a group of 6 among them.
struct Client {
    app: App,
    units: Vec<Entity>,
}

impl Client {
    fn new(clutter_first: bool) -> Self {
        let mut app = crowd_app();
        if clutter_first {
            clutter(&mut app, &mut Rng::new(3));
        }
        app.init_resource::<FrontierChecksum>();
        let mut grid = NavGrid::new(48, 32).unwrap();
        grid.fill_rect(Cell::new(24, 4), Cell::new(25, 31), NavGrid::BLOCKED)
            .unwrap();
        spawn_map(&mut app, grid);
        let units = (0..24)
            .map(|i| spawn_mover(&mut app, Cell::new(2 + 2 * (i % 6), 4 + 3 * (i / 6)), 3.0))
            .collect();
        Self { app, units }
    }

    /// Runs frame `frame`: orders given on it, then the update.
    fn frame(&mut self, frame: u32, change: bool) {
        let world = self.app.world_mut();
        if frame == 1 {
            world.write_message(GroupMove::new(self.units[18..].to_vec(), Cell::new(40, 26)));
        }
        if (2..20).contains(&frame) {
            let i = (frame - 2) as usize;
            let goal = Cell::new(36 + (i as u32 % 4) * 2, 2 + (i as u32 / 4) * 5);
            world
                .entity_mut(self.units[i])
                .insert(PathRequest::new(goal));
        }
        if change && frame == CHANGE_AT {
            world
                .entity_mut(self.units[CHANGED])
                .insert(PathRequest::new(Cell::new(10, 28)));
        }
        self.app.update();
    }

    fn checksum(&self) -> u64 {
        self.app.world().resource::<FrontierChecksum>().frame()
    }
}

#[test]
fn the_dumps_of_two_clients_name_the_unit_whose_order_differs() {
    let (mut ours, mut theirs) = (Client::new(false), Client::new(true));
    let changed = *ours
        .app
        .world()
        .get::<Ordinal>(ours.units[CHANGED])
        .unwrap();
    for frame in 1..=CHANGE_AT + 10 {
        ours.frame(frame, false);
        theirs.frame(frame, true);
        let mine = FrontierDump::capture(ours.app.world_mut());
        let other = FrontierDump::capture(theirs.app.world_mut());
        // What a client sends the other: the dump as text.
        let other: FrontierDump = other.to_string().parse().unwrap();
        if ours.checksum() == theirs.checksum() {
            assert!(frame < CHANGE_AT, "frame {frame}: the change went unseen");
            assert_eq!(
                mine.differences(&other).next(),
                None,
                "frame {frame}: equal checksums, yet the dumps differ"
            );
            assert_eq!(mine.units().count(), 24 + 1, "24 units and the group");
            continue;
        }
        assert_eq!(frame, CHANGE_AT, "the games parted before the change");
        let first = mine
            .differences(&other)
            .find(|d| d.unit.is_some())
            .expect("the dumps differ in no unit");
        assert_eq!(
            first.unit,
            Some(changed.joined()),
            "the first unit that differs is not the one given another order: {first}"
        );
        // And among that unit's lines, the order that set it apart.
        let request = mine
            .differences(&other)
            .find(|d| d.unit == first.unit && d.field == "request")
            .expect("the unit's request is not among the differences");
        assert!(
            request
                .theirs
                .as_deref()
                .unwrap()
                .contains("to cell (10, 28)"),
            "{request}"
        );
        return;
    }
    panic!("the checksums never parted");
}
