//! The decoder: a table of bit-pattern rows, one lift function per row (STYLE rule 6).
//!
//! A row matches a 32-bit instruction word when `word & mask == bits`. Rows ignore the bits that
//! select a variant the lift function handles itself (Rc, OE, LK, AA), and the mnemonic printed
//! in listings gets the matching suffixes (`o`, `.`, `l`, `a`). The first matching row wins, so
//! more specific rows (`mr` is not special here; `stwcx.` needs Rc=1) come where they must.

use rpt_ir::{BinaryOp, FBinaryOp, GuestAddr, Rounding, Type};

use crate::estimate;
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

impl Row {
    /// The row of `name`: the words whose bits under `mask` are `bits`.
    pub const fn new(name: &'static str, mask: u32, bits: u32, syntax: Syntax, suffix: Suffix, flow: Flow) -> Row {
        Row {
            name,
            mask,
            bits,
            syntax,
            suffix,
            flow,
        }
    }
}

/// The primary opcode (bits 26..31): all a D-form row matches.
pub(crate) const PRIMARY: u32 = 0xfc00_0000;
/// The primary and the 10-bit extended opcode of X forms.
pub(crate) const X_MASK: u32 = 0xfc00_07fe;
/// The primary and the 9-bit extended opcode of XO forms (bit 10 is OE).
const XO_MASK: u32 = 0xfc00_03fe;
/// The primary and the 5-bit extended opcode of A forms.
pub(crate) const A_MASK: u32 = 0xfc00_003e;

/// The fixed bits of primary opcode `op` with extended opcode `xo` (at bit 1; 0 for D forms).
pub(crate) const fn opcode(op: u32, xo: u32) -> u32 {
    (op << 26) | (xo << 1)
}

/// A D-form row: the primary opcode alone.
const fn d(name: &'static str, op: u32, syntax: Syntax, flow: Flow) -> Row {
    Row::new(name, PRIMARY, opcode(op, 0), syntax, Suffix::None, flow)
}

/// An X-form row.
const fn x(name: &'static str, op: u32, xo: u32, syntax: Syntax, suffix: Suffix, flow: Flow) -> Row {
    Row::new(name, X_MASK, opcode(op, xo), syntax, suffix, flow)
}

/// An XO-form row of primary 31, with OE and Rc.
const fn xo(name: &'static str, xo: u32, syntax: Syntax, flow: Flow) -> Row {
    Row::new(name, XO_MASK, opcode(31, xo), syntax, Suffix::OeRc, flow)
}

/// An A-form row, with Rc.
const fn a(name: &'static str, op: u32, xo: u32, syntax: Syntax, flow: Flow) -> Row {
    Row::new(name, A_MASK, opcode(op, xo), syntax, Suffix::Rc, flow)
}

/// `row` with an Rc bit.
const fn rc(mut row: Row) -> Row {
    row.suffix = Suffix::Rc;
    row
}

use BinaryOp::{And, Or, Xor};
use Flow::Plain as P;
use Syntax as S;
use alu::{Complement, Operand as In};
use fp::{Fma, Precision, SignOp};

