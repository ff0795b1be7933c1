//! The decoder: a table of bit-pattern rows, one lift function per row (STYLE rule 6).
//!
//! A row matches a 32-bit instruction word when `word & mask == bits`. Rows ignore the bits that
//! select a variant the lift function handles itself (Rc, OE, LK, AA), and the mnemonic printed
//! in listings gets the matching suffixes (`o`, `.`, `l`, `a`). The first matching row wins, so
//! more specific rows (`mr` is not special here; `stwcx.` needs Rc=1) come where they must.

use rpt_ir::GuestAddr;

use crate::lift::{Flow, alu, fp, mem, ps, system};

/// How a row's operands are printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Syntax {
    /// No operands.
    None,
    /// `rD,rA,SIMM`.
    DASimm,
    /// `rD,rA,UIMM` printed as `rA,rS,UIMM` (logical immediates).
    ASUimm,
    /// `rD,d(rA)`.
    DMem,
    /// `frD,d(rA)`.
    FMem,
    /// `rD,rA,rB`.
    DAB,
    /// `frD,rA,rB`.
    FDAB,
    /// `rD,rA`.
    DA,
    /// `rA,rS,rB`.
    ASB,
    /// `rA,rS`.
    AS,
    /// `rA,rS,SH`.
    ASSh,
    /// `rA,rS,SH,MB,ME`.
    Rlwi,
    /// `rA,rS,rB,MB,ME`.
    Rlwnm,
    /// `crfD,L,rA,SIMM` (signed compare immediate).
    CmpSimm,
    /// `crfD,L,rA,UIMM`.
    CmpUimm,
    /// `crfD,L,rA,rB`.
    Cmp,
    /// `target`.
    Branch,
    /// `BO,BI,target`.
    BranchCond,
    /// `BO,BI`.
    BranchReg,
    /// `crbD,crbA,crbB`.
    CrOp,
    /// `crfD,crfS`.
    Mcrf,
    /// `crfD`.
    Crf,
    /// `rD`.
    D,
    /// `CRM,rS`.
    Mtcrf,
    /// `rD,SPR`.
    Mfspr,
    /// `SPR,rS`.
    Mtspr,
    /// `rD,TBR`.
    Mftb,
    /// `rA,rB`.
    AB,
    /// `TO,rA,rB`.
    Trap,
    /// `TO,rA,SIMM`.
    TrapImm,
    /// `rD,rA,NB`.
    Lswi,
    /// `frD,frA,frB`.
    FABC,
    /// `frD,frA,frC`.
    FAC,
    /// `frD,frA,frC,frB`.
    FACB,
    /// `frD,frB`.
    FB,
    /// `crfD,frA,frB`.
    FCmp,
    /// `frD`.
    FD,
    /// `FM,frB`.
    Mtfsf,
    /// `crfD,IMM`.
    Mtfsfi,
    /// `crbD`.
    Crb,
    /// `frD,d(rA),W,I`.
    PsqMem,
    /// `frD,rA,rB,W,I`.
    PsqMemX,
}

/// Which variant bits a row leaves to its lift function (and prints as suffixes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Suffix {
    /// None.
    None,
    /// Bit 0 is Rc (`.`).
    Rc,
    /// Bit 10 is OE (`o`) and bit 0 Rc (`.`).
    OeRc,
    /// Bit 1 is AA (`a`) and bit 0 LK (`l`).
    AaLk,
    /// Bit 0 is LK (`l`).
    Lk,
}

/// One decoder row.
#[derive(Clone, Copy)]
pub struct Row {
    /// The base mnemonic.
    pub name: &'static str,
    /// Bits that must equal `bits`.
    pub mask: u32,
    /// The fixed bits.
    pub bits: u32,
    /// Operand printing.
    pub syntax: Syntax,
    /// Variant bits.
    pub suffix: Suffix,
    /// What the instruction does to control flow, and its lift function.
    pub flow: Flow,
}

