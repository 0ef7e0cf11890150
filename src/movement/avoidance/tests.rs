use super::neighbours::SpatialGrid;
use super::plan::{follows, turned_right};
use super::priority::{Flags, priority};
use super::solver::Separation;
use super::*;
use crate::core::Cell;
use crate::core::{ClassId, NavGrid};
use crate::maps::GridLayout;

/// The turn to the right made of multiplications matches the
/// platform's sine and cosine over the angles a unit turns by.
#[test]
#[expect(
    clippy::disallowed_methods,
    reason = "the reference it is checked against"
)]
fn turning_right_without_sine_and_cosine() {
    for step in 0..=150 {
        let angle = step as f32 * 0.01;
        let v = Vec2::new(0.6, -1.7);
        let expected = Vec2::from_angle(-angle).rotate(v);
        let got = turned_right(v, angle);
        assert!(
            got.distance(expected) < 1e-5 * v.length(),
            "{angle}: {got} {expected}"
        );
    }
}

/// A small xorshift generator.
pub(super) struct Rng(pub(super) u64);

impl Rng {
    /// The next number in [0, 1).
    pub(super) fn next(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }
}

fn agent(entity: u32, position: Vec2) -> Agent {
    Agent {
        entity: Entity::from_raw_u32(entity).unwrap(),
        // In the order the entities compare in (their bits), as the
        // scenes of these tests were first drawn in.
        rank: Entity::from_raw_u32(entity).unwrap().to_bits(),
        map: None,
        class: ClassId::DEFAULT,
        position,
        velocity: Vec2::ZERO,
        preferred: Vec2::ZERO,
        radius: 0.45,
        speed: 4.0,
        heading: Vec2::ZERO,
        blocked: 0.0,
        still: f32::INFINITY,
        flags: Flags::LIVE.with(Flags::AVOIDS, true),
        size: 1,
        goal: Vec2::NAN,
        group: None,
    }
}

/// Separation's colours hold pairs that share no body: split over any
/// number of threads they give the same positions bit for bit. And the
/// rounds part the bodies: the deepest overlap is less after than
/// before.
#[test]
fn separation_is_the_same_for_any_split_and_parts_bodies() {
    let mut grid = NavGrid::new(48, 48).unwrap();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for _ in 0..120 {
        let cell = Cell::new((rng.next() * 48.0) as u32, (rng.next() * 48.0) as u32);
        grid.set_cost(cell, NavGrid::BLOCKED).unwrap();
    }
    let layout = GridLayout::default();
    let view = MapView::new(&grid, &layout, None);
    for round in 0..6 {
        let count = 400 + round * 60;
        // Where each started the frame: a cell apart (bodies apart,
        // as the frame before left them), and where each walked to.
        let agents: Vec<Agent> = (0..count)
            .map(|k| {
                let cell = Vec2::new((k % 24) as f32, (k / 24) as f32);
                let jitter = Vec2::new(rng.next() - 0.5, rng.next() - 0.5) * 0.1;
                let mut a = agent(k as u32 + 1, Vec2::splat(4.0) + cell + jitter);
                a.set(Flags::PUSHING, rng.next() < 0.2);
                a.set(Flags::IDLE, rng.next() < 0.2);
                a.set(Flags::AVOIDS, rng.next() < 0.9);
                a
            })
            .collect();
        let walked: Vec<Vec2> = agents
            .iter()
            .map(|a| a.position + Vec2::new(rng.next() - 0.5, rng.next() - 0.5) * 0.3)
            .collect();
        let views: Vec<Option<MapView>> = walked
            .iter()
            .map(|&at| {
                view.cell_at(at)
                    .filter(|&c| grid.is_walkable(c))
                    .map(|_| view)
            })
            .collect();
        let mut contacts = Vec::new();
        for i in 0..count {
            for j in i + 1..count {
                if walked[i].distance(walked[j]) < 1.2 {
                    contacts.push((i as u32, j as u32));
                }
            }
        }
        let mut colouring = Colouring::default();
        colouring.rebuild(&contacts, count);
        let passages = Passages::default();
        let separation = Separation {
            agents: &agents,
            views: &views,
            passages: &passages,
            colouring: &colouring,
            rounds: 32,
            grid: &grid_of(&agents),
            seconds: 1.0 / 60.0,
        };
        let start = walked;
        let deepest = |positions: &[Vec2]| {
            contacts
                .iter()
                .filter(|&&(i, j)| {
                    let (a, b) = (&agents[i as usize], &agents[j as usize]);
                    let parts = priority(a, b).gives + priority(b, a).gives > 0.0;
                    parts && views[i as usize].is_some() && views[j as usize].is_some()
                })
                .map(|&(i, j)| 0.9 - positions[i as usize].distance(positions[j as usize]))
                .fold(0.0f32, f32::max)
        };
        let mut once = start.clone();
        let once_moved = separation.settle(&mut once, 1);
        assert!(once_moved.iter().any(|&m| m), "round {round} moved nobody");
        assert!(
            3.0 * deepest(&once) < 2.0 * deepest(&start),
            "round {round}: {} {}",
            deepest(&start),
            deepest(&once)
        );
        for threads in [2, 3, 7] {
            let mut split = start.clone();
            let split_moved = separation.settle(&mut split, threads);
            assert!(
                once.iter()
                    .zip(&split)
                    .all(|(a, b)| a.to_array() == b.to_array()),
                "round {round}, {threads} threads"
            );
            assert_eq!(once_moved, split_moved);
        }
    }
}

