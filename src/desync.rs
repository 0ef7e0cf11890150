//! Where two clients parted: a [`FrontierDump`] of what the plugin holds in
//! one frame, in an order and a form no entity id reaches, and its
//! [`differences`](FrontierDump::differences) from another client's.
//!
//! A lockstep game compares [`FrontierChecksum`]s every turn; on the first
//! turn they differ, each client dumps its state and sends it (as text:
//! [`Display`](std::fmt::Display) writes it, [`str::parse`] reads it back), and the
//! differences name the first units and fields that parted, in the order
//! the units joined ([`Ordinal::joined`]), as Factorio's desync report and
//! 0 A.D.'s out-of-sync dump do:
//!
//! ```
//! # use bevy::prelude::*;
//! # use bevy_frontier::prelude::*;
//! use bevy_frontier::desync::FrontierDump;
//!
//! # let mut ours = App::new();
//! # ours.add_plugins((MinimalPlugins, FrontierPlugins::default()));
//! # ours.world_mut().spawn((NavGrid::new(8, 8).unwrap(), Transform::default()));
//! # let theirs_text = FrontierDump::capture(ours.world_mut()).to_string();
//! let mine = FrontierDump::capture(ours.world_mut());
//! // `theirs_text` came from the other client.
//! let theirs: FrontierDump = theirs_text.parse().unwrap();
//! for difference in mine.differences(&theirs).take(5) {
//!     println!("{difference}");
//! }
//! ```
//!
//! A unit is named by its place in the order units joined (`unit 17`);
//! an entity a unit's order or result points at, by its own place (a
//! chased unit, a group) or not at all (a map, whose own line gives its
//! size and grid version). Numbers are written as Rust writes them, which
//! tells every two floats apart: two dumps are equal exactly when the
//! state they were taken from is.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use bevy::prelude::*;

use crate::checksum::{FrontierChecksum, hash_words};
use crate::core::{ClassId, NavGrid};
use crate::groups::GroupMember;
use crate::movement::{Arrived, Motion, Mover, Steering};
use crate::ordinal::Ordinal;
use crate::pathfinding::{
    Footprint, MovementClass, PathRequest, PathResult, PathTarget, PathfindingQueue,
    PathfindingStats,
};

/// One frame of the plugin's state, in lines of `key: value` (see the
/// [module](self)). Equal on two clients of one lockstep game exactly when
/// what the dump holds is.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FrontierDump {
    /// Each line's place (a unit, or none for the frame's own lines, and
    /// the field), and its value.
    lines: BTreeMap<Key, String>,
}

/// A line's place in a dump: the frame's lines first, then each unit's in
/// the order units joined, each unit's fields in the order of [`FIELDS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Key {
    /// The unit's [`Ordinal::joined`], or `None` for the frame's lines.
    unit: Option<u64>,
    /// The field's place in [`FRAME_FIELDS`] or [`FIELDS`].
    field: u8,
}

/// The frame's lines.
const FRAME_FIELDS: [&str; 4] = ["frame", "checksum", "queue", "maps"];
/// Each unit's lines.
const FIELDS: [&str; 8] = [
    "at", "request", "result", "unit", "steering", "motion", "arrived", "group",
];

impl Key {
    /// The fields a line of `unit` (or of the frame, for `None`) may have.
    fn fields(unit: Option<u64>) -> &'static [&'static str] {
        match unit {
            None => &FRAME_FIELDS,
            Some(_) => &FIELDS,
        }
    }

    /// The key of `unit`'s field `name`, if it has one so named.
    fn named(unit: Option<u64>, name: &str) -> Option<Key> {
        let field = Self::fields(unit).iter().position(|f| *f == name)?;
        Some(Key {
            unit,
            field: field as u8,
        })
    }

    fn name(self) -> &'static str {
        Self::fields(self.unit)[usize::from(self.field)]
    }
}

