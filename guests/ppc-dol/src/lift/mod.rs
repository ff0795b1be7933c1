//! The lifter: one guest function (its CFG from `discover`) into one IR function.
//!
//! Every guest instruction starts with `mark pc`; guest basic blocks become IR blocks, and
//! `block0` only jumps to the entry's guest block so a loop back to the first instruction is an
//! ordinary jump. Registers live in slots: each instruction reads what it needs and writes back
//! what it changes; later passes remove the redundancy. Memory accesses are big-endian loads and
//! stores in `ram` with i32 addresses.
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
pub(crate) mod fp;
pub(crate) mod mem;
pub(crate) mod ps;
pub(crate) mod system;

use std::collections::BTreeMap;

use rpt_api::{Diagnostic, LiftResult, Severity};
use rpt_ir::{BinaryOp, Block, ExitReason, Function, FunctionBuilder, GuestAddr, IntCC, Type, Value};

use crate::decode::Insn;
use crate::discover::{Failure, FunctionCfg, Walker};
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

    /// A CR field from its four bits (LT GT EQ from i1 values, SO from the XER).
    pub(crate) fn cr_field_of(&mut self, lt: Value, gt: Value, eq: Value) -> Value {
        let so = self.b.get(SO);
        let lt = self.cr_bit(lt, 3);
        let gt = self.cr_bit(gt, 2);
        let eq = self.cr_bit(eq, 1);
        let so = self.cr_bit(so, 0);
        let x = self.b.binary(BinaryOp::Or, lt, gt);
        let x = self.b.binary(BinaryOp::Or, x, eq);
        self.b.binary(BinaryOp::Or, x, so)
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
    let cfg = walker.walk(entry);
    let state = state::state_desc();
    let mut function = Function::new(entry);
    let mut fl = FnLift {
        cfg: &cfg,
        diagnostics: Vec::new(),
        listing: Vec::new(),
    };
    {
        let b = FunctionBuilder::new(&mut function, &state);
        fl.build(b);
    }
    fl.diagnostics.sort_by_key(|d| d.addr);
    LiftResult {
        function,
        diagnostics: fl.diagnostics,
        listing: fl.listing,
    }
}

struct FnLift<'w> {
    cfg: &'w FunctionCfg,
    diagnostics: Vec<Diagnostic>,
    listing: Vec<(GuestAddr, String)>,
}

impl FnLift<'_> {
    fn build(&mut self, mut b: FunctionBuilder<'_>) {
        let blocks: BTreeMap<GuestAddr, Block> = self.cfg.block_starts.keys().map(|&a| (a, b.create_block())).collect();
        if let Some(&first) = blocks.get(&self.cfg.entry.addr) {
            b.jump(first, Vec::new());
        }
        let mut lx = Lifter {
            b,
            pc: self.cfg.entry.addr,
        };
        for (&start, &block) in &blocks {
            lx.b.switch_to_block(block);
            self.lift_block(&mut lx, &blocks, start);
        }
        // Instructions are fixed-width and aligned, so no address is lifted in two blocks.
        self.listing.sort_by_key(|(addr, _)| *addr);
    }

    /// Lifts the guest block at `start` into the current IR block, up to its terminator or the next block.
    fn lift_block(&mut self, lx: &mut Lifter<'_>, blocks: &BTreeMap<GuestAddr, Block>, start: GuestAddr) {
        let mut pc = start;
        loop {
            lx.pc = pc;
            let Some(insn) = self.cfg.insns.get(&pc) else {
                self.unlifted(lx, pc);
                return;
            };
            lx.b.mark(pc);
            self.listing.push((pc, insn.text()));
            let next = insn.next();
            match insn.row.flow {
                Flow::Plain(handler) => handler(lx, insn),
                _ => {
                    let mut diags = Vec::new();
                    let ended = branch::lift_control(lx, self.cfg, blocks, insn, &mut diags);
                    self.diagnostics.append(&mut diags);
                    if ended {
                        return;
                    }
                }
            }
            if let Some(&block) = blocks.get(&next) {
                lx.b.jump(block, Vec::new());
                return;
            }
            pc = next;
        }
    }

    /// Ends the block with `exit pc, unlifted` and records why.
    fn unlifted(&mut self, lx: &mut Lifter<'_>, pc: GuestAddr) {
        let (message, text) = match self.cfg.failures.get(&pc) {
            Some(f @ Failure::Unknown(word)) => (describe_failure(f), format!(".long {word:#010x}")),
            Some(f @ Failure::NotCode) => (describe_failure(f), "(not code)".to_string()),
            None => (
                "no instruction was decoded here".to_string(),
                "(not decoded)".to_string(),
            ),
        };
        // Every marked address gets a listing line, so the listing and the line table agree.
        self.listing.push((pc, text));
        self.diagnostics.push(Diagnostic {
            severity: Severity::Error,
            addr: pc,
            message,
        });
        lx.b.mark(pc);
        lx.exit_here(ExitReason::Unlifted);
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
