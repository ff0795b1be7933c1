//! What the pass knows of the x86 guest's x87 unit: its slots and helpers by name, the operation
//! numbers the helpers take, and which helper calls it can turn into value forms.
//!
//! The numbers repeat `rpt_guest_x86_pe::x87::op` (a test checks they agree): a pass plugin
//! depends on the IR and the plugin API only, never on a guest crate.

use std::collections::BTreeMap;

use rpt_ir::{HelperDecl, Inst, InstKind, SlotId, StateDesc, Value};

/// `x87_arith` operations that the value form takes unchanged (add, mul, sub, subr, div, divr).
const ARITH_OPS: [u32; 6] = [0, 1, 4, 5, 6, 7];
/// `x87_op` numbers of the one-operand operations with a value form: fchs, fabs, fsqrt, frndint.
const UNARY_OPS: [u32; 4] = [0, 1, 2, 3];
/// `x87_op` numbers of the constants (fld1 ... fldln2).
const CONST_OPS: std::ops::RangeInclusive<u32> = 22..=28;
/// `x87_op` numbers of fcompp and fucompp.
const FCOMPP: u32 = 29;
const FUCOMPP: u32 = 30;
/// `x87_reg` numbers.
const FLD: u32 = 0;
const FST: u32 = 1;
const FSTP: u32 = 2;
const FXCH: u32 = 3;
/// The first compare of `x87_reg`: 6 + pop + 2 * unordered + 4 * to-EFLAGS.
pub const FCOM: u32 = 6;
/// `x87_store` flag: pop after storing.
const STORE_POP: u32 = 1;
/// `x87_store` flag: the sign-and-exponent half of an f80 store.
const STORE_HIGH: u32 = 4;
/// The f80 operand kind (its stores take two helper calls; they end a region).
const KIND_F80: u32 = 2;
/// The largest operand kind (i64).
const KIND_LAST: u32 = 5;
/// Or'd into a value form's kind or operation number: the quiet form, which leaves the status word
/// alone (for programs in which nothing reads it).
pub const QUIET: u32 = 0x100;

/// Status-word bits the pass writes itself.
pub mod sw {
    /// The six exception flags.
    pub const EXCEPTIONS: u64 = 0x3f;
    /// Exception summary and busy, which follow the unmasked exceptions.
    pub const ES_B: u64 = 0x8080;
    /// Condition code 1 (cleared by register moves).
    pub const C1: u64 = 0x200;
    /// The bit position of C0, C2 and C3 in the status word.
    pub const C0_SHIFT: u64 = 8;
    /// C2.
    pub const C2_SHIFT: u64 = 10;
    /// C3.
    pub const C3_SHIFT: u64 = 14;
}

/// The helper names, stack forms first.
pub mod helper {
    /// The stack forms the lifter emits.
    pub const STACK_FORMS: [&str; 8] = [
        "x87_load",
        "x87_store",
        "x87_arith",
        "x87_arith_mem",
        "x87_com_mem",
        "x87_op",
        "x87_reg",
        "x87_fcmov",
    ];
    /// `x87_vload(kind, lo, hi) -> m`.
    pub const VLOAD: &str = "x87_vload";
    /// `x87_vstore(kind, flags, am, ae) -> bits`.
    pub const VSTORE: &str = "x87_vstore";
    /// `x87_varith(op, am, ae, bm, be) -> m`.
    pub const VARITH: &str = "x87_varith";
    /// `x87_varith_mem(op, kind, am, ae, bits) -> m`.
    pub const VARITH_MEM: &str = "x87_varith_mem";
    /// `x87_vcom(which, am, ae, bm, be) -> codes`.
    pub const VCOM: &str = "x87_vcom";
    /// `x87_vcom_mem(kind, am, ae, bits) -> codes`.
    pub const VCOM_MEM: &str = "x87_vcom_mem";
    /// `x87_vunary(op, am, ae) -> m`.
    pub const VUNARY: &str = "x87_vunary";
    /// `x87_vconst(op) -> m`.
    pub const VCONST: &str = "x87_vconst";
    /// Every value form.
    pub const VALUE_FORMS: [&str; 8] = [VLOAD, VSTORE, VARITH, VARITH_MEM, VCOM, VCOM_MEM, VUNARY, VCONST];
}

