//! The board: tiles, spawn points, the text form of hand-made maps (`#`, `+`, `.`, spawn digits)
//! and its strict parser whose errors name the line and the reason.

use thiserror::Error;

/// What a cell holds, ignoring players, bombs and flames.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Tile {
    Empty,
    Box,
    Wall,
}

impl Tile {
    /// The character drawn for this tile.
    pub fn to_char(self) -> char {
        match self {
            Tile::Empty => '.',
            Tile::Box => '+',
            Tile::Wall => '#',
        }
    }
}

/// A square board with its spawn points (index = player id).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Map {
    pub side: usize,
    /// Row-major: the tile at (x, y) is `tiles[y * side + x]`.
    pub tiles: Vec<Tile>,
    pub spawns: Vec<(u16, u16)>,
}

/// Why a hand-made map was refused. Lines and columns count from 1.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum MapError {
    #[error("the map is empty")]
    Empty,
    #[error("line {line} has {len} characters but the map has {rows} lines; a map must be square")]
    NotSquare {
        line: usize,
        len: usize,
        rows: usize,
    },
    #[error(
        "line {line}, column {col}: character {ch:?} is not one of '#', '+', '.' or a spawn digit"
    )]
    BadChar { line: usize, col: usize, ch: char },
    #[error("line {line}, column {col}: the outer wall is open ({ch:?} where '#' is required)")]
    OpenWall { line: usize, col: usize, ch: char },
    #[error(
        "line {line}, column {col}: spawn digit {digit} appears again (first on line {first_line})"
    )]
    DuplicateSpawn {
        line: usize,
        col: usize,
        digit: u8,
        first_line: usize,
    },
    #[error("spawn digit {digit} is missing: with {found} spawn digits they must be 0..{last}")]
    MissingSpawn {
        digit: u8,
        found: usize,
        last: usize,
    },
    #[error("only {found} spawn digit(s) found: a map needs at least 2 players")]
    TooFewPlayers { found: usize },
    #[error("the map is {side}x{side}: a map needs at least 5x5 cells")]
    TooSmall { side: usize },
}

impl Map {
    /// The tile at (x, y).
    pub fn tile(&self, x: usize, y: usize) -> Tile {
        self.tiles[y * self.side + x]
    }

    /// The board rows (`#`, `+`, `.`) without the spawn digits.
    pub fn rows(&self) -> Vec<String> {
        self.tiles
            .chunks(self.side)
            .map(|row| row.iter().map(|t| t.to_char()).collect())
            .collect()
    }

    /// The hand-made map text (inverse of [`parse_map`]): rows with the spawn digits drawn.
    pub fn to_text(&self) -> String {
        let mut grid: Vec<Vec<char>> = self
            .rows()
            .into_iter()
            .map(|r| r.chars().collect())
            .collect();
        for (i, &(x, y)) in self.spawns.iter().enumerate().rev() {
            if let Some(c) = char::from_digit(i as u32, 10) {
                grid[y as usize][x as usize] = c;
            }
        }
        let mut out = String::with_capacity(self.side * (self.side + 1));
        for row in grid {
            out.extend(row);
            out.push('\n');
        }
        out
    }

    /// Builds a map from plain rows (`#`, `+`, `.`) and spawn points, as stored in a replay.
    pub fn from_rows(rows: &[String], spawns: &[(u16, u16)]) -> Result<Map, MapError> {
        let mut text = String::new();
        for r in rows {
            text.push_str(r);
            text.push('\n');
        }
        let mut map = parse_board(&text, false)?;
        map.spawns = spawns.to_vec();
        Ok(map)
    }
}

/// Parses a hand-made map: square, closed outer wall of `#`, cells `#` `+` `.`, and the spawn
/// digits 0..n-1 (2 <= n <= 10) each exactly once on an empty cell. LF or CRLF line ends.
pub fn parse_map(text: &str) -> Result<Map, MapError> {
    parse_board(text, true)
}

fn parse_board(text: &str, want_spawns: bool) -> Result<Map, MapError> {
    let body = text.strip_suffix('\n').unwrap_or(text);
    if body.trim().is_empty() {
        return Err(MapError::Empty);
    }
    let lines: Vec<&str> = body
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    let side = lines.len();
    let mut tiles = Vec::with_capacity(side * side);
    let mut spawn_at: [Option<(u16, u16, usize)>; 10] = [None; 10];
    for (y, line) in lines.iter().enumerate() {
        let len = line.chars().count();
        if len != side {
            return Err(MapError::NotSquare {
                line: y + 1,
                len,
                rows: side,
            });
        }
        for (x, ch) in line.chars().enumerate() {
            let (line_no, col) = (y + 1, x + 1);
            let tile = match ch {
                '#' => Tile::Wall,
                '+' => Tile::Box,
                '.' => Tile::Empty,
                '0'..='9' if want_spawns => {
                    let d = ch as u8 - b'0';
                    if let Some((_, _, first_line)) = spawn_at[d as usize] {
                        return Err(MapError::DuplicateSpawn {
                            line: line_no,
                            col,
                            digit: d,
                            first_line,
                        });
                    }
                    spawn_at[d as usize] = Some((x as u16, y as u16, line_no));
                    Tile::Empty
                }
                _ => {
                    return Err(MapError::BadChar {
                        line: line_no,
                        col,
                        ch,
                    })
                }
            };
            let border = x == 0 || y == 0 || x + 1 == side || y + 1 == side;
            if border && tile != Tile::Wall {
                return Err(MapError::OpenWall {
                    line: line_no,
                    col,
                    ch,
                });
            }
            tiles.push(tile);
        }
    }
    if side < 5 {
        return Err(MapError::TooSmall { side });
    }
    let mut spawns = Vec::new();
    if want_spawns {
        let found = spawn_at.iter().filter(|s| s.is_some()).count();
        if found < 2 {
            return Err(MapError::TooFewPlayers { found });
        }
        for (d, s) in spawn_at.iter().take(found).enumerate() {
            match s {
                Some((x, y, _)) => spawns.push((*x, *y)),
                None => {
                    return Err(MapError::MissingSpawn {
                        digit: d as u8,
                        found,
                        last: found - 1,
                    })
                }
            }
        }
    }
    Ok(Map {
        side,
        tiles,
        spawns,
    })
}
