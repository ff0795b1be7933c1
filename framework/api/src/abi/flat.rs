//! The flat form of IR functions on the plugin boundary: fixed-width instruction records in one
//! buffer, written and read by a hand-written match per instruction kind, with no serde on the way.
//!
//! Postcard carries the rest of a request (the envelope); a pass request and its answer, and an
//! analysis request, append a batch of functions in this form after the envelope, in the same
//! buffer (see [`super::wire`]).
//! The form lives in rpt-api rather than rpt-ir because it is part of the plugin ABI: its layout
//! changes with [`super::WIRE_VERSION`], and the IR crate stays free of transport formats.
//!
//! # Layout
//!
//! All integers are little-endian; nothing is aligned (readers copy out of byte slices).
//!
//! A batch is a 12-byte header (`b"RPTF"`, [`FLAT_VERSION`] as `u32`, the number of functions as
//! `u32`) and one entry per function: its length as `u64`, then that many bytes of function, or
//! the length `u64::MAX` alone for a function a pass left unchanged (answers only; the host keeps
//! its own copy).
//!
//! A function is a 24-byte header (entry address `u64`; numbers of values, blocks and instruction
//! records, and words of side area, each `u32`), one byte per value type (its index in
//! [`Type::ALL`]), the instruction records (16 bytes each, every block's instructions in block
//! order), and the side area (`u32` words).
//!
//! An instruction record is `tag, op, ty, flags` (one byte each), then the result, `a` and `b` as
//! `u32`. `tag` is the [`InstKind`] variant (the `TAG_*` constants), `op` its operator or address
//! space, `ty` a type; `flags` has bit 0 for "defines a result", bit 1 for big-endian and bits
//! 2–4 for the rounding. Operands that do not fit in `a` and `b` (the third operand of `select`,
//! `fma` and indexed stores, the high half of a float constant, a helper call's arguments and
//! name) go to the side area, which is read front to back in the same order as it is written: for
//! each block its parameter count and parameters and its instruction count, the side words of its
//! instructions in order, then its terminator (a word of tag, exit reason and call-target kind,
//! then its operands; a block call is the block, the argument count and the arguments).
//!
//! # What decoding checks
//!
//! Every tag, operator, type, flag bit and count, every length against the bytes that are really
//! there (before anything is allocated for it) and UTF-8 in helper names; malformed bytes give a
//! [`FlatError`], never a panic. It does not check that values, blocks and slots exist: that is
//! the verifier's business, and a plugin's broken IR must reach the verifier so that the error
//! names the pass (tests/plugins.rs, `a_pass_returning_ir_the_verifier_rejects_is_named`). So
//! every [`Function`] value round-trips exactly, well-formed or not.

use std::borrow::Borrow;

use rpt_ir::{
    AddrSpace, BinaryOp, Block, BlockCall, BlockData, CallTarget, ConvOp, Endian, ExitReason, FBinaryOp, FConvOp,
    FTernaryOp, FUnaryOp, FloatCC, Function, GuestAddr, Inst, InstKind, IntCC, Rounding, SlotId, Terminator, Type,
    UnaryOp, Value,
};

/// The version of the flat layout, written in every batch header. It changes together with
/// [`super::WIRE_VERSION`], which is what refuses an old plugin at load; this one catches a
/// batch that reached a reader of another layout some other way.
pub const FLAT_VERSION: u32 = 2;

const MAGIC: [u8; 4] = *b"RPTF";
const BATCH_HEADER: usize = 12;
const ENTRY_HEADER: usize = 8;
const FUNCTION_HEADER: usize = 24;
const RECORD: usize = 16;
const WORD: usize = 4;
/// The entry length that stands for "unchanged".
const UNCHANGED: u64 = u64::MAX;

const HAS_RESULT: u8 = 1;
const BIG_ENDIAN: u8 = 2;
const ROUNDING_SHIFT: u8 = 2;
const ROUNDING_MASK: u8 = 7 << ROUNDING_SHIFT;
const KNOWN_FLAGS: u8 = HAS_RESULT | BIG_ENDIAN | ROUNDING_MASK;

/// `iconst`: `ty`, `a`/`b` the low and high halves of the immediate.
pub const TAG_ICONST: u8 = 0;
/// `fconst`: `ty`, `a`/`b` bits 0–63 of the pattern, two side words bits 64–127.
pub const TAG_FCONST: u8 = 1;
/// Unary integer operation: `op`, `a`.
pub const TAG_UNARY: u8 = 2;
/// Binary integer operation: `op`, `a`, `b`.
pub const TAG_BINARY: u8 = 3;
/// Integer comparison: `op` the condition, `a`, `b`.
pub const TAG_ICMP: u8 = 4;
/// `select`: `a` the condition, `b` the value if true, a side word the value if false.
pub const TAG_SELECT: u8 = 5;
/// Integer conversion: `op`, `ty` the result type, `a`.
pub const TAG_CONVERT: u8 = 6;
/// Binary float operation: `op`, rounding, `a`, `b`.
pub const TAG_FBINARY: u8 = 7;
/// Ternary float operation: `op`, rounding, `a`, `b`, a side word the third operand.
pub const TAG_FTERNARY: u8 = 8;
/// Unary float operation: `op`, rounding, `a`.
pub const TAG_FUNARY: u8 = 9;
/// Float comparison: `op` the condition, `a`, `b`.
pub const TAG_FCMP: u8 = 10;
/// Float conversion: `op`, rounding, `ty` the result type, `a`.
pub const TAG_FCONVERT: u8 = 11;
/// `get_slot`: `a` the slot.
pub const TAG_GET_SLOT: u8 = 12;
/// `set_slot`: `a` the slot, `b` the value.
pub const TAG_SET_SLOT: u8 = 13;
/// `get_indexed`: `a` the slot, `b` the index.
pub const TAG_GET_INDEXED: u8 = 14;
/// `set_indexed`: `a` the slot, `b` the index, a side word the value.
pub const TAG_SET_INDEXED: u8 = 15;
/// `load`: `ty`, `op` the address space, endianness, `a` the address.
pub const TAG_LOAD: u8 = 16;
/// `store`: `op` the address space, endianness, `a` the address, `b` the value.
pub const TAG_STORE: u8 = 17;
/// Helper call: `a` the argument count, `b` the name's length in bytes; side words the arguments,
/// then the name's bytes padded with zeros to whole words.
pub const TAG_CALL_HELPER: u8 = 18;
/// `mark`: `a`/`b` the low and high halves of the guest PC.
pub const TAG_MARK: u8 = 19;
/// `kill`: `a` the slot.
pub const TAG_KILL: u8 = 20;

const TERM_JUMP: u8 = 0;
const TERM_BRANCH: u8 = 1;
const TERM_SWITCH: u8 = 2;
const TERM_CALL: u8 = 3;
const TERM_RETURN: u8 = 4;
const TERM_TAIL_CALL: u8 = 5;
const TERM_EXIT: u8 = 6;
const TERM_UNREACHABLE: u8 = 7;
const TARGET_DIRECT: u8 = 0;
const TARGET_INDIRECT: u8 = 1;

