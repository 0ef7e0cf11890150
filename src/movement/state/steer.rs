//! What a unit is doing ([`Steering`]), changed in one place: a pure
//! transition from the state and what happened ([`Steer`]) to the next
//! state, which every stage that changes it calls ([`steer`]), as
//! [`Headway::step`](super::headway::Headway::step) does for headway.

use bevy::prelude::*;

use super::Steering;
use super::route::Route;

/// What happens to a unit that changes what it is doing.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Steer {
    /// An order to `goal` on `map`: it walks straight at it (sliding along
    /// walls) until a path comes.
    Order {
        /// Where the order points, in world space.
        goal: Vec2,
        /// The map it walks on.
        map: Entity,
    },
    /// Its order is taken away, has ended, or cannot be taken (no goal on
    /// any map, no path at all): it stands.
    Stop,
    /// A path came for its order: it follows `route` to the same goal.
    Follow(Route),
    /// A group sends it along `route` to `goal` on `map`.
    Handed {
        /// Its share of the group's route.
        route: Route,
        /// Its end place.
        goal: Vec2,
        /// The map it walks on.
        map: Entity,
    },
    /// It lost its way on (a wall cut its route, or the first stretch of a
    /// quick route is walked): on instinct to the same goal until a path
    /// comes.
    LostWay,
    /// The unit it chases stands in sight at `at`: straight at it.
    Sighted(Vec2),
    /// The unit it chases moved to `at`: the same doing, toward there.
    Retarget(Vec2),
}

impl Steering {
    /// What the unit does after `event`. An event that needs an order (a
    /// path, a lost way, a target) leaves a standing unit standing.
    pub(crate) fn on(self, event: Steer) -> Steering {
        use Steering::{Following, Idle, Instinct};
        match (self, event) {
            (_, Steer::Order { goal, map }) => Instinct { goal, map },
            (_, Steer::Stop) => Idle,
            (_, Steer::Handed { route, goal, map }) => Following { route, goal, map },
            (Idle, Steer::Follow(_) | Steer::LostWay | Steer::Sighted(_) | Steer::Retarget(_)) => {
                Idle
            }
            (Instinct { goal, map } | Following { goal, map, .. }, Steer::Follow(route)) => {
                Following { route, goal, map }
            }
            (Instinct { goal, map } | Following { goal, map, .. }, Steer::LostWay) => {
                Instinct { goal, map }
            }
            (Instinct { map, .. } | Following { map, .. }, Steer::Sighted(goal)) => {
                Instinct { goal, map }
            }
            (Instinct { map, .. }, Steer::Retarget(goal)) => Instinct { goal, map },
            (Following { route, map, .. }, Steer::Retarget(goal)) => Following { route, goal, map },
        }
    }
}

/// Changes what `steering`'s unit is doing after `event` ([`Steering::on`]).
pub(crate) fn steer(steering: &mut Steering, event: Steer) {
    *steering = std::mem::take(steering).on(event);
}

/// What a unit following a route does while the path it asks for again
/// after an edit is found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Meanwhile {
    /// A wall cuts its way: it walks on instinct.
    Instinct,
    /// Its way is only dearer: it walks on along its route
    /// ([`Route::replanning`]) and takes the new path when it comes.
    WalkOn,
}

