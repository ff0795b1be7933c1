//! The six arithmetic flags, computed exactly from operands and results, and condition codes.
//!
//! Carries and overflows come from bit formulas on the operands and the result, which hold for
//! every width and with or without a carry in, so `adc`/`sbb` need no wider arithmetic.

use iced_x86::ConditionCode;
use rpt_ir::{BinaryOp, IntCC, SlotId, Type, UnaryOp, Value};

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

    /// Sets flag `slot` to a constant.
    pub(crate) fn set_flag_const(&mut self, slot: SlotId, on: bool) {
        let v = self.flag_const(on);
        self.b.set(slot, v);
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

    /// `a op b` for `op` Add or Sub, with the flags of that operation (CF only `with_cf`).
    pub(crate) fn add_sub_with_flags(&mut self, op: BinaryOp, a: Value, b: Value, with_cf: bool) -> Value {
        let r = self.b.binary(op, a, b);
        self.set_arith_flags(op, a, b, r, with_cf);
        r
    }

    /// CF, OF, AF, ZF, SF and PF of `r = a + b (+ carry in)` (`op` Add) or `r = a - b (- borrow
    /// in)` (`op` Sub); with `with_cf` false, CF is left alone (inc, dec).
    pub(crate) fn set_arith_flags(&mut self, op: BinaryOp, a: Value, b: Value, r: Value, with_cf: bool) {
        let subtract = op == BinaryOp::Sub;
        if with_cf {
            let carries = if subtract {
                // Borrow out of the top bit: a=0,b=1; or a==b and a borrow into the top bit (then r's top bit is 1).
                let not_a = self.b.unary(UnaryOp::Not, a);
                let na_b = self.b.binary(BinaryOp::And, not_a, b);
                let ab = self.b.binary(BinaryOp::Xor, a, b);
                let same = self.b.unary(UnaryOp::Not, ab);
                let same_r = self.b.binary(BinaryOp::And, same, r);
                self.b.binary(BinaryOp::Or, na_b, same_r)
            } else {
                // Carry out of the top bit: both top bits set, or either set and no carry into the result's.
                let both = self.b.binary(BinaryOp::And, a, b);
                let either = self.b.binary(BinaryOp::Or, a, b);
                let not_r = self.b.unary(UnaryOp::Not, r);
                let either_not_r = self.b.binary(BinaryOp::And, either, not_r);
                self.b.binary(BinaryOp::Or, both, either_not_r)
            };
            let cf = self.msb(carries);
            self.b.set(CF, cf);
        }
        // Signed overflow: for a sum, the result's sign differs from both operands' signs,
        // (a ^ r) & (b ^ r); for a difference, the operands' signs differ and the result's sign
        // differs from a's, (a ^ b) & (a ^ r).
        let pairs = if subtract { [(a, b), (a, r)] } else { [(a, r), (b, r)] };
        let [p, q] = pairs.map(|(x, y)| self.b.binary(BinaryOp::Xor, x, y));
        let overflows = self.b.binary(BinaryOp::And, p, q);
        let of = self.msb(overflows);
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
        // Each condition comes with its negation (`ne` is not `e`), which tests the same flags.
        let negate = matches!(cc, C::no | C::ae | C::ne | C::a | C::ns | C::np | C::ge | C::g);
        let base = match cc {
            C::o | C::no => self.b.get(OF),
            C::b | C::ae => self.b.get(CF),
            C::e | C::ne => self.b.get(ZF),
            C::s | C::ns => self.b.get(SF),
            C::p | C::np => self.b.get(PF),
            C::be | C::a => {
                let cf = self.b.get(CF);
                let zf = self.b.get(ZF);
                self.b.binary(BinaryOp::Or, cf, zf)
            }
            C::l | C::ge | C::le | C::g => {
                let sf = self.b.get(SF);
                let of = self.b.get(OF);
                let lt = self.b.binary(BinaryOp::Xor, sf, of);
                if matches!(cc, C::le | C::g) {
                    let zf = self.b.get(ZF);
                    self.b.binary(BinaryOp::Or, zf, lt)
                } else {
                    lt
                }
            }
            // Instructions without a condition never reach here; "always" is the harmless answer.
            C::None => self.flag_const(true),
        };
        if negate { self.not1(base) } else { base }
    }
}
