//! The x87 unit as the lifter sees it: its state, the helpers lifted x87 code calls, their
//! operation numbers and the value models.
//!
//! Model (`x87: f80`, the exact one): the eight physical registers hold 80-bit values, split into
//! two array slots (`st_m`, the 64-bit significand, and `st_e`, sign and exponent) because the IR's
//! `f80` type is the C `long double`, which is the x87 format only on x86 hosts; TOP, a valid-bit
//! per physical register (the tag word's empty/non-empty distinction: the full tag word's
//! zero/special classes are derived from the contents by anyone who needs them), the status word
//! (exception flags, SF, ES, C0-C3, B; TOP lives in its own slot) and the control word.
//!
//! Every x87 instruction is one call of a helper below, which reads and writes those slots. The
//! helpers' one definition is C, `runtime/x87.c` (docs/x87.md): the stack discipline (TOP, tags,
//! stack overflow and underflow with their masked responses) and a unit for the arithmetic, the
//! host's own x87 on x86-64 hosts and a software unit elsewhere. The IR interpreter runs that
//! same C ([`crate::interp`]); the `x87: f64` model ([`Model::F64`]) is x87.c compiled with the
//! unit of `runtime/x87_f64.h`, whose registers hold doubles.

use rpt_ir::interp::{MachineState, Val};
use rpt_ir::{Effects, HelperDecl, StateDesc, Type};

use crate::state::{FPU_CW, FPU_RESULT_E, FPU_SW, FPU_TAGS, FPU_TOP, ST_E, ST_M};

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

/// Operation numbers passed to the helpers; `runtime/x87_defs.h` defines the same (a test checks).
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

    /// Or'd into the kind or operation number of a value form (`x87_vload`, `x87_vstore`,
    /// `x87_varith`, `x87_varith_mem`, `x87_vunary`, `x87_vcom`): compute the value (a compare's
    /// condition codes) alone and leave the status word as it was, for programs in which nothing
    /// reads it (passes/x87-regions decides).
    pub const QUIET: u32 = 0x100;
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
    // What runtime/x87.c reads and writes: the x87 unit's own slots, never a general-purpose
    // register or a flag (`x87_reg` returns an fcomi's condition codes, and the lifted code sets
    // ZF, PF and CF from them), so a function's flags can stay in C locals around every x87 helper.
    let unit = [FPU_CW, FPU_SW, FPU_TOP, FPU_TAGS, ST_M, ST_E, FPU_RESULT_E];
    let decl = |name: &str, params: &[Type], result: Option<Type>| {
        let mut touches = unit.to_vec();
        touches.sort();
        HelperDecl {
            name: name.to_string(),
            params: params.to_vec(),
            result,
            effects: state,
            touches,
        }
    };
    use Type::{I32, I64};
    vec![
        decl(helper::LOAD, &[I32, I64, I32], None),
        decl(helper::STORE, &[I32, I32], Some(I64)),
        decl(helper::ARITH, &[I32, I32, I32, I32], None),
        decl(helper::ARITH_MEM, &[I32, I32, I64], None),
        decl(helper::COM_MEM, &[I32, I64, I32], None),
        decl(helper::OP, &[I32], None),
        decl(helper::REG, &[I32, I32], Some(I32)),
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

impl Fpu {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// `#define X87_<NAME> <n>u` lines of the C runtime, by name.
    fn c_defines() -> std::collections::BTreeMap<String, u32> {
        include_str!("../runtime/x87_defs.h")
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
            ("QUIET", op::QUIET),
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
    }
}