/// Sets a unit following a route to wait for a new path as `meanwhile`
/// says; the order to ask again for (its goal and map), or `None` when
/// there is nothing to ask: it does not follow a route, or it walks on
/// while a path it asked for already is found (that one is checked against
/// the edit when it comes).
pub(crate) fn wait_for_new_path(
    steering: &mut Steering,
    meanwhile: Meanwhile,
) -> Option<(Vec2, Entity)> {
    let Steering::Following { route, goal, map } = steering else {
        return None;
    };
    let order = (*goal, *map);
    match meanwhile {
        Meanwhile::WalkOn if route.replanning() => return None,
        Meanwhile::WalkOn => route.set_replanning(true),
        Meanwhile::Instinct => steer(steering, Steer::LostWay),
    }
    Some(order)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every state against every event: what a unit does next.
    #[test]
    fn what_a_unit_does_next() {
        let map = Entity::from_raw_u32(7).unwrap();
        let other_map = Entity::from_raw_u32(8).unwrap();
        let (goal, there, at) = (
            Vec2::new(5.0, 1.0),
            Vec2::new(9.0, 9.0),
            Vec2::new(2.0, 3.0),
        );
        let route = Route::new(vec![Vec2::ONE, goal]);
        let handed = Route::new(vec![Vec2::X]);
        let idle = Steering::Idle;
        let instinct = Steering::Instinct { goal, map };
        let following = Steering::Following {
            route: route.clone(),
            goal,
            map,
        };
        let order = Steer::Order {
            goal: there,
            map: other_map,
        };
        let hand = Steer::Handed {
            route: handed.clone(),
            goal: there,
            map: other_map,
        };
        let ordered = Steering::Instinct {
            goal: there,
            map: other_map,
        };
        let sent = Steering::Following {
            route: handed,
            goal: there,
            map: other_map,
        };
        let table = [
            // A new order: straight at its goal, whatever it did.
            (&idle, order.clone(), ordered.clone()),
            (&instinct, order.clone(), ordered.clone()),
            (&following, order, ordered),
            // Stopped: it stands.
            (&idle, Steer::Stop, Steering::Idle),
            (&instinct, Steer::Stop, Steering::Idle),
            (&following, Steer::Stop, Steering::Idle),
            // Sent by a group: its share of the group's route.
            (&idle, hand.clone(), sent.clone()),
            (&instinct, hand.clone(), sent.clone()),
            (&following, hand, sent),
            // A path came: followed to the order's goal.
            (&idle, Steer::Follow(route.clone()), Steering::Idle),
            (&instinct, Steer::Follow(route.clone()), following.clone()),
            (
                &following,
                Steer::Follow(Route::new(vec![goal])),
                Steering::Following {
                    route: Route::new(vec![goal]),
                    goal,
                    map,
                },
            ),
            // Its way lost: on instinct to the same goal.
            (&idle, Steer::LostWay, Steering::Idle),
            (&instinct, Steer::LostWay, instinct.clone()),
            (&following, Steer::LostWay, instinct.clone()),
            // Its target in sight: straight at it.
            (&idle, Steer::Sighted(at), Steering::Idle),
            (
                &instinct,
                Steer::Sighted(at),
                Steering::Instinct { goal: at, map },
            ),
            (
                &following,
                Steer::Sighted(at),
                Steering::Instinct { goal: at, map },
            ),
            // Its target moved: the same doing, toward where it went.
            (&idle, Steer::Retarget(at), Steering::Idle),
            (
                &instinct,
                Steer::Retarget(at),
                Steering::Instinct { goal: at, map },
            ),
            (
                &following,
                Steer::Retarget(at),
                Steering::Following {
                    route: route.clone(),
                    goal: at,
                    map,
                },
            ),
        ];
        for (state, event, next) in table {
            assert_eq!(
                state.clone().on(event.clone()),
                next,
                "{state:?} on {event:?}"
            );
        }
    }

    /// A route cut by a wall is left for instinct at once; one only made
    /// dearer is walked on, and asked again for only once.
    #[test]
    fn waiting_for_a_new_path() {
        let map = Entity::from_raw_u32(7).unwrap();
        let goal = Vec2::new(5.0, 1.0);
        let following = Steering::Following {
            route: Route::new(vec![Vec2::ONE, goal]),
            goal,
            map,
        };
        let mut cut = following.clone();
        assert_eq!(
            wait_for_new_path(&mut cut, Meanwhile::Instinct),
            Some((goal, map))
        );
        assert_eq!(cut, Steering::Instinct { goal, map });
        let mut dearer = following;
        assert_eq!(
            wait_for_new_path(&mut dearer, Meanwhile::WalkOn),
            Some((goal, map))
        );
        assert!(matches!(&dearer, Steering::Following { route, .. } if route.replanning()));
        assert_eq!(wait_for_new_path(&mut dearer, Meanwhile::WalkOn), None);
        let mut idle = Steering::Idle;
        assert_eq!(wait_for_new_path(&mut idle, Meanwhile::Instinct), None);
        assert_eq!(idle, Steering::Idle);
    }
}