/// Where two dumps differ: one line, with its value in each (`None` where
/// a dump has no such line, as for a unit one client has and the other
/// has not).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Difference {
    /// The unit ([`Ordinal::joined`]) whose line it is, or `None` for a
    /// line of the frame's own.
    pub unit: Option<u64>,
    /// The line's field: `at`, `request`, `result`, `unit`, `steering`,
    /// `motion`, `arrived` or `group` for a unit; `frame`, `checksum`,
    /// `queue` or `maps` for the frame.
    pub field: &'static str,
    /// The value in the dump `differences` was called on.
    pub ours: Option<String>,
    /// The value in the other dump.
    pub theirs: Option<String>,
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.unit {
            Some(unit) => write!(f, "unit {unit} {}:", self.field)?,
            None => write!(f, "{}:", self.field)?,
        }
        let (ours, theirs) = (self.ours.as_deref(), self.theirs.as_deref());
        write!(
            f,
            "\n  ours:   {}\n  theirs: {}",
            ours.unwrap_or("(none)"),
            theirs.unwrap_or("(none)")
        )
    }
}

/// A `Vec2` as Rust writes floats: exact.
fn xy(v: Vec2) -> String {
    format!("({:?}, {:?})", v.x, v.y)
}

impl FrontierDump {
    /// The plugin's state in `world` now: the frame's count and checksum
    /// (with a [`FrontierChecksum`]), the queue's counts, the maps' sizes
    /// and versions; for every unit with an [`Ordinal`] (every unit that
    /// got a request or a mover, and every group), where it stands, its
    /// request and result (its cells hashed), its mover's speed, class and size, its
    /// steering (goal, corners left, the next), its velocities, rest place
    /// and crowd state, how its last order ended and its group.
    pub fn capture(world: &mut World) -> Self {
        let mut lines = BTreeMap::new();
        let mut put = |unit: Option<u64>, name: &str, value: String| {
            let key = Key::named(unit, name).expect("a field of the dump's own");
            lines.insert(key, value);
        };
        if let Some(queue) = world.get_resource::<PathfindingQueue>() {
            let stats = world.get_resource::<PathfindingStats>();
            put(
                None,
                "queue",
                format!(
                    "frame {}, {} waiting, {} in flight, {} requests, {} searches",
                    queue.frame(),
                    queue.queued(),
                    queue.in_flight(),
                    stats.map_or(0, |s| s.requests_total),
                    stats.map_or(0, |s| s.searches_started_total),
                ),
            );
        }
        if let Some(checksum) = world.get_resource::<FrontierChecksum>() {
            put(None, "frame", checksum.frames().to_string());
            put(
                None,
                "checksum",
                format!(
                    "{:016x} (total {:016x})",
                    checksum.frame(),
                    checksum.total()
                ),
            );
        }
        let mut maps: Vec<String> = world
            .query::<&NavGrid>()
            .iter(world)
            .map(|grid| format!("{}x{} v{}", grid.width(), grid.height(), grid.version()))
            .collect();
        maps.sort();
        put(None, "maps", maps.join(", "));
        let ordinals: BTreeMap<Entity, u64> = world
            .query::<(Entity, &Ordinal)>()
            .iter(world)
            .map(|(entity, ordinal)| (entity, ordinal.joined()))
            .collect();
        let name = |entity: Entity| match ordinals.get(&entity) {
            Some(unit) => format!("unit {unit}"),
            None => "an entity outside the plugin".to_owned(),
        };
        let target = |target: PathTarget| match target {
            PathTarget::World(p) => format!("point {}", xy(p)),
            PathTarget::Cell(c) => format!("cell ({}, {})", c.x, c.y),
            PathTarget::Entity(e) => name(e),
        };
        let mut units = world.query::<(
            &Ordinal,
            Option<&Transform>,
            Option<&PathRequest>,
            Option<&PathResult>,
            Option<(&Mover, Option<&MovementClass>, Option<&Footprint>)>,
            Option<(&Steering, &Motion)>,
            Option<&Arrived>,
            Option<&GroupMember>,
        )>();
        for (ordinal, transform, request, result, mover, steering, arrived, member) in
            units.iter(world)
        {
            let unit = Some(ordinal.joined());
            if let Some(transform) = transform {
                put(unit, "at", xy(transform.translation.truncate()));
            }
            if let Some(r) = request {
                put(
                    unit,
                    "request",
                    format!(
                        "to {}{}, priority {}, range {:?}{}, {:?}{}, asked {}",
                        target(r.goal),
                        r.start
                            .map_or(String::new(), |s| format!(" from {}", target(s))),
                        r.priority,
                        r.range,
                        if r.keep_following { " (follow)" } else { "" },
                        r.on_unreachable,
                        if r.refine { "" } else { ", unrefined" },
                        ordinal.asked(),
                    ),
                );
            }
            if let Some(r) = result {
                // The ends, and a hash of every cell between.
                let ends = match (r.cells.first(), r.cells.last()) {
                    (Some(a), Some(b)) => format!(
                        " ({}, {}) to ({}, {}) #{:08x}",
                        a.x,
                        a.y,
                        b.x,
                        b.y,
                        hash_words(
                            r.cells
                                .iter()
                                .map(|c| u64::from(c.x) << 32 | u64::from(c.y))
                        ) >> 32
                    ),
                    _ => String::new(),
                };
                put(
                    unit,
                    "result",
                    format!(
                        "{:?}, {} cells{ends}, cost {:?}, {} expansions, size {}, class {:?}, \
                         waited {}, grid v{}{}{}",
                        r.status,
                        r.cells.len(),
                        r.cost,
                        r.expansions,
                        r.size,
                        r.class,
                        r.frames_waited,
                        r.grid_version,
                        if r.invalidated { ", invalidated" } else { "" },
                        if r.ends_short { ", ends short" } else { "" },
                    ),
                );
            }
            if let Some((mover, class, footprint)) = mover {
                put(
                    unit,
                    "unit",
                    format!(
                        "speed {:?}, class {:?}, size {}",
                        mover.speed,
                        class.map_or(ClassId::DEFAULT, |c| c.0),
                        footprint.map_or(1, |f| f.0),
                    ),
                );
            }
            if let Some((steering, motion)) = steering {
                let steer = match steering {
                    Steering::Idle => "idle".to_owned(),
                    Steering::Instinct { goal, .. } => format!("instinct to {}", xy(*goal)),
                    Steering::Following { route, goal, .. } => format!(
                        "following to {}, {} corners left, next {}",
                        xy(*goal),
                        route.len(),
                        route.next_waypoint().map_or("none".to_owned(), xy),
                    ),
                };
                put(unit, "steering", steer);
                put(
                    unit,
                    "motion",
                    format!(
                        "{:?}, preferred {}, planned {}, velocity {}, rest {}",
                        motion.state(steering),
                        xy(motion.preferred),
                        xy(motion.planned),
                        xy(motion.velocity),
                        motion.rest.map_or("none".to_owned(), xy),
                    ),
                );
            }
            if let Some(arrived) = arrived {
                put(unit, "arrived", format!("{arrived:?}"));
            }
            if let Some(member) = member {
                put(unit, "group", name(member.group));
            }
        }
        Self { lines }
    }

