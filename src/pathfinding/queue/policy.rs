//! The queue's policy, in one place: how requests are ranked (and so which
//! are admitted to a place in flight and which evicted), which requests share a
//! search, when and how much of the frame's budget quick routes take, and
//! what reading a shared search's paths back costs. The mechanisms that
//! carry it out (the waiting list, the flights, the quick routes, the
//! shared floods) live in their own files and ask it; a new policy is a
//! change to this file.

use super::resolve::Job;
use crate::core::{Cell, Path};

// Ranking, admission and eviction.

/// A job's rank: higher first (see [`Job::rank`]).
pub(super) type Rank = (i128, std::cmp::Reverse<u64>);

impl Job {
    /// Orders jobs, higher first: priority plus one level per
    /// `aging_frames` frames since the request, then arrival. Every job ages
    /// at the same rate, so the order of two jobs never changes over time
    /// (`priority × aging_frames − frame requested` is the same at every
    /// frame): once a job outranks another it always will, and eviction
    /// cannot go back and forth.
    pub(super) fn rank(&self, aging_frames: u32) -> Rank {
        let key = if aging_frames == 0 {
            self.priority as i128
        } else {
            self.priority as i128 * aging_frames as i128 - self.frame_requested as i128
        };
        (key, std::cmp::Reverse(self.ticket))
    }
}

/// Whether a waiting request of rank `best` takes the place in flight of the search
/// in flight of rank `worst` (the lowest there): only when it outranks it,
/// so two requests never throw each other out.
pub(super) fn evicts(best: Rank, worst: Rank) -> bool {
    best > worst
}

/// Whether a search thrown out of its place in flight keeps its state while it waits
/// again: while fewer than `places` (one per place in flight) waiting searches do.
pub(super) fn keeps_state(parked: usize, places: usize) -> bool {
    parked < places
}

// Sharing a search.

/// A box of cells, `[min x, min y, max x, max y]`.
pub(super) type Span = [u32; 4];

/// `span` grown to hold `cell`.
pub(super) fn span_with(span: Span, cell: Cell) -> Span {
    let [min_x, min_y, max_x, max_y] = span;
    [
        min_x.min(cell.x),
        min_y.min(cell.y),
        max_x.max(cell.x),
        max_y.max(cell.y),
    ]
}

/// The smallest box holding both.
pub(super) fn span_union(a: Span, b: Span) -> Span {
    [
        a[0].min(b[0]),
        a[1].min(b[1]),
        a[2].max(b[2]),
        a[3].max(b[3]),
    ]
}

/// Starts of one goal share a search only while they fit in a box this
/// many cells wide, or a quarter of their distance from the goal if that
/// is more: a squad, a base, a crowd at a rally point. Starts spread over
/// the map would make the shared search flood most of it, far more work
/// than a search each. Two requests already gain from sharing: on maps
/// where each would be a jump point search, so is the shared one (a jump
/// point flood).
pub(super) const SHARE_SPAN: u32 = 16;

/// Whether starts within `span` are close enough together, for their
/// distance from `goal`, to share a search (see [`SHARE_SPAN`]).
pub(super) fn shareable(span: Span, goal: Cell) -> bool {
    let [min_x, min_y, max_x, max_y] = span;
    let gap = |v: u32, low: u32, high: u32| low.saturating_sub(v).max(v.saturating_sub(high));
    let distance = gap(goal.x, min_x, max_x).max(gap(goal.y, min_y, max_y));
    (max_x - min_x).max(max_y - min_y) <= SHARE_SPAN.max(distance / 4)
}

/// Whether two flights with one goal, their starts within `both`, share a
/// search: requests to a place whose starts are close together
/// ([`shareable`]), or many chasers of one unit wherever they start
/// ([`shared_wide`]; `chase` says which of the two flights chase). Chases
/// never share for starts close together alone: a chase's search stops at
/// its lookahead, and a flood to two or three chasers costs more than
/// their legs. On random512-10-0 with 100 targets (`chase` example,
/// budget 4,096), with chases sharing by closeness the searches of the
/// first 500 frames took the whole budget and the chasers caught on frame
/// 2,117.9 on average for 3.36 M expansions; without, 2,004.8 for 2.06 M
/// (the other maps within 0.3%).
pub(super) fn shares(both: Span, goal: Cell, chase: (bool, bool), chasers: usize) -> bool {
    match chase {
        (false, false) => shareable(both, goal),
        (true, true) => shared_wide(chasers),
        _ => false,
    }
}

