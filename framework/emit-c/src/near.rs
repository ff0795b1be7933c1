//! Near addresses: guest addresses written as a base plus a constant, which a load or store can
//! use without masking (`rpt_load_u32_be_near(mb, base, disp)`, docs/c-abi.md "Guest memory").
//!
//! A 32-bit guest address computed as `base + disp` wraps at 4 GiB, so the emitted access used to
//! be `mb + (uint32_t)(base + disp)`: on x86-64 a 32-bit `lea` to wrap the sum, then the access,
//! where the host could use one `mov disp(%mb,%base)`. The runtime maps the last quarter of the
//! guest space again just below it and the first quarter again just above it, so the 64-bit sum
//! of the zero-extended base and the sign-extended displacement reaches the byte the guest means
//! whether or not the 32-bit sum wraps, and clang folds the displacement into the access.
//!
//! Why the displacement stays within a quarter of the space: the mirrors make two different C
//! addresses one guest byte, which C does not know. clang may reorder two accesses it proves
//! disjoint; it proves that for accesses from one base when their displacements differ by at
//! least the access size. With both displacements within a quarter of the space either way, they
//! differ by less than half of it, so the guest bytes are as far apart as the C addresses and
//! clang's proof holds for the guest too. Accesses from different bases, or with the sum masked,
//! clang cannot relate (the emitted 32-bit arithmetic carries no no-wrap facts), except by value
//! ranges that would need a base register known to sit within a displacement of 0 or 4 GiB: an
//! address the guest's own code wraps on purpose, which compiled code does not do (a base below
//! the displacement is a null-pointer access, which the real machine faults on).

use rpt_ir::{BinaryOp, Function, InstKind, Value};

/// Guest address widths with mirrors (the runtime's `RPT_GUEST_WINDOW_BYTES`): a quarter of the
/// space is at least 64 KiB, the largest host page, and at most 1 GiB.
const MIRRORED_BITS: std::ops::RangeInclusive<u32> = 18..=32;

/// For each value of `func`, the base and displacement of the near access it can be the address
/// of: it is `base + iconst` (either order) of the guest's address width, the base not itself a
/// constant, the displacement (sign-extended) within a quarter of the space either way.
pub(crate) fn near_addresses(func: &Function, address_bits: u32) -> Vec<Option<(Value, i64)>> {
    let mut near = vec![None; func.value_types.len()];
    if !MIRRORED_BITS.contains(&address_bits) {
        return near;
    }
    let window = 1i64 << (address_bits - 2);
    let mut constants: Vec<Option<u64>> = vec![None; func.value_types.len()];
    let results = func
        .blocks
        .iter()
        .flat_map(|b| &b.insts)
        .filter_map(|inst| Some((inst.result?, &inst.kind)));
    for (v, kind) in results.clone() {
        if let (InstKind::Iconst { imm, .. }, Some(slot)) = (kind, constants.get_mut(v.index())) {
            *slot = Some(*imm);
        }
    }
    let constant = |v: Value| constants.get(v.index()).copied().flatten();
    for (v, kind) in results {
        let InstKind::Binary {
            op: BinaryOp::Add,
            args: [a, b],
        } = *kind
        else {
            continue;
        };
        if func.value_type(v).map(|t| t.bits()) != Some(address_bits) {
            continue;
        }
        let (base, imm) = match (constant(a), constant(b)) {
            (None, Some(imm)) => (a, imm),
            (Some(imm), None) => (b, imm),
            _ => continue,
        };
        let shift = 64 - address_bits;
        let disp = ((imm << shift) as i64) >> shift;
        if (-window..window).contains(&disp)
            && let Some(slot) = near.get_mut(v.index())
        {
            *slot = Some((base, disp));
        }
    }
    near
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parses one function over a state of one register, `%r1`.
    fn parse(body: &str) -> Function {
        let text = format!("state {{\n    r1: i32 gpr\n}}\n\nfunction f_00001000 {{\nblock0:\n{body}    return\n}}\n");
        let program = rpt_ir::parse::parse_program(&text).expect("test IR parses");
        program.functions.into_values().next().expect("one function")
    }

    #[test]
    fn a_register_plus_a_small_constant_is_near_either_way_round() {
        let func = parse(
            "    v0: i32 = get %r1\n    v1: i32 = iconst 0xfffffff8\n    v2: i32 = add v0, v1\n    \
             v3: i32 = iconst 0x10\n    v4: i32 = add v3, v0\n",
        );
        let near = near_addresses(&func, 32);
        assert_eq!(near[2], Some((Value(0), -8)));
        assert_eq!(near[4], Some((Value(0), 16)));
        assert_eq!(near[0], None);
    }

    #[test]
    fn far_constants_constant_sums_other_widths_and_other_ops_are_not() {
        let func = parse(
            "    v0: i32 = get %r1\n    v1: i32 = iconst 0x40000000\n    v2: i32 = add v0, v1\n    \
             v3: i32 = iconst 0xc0000000\n    v4: i32 = add v0, v3\n    v5: i32 = add v1, v3\n    \
             v6: i32 = sub v0, v3\n    v7: i64 = zext v0\n    v8: i64 = iconst 0x4\n    \
             v9: i64 = add v7, v8\n",
        );
        let near = near_addresses(&func, 32);
        assert_eq!(near[2], None, "2^30 is a quarter of the space: outside the window");
        assert_eq!(near[4], Some((Value(0), -(1 << 30))), "-2^30 is its lower end");
        assert_eq!(near[5], None, "a constant address is folded by clang anyway");
        assert_eq!(near[6], None);
        assert_eq!(near[9], None, "an i64 sum is not a 32-bit address");
        assert!(near_addresses(&func, 64).iter().all(Option::is_none));
    }
}
