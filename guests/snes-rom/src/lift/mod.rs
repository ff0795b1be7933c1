//! The lifter: one 65816 function variant (an address entered in known widths) into one IR
//! function.
//!
//! `rpt_api::lift` walks the function's blocks; this module lifts one instruction at a time for
//! it. The widths are constants here: every instruction was decoded in the widths the walk
//! carried to it (`Insn::widths`), so an 8-bit `LDA` and a 16-bit one are different IR.
//!
//! - Memory: every data access is a call of the platform's bus (`bus_read`, `bus_write`, one byte
//!   each), which hands over the clock so MMIO sees the time; 16-bit accesses are two, in the
//!   order and with the address wrapping of each addressing mode ([`operand`]).
//! - Time: each instruction adds its cycles to `clock` (the parts only known at run time — D's
//!   low byte, a page crossed, a branch taken — computed where they arise). At the start of each
//!   guest block lifted code compares `clock` with `next_event` and calls `snes_poll` when the
//!   platform's next event is due; the platform takes interrupts there ([`control`]).
//! - Control: a direct call continues at its return only when the callee's RTS/RTL came back to
//!   the address the call pushed, in the widths the walk assumed (`pc` and the width slots say
//!   where it came back to); anything else (a callee that pulled its return address, changed the
//!   widths and returned) goes on through the function table at the place the guest really
//!   returned to. Indirect transfers compute a function key from the target and the widths.

pub(crate) mod alu;
pub(crate) mod control;
pub(crate) mod operand;
pub(crate) mod system;

use rpt_api::LiftResult;
use rpt_api::lift::{self, BlockContext, InsnLifter, Step};
use rpt_ir::{BinaryOp, Block, Effects, FunctionBuilder, GuestAddr, HelperDecl, IntCC, Terminator, Type, Value};

use crate::decode::{Insn, Widths};
use crate::discover::{Failure, W65816, Walker};
use crate::state::{self, CLOCK, EMU, M8, NEXT_EVENT, X8};

/// Reads one byte of the bus: `(addr: i32) -> i8`.
pub const BUS_READ: &str = "bus_read";
/// Writes one byte to the bus: `(addr: i32, value: i8)`.
pub const BUS_WRITE: &str = "bus_write";
/// The platform's events are due: `(pc_key: i32)`; may take an interrupt (running its handler).
pub const POLL: &str = "snes_poll";
/// WAI: `(pc_key: i32)`; waits for an interrupt and takes it.
pub const WAIT: &str = "snes_wait";

/// Master clocks (21.477 MHz) a CPU cycle takes, as lifted code counts them: 8, a cycle on slow
/// memory (WRAM, SlowROM). The console's cycles are 6 clocks on FastROM and I/O and 12 on the
/// joypad ports; counting each as 8 keeps frames the right length for code whose timing is not
/// cycle-exact, which is what the platform's scanline events need (the platform's README).
pub const MASTER_CLOCKS_PER_CYCLE: u64 = 8;

/// The helpers lifted 65816 code calls.
pub fn helpers() -> Vec<HelperDecl> {
    let bus = Effects {
        reads_state: true,
        writes_state: true,
        reads_memory: true,
        writes_memory: true,
        ..Effects::PURE
    };
    let everything = Effects {
        reads_state: true,
        reads_flags: true,
        writes_state: true,
        reads_memory: true,
        writes_memory: true,
        may_exit: true,
    };
    vec![
        HelperDecl {
            name: BUS_READ.to_string(),
            params: vec![Type::I32],
            result: Some(Type::I8),
            effects: bus,
            touches: vec![CLOCK, NEXT_EVENT],
        },
        HelperDecl {
            name: BUS_WRITE.to_string(),
            params: vec![Type::I32, Type::I8],
            result: None,
            effects: bus,
            touches: vec![CLOCK, NEXT_EVENT],
        },
        HelperDecl {
            name: POLL.to_string(),
            params: vec![Type::I32],
            result: None,
            effects: everything,
            touches: Vec::new(),
        },
        HelperDecl {
            name: WAIT.to_string(),
            params: vec![Type::I32],
            result: None,
            effects: everything,
            touches: Vec::new(),
        },
    ]
}

/// The state of lifting one instruction.
pub struct Lifter<'a> {
    /// The builder, positioned in the block the instruction continues.
    pub(crate) b: FunctionBuilder<'a>,
    /// The instruction's address (24 bits).
    pub(crate) pc: u32,
    /// Whether the next instruction starts a guest block (where lifted code polls for events).
    block_start: bool,
}