/// The x87 unit's slots in one guest's state.
#[derive(Clone, Debug)]
pub struct Unit {
    /// Control word.
    pub cw: SlotId,
    /// Status word (without TOP).
    pub sw: SlotId,
    /// TOP.
    pub top: SlotId,
    /// One valid bit per physical register.
    pub tags: SlotId,
    /// Significands, an array of 8.
    pub st_m: SlotId,
    /// Signs and exponents, an array of 8.
    pub st_e: SlotId,
    /// Where a value-form helper leaves its result's sign and exponent.
    pub result_e: SlotId,
}

impl Unit {
    /// The unit, if the state has every slot and the program every helper the pass uses.
    pub fn find(state: &StateDesc, helpers: &BTreeMap<String, HelperDecl>) -> Option<Unit> {
        let all_helpers = helper::STACK_FORMS.iter().chain(helper::VALUE_FORMS.iter());
        if !all_helpers.into_iter().all(|h| helpers.contains_key(*h)) {
            return None;
        }
        let slot = |name: &str| state.find(name);
        Some(Unit {
            cw: slot("fpu_cw")?,
            sw: slot("fpu_sw")?,
            top: slot("fpu_top")?,
            tags: slot("fpu_tags")?,
            st_m: slot("st_m")?,
            st_e: slot("st_e")?,
            result_e: slot("fpu_result_e")?,
        })
    }

    /// Whether a slot belongs to the x87 unit (an access to it ends a region).
    pub fn owns(&self, slot: SlotId) -> bool {
        [
            self.cw,
            self.sw,
            self.top,
            self.tags,
            self.st_m,
            self.st_e,
            self.result_e,
        ]
        .contains(&slot)
    }
}

/// An x87 instruction the pass can keep in a region, with its operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `fld`/`fild` of a memory operand: push.
    Load {
        /// Operand kind.
        kind: u32,
        /// The operand's bits.
        lo: Value,
        /// The f80 operand's sign and exponent (0 otherwise).
        hi: Value,
    },
    /// `fld1`, `fldz`, ...: push a constant.
    Const {
        /// The `x87_op` number.
        op: u32,
    },
    /// `fld st(i)`: push a copy.
    LoadReg {
        /// The register.
        i: u32,
    },
    /// `fst`/`fist`/`fisttp` (and the popping forms) to memory; `result` receives the bits.
    Store {
        /// Operand kind.
        kind: u32,
        /// `x87_store` flags without the pop.
        flags: u32,
        /// Whether it pops.
        pop: bool,
        /// The value the stack form returns.
        result: Value,
    },
    /// `fst st(i)` / `fstp st(i)`.
    StoreReg {
        /// The destination register.
        i: u32,
        /// Whether it pops.
        pop: bool,
    },
    /// `fxch st(i)`.
    Xch {
        /// The other register.
        i: u32,
    },
    /// Register arithmetic: st(dst) = st(dst) op st(src).
    Arith {
        /// The operation.
        op: u32,
        /// Destination (and left operand).
        dst: u32,
        /// Right operand.
        src: u32,
        /// Whether it pops.
        pop: bool,
    },
    /// st(0) = st(0) op memory.
    ArithMem {
        /// The operation.
        op: u32,
        /// Operand kind.
        kind: u32,
        /// The operand's bits.
        bits: Value,
    },
    /// A register compare of st(0) with st(i), popping `pops` times.
    Com {
        /// The `x87_reg` compare number without its pop bit.
        which: u32,
        /// The other register.
        i: u32,
        /// 0, 1 or 2 pops.
        pops: u32,
    },
    /// A compare of st(0) with memory.
    ComMem {
        /// Operand kind.
        kind: u32,
        /// The operand's bits.
        bits: Value,
        /// Whether it pops.
        pop: bool,
    },
    /// fchs, fabs, fsqrt, frndint.
    Unary {
        /// The `x87_op` number.
        op: u32,
    },
}

