//! The text form round-trips exactly and reports errors with line and column.

use rpt_ir::parse::{parse_function, parse_program};
use rpt_ir::verify::verify_program;

const SAMPLE: &str = include_str!("data/sample.rir");

#[test]
fn sample_parses_and_verifies() {
    let program = parse_program(SAMPLE).expect("sample parses");
    assert_eq!(program.functions.len(), 2);
    assert_eq!(program.state.len(), 10);
    verify_program(&program).expect("sample verifies");
}

#[test]
fn print_then_parse_gives_the_same_program() {
    let program = parse_program(SAMPLE).expect("sample parses");
    let printed = program.to_string();
    let reparsed = parse_program(&printed).expect("printed text parses");
    assert_eq!(reparsed, program);
    assert_eq!(reparsed.to_string(), printed, "printing is a fixed point");
}

#[test]
fn printed_text_matches_the_source_apart_from_comments() {
    let program = parse_program(SAMPLE).expect("sample parses");
    let without_comments: String = SAMPLE
        .lines()
        .filter(|l| !l.trim_start().starts_with(';'))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(program.to_string(), without_comments);
}

#[test]
fn values_defined_out_of_numeric_order_round_trip() {
    let program = parse_program(SAMPLE).expect("sample parses");
    let text = "function f_00000010 {\nblock0:\n    v5: i32 = iconst 0x1\n    jump block1(v5)\nblock1(v2: i32):\n    return\n}\n";
    let func = parse_function(text, &program.state).expect("parses");
    let mut printed = String::new();
    rpt_ir::print::write_function(&mut printed, &func, &program.state).expect("prints");
    assert_eq!(printed, text);
}

/// Programs that must not parse: the text, the line and (where it is certain) the column the
/// error names, and what the message says.
const MALFORMED: &[(&str, usize, Option<usize>, &str)] = &[
    (
        "state {\n    eax: i32 gpr\n}\nfunction f_00000001 {\nblock0:\n    v0: i32 = get %ebx\n    return\n}\n",
        6,
        Some(19),
        "unknown state slot `%ebx`",
    ),
    (
        "function f_00000001 {\nblock0:\n    v0: i33 = iconst 0x1\n    return\n}\n",
        3,
        Some(9),
        "unknown type `i33`",
    ),
    (
        "function f_00000001 {\nblock0:\n    v0: i8 = iconst 0x100\n    return\n}\n",
        3,
        Some(21),
        "does not fit",
    ),
    (
        "function f_00000001 {\nblock0:\n    v0: i8 = iconst 0x1\n}\n",
        4,
        None,
        "no terminator",
    ),
    (
        "function f_00000001 {\nblock0:\n    v0: i32 = frobnicate v1\n    return\n}\n",
        3,
        Some(15),
        "unknown instruction `frobnicate`",
    ),
    (
        "function f_00000001 {\nblock0:\n    v0: i32 = iconst 0x1\n    v0: i32 = iconst 0x2\n    return\n}\n",
        4,
        Some(25),
        "defined twice",
    ),
    (
        "function f_00000001 {\nblock0:\n    v0: f64 = fadd v1, v2\n    return\n}\n",
        3,
        Some(15),
        "rounding suffix",
    ),
];

#[test]
fn errors_name_line_and_column() {
    for &(text, line, column, needle) in MALFORMED {
        let e = parse_program(text).expect_err("must not parse");
        assert_eq!(e.line, line, "{}", e.message);
        if let Some(column) = column {
            assert_eq!(e.column, column, "{}", e.message);
        }
        assert!(e.message.contains(needle), "{}", e.message);
    }
}
