//! The one place the plugin reads the wall clock (to report how long its
//! systems took, and for `PathfindingSettings::max_frame_time`): Bevy's
//! `Instant`, which in a browser (`wasm32-unknown-unknown`) reads the
//! page's clock where the standard library's `Instant::now` panics. On
//! other targets the two are one type, so `clippy.toml` forbids its clock
//! methods everywhere and these two functions alone are let through: a
//! call of the standard library's `Instant::now` or `elapsed` written
//! anywhere else in the crate fails CI's clippy.

use std::time::Duration;

pub(crate) use bevy::platform::time::Instant;

/// Now.
#[inline]
#[expect(
    clippy::disallowed_methods,
    reason = "Bevy's clock, which runs in a browser; the one call allowed"
)]
pub(crate) fn now() -> Instant {
    Instant::now()
}

/// The time since `began`.
#[inline]
#[expect(
    clippy::disallowed_methods,
    reason = "Bevy's clock, which runs in a browser; the one call allowed"
)]
pub(crate) fn since(began: Instant) -> Duration {
    began.elapsed()
}
