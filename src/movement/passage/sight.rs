//! What a unit sees of the passages ahead ([`Sighting`]): it looks along
//! its way, at the anchors its body would stand on, for the nearest
//! passage and its side of it.

use bevy::prelude::*;

use super::map::{Miss, Passage, PassageMap, Passages, class_map, held_in, holders, widths};
use crate::core::Cell;
use crate::maps::{AllViews, MapView};
use crate::movement::body::{Avoidance, body_radius, speed_of};
use crate::movement::state::turn::{Claim, ClassMap};
use crate::movement::state::{Motion, Mover, Steering};
use crate::movement::tuning::{
    BODY_RADIUS, CLAIM_AT, CLEAR_OF_MOUTH, CORNERS_AHEAD, EXIT_LENGTH, LOOK_AHEAD,
};
use crate::pathfinding::{Footprint, MovementClass, unit_kind};

/// What one unit near a passage sees of it this frame.
pub(crate) struct Sighting {
    pub(super) unit: Entity,
    /// Its rank in the crowd ([`Ordinal::crowd_rank`](crate::ordinal::Ordinal::crowd_rank)).
    pub(super) rank: u64,
    /// The passage ahead (or the one it is in), and its side of it.
    pub(super) ahead: Claim,
    /// How far ahead the passage starts, in world units (0 inside it).
    pub(super) distance: f32,
    /// The claim it held coming into the frame.
    pub(super) held: Option<Claim>,
    pub(super) waited: f32,
    /// The direction it means to go.
    pub(super) heading: Vec2,
    /// Distance it should keep from the passage while waiting.
    pub(super) hold: f32,
    /// Distance from the passage at which it claims it, its side's turn.
    pub(super) claim: f32,
    pub(super) speed: f32,
    /// Where it stands.
    pub(super) position: Vec2,
    /// The way out of the passage at its mouth on this unit's side, kept clear.
    pub(super) exit: Exit,
}

/// The strip the units coming out of a passage walk (its exit), kept clear by those
/// waiting at that mouth. In world space.
#[derive(Clone, Copy)]
pub(crate) struct Exit {
    /// The mouth's centre.
    pub(super) mouth: Vec2,
    /// The way out (unit length).
    pub(super) out: Vec2,
    /// Half the strip's width.
    pub(super) half_width: f32,
    /// How far out from the mouth it runs.
    pub(super) length: f32,
}

/// The points a unit means to walk through, from where it stands: the
/// first of `points`, as many as the count says.
pub(super) fn way_ahead(steering: &Steering, position: Vec2) -> ([Vec2; CORNERS_AHEAD + 1], usize) {
    let mut way = [position; CORNERS_AHEAD + 1];
    let mut count = 1;
    match steering {
        Steering::Idle => {}
        Steering::Instinct { goal, .. } => {
            way[1] = *goal;
            count = 2;
        }
        Steering::Following { route, .. } => {
            for corner in route.remaining().take(CORNERS_AHEAD) {
                way[count] = corner;
                count += 1;
            }
        }
    }
    (way, count)
}

/// The first passage on `way` within `reach` world units: its index, the
/// first of its anchors met, and how far along the way that anchor starts
/// (0 when the unit stands in it); or what nobody has looked at yet.
#[inline] // called across modules in the crowd step's hot loops
pub(super) fn look_ahead(
    view: &MapView,
    width: u8,
    passages: &PassageMap,
    key: (ClassMap, u8),
    position: Vec2,
    way: &[Vec2],
    reach: f32,
) -> Result<Option<(u32, Cell, f32)>, Miss> {
    let size_class = view.for_size(width).size_class();
    let cells = view.for_size(1);
    let cell = view.layout.cell_size.abs().min_element();
    let Some(here) = cells.cell_at(position) else {
        return Ok(None);
    };
    let near = (reach / cell).ceil() as u32 + width as u32;
    match passages.one_lane_near(here, near) {
        Ok(true) => {}
        Ok(false) => return Ok(None),
        Err((bx, by)) => return Err(Miss::Block(key, bx, by)),
    }
    let size = view.size();
    let step = 0.25 * cell;
    let mut last = None;
    let mut travelled = 0.0;
    let check = |at: Vec2, travelled: f32, last: &mut Option<Cell>| {
        let Some(spot) = cells.cell_at(at) else {
            return Ok(None);
        };
        if *last == Some(spot) {
            return Ok(None);
        }
        *last = Some(spot);
        let mut missed = None;
        let found = held_in(view, at, size, width, |anchor| {
            match passages.passage_at(&size_class, anchor) {
                Ok(index) => index.map(|index| (index, anchor, travelled)),
                Err(chain) => {
                    missed = Some(Miss::Chain(key, chain));
                    None
                }
            }
        });
        missed.map_or(Ok(found), Err)
    };
    if let Some(found) = check(position, 0.0, &mut last)? {
        return Ok(Some(found));
    }
    for pair in way.windows(2) {
        let (from, to) = (pair[0], pair[1]);
        let length = from.distance(to);
        let mut along = 0.0;
        while along < length {
            along = (along + step).min(length);
            if travelled + along > reach {
                return Ok(None);
            }
            let at = from.lerp(to, along / length);
            if let Some(found) = check(at, travelled + along, &mut last)? {
                return Ok(Some(found));
            }
        }
        travelled += length;
    }
    Ok(None)
}