    /// The lines that differ between this dump and `theirs`: the frame's
    /// own first (its checksum and counts, which differ whenever anything
    /// does), then unit by unit in the order they joined, so the first
    /// unit named is the first, in that order, whose state differs.
    pub fn differences<'a>(&'a self, theirs: &'a Self) -> impl Iterator<Item = Difference> + 'a {
        let mut keys: Vec<Key> = self
            .lines
            .keys()
            .chain(theirs.lines.keys())
            .copied()
            .collect();
        keys.sort_unstable();
        keys.dedup();
        keys.into_iter().filter_map(move |key| {
            let (ours, other) = (self.lines.get(&key), theirs.lines.get(&key));
            (ours != other).then(|| Difference {
                unit: key.unit,
                field: key.name(),
                ours: ours.cloned(),
                theirs: other.cloned(),
            })
        })
    }

    /// The units in the dump ([`Ordinal::joined`]), in order.
    pub fn units(&self) -> impl Iterator<Item = u64> + '_ {
        let mut last = None;
        self.lines.keys().filter_map(move |key| {
            let unit = key.unit?;
            (last != Some(unit)).then(|| {
                last = Some(unit);
                unit
            })
        })
    }
}

impl fmt::Display for FrontierDump {
    /// One line a field: `frame: …` for the frame's own, `unit 17 at: …`
    /// for a unit's, in the dump's order.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (key, value) in &self.lines {
            match key.unit {
                Some(unit) => writeln!(f, "unit {unit} {}: {value}", key.name())?,
                None => writeln!(f, "{}: {value}", key.name())?,
            }
        }
        Ok(())
    }
}

