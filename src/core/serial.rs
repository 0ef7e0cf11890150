//! serde helpers for the core's own state (feature `serialize`), which a
//! game's save holds (`crate::save`), and for baked maps (`crate::bake`).

/// A fixed-size array as a sequence (serde derives arrays only up to 32).
pub(crate) mod array {
    use serde::de::Error;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub(crate) fn serialize<S: Serializer, T: Serialize, const N: usize>(
        values: &[T; N],
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        values.as_slice().serialize(serializer)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>, T: Deserialize<'de>, const N: usize>(
        deserializer: D,
    ) -> Result<[T; N], D::Error> {
        let values = Vec::<T>::deserialize(deserializer)?;
        let len = values.len();
        values
            .try_into()
            .map_err(|_| D::Error::custom(format!("{len} values, not {N}")))
    }
}

/// A path's cells: the first as it is, then each as a byte, the step to it
/// from the one before (a step to one of the eight neighbours, or none),
/// or a jump to a cell given in full: a path of steps takes a byte a cell.
pub(crate) mod path_cells {
    use serde::de::Error;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use crate::core::Cell;

    /// The byte of a jump: the cell is the next of the jumps.
    const JUMP: u8 = 9;

    #[derive(Serialize, Deserialize)]
    struct Steps {
        first: Option<Cell>,
        #[serde(with = "super::bytes")]
        steps: Vec<u8>,
        jumps: Vec<Cell>,
    }

    fn step(from: Cell, to: Cell) -> Option<u8> {
        let dx = i64::from(to.x) - i64::from(from.x);
        let dy = i64::from(to.y) - i64::from(from.y);
        ((-1..=1).contains(&dx) && (-1..=1).contains(&dy)).then(|| ((dx + 1) * 3 + dy + 1) as u8)
    }

    pub(crate) fn serialize<S: Serializer>(
        cells: &[Cell],
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        let mut steps = Vec::with_capacity(cells.len().saturating_sub(1));
        let mut jumps = Vec::new();
        for pair in cells.windows(2) {
            match step(pair[0], pair[1]) {
                Some(code) => steps.push(code),
                None => {
                    steps.push(JUMP);
                    jumps.push(pair[1]);
                }
            }
        }
        let first = cells.first().copied();
        Steps {
            first,
            steps,
            jumps,
        }
        .serialize(serializer)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Vec<Cell>, D::Error> {
        let Steps {
            first,
            steps,
            jumps,
        } = Steps::deserialize(deserializer)?;
        let Some(mut at) = first else {
            return Ok(Vec::new());
        };
        let mut cells = Vec::with_capacity(steps.len() + 1);
        cells.push(at);
        let mut jumps = jumps.into_iter();
        for code in steps {
            at = match code {
                JUMP => jumps
                    .next()
                    .ok_or_else(|| D::Error::custom("a path's jump is missing"))?,
                0..JUMP => {
                    let (dx, dy) = (i64::from(code / 3) - 1, i64::from(code % 3) - 1);
                    let x = u32::try_from(i64::from(at.x) + dx);
                    let y = u32::try_from(i64::from(at.y) + dy);
                    match (x, y) {
                        (Ok(x), Ok(y)) => Cell::new(x, y),
                        _ => return Err(D::Error::custom("a path steps off the grid")),
                    }
                }
                _ => return Err(D::Error::custom("a path's step is not one")),
            };
            cells.push(at);
        }
        Ok(cells)
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn paths_come_back_as_they_were() {
            let cells = vec![
                Cell::new(3, 3),
                Cell::new(4, 4),
                Cell::new(4, 5),
                Cell::new(4, 5),
                Cell::new(10, 0),
                Cell::new(9, 0),
                Cell::new(0, 0),
            ];
            #[derive(Serialize, Deserialize, PartialEq, Debug)]
            struct Path(#[serde(with = "super")] Vec<Cell>);
            for path in [Path(cells), Path(Vec::new()), Path(vec![Cell::new(7, 1)])] {
                let bytes = postcard::to_allocvec(&path).unwrap();
                assert_eq!(postcard::from_bytes::<Path>(&bytes).unwrap(), path);
            }
        }
    }
}

/// FNV-1a over `bytes`, eight at a time (a word per step, then the last
/// bytes one by one): each step is a bijection of the hash for a given
/// input, so any one byte or word changed changes the result.
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let words = bytes.chunks_exact(8);
    let tail = words.remainder();
    let hash = words.fold(0xcbf2_9ce4_8422_2325u64, |hash, word| {
        let word = u64::from_le_bytes(word.try_into().unwrap_or_default());
        (hash ^ word).wrapping_mul(PRIME)
    });
    tail.iter()
        .fold(hash, |hash, &byte| (hash ^ byte as u64).wrapping_mul(PRIME))
}

/// Byte buffers as one run of bytes (serde's bytes), not a sequence of
/// numbers.
pub(crate) mod bytes {
    use serde::{Deserializer, Serializer};

