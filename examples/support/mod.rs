//! What the headless benchmark examples (`stress`, `crowd`) share: finding
//! and loading a MovingAI map, a fixed-seed generator, percentiles and the
//! walkable cells of a map's largest region.

use std::collections::HashMap;
use std::path::PathBuf;

use bevy_frontier::core::{Cell, MovingAiMap, SizeClass};
use bevy_frontier::prelude::*;

/// The MovingAI folder: `$FRONTIER_MOVINGAI_DIR`, else `../shared/movingai`
/// beside the crate.
fn movingai_dir() -> PathBuf {
    std::env::var_os("FRONTIER_MOVINGAI_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/movingai"))
}

/// The map at `path`, else the MovingAI map `default` (a path inside the
/// MovingAI folder, such as `maps/random/random512-10-0.map`), else the
/// grid `generate` makes (named `generated`). Returns the grid and its name.
/// Swamp cells (`S`) cost `swamp` (1 is the benchmark's rule; the RTS
/// scene gives them 4).
pub fn load_grid(
    path: Option<PathBuf>,
    default: &str,
    generated: &str,
    generate: impl FnOnce() -> NavGrid,
    swamp: u8,
) -> Result<(NavGrid, String), String> {
    let path = path.or_else(|| {
        let default = movingai_dir().join(default);
        default.is_file().then_some(default)
    });
    match path {
        Some(path) => {
            let map = MovingAiMap::load(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            let grid = map.to_nav_grid_with(|terrain| match terrain {
                b'S' => swamp,
                other => bevy_frontier::core::movingai::benchmark_cost(other),
            });
            Ok((grid, path.display().to_string()))
        }
        None => Ok((generate(), generated.to_string())),
    }
}

/// The benchmark map: `path`, else random512-10-0 from the MovingAI
/// folder, else a generated 512×512 map with 10% random walls (see
/// [`load_grid`]).
#[allow(dead_code)] // `stress`, `chase`, `coarse` and `budget_cost` use it.
pub fn benchmark_grid(path: Option<PathBuf>, swamp: u8) -> Result<(NavGrid, String), String> {
    load_grid(
        path,
        "maps/random/random512-10-0.map",
        "generated 512x512, 10% walls",
        || scattered_walls(512, 512, 10, 7),
        swamp,
    )
}

/// A fixed-seed generator so every run orders the same moves.
pub struct Lcg(pub u64);

impl Lcg {
    /// Uniform in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) % n as u64) as usize
    }
}

/// Rough terrain on `grid`: `percent`% of its walkable cells, chosen by a
/// fixed seed, cost `cost`. The terrain benchmark is
/// random512-10-0 with `rough_terrain(grid, 20, 4, 12)`: a fifth of the
/// open cells at cost 4.
#[allow(dead_code)] // `stress` and the `astar` bench use it, `crowd` does not.
pub fn rough_terrain(grid: &NavGrid, percent: usize, cost: u8, seed: u64) -> NavGrid {
    let mut rng = Lcg(seed);
    let costs = grid
        .costs()
        .iter()
        .map(|&c| {
            if c != NavGrid::BLOCKED && rng.below(100) < percent {
                cost
            } else {
                c
            }
        })
        .collect();
    NavGrid::from_costs(grid.width(), grid.height(), costs)
        .expect("the same size")
        .with_neighborhood(grid.neighborhood())
}

/// A map of `percent`% walls scattered by a fixed seed, for when the
/// MovingAI data is not there.
pub fn scattered_walls(width: u32, height: u32, percent: usize, seed: u64) -> NavGrid {
    let mut rng = Lcg(seed);
    let costs = (0..width * height)
        .map(|_| {
            if rng.below(100) < percent {
                NavGrid::BLOCKED
            } else {
                1
            }
        })
        .collect();
    NavGrid::from_costs(width, height, costs).expect("a grid of a valid size")
}

/// Where an FNV-1a hash starts.
#[allow(dead_code)] // `stress` and `crowd` use it.
pub const FNV_START: u64 = 0xcbf2_9ce4_8422_2325;

