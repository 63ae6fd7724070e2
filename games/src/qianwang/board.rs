//! The 4×4 钳王 board: sides, cells stored column-major as `cells[x][y]` with (0,0) bottom-left,
//! and moves as `{"from":[x,y],"to":[x,y]}` — the same shapes a JavaScript bot sees.

use serde::{Deserialize, Serialize};

/// Width and height of the board.
pub const SIZE: u8 = 4;

/// One of the two sides; black moves first. JSON: `"black"` / `"red"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    Black,
    Red,
}

impl Side {
    /// The opponent.
    pub fn other(self) -> Side {
        match self {
            Side::Black => Side::Red,
            Side::Red => Side::Black,
        }
    }

    /// `"black"` or `"red"`, as in JSON and in the JS API.
    pub fn as_str(self) -> &'static str {
        match self {
            Side::Black => "black",
            Side::Red => "red",
        }
    }

    /// 0 for black, 1 for red (index into per-side arrays).
    pub fn index(self) -> usize {
        match self {
            Side::Black => 0,
            Side::Red => 1,
        }
    }
}

impl std::fmt::Display for Side {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Black's starting points (GUIDE.md 初始布局).
pub const INITIAL_BLACK: [[u8; 2]; 6] = [[0, 3], [1, 3], [2, 3], [3, 3], [0, 2], [3, 2]];
/// Red's starting points (GUIDE.md 初始布局).
pub const INITIAL_RED: [[u8; 2]; 6] = [[0, 0], [1, 0], [2, 0], [3, 0], [0, 1], [3, 1]];

/// The board, column-major: `cells[x][y]`, x = column (left to right), y = row (bottom to top).
/// JSON: exactly that nested array, e.g. `[["red","red",null,"black"], ...]` (index it `[x][y]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Board {
    cells: [[Option<Side>; 4]; 4],
}

impl Default for Board {
    fn default() -> Self {
        Board::empty()
    }
}

impl Board {
    /// A board with no pieces.
    pub fn empty() -> Board {
        Board {
            cells: [[None; 4]; 4],
        }
    }

    /// The guide's starting position: six pieces each, the four centre points empty.
    pub fn initial() -> Board {
        let mut b = Board::empty();
        for [x, y] in INITIAL_BLACK {
            b.cells[x as usize][y as usize] = Some(Side::Black);
        }
        for [x, y] in INITIAL_RED {
            b.cells[x as usize][y as usize] = Some(Side::Red);
        }
        b
    }

    /// A board from raw column-major cells (`cells[x][y]`). Any contents are accepted.
    pub fn from_cells(cells: [[Option<Side>; 4]; 4]) -> Board {
        Board { cells }
    }

    /// The raw column-major cells (`cells[x][y]`).
    pub fn cells(&self) -> &[[Option<Side>; 4]; 4] {
        &self.cells
    }

    /// The piece at (x, y); `None` when empty or off the board.
    pub fn get(&self, x: u8, y: u8) -> Option<Side> {
        if x < SIZE && y < SIZE {
            self.cells[x as usize][y as usize]
        } else {
            None
        }
    }

    /// Puts `cell` at (x, y). Panics if (x, y) is off the board (a programming error, never input:
    /// validate coordinates with [`on_board`] first).
    pub fn set(&mut self, x: u8, y: u8, cell: Option<Side>) {
        assert!(on_board([x, y]), "({x},{y}) is off the 4x4 board");
        self.cells[x as usize][y as usize] = cell;
    }

    /// How many pieces `side` has.
    pub fn count(&self, side: Side) -> u32 {
        self.cells
            .iter()
            .flatten()
            .filter(|c| **c == Some(side))
            .count() as u32
    }

    /// The points of `side`'s pieces in column-major order (x ascending, then y ascending).
    pub fn pieces(&self, side: Side) -> Vec<[u8; 2]> {
        let mut out = Vec::new();
        for x in 0..SIZE {
            for y in 0..SIZE {
                if self.get(x, y) == Some(side) {
                    out.push([x, y]);
                }
            }
        }
        out
    }

    /// A picture of the board, top row first: `B` black, `R` red, `.` empty (for messages/tests).
    pub fn to_ascii(&self) -> String {
        let mut s = String::new();
        for y in (0..SIZE).rev() {
            for x in 0..SIZE {
                s.push(match self.get(x, y) {
                    Some(Side::Black) => 'B',
                    Some(Side::Red) => 'R',
                    None => '.',
                });
            }
            s.push('\n');
        }
        s
    }
}

/// Whether `p` is a point of the 4×4 board.
pub fn on_board(p: [u8; 2]) -> bool {
    p[0] < SIZE && p[1] < SIZE
}

/// One step of a piece. JSON: `{"from":[x,y],"to":[x,y]}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Move {
    pub from: [u8; 2],
    pub to: [u8; 2],
}

impl Move {
    pub fn new(from: [u8; 2], to: [u8; 2]) -> Move {
        Move { from, to }
    }
}

impl std::fmt::Display for Move {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "({},{})->({},{})",
            self.from[0], self.from[1], self.to[0], self.to[1]
        )
    }
}
