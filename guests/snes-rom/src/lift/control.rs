//! Branches, jumps, calls, returns, interrupts, WAI, STP and the block moves.
//!
//! - A direct transfer goes to a block of this function when the walk reached that block in the
//!   same widths, and is a tail call of the target's variant otherwise.
//! - JSR, JSL, BRK and COP are calls. RTS, RTL and RTI pull their return address, write it to
//!   `pc` (24 bits) and return; the caller's continuation checks that the guest came back to the
//!   address its call pushed, in the widths the walk assumed, and otherwise goes on through the
//!   function table at the key of where the guest did return.
//! - XCE and PLP the walk could not follow (`Failure::UnknownWidths`) go on through the function
//!   table at the next instruction's key in the widths the state holds.
//! - WAI calls the platform, which runs time forward to an interrupt and takes it; STP halts.
//! - MVN/MVP move one byte each time they run and branch back to themselves until A is $FFFF.

use rpt_api::lift::{BlockContext, Step};
use rpt_ir::{BinaryOp, Block, BlockCall, CallTarget, ExitReason, GuestAddr, IntCC, Terminator, Type, Value};

use super::{Lifter, WAIT, system};
use crate::decode::{Insn, Mode, Widths};
use crate::discover::{self, Failure, W65816};
use crate::state::{A, C, DBR, DEC, IRQ_OFF, N, PBR, PC, V, X, Y, Z};