const PRIMARY: u32 = 0xfc00_0000;
const X_MASK: u32 = 0xfc00_07fe;
const XO_MASK: u32 = 0xfc00_03fe;
const A_MASK: u32 = 0xfc00_003e;

const fn d(name: &'static str, op: u32, syntax: Syntax, flow: Flow) -> Row {
    Row {
        name,
        mask: PRIMARY,
        bits: op << 26,
        syntax,
        suffix: Suffix::None,
        flow,
    }
}
const fn x(name: &'static str, op: u32, xo: u32, syntax: Syntax, suffix: Suffix, flow: Flow) -> Row {
    Row {
        name,
        mask: X_MASK,
        bits: (op << 26) | (xo << 1),
        syntax,
        suffix,
        flow,
    }
}
const fn xo(name: &'static str, xo: u32, flow: Flow) -> Row {
    Row {
        name,
        mask: XO_MASK,
        bits: (31 << 26) | (xo << 1),
        syntax: Syntax::DAB,
        suffix: Suffix::OeRc,
        flow,
    }
}
const fn xo1(name: &'static str, xo: u32, flow: Flow) -> Row {
    Row {
        name,
        mask: XO_MASK,
        bits: (31 << 26) | (xo << 1),
        syntax: Syntax::DA,
        suffix: Suffix::OeRc,
        flow,
    }
}
const fn a(name: &'static str, op: u32, xo: u32, syntax: Syntax, flow: Flow) -> Row {
    Row {
        name,
        mask: A_MASK,
        bits: (op << 26) | (xo << 1),
        syntax,
        suffix: Suffix::Rc,
        flow,
    }
}
const fn rc(mut row: Row) -> Row {
    row.suffix = Suffix::Rc;
    row
}

use Flow::Plain as P;
use Syntax as S;

