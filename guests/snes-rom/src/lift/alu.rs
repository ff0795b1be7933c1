//! Loads, stores, arithmetic, logic, compares, shifts, increments and bit tests.
//!
//! ADC and SBC in decimal mode follow the 65C816: each BCD digit is added (or subtracted) with
//! its carry and corrected by 6 when it leaves 0–9, V comes from the sum before the top digit's
//! correction, N and Z from the final result (the NMOS 6502's undefined flags are defined here),
//! and digits above 9 are corrected the same way, which is what the chip does with invalid BCD.
//! The decimal flag is run-time state, so both forms are lifted with a branch between them.

use rpt_ir::{BinaryOp, IntCC, Type, Value};

use super::Lifter;
use super::operand::Place;
use crate::decode::Insn;
use crate::state::{C, DEC, V, X, Y, Z};

/// Lifts `insn` if it is one of this module's; false otherwise.
pub(crate) fn lift(lx: &mut Lifter<'_>, insn: &Insn) -> bool {
    let wide = insn.is_wide();
    let mnemonic = insn.info.mnemonic;
    let known = matches!(
        mnemonic,
        "LDA"
            | "LDX"
            | "LDY"
            | "STA"
            | "STX"
            | "STY"
            | "STZ"
            | "ADC"
            | "SBC"
            | "AND"
            | "ORA"
            | "EOR"
            | "CMP"
            | "CPX"
            | "CPY"
            | "BIT"
            | "INC"
            | "DEC"
            | "ASL"
            | "LSR"
            | "ROL"
            | "ROR"
            | "TSB"
            | "TRB"
            | "INX"
            | "INY"
            | "DEX"
            | "DEY"
    );
    if !known {
        return false;
    }
    lx.add_cycles(insn.cycles(false, false, false));
    // The register forms of INC/DEC (INX and friends) take no operand.
    if let Some((slot, delta)) = match mnemonic {
        "INX" => Some((X, 1u64)),
        "INY" => Some((Y, 1)),
        "DEX" => Some((X, 0xffff)),
        "DEY" => Some((Y, 0xffff)),
        _ => None,
    } {
        let x8 = insn.widths.x8;
        let v = lx.b.get(slot);
        let v = lx.b.binary_imm(BinaryOp::Add, v, delta);
        lx.set_index(slot, v, x8);
        lx.set_nz(v, !x8);
        return true;
    }
    let place = lx.place(insn);
    match mnemonic {
        "LDA" => {
            let v = lx.read_place(place, wide);
            lx.set_acc(v, wide);
            lx.set_nz(v, wide);
        }
        "LDX" | "LDY" => {
            let v = lx.read_place(place, wide);
            lx.set_index(if mnemonic == "LDX" { X } else { Y }, v, !wide);
            lx.set_nz(v, wide);
        }
        "STA" => {
            let v = lx.acc(wide);
            lx.write_place(place, v, wide, false);
        }
        "STX" | "STY" => {
            let v = lx.b.get(if mnemonic == "STX" { X } else { Y });
            lx.write_place(place, v, wide, false);
        }
        "STZ" => {
            let zero = lx.b.iconst(Type::I16, 0);
            lx.write_place(place, zero, wide, false);
        }
        "AND" | "ORA" | "EOR" => {
            let m = lx.read_place(place, wide);
            let a = lx.acc(wide);
            let op = match mnemonic {
                "AND" => BinaryOp::And,
                "ORA" => BinaryOp::Or,
                _ => BinaryOp::Xor,
            };
            let r = lx.b.binary(op, a, m);
            lx.set_acc(r, wide);
            lx.set_nz(r, wide);
        }
        "ADC" | "SBC" => {
            let m = lx.read_place(place, wide);
            add_with_carry(lx, m, wide, mnemonic == "SBC");
        }
        "CMP" | "CPX" | "CPY" => {
            let m = lx.read_place(place, wide);
            let r = match mnemonic {
                "CMP" => lx.acc(wide),
                "CPX" => lx.b.get(X),
                _ => lx.b.get(Y),
            };
            compare(lx, r, m, wide);
        }
        "BIT" => {
            let m = lx.read_place(place, wide);
            let a = lx.acc(wide);
            let both = lx.b.binary(BinaryOp::And, a, m);
            let mask = if wide { 0xffff } else { 0xff };
            let both = lx.b.binary_imm(BinaryOp::And, both, mask);
            let z = lx.b.icmp_imm(IntCC::Eq, both, 0);
            lx.b.set(Z, z);
            // BIT #imm sets only Z; the memory forms copy the operand's top two bits to N and V.
            if !matches!(place, Place::Immediate(_)) {
                let top = if wide { 15 } else { 7 };
                let n = bit(lx, m, top);
                let v = bit(lx, m, top - 1);
                lx.b.set(crate::state::N, n);
                lx.b.set(V, v);
            }
        }
        "INC" | "DEC" => {
            let m = lx.read_place(place, wide);
            let r =
                lx.b.binary_imm(BinaryOp::Add, m, if mnemonic == "INC" { 1 } else { 0xffff });
            lx.write_place(place, r, wide, true);
            lx.set_nz(r, wide);
        }
        "ASL" | "LSR" | "ROL" | "ROR" => {
            let m = lx.read_place(place, wide);
            let top = if wide { 15 } else { 7 };
            let (r, carry) = match mnemonic {
                "ASL" | "ROL" => {
                    let out = bit(lx, m, top);
                    let shifted = lx.b.binary_imm(BinaryOp::Shl, m, 1);
                    let r = if mnemonic == "ROL" {
                        let c = lx.b.get(C);
                        let c = lx.b.resize(c, Type::I16);
                        lx.b.binary(BinaryOp::Or, shifted, c)
                    } else {
                        shifted
                    };
                    (r, out)
                }
                _ => {
                    let out = bit(lx, m, 0);
                    let shifted = lx.b.binary_imm(BinaryOp::Lshr, m, 1);
                    let r = if mnemonic == "ROR" {
                        let c = lx.b.get(C);
                        let c = lx.b.resize(c, Type::I16);
                        let c = lx.b.binary_imm(BinaryOp::Shl, c, u64::from(top));
                        lx.b.binary(BinaryOp::Or, shifted, c)
                    } else {
                        shifted
                    };
                    (r, out)
                }
            };
            lx.write_place(place, r, wide, true);
            lx.b.set(C, carry);
            lx.set_nz(r, wide);
        }
        "TSB" | "TRB" => {
            let m = lx.read_place(place, wide);
            let a = lx.acc(wide);
            let both = lx.b.binary(BinaryOp::And, a, m);
            let mask = if wide { 0xffff } else { 0xff };
            let both = lx.b.binary_imm(BinaryOp::And, both, mask);
            let z = lx.b.icmp_imm(IntCC::Eq, both, 0);
            lx.b.set(Z, z);
            let r = if mnemonic == "TSB" {
                lx.b.binary(BinaryOp::Or, m, a)
            } else {
                let not_a = lx.b.unary(rpt_ir::UnaryOp::Not, a);
                lx.b.binary(BinaryOp::And, m, not_a)
            };
            lx.write_place(place, r, wide, true);
        }
        _ => return false,
    }
    true
}