/// Why bytes are not a valid flat batch or function.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FlatError {
    /// The batch does not start with the flat magic.
    #[error("not a flat IR batch (no RPTF magic)")]
    Magic,
    /// The batch was written for another layout.
    #[error("flat IR version {0}, but this rpt reads version {FLAT_VERSION}")]
    Version(u32),
    /// The bytes end in the middle of something.
    #[error("the bytes end inside {0}")]
    Truncated(&'static str),
    /// Bytes are left over after the last thing there is to read.
    #[error("{count} bytes are left over after {after}")]
    LeftOver {
        /// How many.
        count: usize,
        /// What was read before them.
        after: &'static str,
    },
    /// A tag, operator, type, flag or count that no encoding produces.
    #[error("invalid {what} {value}")]
    Invalid {
        /// What was read.
        what: &'static str,
        /// Its value.
        value: u64,
    },
    /// A helper's name is not UTF-8.
    #[error("a helper name is not UTF-8")]
    Utf8,
    /// The batch holds another number of functions than expected.
    #[error("the batch holds {found} functions where {expected} were expected")]
    Count {
        /// How many were expected.
        expected: usize,
        /// How many the batch holds.
        found: usize,
    },
    /// Something is wrong in one function of a batch.
    #[error("function {index} of the batch: {source}")]
    InFunction {
        /// The function's position in the batch.
        index: usize,
        /// What is wrong.
        source: Box<FlatError>,
    },
}

/// One entry of a batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Entry<'a> {
    /// A function's flat encoding, for [`decode_function`].
    Function(&'a [u8]),
    /// The pass left the function as it was sent.
    Unchanged,
}

// ---------------------------------------------------------------------------------------------
// Encoding

/// What the encoder must know about a function before it writes the header.
#[derive(Clone, Copy)]
struct Measure {
    insts: usize,
    side_words: usize,
}

impl Measure {
    fn bytes(self, func: &Function) -> usize {
        FUNCTION_HEADER + func.value_types.len() + RECORD * self.insts + WORD * self.side_words
    }
}

fn block_call_words(call: &BlockCall) -> usize {
    2 + call.args.len()
}

fn target_words(target: &CallTarget) -> usize {
    match target {
        CallTarget::Direct(_) => 2,
        CallTarget::Indirect(_) => 1,
    }
}

fn measure(func: &Function) -> Measure {
    let mut insts = 0;
    let mut side_words = 0;
    for block in &func.blocks {
        insts += block.insts.len();
        // Parameter count, parameters, instruction count, terminator word.
        side_words += 3 + block.params.len();
        for inst in &block.insts {
            side_words += match &inst.kind {
                InstKind::Fconst { .. } => 2,
                InstKind::Select { .. } | InstKind::FTernary { .. } | InstKind::SetIndexed { .. } => 1,
                InstKind::CallHelper { helper, args } => args.len() + helper.len().div_ceil(WORD),
                InstKind::Iconst { .. }
                | InstKind::Unary { .. }
                | InstKind::Binary { .. }
                | InstKind::Icmp { .. }
                | InstKind::Convert { .. }
                | InstKind::FBinary { .. }
                | InstKind::FUnary { .. }
                | InstKind::Fcmp { .. }
                | InstKind::FConvert { .. }
                | InstKind::GetSlot { .. }
                | InstKind::SetSlot { .. }
                | InstKind::Kill { .. }
                | InstKind::GetIndexed { .. }
                | InstKind::Load { .. }
                | InstKind::Store { .. }
                | InstKind::Mark { .. } => 0,
            };
        }
        side_words += match &block.term {
            Terminator::Jump(dest) => block_call_words(dest),
            Terminator::Branch {
                then_dest, else_dest, ..
            } => 1 + block_call_words(then_dest) + block_call_words(else_dest),
            Terminator::Switch { cases, default, .. } => {
                2 + cases.iter().map(block_call_words).sum::<usize>() + block_call_words(default)
            }
            Terminator::Call { target, cont } => target_words(target) + block_call_words(cont),
            Terminator::TailCall { target } => target_words(target),
            Terminator::Exit { .. } => 1,
            Terminator::Return | Terminator::Unreachable => 0,
        };
    }
    Measure { insts, side_words }
}

/// The number of bytes [`encode_function_into`] appends for `func`.
pub fn function_len(func: &Function) -> usize {
    measure(func).bytes(func)
}

/// Collects the side area of the function being written, which goes after all its records; the
/// encoder keeps one and reuses it from function to function.
#[derive(Default)]
struct SideWriter {
    bytes: Vec<u8>,
}

impl SideWriter {
    #[inline]
    fn put(&mut self, word: u32) {
        self.bytes.extend_from_slice(&word.to_le_bytes());
    }

    fn value(&mut self, v: Value) {
        self.put(v.0);
    }

    fn values(&mut self, values: &[Value]) {
        for v in values {
            self.put(v.0);
        }
    }

    fn u64(&mut self, x: u64) {
        self.put(x as u32);
        self.put((x >> 32) as u32);
    }

    fn block_call(&mut self, call: &BlockCall) {
        self.put(call.block.0);
        self.put(call.args.len() as u32);
        self.values(&call.args);
    }

    fn bytes(&mut self, bytes: &[u8]) {
        self.bytes.extend_from_slice(bytes);
        let padding = bytes.len().next_multiple_of(WORD) - bytes.len();
        self.bytes.extend_from_slice(&[0; WORD][..padding]);
    }
}

#[inline]
fn record(tag: u8, op: u8, ty: u8, flags: u8, result: u32, a: u32, b: u32) -> [u8; RECORD] {
    let head = u32::from_le_bytes([tag, op, ty, flags]);
    let mut out = [0; RECORD];
    out[0..4].copy_from_slice(&head.to_le_bytes());
    out[4..8].copy_from_slice(&result.to_le_bytes());
    out[8..12].copy_from_slice(&a.to_le_bytes());
    out[12..16].copy_from_slice(&b.to_le_bytes());
    out
}

fn rounding_flags(rounding: Rounding) -> u8 {
    (rounding as u8) << ROUNDING_SHIFT
}

fn endian_flags(endian: Endian) -> u8 {
    match endian {
        Endian::Little => 0,
        Endian::Big => BIG_ENDIAN,
    }
}