/// The table. Rows for paired singles (primary 4, 56, 57, 60, 61) come from [`ps::ROWS`].
pub static ROWS: &[Row] = &[
    // Integer arithmetic, immediate forms.
    d("twi", 3, S::TrapImm, Flow::Trap),
    d("mulli", 7, S::DASimm, P(alu::mulli)),
    d("subfic", 8, S::DASimm, P(alu::subfic)),
    d("cmpli", 10, S::CmpUimm, P(alu::cmpli)),
    d("cmpi", 11, S::CmpSimm, P(alu::cmpi)),
    d("addic", 12, S::DASimm, P(alu::addic)),
    d("addic.", 13, S::DASimm, P(alu::addic_dot)),
    d("addi", 14, S::DASimm, P(alu::addi)),
    d("addis", 15, S::DASimm, P(alu::addis)),
    Row {
        name: "bc",
        mask: PRIMARY,
        bits: 16 << 26,
        syntax: S::BranchCond,
        suffix: Suffix::AaLk,
        flow: Flow::BranchCond,
    },
    Row {
        name: "sc",
        mask: 0xffff_ffff,
        bits: 0x4400_0002,
        syntax: S::None,
        suffix: Suffix::None,
        flow: P(system::sc),
    },
    Row {
        name: "b",
        mask: PRIMARY,
        bits: 18 << 26,
        syntax: S::Branch,
        suffix: Suffix::AaLk,
        flow: Flow::Branch,
    },
    // Primary 19: CR logic and register branches.
    x("mcrf", 19, 0, S::Mcrf, Suffix::None, P(system::mcrf)),
    x("bclr", 19, 16, S::BranchReg, Suffix::Lk, Flow::BranchLr),
    x("crnor", 19, 33, S::CrOp, Suffix::None, P(system::crnor)),
    x("crandc", 19, 129, S::CrOp, Suffix::None, P(system::crandc)),
    x("isync", 19, 150, S::None, Suffix::None, P(system::nop)),
    x("crxor", 19, 193, S::CrOp, Suffix::None, P(system::crxor)),
    x("crnand", 19, 225, S::CrOp, Suffix::None, P(system::crnand)),
    x("crand", 19, 257, S::CrOp, Suffix::None, P(system::crand)),
    x("creqv", 19, 289, S::CrOp, Suffix::None, P(system::creqv)),
    x("crorc", 19, 417, S::CrOp, Suffix::None, P(system::crorc)),
    x("cror", 19, 449, S::CrOp, Suffix::None, P(system::cror)),
    x("bcctr", 19, 528, S::BranchReg, Suffix::Lk, Flow::BranchCtr),
    // Rotates and logical immediates.
    rc(d("rlwimi", 20, S::Rlwi, P(alu::rlwimi))),
    rc(d("rlwinm", 21, S::Rlwi, P(alu::rlwinm))),
    rc(d("rlwnm", 23, S::Rlwnm, P(alu::rlwnm))),
    d("ori", 24, S::ASUimm, P(alu::ori)),
    d("oris", 25, S::ASUimm, P(alu::oris)),
    d("xori", 26, S::ASUimm, P(alu::xori)),
    d("xoris", 27, S::ASUimm, P(alu::xoris)),
    d("andi.", 28, S::ASUimm, P(alu::andi_dot)),
    d("andis.", 29, S::ASUimm, P(alu::andis_dot)),
    // Primary 31: XO-form arithmetic (OE and Rc are the lift function's business).
    xo("subfc", 8, P(alu::subfc)),
    xo("addc", 10, P(alu::addc)),
    xo("subf", 40, P(alu::subf)),
    xo1("neg", 104, P(alu::neg)),
    xo("subfe", 136, P(alu::subfe)),
    xo("adde", 138, P(alu::adde)),
    xo1("subfze", 200, P(alu::subfze)),
    xo1("addze", 202, P(alu::addze)),
    xo1("subfme", 232, P(alu::subfme)),
    xo1("addme", 234, P(alu::addme)),
    xo("mullw", 235, P(alu::mullw)),
    xo("add", 266, P(alu::add)),
    xo("divwu", 459, P(alu::divwu)),
    xo("divw", 491, P(alu::divw)),
    // Primary 31: X-form. mulhw/mulhwu have no OE bit; bit 10 is part of their opcode.
    x("mulhwu", 31, 11, S::DAB, Suffix::Rc, P(alu::mulhwu)),
    x("mulhw", 31, 75, S::DAB, Suffix::Rc, P(alu::mulhw)),
    x("cmp", 31, 0, S::Cmp, Suffix::None, P(alu::cmp)),
    x("tw", 31, 4, S::Trap, Suffix::None, Flow::Trap),
    x("mfcr", 31, 19, S::D, Suffix::None, P(system::mfcr)),
    x("lwarx", 31, 20, S::DAB, Suffix::None, P(mem::lwarx)),
    x("lwzx", 31, 23, S::DAB, Suffix::None, P(mem::lwzx)),
    x("slw", 31, 24, S::ASB, Suffix::Rc, P(alu::slw)),
    x("cntlzw", 31, 26, S::AS, Suffix::Rc, P(alu::cntlzw)),
    x("and", 31, 28, S::ASB, Suffix::Rc, P(alu::and)),
    x("cmpl", 31, 32, S::Cmp, Suffix::None, P(alu::cmpl)),
    x("dcbst", 31, 54, S::AB, Suffix::None, P(system::nop)),
    x("lwzux", 31, 55, S::DAB, Suffix::None, P(mem::lwzux)),
    x("andc", 31, 60, S::ASB, Suffix::Rc, P(alu::andc)),
    x("dcbf", 31, 86, S::AB, Suffix::None, P(system::nop)),
    x("lbzx", 31, 87, S::DAB, Suffix::None, P(mem::lbzx)),
    x("lbzux", 31, 119, S::DAB, Suffix::None, P(mem::lbzux)),
    x("nor", 31, 124, S::ASB, Suffix::Rc, P(alu::nor)),
    x("mtcrf", 31, 144, S::Mtcrf, Suffix::None, P(system::mtcrf)),
    Row {
        name: "stwcx.",
        mask: X_MASK | 1,
        bits: (31 << 26) | (150 << 1) | 1,
        syntax: S::DAB,
        suffix: Suffix::None,
        flow: P(mem::stwcx_dot),
    },
    x("stwx", 31, 151, S::DAB, Suffix::None, P(mem::stwx)),
    x("stwux", 31, 183, S::DAB, Suffix::None, P(mem::stwux)),
    x("stbx", 31, 215, S::DAB, Suffix::None, P(mem::stbx)),
    x("dcbtst", 31, 246, S::AB, Suffix::None, P(system::nop)),
    x("stbux", 31, 247, S::DAB, Suffix::None, P(mem::stbux)),
    x("dcbt", 31, 278, S::AB, Suffix::None, P(system::nop)),
    x("lhzx", 31, 279, S::DAB, Suffix::None, P(mem::lhzx)),
    x("eqv", 31, 284, S::ASB, Suffix::Rc, P(alu::eqv)),
    x("lhzux", 31, 311, S::DAB, Suffix::None, P(mem::lhzux)),
    x("xor", 31, 316, S::ASB, Suffix::Rc, P(alu::xor)),
    x("mfspr", 31, 339, S::Mfspr, Suffix::None, P(system::mfspr)),
    x("lhax", 31, 343, S::DAB, Suffix::None, P(mem::lhax)),
    x("mftb", 31, 371, S::Mftb, Suffix::None, P(system::mftb)),
    x("lhaux", 31, 375, S::DAB, Suffix::None, P(mem::lhaux)),
    x("sthx", 31, 407, S::DAB, Suffix::None, P(mem::sthx)),
    x("orc", 31, 412, S::ASB, Suffix::Rc, P(alu::orc)),
    x("sthux", 31, 439, S::DAB, Suffix::None, P(mem::sthux)),
    x("or", 31, 444, S::ASB, Suffix::Rc, P(alu::or)),
    x("mtspr", 31, 467, S::Mtspr, Suffix::None, P(system::mtspr)),
    x("nand", 31, 476, S::ASB, Suffix::Rc, P(alu::nand)),
    x("mcrxr", 31, 512, S::Crf, Suffix::None, P(system::mcrxr)),
    x("lswx", 31, 533, S::DAB, Suffix::None, P(mem::lswx)),
    x("lwbrx", 31, 534, S::DAB, Suffix::None, P(mem::lwbrx)),
    x("lfsx", 31, 535, S::FDAB, Suffix::None, P(mem::lfsx)),
    x("srw", 31, 536, S::ASB, Suffix::Rc, P(alu::srw)),
    x("lfsux", 31, 567, S::FDAB, Suffix::None, P(mem::lfsux)),
    x("lswi", 31, 597, S::Lswi, Suffix::None, P(mem::lswi)),
    x("sync", 31, 598, S::None, Suffix::None, P(system::nop)),
    x("lfdx", 31, 599, S::FDAB, Suffix::None, P(mem::lfdx)),
    x("lfdux", 31, 631, S::FDAB, Suffix::None, P(mem::lfdux)),
    x("stswx", 31, 661, S::DAB, Suffix::None, P(mem::stswx)),
    x("stwbrx", 31, 662, S::DAB, Suffix::None, P(mem::stwbrx)),
    x("stfsx", 31, 663, S::FDAB, Suffix::None, P(mem::stfsx)),
    x("stfsux", 31, 695, S::FDAB, Suffix::None, P(mem::stfsux)),
    x("stswi", 31, 725, S::Lswi, Suffix::None, P(mem::stswi)),
    x("stfdx", 31, 727, S::FDAB, Suffix::None, P(mem::stfdx)),
    x("stfdux", 31, 759, S::FDAB, Suffix::None, P(mem::stfdux)),
    x("lhbrx", 31, 790, S::DAB, Suffix::None, P(mem::lhbrx)),
    x("sraw", 31, 792, S::ASB, Suffix::Rc, P(alu::sraw)),
    x("srawi", 31, 824, S::ASSh, Suffix::Rc, P(alu::srawi)),
    x("eieio", 31, 854, S::None, Suffix::None, P(system::nop)),
    x("sthbrx", 31, 918, S::DAB, Suffix::None, P(mem::sthbrx)),
    x("extsh", 31, 922, S::AS, Suffix::Rc, P(alu::extsh)),
    x("extsb", 31, 954, S::AS, Suffix::Rc, P(alu::extsb)),
    x("icbi", 31, 982, S::AB, Suffix::None, P(system::nop)),
    x("stfiwx", 31, 983, S::FDAB, Suffix::None, P(mem::stfiwx)),
    x("dcbz", 31, 1014, S::AB, Suffix::None, P(mem::dcbz)),
    // Loads and stores with displacement.
    d("lwz", 32, S::DMem, P(mem::lwz)),
    d("lwzu", 33, S::DMem, P(mem::lwzu)),
    d("lbz", 34, S::DMem, P(mem::lbz)),
    d("lbzu", 35, S::DMem, P(mem::lbzu)),
    d("stw", 36, S::DMem, P(mem::stw)),
    d("stwu", 37, S::DMem, P(mem::stwu)),
    d("stb", 38, S::DMem, P(mem::stb)),
    d("stbu", 39, S::DMem, P(mem::stbu)),
    d("lhz", 40, S::DMem, P(mem::lhz)),
    d("lhzu", 41, S::DMem, P(mem::lhzu)),
    d("lha", 42, S::DMem, P(mem::lha)),
    d("lhau", 43, S::DMem, P(mem::lhau)),
    d("sth", 44, S::DMem, P(mem::sth)),
    d("sthu", 45, S::DMem, P(mem::sthu)),
    d("lmw", 46, S::DMem, P(mem::lmw)),
    d("stmw", 47, S::DMem, P(mem::stmw)),
    d("lfs", 48, S::FMem, P(mem::lfs)),
    d("lfsu", 49, S::FMem, P(mem::lfsu)),
    d("lfd", 50, S::FMem, P(mem::lfd)),
    d("lfdu", 51, S::FMem, P(mem::lfdu)),
    d("stfs", 52, S::FMem, P(mem::stfs)),
    d("stfsu", 53, S::FMem, P(mem::stfsu)),
    d("stfd", 54, S::FMem, P(mem::stfd)),
    d("stfdu", 55, S::FMem, P(mem::stfdu)),
    // Primary 59: single-precision arithmetic.
    a("fdivs", 59, 18, S::FABC, P(fp::fdivs)),
    a("fsubs", 59, 20, S::FABC, P(fp::fsubs)),
    a("fadds", 59, 21, S::FABC, P(fp::fadds)),
    a("fres", 59, 24, S::FB, P(fp::fres)),
    a("fmuls", 59, 25, S::FAC, P(fp::fmuls)),
    a("fmsubs", 59, 28, S::FACB, P(fp::fmsubs)),
    a("fmadds", 59, 29, S::FACB, P(fp::fmadds)),
    a("fnmsubs", 59, 30, S::FACB, P(fp::fnmsubs)),
    a("fnmadds", 59, 31, S::FACB, P(fp::fnmadds)),
    // Primary 63: double-precision arithmetic (A-form) and the rest (X-form).
    a("fdiv", 63, 18, S::FABC, P(fp::fdiv)),
    a("fsub", 63, 20, S::FABC, P(fp::fsub)),
    a("fadd", 63, 21, S::FABC, P(fp::fadd)),
    a("fsel", 63, 23, S::FACB, P(fp::fsel)),
    a("fmul", 63, 25, S::FAC, P(fp::fmul)),
    a("frsqrte", 63, 26, S::FB, P(fp::frsqrte)),
    a("fmsub", 63, 28, S::FACB, P(fp::fmsub)),
    a("fmadd", 63, 29, S::FACB, P(fp::fmadd)),
    a("fnmsub", 63, 30, S::FACB, P(fp::fnmsub)),
    a("fnmadd", 63, 31, S::FACB, P(fp::fnmadd)),
    x("fcmpu", 63, 0, S::FCmp, Suffix::None, P(fp::fcmpu)),
    x("frsp", 63, 12, S::FB, Suffix::Rc, P(fp::frsp)),
    x("fctiw", 63, 14, S::FB, Suffix::Rc, P(fp::fctiw)),
    x("fctiwz", 63, 15, S::FB, Suffix::Rc, P(fp::fctiwz)),
    x("fcmpo", 63, 32, S::FCmp, Suffix::None, P(fp::fcmpo)),
    x("mtfsb1", 63, 38, S::Crb, Suffix::Rc, P(fp::mtfsb1)),
    x("fneg", 63, 40, S::FB, Suffix::Rc, P(fp::fneg)),
    x("mcrfs", 63, 64, S::Mcrf, Suffix::None, P(fp::mcrfs)),
    x("mtfsb0", 63, 70, S::Crb, Suffix::Rc, P(fp::mtfsb0)),
    x("fmr", 63, 72, S::FB, Suffix::Rc, P(fp::fmr)),
    x("mtfsfi", 63, 134, S::Mtfsfi, Suffix::Rc, P(fp::mtfsfi)),
    x("fnabs", 63, 136, S::FB, Suffix::Rc, P(fp::fnabs)),
    x("fabs", 63, 264, S::FB, Suffix::Rc, P(fp::fabs)),
    x("mffs", 63, 583, S::FD, Suffix::Rc, P(fp::mffs)),
    x("mtfsf", 63, 711, S::Mtfsf, Suffix::Rc, P(fp::mtfsf)),
];