    pub(crate) fn serialize<S: Serializer>(bytes: &[u8], serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bytes(bytes)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Vec<u8>, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = Vec<u8>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("bytes")
            }
            fn visit_bytes<E>(self, bytes: &[u8]) -> Result<Vec<u8>, E> {
                Ok(bytes.to_vec())
            }
            fn visit_byte_buf<E>(self, bytes: Vec<u8>) -> Result<Vec<u8>, E> {
                Ok(bytes)
            }
        }
        deserializer.deserialize_byte_buf(Visitor)
    }
}

/// Bytes framed as a baked map's and a save's are: 8 bytes of magic, a
/// format version (u32), the payload's length (u64), its FNV-1a hash
/// (u64), then the payload.
pub(crate) mod framed {
    use super::fnv1a;

    /// The header's length.
    pub(crate) const HEADER: usize = 8 + 4 + 8 + 8;

    /// Why bytes are not a framed payload of a kind and version.
    pub(crate) enum FrameError {
        /// They do not start with the magic.
        Magic,
        /// Another format version.
        Version(u32),
        /// Not the length the header gives (header included).
        Length { expected: u64, got: u64 },
        /// The payload does not hash to what the header says.
        Corrupt,
    }

    /// `payload` framed under `magic` and `version`.
    pub(crate) fn frame(magic: [u8; 8], version: u32, payload: &[u8]) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(HEADER + payload.len());
        bytes.extend_from_slice(&magic);
        bytes.extend_from_slice(&version.to_le_bytes());
        bytes.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        bytes.extend_from_slice(&fnv1a(payload).to_le_bytes());
        bytes.extend_from_slice(payload);
        bytes
    }

    /// The payload of `bytes`, checked against the header.
    pub(crate) fn unframe(bytes: &[u8], magic: [u8; 8], version: u32) -> Result<&[u8], FrameError> {
        let word = |at: usize| -> [u8; 8] { bytes[at..at + 8].try_into().unwrap_or_default() };
        if bytes.len() < 12 || bytes[..8] != magic {
            return Err(FrameError::Magic);
        }
        let found = u32::from_le_bytes(bytes[8..12].try_into().unwrap_or_default());
        if found != version {
            return Err(FrameError::Version(found));
        }
        let got = bytes.len() as u64;
        if bytes.len() < HEADER {
            return Err(FrameError::Length {
                expected: HEADER as u64,
                got,
            });
        }
        let expected = u64::from_le_bytes(word(12)).saturating_add(HEADER as u64);
        if expected != got {
            return Err(FrameError::Length { expected, got });
        }
        let payload = &bytes[HEADER..];
        if fnv1a(payload) != u64::from_le_bytes(word(20)) {
            return Err(FrameError::Corrupt);
        }
        Ok(payload)
    }
}
