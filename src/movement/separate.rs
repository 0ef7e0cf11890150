//! Separation (stage 6, [`CrowdSystems::Separate`](super::CrowdSystems::Separate)):
//! bodies still touching after the walk are pushed apart, the pairs
//! avoidance found close enough to touch, in the colours it built.

use bevy::ecs::query::QueryData;
use bevy::prelude::*;

use super::avoidance::Crowd;
use super::avoidance::priority::Agent;
use super::avoidance::solver::Separation;
use super::parallel::{Pace, team_threads, with_team};
use super::passage::Passages;
use super::seats::Seat;
use super::settings::CrowdSettings;
use super::state::{MapsBesideUnits, Motion, Mover};
use super::tuning::SEAT_CHUNK;
use crate::core::UnitKind;
use crate::maps::{AllViews, MapView};

/// A mover's body as [`separate`] moves it.
#[derive(QueryData)]
#[query_data(mutable)]
pub(crate) struct BodyQuery {
    transform: &'static mut Transform,
    motion: &'static mut Motion,
    seat: &'static Seat,
}

/// The pace of [`separate`]'s dispatch, on the pool's threads and alone.
static SEPARATE_PACE: Pace = Pace::new();

/// `FrontierSystems::Move`, after the units walked: bodies that still
/// overlap (ORCA's velocities are only a plan, and a crowd pressed against
/// a wall cannot always follow it) are pushed apart, a few rounds, each
/// unit taking its share as in avoidance, every step checked on the grid,
/// as Detour's crowds do after integration. Only the pairs [`avoid`] found
/// close enough to touch this frame are looked at. A unit that does not
/// avoid is not pushed; the others make way for it. What a unit was pushed
/// is added to the velocity it walked (`Motion::velocity`), as position-based
/// crowds take velocities from positions: one held back in a jam starts the
/// next frame with no push into it, seen standing by the others.
#[inline(never)] // named in profiles: one entry per crowd-step system
pub(crate) fn separate(
    settings: Res<CrowdSettings>,
    bodies: Query<BodyQuery, With<Mover>>,
    maps: MapsBesideUnits,
    passages: Res<Passages>,
    mut crowd: ResMut<Crowd>,
    time: Res<Time>,
) {
    if !settings.enabled || crowd.contacts.is_empty() {
        return;
    }
    let settings = settings.clamped();
    let crowd = &mut *crowd;
    let threads = crate::budget::threads_for(settings.threads);
    let all_views = AllViews::new(&maps);
    let seconds = time.delta_secs();
    // Gathering and the rounds in one dispatch, stage by stage; on this
    // thread alone for a small crowd.
    let count = crowd.agents.len();
    with_team(
        team_threads(threads, count),
        &SEPARATE_PACE,
        count,
        |team| {
            // Where each body stands after the move, and its map for its
            // kind, each chunk of movers alone.
            let mut walk_views: Vec<(Vec2, Option<MapView>)> = vec![(Vec2::NAN, None); count];
            let agents = &crowd.agents;
            team.each_chunk_mut(&mut walk_views, SEAT_CHUNK, |first, chunk| {
                place_bodies(first, chunk, agents, &bodies, &all_views);
            });
            crowd.positions.clear();
            crowd.positions.extend(walk_views.iter().map(|&(at, _)| at));
            let views: Vec<Option<MapView>> =
                walk_views.into_iter().map(|(_, view)| view).collect();
            let separation = Separation {
                agents,
                views: &views,
                passages: &passages,
                colouring: &crowd.colouring,
                rounds: settings.separation_rounds,
                grid: &crowd.grid,
                seconds,
            };
            let pushes = separation.pushes(&mut crowd.positions, (team, threads));
            // Each body pushed goes where the rounds left it, its push added
            // to the velocity it walked: a last stage, rank by rank.
            let (positions, crowd) = (&crowd.positions, &*crowd);
            team.run(count.div_ceil(SEAT_CHUNK), |b| {
                let first = b * SEAT_CHUNK;
                for i in first..(first + SEAT_CHUNK).min(count) {
                    let (push, at) = (pushes[i], positions[i]);
                    if push == Vec2::ZERO {
                        continue;
                    }
                    // SAFETY: each agent is a mover of its own, so no two
                    // calls fetch the same mover's components.
                    let Ok(body) = (unsafe { bodies.get_unchecked(crowd.agents[i].entity) }) else {
                        continue;
                    };
                    let BodyQueryItem {
                        mut transform,
                        mut motion,
                        seat,
                        ..
                    } = body;
                    // The mover the agent was, in the seat it had.
                    if crowd.rank_of(seat) == Some(i) {
                        transform.translation = at.extend(transform.translation.z);
                        if seconds > 0.0 {
                            motion.velocity += push / seconds;
                        }
                    }
                }
            });
        },
    );
}

/// One chunk of the movers' bodies (in rank) as separation starts: where
/// each stands after the walk, and its map for its kind (`None`, a body
/// the separation does not move: a mover off every map, one of a class
/// its map lacks, or one standing nowhere finite).
#[inline(never)] // the parallel body of `separate`'s gathering
fn place_bodies<'a>(
    first: usize,
    chunk: &mut [(Vec2, Option<MapView<'a>>)],
    agents: &[Agent],
    bodies: &Query<BodyQuery, With<Mover>>,
    all_views: &AllViews<'a>,
) {
    for (k, placed) in chunk.iter_mut().enumerate() {
        let agent = &agents[first + k];
        let at = bodies.get(agent.entity).ok().filter(|_| agent.live());
        let Some(at) = at.map(|body| body.transform.translation.truncate()) else {
            continue;
        };
        let kind = UnitKind::new(agent.class, agent.size);
        let view = agent
            .map
            .and_then(|map| all_views.get(map))
            .filter(|view| view.knows(kind))
            .map(|view| view.for_kind(kind));
        *placed = (at, view.filter(|_| at.is_finite()));
    }
}