impl Op {
    /// Whether the instruction only moves registers (`fld st(i)`, `fst`/`fstp st(i)`, `fxch`):
    /// on values it computes nothing and calls no helper.
    pub fn is_move(&self) -> bool {
        matches!(self, Op::LoadReg { .. } | Op::StoreReg { .. } | Op::Xch { .. })
    }

    /// Whether a compare sets EFLAGS (fcomi) rather than C0, C2, C3.
    pub fn to_eflags(which: u32) -> bool {
        (which - FCOM) & 4 != 0
    }

    /// The op an instruction is, if it is an x87 stack-form call the pass can keep in a region.
    /// `constant` gives the value of an `iconst` result.
    pub fn recognize(inst: &Inst, constant: &dyn Fn(Value) -> Option<u64>) -> Option<Op> {
        let InstKind::CallHelper { helper, args } = &inst.kind else {
            return None;
        };
        let c = |i: usize| -> Option<u32> { u32::try_from(constant(*args.get(i)?)?).ok() };
        let arg = |i: usize| args.get(i).copied();
        let kind_ok = |k: u32| k <= KIND_LAST;
        let reg_ok = |i: u32| i < 8;
        let op = match helper.as_str() {
            "x87_load" => {
                let kind = c(0).filter(|&k| kind_ok(k))?;
                Op::Load {
                    kind,
                    lo: arg(1)?,
                    hi: arg(2)?,
                }
            }
            "x87_store" => {
                let kind = c(0).filter(|&k| kind_ok(k) && k != KIND_F80)?;
                let flags = c(1).filter(|f| f & STORE_HIGH == 0)?;
                Op::Store {
                    kind,
                    flags: flags & !STORE_POP,
                    pop: flags & STORE_POP != 0,
                    result: inst.result?,
                }
            }
            "x87_arith" => {
                let op = c(0).filter(|o| ARITH_OPS.contains(o))?;
                let (dst, src) = (c(1).filter(|&i| reg_ok(i))?, c(2).filter(|&i| reg_ok(i))?);
                Op::Arith {
                    op,
                    dst,
                    src,
                    pop: c(3)? != 0,
                }
            }
            "x87_arith_mem" => Op::ArithMem {
                op: c(0).filter(|o| ARITH_OPS.contains(o))?,
                kind: c(1).filter(|&k| kind_ok(k))?,
                bits: arg(2)?,
            },
            "x87_com_mem" => Op::ComMem {
                kind: c(0).filter(|&k| kind_ok(k))?,
                bits: arg(1)?,
                pop: c(2)? != 0,
            },
            "x87_reg" => {
                let i = c(1).filter(|&i| reg_ok(i))?;
                match c(0)? {
                    FLD => Op::LoadReg { i },
                    FST => Op::StoreReg { i, pop: false },
                    FSTP => Op::StoreReg { i, pop: true },
                    FXCH => Op::Xch { i },
                    which @ FCOM..=13 => Op::Com {
                        which: which & !1,
                        i,
                        pops: which & 1,
                    },
                    _ => return None,
                }
            }
            "x87_op" => match c(0)? {
                op if UNARY_OPS.contains(&op) => Op::Unary { op },
                op if CONST_OPS.contains(&op) => Op::Const { op },
                FCOMPP => Op::Com {
                    which: FCOM,
                    i: 1,
                    pops: 2,
                },
                FUCOMPP => Op::Com {
                    which: FCOM + 2,
                    i: 1,
                    pops: 2,
                },
                _ => return None,
            },
            _ => return None,
        };
        Some(op)
    }

    /// Whether a helper call is one of the x87 unit's (recognised or not).
    pub fn is_x87_helper(inst: &Inst) -> bool {
        matches!(&inst.kind, InstKind::CallHelper { helper, .. }
            if helper::STACK_FORMS.contains(&helper.as_str()) || helper::VALUE_FORMS.contains(&helper.as_str()))
    }
}
