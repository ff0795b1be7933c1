//! The x87 unit: its state, the helpers lifted x87 code calls, and their reference semantics.
//!
//! Model (`x87: f80`, the exact one): the eight physical registers hold 80-bit values, split into
//! two array slots (`st_m`, the 64-bit significand, and `st_e`, sign and exponent) because the IR's
//! `f80` type is the C `long double`, which is the x87 format only on x86 hosts; TOP, a valid-bit
//! per physical register (the tag word's empty/non-empty distinction: the full tag word's
//! zero/special classes are derived from the contents by anyone who needs them), the status word
//! (exception flags, SF, ES, C0-C3, B; TOP lives in its own slot) and the control word.
//!
//! Every x87 instruction is one call of a helper below, which reads and writes those slots: the
//! stack discipline (TOP, tags, stack overflow and underflow with their masked responses) is
//! written out here and in the C runtime (`runtime/x87.c`) the same way, and the arithmetic is the
//! real x87 unit's: [`host`] runs the guest's own instruction on the host's x87 with the guest's
//! control word (precision and rounding control included), which is exact by construction. On
//! AArch64 and LoongArch64 hosts the C runtime uses a software implementation instead
//! (docs/x87.md says how exact it is).
//!
//! Exception flags are sticky and exact; unmasked exceptions set ES and B but do not trap (the
//! guest's exception handler is not called).
//!
//! The `x87: f64` model ([`Model::F64`]) keeps this stack logic and swaps the unit for the one in
//! `double.rs`, whose registers hold doubles (docs/x87.md says when it is exact).

mod double;
#[cfg(target_arch = "x86_64")]
mod host;

use rpt_ir::interp::{InterpError, MachineState, Val};
use rpt_ir::{Effects, HelperDecl, StateDesc, Type};

use crate::state::{CF, FPU_CW, FPU_RESULT_E, FPU_SW, FPU_TAGS, FPU_TOP, OF, PF, SF, ST_E, ST_M, ZF};

/// An 80-bit extended value: the explicit-integer-bit significand and the sign-and-exponent word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct F80 {
    /// Bits 0-63: the significand, integer bit included.
    pub m: u64,
    /// Bits 64-79: the sign (bit 15) and the biased exponent.
    pub se: u16,
}

impl F80 {
    /// +0.0.
    pub const ZERO: F80 = F80 { m: 0, se: 0 };
    /// The "real indefinite" QNaN the unit produces for invalid operations.
    pub const INDEFINITE: F80 = F80 {
        m: 0xc000_0000_0000_0000,
        se: 0xffff,
    };

    /// The value from its ten little-endian bytes.
    pub fn from_bytes(b: [u8; 10]) -> F80 {
        let mut m = [0u8; 8];
        m.copy_from_slice(&b[..8]);
        F80 {
            m: u64::from_le_bytes(m),
            se: u16::from_le_bytes([b[8], b[9]]),
        }
    }

    /// The ten little-endian bytes of the memory format.
    pub fn to_bytes(self) -> [u8; 10] {
        let mut b = [0u8; 10];
        b[..8].copy_from_slice(&self.m.to_le_bytes());
        b[8..].copy_from_slice(&self.se.to_le_bytes());
        b
    }

    /// The value from the low 80 bits of `bits`.
    pub fn from_u128(bits: u128) -> F80 {
        F80 {
            m: bits as u64,
            se: (bits >> 64) as u16,
        }
    }
}

/// A memory operand's format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// IEEE single (`fld m32`).
    F32 = 0,
    /// IEEE double.
    F64 = 1,
    /// The 80-bit format itself.
    F80 = 2,
    /// A 16-bit integer (`fild m16`).
    I16 = 3,
    /// A 32-bit integer.
    I32 = 4,
    /// A 64-bit integer.
    I64 = 5,
}

impl Kind {
    /// The kind with this helper-argument number.
    pub fn from_arg(n: u64) -> Option<Kind> {
        Some(match n {
            0 => Kind::F32,
            1 => Kind::F64,
            2 => Kind::F80,
            3 => Kind::I16,
            4 => Kind::I32,
            5 => Kind::I64,
            _ => return None,
        })
    }

    /// The mask of the memory format's bits (the significand's, for f80).
    pub fn mask(self) -> u64 {
        match self {
            Kind::F32 | Kind::I32 => 0xffff_ffff,
            Kind::I16 => 0xffff,
            Kind::F64 | Kind::I64 | Kind::F80 => u64::MAX,
        }
    }

    /// What a masked invalid-operation store writes: the QNaN indefinite or the integer indefinite.
    fn indefinite(self) -> u64 {
        match self {
            Kind::F32 => 0xffc0_0000,
            Kind::F64 => 0xfff8_0000_0000_0000,
            Kind::F80 => F80::INDEFINITE.m,
            Kind::I16 => 0x8000,
            Kind::I32 => 0x8000_0000,
            Kind::I64 => 0x8000_0000_0000_0000,
        }
    }
}

/// Operation numbers passed to the helpers; `runtime/x87.c` defines the same (a test checks).
pub mod op {
    /// `x87_arith`: st(dst) = st(dst) + src. The numbers are the opcodes' reg fields.
    pub const ADD: u32 = 0;
    /// Multiply.
    pub const MUL: u32 = 1;
    /// st(dst) - src.
    pub const SUB: u32 = 4;
    /// src - st(dst).
    pub const SUBR: u32 = 5;
    /// st(dst) / src.
    pub const DIV: u32 = 6;
    /// src / st(dst).
    pub const DIVR: u32 = 7;