/// Whether chasers of one unit, `chasers` of them asking in one frame,
/// share a search however far apart they start. Chasers of one target
/// are many and spread over the map when the order is given (a squad
/// sent at a tank across it, an army at a flagship), and one flood back
/// from the target reaches them all for less than their searches: on
/// random512-10-0, the first searches of 1,000 chasers of 10 targets took
/// 6.6 M expansions one by one and 1.6 M shared (`chase` example, no
/// budget: the whole first frame).
fn shared_wide(chasers: usize) -> bool {
    chasers >= CHASERS_SHARE_WIDE
}

/// Chase requests with one goal asked in one frame, at least, for them to
/// share a search wherever they start ([`shared_wide`]). Two or three
/// chasers far apart that happen to ask for one cell in one frame (their
/// paths repaired when the target moved) would make a flood cover the map
/// between them, far more than their searches: with every two sharing,
/// the game above took 21.1 M expansions in all instead of 4.8 M. Ten
/// chasers a target (100 targets) search alone: a flood over the map
/// costs more than ten searches.
const CHASERS_SHARE_WIDE: usize = 16;

// Quick routes.

/// Frames a request may wait (for its quick path or its real one) before
/// the quick searches leave half the budget to the searches with real
/// costs: two and a half seconds at 60 frames a second. Until then they
/// may take all of it, so that a burst of orders all get a quick path
/// first. 150, not 120: with node expansions charged what they cost (two
/// units, see `NODE_HALVES` in `core/coarse/nodes.rs`), 1,000 units on
/// random512-10-0 with the stress test's terrain have their first paths
/// by frame 139; with 120 the last of them came at 157.
pub(super) const QUICK_FIRST_FRAMES: u64 = 150;

/// The heuristic weight of a quick route's search over the coarse graph's
/// nodes (the legs are refined at their exact cost either way). Measured
/// on 200 routes a map with the stress test's terrain: 1.05 expands a
/// fifth fewer nodes than 1 on random512-10-0 (918 against 1,165 before
/// refinement) for the same mean cost (1.098 times the best); 1.15 halves
/// them again but costs 1.108. Raised from 1.2 to 1.5 when node
/// expansions came to be charged what they cost: `stress --terrain`
/// (1,000 units) gets its first paths by frame 157 instead of 178 on
/// random512-10-0 and 153 instead of 214 on Berlin_0_1024, the quick paths
/// at 1.098 and 1.092 times the final ones on average (1.088 and 1.077 at
/// 1.2).
pub(super) const QUICK_WEIGHT: f32 = 1.5;

/// Jobs of a shared search that get quick routes of their own while they
/// wait for it, at most: two or three units that happen to share a goal
/// would otherwise wait, pathless, for their one search behind every
/// other's (on Berlin_0_1024 with 1,000 units, two of them until frame
/// 3,466 against 255 for the rest), and for them a quick route each costs
/// less than the search. A squad shares its search to save work, and a
/// quick route for each of its units would cost several times that search
/// (`stress --goals 20 --terrain`, squads of 50: 4.1 times the
/// expansions, and the last real path at frame 500 against 129, for first
/// paths at 113 against 129).
pub(super) const SHARED_QUICK_MOST: usize = 4;

/// The part of `nodes_per_frame` quick routes may take on frame `frame`,
/// when the request waiting longest was made on frame `oldest`: all of it
/// until some request has waited [`QUICK_FIRST_FRAMES`], half after.
pub(super) fn quick_quota(nodes_per_frame: u32, frame: u64, oldest: Option<u64>) -> u32 {
    if oldest.is_some_and(|oldest| frame.saturating_sub(oldest) >= QUICK_FIRST_FRAMES) {
        nodes_per_frame / 2
    } else {
        nodes_per_frame
    }
}

/// Whether the jobs of a flight may have quick routes: it searches for
/// one alone, or shares its search (`shared`) among at most
/// [`SHARED_QUICK_MOST`] `jobs`.
pub(super) fn has_quick_routes(shared: bool, jobs: usize) -> bool {
    !shared || jobs <= SHARED_QUICK_MOST
}

// Reading a shared search's paths back.

/// Cells of a path read back from a shared search per unit of the frame's
/// budget: a shared search answers each of its requests with a path of its
/// own, and reading them back is work too. A squad of a hundred units
/// whose paths are read in one frame would otherwise make it long.
pub(super) const PATH_CELLS_PER_EXPANSION: u64 = 8;

/// What reading `path` back from a shared search costs in budget.
pub(super) fn reading_cost(path: &Path) -> u64 {
    (path.cells.len() as u64).div_ceil(PATH_CELLS_PER_EXPANSION)
}