/// Bit `n` of the i16 `v` as an i1.
fn bit(lx: &mut Lifter<'_>, v: Value, n: u32) -> Value {
    let masked = lx.b.binary_imm(BinaryOp::And, v, 1 << n);
    lx.b.icmp_imm(IntCC::Ne, masked, 0)
}

/// CMP/CPX/CPY: `r - m` sets N, Z and C (no borrow), leaving V alone.
fn compare(lx: &mut Lifter<'_>, r: Value, m: Value, wide: bool) {
    let mask = if wide { 0xffff } else { 0xff };
    let r = lx.b.binary_imm(BinaryOp::And, r, mask);
    let m = lx.b.binary_imm(BinaryOp::And, m, mask);
    let diff = lx.b.binary(BinaryOp::Sub, r, m);
    let c = lx.b.icmp(IntCC::Uge, r, m);
    lx.b.set(C, c);
    lx.set_nz(diff, wide);
}

/// ADC (or SBC, which adds the operand's complement) in binary or decimal mode by the D flag.
fn add_with_carry(lx: &mut Lifter<'_>, m: Value, wide: bool, subtract: bool) {
    let bits: u32 = if wide { 16 } else { 8 };
    let mask = (1u64 << bits) - 1;
    // Work in i32 so the carry out is bit `bits`.
    let a = lx.acc(wide);
    let a = lx.b.resize(a, Type::I32);
    let m = lx.b.resize(m, Type::I32);
    let m = if subtract {
        lx.b.binary_imm(BinaryOp::Xor, m, mask)
    } else {
        m
    };
    let m = lx.b.binary_imm(BinaryOp::And, m, mask);
    let c = lx.b.get(C);
    let c = lx.b.resize(c, Type::I32);

    let decimal = lx.b.get(DEC);
    let decimal_block = lx.b.create_block();
    let binary_block = lx.b.create_block();
    let join = lx.b.create_block();
    let result = lx.b.add_block_param(join, Type::I32);
    let overflow = lx.b.add_block_param(join, Type::I1);
    lx.b.branch(decimal, decimal_block, binary_block);

    lx.b.switch_to_block(binary_block);
    let sum = lx.b.binary(BinaryOp::Add, a, m);
    let sum = lx.b.binary(BinaryOp::Add, sum, c);
    let v = signed_overflow(lx, a, m, sum, bits);
    lx.b.jump(join, vec![sum, v]);

    lx.b.switch_to_block(decimal_block);
    let (sum, v) = decimal_sum(lx, a, m, c, bits, subtract);
    lx.b.jump(join, vec![sum, v]);

    lx.b.switch_to_block(join);
    let carry = lx.b.binary_imm(BinaryOp::Lshr, result, u64::from(bits));
    let carry = lx.b.binary_imm(BinaryOp::And, carry, 1);
    let carry = lx.b.icmp_imm(IntCC::Ne, carry, 0);
    lx.b.set(C, carry);
    lx.b.set(V, overflow);
    let r = lx.b.resize(result, Type::I16);
    lx.set_acc(r, wide);
    lx.set_nz(r, wide);
}

