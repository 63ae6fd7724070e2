//! What a bot reads: the INIT line and the TURN block, exactly.

mod common;
use common::*;

#[test]
fn init_line_lists_the_params_in_order() {
    let g = board("#######\n#0....#\n#.....#\n#.....#\n#.....#\n#....1#\n#######\n");
    assert_eq!(g.init_line(1), "INIT 7 2 1 300 4 3 2 2 150 20\n");
}

#[test]
fn turn_block_after_an_explosion_and_a_kill() {
    let text = "\
#######
#.....#
#.....#
#0.2.1#
#.....#
#....+#
#######
";
    let mut g = board(text);
    g.step(&inputs("U1 U1 S0"));
    g.step(&inputs("R0 L0 S0"));
    g.step(&inputs("S0 S0 S0"));
    g.step(&inputs("S1 S0 S0")); // 0 places a second bomb at (2,2), due on 7
    g.step(&inputs("S0 S0 S0")); // turn 4: 2 dies (killers 0 and 1), 1 breaks the box
    let want = "\
TURN 5
BOARD
#######
#.....#
#.....#
#.....#
#.....#
#.....#
#######
P 0 2 2 1
P 1 4 2 1
P 2 3 3 0
BOMBS 1
B 0 2 2 7
FLAMES 13
F 1 1 5
F 5 1 5
F 1 2 5
F 5 2 5
F 1 3 5
F 2 3 5
F 3 3 5
F 4 3 5
F 5 3 5
F 1 4 5
F 5 4 5
F 1 5 5
F 5 5 5
STATUS 3
S 0 -1 1 2
S 1 -1 1 2
S 2 4 0 1
SOURCES 16
O 1 1 0 5
O 5 1 1 5
O 1 2 0 5
O 5 2 1 5
O 1 3 0 5
O 2 3 0 5
O 2 3 1 5
O 3 3 0 5
O 3 3 1 5
O 4 3 0 5
O 4 3 1 5
O 5 3 1 5
O 1 4 0 5
O 5 4 1 5
O 1 5 0 5
O 5 5 1 5
END
";
    assert_eq!(g.turn_text(), want);
}