/// Lifts `insn` if it changes control flow (or is XCE/PLP with widths the walk lost); `None`
/// for everything else.
pub(crate) fn lift(lx: &mut Lifter<'_>, insn: &Insn, cx: &mut BlockContext<'_, W65816>) -> Option<Step> {
    let w = insn.widths;
    let e = w.emulation;
    let op = insn.operand;
    let bank = insn.addr & 0xff_0000;
    let next = insn.next();
    match insn.info.opcode {
        // Conditional branches.
        0x10 | 0x30 | 0x50 | 0x70 | 0x90 | 0xb0 | 0xd0 | 0xf0 => {
            lx.add_cycles(insn.cycles(false, false, false));
            let (slot, when) = match insn.info.opcode {
                0x10 => (N, false),
                0x30 => (N, true),
                0x50 => (V, false),
                0x70 => (V, true),
                0x90 => (C, false),
                0xb0 => (C, true),
                0xd0 => (Z, false),
                _ => (Z, true),
            };
            let flag = lx.b.get(slot);
            let cond = if when { flag } else { lx.b.icmp_imm(IntCC::Eq, flag, 0) };
            let target = insn.relative_target();
            let taken_cycles = taken_cycles(insn, target);
            let taken = goto(lx, cx, target, w, taken_cycles);
            let fall = goto(lx, cx, next, w, 0);
            lx.b.branch(cond, taken, fall);
            Some(Step::Ended)
        }
        // BRA / BRL / JMP abs / JML long.
        0x80 | 0x82 | 0x4c | 0x5c => {
            lx.add_cycles(insn.cycles(false, false, false));
            let target = match insn.info.opcode {
                0x80 | 0x82 => insn.relative_target(),
                0x4c => bank | op,
                _ => op,
            };
            if insn.info.opcode == 0x5c {
                let pbr = lx.k(Type::I8, u64::from(target >> 16));
                lx.b.set(PBR, pbr);
            }
            // BRA's base count includes the branch taken; crossing a page in emulation mode adds one.
            let extra = if insn.info.opcode == 0x80 {
                taken_cycles(insn, target)
            } else {
                0
            };
            let to = goto(lx, cx, target, w, extra);
            lx.b.jump(to, Vec::new());
            Some(Step::Ended)
        }
        // JMP (abs), JMP (abs,X), JML [abs].
        0x6c | 0x7c | 0xdc => {
            lx.add_cycles(insn.cycles(false, false, false));
            let target = indirect_target(lx, insn);
            let key = key_in_widths(lx, target, w);
            lx.b.terminate(Terminator::TailCall {
                target: CallTarget::Indirect(key),
            });
            Some(Step::Ended)
        }
        // JSR abs, JSL long, JSR (abs,X).
        0x20 | 0x22 | 0xfc => {
            lx.add_cycles(insn.cycles(false, false, false));
            let ret = (next.wrapping_sub(1) & 0xffff) as u64;
            let ret = lx.k(Type::I16, ret);
            let callee = match insn.info.opcode {
                0x20 => {
                    lx.push16(ret, e);
                    direct_or_dispatched(lx, cx, bank | op, w)
                }
                0x22 => {
                    let pbr = lx.b.get(PBR);
                    let pbr = lx.b.resize(pbr, Type::I16);
                    lx.push8(pbr, false);
                    lx.push16(ret, false);
                    lx.stack_back_to_page1(e);
                    let target_bank = lx.k(Type::I8, u64::from(op >> 16));
                    lx.b.set(PBR, target_bank);
                    direct_or_dispatched(lx, cx, op, w)
                }
                _ => {
                    lx.push16(ret, false);
                    lx.stack_back_to_page1(e);
                    let target = indirect_target(lx, insn);
                    CallTarget::Indirect(key_in_widths(lx, target, w))
                }
            };
            call_and_check_return(lx, cx, insn, callee);
            Some(Step::Ended)
        }
        // RTS / RTL.
        0x60 | 0x6b => {
            lx.add_cycles(insn.cycles(false, false, false));
            let long = insn.info.opcode == 0x6b;
            let low = lx.pull16(e && !long);
            let bank = if long {
                let b = lx.pull8(false);
                lx.stack_back_to_page1(e);
                let b8 = lx.b.resize(b, Type::I8);
                lx.b.set(PBR, b8);
                lx.b.resize(b, Type::I32)
            } else {
                let pbr = lx.b.get(PBR);
                lx.b.resize(pbr, Type::I32)
            };
            set_return_pc(lx, bank, low);
            lx.b.terminate(Terminator::Return);
            Some(Step::Ended)
        }
        // RTI.
        0x40 => {
            lx.add_cycles(insn.cycles(false, false, false));
            let p = lx.pull8(e);
            system::set_status(lx, p, e);
            let low = lx.pull16(e);
            let bank = if e {
                let pbr = lx.b.get(PBR);
                lx.b.resize(pbr, Type::I32)
            } else {
                let b = lx.pull8(false);
                let b8 = lx.b.resize(b, Type::I8);
                lx.b.set(PBR, b8);
                lx.b.resize(b, Type::I32)
            };
            // RTI pulls the address of the instruction to go on at, not one before it.
            let low = lx.b.binary_imm(BinaryOp::Sub, low, 1);
            set_return_pc(lx, bank, low);
            lx.b.terminate(Terminator::Return);
            Some(Step::Ended)
        }
        // BRK / COP: push the return (past the signature byte) and P, then call the handler.
        0x00 | 0x02 => {
            lx.add_cycles(insn.cycles(false, false, false));
            if !e {
                let pbr = lx.b.get(PBR);
                let pbr = lx.b.resize(pbr, Type::I16);
                lx.push8(pbr, false);
            }
            let ret = lx.k(Type::I16, u64::from(next & 0xffff));
            lx.push16(ret, e);
            let p = system::status_byte(lx, insn);
            lx.push8(p, e);
            let one = lx.k(Type::I1, 1);
            lx.b.set(IRQ_OFF, one);
            let zero = lx.k(Type::I1, 0);
            lx.b.set(DEC, zero);
            let bank0 = lx.k(Type::I8, 0);
            lx.b.set(PBR, bank0);
            let vector = discover::vector_of(insn.info.opcode, e);
            let callee = match discover::vector(cx.walker.image(), vector) {
                Some(handler) if handler >= 0x8000 => direct_or_dispatched(lx, cx, handler, w),
                _ => {
                    // No handler in ROM: read the vector at run time, as the CPU does.
                    let at = lx.k(Type::I32, u64::from(vector));
                    let low = lx.read8(at);
                    let at = lx.k(Type::I32, u64::from(vector + 1));
                    let high = lx.read8(at);
                    let high = lx.b.binary_imm(BinaryOp::Shl, high, 8);
                    let target = lx.b.binary(BinaryOp::Or, high, low);
                    let target = lx.b.resize(target, Type::I32);
                    CallTarget::Indirect(key_in_widths(lx, target, w))
                }
            };
            // RTI comes back to `next`, which is what the check expects of a call.
            call_and_check_return(lx, cx, insn, callee);
            Some(Step::Ended)
        }
        // WAI: the platform runs time to the next interrupt and takes it; the interrupt returns
        // to the instruction after WAI.
        0xcb => {
            lx.add_cycles(insn.cycles(false, false, false));
            let key = lx.key_const(next, w);
            lx.b.call_helper(WAIT, vec![key], None);
            Some(Step::Next(GuestAddr(u64::from(next))))
        }
        // STP.
        0xdb => {
            lx.add_cycles(insn.cycles(false, false, false));
            let key = lx.key_const(insn.addr, w);
            lx.b.terminate(Terminator::Exit {
                pc: key,
                reason: ExitReason::Halt,
            });
            Some(Step::Ended)
        }
        // MVN / MVP.
        0x54 | 0x44 => {
            lx.add_cycles(insn.cycles(false, false, false));
            block_move_byte(lx, insn);
            let a = lx.b.get(A);
            let more = lx.b.icmp_imm(IntCC::Ne, a, 0xffff);
            let again = goto(lx, cx, insn.addr, w, 0);
            let done = goto(lx, cx, next, w, 0);
            lx.b.branch(more, again, done);
            Some(Step::Ended)
        }
        // XCE / PLP whose widths the walk lost: the semantics here, then on through the table.
        0xfb | 0x28
            if matches!(
                cx.cfg.failures.get(&GuestAddr(u64::from(insn.addr))),
                Some(Failure::UnknownWidths(_))
            ) =>
        {
            system::lift(lx, insn);
            let next_addr = lx.k(Type::I32, u64::from(next));
            let key = lx.key_of_state(next_addr);
            lx.b.terminate(Terminator::TailCall {
                target: CallTarget::Indirect(key),
            });
            Some(Step::Ended)
        }
        _ => None,
    }
}