/// A crowd packed shoulder to shoulder in the open presses in on its
/// middle, every body walking a frame's way (0.13 of a cell) toward it,
/// frame after frame, some pushing through, some standing: after each
/// frame's separation no pair is deeper than 0.1 of a radius, however
/// few its rounds. (The rounds alone left pairs 0.86 of a radius deep
/// here: the hold back of what they leave keeps the limit.)
#[test]
fn a_crowd_pressing_in_stays_under_the_limit() {
    let grid = NavGrid::new(48, 48).unwrap();
    let layout = GridLayout::default();
    let view = MapView::new(&grid, &layout, None);
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    let mut agents = Vec::new();
    for row in 0..20 {
        for column in 0..20 {
            let x = 12.0 + column as f32 * 0.9 + if row % 2 == 1 { 0.45 } else { 0.0 };
            let mut a = agent(
                agents.len() as u32 + 1,
                Vec2::new(x, 12.0 + row as f32 * 0.78),
            );
            a.set(Flags::PUSHING, rng.next() < 0.2);
            a.set(Flags::IDLE, !a.pushing() && rng.next() < 0.2);
            agents.push(a);
        }
    }
    let middle = Vec2::new(21.0, 19.5);
    let deepest = |rounds: usize| {
        let mut agents = agents.clone();
        let mut worst = 0.0f32;
        for _ in 0..20 {
            let walked: Vec<Vec2> = agents
                .iter()
                .map(|a| match a.idle() {
                    true => a.position,
                    false => a.position + (middle - a.position).normalize_or_zero() * 0.13,
                })
                .collect();
            worst = worst.max(separate_once(&mut agents, walked, &view, rounds));
        }
        worst / 0.45
    };
    for rounds in [2, 8, 32] {
        let deepest = deepest(rounds);
        // At the squeeze a pair may stay: the limit, to the last bits.
        assert!(
            deepest <= 0.1 + 1e-4,
            "{deepest} of a radius deep, {rounds} rounds"
        );
    }
}

/// The agents' positions as the frame started, in buckets, as avoidance
/// leaves them for the separation.
fn grid_of(agents: &[Agent]) -> SpatialGrid {
    let mut grid = SpatialGrid::default();
    let positions: Vec<Vec2> = agents.iter().map(|a| a.position).collect();
    grid.rebuild(&positions, 1.0);
    grid
}

/// Two units at rest a little apart, beyond the reach of the frame's
/// contacts, and a third pushing through into one of them: the one pushed
/// aside is pushed into its neighbour, a pair the contacts left out. It
/// still ends the frame no deeper than the limit (the crowd model's
/// river ground, seed 498, found two resting units 0.37 of a radius deep).
#[test]
fn a_body_pushed_into_one_beyond_the_contacts_is_held_back() {
    let grid = NavGrid::new(16, 16).unwrap();
    let layout = GridLayout::default();
    let view = MapView::new(&grid, &layout, None);
    let mut pusher = agent(1, Vec2::new(5.0, 8.0));
    pusher.set(Flags::PUSHING, true);
    let mut pushed = agent(2, Vec2::new(6.0, 8.0));
    pushed.set(Flags::IDLE, true);
    let mut beside = agent(3, Vec2::new(7.56, 8.0));
    beside.set(Flags::IDLE, true);
    let agents = [pusher, pushed, beside];
    // Only the pusher and the one it walks into are contacts: the two at
    // rest stand further apart than two bodies and a frame's walk.
    let contacts = vec![(0, 1)];
    let mut colouring = Colouring::default();
    colouring.rebuild(&contacts, 3);
    let passages = Passages::default();
    let views = vec![Some(view); 3];
    let grid = grid_of(&agents);
    let mut positions = vec![Vec2::new(5.9, 8.0), pushed.position, beside.position];
    Separation {
        agents: &agents,
        views: &views,
        passages: &passages,
        colouring: &colouring,
        rounds: 8,
        grid: &grid,
        seconds: 1.0 / 60.0,
    }
    .settle(&mut positions, 1);
    for (i, j) in [(0, 1), (1, 2), (0, 2)] {
        let depth = 0.9 - positions[i].distance(positions[j]);
        assert!(depth <= 0.045 + 1e-4, "{i} and {j}: {depth} deep");
    }
}