    /// `x87_op`: the instructions without operands.
    pub const FCHS: u32 = 0;
    /// `fabs`.
    pub const FABS: u32 = 1;
    /// `fsqrt`.
    pub const FSQRT: u32 = 2;
    /// `frndint`.
    pub const FRNDINT: u32 = 3;
    /// `f2xm1`.
    pub const F2XM1: u32 = 4;
    /// `fsin`.
    pub const FSIN: u32 = 5;
    /// `fcos`.
    pub const FCOS: u32 = 6;
    /// `fptan`.
    pub const FPTAN: u32 = 7;
    /// `fsincos`.
    pub const FSINCOS: u32 = 8;
    /// `fpatan`.
    pub const FPATAN: u32 = 9;
    /// `fyl2x`.
    pub const FYL2X: u32 = 10;
    /// `fyl2xp1`.
    pub const FYL2XP1: u32 = 11;
    /// `fscale`.
    pub const FSCALE: u32 = 12;
    /// `fprem`.
    pub const FPREM: u32 = 13;
    /// `fprem1`.
    pub const FPREM1: u32 = 14;
    /// `fxtract`.
    pub const FXTRACT: u32 = 15;
    /// `ftst`.
    pub const FTST: u32 = 16;
    /// `fxam`.
    pub const FXAM: u32 = 17;
    /// `fincstp`.
    pub const FINCSTP: u32 = 18;
    /// `fdecstp`.
    pub const FDECSTP: u32 = 19;
    /// `fninit`.
    pub const FNINIT: u32 = 20;
    /// `fnclex`.
    pub const FNCLEX: u32 = 21;
    /// `fld1`.
    pub const FLD1: u32 = 22;
    /// `fldz`.
    pub const FLDZ: u32 = 23;
    /// `fldpi`.
    pub const FLDPI: u32 = 24;
    /// `fldl2e`.
    pub const FLDL2E: u32 = 25;
    /// `fldl2t`.
    pub const FLDL2T: u32 = 26;
    /// `fldlg2`.
    pub const FLDLG2: u32 = 27;
    /// `fldln2`.
    pub const FLDLN2: u32 = 28;
    /// `fcompp`.
    pub const FCOMPP: u32 = 29;
    /// `fucompp`.
    pub const FUCOMPP: u32 = 30;

    /// `x87_reg`: `fld st(i)`.
    pub const FLD: u32 = 0;
    /// `fst st(i)`.
    pub const FST: u32 = 1;
    /// `fstp st(i)`.
    pub const FSTP: u32 = 2;
    /// `fxch st(i)`.
    pub const FXCH: u32 = 3;
    /// `ffree st(i)`.
    pub const FFREE: u32 = 4;
    /// `ffreep st(i)`.
    pub const FFREEP: u32 = 5;
    /// `fcom st(i)`; the compare numbers below are 6 + (pop) + 2 * (unordered) + 4 * (to EFLAGS).
    pub const FCOM: u32 = 6;
    /// `fcomi st(0), st(i)`.
    pub const FCOMI: u32 = 10;

    /// `x87_store` flags: pop after storing.
    pub const STORE_POP: u32 = 1;
    /// `x87_store` flags: truncate (fisttp).
    pub const STORE_TRUNCATE: u32 = 2;
    /// `x87_store` flags: return the sign-and-exponent word of an f80 store instead of the significand.
    pub const STORE_HIGH: u32 = 4;
}

/// Helper names.
pub mod helper {
    /// `x87_load(kind, lo: i64, hi: i32)`: push a memory operand (fld/fild).
    pub const LOAD: &str = "x87_load";
    /// `x87_store(kind, flags) -> i64`: st(0) as memory bits (fst/fstp/fist/fistp/fisttp).
    pub const STORE: &str = "x87_store";
    /// `x87_arith(op, dst, src, pop)`: register arithmetic.
    pub const ARITH: &str = "x87_arith";
    /// `x87_arith_mem(op, kind, bits: i64)`: st(0) = st(0) op memory.
    pub const ARITH_MEM: &str = "x87_arith_mem";
    /// `x87_com_mem(kind, bits: i64, pop)`: fcom/fcomp/ficom/ficomp with a memory operand.
    pub const COM_MEM: &str = "x87_com_mem";
    /// `x87_op(op)`: the instructions without operands.
    pub const OP: &str = "x87_op";
    /// `x87_reg(op, i)`: the instructions with one register operand st(i).
    pub const REG: &str = "x87_reg";
    /// `x87_fcmov(i, cond)`: st(0) = st(i) when cond is 1.
    pub const FCMOV: &str = "x87_fcmov";

    // The value forms: what one instruction does to its operand values and to the status word
    // when no stack fault can happen, for code that keeps st(i) in its own values (the
    // x87-regions pass). Registers travel as a significand (`m`, i64) and a sign-and-exponent
    // word (`e`, i32); a result's significand is returned and its `e` left in `fpu_result_e`.
    // None of them touches TOP, the tags or the registers.