/// A call of `target` in `widths`: direct when the walk found that function, and through the
/// function table otherwise — code outside the image (a routine copied to WRAM), or a "call" the
/// walk decoded from bytes that are not code (the parameters a routine reads after its JSR and
/// returns past, which lifted code never runs: the return check goes where the guest returned).
fn direct_or_dispatched(lx: &mut Lifter<'_>, cx: &BlockContext<'_, W65816>, target: u32, widths: Widths) -> CallTarget {
    let entry = rpt_api::discover::Entry {
        addr: GuestAddr(u64::from(target)),
        context: widths,
    };
    if cx.walker.is_entry(entry) {
        CallTarget::Direct(GuestAddr(widths.key(target)))
    } else {
        CallTarget::Indirect(lx.key_const(target, widths))
    }
}

/// The extra cycles of a taken branch: one, and one more crossing a page in emulation mode.
fn taken_cycles(insn: &Insn, target: u32) -> u32 {
    let crossed = (insn.next() & 0xff00) != (target & 0xff00);
    let base = insn.cycles(false, false, false);
    insn.cycles(false, crossed, true) - base
}

/// Where a direct transfer to `target` in `widths` goes: this function's block when the walk
/// reached it in those widths, else a tail call of that variant (or an exit, for what is not
/// code). A non-zero `cycles` is added on the way.
fn goto(lx: &mut Lifter<'_>, cx: &mut BlockContext<'_, W65816>, target: u32, widths: Widths, cycles: u32) -> Block {
    let addr = GuestAddr(u64::from(target));
    let here = lx.b.current_block();
    let same =
        cx.cfg.block_starts.get(&addr) == Some(&widths) && !cx.walker.is_tail_target(addr, widths, cx.cfg.entry.addr);
    let block = lx.b.create_block();
    lx.b.switch_to_block(block);
    lx.add_cycles(cycles);
    match cx.blocks.get(&addr) {
        Some(&b) if same => lx.b.jump(b, Vec::new()),
        _ if cx.walker.image().is_code(addr) => {
            let target = direct_or_dispatched(lx, cx, target, widths);
            lx.b.terminate(Terminator::TailCall { target });
        }
        _ => {
            let key = lx.key_const(target, widths);
            lx.b.terminate(Terminator::Exit {
                pc: key,
                reason: ExitReason::Unlifted,
            });
        }
    }
    lx.b.switch_to_block(here);
    block
}

