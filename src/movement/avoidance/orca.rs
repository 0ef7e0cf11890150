//! ORCA, optimal reciprocal collision avoidance (van den Berg, Guy, Lin
//! and Manocha, "Reciprocal n-body collision avoidance", 2011), the
//! crate's own: each neighbour and each wall segment near a unit gives a
//! half-plane of velocities safe for a time horizon, and the unit takes
//! the safe velocity nearest the one it would like (a 2D linear program,
//! and where no velocity is safe, the one that least enters the
//! neighbours' half-planes: a 3D program, as RVO2 solves them).
//!
//! It follows the `dodgy_2d` crate (0.5.5, MIT or Apache-2.0, after
//! RVO2-3D by the same authors) operation for operation, so that a crowd
//! moves as it did with that crate to the last bit (`crowd` digests
//! unchanged), with these differences:
//! - it allocates nothing once its buffers ([`Scratch`]) have grown: walls
//!   are segments, not a `Vec` of vertices each, and the 3D program's
//!   projected lines reuse one buffer;
//! - it draws no random number: where a neighbour's half-plane has no
//!   normal of its own (two bodies touching, closing at exactly the speed
//!   that meets within the frame), the two part along the line between
//!   their centres (along x, on one spot), where `dodgy_2d` drew a random
//!   direction;
//! - where neither of two avoids (no shares at all) each takes half,
//!   where `dodgy_2d` divides by zero;
//! - it is on Bevy's `glam`, with no conversion at the edge.

use bevy::prelude::*;

/// A unit as ORCA sees it: the one planned, or one of its neighbours.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Neighbour {
    pub(crate) position: Vec2,
    pub(crate) velocity: Vec2,
    pub(crate) radius: f32,
    /// Its share of avoiding (0: the other does it all).
    pub(crate) responsibility: f32,
}

/// A wall segment from `0` to `1`, the wall on its left as one walks it:
/// a unit on its right keeps out of it.
pub(crate) type Wall = [Vec2; 2];

/// The time horizons ORCA plans over: for neighbours, and for walls.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Horizons {
    pub(crate) neighbours: f32,
    pub(crate) walls: f32,
}

/// A velocity half-plane: the velocities on the left of the line through
/// `point` along `direction` (unit length) are allowed.
#[derive(Clone, Copy, Debug)]
struct Line {
    point: Vec2,
    direction: Vec2,
}

/// The buffers of one planning task, kept from unit to unit.
#[derive(Default)]
pub(crate) struct Scratch {
    lines: Vec<Line>,
    projected: Vec<Line>,
}

/// How far a unit keeps from a wall beyond its own centre: none, since
/// the walls ORCA is given are the cells' sides and a unit keeps its
/// radius from them by walking (`dodgy_2d`'s `obstacle_margin`, as the
/// crate set it). Kept in the formulas so that they stay RVO2's.
const MARGIN: f32 = 0.0;

/// Below this, two lines are parallel (RVO2's `RVO_EPSILON`).
const EPSILON: f32 = 0.00001;

/// `a` × `b`, the 2D cross product.
#[inline]
fn det(a: Vec2, b: Vec2) -> f32 {
    a.x * b.y - a.y * b.x
}

/// The velocity `me` takes to avoid `neighbours` and `walls`: the allowed
/// velocity no faster than `max_speed` nearest `preferred`. `time_step`
/// is the frame's length (positive): bodies already touching part within
/// it.
#[expect(clippy::too_many_arguments, reason = "ORCA's inputs, as RVO2's")]
pub(crate) fn avoiding_velocity(
    me: &Neighbour,
    neighbours: &[Neighbour],
    walls: &[Wall],
    preferred: Vec2,
    max_speed: f32,
    time_step: f32,
    horizons: Horizons,
    scratch: &mut Scratch,
) -> Vec2 {
    let Scratch { lines, projected } = scratch;
    let mut solve = |velocity: Vec2| {
        lines.clear();
        lines.extend(
            walls
                .iter()
                .filter_map(|&wall| wall_line(me.position, velocity, wall, horizons.walls)),
        );
        let rigid = lines.len();
        lines.extend(
            neighbours
                .iter()
                .map(|other| neighbour_line(me, other, horizons.neighbours, time_step)),
        );
        program(lines, rigid, max_speed, preferred, projected)
    };
    match solve(me.velocity) {
        Ok(velocity) => velocity,
        // A wall's half-plane could not be met: again with the walls'
        // half-planes for a unit standing still (the neighbours' as
        // before), and the best of that, met or not.
        Err(_) => solve(Vec2::ZERO).unwrap_or_else(|best| best),
    }
}