    /// `x87_vload(kind, lo, hi) -> m`: the value `fld`/`fild` of a memory operand pushes.
    pub const VLOAD: &str = "x87_vload";
    /// `x87_vstore(kind, flags, am, ae) -> bits`: `fst`/`fist`/`fisttp` of a value (no pop).
    pub const VSTORE: &str = "x87_vstore";
    /// `x87_varith(op, am, ae, bm, be) -> m`: `a op b`, as `x87_arith` with a = st(dst), b = st(src).
    pub const VARITH: &str = "x87_varith";
    /// `x87_varith_mem(op, kind, am, ae, bits) -> m`: `a op memory`.
    pub const VARITH_MEM: &str = "x87_varith_mem";
    /// `x87_vcom(which, am, ae, bm, be) -> codes`: a register compare (`which` as `x87_reg`'s,
    /// its pop bit ignored); returns C0, C2, C3, and sets them in the status word unless it is an
    /// fcomi form, whose EFLAGS the caller sets from them.
    pub const VCOM: &str = "x87_vcom";
    /// `x87_vcom_mem(kind, am, ae, bits) -> codes`: fcom/ficom with a memory operand (no pop).
    pub const VCOM_MEM: &str = "x87_vcom_mem";
    /// `x87_vunary(op, am, ae) -> m`: fchs, fabs, fsqrt, frndint.
    pub const VUNARY: &str = "x87_vunary";
    /// `x87_vconst(op) -> m`: the constant fld1, fldz, fldpi, ... push.
    pub const VCONST: &str = "x87_vconst";
}

/// The helpers x87 code calls, with their signatures.
pub fn helpers() -> Vec<HelperDecl> {
    let state = Effects {
        reads_state: true,
        writes_state: true,
        ..Effects::PURE
    };
    let decl = |name: &str, params: &[Type], result: Option<Type>| HelperDecl {
        name: name.to_string(),
        params: params.to_vec(),
        result,
        effects: state,
    };
    use Type::{I32, I64};
    vec![
        decl(helper::LOAD, &[I32, I64, I32], None),
        decl(helper::STORE, &[I32, I32], Some(I64)),
        decl(helper::ARITH, &[I32, I32, I32, I32], None),
        decl(helper::ARITH_MEM, &[I32, I32, I64], None),
        decl(helper::COM_MEM, &[I32, I64, I32], None),
        decl(helper::OP, &[I32], None),
        decl(helper::REG, &[I32, I32], None),
        decl(helper::FCMOV, &[I32, I32], None),
        decl(helper::VLOAD, &[I32, I64, I32], Some(I64)),
        decl(helper::VSTORE, &[I32, I32, I64, I32], Some(I64)),
        decl(helper::VARITH, &[I32, I64, I32, I64, I32], Some(I64)),
        decl(helper::VARITH_MEM, &[I32, I32, I64, I32, I64], Some(I64)),
        decl(helper::VCOM, &[I32, I64, I32, I64, I32], Some(I32)),
        decl(helper::VCOM_MEM, &[I32, I64, I32, I64], Some(I32)),
        decl(helper::VUNARY, &[I32, I64, I32], Some(I64)),
        decl(helper::VCONST, &[I32], Some(I64)),
    ]
}

/// Status word bits.
pub mod sw {
    /// Invalid operation.
    pub const IE: u16 = 1;
    /// The six exception flags.
    pub const EXCEPTIONS: u16 = 0x3f;
    /// Stack fault.
    pub const SF: u16 = 0x40;
    /// Exception summary.
    pub const ES: u16 = 0x80;
    /// Condition code 0.
    pub const C0: u16 = 0x100;
    /// Condition code 1.
    pub const C1: u16 = 0x200;
    /// Condition code 2.
    pub const C2: u16 = 0x400;
    /// Condition code 3.
    pub const C3: u16 = 0x4000;
    /// Busy (mirrors ES).
    pub const B: u16 = 0x8000;
    /// The TOP field.
    pub const TOP: u16 = 0x3800;
}

/// The control word `fninit` sets: every exception masked, 64-bit precision, round to nearest.
pub const CW_INIT: u16 = 0x037f;
/// The control word Windows starts a process with: as `fninit`, but 53-bit precision.
pub const CW_WINDOWS: u16 = 0x027f;

/// The whole x87 state, as the helpers see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fpu {
    /// Control word.
    pub cw: u16,
    /// Status word without TOP.
    pub sw: u16,
    /// TOP.
    pub top: u8,
    /// Bit i set: physical register i is not empty.
    pub tags: u8,
    /// Physical registers.
    pub regs: [F80; 8],
}

/// The arithmetic the stack logic delegates (the real unit in [`host`]).
trait Unit {
    fn load(&self, cw: u16, kind: Kind, bits: u64) -> (F80, u16);
    fn store(&self, cw: u16, kind: Kind, truncate: bool, v: F80) -> (u64, u16);
    fn arith(&self, cw: u16, op: u32, a: F80, b: F80) -> (F80, u16);
    fn compare(&self, cw: u16, unordered: bool, a: F80, b: F80) -> u16;
    fn unary(&self, cw: u16, op: u32, a: F80) -> (F80, F80, u16);
    fn binary(&self, cw: u16, op: u32, a: F80, b: F80) -> (F80, u16);
    fn constant(&self, cw: u16, op: u32) -> F80;
    fn arith_memory(&self, cw: u16, op: u32, kind: Kind, a: F80, bits: u64) -> (F80, u16);
    fn compare_memory(&self, cw: u16, kind: Kind, a: F80, bits: u64) -> u16;

    /// What a register holds after an invalid operation or a stack fault.
    fn indefinite(&self) -> F80 {
        F80::INDEFINITE
    }
    /// Whether a register value is a NaN.
    fn is_nan(&self, v: F80) -> bool {
        is_nan(v)
    }
    /// A register value's sign.
    fn sign(&self, v: F80) -> bool {
        v.se & 0x8000 != 0
    }
    /// The register value of an 80-bit memory operand (`fld m80`).
    fn load_f80(&self, _cw: u16, v: F80) -> (F80, u16) {
        (v, 0)
    }
    /// A register value in the 80-bit memory format (`fstp m80`).
    fn to_f80(&self, v: F80) -> F80 {
        v
    }
}