/// The table. Rows for paired singles (primary 4, 56, 57, 60, 61) come from [`ps::ROWS`].
///
/// A row's lift function is a named function when the instruction has logic of its own, and a
/// closure naming its family's function and parameters when it is one member of a family (the
/// additions, compares, logical operations, arithmetic of each precision).
// One row a line, as a table reads: rustfmt would spread the longer rows over six lines.
#[rustfmt::skip]
pub static ROWS: &[Row] = &[
    // Integer arithmetic, immediate forms.
    d("twi", 3, S::TrapImm, Flow::Trap),
    d("mulli", 7, S::DASimm, P(alu::mulli)),
    d("subfic", 8, S::DASimm, P(|lx, i| alu::add(lx, i, [In::NotRa, In::Simm, In::Const(1)], true))),
    d("cmpli", 10, S::CmpUimm, P(|lx, i| alu::compare(lx, i, In::Uimm, false))),
    d("cmpi", 11, S::CmpSimm, P(|lx, i| alu::compare(lx, i, In::Simm, true))),
    d("addic", 12, S::DASimm, P(|lx, i| alu::add(lx, i, [In::Ra, In::Simm, In::Const(0)], true))),
    d("addic.", 13, S::DASimm, P(alu::addic_dot)),
    d("addi", 14, S::DASimm, P(alu::addi)),
    d("addis", 15, S::DASimm, P(alu::addis)),
    Row::new("bc", PRIMARY, opcode(16, 0), S::BranchCond, Suffix::AaLk, Flow::BranchCond),
    Row::new("sc", 0xffff_ffff, 0x4400_0002, S::None, Suffix::None, P(system::sc)),
    Row::new("b", PRIMARY, opcode(18, 0), S::Branch, Suffix::AaLk, Flow::Branch),
    // Primary 19: CR logic and register branches.
    x("mcrf", 19, 0, S::Mcrf, Suffix::None, P(system::mcrf)),
    x("bclr", 19, 16, S::BranchReg, Suffix::Lk, Flow::BranchLr),
    x("crnor", 19, 33, S::CrOp, Suffix::None, P(|lx, i| system::cr_logic(lx, i, Or, Complement::Result))),
    x("crandc", 19, 129, S::CrOp, Suffix::None, P(|lx, i| system::cr_logic(lx, i, And, Complement::SecondInput))),
    x("isync", 19, 150, S::None, Suffix::None, P(system::nop)),
    x("crxor", 19, 193, S::CrOp, Suffix::None, P(|lx, i| system::cr_logic(lx, i, Xor, Complement::Neither))),
    x("crnand", 19, 225, S::CrOp, Suffix::None, P(|lx, i| system::cr_logic(lx, i, And, Complement::Result))),
    x("crand", 19, 257, S::CrOp, Suffix::None, P(|lx, i| system::cr_logic(lx, i, And, Complement::Neither))),
    x("creqv", 19, 289, S::CrOp, Suffix::None, P(|lx, i| system::cr_logic(lx, i, Xor, Complement::Result))),
    x("crorc", 19, 417, S::CrOp, Suffix::None, P(|lx, i| system::cr_logic(lx, i, Or, Complement::SecondInput))),
    x("cror", 19, 449, S::CrOp, Suffix::None, P(|lx, i| system::cr_logic(lx, i, Or, Complement::Neither))),
    x("bcctr", 19, 528, S::BranchReg, Suffix::Lk, Flow::BranchCtr),
    // Rotates and logical immediates.
    rc(d("rlwimi", 20, S::Rlwi, P(alu::rlwimi))),
    rc(d("rlwinm", 21, S::Rlwi, P(alu::rlwinm))),
    rc(d("rlwnm", 23, S::Rlwnm, P(alu::rlwnm))),
    d("ori", 24, S::ASUimm, P(|lx, i| alu::logical_imm(lx, i, Or, 0, false))),
    d("oris", 25, S::ASUimm, P(|lx, i| alu::logical_imm(lx, i, Or, 16, false))),
    d("xori", 26, S::ASUimm, P(|lx, i| alu::logical_imm(lx, i, Xor, 0, false))),
    d("xoris", 27, S::ASUimm, P(|lx, i| alu::logical_imm(lx, i, Xor, 16, false))),
    d("andi.", 28, S::ASUimm, P(|lx, i| alu::logical_imm(lx, i, And, 0, true))),
    d("andis.", 29, S::ASUimm, P(|lx, i| alu::logical_imm(lx, i, And, 16, true))),
    // Primary 31: XO-form arithmetic (OE and Rc are the lift function's business); each addition
    // is x + y + carry_in.
    xo("subfc", 8, S::DAB, P(|lx, i| alu::add(lx, i, [In::NotRa, In::Rb, In::Const(1)], true))),
    xo("addc", 10, S::DAB, P(|lx, i| alu::add(lx, i, [In::Ra, In::Rb, In::Const(0)], true))),
    xo("subf", 40, S::DAB, P(|lx, i| alu::add(lx, i, [In::NotRa, In::Rb, In::Const(1)], false))),
    xo("neg", 104, S::DA, P(|lx, i| alu::add(lx, i, [In::NotRa, In::Const(0), In::Const(1)], false))),
    xo("subfe", 136, S::DAB, P(|lx, i| alu::add(lx, i, [In::NotRa, In::Rb, In::Ca], true))),
    xo("adde", 138, S::DAB, P(|lx, i| alu::add(lx, i, [In::Ra, In::Rb, In::Ca], true))),
    xo("subfze", 200, S::DA, P(|lx, i| alu::add(lx, i, [In::NotRa, In::Const(0), In::Ca], true))),
    xo("addze", 202, S::DA, P(|lx, i| alu::add(lx, i, [In::Ra, In::Const(0), In::Ca], true))),
    xo("subfme", 232, S::DA, P(|lx, i| alu::add(lx, i, [In::NotRa, In::Const(u32::MAX), In::Ca], true))),
    xo("addme", 234, S::DA, P(|lx, i| alu::add(lx, i, [In::Ra, In::Const(u32::MAX), In::Ca], true))),
    xo("mullw", 235, S::DAB, P(alu::mullw)),
    xo("add", 266, S::DAB, P(|lx, i| alu::add(lx, i, [In::Ra, In::Rb, In::Const(0)], false))),
    xo("divwu", 459, S::DAB, P(alu::divwu)),
    xo("divw", 491, S::DAB, P(alu::divw)),
    // Primary 31: X-form. mulhw/mulhwu have no OE bit; bit 10 is part of their opcode.
    x("mulhwu", 31, 11, S::DAB, Suffix::Rc, P(|lx, i| alu::multiply_high(lx, i, BinaryOp::Umulhi))),
    x("mulhw", 31, 75, S::DAB, Suffix::Rc, P(|lx, i| alu::multiply_high(lx, i, BinaryOp::Smulhi))),
    x("cmp", 31, 0, S::Cmp, Suffix::None, P(|lx, i| alu::compare(lx, i, In::Rb, true))),
    x("tw", 31, 4, S::Trap, Suffix::None, Flow::Trap),
    x("mfcr", 31, 19, S::D, Suffix::None, P(system::mfcr)),
    x("lwarx", 31, 20, S::DAB, Suffix::None, P(mem::lwarx)),
    x("lwzx", 31, 23, S::DAB, Suffix::None, P(mem::lwzx)),
    x("slw", 31, 24, S::ASB, Suffix::Rc, P(|lx, i| alu::shift_word(lx, i, BinaryOp::Shl))),
    x("cntlzw", 31, 26, S::AS, Suffix::Rc, P(alu::cntlzw)),
    x("and", 31, 28, S::ASB, Suffix::Rc, P(|lx, i| alu::logical(lx, i, And, Complement::Neither))),
    x("cmpl", 31, 32, S::Cmp, Suffix::None, P(|lx, i| alu::compare(lx, i, In::Rb, false))),
    x("dcbst", 31, 54, S::AB, Suffix::None, P(system::nop)),
    x("lwzux", 31, 55, S::DAB, Suffix::None, P(mem::lwzux)),
    x("andc", 31, 60, S::ASB, Suffix::Rc, P(|lx, i| alu::logical(lx, i, And, Complement::SecondInput))),
    x("dcbf", 31, 86, S::AB, Suffix::None, P(system::nop)),
    x("lbzx", 31, 87, S::DAB, Suffix::None, P(mem::lbzx)),
    x("lbzux", 31, 119, S::DAB, Suffix::None, P(mem::lbzux)),
    x("nor", 31, 124, S::ASB, Suffix::Rc, P(|lx, i| alu::logical(lx, i, Or, Complement::Result))),
    x("mtcrf", 31, 144, S::Mtcrf, Suffix::None, P(system::mtcrf)),
    // stwcx. exists only with its Rc bit set.
    Row::new("stwcx.", X_MASK | 1, opcode(31, 150) | 1, S::DAB, Suffix::None, P(mem::stwcx_dot)),
    x("stwx", 31, 151, S::DAB, Suffix::None, P(mem::stwx)),
    x("stwux", 31, 183, S::DAB, Suffix::None, P(mem::stwux)),
    x("stbx", 31, 215, S::DAB, Suffix::None, P(mem::stbx)),
    x("dcbtst", 31, 246, S::AB, Suffix::None, P(system::nop)),
    x("stbux", 31, 247, S::DAB, Suffix::None, P(mem::stbux)),
    x("dcbt", 31, 278, S::AB, Suffix::None, P(system::nop)),
    x("lhzx", 31, 279, S::DAB, Suffix::None, P(mem::lhzx)),
    x("eqv", 31, 284, S::ASB, Suffix::Rc, P(|lx, i| alu::logical(lx, i, Xor, Complement::Result))),
    x("lhzux", 31, 311, S::DAB, Suffix::None, P(mem::lhzux)),
    x("xor", 31, 316, S::ASB, Suffix::Rc, P(|lx, i| alu::logical(lx, i, Xor, Complement::Neither))),
    x("mfspr", 31, 339, S::Mfspr, Suffix::None, P(system::mfspr)),
    x("lhax", 31, 343, S::DAB, Suffix::None, P(mem::lhax)),
    x("mftb", 31, 371, S::Mftb, Suffix::None, P(system::mftb)),
    x("lhaux", 31, 375, S::DAB, Suffix::None, P(mem::lhaux)),
    x("sthx", 31, 407, S::DAB, Suffix::None, P(mem::sthx)),
    x("orc", 31, 412, S::ASB, Suffix::Rc, P(|lx, i| alu::logical(lx, i, Or, Complement::SecondInput))),
    x("sthux", 31, 439, S::DAB, Suffix::None, P(mem::sthux)),
    x("or", 31, 444, S::ASB, Suffix::Rc, P(|lx, i| alu::logical(lx, i, Or, Complement::Neither))),
    x("mtspr", 31, 467, S::Mtspr, Suffix::None, P(system::mtspr)),
    x("nand", 31, 476, S::ASB, Suffix::Rc, P(|lx, i| alu::logical(lx, i, And, Complement::Result))),
    x("mcrxr", 31, 512, S::Crf, Suffix::None, P(system::mcrxr)),
    x("lswx", 31, 533, S::DAB, Suffix::None, P(mem::lswx)),
    x("lwbrx", 31, 534, S::DAB, Suffix::None, P(mem::lwbrx)),
    x("lfsx", 31, 535, S::FDAB, Suffix::None, P(mem::lfsx)),
    x("srw", 31, 536, S::ASB, Suffix::Rc, P(|lx, i| alu::shift_word(lx, i, BinaryOp::Lshr))),
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
    x("extsh", 31, 922, S::AS, Suffix::Rc, P(|lx, i| alu::extend_sign(lx, i, Type::I16))),
    x("extsb", 31, 954, S::AS, Suffix::Rc, P(|lx, i| alu::extend_sign(lx, i, Type::I8))),
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
    a("fdivs", 59, 18, S::FABC, P(|lx, i| lx.arith(i, FBinaryOp::Fdiv, Precision::Single))),
    a("fsubs", 59, 20, S::FABC, P(|lx, i| lx.arith(i, FBinaryOp::Fsub, Precision::Single))),
    a("fadds", 59, 21, S::FABC, P(|lx, i| lx.arith(i, FBinaryOp::Fadd, Precision::Single))),
    a("fres", 59, 24, S::FB, P(|lx, i| lx.estimate(i, estimate::FRES_HELPER, Precision::Single))),
    a("fmuls", 59, 25, S::FAC, P(|lx, i| lx.arith(i, FBinaryOp::Fmul, Precision::Single))),
    a("fmsubs", 59, 28, S::FACB, P(|lx, i| lx.madd(i, Fma::Msub, Precision::Single))),
    a("fmadds", 59, 29, S::FACB, P(|lx, i| lx.madd(i, Fma::Madd, Precision::Single))),
    a("fnmsubs", 59, 30, S::FACB, P(|lx, i| lx.madd(i, Fma::Nmsub, Precision::Single))),
    a("fnmadds", 59, 31, S::FACB, P(|lx, i| lx.madd(i, Fma::Nmadd, Precision::Single))),
    // Primary 63: double-precision arithmetic (A-form) and the rest (X-form).
    a("fdiv", 63, 18, S::FABC, P(|lx, i| lx.arith(i, FBinaryOp::Fdiv, Precision::Double))),
    a("fsub", 63, 20, S::FABC, P(|lx, i| lx.arith(i, FBinaryOp::Fsub, Precision::Double))),
    a("fadd", 63, 21, S::FABC, P(|lx, i| lx.arith(i, FBinaryOp::Fadd, Precision::Double))),
    a("fsel", 63, 23, S::FACB, P(fp::fsel)),
    a("fmul", 63, 25, S::FAC, P(|lx, i| lx.arith(i, FBinaryOp::Fmul, Precision::Double))),
    a("frsqrte", 63, 26, S::FB, P(|lx, i| lx.estimate(i, estimate::FRSQRTE_HELPER, Precision::Double))),
    a("fmsub", 63, 28, S::FACB, P(|lx, i| lx.madd(i, Fma::Msub, Precision::Double))),
    a("fmadd", 63, 29, S::FACB, P(|lx, i| lx.madd(i, Fma::Madd, Precision::Double))),
    a("fnmsub", 63, 30, S::FACB, P(|lx, i| lx.madd(i, Fma::Nmsub, Precision::Double))),
    a("fnmadd", 63, 31, S::FACB, P(|lx, i| lx.madd(i, Fma::Nmadd, Precision::Double))),
    x("fcmpu", 63, 0, S::FCmp, Suffix::None, P(fp::fcmp)),
    x("frsp", 63, 12, S::FB, Suffix::Rc, P(fp::frsp)),
    x("fctiw", 63, 14, S::FB, Suffix::Rc, P(|lx, i| lx.convert_to_int_word(i, Rounding::Dynamic))),
    x("fctiwz", 63, 15, S::FB, Suffix::Rc, P(|lx, i| lx.convert_to_int_word(i, Rounding::Zero))),
    x("fcmpo", 63, 32, S::FCmp, Suffix::None, P(fp::fcmp)),
    x("mtfsb1", 63, 38, S::Crb, Suffix::Rc, P(|lx, i| fp::mtfsb(lx, i, true))),
    x("fneg", 63, 40, S::FB, Suffix::Rc, P(|lx, i| lx.move_op(i, SignOp::Negate))),
    x("mcrfs", 63, 64, S::Mcrf, Suffix::None, P(fp::mcrfs)),
    x("mtfsb0", 63, 70, S::Crb, Suffix::Rc, P(|lx, i| fp::mtfsb(lx, i, false))),
    x("fmr", 63, 72, S::FB, Suffix::Rc, P(|lx, i| lx.move_op(i, SignOp::Keep))),
    x("mtfsfi", 63, 134, S::Mtfsfi, Suffix::Rc, P(fp::mtfsfi)),
    x("fnabs", 63, 136, S::FB, Suffix::Rc, P(|lx, i| lx.move_op(i, SignOp::Set))),
    x("fabs", 63, 264, S::FB, Suffix::Rc, P(|lx, i| lx.move_op(i, SignOp::Clear))),
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