/// A decoded instruction: its address, word and row.
#[derive(Clone, Copy)]
pub struct Insn {
    /// Where it is.
    pub addr: GuestAddr,
    /// The instruction word.
    pub word: u32,
    /// The matching row.
    pub row: &'static Row,
}

/// Finds the row for an instruction word.
pub fn decode(addr: GuestAddr, word: u32) -> Option<Insn> {
    ROWS.iter()
        .chain(ps::ROWS.iter())
        .find(|r| word & r.mask == r.bits)
        .map(|row| Insn { addr, word, row })
}

impl Insn {
    /// Bits 21..25: rD, rS, frD, frS, BO, TO.
    pub fn rd(&self) -> u32 {
        (self.word >> 21) & 31
    }
    /// Bits 16..20: rA, frA, BI, crbA.
    pub fn ra(&self) -> u32 {
        (self.word >> 16) & 31
    }
    /// Bits 11..15: rB, frB, SH, NB, crbB.
    pub fn rb(&self) -> u32 {
        (self.word >> 11) & 31
    }
    /// Bits 6..10: frC, MB.
    pub fn rc_field(&self) -> u32 {
        (self.word >> 6) & 31
    }
    /// Bits 1..5: ME.
    pub fn me(&self) -> u32 {
        (self.word >> 1) & 31
    }
    /// The 16-bit immediate, sign-extended.
    pub fn simm(&self) -> i32 {
        i32::from(self.word as u16 as i16)
    }
    /// The 16-bit immediate, zero-extended.
    pub fn uimm(&self) -> u32 {
        self.word & 0xffff
    }
    /// The record bit (Rc) or link bit (LK).
    pub fn bit0(&self) -> bool {
        self.word & 1 != 0
    }
    /// The absolute-address bit (AA).
    pub fn aa(&self) -> bool {
        self.word & 2 != 0
    }
    /// The overflow-enable bit (OE) of XO forms.
    pub fn oe(&self) -> bool {
        self.word & 0x400 != 0
    }
    /// Bits 23..25: crfD.
    pub fn crfd(&self) -> u32 {
        (self.word >> 23) & 7
    }
    /// Bits 18..20: crfS.
    pub fn crfs(&self) -> u32 {
        (self.word >> 18) & 7
    }
    /// The SPR or TBR number (its two 5-bit halves swapped back).
    pub fn spr(&self) -> u32 {
        ((self.word >> 16) & 31) | (((self.word >> 11) & 31) << 5)
    }
    /// Bits 12..19: the CRM of mtcrf.
    pub fn crm(&self) -> u32 {
        (self.word >> 12) & 0xff
    }
    /// The target of `b`/`bc`.
    pub fn branch_target(&self) -> GuestAddr {
        let offset = if self.row.syntax == Syntax::Branch {
            // LI: 24 bits at 2..25, sign-extended, times 4.
            ((self.word & 0x03ff_fffc) << 6) as i32 >> 6
        } else {
            i32::from((self.word & 0xfffc) as u16 as i16)
        };
        let base = if self.aa() { 0 } else { self.addr.0 as u32 };
        GuestAddr(u64::from(base.wrapping_add(offset as u32)))
    }
    /// The address of the next instruction.
    pub fn next(&self) -> GuestAddr {
        GuestAddr(u64::from((self.addr.0 as u32).wrapping_add(4)))
    }

