//! Maps baked ahead (feature `serialize`): a [`NavGrid`] with its movement
//! classes and the coarse graphs built for it, written to bytes at build
//! time and read back when the game starts, so that a large map is not
//! built again at every start (Berlin_0_1024's two graphs are millions of
//! expansions) and every client of a lockstep game starts from the same
//! graphs on its first turn.
//!
//! The bytes are checked as they are read: a file that is cut, has a byte
//! changed, is of another format version or does not describe a grid and
//! graphs of that grid gives a [`BakeError`], never a panic and never
//! another map. Layout: the 8 bytes `FRNTNAV\0`, the format version
//! ([`FORMAT_VERSION`], u32 little-endian), the payload's length (u64) and
//! its FNV-1a hash (u64), then the payload in [postcard]'s serde format.
//!
//! [`NavGrid`] and [`CoarseGraph`] implement serde's `Serialize` and
//! `Deserialize` themselves, for a game that keeps them in a format of its
//! own; [`BakedMap`] adds the header and the check.
//!
//! With Bevy's asset system (the app has `AssetPlugin`), add
//! [`NavGridAssetPlugin`]: a `.navgrid` file loads as a [`BakedMap`]
//! asset, and a map entity given a [`BakedNavGrid`] handle gets the grid
//! and its graphs as soon as the file is loaded (from then on it is a map
//! like any other, kept in sync with its tilemap by
//! [`TilemapNavPlugin`](crate::tilemap::TilemapNavPlugin) if it has one).
//!
//! ```
//! use bevy_frontier::bake::BakedMap;
//! use bevy_frontier::prelude::*;
//!
//! let grid = NavGrid::new(64, 64).unwrap();
//! let baked = BakedMap::bake(grid, &[UnitKind::sized(1)]);
//! let bytes = baked.to_bytes().unwrap();
//! let loaded = BakedMap::from_bytes(&bytes).unwrap();
//! assert_eq!(loaded.grid.costs(), baked.grid.costs());
//! assert!(loaded.graphs[0].is_ready(&loaded.grid.view(UnitKind::sized(1)).unwrap()));
//! // One byte changed: an error, not another map.
//! let mut bad = bytes.clone();
//! bad[40] ^= 1;
//! assert!(BakedMap::from_bytes(&bad).is_err());
//! ```

use std::fmt;

use bevy::asset::io::Reader;
use bevy::asset::{Asset, AssetApp, AssetLoader, Assets, LoadContext};
use bevy::prelude::*;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::core::coarse::GraphParts;
use crate::core::serial::bytes;
use crate::core::serial::framed::{self, FrameError};
use crate::core::{
    ClassId, CoarseGraph, MovementClasses, NavGrid, Neighborhood, Terrain, UnitKind,
};
use crate::pathfinding::CoarseGraphs;

/// The version of the byte layout [`BakedMap::to_bytes`] writes. A file of
/// another version is refused ([`BakeError::Version`]): bake it again.
pub const FORMAT_VERSION: u32 = 1;

/// The first bytes of a baked map.
const MAGIC: [u8; 8] = *b"FRNTNAV\0";

/// A grid and the coarse graphs built for it, as baked ahead and loaded
/// again. As an asset, a `.navgrid` file ([`NavGridAssetPlugin`]).
#[derive(Asset, TypePath, Clone, Debug)]
pub struct BakedMap {
    /// The grid, with its movement classes.
    pub grid: NavGrid,
    /// Built graphs of the grid, one per unit kind baked.
    pub graphs: Vec<CoarseGraph>,
}

/// Why bytes could not be read as a baked map, or a map not written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BakeError {
    /// They do not start as a baked map does.
    NotABakedMap,
    /// A baked map of another format version.
    Version {
        /// The version the bytes have.
        found: u32,
    },
    /// Fewer or more bytes than the header says: the file was cut or has
    /// something after it.
    Length {
        /// Bytes the header announces, header included.
        expected: u64,
        /// Bytes there are.
        got: u64,
    },
    /// The payload does not hash to what the header says: bytes changed.
    Corrupt,
    /// The payload does not describe a grid and graphs of that grid.
    Malformed(String),
    /// A graph to bake is not built (or is being repaired).
    GraphNotBuilt(UnitKind),
}

impl fmt::Display for BakeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotABakedMap => write!(f, "not a baked map (no FRNTNAV header)"),
            Self::Version { found } => write!(
                f,
                "a baked map of format version {found}, this build reads {FORMAT_VERSION}: bake it again"
            ),
            Self::Length { expected, got } => {
                write!(f, "a baked map of {expected} bytes, but {got} bytes given")
            }
            Self::Corrupt => write!(f, "the baked map's bytes do not match their hash"),
            Self::Malformed(why) => write!(f, "the baked map is malformed: {why}"),
            Self::GraphNotBuilt(kind) => {
                write!(
                    f,
                    "the graph for {kind:?} is not built, so it cannot be baked"
                )
            }
        }
    }
}