/// `hash` with `bytes` folded in (FNV-1a): the examples' digests.
#[allow(dead_code)] // `stress` and `crowd` use it.
pub fn fnv1a(hash: u64, bytes: impl IntoIterator<Item = u8>) -> u64 {
    bytes.into_iter().fold(hash, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// A heuristic weight given as `--weight`: a finite number of at least 1.
#[allow(dead_code)] // `stress` and `coarse` use it, `crowd` does not.
pub fn weight(value: &str) -> Result<f32, String> {
    value
        .parse::<f32>()
        .ok()
        .filter(|w| w.is_finite() && *w >= 1.0)
        .ok_or_else(|| format!("--weight {value:?} is not a number of at least 1"))
}

/// Command-line value `value` of `flag` as a number above zero.
#[allow(dead_code)] // `bake` does not use it.
pub fn positive<T: std::str::FromStr + PartialOrd + Default>(
    flag: &str,
    value: &str,
) -> Result<T, String> {
    value
        .parse()
        .ok()
        .filter(|n| *n > T::default())
        .ok_or(format!("{flag} {value:?} is not a positive number"))
}

/// The `p`th percentile of sorted samples (nearest rank).
#[allow(dead_code)] // `bake` does not use it.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

/// The walkable cells of the grid's largest region (ties: the higher
/// label), in index order, so that every path between two of them exists.
#[allow(dead_code)] // `bake` does not use it.
pub fn main_region_cells(grid: &NavGrid) -> Vec<Cell> {
    main_region_of(grid.size_class(1))
}

/// [`main_region_cells`] as a unit of one class and size sees the grid.
pub fn main_region_of(view: SizeClass) -> Vec<Cell> {
    let walkable: Vec<Cell> = (0..view.cell_count())
        .map(|i| view.cell(i))
        .filter(|&c| view.is_walkable(c))
        .collect();
    let mut sizes = HashMap::<u32, usize>::new();
    for &cell in &walkable {
        *sizes
            .entry(view.region(cell).unwrap_or_default())
            .or_default() += 1;
    }
    let main_region = sizes
        .iter()
        .max_by_key(|&(&region, &size)| (size, region))
        .map_or(0, |(&region, _)| region);
    walkable
        .into_iter()
        .filter(|&c| view.region(c) == Some(main_region))
        .collect()
}

/// Terrain types of the examples' maps with movement classes.
#[allow(dead_code)] // `stress` uses them.
pub mod terrain {
    use bevy_frontier::core::Terrain;

    /// Open ground.
    pub const OPEN: Terrain = Terrain(1);
    /// Woods: infantry walk through, wheels go round.
    pub const WOODS: Terrain = Terrain(2);
    /// Shallow water: a ford for infantry, sea for boats.
    pub const SHALLOW: Terrain = Terrain(3);
    /// Deep water: boats and hovercraft only.
    pub const DEEP: Terrain = Terrain(4);
}

/// The examples' movement classes, the first `count` of foot, boat, hover
/// and wheels (ids in that order).
#[allow(dead_code)] // `stress` uses it.
pub fn movement_classes(count: usize) -> MovementClasses {
    use terrain::*;
    let all: [(&str, &[(Terrain, u8)]); 4] = [
        ("foot", &[(OPEN, 1), (WOODS, 2), (SHALLOW, 3)]),
        ("boat", &[(SHALLOW, 2), (DEEP, 1)]),
        ("hover", &[(OPEN, 1), (SHALLOW, 1), (DEEP, 1)]),
        ("wheels", &[(OPEN, 1), (WOODS, 5)]),
    ];
    all.iter()
        .take(count)
        .fold(MovementClasses::new(), |classes, (name, costs)| {
            classes.class(name, costs.iter().copied())
        })
}

/// `grid`'s walls with land and water laid over its open cells by a fixed
/// seed: lakes and rivers of deep water with shallow banks where a smooth
/// noise is low, woods where another is high, open ground elsewhere; with
/// `classes` registered (see [`movement_classes`]).
#[allow(dead_code)] // `stress` uses it.
pub fn land_and_water(grid: &NavGrid, classes: MovementClasses, seed: u64) -> NavGrid {
    use terrain::*;
    let (w, h) = (grid.width(), grid.height());
    let terrain = (0..w * h)
        .map(|i| {
            let (x, y) = (i % w, i / w);
            if !grid.is_walkable(Cell::new(x, y)) {
                return Terrain::WALL.0;
            }
            let water = value_noise(x, y, 40, seed);
            let terrain = if water < 0.22 {
                DEEP
            } else if water < 0.3 {
                SHALLOW
            } else if value_noise(x, y, 20, seed + 1) > 0.68 {
                WOODS
            } else {
                OPEN
            };
            terrain.0
        })
        .collect();
    NavGrid::from_costs(w, h, terrain)
        .expect("the same size")
        .with_neighborhood(grid.neighborhood())
        .with_classes(classes)
        .expect("at least one class")
}

/// Smooth noise in `0..1`: values hashed at the corners of a lattice
/// `scale` cells wide, blended across each square.
fn value_noise(x: u32, y: u32, scale: u32, seed: u64) -> f32 {
    // splitmix64's finaliser over the corner and the seed.
    let corner = |cx: u32, cy: u32| {
        let mut z = ((cx as u64) << 32 | cy as u64) ^ seed.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 40) as f32 / (1u64 << 24) as f32
    };
    let (cx, cy) = (x / scale, y / scale);
    let smooth = |t: f32| t * t * (3.0 - 2.0 * t);
    let (tx, ty) = (
        smooth((x % scale) as f32 / scale as f32),
        smooth((y % scale) as f32 / scale as f32),
    );
    let top = corner(cx, cy) * (1.0 - tx) + corner(cx + 1, cy) * tx;
    let bottom = corner(cx, cy + 1) * (1.0 - tx) + corner(cx + 1, cy + 1) * tx;
    top * (1.0 - ty) + bottom * ty
}