impl Lifter<'_> {
    /// An integer constant of type `ty`.
    pub(crate) fn k(&mut self, ty: Type, v: u64) -> Value {
        self.b.iconst(ty, v)
    }

    /// Adds `cycles` (an i64 value) to the clock.
    pub(crate) fn add_clock(&mut self, cycles: Value) {
        let clock = self.b.get(CLOCK);
        let clock = self.b.binary(BinaryOp::Add, clock, cycles);
        self.b.set(CLOCK, clock);
    }

    /// Adds a constant number of CPU cycles to the clock.
    pub(crate) fn add_cycles(&mut self, cycles: u32) {
        if cycles > 0 {
            let n = self.k(Type::I64, u64::from(cycles) * MASTER_CLOCKS_PER_CYCLE);
            self.add_clock(n);
        }
    }

    /// Adds one CPU cycle when the i1 `cond` holds.
    pub(crate) fn add_cycle_if(&mut self, cond: Value) {
        let one = self.b.resize(cond, Type::I64);
        let clocks = self.b.binary_imm(BinaryOp::Mul, one, MASTER_CLOCKS_PER_CYCLE);
        self.add_clock(clocks);
    }

    /// Ends the current block with `term` in a new block of its own, returned.
    pub(crate) fn block_with(&mut self, term: Terminator) -> Block {
        let here = self.b.current_block();
        let block = self.b.create_block();
        self.b.switch_to_block(block);
        self.b.terminate(term);
        self.b.switch_to_block(here);
        block
    }

    /// The function key of the code at `addr` entered in `widths`, as an i32 constant.
    pub(crate) fn key_const(&mut self, addr: u32, widths: Widths) -> Value {
        self.k(Type::I32, widths.key(addr))
    }

    /// The function key of the 24-bit address `addr` (an i32 value) in the widths the state
    /// holds now.
    pub(crate) fn key_of_state(&mut self, addr: Value) -> Value {
        let mut key = addr;
        for (slot, bit) in [(EMU, 26u64), (M8, 25), (X8, 24)] {
            let flag = self.b.get(slot);
            let clear = self.b.icmp_imm(IntCC::Eq, flag, 0);
            let wide = self.b.resize(clear, Type::I32);
            let placed = self.b.binary_imm(BinaryOp::Shl, wide, bit);
            key = self.b.binary(BinaryOp::Or, key, placed);
        }
        key
    }

    /// Polls for the platform's events at a block start: `snes_poll(key)` when `clock` has
    /// reached `next_event`.
    fn poll_events(&mut self, widths: Widths) {
        let clock = self.b.get(CLOCK);
        let next = self.b.get(NEXT_EVENT);
        let due = self.b.icmp(IntCC::Uge, clock, next);
        let poll = self.b.create_block();
        let go_on = self.b.create_block();
        self.b.branch(due, poll, go_on);
        self.b.switch_to_block(poll);
        let key = self.key_const(self.pc, widths);
        self.b.call_helper(POLL, vec![key], None);
        self.b.jump(go_on, Vec::new());
        self.b.switch_to_block(go_on);
    }
}

impl<'f> InsnLifter<'f, W65816> for Lifter<'f> {
    const PC_TYPE: Type = Type::I32;

    fn builder(&mut self) -> &mut FunctionBuilder<'f> {
        &mut self.b
    }

    fn start_block(&mut self) {
        self.block_start = true;
    }

    fn set_pc(&mut self, pc: GuestAddr) {
        self.pc = (pc.0 & 0xff_ffff) as u32;
    }

    fn exit_pc(&self, addr: GuestAddr, context: Widths) -> GuestAddr {
        GuestAddr(context.key((addr.0 & 0xff_ffff) as u32))
    }

    fn listing_text(&mut self, insn: &Insn) -> String {
        format!("{insn}")
    }

    fn undecoded_listing_text(&mut self, failure: Option<&Failure>) -> Option<String> {
        match failure {
            Some(Failure::Truncated) => Some("(truncated instruction)".to_string()),
            _ => None,
        }
    }

    fn lift(&mut self, insn: &Insn, cx: &mut BlockContext<'_, W65816>) -> Step {
        if std::mem::take(&mut self.block_start) {
            self.poll_events(insn.widths);
        }
        if let Some(step) = control::lift(self, insn, cx) {
            return step;
        }
        if !system::lift(self, insn) && !alu::lift(self, insn) {
            return Step::Unliftable;
        }
        Step::Next(GuestAddr(u64::from(insn.next())))
    }
}

/// The walker's entry for the function key `key`.
fn entry_of(key: GuestAddr) -> Option<(GuestAddr, Widths)> {
    Widths::from_key(key.0).map(|(addr, widths)| (GuestAddr(u64::from(addr)), widths))
}

/// Lifts the function variant named by the key `entry`.
pub(crate) fn lift_function(walker: &Walker<'_>, entry: GuestAddr) -> Option<LiftResult> {
    let (addr, widths) = entry_of(entry)?;
    let mut lifted = lift::lift_function_in(walker, addr, widths, &state::state_desc(), |b, lifting| {
        lifting.lift_blocks(Lifter {
            b,
            pc: addr.0 as u32,
            block_start: false,
        })
    });
    lifted.function.entry = entry;
    Some(lifted)
}

/// The instruction named by the key `key` lifted alone for the run-time tier.
pub(crate) fn lift_instruction(walker: &Walker<'_>, key: GuestAddr) -> Option<LiftResult> {
    let (addr, widths) = entry_of(key)?;
    let mut lifted = lift::lift_instruction_in(walker, addr, widths, &state::state_desc(), |b, lifting| {
        lifting.lift_blocks(Lifter {
            b,
            pc: addr.0 as u32,
            block_start: false,
        })
    })?;
    lifted.function.entry = key;
    Some(lifted)
}