impl std::error::Error for BakeError {}

impl BakedMap {
    /// Bakes `grid` with a graph for each of `kinds`, built on this thread
    /// (kinds whose class the grid lacks are left out).
    pub fn bake(grid: NavGrid, kinds: &[UnitKind]) -> Self {
        let graphs = kinds
            .iter()
            .filter_map(|&kind| grid.view(kind).map(|view| CoarseGraph::build(&view)))
            .collect();
        Self { grid, graphs }
    }

    /// The graph for units of `kind`, if one was baked.
    pub fn graph(&self, kind: UnitKind) -> Option<&CoarseGraph> {
        self.graphs.iter().find(|graph| graph.kind() == kind)
    }

    /// Graphs for a map entity: each baked graph handed in, and the plugin
    /// builds those of any other kind as usual.
    pub fn coarse_graphs(&self) -> CoarseGraphs {
        let mut graphs = CoarseGraphs::default();
        for graph in &self.graphs {
            graphs.insert(graph.clone());
        }
        graphs
    }

    /// The map as bytes: header, then the payload (see the module docs).
    pub fn to_bytes(&self) -> Result<Vec<u8>, BakeError> {
        if let Some(graph) = self.graphs.iter().find(|g| !g.is_built()) {
            return Err(BakeError::GraphNotBuilt(graph.kind()));
        }
        let payload = postcard::to_allocvec(&(&self.grid, &self.graphs))
            .map_err(|error| BakeError::Malformed(error.to_string()))?;
        let bytes = framed::frame(MAGIC, FORMAT_VERSION, &payload);
        Ok(bytes)
    }

    /// Reads a map written by [`to_bytes`](Self::to_bytes), checking it
    /// (see [`BakeError`]).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, BakeError> {
        let payload =
            framed::unframe(bytes, MAGIC, FORMAT_VERSION).map_err(|error| match error {
                FrameError::Magic => BakeError::NotABakedMap,
                FrameError::Version(found) => BakeError::Version { found },
                FrameError::Length { expected, got } => BakeError::Length { expected, got },
                FrameError::Corrupt => BakeError::Corrupt,
            })?;
        let (grid, graphs): (NavGrid, Vec<CoarseGraph>) = postcard::from_bytes(payload)
            .map_err(|error| BakeError::Malformed(error.to_string()))?;
        let shape = (grid.width(), grid.height(), grid.neighborhood());
        for graph in &graphs {
            if !graph.is_built_for(shape, grid.version(), grid.class_count()) {
                let why = format!("the graph for {:?} is not one of this grid", graph.kind());
                return Err(BakeError::Malformed(why));
            }
        }
        Ok(Self { grid, graphs })
    }
}

/// A move set as written: the number of neighbours.
fn neighbours_code(neighborhood: Neighborhood) -> u8 {
    match neighborhood {
        Neighborhood::Four => 4,
        Neighborhood::Eight => 8,
    }
}

/// The move set of a written number of neighbours.
fn neighborhood_of(neighbours: u8) -> Result<Neighborhood, String> {
    match neighbours {
        4 => Ok(Neighborhood::Four),
        8 => Ok(Neighborhood::Eight),
        n => Err(format!("{n} neighbours")),
    }
}

/// What makes a grid: its shape, move set, version, each cell's byte and
/// its classes (everything else is worked out from them on load).
#[derive(Serialize, Deserialize)]
struct GridData {
    width: u32,
    height: u32,
    /// 4 or 8.
    neighbours: u8,
    version: u64,
    #[serde(with = "bytes")]
    cells: Vec<u8>,
    /// Each class's name and cost per terrain type; none without classes.
    classes: Vec<(String, Vec<u8>)>,
}