/// A look that needs what nobody has looked at yet: the unit's place in
/// the crowd, the unit, and what it needs.
pub(super) type Missed = (u64, Entity, Miss);

/// What taking turns reads of one unit.
pub(super) struct Looker<'a> {
    pub(super) unit: Entity,
    /// Its rank in the crowd ([`Ordinal::crowd_rank`](crate::ordinal::Ordinal::crowd_rank)).
    pub(super) rank: u64,
    pub(super) map: ClassMap,
    /// Its map, for its class and size.
    pub(super) view: MapView<'a>,
    pub(super) position: Vec2,
    /// The points it means to walk through, from where it stands.
    pub(super) way: ([Vec2; CORNERS_AHEAD + 1], usize),
    /// The direction it means to go.
    pub(super) heading: Vec2,
    /// The claim it holds coming into the frame.
    pub(super) claim: Option<Claim>,
    pub(super) waited: f32,
    pub(super) radius: f32,
    pub(super) speed: f32,
}

impl<'a> Looker<'a> {
    /// A unit as taking turns sees it, if it takes turns: it is on a map
    /// and avoids others (`enabled`: avoidance is on).
    #[expect(clippy::too_many_arguments, reason = "one unit's components")]
    pub(super) fn new(
        views: &AllViews<'a>,
        enabled: bool,
        (rank, unit): (u64, Entity),
        mover: &Mover,
        transform: &Transform,
        steering: &Steering,
        motion: &Motion,
        footprint: Option<&Footprint>,
        class: Option<&MovementClass>,
        avoidance: Option<&Avoidance>,
    ) -> Option<Self> {
        let avoids = avoidance.is_none_or(|a| a.enabled);
        let map = steering.map()?;
        let view = views.get(map)?.for_kind(unit_kind(footprint, class));
        let map = class_map(map, &view);
        if !avoids || !enabled {
            return None;
        }
        let position = transform.translation.truncate();
        let way = way_ahead(steering, position);
        let heading = way.0[..way.1]
            .iter()
            .map(|&p| p - position)
            .find(|d| d.length_squared() > 1e-8)
            .map_or(Vec2::ZERO, Vec2::normalize);
        let cell = view.layout.cell_size.abs().min_element();
        Some(Self {
            unit,
            rank,
            map,
            view,
            position,
            way,
            heading,
            claim: motion.passage.turn.claim(),
            waited: motion.passage.turn.waited(),
            radius: body_radius(avoidance, footprint, cell),
            speed: speed_of(mover, cell),
        })
    }
}