#[cfg(target_arch = "x86_64")]
struct HostUnit;

#[cfg(target_arch = "x86_64")]
impl Unit for HostUnit {
    fn load(&self, cw: u16, kind: Kind, bits: u64) -> (F80, u16) {
        host::load(cw, kind, bits)
    }
    fn store(&self, cw: u16, kind: Kind, truncate: bool, v: F80) -> (u64, u16) {
        host::store(cw, kind, truncate, v)
    }
    fn arith(&self, cw: u16, op: u32, a: F80, b: F80) -> (F80, u16) {
        host::arith(cw, op, a, b)
    }
    fn compare(&self, cw: u16, unordered: bool, a: F80, b: F80) -> u16 {
        host::compare(cw, unordered, a, b)
    }
    fn unary(&self, cw: u16, op: u32, a: F80) -> (F80, F80, u16) {
        host::unary(cw, op, a)
    }
    fn binary(&self, cw: u16, op: u32, a: F80, b: F80) -> (F80, u16) {
        host::binary(cw, op, a, b)
    }
    fn constant(&self, cw: u16, op: u32) -> F80 {
        host::constant(cw, op)
    }
    fn arith_memory(&self, cw: u16, op: u32, kind: Kind, a: F80, bits: u64) -> (F80, u16) {
        host::arith_memory(cw, op, kind, a, bits)
    }
    fn compare_memory(&self, cw: u16, kind: Kind, a: F80, bits: u64) -> u16 {
        host::compare_memory(cw, kind, a, bits)
    }
}

use sw::{C0, C1, C2, C3};

impl Fpu {
    /// The state after `fninit`.
    pub fn reset() -> Fpu {
        Fpu {
            cw: CW_INIT,
            sw: 0,
            top: 0,
            tags: 0,
            regs: [F80::ZERO; 8],
        }
    }

    /// The status word as `fnstsw` shows it (TOP included).
    pub fn status_word(&self) -> u16 {
        (self.sw & !sw::TOP) | (u16::from(self.top & 7) << 11)
    }

    /// Reads the state out of the interpreter's slots.
    pub fn from_machine(desc: &StateDesc, m: &MachineState) -> Fpu {
        let mut regs = [F80::ZERO; 8];
        for (i, r) in regs.iter_mut().enumerate() {
            *r = F80 {
                m: m.state.get_indexed(ST_M, i as u64).int(),
                se: m.state.get_indexed(ST_E, i as u64).int() as u16,
            };
        }
        Fpu {
            cw: m.state.get(desc, FPU_CW).int() as u16,
            sw: m.state.get(desc, FPU_SW).int() as u16,
            top: m.state.get(desc, FPU_TOP).int() as u8 & 7,
            tags: m.state.get(desc, FPU_TAGS).int() as u8,
            regs,
        }
    }

    /// Writes the state into the interpreter's slots.
    pub fn to_machine(&self, desc: &StateDesc, m: &mut MachineState) {
        m.state.set(desc, FPU_CW, Val::Int(u64::from(self.cw)));
        m.state.set(desc, FPU_SW, Val::Int(u64::from(self.sw & !sw::TOP)));
        m.state.set(desc, FPU_TOP, Val::Int(u64::from(self.top & 7)));
        m.state.set(desc, FPU_TAGS, Val::Int(u64::from(self.tags)));
        for (i, r) in self.regs.iter().enumerate() {
            m.state.set_indexed(ST_M, i as u64, Val::Int(r.m));
            m.state.set_indexed(ST_E, i as u64, Val::Int(u64::from(r.se)));
        }
    }

    fn phys(&self, i: u32) -> usize {
        (usize::from(self.top) + i as usize) & 7
    }

    fn valid(&self, i: u32) -> bool {
        self.tags >> self.phys(i) & 1 == 1
    }

    fn get(&self, i: u32) -> F80 {
        self.regs[self.phys(i)]
    }

    fn put(&mut self, i: u32, v: F80) {
        let p = self.phys(i);
        self.regs[p] = v;
        self.tags |= 1 << p;
    }

    fn pop(&mut self) {
        self.tags &= !(1 << self.phys(0));
        self.top = (self.top + 1) & 7;
    }

    /// Stack underflow: IE and SF, C1 cleared (the masked response is the caller's).
    fn underflow(&mut self) {
        self.sw = (self.sw | sw::IE | sw::SF) & !C1;
    }

    /// Pushes `v`, or the indefinite on stack overflow (IE, SF, C1 set). C1 is cleared otherwise.
    fn push(&mut self, u: &dyn Unit, v: F80) {
        self.top = (self.top + 7) & 7;
        if self.valid(0) {
            self.sw |= sw::IE | sw::SF | C1;
            self.put(0, u.indefinite());
        } else {
            self.sw &= !C1;
            self.put(0, v);
        }
    }

    /// Merges a host status word: its exception flags (sticky) and the condition codes in `codes`.
    fn merge(&mut self, hw: u16, codes: u16) {
        self.sw = (self.sw | (hw & sw::EXCEPTIONS)) & !codes | (hw & codes);
    }

