//! The six arithmetic flags, computed exactly from operands and results, and condition codes.
//!
//! Carries and overflows come from bit formulas on the operands and the result, which hold for
//! every width and with or without a carry in, so `adc`/`sbb` need no wider arithmetic.

use iced_x86::ConditionCode;
use rpt_ir::{BinaryOp, IntCC, Type, UnaryOp, Value};

use super::Lifter;
use crate::state::{AF, CF, OF, PF, SF, ZF};

impl Lifter<'_> {
    /// The most significant bit of `v`, as an i1.
    pub(crate) fn msb(&mut self, v: Value) -> Value {
        self.b.icmp_imm(IntCC::Slt, v, 0)
    }

    /// Bit `n` of `v`, as an i1.
    pub(crate) fn bit(&mut self, v: Value, n: u32) -> Value {
        let m = self.b.binary_imm(BinaryOp::And, v, 1u64 << n);
        self.b.icmp_imm(IntCC::Ne, m, 0)
    }

    /// A constant i1.
    pub(crate) fn flag_const(&mut self, on: bool) -> Value {
        self.b.iconst(Type::I1, u64::from(on))
    }

    /// Logical not of an i1.
    pub(crate) fn not1(&mut self, v: Value) -> Value {
        self.b.unary(UnaryOp::Not, v)
    }

    /// ZF, SF and PF from a result.
    pub(crate) fn set_zsp(&mut self, r: Value) {
        let zf = self.b.icmp_imm(IntCC::Eq, r, 0);
        self.b.set(ZF, zf);
        let sf = self.msb(r);
        self.b.set(SF, sf);
        let pf = self.parity(r);
        self.b.set(PF, pf);
    }

    /// PF: set when the low byte of `r` has an even number of one bits.
    pub(crate) fn parity(&mut self, r: Value) -> Value {
        let low = self.b.resize(r, Type::I8);
        let ones = self.b.unary(UnaryOp::Popcnt, low);
        let odd = self.b.binary_imm(BinaryOp::And, ones, 1);
        self.b.icmp_imm(IntCC::Eq, odd, 0)
    }

    /// AF: the carry or borrow out of bit 3, which is bit 4 of `a ^ b ^ r` for both addition and subtraction.
    fn aux_carry(&mut self, a: Value, b: Value, r: Value) -> Value {
        let x = self.b.binary(BinaryOp::Xor, a, b);
        let x = self.b.binary(BinaryOp::Xor, x, r);
        self.bit(x, 4)
    }

    /// CF, OF and AF of `r = a + b (+ carry in)`; with `with_cf` false, CF is left alone (inc).
    pub(crate) fn set_add_flags(&mut self, a: Value, b: Value, r: Value, with_cf: bool) {
        if with_cf {
            // Carry out of the top bit: both top bits set, or either set and no carry into the result's.
            let both = self.b.binary(BinaryOp::And, a, b);
            let either = self.b.binary(BinaryOp::Or, a, b);
            let not_r = self.b.unary(UnaryOp::Not, r);
            let either_not_r = self.b.binary(BinaryOp::And, either, not_r);
            let carries = self.b.binary(BinaryOp::Or, both, either_not_r);
            let cf = self.msb(carries);
            self.b.set(CF, cf);
        }
        // Signed overflow: the result's sign differs from both operands' signs.
        let ar = self.b.binary(BinaryOp::Xor, a, r);
        let br = self.b.binary(BinaryOp::Xor, b, r);
        let both = self.b.binary(BinaryOp::And, ar, br);
        let of = self.msb(both);
        self.b.set(OF, of);
        let af = self.aux_carry(a, b, r);
        self.b.set(AF, af);
        self.set_zsp(r);
    }

    /// CF, OF and AF of `r = a - b (- borrow in)`; with `with_cf` false, CF is left alone (dec).
    pub(crate) fn set_sub_flags(&mut self, a: Value, b: Value, r: Value, with_cf: bool) {
        if with_cf {
            // Borrow out of the top bit: a=0,b=1; or a==b and a borrow into the top bit (then r's top bit is 1).
            let not_a = self.b.unary(UnaryOp::Not, a);
            let na_b = self.b.binary(BinaryOp::And, not_a, b);
            let ab = self.b.binary(BinaryOp::Xor, a, b);
            let same = self.b.unary(UnaryOp::Not, ab);
            let same_r = self.b.binary(BinaryOp::And, same, r);
            let borrows = self.b.binary(BinaryOp::Or, na_b, same_r);
            let cf = self.msb(borrows);
            self.b.set(CF, cf);
        }
        // Signed overflow: the operands' signs differ and the result's sign differs from a's.
        let ab = self.b.binary(BinaryOp::Xor, a, b);
        let ar = self.b.binary(BinaryOp::Xor, a, r);
        let both = self.b.binary(BinaryOp::And, ab, ar);
        let of = self.msb(both);
        self.b.set(OF, of);
        let af = self.aux_carry(a, b, r);
        self.b.set(AF, af);
        self.set_zsp(r);
    }

    /// Flags of `and`/`or`/`xor`/`test`: CF = OF = 0, AF = 0 (undefined by the manual; rpt's choice).
    pub(crate) fn set_logic_flags(&mut self, r: Value) {
        let zero = self.flag_const(false);
        self.b.set(CF, zero);
        self.b.set(OF, zero);
        self.b.set(AF, zero);
        self.set_zsp(r);
    }

    /// Evaluates an x86 condition code from the flag slots.
    pub(crate) fn cond(&mut self, cc: ConditionCode) -> Value {
        use ConditionCode as C;
        let (base, negate) = match cc {
            C::o => (self.b.get(OF), false),
            C::no => (self.b.get(OF), true),
            C::b => (self.b.get(CF), false),
            C::ae => (self.b.get(CF), true),
            C::e => (self.b.get(ZF), false),
            C::ne => (self.b.get(ZF), true),
            C::be | C::a => {
                let cf = self.b.get(CF);
                let zf = self.b.get(ZF);
                (self.b.binary(BinaryOp::Or, cf, zf), cc == C::a)
            }
            C::s => (self.b.get(SF), false),
            C::ns => (self.b.get(SF), true),
            C::p => (self.b.get(PF), false),
            C::np => (self.b.get(PF), true),
            C::l | C::ge => {
                let sf = self.b.get(SF);
                let of = self.b.get(OF);
                (self.b.binary(BinaryOp::Xor, sf, of), cc == C::ge)
            }
            C::le | C::g => {
                let sf = self.b.get(SF);
                let of = self.b.get(OF);
                let lt = self.b.binary(BinaryOp::Xor, sf, of);
                let zf = self.b.get(ZF);
                (self.b.binary(BinaryOp::Or, zf, lt), cc == C::g)
            }
            // Instructions without a condition never reach here; "always" is the harmless answer.
            C::None => (self.flag_const(true), false),
        };
        if negate { self.not1(base) } else { base }
    }
}
