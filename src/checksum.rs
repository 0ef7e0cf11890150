//! [`FrontierChecksum`]: a hash of what the plugin decided each frame, for
//! a lockstep game to compare across its clients every turn.

use bevy::prelude::*;

/// A 64-bit hash of what the plugin decided each frame, in an order no
/// entity id reaches: every result delivered (status, cells, cost, grid
/// version, frames waited), in the order they were delivered, then every
/// mover's position, velocity and crowd state, in the order the movers
/// joined ([`Ordinal::joined`](crate::ordinal::Ordinal::joined)).
///
/// Opt-in: insert it (`app.init_resource::<FrontierChecksum>()`) and the
/// plugin fills it in at [`FrontierSystems::Last`](crate::schedule::FrontierSystems::Last);
/// without it nothing is hashed. Two clients that ran the same orders on
/// the same build have the same [`frame`](Self::frame) every frame, whatever
/// their thread counts or entity ids; the first frame they differ is where
/// their games part (see "Lockstep" in the README).
#[derive(Resource, Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
pub struct FrontierChecksum {
    /// This frame's hash as it is being folded.
    open: Fold,
    last: u64,
    total: u64,
    frames: u64,
}

impl FrontierChecksum {
    /// The hash of the last frame.
    pub fn frame(&self) -> u64 {
        self.last
    }

    /// Every frame's hash since it was inserted, folded in turn: equal on
    /// two clients only if every frame was.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Frames hashed since it was inserted.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// Folds `words` into this frame's hash.
    pub(crate) fn fold(&mut self, words: impl IntoIterator<Item = u64>) {
        for word in words {
            self.open.add(word);
        }
    }

    /// Ends the frame: its hash becomes [`frame`](Self::frame).
    fn close(&mut self) {
        self.last = std::mem::take(&mut self.open).finish();
        let mut total = Fold(self.total);
        total.add(self.last);
        self.total = total.finish();
        self.frames += 1;
    }
}

/// A small fast hash of 64-bit words (a multiply and a rotate a word, as
/// rustc's FxHash, with a final mix so every bit reaches every other): the
/// same on every machine, unlike a hasher seeded at random.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serialize", derive(serde::Serialize, serde::Deserialize))]
struct Fold(u64);

impl Fold {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn finish(self) -> u64 {
        let mut x = self.0;
        x ^= x >> 33;
        x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
        x ^= x >> 33;
        x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        x ^ (x >> 33)
    }
}

/// `FrontierSystems::Last`: the frame's hash is done.
#[inline(never)] // named in profiles: what the checksum costs
pub(crate) fn close_frame(mut checksum: ResMut<FrontierChecksum>) {
    checksum.close();
}

/// The hash of `words` alone, as a frame of one fold would give it.
pub(crate) fn hash_words(words: impl IntoIterator<Item = u64>) -> u64 {
    let mut fold = Fold::default();
    for word in words {
        fold.add(word);
    }
    fold.finish()
}

/// Two 32-bit floats' bits as one word.
#[inline]
pub(crate) fn pair(a: f32, b: f32) -> u64 {
    (u64::from(a.to_bits()) << 32) | u64::from(b.to_bits())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A frame's hash follows every word and their order, and the total
    /// every frame's.
    #[test]
    fn every_word_and_its_order_counts() {
        let hash = |words: &[u64]| {
            let mut checksum = FrontierChecksum::default();
            checksum.fold(words.iter().copied());
            checksum.close();
            checksum
        };
        let a = hash(&[1, 2, 3]);
        assert_ne!(a.frame(), hash(&[1, 3, 2]).frame());
        assert_ne!(a.frame(), hash(&[1, 2, 4]).frame());
        assert_ne!(a.frame(), hash(&[1, 2, 3, 0]).frame());
        assert_eq!(a, hash(&[1, 2, 3]));
        let mut two = a.clone();
        two.close();
        assert_eq!(two.frames(), 2);
        assert_ne!(two.total(), a.total());
    }
}