/// The half-plane of velocities that keep `me` off `other` for `horizon`
/// seconds, `me` taking its share of the avoiding.
fn neighbour_line(me: &Neighbour, other: &Neighbour, horizon: f32, time_step: f32) -> Line {
    let offset = other.position - me.position;
    let relative = me.velocity - other.velocity;
    let distance_squared = offset.length_squared();
    let reach = me.radius + other.radius;
    let reach_squared = reach * reach;
    let (normal, nearest, inside) = if distance_squared > reach_squared {
        // Apart: the velocity obstacle is a cone cut off by a circle.
        let centre = offset / horizon;
        let from_centre = relative - centre;
        let from_centre_squared = from_centre.length_squared();
        let dot = from_centre.dot(offset);
        if dot < 0.0 && dot * dot > reach_squared * from_centre_squared {
            // Nearest the cut-off circle.
            let radius = reach / horizon;
            let normal = from_centre.normalize_or_zero();
            (
                normal,
                normal * radius + centre,
                from_centre_squared < radius * radius,
            )
        } else {
            // Nearest one of the cone's legs.
            let leg = (distance_squared - reach_squared).sqrt();
            let side = det(offset, from_centre).signum();
            let shadow = (offset * leg * side + offset.perp() * reach) / distance_squared;
            (
                shadow.perp(),
                relative.project_onto_normalized(shadow),
                det(relative, shadow) >= 0.0,
            )
        }
    } else {
        // Touching: part within the frame.
        let centre = offset / time_step;
        let radius = reach / time_step;
        let from_centre = relative - centre;
        let recip = from_centre.length_recip();
        let normal = if recip.is_finite() && recip > 0.0 {
            from_centre * recip
        } else {
            (-offset).try_normalize().unwrap_or(Vec2::X)
        };
        (normal, normal * radius + centre, true)
    };
    let u = nearest - relative;
    let share = if inside {
        let both = me.responsibility + other.responsibility;
        // Neither avoids: each its half (a caller's slip, never a panic).
        if both > 0.0 {
            me.responsibility / both
        } else {
            0.5
        }
    } else {
        1.0
    };
    Line {
        point: me.velocity + u * share,
        direction: -normal.perp(),
    }
}