/// The 24-bit target of an indirect jump or call: `(abs)` reads a pointer in bank 0 and stays
/// in the program bank, `(abs,X)` reads it in the program bank, `[abs]` reads three bytes in bank
/// 0 and sets the program bank.
fn indirect_target(lx: &mut Lifter<'_>, insn: &Insn) -> Value {
    let bank = insn.addr & 0xff_0000;
    let op = insn.operand;
    let read16 = |lx: &mut Lifter<'_>, at: Value, bank_base: u64| {
        let low = lx.read8(at);
        let next = lx.b.binary_imm(BinaryOp::Add, at, 1);
        let next = lx.b.binary_imm(BinaryOp::And, next, 0xffff);
        let next = lx.b.binary_imm(BinaryOp::Or, next, bank_base);
        let high = lx.read8(next);
        let high = lx.b.binary_imm(BinaryOp::Shl, high, 8);
        let v = lx.b.binary(BinaryOp::Or, high, low);
        lx.b.resize(v, Type::I32)
    };
    match insn.info.mode {
        Mode::AbsoluteXIndirect => {
            let x = lx.index32(X);
            let at = lx.b.binary_imm(BinaryOp::Add, x, u64::from(op));
            let at = lx.b.binary_imm(BinaryOp::And, at, 0xffff);
            let at = lx.b.binary_imm(BinaryOp::Or, at, u64::from(bank));
            let ptr = read16(lx, at, u64::from(bank));
            lx.b.binary_imm(BinaryOp::Or, ptr, u64::from(bank))
        }
        Mode::AbsoluteIndirectLong => {
            let at = lx.k(Type::I32, u64::from(op));
            let ptr = read16(lx, at, 0);
            let at = lx.k(Type::I32, u64::from((op + 2) & 0xffff));
            let target_bank = lx.read8(at);
            let b8 = lx.b.resize(target_bank, Type::I8);
            lx.b.set(PBR, b8);
            let target_bank = lx.b.resize(target_bank, Type::I32);
            let target_bank = lx.b.binary_imm(BinaryOp::Shl, target_bank, 16);
            lx.b.binary(BinaryOp::Or, target_bank, ptr)
        }
        _ => {
            let at = lx.k(Type::I32, u64::from(op));
            let ptr = read16(lx, at, 0);
            lx.b.binary_imm(BinaryOp::Or, ptr, u64::from(bank))
        }
    }
}

/// The function key of the 24-bit `target` in the static `widths`.
fn key_in_widths(lx: &mut Lifter<'_>, target: Value, widths: Widths) -> Value {
    lx.b.binary_imm(BinaryOp::Or, target, widths.key(0))
}

/// `pc = bank:(low + 1)`, where a return goes on (RTS and RTL pull the address one before it).
fn set_return_pc(lx: &mut Lifter<'_>, bank: Value, low: Value) {
    let low = lx.b.binary_imm(BinaryOp::Add, low, 1);
    let low = lx.b.resize(low, Type::I32);
    let low = lx.b.binary_imm(BinaryOp::And, low, 0xffff);
    let bank = lx.b.binary_imm(BinaryOp::Shl, bank, 16);
    let pc = lx.b.binary(BinaryOp::Or, bank, low);
    lx.b.set(PC, pc);
}

/// Calls `callee`; when it returns, goes on after the call if the guest came back to the address
/// after it in the widths the walk assumed, and through the function table to wherever it did
/// come back otherwise.
fn call_and_check_return(lx: &mut Lifter<'_>, cx: &mut BlockContext<'_, W65816>, insn: &Insn, callee: CallTarget) {
    let next = insn.next();
    let w = insn.widths;
    let check = lx.b.create_block();
    lx.b.terminate(Terminator::Call {
        target: callee,
        cont: BlockCall::plain(check),
    });
    lx.b.switch_to_block(check);
    let pc = lx.b.get(PC);
    let came_back = lx.key_of_state(pc);
    let expected = w.key(next);
    let as_called = lx.b.icmp_imm(IntCC::Eq, came_back, expected);
    let go_on = if cx.cfg.noreturn_calls.contains(&GuestAddr(u64::from(insn.addr))) {
        lx.block_with(Terminator::Unreachable)
    } else {
        goto(lx, cx, next, w, 0)
    };
    let elsewhere = lx.block_with(Terminator::TailCall {
        target: CallTarget::Indirect(came_back),
    });
    lx.b.branch(as_called, go_on, elsewhere);
}

/// One byte of MVN (up) or MVP (down): from `src:X` to `dst:Y`, both indexes stepped at the index
/// width, A counted down, DBR set to the destination bank.
fn block_move_byte(lx: &mut Lifter<'_>, insn: &Insn) {
    let x8 = insn.widths.x8;
    let dst = insn.operand & 0xff;
    let src = (insn.operand >> 8) & 0xff;
    let x = lx.index32(X);
    let from = lx.b.binary_imm(BinaryOp::Or, x, u64::from(src << 16));
    let byte = lx.read8(from);
    let y = lx.index32(Y);
    let to = lx.b.binary_imm(BinaryOp::Or, y, u64::from(dst << 16));
    lx.write8(to, byte);
    let step = if insn.info.opcode == 0x54 { 1 } else { 0xffff };
    for slot in [X, Y] {
        let v = lx.b.get(slot);
        let v = lx.b.binary_imm(BinaryOp::Add, v, step);
        lx.set_index(slot, v, x8);
    }
    let a = lx.b.get(A);
    let a = lx.b.binary_imm(BinaryOp::Sub, a, 1);
    lx.b.set(A, a);
    let bank = lx.k(Type::I8, u64::from(dst));
    lx.b.set(DBR, bank);
}