/// The record of one instruction; its side words go to `side`.
#[inline]
fn encode_inst(inst: &Inst, side: &mut SideWriter) -> [u8; RECORD] {
    let (has, result) = match inst.result {
        Some(v) => (HAS_RESULT, v.0),
        None => (0, 0),
    };
    let rec = |tag: u8, op: u8, ty: u8, flags: u8, a: u32, b: u32| record(tag, op, ty, has | flags, result, a, b);
    match &inst.kind {
        InstKind::Iconst { ty, imm } => rec(TAG_ICONST, 0, *ty as u8, 0, *imm as u32, (*imm >> 32) as u32),
        InstKind::Fconst { ty, bits } => {
            side.u64((*bits >> 64) as u64);
            rec(TAG_FCONST, 0, *ty as u8, 0, *bits as u32, (*bits >> 32) as u32)
        }
        InstKind::Unary { op, arg } => rec(TAG_UNARY, *op as u8, 0, 0, arg.0, 0),
        InstKind::Binary { op, args } => rec(TAG_BINARY, *op as u8, 0, 0, args[0].0, args[1].0),
        InstKind::Icmp { cond, args } => rec(TAG_ICMP, *cond as u8, 0, 0, args[0].0, args[1].0),
        InstKind::Select {
            cond,
            if_true,
            if_false,
        } => {
            side.value(*if_false);
            rec(TAG_SELECT, 0, 0, 0, cond.0, if_true.0)
        }
        InstKind::Convert { op, arg, to } => rec(TAG_CONVERT, *op as u8, *to as u8, 0, arg.0, 0),
        InstKind::FBinary { op, rounding, args } => rec(
            TAG_FBINARY,
            *op as u8,
            0,
            rounding_flags(*rounding),
            args[0].0,
            args[1].0,
        ),
        InstKind::FTernary { op, rounding, args } => {
            side.value(args[2]);
            rec(
                TAG_FTERNARY,
                *op as u8,
                0,
                rounding_flags(*rounding),
                args[0].0,
                args[1].0,
            )
        }
        InstKind::FUnary { op, rounding, arg } => rec(TAG_FUNARY, *op as u8, 0, rounding_flags(*rounding), arg.0, 0),
        InstKind::Fcmp { cond, args } => rec(TAG_FCMP, *cond as u8, 0, 0, args[0].0, args[1].0),
        InstKind::FConvert { op, rounding, arg, to } => {
            rec(TAG_FCONVERT, *op as u8, *to as u8, rounding_flags(*rounding), arg.0, 0)
        }
        InstKind::GetSlot { slot } => rec(TAG_GET_SLOT, 0, 0, 0, slot.0, 0),
        InstKind::SetSlot { slot, value } => rec(TAG_SET_SLOT, 0, 0, 0, slot.0, value.0),
        InstKind::Kill { slot } => rec(TAG_KILL, 0, 0, 0, slot.0, 0),
        InstKind::GetIndexed { slot, index } => rec(TAG_GET_INDEXED, 0, 0, 0, slot.0, index.0),
        InstKind::SetIndexed { slot, index, value } => {
            side.value(*value);
            rec(TAG_SET_INDEXED, 0, 0, 0, slot.0, index.0)
        }
        InstKind::Load {
            ty,
            endian,
            space,
            addr,
        } => rec(TAG_LOAD, space.0, *ty as u8, endian_flags(*endian), addr.0, 0),
        InstKind::Store {
            endian,
            space,
            addr,
            value,
        } => rec(TAG_STORE, space.0, 0, endian_flags(*endian), addr.0, value.0),
        InstKind::CallHelper { helper, args } => {
            side.values(args);
            side.bytes(helper.as_bytes());
            rec(TAG_CALL_HELPER, 0, 0, 0, args.len() as u32, helper.len() as u32)
        }
        InstKind::Mark { pc } => rec(TAG_MARK, 0, 0, 0, pc.0 as u32, (pc.0 >> 32) as u32),
    }
}

fn term_word(tag: u8, reason: u8, target: u8) -> u32 {
    u32::from_le_bytes([tag, reason, target, 0])
}

fn target_kind(target: &CallTarget) -> u8 {
    match target {
        CallTarget::Direct(_) => TARGET_DIRECT,
        CallTarget::Indirect(_) => TARGET_INDIRECT,
    }
}

fn encode_target(target: &CallTarget, side: &mut SideWriter) {
    match target {
        CallTarget::Direct(addr) => side.u64(addr.0),
        CallTarget::Indirect(v) => side.value(*v),
    }
}

fn encode_term(term: &Terminator, side: &mut SideWriter) {
    match term {
        Terminator::Jump(dest) => {
            side.put(term_word(TERM_JUMP, 0, 0));
            side.block_call(dest);
        }
        Terminator::Branch {
            cond,
            then_dest,
            else_dest,
        } => {
            side.put(term_word(TERM_BRANCH, 0, 0));
            side.value(*cond);
            side.block_call(then_dest);
            side.block_call(else_dest);
        }
        Terminator::Switch { index, cases, default } => {
            side.put(term_word(TERM_SWITCH, 0, 0));
            side.value(*index);
            side.put(cases.len() as u32);
            for case in cases {
                side.block_call(case);
            }
            side.block_call(default);
        }
        Terminator::Call { target, cont } => {
            side.put(term_word(TERM_CALL, 0, target_kind(target)));
            encode_target(target, side);
            side.block_call(cont);
        }
        Terminator::Return => side.put(term_word(TERM_RETURN, 0, 0)),
        Terminator::TailCall { target } => {
            side.put(term_word(TERM_TAIL_CALL, 0, target_kind(target)));
            encode_target(target, side);
        }
        Terminator::Exit { pc, reason } => {
            side.put(term_word(TERM_EXIT, *reason as u8, 0));
            side.value(*pc);
        }
        Terminator::Unreachable => side.put(term_word(TERM_UNREACHABLE, 0, 0)),
    }
}

/// Appends `func` to `out`, which has room for it (`m.bytes(func)` more bytes): everything is
/// written front to back, the side area collected in `side` and copied after the records.
fn encode_measured(func: &Function, m: Measure, side: &mut SideWriter, out: &mut Vec<u8>) {
    let mut h = [0u8; FUNCTION_HEADER];
    h[0..8].copy_from_slice(&func.entry.0.to_le_bytes());
    // Counts are u32 like the IR's own indices: a function with 2^32 values or instructions would
    // not fit in memory.
    h[8..12].copy_from_slice(&(func.value_types.len() as u32).to_le_bytes());
    h[12..16].copy_from_slice(&(func.blocks.len() as u32).to_le_bytes());
    h[16..20].copy_from_slice(&(m.insts as u32).to_le_bytes());
    h[20..24].copy_from_slice(&(m.side_words as u32).to_le_bytes());
    out.extend_from_slice(&h);
    out.extend(func.value_types.iter().map(|ty| *ty as u8));
    side.bytes.clear();
    for block in &func.blocks {
        side.put(block.params.len() as u32);
        side.values(&block.params);
        side.put(block.insts.len() as u32);
        for inst in &block.insts {
            out.extend_from_slice(&encode_inst(inst, side));
        }
        encode_term(&block.term, side);
    }
    debug_assert_eq!(
        side.bytes.len(),
        m.side_words * WORD,
        "measure and the encoder disagree"
    );
    out.extend_from_slice(&side.bytes);
}

/// Appends the flat encoding of one function to `out`, reserving its exact size first.
pub fn encode_function_into(func: &Function, out: &mut Vec<u8>) {
    let m = measure(func);
    out.reserve(m.bytes(func));
    encode_measured(func, m, &mut SideWriter::default(), out);
}

fn batch_header(count: usize) -> [u8; BATCH_HEADER] {
    let mut h = [0; BATCH_HEADER];
    h[0..4].copy_from_slice(&MAGIC);
    h[4..8].copy_from_slice(&FLAT_VERSION.to_le_bytes());
    h[8..12].copy_from_slice(&(count as u32).to_le_bytes());
    h
}

/// The number of bytes [`encode_batch_into`] appends for `funcs`.
pub fn batch_len<F: Borrow<Function>>(funcs: &[F]) -> usize {
    BATCH_HEADER
        + funcs
            .iter()
            .map(|f| ENTRY_HEADER + function_len(f.borrow()))
            .sum::<usize>()
}

