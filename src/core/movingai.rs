//! Reader for the MovingAI benchmark formats: `.map` grids and `.map.scen`
//! scenario lists (Sturtevant, "Benchmarks for Grid-Based Pathfinding").
//!
//! Lines may end in LF or CRLF; scenario fields may be separated by tabs or
//! spaces. Malformed input is an error naming the line, never a panic.

use std::fmt;
use std::path::Path as FsPath;

use super::grid::{Cell, MAX_CELLS, NavGrid};

/// A malformed or unreadable MovingAI file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// 1-based line number the problem is on (0 when the file could not be
    /// read at all).
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl ParseError {
    fn new(line: usize, message: impl Into<String>) -> Self {
        Self {
            line,
            message: message.into(),
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}", self.message)
        } else {
            write!(f, "line {}: {}", self.line, self.message)
        }
    }
}

impl std::error::Error for ParseError {}

/// A MovingAI map: its size and one terrain character per cell, row 0 at
/// the top as in the file. Built by the parser or by [`MovingAiMap::new`],
/// both of which check that the terrain fills the map exactly.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MovingAiMap {
    width: u32,
    height: u32,
    terrain: Vec<u8>,
}

/// Terrain characters a MovingAI map may contain: passable `.` `G` `S`,
/// blocked `@` `O` `T` `W`.
pub const TERRAIN_CHARS: &[u8] = b".GS@OTW";

/// The benchmark rule: `.`, `G` and `S` are plain ground (cost 1), the rest
/// are walls.
pub fn benchmark_cost(terrain: u8) -> u8 {
    match terrain {
        b'.' | b'G' | b'S' => 1,
        _ => NavGrid::BLOCKED,
    }
}

impl MovingAiMap {
    /// A map of `width × height` cells from their terrain characters, row by
    /// row (`y × width + x`). An error when the size is empty or too large,
    /// or the terrain does not have exactly one character per cell.
    pub fn new(width: u32, height: u32, terrain: Vec<u8>) -> Result<Self, ParseError> {
        let cells = width as u64 * height as u64;
        if width == 0 || height == 0 || cells > MAX_CELLS {
            return Err(ParseError::new(
                0,
                format!("a {width}×{height} map is empty or too large"),
            ));
        }
        if terrain.len() as u64 != cells {
            return Err(ParseError::new(
                0,
                format!(
                    "a {width}×{height} map needs {cells} terrain characters, got {}",
                    terrain.len()
                ),
            ));
        }
        Ok(Self {
            width,
            height,
            terrain,
        })
    }

    /// Columns.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Rows.
    pub fn height(&self) -> u32 {
        self.height
    }

    /// Terrain characters, row by row (`y × width + x`).
    pub fn terrain(&self) -> &[u8] {
        &self.terrain
    }

    /// Parses the text of a `.map` file.
    pub fn parse(text: &str) -> Result<Self, ParseError> {
        Self::parse_with(text, TERRAIN_CHARS)
    }

    /// Parses a `.map` file that may also use the extra terrain characters
    /// in `allowed` (for maps with terrain costs of a game's own).
    pub fn parse_with(text: &str, allowed: &[u8]) -> Result<Self, ParseError> {
        let end = text.lines().count() + 1;
        let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
        let mut next_line = |what: &str| {
            lines
                .next()
                .ok_or_else(|| ParseError::new(end, format!("file ends before {what}")))
        };

        let (n, line) = next_line("the `type` line")?;
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.first() != Some(&"type") || fields.len() != 2 {
            return Err(ParseError::new(n, "expected `type octile`"));
        }
        let height = header_number(next_line("the `height` line")?, "height")?;
        let width = header_number(next_line("the `width` line")?, "width")?;
        let (n, line) = next_line("the `map` line")?;
        if line.trim() != "map" {
            return Err(ParseError::new(n, "expected `map`"));
        }
        let cells = width as u64 * height as u64;
        if width == 0 || height == 0 || cells > MAX_CELLS {
            return Err(ParseError::new(
                n,
                format!("a {width}×{height} map is empty or too large"),
            ));
        }
        let mut terrain = Vec::with_capacity(cells as usize);
        for row in 0..height {
            let (n, line) = next_line(&format!("map row {} of {height}", row + 1))?;
            let line = line.as_bytes();
            if line.len() != width as usize {
                return Err(ParseError::new(
                    n,
                    format!("row has {} cells, expected {width}", line.len()),
                ));
            }
            if let Some(col) = line.iter().position(|c| !allowed.contains(c)) {
                return Err(ParseError::new(
                    n,
                    format!(
                        "unknown terrain {:?} at column {}",
                        char::from(line[col]),
                        col + 1
                    ),
                ));
            }
            terrain.extend_from_slice(line);
        }
        if let Some((n, _)) = lines.find(|(_, l)| !l.trim().is_empty()) {
            return Err(ParseError::new(
                n,
                format!("text after the {height} map rows"),
            ));
        }
        Ok(Self {
            width,
            height,
            terrain,
        })
    }

