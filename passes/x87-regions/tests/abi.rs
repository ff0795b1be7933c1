//! The pass repeats the x86 guest's x87 helper names and operation numbers (a pass depends on the
//! IR and the plugin API only); these tests hold the two copies together.

use std::collections::BTreeMap;

use rpt_guest_x86_pe::x87::{Kind, helper, op};
use rpt_ir::{Inst, InstKind, Value};
use rpt_pass_x87_regions::abi::{self, Op};

/// A helper call whose arguments are values 0, 1, 2, ... holding `constants`.
fn recognize(name: &str, constants: &[u64]) -> Option<Op> {
    let inst = Inst {
        result: Some(Value(100)),
        kind: InstKind::CallHelper {
            helper: name.to_string(),
            args: (0..constants.len() as u32).map(Value).collect(),
        },
    };
    let table: BTreeMap<Value, u64> = constants
        .iter()
        .enumerate()
        .map(|(i, c)| (Value(i as u32), *c))
        .collect();
    Op::recognize(&inst, &|v| table.get(&v).copied())
}

#[test]
fn every_helper_the_pass_names_is_the_guests() {
    let guest: Vec<String> = rpt_guest_x86_pe::x87::helpers().into_iter().map(|h| h.name).collect();
    for name in abi::helper::STACK_FORMS.iter().chain(abi::helper::VALUE_FORMS.iter()) {
        assert!(
            guest.iter().any(|g| g == name),
            "{name} is not a helper of the x86 guest"
        );
    }
    assert_eq!(
        guest.len(),
        abi::helper::STACK_FORMS.len() + abi::helper::VALUE_FORMS.len()
    );
    for (ours, theirs) in [
        (abi::helper::VLOAD, helper::VLOAD),
        (abi::helper::VSTORE, helper::VSTORE),
        (abi::helper::VARITH, helper::VARITH),
        (abi::helper::VARITH_MEM, helper::VARITH_MEM),
        (abi::helper::VCOM, helper::VCOM),
        (abi::helper::VCOM_MEM, helper::VCOM_MEM),
        (abi::helper::VUNARY, helper::VUNARY),
        (abi::helper::VCONST, helper::VCONST),
    ] {
        assert_eq!(ours, theirs);
    }
}

#[test]
fn the_pass_reads_operation_numbers_as_the_guest_writes_them() {
    let k = |kind: Kind| kind as u64;
    let o = u64::from;
    for which in [op::ADD, op::MUL, op::SUB, op::SUBR, op::DIV, op::DIVR] {
        assert!(matches!(
            recognize(helper::ARITH, &[o(which), 1, 0, 1]),
            Some(Op::Arith { op, dst: 1, src: 0, pop: true }) if op == which
        ));
    }
    assert_eq!(recognize(helper::REG, &[o(op::FLD), 3]), Some(Op::LoadReg { i: 3 }));
    assert_eq!(
        recognize(helper::REG, &[o(op::FST), 2]),
        Some(Op::StoreReg { i: 2, pop: false })
    );
    assert_eq!(
        recognize(helper::REG, &[o(op::FSTP), 2]),
        Some(Op::StoreReg { i: 2, pop: true })
    );
    assert_eq!(recognize(helper::REG, &[o(op::FXCH), 1]), Some(Op::Xch { i: 1 }));
    assert_eq!(
        recognize(helper::REG, &[o(op::FCOMI) + 1, 1]),
        Some(Op::Com {
            which: op::FCOMI,
            i: 1,
            pops: 1
        })
    );
    assert_eq!(recognize(helper::REG, &[o(op::FFREE), 1]), None, "ffree ends a region");
    for unary in [op::FCHS, op::FABS, op::FSQRT, op::FRNDINT] {
        assert_eq!(recognize(helper::OP, &[o(unary)]), Some(Op::Unary { op: unary }));
    }
    for constant in [
        op::FLD1,
        op::FLDZ,
        op::FLDPI,
        op::FLDL2E,
        op::FLDL2T,
        op::FLDLG2,
        op::FLDLN2,
    ] {
        assert_eq!(recognize(helper::OP, &[o(constant)]), Some(Op::Const { op: constant }));
    }
    assert_eq!(
        recognize(helper::OP, &[o(op::FUCOMPP)]),
        Some(Op::Com {
            which: op::FCOM + 2,
            i: 1,
            pops: 2
        })
    );
    for kept_out in [op::FSIN, op::FPREM, op::FXAM, op::FNINIT, op::FINCSTP] {
        assert_eq!(recognize(helper::OP, &[o(kept_out)]), None);
    }
    assert!(matches!(
        recognize(helper::STORE, &[k(Kind::I32), o(op::STORE_POP | op::STORE_TRUNCATE)]),
        Some(Op::Store { kind: 4, flags, pop: true, .. }) if flags == op::STORE_TRUNCATE
    ));
    assert_eq!(
        recognize(helper::STORE, &[k(Kind::F80), o(op::STORE_HIGH)]),
        None,
        "f80 stores end a region"
    );
    assert!(matches!(
        recognize(helper::LOAD, &[k(Kind::F80), 7, 8]),
        Some(Op::Load { kind: 2, .. })
    ));
}

#[test]
fn the_quiet_bit_is_the_guests() {
    assert_eq!(abi::QUIET, op::QUIET);
}
