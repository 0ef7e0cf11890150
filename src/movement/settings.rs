//! The crowd's settings, the numbers a game changes
//! ([`CrowdSettings`]); the crate's own tuning is in `tuning.rs`.

use bevy::prelude::*;

/// How the crowd moves: how movers avoid each other, how long they take
/// turns at passages, and when a unit held up pushes through or gives up.
/// Read by every stage of the crowd step, with or without
/// [`AvoidancePlugin`](super::AvoidancePlugin) (only `enabled`,
/// `time_horizon`, `max_neighbours`, `threads` and `separation_rounds`
/// are avoidance's alone). Added with `init_resource`: a value the app
/// inserts wins. Called `AvoidanceSettings` in earlier builds of the main branch; that name is kept
/// as a deprecated alias.
#[derive(Resource, Clone, Debug, PartialEq, Reflect)]
#[reflect(Resource)]
pub struct CrowdSettings {
    /// Whether movers avoid each other at all (default `true`). Off, every
    /// mover walks its preferred velocity, through the others.
    pub enabled: bool,
    /// Seconds ahead a mover looks for collisions with others (default
    /// 0.75): longer avoids earlier and more smoothly, shorter lets units
    /// pack closer.
    pub time_horizon: f32,
    /// The nearest neighbours each mover avoids, at most (default 6).
    pub max_neighbours: usize,
    /// Threads of Bevy's compute task pool the planning of velocities is
    /// spread over: 0 (the default), or more than it has, for all the pool
    /// has. Each unit is
    /// planned alone from where every unit stood at the frame's start, so
    /// the result is the same whatever the number.
    pub threads: usize,
    /// Seconds a moving unit may make no headway (half a cell of ground
    /// gained), blocked by others, before it pushes through until it makes
    /// headway again (default 2): it leaves most of the avoiding to the
    /// others (of two pushing through against each other, the one ranked
    /// later in the crowd, that is the one that joined first, yields),
    /// though never ends deep in another body. One blocked
    /// this long within a few cells of its end rests at the nearest free
    /// cell instead: close enough (for a unit wider than a cell whose
    /// pushing through gained it nothing, twice as far).
    pub give_up_after: f32,
    /// Seconds units waiting at one end of a one-lane passage (a bridge or
    /// gap one unit wide) let the other end keep sending units through
    /// (default 4): after that, no new unit enters from the other end, and
    /// once the passage is empty the waiting side goes. A side whose units
    /// keep coming close behind each other (a platoon) keeps its turn up
    /// to three times as long, so that the passage changes sides (and is
    /// emptied) less often. See [`passage`](super::passage).
    pub passage_turn: f32,
    /// Seconds a moving unit may go without headway (pushing through or
    /// not; waiting its turn at a passage does not count, nor does time in
    /// which the units in front of it gain ground: a slow crowd stops
    /// nobody, a deadlock does) before it stops
    /// where it stands and the game is told: its order ends with
    /// [`Arrival::Blocked`](super::Arrival::Blocked), and
    /// [`MoveBlocked`](super::MoveBlocked) says where (default 30). Longer
    /// lets a jam that will clear in the end clear with everyone still
    /// going; shorter frees a hopeless jam sooner (the game may order the
    /// stopped units elsewhere). `f32::INFINITY`: never; a unit then
    /// pushes on for as long as it takes.
    pub stop_after: f32,
    /// Rounds at most of pushing bodies still overlapping apart after the
    /// walk (default 32). They end early, once no pair is deeper than 1%
    /// of its radii's sum, so a loose crowd runs two or three; a dense jam
    /// needs many, each round carrying a push one body further down a
    /// chain of bodies pressed together. In the first half a unit pushing
    /// through gives nothing against a standing one, which is shoved
    /// aside; the second half shares out what is left. What they leave
    /// deeper than 0.1 of a radius is held back (both units go back to
    /// where they started the frame), so fewer rounds cost less in a jam
    /// and hold more units back: with 8, pairs of a crossing of 1,000
    /// movers were left up to 0.22 of a radius deep for the hold back to
    /// mend; with 32, under 0.06.
    pub separation_rounds: usize,
}