    /// ES and B follow the unmasked exceptions (they are set, never cleared, here).
    fn summary(&mut self) {
        if self.sw & sw::EXCEPTIONS & !self.cw != 0 {
            self.sw |= sw::ES | sw::B;
        }
    }

    fn load(&mut self, u: &dyn Unit, kind: Kind, lo: u64, hi: u16) {
        if self.valid(7) {
            self.push(u, u.indefinite());
            return;
        }
        let (v, hw) = if kind == Kind::F80 {
            u.load_f80(self.cw, F80 { m: lo, se: hi })
        } else {
            u.load(self.cw, kind, lo)
        };
        self.merge(hw, 0);
        self.push(u, v);
    }

    fn store(&mut self, u: &dyn Unit, kind: Kind, flags: u32) -> u64 {
        let high = flags & op::STORE_HIGH != 0;
        let out = if !self.valid(0) {
            self.underflow();
            match (kind, high) {
                (Kind::F80, true) => u64::from(F80::INDEFINITE.se),
                _ => kind.indefinite(),
            }
        } else if kind == Kind::F80 {
            self.sw &= !C1;
            let v = u.to_f80(self.get(0));
            if high { u64::from(v.se) } else { v.m }
        } else {
            let (bits, hw) = u.store(self.cw, kind, flags & op::STORE_TRUNCATE != 0, self.get(0));
            self.merge(hw, C1);
            bits
        };
        if flags & op::STORE_POP != 0 {
            self.pop();
        }
        out
    }

    fn arith(&mut self, u: &dyn Unit, which: u32, dst: u32, src: u32, pop: bool) {
        if self.valid(dst) && self.valid(src) {
            let (r, hw) = u.arith(self.cw, which, self.get(dst), self.get(src));
            self.merge(hw, C1);
            self.put(dst, r);
        } else {
            self.underflow();
            self.put(dst, u.indefinite());
        }
        if pop {
            self.pop();
        }
    }

    fn arith_mem(&mut self, u: &dyn Unit, which: u32, kind: Kind, bits: u64) {
        if !self.valid(0) {
            self.underflow();
            self.put(0, u.indefinite());
            return;
        }
        let (r, hw) = u.arith_memory(self.cw, which, kind, self.get(0), bits);
        self.merge(hw, C1);
        self.put(0, r);
    }

    /// Compares st(0) with `b`; `None` for b means an empty register. Returns the status word
    /// bits C0, C2, C3 as the comparison leaves them.
    fn compare(&mut self, u: &dyn Unit, b: Option<F80>, unordered: bool) -> u16 {
        match b {
            Some(b) if self.valid(0) => {
                let hw = u.compare(self.cw, unordered, self.get(0), b);
                self.merge(hw, 0);
                self.sw &= !C1;
                hw & (C0 | C2 | C3)
            }
            _ => {
                self.underflow();
                C0 | C2 | C3
            }
        }
    }

    fn set_codes(&mut self, codes: u16) {
        self.sw = (self.sw & !(C0 | C2 | C3)) | codes;
    }

    fn com_mem(&mut self, u: &dyn Unit, kind: Kind, bits: u64, pop: bool) {
        let codes = if self.valid(0) {
            let hw = u.compare_memory(self.cw, kind, self.get(0), bits);
            self.merge(hw, 0);
            self.sw &= !C1;
            hw & (C0 | C2 | C3)
        } else {
            self.underflow();
            C0 | C2 | C3
        };
        self.set_codes(codes);
        if pop {
            self.pop();
        }
    }

    /// The register forms; `eflags` receives ZF, PF, CF for fcomi.
    fn reg(&mut self, u: &dyn Unit, which: u32, i: u32, eflags: &mut Option<(bool, bool, bool)>) {
        match which {
            op::FLD => {
                let under = !self.valid(i);
                let v = if under { u.indefinite() } else { self.get(i) };
                // push clears C1, or sets it on overflow, as an underflow with no overflow needs.
                self.push(u, v);
                if under {
                    // With an overflow too, the underflow's cleared C1 wins (as this CPU does).
                    self.sw = (self.sw | sw::IE | sw::SF) & !C1;
                }
            }
            op::FST | op::FSTP => {
                let v = if self.valid(0) {
                    self.sw &= !C1;
                    self.get(0)
                } else {
                    self.underflow();
                    u.indefinite()
                };
                self.put(i, v);
                if which == op::FSTP {
                    self.pop();
                }
            }
            op::FXCH => {
                let (a, b) = (self.valid(0), self.valid(i));
                let va = if a { self.get(0) } else { u.indefinite() };
                let vb = if b { self.get(i) } else { u.indefinite() };
                if a && b {
                    self.sw &= !C1;
                } else {
                    self.underflow();
                }
                self.put(0, vb);
                self.put(i, va);
            }
            op::FFREE | op::FFREEP => {
                self.tags &= !(1 << self.phys(i));
                if which == op::FFREEP {
                    self.pop();
                }
            }
            _ => {
                let k = which - op::FCOM;
                let (pop, unordered, to_eflags) = (k & 1 != 0, k & 2 != 0, k & 4 != 0);
                let b = self.valid(i).then(|| self.get(i));
                let c1 = self.sw & C1;
                let codes = self.compare(u, b, unordered);
                if to_eflags {
                    // fcomi clears C1 only on a stack underflow (this CPU does; the manual says
                    // it always clears it).
                    if b.is_some() && self.valid(0) {
                        self.sw = (self.sw & !C1) | c1;
                    }
                    *eflags = Some((codes & C3 != 0, codes & C2 != 0, codes & C0 != 0));
                } else {
                    self.set_codes(codes);
                }
                if pop {
                    self.pop();
                }
            }
        }
    }