/// Appends a batch of every function in `funcs` to `out`, which grows once, by the exact size.
pub fn encode_batch_into<F: Borrow<Function>>(funcs: &[F], out: &mut Vec<u8>) {
    // With nothing sent to compare with, every function is written whole.
    encode_answer_into(funcs, &[], out);
}

/// A batch of every function in `funcs`.
pub fn encode_batch<F: Borrow<Function>>(funcs: &[F]) -> Vec<u8> {
    let mut out = Vec::new();
    encode_batch_into(funcs, &mut out);
    out
}

/// Appends the answer batch for functions a pass transformed: `funcs[i]` is written as
/// [`Entry::Unchanged`] when its encoding is byte for byte `sent[i]`, the encoding it arrived in
/// (whole when there is no `sent[i]`). `out` grows once, by the size of every function whole.
///
/// `sent[i]` decoded to the function the pass started from, and decoding undoes encoding, so equal
/// bytes mean an equal function: the comparison needs no copy of the input kept aside. (Unequal
/// bytes with an equal function could only come from a sender that writes unused fields; the
/// function is then sent back whole, which is correct, only slower.) An unchanged function costs
/// one encoding and one `memcmp` here, and nothing on the host.
pub fn encode_answer_into<F: Borrow<Function>>(funcs: &[F], sent: &[&[u8]], out: &mut Vec<u8>) {
    let measures: Vec<Measure> = funcs.iter().map(|f| measure(f.borrow())).collect();
    // Room for every function even if all changed; the space an unchanged function was encoded
    // into is reused by the next one, so pages past what the answer needs are never touched.
    // (Computed up front, so the buffer never grows and copies itself.)
    let total = BATCH_HEADER
        + funcs
            .iter()
            .zip(&measures)
            .map(|(f, m)| ENTRY_HEADER + m.bytes(f.borrow()))
            .sum::<usize>();
    out.reserve(total);
    out.extend_from_slice(&batch_header(funcs.len()));
    let mut side = SideWriter::default();
    for (index, (func, m)) in funcs.iter().zip(&measures).enumerate() {
        let func = func.borrow();
        let len = m.bytes(func);
        let at = out.len();
        out.extend_from_slice(&(len as u64).to_le_bytes());
        encode_measured(func, *m, &mut side, out);
        let unchanged = sent
            .get(index)
            .is_some_and(|before| out.get(at + ENTRY_HEADER..) == Some(*before));
        if unchanged {
            out.truncate(at);
            out.extend_from_slice(&UNCHANGED.to_le_bytes());
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Decoding

/// Takes `N` bytes off the front of `bytes`.
#[inline]
fn take<'a, const N: usize>(bytes: &mut &'a [u8], what: &'static str) -> Result<&'a [u8; N], FlatError> {
    let Some((head, rest)) = bytes.split_first_chunk::<N>() else {
        return Err(FlatError::Truncated(what));
    };
    *bytes = rest;
    Ok(head)
}

#[inline]
fn u32_at(bytes: &[u8; RECORD], at: usize) -> u32 {
    let mut w = [0; 4];
    w.copy_from_slice(&bytes[at..at + 4]);
    u32::from_le_bytes(w)
}

#[inline]
fn pick<T: Copy>(all: &[T], index: u8, what: &'static str) -> Result<T, FlatError> {
    match all.get(usize::from(index)) {
        Some(x) => Ok(*x),
        None => Err(FlatError::Invalid {
            what,
            value: u64::from(index),
        }),
    }
}

fn endian(flags: u8) -> Endian {
    if flags & BIG_ENDIAN != 0 {
        Endian::Big
    } else {
        Endian::Little
    }
}

/// The side area, read front to back.
struct SideReader<'a> {
    bytes: &'a [u8],
}

impl<'a> SideReader<'a> {
    #[inline]
    fn word(&mut self) -> Result<u32, FlatError> {
        Ok(u32::from_le_bytes(*take::<WORD>(&mut self.bytes, "the side area")?))
    }

    fn value(&mut self) -> Result<Value, FlatError> {
        self.word().map(Value)
    }

    fn u64(&mut self) -> Result<u64, FlatError> {
        let lo = self.word()?;
        let hi = self.word()?;
        Ok(u64::from(lo) | u64::from(hi) << 32)
    }

    /// A count of `words_each`-word items, checked against the words that are left so that a
    /// corrupt count cannot make the decoder allocate more than the input holds.
    fn count(&mut self, words_each: usize, what: &'static str) -> Result<usize, FlatError> {
        let n = self.word()? as usize;
        if n.saturating_mul(words_each) > self.bytes.len() / WORD {
            return Err(FlatError::Invalid { what, value: n as u64 });
        }
        Ok(n)
    }

    fn values(&mut self, n: usize) -> Result<Vec<Value>, FlatError> {
        let Some((words, rest)) = self.bytes.split_at_checked(n.saturating_mul(WORD)) else {
            return Err(FlatError::Truncated("the side area"));
        };
        self.bytes = rest;
        Ok(words
            .chunks_exact(WORD)
            .map(|w| Value(u32::from_le_bytes([w[0], w[1], w[2], w[3]])))
            .collect())
    }

    fn counted_values(&mut self, what: &'static str) -> Result<Vec<Value>, FlatError> {
        let n = self.count(1, what)?;
        self.values(n)
    }

    fn bytes(&mut self, len: usize) -> Result<&'a [u8], FlatError> {
        let padded = len.div_ceil(WORD).saturating_mul(WORD);
        let Some((bytes, rest)) = self.bytes.split_at_checked(padded) else {
            return Err(FlatError::Truncated("a helper name"));
        };
        self.bytes = rest;
        bytes.get(..len).ok_or(FlatError::Truncated("a helper name"))
    }

    fn block_call(&mut self) -> Result<BlockCall, FlatError> {
        let block = Block(self.word()?);
        let args = self.counted_values("block-call argument count")?;
        Ok(BlockCall { block, args })
    }

    fn target(&mut self, kind: u8) -> Result<CallTarget, FlatError> {
        match kind {
            TARGET_DIRECT => Ok(CallTarget::Direct(GuestAddr(self.u64()?))),
            TARGET_INDIRECT => Ok(CallTarget::Indirect(self.value()?)),
            other => Err(FlatError::Invalid {
                what: "call-target kind",
                value: u64::from(other),
            }),
        }
    }

    fn term(&mut self) -> Result<Terminator, FlatError> {
        let [tag, reason, target, zero] = self.word()?.to_le_bytes();
        if zero != 0 || (reason != 0 && tag != TERM_EXIT) || (target != 0 && !matches!(tag, TERM_CALL | TERM_TAIL_CALL))
        {
            return Err(FlatError::Invalid {
                what: "terminator word",
                value: u64::from(u32::from_le_bytes([tag, reason, target, zero])),
            });
        }
        Ok(match tag {
            TERM_JUMP => Terminator::Jump(self.block_call()?),
            TERM_BRANCH => Terminator::Branch {
                cond: self.value()?,
                then_dest: self.block_call()?,
                else_dest: self.block_call()?,
            },
            TERM_SWITCH => {
                let index = self.value()?;
                // Each case takes at least two words (block and argument count).
                let n = self.count(2, "switch case count")?;
                let mut cases = Vec::with_capacity(n);
                for _ in 0..n {
                    cases.push(self.block_call()?);
                }
                Terminator::Switch {
                    index,
                    cases,
                    default: self.block_call()?,
                }
            }
            TERM_CALL => Terminator::Call {
                target: self.target(target)?,
                cont: self.block_call()?,
            },
            TERM_RETURN => Terminator::Return,
            TERM_TAIL_CALL => Terminator::TailCall {
                target: self.target(target)?,
            },
            TERM_EXIT => Terminator::Exit {
                pc: self.value()?,
                reason: pick(ExitReason::ALL, reason, "exit reason")?,
            },
            TERM_UNREACHABLE => Terminator::Unreachable,
            other => {
                return Err(FlatError::Invalid {
                    what: "terminator tag",
                    value: u64::from(other),
                });
            }
        })
    }
}

/// The first thing wrong in the instructions of a block. Instruction decoding carries no
/// `Result`: a bad field gives a harmless stand-in and is noted here, and the decoder checks once
/// per block, so the common path is a plain match.
#[derive(Default)]
struct Trouble(Option<FlatError>);

impl Trouble {
    #[cold]
    #[inline(never)]
    fn note(&mut self, error: FlatError) {
        if self.0.is_none() {
            self.0 = Some(error);
        }
    }

    #[inline]
    fn pick<T: Copy>(&mut self, all: &[T], index: u8, stand_in: T, what: &'static str) -> T {
        match all.get(usize::from(index)) {
            Some(x) => *x,
            None => {
                self.note(FlatError::Invalid {
                    what,
                    value: u64::from(index),
                });
                stand_in
            }
        }
    }

    #[inline]
    fn ty(&mut self, index: u8) -> Type {
        self.pick(&Type::ALL, index, Type::I1, "type")
    }

    #[inline]
    fn rounding(&mut self, flags: u8) -> Rounding {
        let index = (flags & ROUNDING_MASK) >> ROUNDING_SHIFT;
        self.pick(&Rounding::ALL, index, Rounding::Nearest, "rounding")
    }

    #[inline]
    fn word(&mut self, side: &mut SideReader<'_>) -> u32 {
        match side.bytes.split_first_chunk::<WORD>() {
            Some((word, rest)) => {
                side.bytes = rest;
                u32::from_le_bytes(*word)
            }
            None => {
                self.note(FlatError::Truncated("the side area"));
                0
            }
        }
    }

    fn check<T>(&mut self, result: Result<T, FlatError>, stand_in: T) -> T {
        result.unwrap_or_else(|error| {
            self.note(error);
            stand_in
        })
    }
}

/// Decodes one instruction record, taking its side words from `side`.
#[inline]
fn decode_inst(r: &[u8; RECORD], side: &mut SideReader<'_>, t: &mut Trouble) -> Inst {
    let [tag, op, ty, flags] = [r[0], r[1], r[2], r[3]];
    if flags & !KNOWN_FLAGS != 0 {
        t.note(FlatError::Invalid {
            what: "instruction flags",
            value: u64::from(flags),
        });
    }
    let result = (flags & HAS_RESULT != 0).then(|| Value(u32_at(r, 4)));
    let a = u32_at(r, 8);
    let b = u32_at(r, 12);
    let kind = match tag {
        TAG_ICONST => InstKind::Iconst {
            ty: t.ty(ty),
            imm: u64::from(a) | u64::from(b) << 32,
        },
        TAG_FCONST => {
            let high = u64::from(t.word(side)) | u64::from(t.word(side)) << 32;
            InstKind::Fconst {
                ty: t.ty(ty),
                bits: u128::from(a) | u128::from(b) << 32 | u128::from(high) << 64,
            }
        }
        TAG_UNARY => InstKind::Unary {
            op: t.pick(UnaryOp::ALL, op, UnaryOp::Not, "unary operator"),
            arg: Value(a),
        },
        TAG_BINARY => InstKind::Binary {
            op: t.pick(BinaryOp::ALL, op, BinaryOp::Add, "binary operator"),
            args: [Value(a), Value(b)],
        },
        TAG_ICMP => InstKind::Icmp {
            cond: t.pick(IntCC::ALL, op, IntCC::Eq, "integer condition"),
            args: [Value(a), Value(b)],
        },
        TAG_SELECT => InstKind::Select {
            cond: Value(a),
            if_true: Value(b),
            if_false: Value(t.word(side)),
        },
        TAG_CONVERT => InstKind::Convert {
            op: t.pick(ConvOp::ALL, op, ConvOp::Zext, "conversion"),
            arg: Value(a),
            to: t.ty(ty),
        },
        TAG_FBINARY => InstKind::FBinary {
            op: t.pick(FBinaryOp::ALL, op, FBinaryOp::Fadd, "float operator"),
            rounding: t.rounding(flags),
            args: [Value(a), Value(b)],
        },
        TAG_FTERNARY => InstKind::FTernary {
            op: t.pick(FTernaryOp::ALL, op, FTernaryOp::Fma, "ternary float operator"),
            rounding: t.rounding(flags),
            args: [Value(a), Value(b), Value(t.word(side))],
        },
        TAG_FUNARY => InstKind::FUnary {
            op: t.pick(FUnaryOp::ALL, op, FUnaryOp::Fsqrt, "unary float operator"),
            rounding: t.rounding(flags),
            arg: Value(a),
        },
        TAG_FCMP => InstKind::Fcmp {
            cond: t.pick(FloatCC::ALL, op, FloatCC::Eq, "float condition"),
            args: [Value(a), Value(b)],
        },
        TAG_FCONVERT => InstKind::FConvert {
            op: t.pick(FConvOp::ALL, op, FConvOp::Fconvert, "float conversion"),
            rounding: t.rounding(flags),
            arg: Value(a),
            to: t.ty(ty),
        },
        TAG_GET_SLOT => InstKind::GetSlot { slot: SlotId(a) },
        TAG_SET_SLOT => InstKind::SetSlot {
            slot: SlotId(a),
            value: Value(b),
        },
        TAG_GET_INDEXED => InstKind::GetIndexed {
            slot: SlotId(a),
            index: Value(b),
        },
        TAG_SET_INDEXED => InstKind::SetIndexed {
            slot: SlotId(a),
            index: Value(b),
            value: Value(t.word(side)),
        },
        TAG_LOAD => InstKind::Load {
            ty: t.ty(ty),
            endian: endian(flags),
            space: AddrSpace(op),
            addr: Value(a),
        },
        TAG_STORE => InstKind::Store {
            endian: endian(flags),
            space: AddrSpace(op),
            addr: Value(a),
            value: Value(b),
        },
        TAG_CALL_HELPER => decode_call_helper(a, b, side, t),
        TAG_MARK => InstKind::Mark {
            pc: GuestAddr(u64::from(a) | u64::from(b) << 32),
        },
        TAG_KILL => InstKind::Kill { slot: SlotId(a) },
        other => {
            t.note(FlatError::Invalid {
                what: "instruction tag",
                value: u64::from(other),
            });
            InstKind::Mark { pc: GuestAddr(0) }
        }
    };
    Inst { result, kind }
}

/// The arguments and name of a helper call: `count` argument words, then `name_len` bytes of name.
#[inline(never)]
fn decode_call_helper(count: u32, name_len: u32, side: &mut SideReader<'_>, t: &mut Trouble) -> InstKind {
    let count = count as usize;
    if count.saturating_mul(WORD) > side.bytes.len() {
        t.note(FlatError::Invalid {
            what: "helper argument count",
            value: count as u64,
        });
        return InstKind::Mark { pc: GuestAddr(0) };
    }
    let args = t.check(side.values(count), Vec::new());
    let name = t.check(side.bytes(name_len as usize), &[]);
    let helper = t.check(
        String::from_utf8(name.to_vec()).map_err(|_| FlatError::Utf8),
        String::new(),
    );
    InstKind::CallHelper { helper, args }
}

/// Decodes exactly one function's encoding, as [`encode_function_into`] writes it.
pub fn decode_function(bytes: &[u8]) -> Result<Function, FlatError> {
    let mut rest = bytes;
    let header = take::<FUNCTION_HEADER>(&mut rest, "the function header")?;
    let field = |at: usize| u32::from_le_bytes([header[at], header[at + 1], header[at + 2], header[at + 3]]) as usize;
    let entry = u64::from_le_bytes([
        header[0], header[1], header[2], header[3], header[4], header[5], header[6], header[7],
    ]);
    let (value_count, block_count, inst_count, side_words) = (field(8), field(12), field(16), field(20));
    // The sections' sizes must add up to exactly the bytes there are; this bounds every count
    // below by the input's size.
    let expected = (value_count as u64) + (inst_count as u64) * RECORD as u64 + (side_words as u64) * WORD as u64;
    if expected != rest.len() as u64 {
        return Err(FlatError::Invalid {
            what: "function size (the header's counts do not add up to the bytes given)",
            value: expected,
        });
    }
    // Each block takes at least three side words: its parameter count, its instruction count and
    // its terminator.
    if block_count.saturating_mul(3) > side_words {
        return Err(FlatError::Invalid {
            what: "block count",
            value: block_count as u64,
        });
    }
    let Some((types, rest)) = rest.split_at_checked(value_count) else {
        return Err(FlatError::Truncated("the value types"));
    };
    let Some((mut records, side)) = rest.split_at_checked(inst_count * RECORD) else {
        return Err(FlatError::Truncated("the instruction records"));
    };
    let mut side = SideReader { bytes: side };
    let mut trouble = Trouble::default();
    let value_types: Vec<Type> = types.iter().map(|&index| trouble.ty(index)).collect();
    if let Some(error) = trouble.0 {
        return Err(error);
    }
    let mut blocks = Vec::with_capacity(block_count);
    for _ in 0..block_count {
        let params = side.counted_values("block parameter count")?;
        let n = side.word()? as usize;
        if n > records.len() / RECORD {
            return Err(FlatError::Invalid {
                what: "block instruction count",
                value: n as u64,
            });
        }
        let Some((mine, rest)) = records.split_at_checked(n * RECORD) else {
            return Err(FlatError::Truncated("the instruction records"));
        };
        records = rest;
        let (mine, _) = mine.as_chunks::<RECORD>();
        let mut trouble = Trouble::default();
        // `collect` over a slice sizes the vector once and writes each instruction in place.
        let insts: Vec<Inst> = mine
            .iter()
            .map(|record| decode_inst(record, &mut side, &mut trouble))
            .collect();
        if let Some(error) = trouble.0 {
            return Err(error);
        }
        let term = side.term()?;
        blocks.push(BlockData { params, insts, term });
    }
    if !records.is_empty() {
        return Err(FlatError::LeftOver {
            count: records.len(),
            after: "the last block's instructions",
        });
    }
    if !side.bytes.is_empty() {
        return Err(FlatError::LeftOver {
            count: side.bytes.len(),
            after: "the last block's terminator",
        });
    }
    Ok(Function {
        entry: GuestAddr(entry),
        blocks,
        value_types,
    })
}

/// Splits a batch into its entries, checking the header and every length; `expected` is the
/// number of functions the reader asked for.
pub fn read_batch(bytes: &[u8], expected: usize) -> Result<Vec<Entry<'_>>, FlatError> {
    let mut rest = bytes;
    let header = take::<BATCH_HEADER>(&mut rest, "the batch header")?;
    if header[0..4] != MAGIC {
        return Err(FlatError::Magic);
    }
    let version = u32::from_le_bytes([header[4], header[5], header[6], header[7]]);
    if version != FLAT_VERSION {
        return Err(FlatError::Version(version));
    }
    let count = u32::from_le_bytes([header[8], header[9], header[10], header[11]]) as usize;
    if count != expected {
        return Err(FlatError::Count { expected, found: count });
    }
    if count.saturating_mul(ENTRY_HEADER) > rest.len() {
        return Err(FlatError::Truncated("the batch's entries"));
    }
    let mut entries = Vec::with_capacity(count);
    for index in 0..count {
        let len = u64::from_le_bytes(*take::<ENTRY_HEADER>(&mut rest, "an entry's length")?);
        if len == UNCHANGED {
            entries.push(Entry::Unchanged);
            continue;
        }
        let (function, after) = usize::try_from(len)
            .ok()
            .and_then(|len| rest.split_at_checked(len))
            .ok_or_else(|| FlatError::InFunction {
                index,
                source: Box::new(FlatError::Truncated("the batch")),
            })?;
        entries.push(Entry::Function(function));
        rest = after;
    }
    if !rest.is_empty() {
        return Err(FlatError::LeftOver {
            count: rest.len(),
            after: "the batch's last function",
        });
    }
    Ok(entries)
}