/// The half-plane of velocities that keep a unit at `position` moving at
/// `velocity` off `wall` for `horizon` seconds (`None`: the wall does not
/// face it). The wall's two ends are convex corners: nothing lies beyond
/// them.
fn wall_line(position: Vec2, velocity: Vec2, wall: Wall, horizon: f32) -> Option<Line> {
    let [mut left, mut right] = wall;
    let relative_left = left - position;
    let relative_right = right - position;
    let edge = right - left;
    let from_left = -relative_left;
    if det(from_left, edge) < 0.0 {
        // Behind the wall.
        return None;
    }
    let unit_edge = edge.normalize();
    let left_squared = relative_left.length_squared();
    let right_squared = relative_right.length_squared();
    let t = from_left.dot(edge) / edge.length_squared();
    let to_line_squared = (t * edge).distance_squared(from_left);
    let margin_squared = MARGIN * MARGIN;
    // Within the margin of the wall.
    if t < 0.0 && left_squared <= margin_squared {
        return Some(Line {
            point: Vec2::ZERO,
            direction: relative_left.perp().normalize(),
        });
    } else if t > 1.0 && right_squared <= margin_squared {
        return Some(Line {
            point: Vec2::ZERO,
            direction: relative_right.perp().normalize(),
        });
    } else if (0.0..=1.0).contains(&t) && to_line_squared <= margin_squared {
        return Some(Line {
            point: Vec2::ZERO,
            direction: -unit_edge,
        });
    }
    let (mut left_left, mut right_right) = (None, None);
    let (mut left_shadow, mut right_shadow);
    if t < 0.0 && to_line_squared <= margin_squared {
        // In line with the wall, beyond its left end: seen as that point.
        right_right = Some(right);
        right = left;
        let leg = (left_squared - margin_squared).sqrt();
        left_shadow = (relative_left * leg + relative_left.perp() * MARGIN) / left_squared;
        right_shadow = (relative_left * leg - relative_left.perp() * MARGIN) / left_squared;
    } else if t > 1.0 && to_line_squared <= margin_squared {
        left_left = Some(left);
        left = right;
        let leg = (right_squared - margin_squared).sqrt();
        left_shadow = (relative_right * leg + relative_right.perp() * MARGIN) / right_squared;
        right_shadow = (relative_right * leg - relative_right.perp() * MARGIN) / right_squared;
    } else {
        let leg = (left_squared - margin_squared).sqrt();
        left_shadow = (relative_left * leg + relative_left.perp() * MARGIN) / left_squared;
        let leg = (right_squared - margin_squared).sqrt();
        right_shadow = (relative_right * leg - relative_right.perp() * MARGIN) / right_squared;
    }
    let mut left_covered = false;
    let mut right_covered = false;
    if let Some(beyond) = left_left {
        let along = beyond - left;
        if det(left_shadow, along) >= 0.0 {
            left_shadow = along.normalize();
            left_covered = true;
        }
    }
    if let Some(beyond) = right_right {
        let along = beyond - right;
        if det(right_shadow, along) <= 0.0 {
            right_shadow = along.normalize();
            right_covered = true;
        }
    }
    let left_cutoff = (left - position) / horizon;
    let right_cutoff = (right - position) / horizon;
    let cutoff = right_cutoff - left_cutoff;
    let degenerate = left == right;
    let t_cutoff = if degenerate {
        0.5
    } else {
        (velocity - left_cutoff).dot(cutoff) / cutoff.length_squared()
    };
    let t_left = (velocity - left_cutoff).dot(left_shadow);
    let t_right = (velocity - right_cutoff).dot(right_shadow);
    if t_cutoff < 0.0 && t_left < 0.0 || degenerate && t_left < 0.0 && t_right < 0.0 {
        // Nearest the left end of the cut-off.
        let normal = (velocity - left_cutoff).normalize();
        return Some(Line {
            direction: -normal.perp(),
            point: left_cutoff + MARGIN / horizon * normal,
        });
    }
    if t_cutoff > 1.0 && t_right < 0.0 {
        let normal = (velocity - right_cutoff).normalize();
        return Some(Line {
            direction: -normal.perp(),
            point: right_cutoff + MARGIN / horizon * normal,
        });
    }
    let cutoff_squared = if !(0.0..=1.0).contains(&t_cutoff) || degenerate {
        f32::INFINITY
    } else {
        (velocity - (left_cutoff + t_cutoff * cutoff)).length_squared()
    };
    let left_squared = if t_left < 0.0 {
        f32::INFINITY
    } else {
        (velocity - (left_cutoff + t_left * left_shadow)).length_squared()
    };
    let right_squared = if t_right < 0.0 {
        f32::INFINITY
    } else {
        (velocity - (right_cutoff + t_right * right_shadow)).length_squared()
    };
    if cutoff_squared <= left_squared && cutoff_squared <= right_squared {
        let direction = -cutoff.normalize();
        Some(Line {
            direction,
            point: left_cutoff + MARGIN / horizon * direction.perp(),
        })
    } else if left_squared <= right_squared {
        (!left_covered).then_some(Line {
            direction: left_shadow,
            point: left_cutoff + MARGIN / horizon * left_shadow.perp(),
        })
    } else {
        (!right_covered).then_some(Line {
            direction: -right_shadow,
            point: right_cutoff - MARGIN / horizon * right_shadow.perp(),
        })
    }
}