    fn op(&mut self, u: &dyn Unit, which: u32) {
        match which {
            op::FCHS | op::FABS | op::FSQRT | op::FRNDINT | op::F2XM1 => {
                if self.valid(0) {
                    let (r, _, hw) = u.unary(self.cw, which, self.get(0));
                    self.merge(hw, C1);
                    self.put(0, r);
                } else {
                    self.underflow();
                    self.put(0, u.indefinite());
                }
            }
            op::FSIN | op::FCOS => {
                if self.valid(0) {
                    let (r, _, hw) = u.unary(self.cw, which, self.get(0));
                    self.merge(hw, C1 | C2);
                    if hw & C2 == 0 {
                        self.put(0, r);
                    }
                } else {
                    self.underflow();
                    self.sw &= !C2;
                    self.put(0, u.indefinite());
                }
            }
            op::FPTAN | op::FSINCOS | op::FXTRACT => {
                if !self.valid(0) {
                    self.underflow();
                    self.put(0, u.indefinite());
                    self.push(u, u.indefinite());
                    self.sw &= !(C1 | C2);
                } else if self.valid(7) {
                    self.sw = (self.sw | sw::IE | sw::SF | C1) & !C2;
                    self.put(0, u.indefinite());
                    self.push(u, u.indefinite());
                } else {
                    let (r, pushed, hw) = u.unary(self.cw, which, self.get(0));
                    let codes = if which == op::FXTRACT { C1 } else { C1 | C2 };
                    if hw & C2 != 0 && which != op::FXTRACT {
                        self.merge(hw, codes);
                    } else {
                        self.put(0, r);
                        self.push(u, pushed);
                        self.merge(hw, codes);
                    }
                }
            }
            op::FPATAN | op::FYL2X | op::FYL2XP1 => {
                if self.valid(0) && self.valid(1) {
                    let (r, hw) = u.binary(self.cw, which, self.get(0), self.get(1));
                    self.merge(hw, C1);
                    self.put(1, r);
                } else {
                    self.underflow();
                    self.put(1, u.indefinite());
                }
                self.pop();
            }
            op::FSCALE | op::FPREM | op::FPREM1 => {
                if self.valid(0) && self.valid(1) {
                    let (r, hw) = u.binary(self.cw, which, self.get(0), self.get(1));
                    // A NaN remainder leaves C0 and C3 alone (as this CPU does).
                    let codes = if which == op::FSCALE {
                        C1
                    } else if u.is_nan(r) {
                        C1 | C2
                    } else {
                        C0 | C1 | C2 | C3
                    };
                    self.merge(hw, codes);
                    self.put(0, r);
                } else {
                    self.underflow();
                    if which != op::FSCALE {
                        self.sw &= !C2;
                    }
                    self.put(0, u.indefinite());
                }
            }
            op::FTST => {
                let codes = self.compare(u, Some(F80::ZERO), false);
                self.set_codes(codes);
            }
            op::FXAM => {
                let v = self.get(0);
                let sign = if u.sign(v) { C1 } else { 0 };
                let codes = if self.valid(0) {
                    let (_, _, hw) = u.unary(self.cw, op::FXAM, v);
                    hw & (C0 | C2 | C3)
                } else {
                    C0 | C3
                };
                self.sw = (self.sw & !(C0 | C1 | C2 | C3)) | codes | sign;
            }
            op::FINCSTP => {
                self.top = (self.top + 1) & 7;
                self.sw &= !C1;
            }
            op::FDECSTP => {
                self.top = (self.top + 7) & 7;
                self.sw &= !C1;
            }
            // fninit leaves the registers' contents alone: only their tags say "empty".
            op::FNINIT => {
                *self = Fpu {
                    regs: self.regs,
                    ..Fpu::reset()
                }
            }
            op::FNCLEX => self.sw &= !(sw::EXCEPTIONS | sw::SF | sw::ES | sw::B),
            op::FCOMPP | op::FUCOMPP => {
                let b = self.valid(1).then(|| self.get(1));
                let codes = self.compare(u, b, which == op::FUCOMPP);
                self.set_codes(codes);
                self.pop();
                self.pop();
            }
            _ => {
                let v = u.constant(self.cw, which);
                self.push(u, v);
            }
        }
    }

    /// An empty operand is a stack underflow whatever the condition (as this CPU does).
    fn fcmov(&mut self, u: &dyn Unit, i: u32, cond: bool) {
        if self.valid(0) && self.valid(i) {
            if cond {
                let v = self.get(i);
                self.put(0, v);
            }
        } else {
            self.underflow();
            self.put(0, u.indefinite());
        }
    }
}

fn is_nan(v: F80) -> bool {
    v.se & 0x7fff == 0x7fff && v.m << 1 != 0
}

/// The x87 value model a recipe chooses (`guest_options: {"x87": ...}`; docs/x87.md).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Model {
    /// 80-bit registers, bit-identical to the real unit under every control word (the default).
    #[default]
    F80,
    /// Registers hold doubles: fast, and exact only at 53-bit precision control.
    F64,
}

impl Model {
    /// The model with this option value, if it is one.
    pub fn from_name(name: &str) -> Option<Model> {
        match name {
            "f80" => Some(Model::F80),
            "f64" => Some(Model::F64),
            _ => None,
        }
    }

