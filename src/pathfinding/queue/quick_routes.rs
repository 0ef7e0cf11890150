//! The quick routes the queue keeps between frames: those under way, those
//! whose first stretch went out and are refined on to the goal later, and
//! the provisional paths a frame found, sent at its end.

use bevy::prelude::*;

use super::super::result::PathResult;
use crate::core::CoarseRoute;

/// A quick route under way, kept between frames like any search.
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub(super) struct QuickSearch {
    /// The ticket of its job.
    pub(super) ticket: u64,
    /// The grid version its cells were chosen on.
    pub(super) version: u64,
    /// Times it was made anew because an edit moved its cells, or cut it.
    pub(super) setbacks: u32,
    /// Whether its first stretch was sent.
    pub(super) sent: bool,
    pub(super) route: CoarseRoute,
}

impl QuickSearch {
    /// Bytes of memory it holds.
    pub(super) fn memory_bytes(&self) -> usize {
        self.route.memory_bytes()
    }
}

/// Quick routes kept between frames, and this frame's provisional paths.
#[derive(Default)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub(super) struct QuickRoutes {
    /// Under way: their first stretch (or whole route) is still to send.
    pub(super) under_way: Vec<QuickSearch>,
    /// Their first stretch was sent; refined on to the goal once every
    /// request waiting for a quick route has its first stretch.
    pub(super) extending: Vec<QuickSearch>,
    /// Quick paths found this frame, sent at its end to the requests not
    /// answered for good by then.
    pub(super) provisional: Vec<(Entity, PathResult)>,
}

impl QuickRoutes {
    /// Bytes of search space the routes kept hold.
    pub(super) fn memory_bytes(&self) -> usize {
        self.under_way
            .iter()
            .chain(&self.extending)
            .map(QuickSearch::memory_bytes)
            .sum()
    }

    /// Drops every route (quick routes were switched off).
    pub(super) fn clear(&mut self) {
        self.under_way.clear();
        self.extending.clear();
    }
}

#[cfg(feature = "serialize")]
crate::remap::remap_fields!(QuickRoutes { provisional });