/// What the 2D program aims for: the allowed value nearest a point, or
/// the one furthest along a direction.
#[derive(Clone, Copy)]
enum Aim {
    Point(Vec2),
    Direction(Vec2),
}

/// The velocity no faster than `radius` nearest `preferred` that all of
/// `lines` allow; where the lines past the first `rigid` (the walls')
/// cannot all be met, the one that enters them least (`Ok`). `Err` holds
/// the best found where a wall's line could not be met.
fn program(
    lines: &[Line],
    rigid: usize,
    radius: f32,
    preferred: Vec2,
    projected: &mut Vec<Line>,
) -> Result<Vec2, Vec2> {
    match program_2d(lines, radius, Aim::Point(preferred)) {
        Ok(value) => Ok(value),
        Err((failed, partial)) if failed < rigid => Err(partial),
        Err((failed, partial)) => Ok(program_3d(lines, rigid, radius, failed, partial, projected)),
    }
}

/// The best value on `line`, within `radius` and allowed by `lines`
/// (`None`: there is none).
fn along_line(line: &Line, radius: f32, lines: &[Line], aim: Aim) -> Option<Vec2> {
    let dot = line.point.dot(line.direction);
    let discriminant = dot * dot + radius * radius - line.point.dot(line.point);
    if discriminant < 0.0 {
        return None;
    }
    let root = discriminant.sqrt();
    let (mut t_left, mut t_right) = (-dot - root, -dot + root);
    for other in lines {
        let denominator = det(line.direction, other.direction);
        let numerator = det(other.direction, line.point - other.point);
        if denominator.abs() <= EPSILON {
            if numerator < 0.0 {
                return None;
            }
            continue;
        }
        let t = numerator / denominator;
        if denominator >= 0.0 {
            t_right = t_right.min(t);
        } else {
            t_left = t_left.max(t);
        }
        if t_left > t_right {
            return None;
        }
    }
    let t = match aim {
        Aim::Direction(direction) if direction.dot(line.direction) > 0.0 => t_right,
        Aim::Direction(_) => t_left,
        Aim::Point(point) => line
            .direction
            .dot(point - line.point)
            .clamp(t_left, t_right),
    };
    Some(line.point + t * line.direction)
}

/// The 2D program, line by line (Seidel's incremental algorithm in the
/// lines' order): the best value, or the index of the first line that
/// could not be met and the best value before it.
fn program_2d(lines: &[Line], radius: f32, aim: Aim) -> Result<Vec2, (usize, Vec2)> {
    let mut best = match aim {
        Aim::Direction(direction) => direction * radius,
        Aim::Point(point) if point.length_squared() > radius * radius => point.normalize() * radius,
        Aim::Point(point) => point,
    };
    for (index, line) in lines.iter().enumerate() {
        if det(line.direction, best - line.point) > 0.0 {
            continue;
        }
        match along_line(line, radius, &lines[..index], aim) {
            Some(value) => best = value,
            None => return Err((index, best)),
        }
    }
    Ok(best)
}

