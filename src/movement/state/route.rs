//! [`Route`]: the corners a mover walks, part of them possibly shared with
//! the rest of its group.

use std::sync::Arc;

use bevy::prelude::*;

/// The corners a [`Mover`](super::Mover) still has to walk to, in world space: its own
/// waypoints, then (in a group move) a stretch shared with the rest of the
/// group, stored once and reference-counted, then its own again.
#[derive(Clone, Debug, Default, PartialEq, Reflect)]
#[reflect(opaque, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub struct Route {
    head: Vec<Vec2>,
    shared: SharedWaypoints,
    tail: Vec<Vec2>,
    next: usize,
    /// The version of the map's grid the route was planned on (0: not
    /// known), so that it is checked only against edits made after.
    version: u64,
    /// Whether a new path has been asked for because an edit made the
    /// way dearer: the route is walked until it comes.
    replanning: bool,
    /// Whether it stops short of the goal (the first stretch of a quick
    /// route, [`PathResult::ends_short`](crate::pathfinding::PathResult::ends_short)):
    /// at its end the unit walks on by instinct rather than arrive.
    ends_short: bool,
    /// Whether it leads to the reachable place nearest a goal that cannot
    /// be reached: how the unit's order ends when it is walked.
    misses_goal: bool,
}

/// A stretch of waypoints shared by a group's units.
pub type SharedWaypoints = Arc<[Vec2]>;

impl Route {
    /// A route through `waypoints`, all the unit's own.
    pub fn new(waypoints: Vec<Vec2>) -> Self {
        Self {
            head: waypoints,
            ..default()
        }
    }

    /// A route through `head`, then the `shared` stretch, then `tail`.
    pub fn spliced(head: Vec<Vec2>, shared: SharedWaypoints, tail: Vec<Vec2>) -> Self {
        Self {
            head,
            shared,
            tail,
            ..default()
        }
    }

    fn get(&self, index: usize) -> Option<Vec2> {
        let (head, shared) = (self.head.len(), self.shared.len());
        if index < head {
            Some(self.head[index])
        } else if index < head + shared {
            Some(self.shared[index - head])
        } else {
            self.tail.get(index - head - shared).copied()
        }
    }

    /// The corner walked to now.
    pub fn next_waypoint(&self) -> Option<Vec2> {
        self.get(self.next)
    }

    /// The corners still to walk to, in order.
    pub fn remaining(&self) -> impl Iterator<Item = Vec2> + '_ {
        (self.next..self.head.len() + self.shared.len() + self.tail.len())
            .filter_map(|i| self.get(i))
    }

    /// Corners still to walk to.
    pub fn len(&self) -> usize {
        (self.head.len() + self.shared.len() + self.tail.len()).saturating_sub(self.next)
    }

    /// Whether the route is walked.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The shared stretch, if the route has one (empty for a unit's own
    /// path). Units of one group hold the same allocation.
    pub fn shared(&self) -> Option<&SharedWaypoints> {
        (!self.shared.is_empty()).then_some(&self.shared)
    }

    /// The same route, starting `count` corners in.
    pub(crate) fn skipping(mut self, count: usize) -> Self {
        self.next = count;
        self
    }

    /// The same route, planned on version `version` of its map's grid.
    pub(crate) fn planned_on(mut self, version: u64) -> Self {
        self.version = version;
        self
    }

    /// The version of its map's grid the route was planned on (0: not
    /// known).
    pub(crate) fn version(&self) -> u64 {
        self.version
    }

    /// The route marked as stopping short of the goal (or not).
    pub(crate) fn ending_short(mut self, ends_short: bool) -> Self {
        self.ends_short = ends_short;
        self
    }

    /// Whether it stops short of the goal: the rest of the way follows.
    pub fn ends_short(&self) -> bool {
        self.ends_short
    }

    /// The route marked as leading to the reachable place nearest a goal
    /// that cannot be reached (or not).
    pub(crate) fn missing_goal(mut self, misses_goal: bool) -> Self {
        self.misses_goal = misses_goal;
        self
    }

    /// Whether it leads only to the reachable place nearest its goal (the
    /// goal cannot be reached).
    pub fn misses_goal(&self) -> bool {
        self.misses_goal
    }

    /// The last leg of the same order: through `waypoints` (a free place
    /// to rest at, or none), still missing the goal if this route did.
    pub(crate) fn last_leg(&self, waypoints: Vec<Vec2>) -> Self {
        Self::new(waypoints).missing_goal(self.misses_goal)
    }

    /// Whether a new path has been asked for, and the route is walked
    /// until it comes.
    pub(crate) fn replanning(&self) -> bool {
        self.replanning
    }

    /// Marks that a new path has been asked for (or has come).
    pub(crate) fn set_replanning(&mut self, replanning: bool) {
        self.replanning = replanning;
    }

    pub(crate) fn advance(&mut self) {
        self.next += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spliced_route_reads_head_shared_tail() {
        let shared: SharedWaypoints = vec![Vec2::new(2.0, 0.0), Vec2::new(3.0, 0.0)].into();
        let mut route = Route::spliced(
            vec![Vec2::new(1.0, 0.0)],
            shared.clone(),
            vec![Vec2::new(4.0, 0.0)],
        );
        assert_eq!(route.len(), 4);
        assert!(Arc::ptr_eq(route.shared().unwrap(), &shared));
        route.advance();
        route.advance();
        assert_eq!(route.next_waypoint(), Some(Vec2::new(3.0, 0.0)));
        let rest: Vec<Vec2> = route.remaining().collect();
        assert_eq!(rest, vec![Vec2::new(3.0, 0.0), Vec2::new(4.0, 0.0)]);
        let skipped = route.skipping(4);
        assert!(skipped.is_empty());
        assert_eq!(Route::new(Vec::new()).shared(), None);
    }
}
