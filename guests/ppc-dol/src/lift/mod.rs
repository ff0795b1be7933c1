//! The lifter: one guest function (its CFG from `discover`) into one IR function.
//!
//! `rpt_api::lift` walks the function's blocks (a `mark pc` and a listing line per instruction,
//! `exit pc, unlifted` where nothing decoded); this module lifts one instruction at a time for it
//! ([`InsnLifter`]), through its decoder row's lift function. Registers live in slots: each
//! instruction reads what it needs and writes back what it changes; later passes remove the
//! redundancy. Memory accesses are big-endian loads and stores in `ram` with i32 addresses.
//!
//! Control flow: `bl` is a call that continues after it (the callee's `blr` returns to it), `blr`
//! is a return, `b` to another function's entry is a tail call, `bctr` is a jump table when
//! discovery recognised one and an indirect tail call otherwise, `bctrl`/`blrl` are indirect
//! calls, `sc` calls the platform's `@sc` helper, and `tw`/`twi` exit with `invalid_opcode` when
//! their condition holds (a trap has no handler in a user program).
//!
//! Choices where the 750 manual leaves results undefined:
//! - `divw` by zero or `0x80000000 / -1` gives `0xffffffff` for a negative dividend and 0
//!   otherwise; `divwu` by zero gives 0 (the 750's results, as Dolphin's hardware tests record
//!   them; qemu gives the dividend instead, and the oracle tests mask exactly these cases).
//! - CR0 after `divw.`/`divwu.` in those cases follows the result (LT/GT/EQ) with SO as the XER
//!   says, as for any record form.

pub(crate) mod alu;
pub(crate) mod branch;
pub(crate) mod cached;
pub(crate) mod fp;
pub(crate) mod mem;
pub(crate) mod ps;
pub(crate) mod system;

use rpt_api::LiftResult;
use rpt_api::lift::{self, BlockContext, InsnLifter, Step};
use rpt_ir::{BinaryOp, ExitReason, FunctionBuilder, GuestAddr, IntCC, Type, Value};

use crate::decode::Insn;
use crate::discover::{Failure, Ppc, Walker};
use crate::state::{self, OV, SO, cr_field, gpr};

/// Lifts one straight-line instruction into the current block.
pub type Handler = fn(&mut Lifter<'_>, &Insn);

/// What an instruction does to control flow.
#[derive(Clone, Copy)]
pub enum Flow {
    /// Falls through to the next instruction.
    Plain(Handler),
    /// `b`/`ba`/`bl`/`bla`.
    Branch,
    /// `bc` with every BO form (and `bcl`).
    BranchCond,
    /// `bclr` (`blr`, conditional returns, `blrl`).
    BranchLr,
    /// `bcctr` (`bctr`, `bctrl`).
    BranchCtr,
    /// `tw`/`twi`.
    Trap,
}

/// The state of lifting one instruction: the builder and where the instruction is.
pub struct Lifter<'a> {
    /// The builder, positioned in the block the instruction continues.
    pub(crate) b: FunctionBuilder<'a>,
    /// The instruction's address.
    pub(crate) pc: GuestAddr,
}

