//! The six arithmetic flags, computed exactly from operands and results, and condition codes.
//!
//! Carries and overflows come from bit formulas on the operands and the result, which hold for
//! every width and with or without a carry in, so `adc`/`sbb` need no wider arithmetic. Without a
//! carry in, CF is a direct unsigned comparison instead (`a <u b` for `a - b`, `r <u a` for
//! `a + b`), which the host compiler turns into the flag its own compare sets.
//!
//! Conditions read after a `cmp`/`sub`/`neg` (without borrow) or a logic operation in the same
//! block, with no flag written in between, are direct comparisons of that operation's operands
//! (`jl` after `cmp a, b` is `a <s b`), not formulas over the flag slots: the host compiler fuses
//! those with the branch into one compare-and-branch, as it cannot fuse `SF != OF` computed from
//! bits. The flag slots are still written, for anything else that reads them; passes and the
//! host compiler drop the writes no one reads. Exactness is kept: each identity below holds for
//! every operand value, and the instruction fuzzer compares every condition after each operation.

use iced_x86::ConditionCode;
use rpt_ir::{BinaryOp, InstKind, IntCC, SlotId, Type, UnaryOp, Value};

use super::Lifter;
use crate::state::{AF, CF, OF, PF, SF, ZF};

/// What set the flags last, when a condition can be asked of it directly.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Compare {
    /// The operation and its operands.
    kind: CompareKind,
    /// The IR block the flags were written in, and how many instructions it had then: the
    /// identities hold only while nothing after those instructions wrote a flag.
    block: rpt_ir::Block,
    insts: usize,
}

#[derive(Clone, Copy, Debug)]
enum CompareKind {
    /// `a - b` without a borrow in (`cmp`, `sub`, `neg`, `cmps`, `scas`, `cmpxchg`).
    Sub { a: Value, b: Value },
    /// A logic operation with result `r` (CF = OF = 0).
    Logic { r: Value },
}

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
        self.set_arith_flags(op, a, b, r, with_cf, false);
        r
    }

    /// CF, OF, AF, ZF, SF and PF of `r = a + b (+ carry in)` (`op` Add) or `r = a - b (- borrow
    /// in)` (`op` Sub), `carry_in` saying whether there was one (`adc`, `sbb`); with `with_cf`
    /// false, CF is left alone (inc, dec).
    pub(crate) fn set_arith_flags(
        &mut self,
        op: BinaryOp,
        a: Value,
        b: Value,
        r: Value,
        with_cf: bool,
        carry_in: bool,
    ) {
        let subtract = op == BinaryOp::Sub;
        if with_cf && !carry_in {
            // A borrow out of a - b exactly when a <u b; a carry out of a + b exactly when the
            // sum wrapped below a.
            let cf = if subtract {
                self.b.icmp(IntCC::Ult, a, b)
            } else {
                self.b.icmp(IntCC::Ult, r, a)
            };
            self.b.set(CF, cf);
        } else if with_cf {
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
        let af = self.aux_carry(a, b, r);
        self.b.set(AF, af);
        self.set_zsp(r);
        let of = if subtract && !carry_in {
            // A difference overflows exactly when the result's sign disagrees with the true
            // comparison: OF = (a <s b) != SF. Written this way, `SF != OF` in a later block
            // (`jl` behind a `je` of the same `cmp`) is `SF ^ (a <s b) ^ SF`, which the host
            // compiler folds to the comparison itself and fuses with the branch.
            let less = self.b.icmp(IntCC::Slt, a, b);
            let sf = self.msb(r);
            self.b.binary(BinaryOp::Xor, less, sf)
        } else {
            // Signed overflow: for a sum, the result's sign differs from both operands' signs,
            // (a ^ r) & (b ^ r); for a difference with a borrow in, the operands' signs differ
            // and the result's sign differs from a's, (a ^ b) & (a ^ r).
            let pairs = if subtract { [(a, b), (a, r)] } else { [(a, r), (b, r)] };
            let [p, q] = pairs.map(|(x, y)| self.b.binary(BinaryOp::Xor, x, y));
            let overflows = self.b.binary(BinaryOp::And, p, q);
            self.msb(overflows)
        };
        self.b.set(OF, of);
        self.last_compare = (subtract && with_cf && !carry_in).then(|| self.compare(CompareKind::Sub { a, b }));
    }

    /// A [`Compare`] of `kind` whose flags were written by the instructions so far.
    fn compare(&self, kind: CompareKind) -> Compare {
        let block = self.b.current_block();
        Compare {
            kind,
            block,
            insts: self.b.func().block(block).insts.len(),
        }
    }

    /// The last comparison, if the flags are still the ones it wrote: same block, and no flag
    /// written and no helper called since (a helper may write flags through the CPU state).
    fn live_compare(&self) -> Option<CompareKind> {
        let compare = self.last_compare?;
        if compare.block != self.b.current_block() {
            return None;
        }
        let since = self.b.func().block(compare.block).insts.get(compare.insts..)?;
        let untouched = since.iter().all(|inst| match &inst.kind {
            InstKind::SetSlot { slot, .. } => ![CF, OF, ZF, SF, PF, AF].contains(slot),
            InstKind::CallHelper { .. } | InstKind::SetIndexed { .. } => false,
            _ => true,
        });
        untouched.then_some(compare.kind)
    }

    /// Condition `cc` as a direct comparison of the live comparison's operands, where one says
    /// the same as the flags; `None` for conditions (and states) it cannot answer.
    fn direct_cond(&mut self, cc: ConditionCode) -> Option<Value> {
        use ConditionCode as C;
        let v = match self.live_compare()? {
            CompareKind::Sub { a, b } => {
                let cond = match cc {
                    C::b => IntCC::Ult,
                    C::ae => IntCC::Uge,
                    C::e => IntCC::Eq,
                    C::ne => IntCC::Ne,
                    C::be => IntCC::Ule,
                    C::a => IntCC::Ugt,
                    C::l => IntCC::Slt,
                    C::ge => IntCC::Sge,
                    C::le => IntCC::Sle,
                    C::g => IntCC::Sgt,
                    _ => return None,
                };
                self.b.icmp(cond, a, b)
            }
            // CF = OF = 0, so `l` is SF alone, `le` is ZF or SF, `be` is ZF, and `b` never holds.
            CompareKind::Logic { r } => match cc {
                C::e | C::be => self.b.icmp_imm(IntCC::Eq, r, 0),
                C::ne | C::a => self.b.icmp_imm(IntCC::Ne, r, 0),
                C::s | C::l => self.b.icmp_imm(IntCC::Slt, r, 0),
                C::ns | C::ge => self.b.icmp_imm(IntCC::Sge, r, 0),
                C::le => self.b.icmp_imm(IntCC::Sle, r, 0),
                C::g => self.b.icmp_imm(IntCC::Sgt, r, 0),
                _ => return None,
            },
        };
        Some(v)
    }

    /// Flags of `and`/`or`/`xor`/`test`: CF = OF = 0, AF = 0 (undefined by the manual; rpt's choice).
    pub(crate) fn set_logic_flags(&mut self, r: Value) {
        let zero = self.flag_const(false);
        self.b.set(CF, zero);
        self.b.set(OF, zero);
        self.b.set(AF, zero);
        self.set_zsp(r);
        self.last_compare = Some(self.compare(CompareKind::Logic { r }));
    }

    /// Evaluates an x86 condition code from the flag slots.
    pub(crate) fn cond(&mut self, cc: ConditionCode) -> Value {
        use ConditionCode as C;
        if let Some(direct) = self.direct_cond(cc) {
            return direct;
        }
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