/// The 3D program: from the first line that failed on, the value that
/// enters the soft lines (past the first `rigid`) least, the rigid ones
/// kept.
fn program_3d(
    lines: &[Line],
    rigid: usize,
    radius: f32,
    failed: usize,
    partial: Vec2,
    projected: &mut Vec<Line>,
) -> Vec2 {
    let mut depth = 0.0;
    let mut best = partial;
    for (index, line) in lines.iter().enumerate().skip(failed) {
        if det(line.direction, line.point - best) <= depth {
            continue;
        }
        projected.clear();
        projected.extend_from_slice(&lines[..rigid]);
        for previous in &lines[rigid..index] {
            let denominator = det(line.direction, previous.direction);
            let point = if denominator.abs() <= EPSILON {
                if line.direction.dot(previous.direction) > 0.0 {
                    continue;
                }
                (line.point + previous.point) * 0.5
            } else {
                let t = det(previous.direction, line.point - previous.point) / denominator;
                line.point + t * line.direction
            };
            projected.push(Line {
                direction: (previous.direction - line.direction).normalize(),
                point,
            });
        }
        if let Ok(value) = program_2d(projected, radius, Aim::Direction(line.direction.perp())) {
            best = value;
            depth = det(line.direction, line.point - best);
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::*;
    use crate::movement::avoidance::tests::Rng;

    /// The draws of these cases, from the avoidance tests' generator.
    trait Draws {
        fn unit(&mut self) -> f32;
        fn range(&mut self, low: f32, high: f32) -> f32 {
            low + (high - low) * self.unit()
        }
        fn vec(&mut self, reach: f32) -> Vec2 {
            Vec2::new(self.range(-reach, reach), self.range(-reach, reach))
        }
        /// Mostly even shares, sometimes none or a tenth, as the crowd's
        /// priorities give them.
        fn share(&mut self) -> f32 {
            [0.0, 0.1, 0.5, 1.0, 1.0, 1.0][(self.unit() * 6.0) as usize % 6]
        }
    }

    impl Draws for Rng {
        fn unit(&mut self) -> f32 {
            self.next()
        }
    }

    fn dodgy(v: Vec2) -> dodgy_2d::Vec2 {
        dodgy_2d::Vec2::new(v.x, v.y)
    }

    /// The crate's ORCA gives the velocity `dodgy_2d` gives, to the last
    /// bit, over many neighbourhoods like the crowd's: up to ten
    /// neighbours, some touching, some standing, shares of none to all;
    /// cell sides as walls near the unit, facing it or not; horizons and
    /// speeds as a game sets them. (Neighbourhoods where `dodgy_2d` would
    /// draw a random normal are left out: the planner never gives it one.)
    #[test]
    fn gives_the_velocities_dodgy_2d_gives() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let mut scratch = Scratch::default();
        let (mut fell_back, mut three_d) = (0, 0);
        for case in 0..60_000 {
            let time_step = [1.0 / 60.0, 1.0 / 30.0, 0.1][case % 3];
            let horizons = Horizons {
                neighbours: rng.range(0.5, 3.0),
                walls: 0.25,
            };
            // Fast units reach the walls within their horizon.
            let max_speed = rng.range(0.5, if case % 2 == 0 { 8.0 } else { 24.0 });
            let me = Neighbour {
                position: rng.vec(0.5) + Vec2::splat(0.5),
                velocity: rng.vec(max_speed * 0.7),
                radius: rng.range(0.2, 1.0),
                responsibility: rng.share(),
            };
            let count = (rng.unit() * 11.0) as usize;
            let neighbours: Vec<Neighbour> = (0..count)
                .map(|_| Neighbour {
                    position: {
                        let reach = if rng.unit() < 0.3 { 1.0 } else { 3.0 };
                        me.position + rng.vec(reach)
                    },
                    velocity: if rng.unit() < 0.3 {
                        Vec2::ZERO
                    } else {
                        rng.vec(max_speed)
                    },
                    radius: rng.range(0.2, 1.0),
                    responsibility: rng.share(),
                })
                .filter(|other| {
                    // Some share to the pair (`dodgy_2d` divides by it),
                    // and a normal.
                    if me.responsibility + other.responsibility <= 0.0 {
                        return false;
                    }
                    let offset = other.position - me.position;
                    let reach = me.radius + other.radius;
                    let from_centre = (me.velocity - other.velocity) - offset / time_step;
                    let recip = from_centre.length_recip();
                    offset.length_squared() > reach * reach || (recip.is_finite() && recip > 0.0)
                })
                .collect();
            // Cell sides within two cells, each way round.
            let walls: Vec<Wall> = (0..(rng.unit() * 12.0) as usize)
                .map(|_| {
                    let corner = Vec2::new(
                        (rng.range(-1.0, 2.0)).floor(),
                        (rng.range(-1.0, 2.0)).floor(),
                    );
                    let side = if rng.unit() < 0.5 { Vec2::X } else { Vec2::Y };
                    if rng.unit() < 0.5 {
                        [corner, corner + side]
                    } else {
                        [corner + side, corner]
                    }
                })
                .collect();
            let preferred = rng.vec(max_speed * 1.2);
            let ours = avoiding_velocity(
                &me,
                &neighbours,
                &walls,
                preferred,
                max_speed,
                time_step,
                horizons,
                &mut scratch,
            );
            let theirs = dodgy_2d::Agent {
                position: dodgy(me.position),
                velocity: dodgy(me.velocity),
                radius: me.radius,
                avoidance_responsibility: me.responsibility,
            }
            .compute_avoiding_velocity(
                &neighbours
                    .iter()
                    .map(|n| {
                        Cow::Owned(dodgy_2d::Agent {
                            position: dodgy(n.position),
                            velocity: dodgy(n.velocity),
                            radius: n.radius,
                            avoidance_responsibility: n.responsibility,
                        })
                    })
                    .collect::<Vec<_>>(),
                &walls
                    .iter()
                    .map(|&[a, b]| {
                        Cow::Owned(dodgy_2d::Obstacle::Open {
                            vertices: vec![dodgy(a), dodgy(b)],
                        })
                    })
                    .collect::<Vec<_>>(),
                dodgy(preferred),
                max_speed,
                time_step,
                &dodgy_2d::AvoidanceOptions {
                    obstacle_margin: MARGIN,
                    time_horizon: horizons.neighbours,
                    obstacle_time_horizon: horizons.walls,
                },
            );
            assert_eq!(
                ours.to_array().map(f32::to_bits),
                [theirs.x.to_bits(), theirs.y.to_bits()],
                "case {case}: {ours} against {theirs}"
            );
            // Which of the programs gave the velocity.
            let mut lines: Vec<Line> = walls
                .iter()
                .filter_map(|&wall| wall_line(me.position, me.velocity, wall, horizons.walls))
                .collect();
            let rigid = lines.len();
            lines.extend(
                neighbours
                    .iter()
                    .map(|other| neighbour_line(&me, other, horizons.neighbours, time_step)),
            );
            match program_2d(&lines, max_speed, Aim::Point(preferred)) {
                Ok(_) => {}
                Err((failed, _)) if failed < rigid => fell_back += 1,
                Err(_) => three_d += 1,
            }
        }
        // The cases reach the programs' harder branches too: a wall's
        // line not met, and no velocity safe from every neighbour.
        assert!(fell_back > 40 && three_d > 10_000, "{fell_back}, {three_d}");
    }

    /// Two bodies touching, closing at exactly the speed that meets within
    /// the frame, give ORCA no normal: they part along the line between
    /// them, the same way every time (`dodgy_2d` drew a random direction),
    /// and two with no share at all each take half.
    #[test]
    fn touching_bodies_with_no_normal_part_along_the_line_between_them() {
        let time_step = 0.25;
        // Its whole share, then half (neither with any share).
        for (shares, backs_off) in [((1.0, 0.0), true), ((0.0, 0.0), false)] {
            let me = Neighbour {
                position: Vec2::ZERO,
                velocity: Vec2::new(2.0, 0.0),
                radius: 0.5,
                responsibility: shares.0,
            };
            // 0.5 cells ahead, standing: closing at 0.5 / 0.25 cells/s.
            let other = Neighbour {
                position: Vec2::new(0.5, 0.0),
                velocity: Vec2::ZERO,
                radius: 0.5,
                responsibility: shares.1,
            };
            let horizons = Horizons {
                neighbours: 2.0,
                walls: 0.25,
            };
            let mut scratch = Scratch::default();
            let plan = |scratch: &mut Scratch| {
                avoiding_velocity(
                    &me,
                    &[other],
                    &[],
                    me.velocity,
                    4.0,
                    time_step,
                    horizons,
                    scratch,
                )
            };
            let velocity = plan(&mut scratch);
            assert!(velocity.is_finite(), "{shares:?}: {velocity}");
            // It no longer walks into the other: it backs off, or stops
            // with the other taking its half.
            assert!(velocity.x <= 0.0, "{shares:?}: {velocity}");
            assert_eq!(velocity.x < -1.0, backs_off, "{shares:?}: {velocity}");
            assert_eq!(velocity, plan(&mut scratch));
        }
    }
}