impl Lifter<'_> {
    /// An i32 constant.
    pub(crate) fn c32(&mut self, v: u32) -> Value {
        self.b.iconst(Type::I32, u64::from(v))
    }

    /// An i1 constant.
    pub(crate) fn c1(&mut self, v: bool) -> Value {
        self.b.iconst(Type::I1, u64::from(v))
    }

    /// Reads GPR `n`.
    pub(crate) fn gpr(&mut self, n: u32) -> Value {
        self.b.get(gpr(n))
    }

    /// Writes GPR `n`.
    pub(crate) fn set_gpr(&mut self, n: u32, v: Value) {
        self.b.set(gpr(n), v);
    }

    /// `(rA|0)`: GPR `n`, or the constant 0 for r0 (the addressing and `addi` rule).
    pub(crate) fn gpr_or_zero(&mut self, n: u32) -> Value {
        if n == 0 { self.c32(0) } else { self.gpr(n) }
    }

    /// Places an i1 at bit `shift` of an i8 CR field value.
    pub(crate) fn cr_bit(&mut self, v: Value, shift: u64) -> Value {
        let wide = self.b.resize(v, Type::I8);
        if shift == 0 {
            wide
        } else {
            self.b.binary_imm(BinaryOp::Shl, wide, shift)
        }
    }

    /// A CR field from i1 bits, the first at the top (LT), the rest below it in turn; bits not
    /// given are 0.
    pub(crate) fn cr_field_from_bits(&mut self, bits: &[Value]) -> Value {
        let placed: Vec<Value> = bits
            .iter()
            .zip([3, 2, 1, 0])
            .map(|(&bit, shift)| self.cr_bit(bit, shift))
            .collect();
        placed
            .into_iter()
            .reduce(|field, bit| self.b.binary(BinaryOp::Or, field, bit))
            .unwrap_or_else(|| self.b.iconst(Type::I8, 0))
    }

    /// A CR field from its four bits (LT GT EQ from i1 values, SO from the XER).
    pub(crate) fn cr_field_of(&mut self, lt: Value, gt: Value, eq: Value) -> Value {
        let so = self.b.get(SO);
        self.cr_field_from_bits(&[lt, gt, eq, so])
    }

    /// Sets CR field `n` from comparing `a` with `b` (signed or unsigned).
    pub(crate) fn compare_into(&mut self, n: u32, a: Value, b: Value, signed: bool) {
        let (lt, gt) = if signed {
            (IntCC::Slt, IntCC::Sgt)
        } else {
            (IntCC::Ult, IntCC::Ugt)
        };
        let lt = self.b.icmp(lt, a, b);
        let gt = self.b.icmp(gt, a, b);
        let eq = self.b.icmp(IntCC::Eq, a, b);
        let field = self.cr_field_of(lt, gt, eq);
        self.b.set(cr_field(n), field);
    }

    /// CR0 from a result compared with zero (the record forms).
    pub(crate) fn set_cr0(&mut self, result: Value) {
        let zero = self.c32(0);
        self.compare_into(0, result, zero, true);
    }

    /// CR0 from a result when the instruction's Rc bit is set.
    pub(crate) fn record(&mut self, insn: &Insn, result: Value) {
        if insn.bit0() {
            self.set_cr0(result);
        }
    }

    /// Sets OV and ORs it into SO.
    pub(crate) fn set_ov(&mut self, ov: Value) {
        self.b.set(OV, ov);
        let so = self.b.get(SO);
        let so = self.b.binary(BinaryOp::Or, so, ov);
        self.b.set(SO, so);
    }

    /// Bit `n` of the CR (0 = cr0's LT) as an i1.
    pub(crate) fn cr_bit_value(&mut self, n: u32) -> Value {
        let field = self.b.get(cr_field(n / 4));
        let shifted = self.b.binary_imm(BinaryOp::Lshr, field, u64::from(3 - n % 4));
        let bit = self.b.binary_imm(BinaryOp::And, shifted, 1);
        self.b.icmp_imm(IntCC::Ne, bit, 0)
    }

    /// Sets bit `n` of the CR to the i1 `v`.
    pub(crate) fn set_cr_bit(&mut self, n: u32, v: Value) {
        let slot = cr_field(n / 4);
        let shift = u64::from(3 - n % 4);
        let field = self.b.get(slot);
        let cleared = self.b.binary_imm(BinaryOp::And, field, !(1u64 << shift) & 0xf);
        let bit = self.cr_bit(v, shift);
        let merged = self.b.binary(BinaryOp::Or, cleared, bit);
        self.b.set(slot, merged);
    }

    /// Ends the current block with an exit to the runtime at this instruction.
    pub(crate) fn exit_here(&mut self, reason: ExitReason) {
        let pc = self.pc;
        self.b.exit_at(pc, reason, Type::I32);
    }
}

/// Lifts the function at `entry`.
pub(crate) fn lift_function(walker: &Walker<'_>, entry: GuestAddr) -> LiftResult {
    let mut lifted = lift::lift_function(walker, entry, &state::state_desc(), |b, lifting| {
        lifting.lift_blocks(Lifter { b, pc: entry })
    });
    cached::drop_known_cached_folds(&mut lifted.function);
    lifted
}

/// The instruction at `addr` lifted alone for the run-time tier (`rpt_api::tier`), by the same
/// lift functions and after-pass as a function's instructions; `None` when nothing decodes there.
pub(crate) fn lift_instruction(walker: &Walker<'_>, addr: GuestAddr) -> Option<LiftResult> {
    let mut lifted = lift::lift_instruction(walker, addr, &state::state_desc(), |b, lifting| {
        lifting.lift_blocks(Lifter { b, pc: addr })
    })?;
    cached::drop_known_cached_folds(&mut lifted.function);
    Some(lifted)
}

impl<'f> InsnLifter<'f, Ppc> for Lifter<'f> {
    const PC_TYPE: Type = Type::I32;

    fn builder(&mut self) -> &mut FunctionBuilder<'f> {
        &mut self.b
    }

    /// Nothing carries over from one instruction to the next.
    fn start_block(&mut self) {}

    fn set_pc(&mut self, pc: GuestAddr) {
        self.pc = pc;
    }

    fn listing_text(&mut self, insn: &Insn) -> String {
        insn.text()
    }

    fn undecoded_listing_text(&mut self, failure: Option<&Failure>) -> Option<String> {
        Some(match failure {
            Some(Failure::Unknown(word)) => format!(".long {word:#010x}"),
            Some(Failure::NotCode) => "(not code)".to_string(),
            None => "(not decoded)".to_string(),
        })
    }

    fn lift(&mut self, insn: &Insn, cx: &mut BlockContext<'_, Ppc>) -> Step {
        match insn.row.flow {
            Flow::Plain(handler) => handler(self, insn),
            _ => {
                if branch::lift_control(self, cx.walker.isa(), cx.cfg, cx.blocks, insn, cx.diagnostics) {
                    return Step::Ended;
                }
            }
        }
        Step::Next(insn.next())
    }
}

/// Says what could not be lifted.
pub(crate) fn describe_failure(failure: &Failure) -> String {
    match failure {
        Failure::NotCode => "this address is not in an executable section".to_string(),
        Failure::Unknown(word) => {
            format!("cannot lift the word {word:#010x}: the PowerPC lifter has no row for this instruction")
        }
    }
}