    /// Reads and parses a `.map` file.
    pub fn load(path: impl AsRef<FsPath>) -> Result<Self, ParseError> {
        Self::parse(&read(path.as_ref())?)
    }

    /// The terrain character at `cell`.
    pub fn terrain_at(&self, cell: Cell) -> Option<u8> {
        (cell.x < self.width && cell.y < self.height)
            .then(|| self.terrain[(cell.y * self.width + cell.x) as usize])
    }

    /// A [`NavGrid`] with the benchmark rule ([`benchmark_cost`]).
    pub fn to_nav_grid(&self) -> NavGrid {
        self.to_nav_grid_with(benchmark_cost)
    }

    /// A [`NavGrid`] with a cost of your own for each terrain character.
    pub fn to_nav_grid_with(&self, cost: impl Fn(u8) -> u8) -> NavGrid {
        let costs = self.terrain.iter().map(|&t| cost(t)).collect();
        NavGrid::from_costs(self.width, self.height, costs)
            .expect("the constructors checked the size and cell count")
    }
}

fn read(path: &FsPath) -> Result<String, ParseError> {
    std::fs::read_to_string(path)
        .map_err(|e| ParseError::new(0, format!("cannot read {}: {e}", path.display())))
}

fn header_number((n, line): (usize, &str), key: &str) -> Result<u32, ParseError> {
    let mut fields = line.split_whitespace();
    match (fields.next(), fields.next(), fields.next()) {
        (Some(k), Some(value), None) if k == key => value
            .parse()
            .map_err(|_| ParseError::new(n, format!("`{key}` is not a number: {value:?}"))),
        _ => Err(ParseError::new(n, format!("expected `{key} N`"))),
    }
}

/// One benchmark problem from a `.scen` file.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    /// Difficulty bucket.
    pub bucket: u32,
    /// Map file name as written in the scenario file.
    pub map: String,
    /// Map width.
    pub width: u32,
    /// Map height.
    pub height: u32,
    /// Start cell.
    pub start: Cell,
    /// Goal cell.
    pub goal: Cell,
    /// Optimal path length (octile moves, no corner cutting).
    pub optimal_length: f64,
}

impl Scenario {
    /// Whether `cost` matches the optimal length within the precision the
    /// files are printed to: `1e-5 × optimal + 0.006`.
    pub fn matches(&self, cost: f64) -> bool {
        (cost - self.optimal_length).abs() <= 1e-5 * self.optimal_length + 0.006
    }

    /// Parses the text of a `.scen` file.
    pub fn parse_all(text: &str) -> Result<Vec<Scenario>, ParseError> {
        let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
        match lines.next() {
            Some((_, l))
                if matches!(
                    l.split_whitespace().collect::<Vec<_>>()[..],
                    ["version", "1" | "1.0"]
                ) => {}
            Some((n, l)) => {
                return Err(ParseError::new(
                    n,
                    format!("expected `version 1`, found {:?}", l.trim()),
                ));
            }
            None => return Err(ParseError::new(1, "empty scenario file")),
        }
        lines
            .filter(|(_, l)| !l.trim().is_empty())
            .map(|(n, l)| Self::parse_line(n, l))
            .collect()
    }

    /// Reads and parses a `.scen` file.
    pub fn load_all(path: impl AsRef<FsPath>) -> Result<Vec<Scenario>, ParseError> {
        Self::parse_all(&read(path.as_ref())?)
    }

    fn parse_line(n: usize, line: &str) -> Result<Scenario, ParseError> {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.len() != 9 {
            return Err(ParseError::new(
                n,
                format!("expected 9 fields, found {}", fields.len()),
            ));
        }
        let int = |i: usize, what: &str| -> Result<u32, ParseError> {
            fields[i]
                .parse()
                .map_err(|_| ParseError::new(n, format!("{what} is not a number: {:?}", fields[i])))
        };
        let optimal_length: f64 = fields[8].parse().map_err(|_| {
            ParseError::new(
                n,
                format!("optimal length is not a number: {:?}", fields[8]),
            )
        })?;
        if !optimal_length.is_finite() || optimal_length < 0.0 {
            return Err(ParseError::new(
                n,
                format!("optimal length {optimal_length} is not a finite length"),
            ));
        }
        Ok(Scenario {
            bucket: int(0, "bucket")?,
            map: fields[1].to_string(),
            width: int(2, "map width")?,
            height: int(3, "map height")?,
            start: Cell::new(int(4, "start x")?, int(5, "start y")?),
            goal: Cell::new(int(6, "goal x")?, int(7, "goal y")?),
            optimal_length,
        })
    }
}
