//! The verifier accepts well-formed IR and names the place of every problem.

use rpt_ir::parse::parse_program;
use rpt_ir::verify::{VerifyError, verify_program};

fn problems(body: &str) -> Vec<VerifyError> {
    let text =
        format!("state {{\n    eax: i32 gpr\n    zf: i1 flag\n    st: f64[8] fpr\n}}\nhelper @h(i32) -> i32\n{body}");
    let program = parse_program(&text).expect("test text parses");
    match verify_program(&program) {
        Ok(()) => Vec::new(),
        Err(e) => e.0,
    }
}

fn single(body: &str) -> String {
    let errors = problems(body);
    assert_eq!(errors.len(), 1, "expected one problem, got {errors:?}");
    errors[0].to_string()
}

#[test]
fn well_formed_functions_pass() {
    let errors = problems(
        "function f_00000010 {\nblock0:\n    v0: i32 = get %eax\n    v1: i32 = call_helper @h(v0)\n    v2: i1 = icmp eq v0, v1\n    br v2, block1(v0), block1(v1)\nblock1(v3: i32):\n    set %eax, v3\n    return\n}\n",
    );
    assert!(errors.is_empty(), "{errors:?}");
}

#[test]
fn type_mismatches_are_reported_with_place() {
    let msg = single(
        "function f_00000010 {\nblock0:\n    v0: i32 = get %eax\n    v1: i1 = get %zf\n    v2: i32 = add v0, v1\n    return\n}\n",
    );
    assert!(msg.starts_with("f_00000010 block0 inst 2:"), "{msg}");
    assert!(msg.contains("differ in type"), "{msg}");
}

#[test]
fn wrong_result_type_is_reported() {
    let msg =
        single("function f_00000010 {\nblock0:\n    v0: i32 = get %eax\n    v1: i8 = add v0, v0\n    return\n}\n");
    assert!(msg.contains("declared i8 but the operation produces i32"), "{msg}");
}

#[test]
fn use_before_definition_is_reported() {
    let msg = single(
        "function f_00000010 {\nblock0:\n    v0: i32 = get %eax\n    br v2, block1, block2\nblock1:\n    v1: i1 = get %zf\n    jump block2\nblock2:\n    v2: i1 = get %zf\n    return\n}\n",
    );
    assert!(
        msg.contains("v2 is used where its definition does not dominate"),
        "{msg}"
    );
}

#[test]
fn value_not_dominating_its_use_across_blocks() {
    let msg = single(
        "function f_00000010 {\nblock0:\n    v0: i1 = get %zf\n    br v0, block1, block2\nblock1:\n    v1: i32 = get %eax\n    jump block2\nblock2:\n    set %eax, v1\n    return\n}\n",
    );
    assert!(msg.starts_with("f_00000010 block2 inst 0"), "{msg}");
    assert!(msg.contains("does not dominate"), "{msg}");
}

#[test]
fn block_arguments_must_match_parameters() {
    let msg = single(
        "function f_00000010 {\nblock0:\n    v0: i32 = get %eax\n    jump block1\nblock1(v1: i32):\n    return\n}\n",
    );
    assert!(msg.contains("block1 takes 1 arguments but is given 0"), "{msg}");
    let msg = single(
        "function f_00000010 {\nblock0:\n    v0: i1 = get %zf\n    jump block1(v0)\nblock1(v1: i32):\n    return\n}\n",
    );
    assert!(
        msg.contains("argument v0: i1 passed to block1 parameter v1: i32"),
        "{msg}"
    );
}

#[test]
fn slots_are_checked() {
    let msg = single("function f_00000010 {\nblock0:\n    v0: f64 = get %st\n    return\n}\n");
    assert!(msg.contains("slot %st is an array and needs an index"), "{msg}");
    let msg = single("function f_00000010 {\nblock0:\n    v0: i1 = get %zf\n    set %eax, v0\n    return\n}\n");
    assert!(msg.contains("stored value v0 is i1, expected i32"), "{msg}");
}

#[test]
fn calls_are_checked_against_the_program() {
    let msg = single("function f_00000010 {\nblock0:\n    call f_00000020, block1\nblock1:\n    return\n}\n");
    assert!(
        msg.contains("call to f_00000020 which is neither a function nor an extern"),
        "{msg}"
    );
    let msg = single(
        "function f_00000010 {\nblock0:\n    v0: i32 = get %eax\n    v1: i32 = call_helper @nope(v0)\n    return\n}\n",
    );
    assert!(msg.contains("undeclared helper @nope"), "{msg}");
    let msg = single(
        "function f_00000010 {\nblock0:\n    v0: i1 = get %zf\n    v1: i32 = call_helper @h(v0)\n    return\n}\n",
    );
    assert!(msg.contains("helper argument v0 is i1, expected i32"), "{msg}");
}

#[test]
fn conversions_are_checked() {
    let msg = single("function f_00000010 {\nblock0:\n    v0: i32 = get %eax\n    v1: i16 = zext v0\n    return\n}\n");
    assert!(msg.contains("zext from i32 to i16 is not allowed"), "{msg}");
}