/// One separation in the open with `rounds` of `agents` (where they
/// started the frame) having walked to `walked`, their positions moved
/// to its result: the deepest pair after it.
fn separate_once(
    agents: &mut [Agent],
    mut positions: Vec<Vec2>,
    view: &MapView,
    rounds: usize,
) -> f32 {
    let count = agents.len();
    let mut contacts = Vec::new();
    for i in 0..count {
        for j in i + 1..count {
            if agents[i].position.distance(agents[j].position) < 1.5 {
                contacts.push((i as u32, j as u32));
            }
        }
    }
    let mut colouring = Colouring::default();
    colouring.rebuild(&contacts, count);
    let passages = Passages::default();
    let views: Vec<Option<MapView>> = vec![Some(*view); count];
    Separation {
        agents,
        views: &views,
        passages: &passages,
        colouring: &colouring,
        rounds,
        grid: &grid_of(agents),
        seconds: 1.0 / 60.0,
    }
    .settle(&mut positions, 1);
    for (a, &at) in agents.iter_mut().zip(&positions) {
        a.position = at;
    }
    contacts
        .iter()
        .map(|&(i, j)| 0.9 - positions[i as usize].distance(positions[j as usize]))
        .fold(0.0f32, f32::max)
}

/// The contacts' linear sort puts pairs in the order, and drops the
/// repeats, that sorting and `dedup` would: separation's rounds take
/// them in that order.
#[test]
fn pairs_sorted_as_a_sort_would() {
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    for round in 0..30 {
        let count = 1 + round * 7;
        let pairs: Vec<(u32, u32)> = (0..round * 40)
            .map(|_| {
                let a = (rng.next() * count as f32) as u32 % count as u32;
                let b = (rng.next() * count as f32) as u32 % count as u32;
                (a.min(b), a.max(b))
            })
            .collect();
        let mut expected = pairs.clone();
        expected.sort_unstable();
        expected.dedup();
        let mut sorted = pairs;
        sort_pairs(&mut sorted, count);
        assert_eq!(sorted, expected);
    }
}

/// Whose way it is: of two pushing through against each other, the one
/// ranked later in the crowd yields and gives up all of the pair; one pushing
/// through gives up none of it against a unit standing idle; one that
/// does not avoid gives up none.
#[test]
fn priority_between_two_units() {
    let (mut early, mut late) = (agent(1, Vec2::ZERO), agent(2, Vec2::X));
    if early.rank > late.rank {
        std::mem::swap(&mut early, &mut late);
    }
    early.set(Flags::PUSHING, true);
    late.set(Flags::PUSHING, true);
    let (late_early, early_late) = (priority(&late, &early), priority(&early, &late));
    assert!(late_early.steps_back && !early_late.steps_back);
    assert_eq!(late_early.gives, 1.0);
    assert!(early_late.gives < 0.5);
    assert!(late_early.avoids > early_late.avoids);
    assert!(late_early.sees_intent && late_early.makes_way);
    let mut standing = agent(3, Vec2::Y);
    standing.set(Flags::IDLE, true);
    assert_eq!(priority(&early, &standing).gives, 0.0);
    assert_eq!(priority(&standing, &early).gives, 1.0);
    assert!(priority(&standing, &agent(5, Vec2::X)).sees_intent);
    let mut ghost = agent(4, Vec2::NEG_X);
    ghost.set(Flags::AVOIDS, false);
    assert_eq!(priority(&ghost, &standing).gives, 0.0);
}

/// Whom a unit parts from into lanes, and whom it only passes: the rules
/// of [`follows`], one row each.
#[test]
fn whom_a_unit_follows_rather_than_parts_from() {
    let group = Some(Entity::from_raw_u32(900).unwrap());
    let me = Agent {
        preferred: Vec2::new(4.0, 0.0),
        goal: Vec2::new(50.0, 0.0),
        group,
        ..agent(1, Vec2::ZERO)
    };
    let coming = Agent {
        velocity: Vec2::new(-4.0, 0.0),
        goal: Vec2::new(-50.0, 0.0),
        ..agent(2, Vec2::new(3.0, 0.0))
    };
    let settling = |mut a: Agent| {
        a.set(Flags::NEAR_GOAL, true);
        a
    };
    let rows: [(&str, Agent, Agent, bool); 9] = [
        ("one coming at it", me, coming, false),
        (
            "one walking its way near its speed",
            me,
            Agent {
                velocity: Vec2::new(3.5, 0.0),
                ..coming
            },
            true,
        ),
        (
            "one walking its way slowly",
            me,
            Agent {
                velocity: Vec2::new(1.0, 0.0),
                ..coming
            },
            false,
        ),
        (
            "one of another movement class",
            me,
            Agent {
                class: ClassId::from_index(3),
                ..coming
            },
            true,
        ),
        (
            "one bound for the same point",
            me,
            Agent {
                goal: me.goal,
                ..coming
            },
            true,
        ),
        ("a group-mate", me, Agent { group, ..coming }, true),
        (
            "a group-mate, once held up",
            Agent { blocked: 0.2, ..me },
            Agent { group, ..coming },
            false,
        ),
        (
            "a group-mate settling into its slot, even held up",
            Agent { blocked: 0.2, ..me },
            settling(Agent { group, ..coming }),
            true,
        ),
        (
            "one of another group, held up or not",
            me,
            Agent {
                group: Some(Entity::from_raw_u32(901).unwrap()),
                ..coming
            },
            false,
        ),
    ];
    for (name, me, other, follows_it) in rows {
        let heading = me.preferred.normalize();
        assert_eq!(follows(&me, &other, heading), follows_it, "{name}");
    }
}