impl Passages {
    /// What `looker` sees of the passages ahead: `None` where none is near,
    /// or what nobody has looked at yet.
    pub(super) fn sight(&self, looker: &Looker) -> Result<Option<Sighting>, Miss> {
        let (map, view, position, radius) =
            (looker.map, looker.view, looker.position, looker.radius);
        let cell = view.layout.cell_size.abs().min_element();
        let found = match self.nearest_ahead(looker)? {
            Some(found) => Some(found),
            None => self.mouth_held(looker),
        };
        let Some((width, (index, first, distance))) = found else {
            return Ok(None);
        };
        let passage_view = view.for_size(width);
        let Some(passage) = self
            .maps
            .get(&(map, width))
            .and_then(|m| m.passages.get(index as usize))
        else {
            return Ok(None);
        };
        let key = passage.key;
        let held = looker.claim.filter(|c| c.passage() == (map, width, key));
        let side = match held {
            Some(claim) => claim.side,
            None => side_of(
                &passage_view,
                passage,
                first,
                distance,
                position,
                looker.heading,
            ),
        };
        // The exit on this side: from the end's
        // footprint centre through the mouth's, as wide as the passage's
        // biggest unit.
        let (end, mouth) = (
            passage_view.cell_to_world(passage.ends[side as usize]),
            passage_view.cell_to_world(passage.mouths[side as usize]),
        );
        let width_radius = BODY_RADIUS * width as f32 * cell;
        Ok(Some(Sighting {
            unit: looker.unit,
            rank: looker.rank,
            ahead: Claim {
                map,
                size: width,
                key,
                side,
            },
            distance,
            exit: Exit {
                mouth,
                out: (mouth - end).normalize_or_zero(),
                half_width: radius.max(width_radius) + 0.5 * width as f32 * cell,
                length: EXIT_LENGTH * cell,
            },
            position,
            held: looker.claim,
            waited: looker.waited,
            heading: looker.heading,
            hold: radius + CLEAR_OF_MOUTH * cell,
            claim: radius + CLAIM_AT * cell,
            speed: looker.speed,
        }))
    }

    /// The nearest passage ahead of `looker` (its width, and the
    /// passage, the anchor where it starts and how far ahead), of its size
    /// or a bigger one (its own size first of two as near): infantry
    /// crossing a bridge two cells wide (one lane while a tank is about)
    /// towards a gap one cell wide are on the bridge till they are off it.
    #[allow(clippy::type_complexity)]
    pub(super) fn nearest_ahead(
        &self,
        looker: &Looker,
    ) -> Result<Option<(u8, (u32, Cell, f32))>, Miss> {
        let (map, view, position) = (looker.map, looker.view, looker.position);
        let way = &looker.way.0[..looker.way.1];
        let cell = view.layout.cell_size.abs().min_element();
        let size = view.size();
        let reach = looker.radius + LOOK_AHEAD * cell;
        let mut found: Option<(u8, (u32, Cell, f32))> = None;
        for k in widths(self.present(map), size) {
            let Some(map_passages) = self.maps.get(&(map, k)) else {
                return Err(Miss::Map((map, k)));
            };
            if let Some(ahead) = look_ahead(&view, k, map_passages, (map, k), position, way, reach)?
                && found.is_none_or(|(_, nearest)| ahead.2 < nearest.2)
            {
                found = Some((k, ahead));
            }
            // Nothing is nearer than a passage it stands in.
            if found.is_some_and(|(_, nearest)| nearest.2 <= 0.0) {
                break;
            }
        }
        Ok(found)
    }

    /// A unit that has come out of the passage it holds keeps it while it
    /// stands in the mouth, so that nobody comes in at it: that passage,
    /// as [`nearest_ahead`](Self::nearest_ahead) gives one.
    pub(super) fn mouth_held(&self, looker: &Looker) -> Option<(u8, (u32, Cell, f32))> {
        let (map, view, position) = (looker.map, looker.view, looker.position);
        let held = looker.claim?;
        let size = view.size();
        if held.map != map || held.size < size {
            return None;
        }
        let map_passages = self.maps.get(&(map, held.size))?;
        holders(&view, position, size, held.size).find_map(|here| {
            map_passages
                .passages
                .iter()
                .position(|p| p.key == held.key && p.mouths.contains(&here))
                .map(|index| (held.size, (index as u32, here, 0.0)))
        })
    }
}

/// Which mouth a unit at `position` enters `passage` from: for a unit
/// outside, the mouth of the end it meets first (`first`; the nearer mouth
/// when that end has both); for one already inside without a claim, the
/// mouth behind it.
pub(super) fn side_of(
    view: &MapView,
    passage: &Passage,
    first: Cell,
    distance: f32,
    position: Vec2,
    heading: Vec2,
) -> u8 {
    let mouth = |side: usize| view.cell_to_world(passage.mouths[side]);
    let nearer = || {
        if mouth(0).distance_squared(position) <= mouth(1).distance_squared(position) {
            0
        } else {
            1
        }
    };
    if distance <= 0.0 {
        let behind = |side: usize| (mouth(side) - position).dot(heading);
        return if behind(0) <= behind(1) { 0 } else { 1 };
    }
    match (passage.ends[0] == first, passage.ends[1] == first) {
        (true, false) => 0,
        (false, true) => 1,
        _ => nearer(),
    }
}