impl Serialize for NavGrid {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let classes = self.classes().map_or_else(Vec::new, |classes| {
            (classes.tables())
                .map(|(name, table)| (name.to_owned(), table.to_vec()))
                .collect()
        });
        GridData {
            width: self.width(),
            height: self.height(),
            neighbours: neighbours_code(self.neighborhood()),
            version: self.version(),
            cells: self.cell_bytes().to_vec(),
            classes,
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for NavGrid {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let data = GridData::deserialize(deserializer)?;
        let neighborhood = neighborhood_of(data.neighbours).map_err(D::Error::custom)?;
        let (width, height) = (data.width, data.height);
        let mut grid = if data.classes.is_empty() {
            NavGrid::from_costs(width, height, data.cells).map_err(D::Error::custom)?
        } else {
            let mut classes = MovementClasses::new();
            for (name, table) in &data.classes {
                if table.len() != 256 {
                    return Err(D::Error::custom("a class's table is not 256 costs"));
                }
                let costs = table.iter().enumerate();
                classes.add(name, costs.map(|(t, &cost)| (Terrain(t as u8), cost)));
            }
            NavGrid::from_terrain(width, height, data.cells, classes).map_err(D::Error::custom)?
        };
        grid.set_neighborhood(neighborhood);
        grid.restore_version(data.version);
        Ok(grid)
    }
}

/// A built graph: its unit kind, its grid's shape and version, and each
/// level's records.
#[derive(Serialize, Deserialize)]
struct GraphData {
    class: u8,
    size: u8,
    width: u32,
    height: u32,
    neighbours: u8,
    version: u64,
    #[serde(with = "bytes")]
    lower: Vec<u8>,
    lower_lengths: Vec<u16>,
    #[serde(with = "bytes")]
    upper: Vec<u8>,
    upper_lengths: Vec<u16>,
}

impl Serialize for CoarseGraph {
    /// Fails for a graph not built ([`CoarseGraph::is_ready`]).
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::Error;
        let parts = self
            .parts()
            .ok_or_else(|| S::Error::custom(BakeError::GraphNotBuilt(self.kind())))?;
        let (width, height, neighborhood) = parts.shape;
        GraphData {
            class: parts.kind.class.index(),
            size: parts.kind.size,
            width,
            height,
            neighbours: if neighborhood == Neighborhood::Four {
                4
            } else {
                8
            },
            version: parts.version,
            lower: parts.lower.0,
            lower_lengths: parts.lower.1,
            upper: parts.upper.0,
            upper_lengths: parts.upper.1,
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for CoarseGraph {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let data = GraphData::deserialize(deserializer)?;
        let neighborhood = neighborhood_of(data.neighbours).map_err(D::Error::custom)?;
        CoarseGraph::from_parts(GraphParts {
            kind: UnitKind::new(ClassId::from_index(data.class), data.size),
            shape: (data.width, data.height, neighborhood),
            version: data.version,
            lower: (data.lower, data.lower_lengths),
            upper: (data.upper, data.upper_lengths),
        })
        .ok_or_else(|| D::Error::custom("a coarse graph's records do not read as one"))
    }
}

/// Loads `.navgrid` files (written by [`BakedMap::to_bytes`]) as
/// [`BakedMap`] assets.
#[derive(Default, TypePath)]
pub struct NavGridLoader;

impl AssetLoader for NavGridLoader {
    type Asset = BakedMap;
    type Settings = ();
    type Error = BevyError;

    async fn load(
        &self,
        reader: &mut dyn Reader,
        _settings: &(),
        _load_context: &mut LoadContext<'_>,
    ) -> Result<BakedMap, BevyError> {
        let mut bytes = Vec::new();
        reader.read_to_end(&mut bytes).await?;
        Ok(BakedMap::from_bytes(&bytes)?)
    }

    fn extensions(&self) -> &[&str] {
        &["navgrid"]
    }
}

/// On a map entity: the baked map it is to get. Once the asset is loaded,
/// the entity gets its [`NavGrid`] and [`CoarseGraphs`] (replacing any it
/// had) and this component goes; if the file cannot be loaded, the error
/// is logged and it goes too.
#[derive(Component, Clone, Debug)]
pub struct BakedNavGrid(pub Handle<BakedMap>);

/// `.navgrid` files as [`BakedMap`] assets, and maps given a
/// [`BakedNavGrid`] set up from them. Needs Bevy's `AssetPlugin`.
pub struct NavGridAssetPlugin;

impl Plugin for NavGridAssetPlugin {
    fn build(&self, app: &mut App) {
        app.init_asset::<BakedMap>()
            .register_asset_loader(NavGridLoader)
            .add_systems(PreUpdate, install_baked_maps);
    }
}

/// Puts each loaded baked map on its entity.
fn install_baked_maps(
    mut commands: Commands,
    maps: Query<(Entity, &BakedNavGrid)>,
    baked: Res<Assets<BakedMap>>,
    server: Res<AssetServer>,
) {
    for (entity, handle) in &maps {
        if let Some(map) = baked.get(&handle.0) {
            commands
                .entity(entity)
                .insert((map.grid.clone(), map.coarse_graphs()))
                .remove::<BakedNavGrid>();
        } else if let Some(bevy::asset::LoadState::Failed(error)) = server.get_load_state(&handle.0)
        {
            error!("bevy_frontier: map {entity} cannot load its baked grid: {error}");
            commands.entity(entity).remove::<BakedNavGrid>();
        }
    }
}