/// Why a text is not a [`FrontierDump`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseDumpError {
    /// The line (from 1) that could not be read.
    pub line: usize,
    /// What was wrong with it.
    pub reason: String,
}

impl fmt::Display for ParseDumpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {} of the dump: {}", self.line, self.reason)
    }
}

impl std::error::Error for ParseDumpError {}

impl FromStr for FrontierDump {
    type Err = ParseDumpError;

    /// Reads what [`Display`](fmt::Display) wrote. Empty lines are skipped.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let mut lines = BTreeMap::new();
        for (number, line) in text.lines().enumerate() {
            let error = |reason: String| ParseDumpError {
                line: number + 1,
                reason,
            };
            if line.trim().is_empty() {
                continue;
            }
            let (place, value) = line
                .split_once(": ")
                .ok_or_else(|| error(format!("no `: ` in {line:?}")))?;
            let words: Vec<&str> = place.split(' ').collect();
            let (unit, name) = match words.as_slice() {
                ["unit", unit, name] => {
                    let unit = unit
                        .parse::<u64>()
                        .map_err(|_| error(format!("{unit:?} is not a unit's number")))?;
                    (Some(unit), *name)
                }
                [name] => (None, *name),
                _ => return Err(error(format!("{place:?} names no field"))),
            };
            let key = Key::named(unit, name).ok_or_else(|| error(format!("no field {name:?}")))?;
            if lines.insert(key, value.to_owned()).is_some() {
                return Err(error(format!("{place:?} given twice")));
            }
        }
        Ok(Self { lines })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dump_reads_back_as_written_and_bad_text_is_refused() {
        let text = "frame: 3\nmaps: 8x8 v1\nunit 2 at: (1.5, -0.0)\nunit 2 motion: Moving\n\
                    unit 10 at: (2.0, 3.0)\n";
        let dump: FrontierDump = text.parse().unwrap();
        assert_eq!(dump.to_string(), text);
        assert_eq!(dump.units().collect::<Vec<_>>(), [2, 10]);
        for (bad, line) in [
            ("frame 3", 1),
            ("maps: x\nunit two at: (0.0, 0.0)", 2),
            ("unit 1 colour: red", 1),
            ("frame: 1\nframe: 2", 2),
        ] {
            assert_eq!(bad.parse::<FrontierDump>().unwrap_err().line, line, "{bad}");
        }
    }

    #[test]
    fn differences_come_frame_first_then_unit_by_unit() {
        let ours: FrontierDump = "frame: 3\nunit 2 at: (1.0, 1.0)\nunit 5 at: (2.0, 2.0)\n\
                                  unit 5 motion: Moving\n"
            .parse()
            .unwrap();
        let theirs: FrontierDump = "frame: 4\nunit 2 at: (1.0, 1.0)\nunit 5 at: (2.0, 2.5)\n\
                                    unit 7 at: (0.0, 0.0)\n"
            .parse()
            .unwrap();
        let found: Vec<(Option<u64>, &str)> = ours
            .differences(&theirs)
            .map(|d| (d.unit, d.field))
            .collect();
        assert_eq!(
            found,
            [
                (None, "frame"),
                (Some(5), "at"),
                (Some(5), "motion"),
                (Some(7), "at")
            ]
        );
        assert_eq!(ours.differences(&ours).count(), 0);
        let first = ours.differences(&theirs).nth(1).unwrap();
        assert_eq!(
            first.to_string(),
            "unit 5 at:\n  ours:   (2.0, 2.0)\n  theirs: (2.0, 2.5)"
        );
    }
}