    /// The mnemonic with its variant suffixes.
    pub fn mnemonic(&self) -> String {
        let mut m = self.row.name.to_string();
        match self.row.suffix {
            Suffix::None => {}
            Suffix::Rc => {
                if self.bit0() {
                    m.push('.');
                }
            }
            Suffix::OeRc => {
                if self.oe() {
                    m.push('o');
                }
                if self.bit0() {
                    m.push('.');
                }
            }
            Suffix::AaLk => {
                if self.bit0() {
                    m.push('l');
                }
                if self.aa() {
                    m.push('a');
                }
            }
            Suffix::Lk => {
                if self.bit0() {
                    m.push('l');
                }
            }
        }
        m
    }

    /// Listing text, in the spirit of binutils' syntax (without its simplified mnemonics).
    pub fn text(&self) -> String {
        let (d, a, b, c) = (self.rd(), self.ra(), self.rb(), self.rc_field());
        let ops = match self.row.syntax {
            S::None => String::new(),
            S::DASimm => format!("r{d},r{a},{}", self.simm()),
            S::ASUimm => format!("r{a},r{d},{:#x}", self.uimm()),
            S::DMem => format!("r{d},{}(r{a})", self.simm()),
            S::FMem => format!("f{d},{}(r{a})", self.simm()),
            S::DAB => format!("r{d},r{a},r{b}"),
            S::FDAB => format!("f{d},r{a},r{b}"),
            S::DA => format!("r{d},r{a}"),
            S::ASB => format!("r{a},r{d},r{b}"),
            S::AS => format!("r{a},r{d}"),
            S::ASSh => format!("r{a},r{d},{b}"),
            S::Rlwi => format!("r{a},r{d},{b},{c},{}", self.me()),
            S::Rlwnm => format!("r{a},r{d},r{b},{c},{}", self.me()),
            S::CmpSimm => format!("cr{},{},r{a},{}", self.crfd(), d & 1, self.simm()),
            S::CmpUimm => format!("cr{},{},r{a},{:#x}", self.crfd(), d & 1, self.uimm()),
            S::Cmp => format!("cr{},{},r{a},r{b}", self.crfd(), d & 1),
            S::Branch => format!("{:#x}", self.branch_target().0),
            S::BranchCond => format!("{d},{a},{:#x}", self.branch_target().0),
            S::BranchReg => format!("{d},{a}"),
            S::CrOp => format!("{d},{a},{b}"),
            S::Mcrf => format!("cr{},cr{}", self.crfd(), self.crfs()),
            S::Crf => format!("cr{}", self.crfd()),
            S::D => format!("r{d}"),
            S::Mtcrf => format!("{:#x},r{d}", self.crm()),
            S::Mfspr => format!("r{d},{}", self.spr()),
            S::Mtspr => format!("{},r{d}", self.spr()),
            S::Mftb => format!("r{d},{}", self.spr()),
            S::AB => format!("r{a},r{b}"),
            S::Trap => format!("{d},r{a},r{b}"),
            S::TrapImm => format!("{d},r{a},{}", self.simm()),
            S::Lswi => format!("r{d},r{a},{b}"),
            S::FABC => format!("f{d},f{a},f{b}"),
            S::FAC => format!("f{d},f{a},f{c}"),
            S::FACB => format!("f{d},f{a},f{c},f{b}"),
            S::FB => format!("f{d},f{b}"),
            S::FCmp => format!("cr{},f{a},f{b}", self.crfd()),
            S::FD => format!("f{d}"),
            S::Mtfsf => format!("{:#x},f{b}", (self.word >> 17) & 0xff),
            S::Mtfsfi => format!("cr{},{}", self.crfd(), (self.word >> 12) & 15),
            S::Crb => format!("{d}"),
            S::PsqMem => format!(
                "f{d},{}(r{a}),{},{}",
                i32::from(((self.word & 0xfff) << 4) as u16 as i16) >> 4,
                (self.word >> 15) & 1,
                (self.word >> 12) & 7
            ),
            S::PsqMemX => format!("f{d},r{a},r{b},{},{}", (self.word >> 10) & 1, (self.word >> 7) & 7),
        };
        if ops.is_empty() {
            self.mnemonic()
        } else {
            format!("{} {ops}", self.mnemonic())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(word: u32) -> String {
        decode(GuestAddr(0x8000_3100), word).map_or_else(|| "?".to_string(), |i| i.text())
    }

    #[test]
    fn decodes_what_binutils_prints() {
        assert_eq!(text(0x9421_ffe0), "stwu r1,-32(r1)");
        assert_eq!(text(0x7c08_02a6), "mfspr r0,8");
        assert_eq!(text(0x7c63_1a14), "add r3,r3,r3");
        assert_eq!(text(0x7c63_1e15), "addo. r3,r3,r3");
        assert_eq!(text(0x5463_103a), "rlwinm r3,r3,2,0,29");
        assert_eq!(text(0x4e80_0020), "bclr 20,0");
        assert_eq!(text(0x4e80_0421), "bcctrl 20,0");
        assert_eq!(text(0x4bff_fffc), "b 0x800030fc");
        assert_eq!(text(0x4800_0001), "bl 0x80003100");
        assert_eq!(text(0x2803_0005), "cmpli cr0,0,r3,0x5");
        assert_eq!(text(0x7c63_0e70), "srawi r3,r3,1");
        assert_eq!(text(0x4400_0002), "sc");
        assert_eq!(text(0x7c00_012d), "stwcx. r0,r0,r0");
        assert_eq!(text(0x7c00_012c), "?");
    }

    #[test]
    fn no_row_shadows_a_later_row() {
        let rows: Vec<&Row> = ROWS.iter().chain(ps::ROWS.iter()).collect();
        for (i, later) in rows.iter().enumerate() {
            for earlier in &rows[..i] {
                // The later row's own pattern must not be caught by an earlier row.
                assert!(
                    later.bits & earlier.mask != earlier.bits,
                    "{} is shadowed by {}",
                    later.name,
                    earlier.name
                );
            }
        }
    }
}