/// The old name of [`CrowdSettings`], which covers more than avoidance.
#[deprecated(note = "renamed CrowdSettings: it covers passages and headway too")]
pub type AvoidanceSettings = CrowdSettings;

impl Default for CrowdSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            time_horizon: 0.75,
            max_neighbours: 6,
            threads: 0,
            give_up_after: 2.0,
            passage_turn: 4.0,
            stop_after: 30.0,
            separation_rounds: 32,
        }
    }
}

impl CrowdSettings {
    /// The longest [`time_horizon`](Self::time_horizon), in seconds.
    pub const MAX_TIME_HORIZON: f32 = 10.0;
    /// The shortest [`time_horizon`](Self::time_horizon), in seconds (a
    /// horizon of 0 would ask ORCA to divide by it).
    pub const MIN_TIME_HORIZON: f32 = 0.01;
    /// The longest [`passage_turn`](Self::passage_turn), in seconds: a
    /// side never waits for ever.
    pub const MAX_PASSAGE_TURN: f32 = 600.0;
    /// The most [`max_neighbours`](Self::max_neighbours).
    pub const MAX_NEIGHBOURS: usize = 64;
    /// The most [`separation_rounds`](Self::separation_rounds).
    pub const MAX_SEPARATION_ROUNDS: usize = 256;

    /// The settings as the crowd uses them, each number brought into its
    /// range: a NaN takes the default's value; a time horizon between
    /// [`MIN_TIME_HORIZON`](Self::MIN_TIME_HORIZON) and
    /// [`MAX_TIME_HORIZON`](Self::MAX_TIME_HORIZON); no negative
    /// durations (0: at once); a passage turn of at most
    /// [`MAX_PASSAGE_TURN`](Self::MAX_PASSAGE_TURN); at most
    /// [`MAX_NEIGHBOURS`](Self::MAX_NEIGHBOURS) neighbours and
    /// [`MAX_SEPARATION_ROUNDS`](Self::MAX_SEPARATION_ROUNDS) rounds.
    /// `give_up_after` and `stop_after` may be `f32::INFINITY` (never).
    /// The plugins warn once when a game's settings needed it.
    ///
    /// ```
    /// use bevy_frontier::movement::CrowdSettings;
    ///
    /// let odd = CrowdSettings {
    ///     time_horizon: f32::INFINITY,
    ///     give_up_after: f32::NAN,
    ///     stop_after: -1.0,
    ///     ..Default::default()
    /// };
    /// let used = odd.clamped();
    /// assert_eq!(used.time_horizon, CrowdSettings::MAX_TIME_HORIZON);
    /// assert_eq!(used.give_up_after, CrowdSettings::default().give_up_after);
    /// assert_eq!(used.stop_after, 0.0);
    /// assert_eq!(CrowdSettings::default().clamped(), CrowdSettings::default());
    /// ```
    pub fn clamped(&self) -> Self {
        let default = Self::default();
        let seconds = |value: f32, default: f32, most: f32| {
            if value.is_nan() {
                default
            } else {
                value.max(0.0).min(most)
            }
        };
        Self {
            enabled: self.enabled,
            time_horizon: seconds(
                self.time_horizon,
                default.time_horizon,
                Self::MAX_TIME_HORIZON,
            )
            .max(Self::MIN_TIME_HORIZON),
            max_neighbours: self.max_neighbours.min(Self::MAX_NEIGHBOURS),
            threads: self.threads,
            give_up_after: seconds(self.give_up_after, default.give_up_after, f32::INFINITY),
            passage_turn: seconds(
                self.passage_turn,
                default.passage_turn,
                Self::MAX_PASSAGE_TURN,
            ),
            stop_after: seconds(self.stop_after, default.stop_after, f32::INFINITY),
            separation_rounds: self.separation_rounds.min(Self::MAX_SEPARATION_ROUNDS),
        }
    }
}

/// Warns once a game's [`CrowdSettings`] change to numbers out of
/// their range ([`CrowdSettings::clamped`] says what is used
/// instead).
pub(crate) fn warn_of_odd_settings(settings: Res<CrowdSettings>) {
    if settings.is_changed() {
        let used = settings.clamped();
        if used != *settings {
            warn!("CrowdSettings out of range: {settings:?}; the crowd uses {used:?}");
        }
    }
}