/// V of `a + m = sum` at `bits`: the operands agree in sign and the sum does not.
fn signed_overflow(lx: &mut Lifter<'_>, a: Value, m: Value, sum: Value, bits: u32) -> Value {
    let same = lx.b.binary(BinaryOp::Xor, a, m);
    let same = lx.b.unary(rpt_ir::UnaryOp::Not, same);
    let changed = lx.b.binary(BinaryOp::Xor, a, sum);
    let both = lx.b.binary(BinaryOp::And, same, changed);
    let sign = lx.b.binary_imm(BinaryOp::And, both, 1 << (bits - 1));
    lx.b.icmp_imm(IntCC::Ne, sign, 0)
}

/// The decimal sum of `a + m + c` digit by digit (`m` already complemented for SBC), and V.
fn decimal_sum(lx: &mut Lifter<'_>, a: Value, m: Value, c: Value, bits: u32, subtract: bool) -> (Value, Value) {
    let digits = bits / 4;
    // `acc` holds the digits done so far (corrected) plus the carry into the next one, as the sum
    // of the low parts: acc = (a & low) + (m & low) + carry, corrected digit by digit.
    let mut acc = c;
    let mut overflow = None;
    for d in 0..digits {
        let shift = 4 * d;
        let digit_mask = 0xfu64 << shift;
        let a_digit = lx.b.binary_imm(BinaryOp::And, a, digit_mask);
        let m_digit = lx.b.binary_imm(BinaryOp::And, m, digit_mask);
        let sum = lx.b.binary(BinaryOp::Add, acc, a_digit);
        let sum = lx.b.binary(BinaryOp::Add, sum, m_digit);
        if d == digits - 1 {
            // V is judged before the top digit's correction.
            overflow = Some(signed_overflow(lx, a, m, sum, bits));
        }
        let limit = 0xau64 << shift;
        let corrected = if subtract {
            // A digit that did not carry out borrowed: take 6 back from it.
            let carried = lx.b.icmp_imm(IntCC::Uge, sum, 0x10u64 << shift);
            let adjust = lx.b.binary_imm(BinaryOp::Sub, sum, 6u64 << shift);
            lx.b.select(carried, sum, adjust)
        } else {
            let over = lx.b.icmp_imm(IntCC::Uge, sum, limit);
            let adjust = lx.b.binary_imm(BinaryOp::Add, sum, 6u64 << shift);
            lx.b.select(over, adjust, sum)
        };
        // Keep this digit and everything below it, plus a carry into the next digit.
        let keep_mask = (0x10u64 << shift) - 1;
        let kept = lx.b.binary_imm(BinaryOp::And, corrected, keep_mask);
        let carry = if subtract {
            lx.b.icmp_imm(IntCC::Uge, sum, 0x10u64 << shift)
        } else {
            lx.b.icmp_imm(IntCC::Uge, corrected, 0x10u64 << shift)
        };
        let carry = lx.b.resize(carry, Type::I32);
        let carry = lx.b.binary_imm(BinaryOp::Shl, carry, u64::from(shift + 4));
        acc = lx.b.binary(BinaryOp::Or, kept, carry);
    }
    let v = overflow.unwrap_or_else(|| lx.b.iconst(Type::I1, 0));
    (acc, v)
}