fn decode_entry(index: usize, bytes: &[u8]) -> Result<Function, FlatError> {
    decode_function(bytes).map_err(|e| FlatError::InFunction {
        index,
        source: Box::new(e),
    })
}

/// Decodes a batch that holds every function in full (a request), `expected` of them.
pub fn decode_batch(bytes: &[u8], expected: usize) -> Result<Vec<Function>, FlatError> {
    let entries = read_batch(bytes, expected)?;
    let mut funcs = Vec::with_capacity(entries.len());
    for (index, entry) in entries.into_iter().enumerate() {
        match entry {
            Entry::Function(bytes) => funcs.push(decode_entry(index, bytes)?),
            Entry::Unchanged => {
                return Err(FlatError::InFunction {
                    index,
                    source: Box::new(FlatError::Invalid {
                        what: "entry (a request cannot mark a function unchanged)",
                        value: UNCHANGED,
                    }),
                });
            }
        }
    }
    Ok(funcs)
}

/// Decodes an answer batch of `expected` functions: `None` where the function is unchanged.
/// Nothing is returned unless the whole batch decodes, so a caller never applies half an answer.
pub fn decode_answer(bytes: &[u8], expected: usize) -> Result<Vec<Option<Function>>, FlatError> {
    let entries = read_batch(bytes, expected)?;
    let mut funcs = Vec::with_capacity(entries.len());
    for (index, entry) in entries.into_iter().enumerate() {
        funcs.push(match entry {
            Entry::Function(bytes) => Some(decode_entry(index, bytes)?),
            Entry::Unchanged => None,
        });
    }
    Ok(funcs)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    fn inst(result: Option<u32>, kind: InstKind) -> Inst {
        Inst {
            result: result.map(Value),
            kind,
        }
    }

    fn call(block: u32, args: &[u32]) -> BlockCall {
        BlockCall {
            block: Block(block),
            args: args.iter().copied().map(Value).collect(),
        }
    }

    /// A function with every instruction kind (each operator, type, rounding, endianness and
    /// exit reason at least once) and every terminator. It does not verify, which does not
    /// matter: the codec carries any function.
    fn every_variant() -> Function {
        let v = Value;
        let mut insts = Vec::new();
        for (i, ty) in Type::ALL.into_iter().enumerate() {
            insts.push(inst(
                Some(i as u32),
                InstKind::Iconst {
                    ty,
                    imm: u64::MAX - i as u64,
                },
            ));
            insts.push(inst(
                Some(100 + i as u32),
                InstKind::Fconst {
                    ty,
                    bits: u128::MAX / (i as u128 + 1),
                },
            ));
            insts.push(inst(
                None,
                InstKind::Load {
                    ty,
                    endian: if i % 2 == 0 { Endian::Little } else { Endian::Big },
                    space: AddrSpace(i as u8 * 31),
                    addr: v(3),
                },
            ));
            insts.push(inst(
                Some(7),
                InstKind::Convert {
                    op: ConvOp::ALL[i % ConvOp::ALL.len()],
                    arg: v(1),
                    to: ty,
                },
            ));
        }
        for op in UnaryOp::ALL {
            insts.push(inst(Some(1), InstKind::Unary { op: *op, arg: v(2) }));
        }
        for op in BinaryOp::ALL {
            insts.push(inst(
                Some(1),
                InstKind::Binary {
                    op: *op,
                    args: [v(2), v(u32::MAX)],
                },
            ));
        }
        for cond in IntCC::ALL {
            insts.push(inst(
                Some(1),
                InstKind::Icmp {
                    cond: *cond,
                    args: [v(2), v(3)],
                },
            ));
        }
        for cond in FloatCC::ALL {
            insts.push(inst(
                Some(1),
                InstKind::Fcmp {
                    cond: *cond,
                    args: [v(2), v(3)],
                },
            ));
        }
        for rounding in Rounding::ALL {
            for op in FBinaryOp::ALL {
                insts.push(inst(
                    Some(4),
                    InstKind::FBinary {
                        op: *op,
                        rounding,
                        args: [v(5), v(6)],
                    },
                ));
            }
            for op in FTernaryOp::ALL {
                insts.push(inst(
                    Some(4),
                    InstKind::FTernary {
                        op: *op,
                        rounding,
                        args: [v(5), v(6), v(7)],
                    },
                ));
            }
            for op in FUnaryOp::ALL {
                insts.push(inst(
                    Some(4),
                    InstKind::FUnary {
                        op: *op,
                        rounding,
                        arg: v(5),
                    },
                ));
            }
            for op in FConvOp::ALL {
                insts.push(inst(
                    Some(4),
                    InstKind::FConvert {
                        op: *op,
                        rounding,
                        arg: v(5),
                        to: Type::F80,
                    },
                ));
            }
        }
        insts.extend([
            inst(
                Some(8),
                InstKind::Select {
                    cond: v(1),
                    if_true: v(2),
                    if_false: v(3),
                },
            ),
            inst(Some(8), InstKind::GetSlot { slot: SlotId(9) }),
            inst(
                None,
                InstKind::SetSlot {
                    slot: SlotId(u32::MAX),
                    value: v(8),
                },
            ),
            inst(None, InstKind::Kill { slot: SlotId(7) }),
            inst(
                Some(8),
                InstKind::GetIndexed {
                    slot: SlotId(2),
                    index: v(1),
                },
            ),
            inst(
                None,
                InstKind::SetIndexed {
                    slot: SlotId(2),
                    index: v(1),
                    value: v(8),
                },
            ),
            inst(
                None,
                InstKind::Store {
                    endian: Endian::Big,
                    space: AddrSpace(255),
                    addr: v(1),
                    value: v(2),
                },
            ),
            inst(
                None,
                InstKind::Mark {
                    pc: GuestAddr(0x1234_5678_9abc_def0),
                },
            ),
        ]);
        // Names of every length modulo the word size, so the padding is exercised.
        for name in ["", "a", "ab", "abc", "abcd", "x87_fpatan", "é✓"] {
            insts.push(inst(
                Some(9),
                InstKind::CallHelper {
                    helper: name.to_string(),
                    args: (0..name.len() as u32).map(Value).collect(),
                },
            ));
        }
        let terms = vec![
            Terminator::Jump(call(1, &[1, 2])),
            Terminator::Branch {
                cond: v(1),
                then_dest: call(2, &[]),
                else_dest: call(3, &[4]),
            },
            Terminator::Switch {
                index: v(2),
                cases: vec![call(0, &[]), call(1, &[1]), call(2, &[1, 2])],
                default: call(3, &[]),
            },
            Terminator::Switch {
                index: v(2),
                cases: Vec::new(),
                default: call(3, &[9]),
            },
            Terminator::Call {
                target: CallTarget::Direct(GuestAddr(0xffff_ffff_0040_1000)),
                cont: call(4, &[5]),
            },
            Terminator::Call {
                target: CallTarget::Indirect(v(6)),
                cont: call(5, &[]),
            },
            Terminator::Return,
            Terminator::TailCall {
                target: CallTarget::Direct(GuestAddr(0x401000)),
            },
            Terminator::TailCall {
                target: CallTarget::Indirect(v(7)),
            },
            Terminator::Unreachable,
        ];
        let mut blocks: Vec<BlockData> = terms
            .into_iter()
            .enumerate()
            .map(|(i, term)| BlockData {
                params: (0..i as u32).map(Value).collect(),
                insts: Vec::new(),
                term,
            })
            .collect();
        for reason in ExitReason::ALL {
            blocks.push(BlockData {
                params: Vec::new(),
                insts: vec![inst(None, InstKind::Mark { pc: GuestAddr(1) })],
                term: Terminator::Exit {
                    pc: v(3),
                    reason: *reason,
                },
            });
        }
        blocks[0].insts = insts;
        Function {
            entry: GuestAddr(0x8000_3100),
            blocks,
            value_types: (0..300).map(|i| Type::ALL[i % Type::ALL.len()]).collect(),
        }
    }

    fn small() -> Function {
        Function {
            entry: GuestAddr(0x401000),
            blocks: vec![
                BlockData {
                    params: Vec::new(),
                    insts: vec![
                        inst(
                            None,
                            InstKind::Mark {
                                pc: GuestAddr(0x401000),
                            },
                        ),
                        inst(Some(0), InstKind::Iconst { ty: Type::I32, imm: 7 }),
                        inst(
                            Some(1),
                            InstKind::CallHelper {
                                helper: "abc".into(),
                                args: vec![Value(0)],
                            },
                        ),
                        inst(
                            Some(2),
                            InstKind::Select {
                                cond: Value(1),
                                if_true: Value(0),
                                if_false: Value(0),
                            },
                        ),
                    ],
                    term: Terminator::Branch {
                        cond: Value(1),
                        then_dest: call(1, &[0]),
                        else_dest: call(1, &[2]),
                    },
                },
                BlockData {
                    params: vec![Value(3)],
                    insts: vec![inst(
                        None,
                        InstKind::SetSlot {
                            slot: SlotId(0),
                            value: Value(3),
                        },
                    )],
                    term: Terminator::Exit {
                        pc: Value(3),
                        reason: ExitReason::Halt,
                    },
                },
            ],
            value_types: vec![Type::I32, Type::I1, Type::I32, Type::I32],
        }
    }

    fn encode_one(func: &Function) -> Vec<u8> {
        let mut out = Vec::new();
        encode_function_into(func, &mut out);
        out
    }

    #[test]
    fn the_operator_tables_are_in_declaration_order() {
        // The encoder writes `op as u8` and the decoder reads `ALL[byte]`; they must agree.
        assert!(Type::ALL.iter().enumerate().all(|(i, t)| *t as usize == i));
        assert!(Rounding::ALL.iter().enumerate().all(|(i, r)| *r as usize == i));
        assert!(UnaryOp::ALL.iter().enumerate().all(|(i, o)| *o as usize == i));
        assert!(BinaryOp::ALL.iter().enumerate().all(|(i, o)| *o as usize == i));
        assert!(IntCC::ALL.iter().enumerate().all(|(i, o)| *o as usize == i));
        assert!(ConvOp::ALL.iter().enumerate().all(|(i, o)| *o as usize == i));
        assert!(FBinaryOp::ALL.iter().enumerate().all(|(i, o)| *o as usize == i));
        assert!(FTernaryOp::ALL.iter().enumerate().all(|(i, o)| *o as usize == i));
        assert!(FUnaryOp::ALL.iter().enumerate().all(|(i, o)| *o as usize == i));
        assert!(FloatCC::ALL.iter().enumerate().all(|(i, o)| *o as usize == i));
        assert!(FConvOp::ALL.iter().enumerate().all(|(i, o)| *o as usize == i));
        assert!(ExitReason::ALL.iter().enumerate().all(|(i, o)| *o as usize == i));
    }

    #[test]
    fn every_instruction_and_terminator_round_trips() {
        let func = every_variant();
        let bytes = encode_one(&func);
        assert_eq!(
            bytes.len(),
            function_len(&func),
            "the size computed up front is the size written"
        );
        assert_eq!(decode_function(&bytes), Ok(func.clone()));

        // The function really holds every instruction tag and every terminator.
        let records = &bytes[FUNCTION_HEADER + func.value_types.len()..];
        let insts: usize = func.blocks.iter().map(|b| b.insts.len()).sum();
        let tags: BTreeSet<u8> = records[..insts * RECORD].chunks_exact(RECORD).map(|r| r[0]).collect();
        assert_eq!(tags, (TAG_ICONST..=TAG_KILL).collect());
        let terms: std::collections::HashSet<_> = func.blocks.iter().map(|b| std::mem::discriminant(&b.term)).collect();
        assert_eq!(terms.len(), 8);
    }

    #[test]
    fn batches_round_trip_and_are_sized_up_front() {
        let funcs = vec![every_variant(), Function::new(GuestAddr(0)), small(), every_variant()];
        let bytes = encode_batch(&funcs);
        assert_eq!(bytes.len(), batch_len(&funcs));
        assert_eq!(decode_batch(&bytes, funcs.len()), Ok(funcs.clone()));
        assert_eq!(decode_batch(&bytes, 3), Err(FlatError::Count { expected: 3, found: 4 }));
        assert_eq!(decode_batch(&encode_batch::<Function>(&[]), 0), Ok(Vec::new()));
    }

    #[test]
    fn an_answer_marks_the_functions_a_pass_left_alone() {
        let before = vec![small(), every_variant(), small()];
        let sent: Vec<Vec<u8>> = before.iter().map(encode_one).collect();
        let sent: Vec<&[u8]> = sent.iter().map(Vec::as_slice).collect();
        let mut after = before.clone();
        after[1].blocks[0].insts.pop();
        // Same size as before, different bytes.
        after[2].entry = GuestAddr(0x402000);
        let mut answer = Vec::new();
        encode_answer_into(&after, &sent, &mut answer);
        assert_eq!(
            decode_answer(&answer, 3),
            Ok(vec![None, Some(after[1].clone()), Some(after[2].clone())])
        );
        // A request never says "unchanged".
        assert!(matches!(
            decode_batch(&answer, 3),
            Err(FlatError::InFunction { index: 0, .. })
        ));
    }

    #[test]
    fn every_truncation_is_an_error() {
        let funcs = vec![small(), every_variant()];
        let batch = encode_batch(&funcs);
        for len in 0..batch.len() {
            assert!(
                decode_batch(&batch[..len], 2).is_err(),
                "{len} bytes of {} decode",
                batch.len()
            );
            assert!(decode_answer(&batch[..len], 2).is_err());
        }
        let one = encode_one(&small());
        for len in 0..one.len() {
            assert!(
                decode_function(&one[..len]).is_err(),
                "{len} bytes of {} decode",
                one.len()
            );
        }
    }

    #[test]
    fn flipped_bytes_never_panic_and_whatever_decodes_re_encodes() {
        let batch = encode_batch(&[small()]);
        let mut decoded = 0;
        for at in 0..batch.len() {
            for mask in [0x01, 0x02, 0x10, 0x80, 0xff] {
                let mut bytes = batch.clone();
                bytes[at] ^= mask;
                if let Ok(funcs) = decode_batch(&bytes, 1) {
                    decoded += 1;
                    // A changed byte the decoder accepts changes the function or lies in a field
                    // the kind does not use; either way the result encodes and decodes again.
                    assert_eq!(decode_batch(&encode_batch(&funcs), 1), Ok(funcs));
                }
            }
        }
        assert!(
            decoded > 0,
            "no flipped byte decodes: the test would not see a wrong value"
        );
    }

    #[test]
    fn huge_counts_are_refused_before_anything_is_allocated() {
        let mut bytes = encode_one(&small());
        // The block count, then the first block's parameter count.
        bytes[12..16].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(
            decode_function(&bytes),
            Err(FlatError::Invalid {
                what: "block count",
                ..
            })
        ));
        let mut bytes = encode_one(&small());
        let side = FUNCTION_HEADER + 4 + 5 * RECORD;
        bytes[side..side + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(
            decode_function(&bytes),
            Err(FlatError::Invalid {
                what: "block parameter count",
                ..
            })
        ));
        let mut batch = encode_batch(&[small()]);
        batch[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(decode_batch(&batch, u32::MAX as usize).is_err());
    }

    #[test]
    fn another_version_or_magic_is_refused() {
        let mut batch = encode_batch(&[small()]);
        batch[4] = 9;
        assert_eq!(decode_batch(&batch, 1), Err(FlatError::Version(9)));
        batch[0] = b'X';
        assert_eq!(decode_batch(&batch, 1), Err(FlatError::Magic));
    }
}
