//! Unit tests of the folding rules on small IR functions written in the text form.

use rpt_ir::parse::parse_function;
use rpt_ir::print::function_to_string;
use rpt_ir::{Slot, SlotLayout, SlotRole, StateDesc, Type};

use super::*;

fn state() -> StateDesc {
    let mut state = StateDesc::new();
    for name in ["eax", "ecx"] {
        state
            .add(Slot {
                name: name.into(),
                ty: Type::I32,
                role: SlotRole::Gpr,
                layout: SlotLayout::Plain,
            })
            .expect("slot");
    }
    state
}

fn folded(text: &str, forward_slots: bool) -> (String, usize) {
    let state = state();
    let mut func = parse_function(text, &state).expect("parses");
    let count = fold(&mut func, &state, forward_slots);
    (function_to_string(&func, &state), count)
}

const MOV_THEN_CMP: &str = "function f_00001000 {
block0:
    v0: i32 = iconst 0x5
    set %eax, v0
    v1: i32 = get %eax
    v2: i32 = iconst 0x3
    v3: i32 = add v1, v2
    v4: i1 = icmp ult v3, v2
    set %ecx, v3
    return
}
";

#[test]
fn a_constant_flows_through_a_slot_into_arithmetic_and_a_comparison() {
    let (text, count) = folded(MOV_THEN_CMP, true);
    assert_eq!(count, 3, "{text}");
    assert!(text.contains("v1: i32 = iconst 0x5"), "{text}");
    assert!(text.contains("v3: i32 = iconst 0x8"), "{text}");
    assert!(text.contains("v4: i1 = iconst 0x0"), "{text}");
}

#[test]
fn without_slot_forwarding_only_constant_operands_fold() {
    let (text, count) = folded(MOV_THEN_CMP, false);
    assert_eq!(count, 0, "{text}");
}

#[test]
fn a_helper_call_forgets_what_slots_held() {
    let text = "function f_00001000 {
block0:
    v0: i32 = iconst 0x5
    set %eax, v0
    call_helper @clobber()
    v1: i32 = get %eax
    return
}
";
    let state = state();
    // The helper is not declared, which parsing a lone function does not check.
    let mut func = parse_function(text, &state).expect("parses");
    assert_eq!(fold(&mut func, &state, true), 0);
}

#[test]
fn arithmetic_wraps_at_the_type_width() {
    assert_eq!(binary(BinaryOp::Add, 0xffff_ffff, 1, Type::I32), Some(0));
    assert_eq!(binary(BinaryOp::Ashr, 0x8000_0000, 4, Type::I32), Some(0xf800_0000));
    assert_eq!(binary(BinaryOp::Rotl, 0x8000_0001, 1, Type::I32), Some(3));
    assert_eq!(binary(BinaryOp::Shl, 1, 33, Type::I32), Some(2));
    assert_eq!(binary(BinaryOp::Udiv, 6, 3, Type::I32), None);
    assert_eq!(compare(IntCC::Slt, 0xffff_ffff, 0, Type::I32), Some(true));
    assert_eq!(compare(IntCC::Ult, 0xffff_ffff, 0, Type::I32), Some(false));
    assert_eq!(convert(ConvOp::Sext, 0x80, Type::I8, Type::I32), Some(0xffff_ff80));
    assert_eq!(unary(UnaryOp::Neg, 1, Type::I16), Some(0xffff));
}

#[test]
fn parameters_are_checked() {
    let mut params = PassParams::new();
    params.insert("slots".into(), ParamValue::Bool(false));
    assert_eq!(FoldConstants.check_params(&params), Ok(()));
    params.insert("slot".into(), ParamValue::Bool(false));
    assert!(FoldConstants.check_params(&params).is_err());
}