    /// The model the guest options choose (options are checked before anything asks).
    pub fn from_options(options: &rpt_api::GuestOptions) -> Model {
        match options.get("x87") {
            Some(rpt_api::ParamValue::Str(name)) => Model::from_name(name).unwrap_or_default(),
            _ => Model::F80,
        }
    }
}

/// Runs an x87 helper of the `f80` model for the IR interpreter: `Ok(None)` if `name` is not one.
pub fn call_helper(name: &str, args: &[Val], m: &mut MachineState) -> Result<Option<Option<Val>>, InterpError> {
    call_helper_in(Model::F80, name, args, m)
}

/// Runs an x87 helper of `model` for the IR interpreter: `Ok(None)` if `name` is not one of them.
///
/// The arithmetic runs on the build host's own x87 unit (the f64 model's, where it does not
/// compute in doubles), which only x86-64 build hosts have; elsewhere the helpers report that
/// the interpreter does not support them.
pub fn call_helper_in(
    model: Model,
    name: &str,
    args: &[Val],
    m: &mut MachineState,
) -> Result<Option<Option<Val>>, InterpError> {
    if !name.starts_with("x87_") {
        return Ok(None);
    }
    #[cfg(target_arch = "x86_64")]
    {
        match model {
            Model::F80 => run_helper(&HostUnit, name, args, m),
            Model::F64 => run_helper(&double::F64Unit { exact: &HostUnit }, name, args, m),
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (model, args, m);
        Err(InterpError::Unsupported(format!(
            "@{name}: x87 arithmetic in the interpreter needs an x86-64 build host"
        )))
    }
}

#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
fn run_helper(
    u: &dyn Unit,
    name: &str,
    args: &[Val],
    m: &mut MachineState,
) -> Result<Option<Option<Val>>, InterpError> {
    let desc = crate::state::state_desc();
    let arg = |i: usize| args.get(i).map_or(0, |v| v.int());
    let bad = |what: &str| InterpError::Unsupported(format!("@{name} with {what}"));
    let kind = |i: usize| Kind::from_arg(arg(i)).ok_or_else(|| bad("an unknown operand kind"));
    let mut fpu = Fpu::from_machine(&desc, m);
    if let Some(answer) = value_form(u, name, args, &mut fpu)? {
        let (result, e) = answer;
        fpu.summary();
        m.state.set(&desc, FPU_SW, Val::Int(u64::from(fpu.sw & !sw::TOP)));
        if let Some(e) = e {
            m.state.set(&desc, FPU_RESULT_E, Val::Int(u64::from(e)));
        }
        return Ok(Some(Some(Val::Int(result))));
    }
    let mut eflags = None;
    let mut result = None;
    match name {
        helper::LOAD => fpu.load(u, kind(0)?, arg(1), arg(2) as u16),
        helper::STORE => result = Some(Val::Int(fpu.store(u, kind(0)?, arg(1) as u32))),
        helper::ARITH => fpu.arith(u, arg(0) as u32, arg(1) as u32, arg(2) as u32, arg(3) != 0),
        helper::ARITH_MEM => fpu.arith_mem(u, arg(0) as u32, kind(1)?, arg(2)),
        helper::COM_MEM => fpu.com_mem(u, kind(0)?, arg(1), arg(2) != 0),
        helper::OP => fpu.op(u, arg(0) as u32),
        helper::REG => fpu.reg(u, arg(0) as u32, arg(1) as u32, &mut eflags),
        helper::FCMOV => fpu.fcmov(u, arg(0) as u32, arg(1) & 1 != 0),
        _ => return Ok(None),
    }
    fpu.summary();
    fpu.to_machine(&desc, m);
    if let Some((zf, pf, cf)) = eflags {
        for (slot, v) in [(ZF, zf), (PF, pf), (CF, cf), (OF, false), (SF, false)] {
            m.state.set(&desc, slot, Val::Int(u64::from(v)));
        }
        m.state.set(&desc, crate::state::AF, Val::Int(0));
    }
    Ok(Some(result))
}

/// A value-form helper's result and the `fpu_result_e` it leaves, if any.
type ValueAnswer = (u64, Option<u16>);

/// Runs a value-form helper (`x87_v*`) as the stack form would run it on registers that are not
/// empty: on a scratch unit holding the operands in st(0) and st(1), with the machine's control
/// and status words, so both forms share one definition. `Ok(None)` if `name` is not one.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
fn value_form(u: &dyn Unit, name: &str, args: &[Val], fpu: &mut Fpu) -> Result<Option<ValueAnswer>, InterpError> {
    let arg = |i: usize| args.get(i).map_or(0, |v| v.int());
    let reg = |i: usize| F80 {
        m: arg(i),
        se: arg(i + 1) as u16,
    };
    let kind = |i: usize| {
        Kind::from_arg(arg(i)).ok_or_else(|| InterpError::Unsupported(format!("@{name} with an unknown operand kind")))
    };
    let mut scratch = Fpu {
        top: 0,
        tags: 0,
        ..*fpu
    };
    // Operands in st(0) and st(1); a push lands in physical register 7.
    let hold = |scratch: &mut Fpu, values: &[F80]| {
        for (i, v) in values.iter().enumerate() {
            scratch.put(i as u32, *v);
        }
    };
    let value = |scratch: &Fpu, p: usize| {
        let v = scratch.regs[p];
        (v.m, Some(v.se))
    };
    let answer = match name {
        helper::VLOAD => {
            scratch.load(u, kind(0)?, arg(1), arg(2) as u16);
            value(&scratch, 7)
        }
        helper::VSTORE => {
            hold(&mut scratch, &[reg(2)]);
            let bits = scratch.store(u, kind(0)?, arg(1) as u32 & !op::STORE_POP);
            (bits, None)
        }
        helper::VARITH => {
            hold(&mut scratch, &[reg(1), reg(3)]);
            scratch.arith(u, arg(0) as u32, 0, 1, false);
            value(&scratch, 0)
        }
        helper::VARITH_MEM => {
            hold(&mut scratch, &[reg(2)]);
            scratch.arith_mem(u, arg(0) as u32, kind(1)?, arg(4));
            value(&scratch, 0)
        }
        helper::VCOM => {
            hold(&mut scratch, &[reg(1), reg(3)]);
            let mut eflags = None;
            scratch.reg(u, (arg(0) as u32) & !1, 1, &mut eflags);
            let codes = match eflags {
                Some((zf, pf, cf)) => (if zf { C3 } else { 0 }) | (if pf { C2 } else { 0 }) | (if cf { C0 } else { 0 }),
                None => scratch.sw & (C0 | C2 | C3),
            };
            (u64::from(codes), None)
        }
        helper::VCOM_MEM => {
            hold(&mut scratch, &[reg(1)]);
            scratch.com_mem(u, kind(0)?, arg(3), false);
            (u64::from(scratch.sw & (C0 | C2 | C3)), None)
        }
        helper::VUNARY => {
            hold(&mut scratch, &[reg(1)]);
            scratch.op(u, arg(0) as u32);
            value(&scratch, 0)
        }
        helper::VCONST => {
            scratch.op(u, arg(0) as u32);
            value(&scratch, 7)
        }
        _ => return Ok(None),
    };
    fpu.sw = scratch.sw;
    Ok(Some(answer))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `#define X87_<NAME> <n>u` lines of the C runtime, by name.
    fn c_defines() -> std::collections::BTreeMap<String, u32> {
        include_str!("../../runtime/x87.c")
            .lines()
            .filter_map(|l| {
                let rest = l.strip_prefix("#define X87_")?;
                let (name, value) = rest.split_once(' ')?;
                let digits = value.trim().strip_suffix('u')?;
                let n = match digits.strip_prefix("0x") {
                    Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                    None => digits.parse().ok()?,
                };
                Some((name.to_string(), n))
            })
            .collect()
    }

    #[test]
    fn the_c_runtime_numbers_operations_as_the_lifter_does() {
        let c = c_defines();
        let rust = [
            ("ADD", op::ADD),
            ("MUL", op::MUL),
            ("SUB", op::SUB),
            ("SUBR", op::SUBR),
            ("DIV", op::DIV),
            ("DIVR", op::DIVR),
            ("FCHS", op::FCHS),
            ("FABS", op::FABS),
            ("FSQRT", op::FSQRT),
            ("FRNDINT", op::FRNDINT),
            ("F2XM1", op::F2XM1),
            ("FSIN", op::FSIN),
            ("FCOS", op::FCOS),
            ("FPTAN", op::FPTAN),
            ("FSINCOS", op::FSINCOS),
            ("FPATAN", op::FPATAN),
            ("FYL2X", op::FYL2X),
            ("FYL2XP1", op::FYL2XP1),
            ("FSCALE", op::FSCALE),
            ("FPREM", op::FPREM),
            ("FPREM1", op::FPREM1),
            ("FXTRACT", op::FXTRACT),
            ("FTST", op::FTST),
            ("FXAM", op::FXAM),
            ("FINCSTP", op::FINCSTP),
            ("FDECSTP", op::FDECSTP),
            ("FNINIT", op::FNINIT),
            ("FNCLEX", op::FNCLEX),
            ("FLD1", op::FLD1),
            ("FLDZ", op::FLDZ),
            ("FLDPI", op::FLDPI),
            ("FLDL2E", op::FLDL2E),
            ("FLDL2T", op::FLDL2T),
            ("FLDLG2", op::FLDLG2),
            ("FLDLN2", op::FLDLN2),
            ("FCOMPP", op::FCOMPP),
            ("FUCOMPP", op::FUCOMPP),
            ("FLD", op::FLD),
            ("FST", op::FST),
            ("FSTP", op::FSTP),
            ("FXCH", op::FXCH),
            ("FFREE", op::FFREE),
            ("FFREEP", op::FFREEP),
            ("FCOM", op::FCOM),
            ("FCOMI", op::FCOMI),
            ("STORE_POP", op::STORE_POP),
            ("STORE_TRUNCATE", op::STORE_TRUNCATE),
            ("STORE_HIGH", op::STORE_HIGH),
            ("KIND_F32", Kind::F32 as u32),
            ("KIND_F64", Kind::F64 as u32),
            ("KIND_F80", Kind::F80 as u32),
            ("KIND_I16", Kind::I16 as u32),
            ("KIND_I32", Kind::I32 as u32),
            ("KIND_I64", Kind::I64 as u32),
            ("CW_INIT", u32::from(CW_INIT)),
        ];
        for (name, value) in rust {
            assert_eq!(c.get(name), Some(&value), "X87_{name}");
        }
    }

    #[test]
    fn f80_bytes_round_trip() {
        let v = F80 {
            m: 0xc90f_daa2_2168_c235,
            se: 0x4000,
        };
        assert_eq!(F80::from_bytes(v.to_bytes()), v);
        assert_eq!(F80::from_u128(0x4000_c90f_daa2_2168_c235), v);
    }
}
