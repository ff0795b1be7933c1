//! Instructions and terminators.
//!
//! The operator enums below are the single table of IR operations: each row gives
//! the variant and its text-form name, and the printer, parser, verifier,
//! interpreter and C emitter all match on them exhaustively, so a new row cannot
//! be forgotten anywhere.

use crate::{AddrSpace, Block, Endian, GuestAddr, Rounding, SlotId, Type, Value};

macro_rules! op_table {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident = $text:literal,)* }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
        pub enum $name {
            $($(#[$vmeta])* $variant,)*
        }

        impl $name {
            /// Every operator of this class, in table order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)*];

            /// The text-form mnemonic.
            pub fn name(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)*
                }
            }

            /// Parses a text-form mnemonic.
            pub fn from_name(name: &str) -> Option<$name> {
                match name {
                    $($text => Some($name::$variant),)*
                    _ => None,
                }
            }
        }
    };
}

op_table!(
    /// One-operand integer operations; the result has the operand's type.
    UnaryOp {
        /// Bitwise complement.
        Not = "not",
        /// Two's-complement negation.
        Neg = "neg",
        /// Number of set bits.
        Popcnt = "popcnt",
        /// Number of leading zero bits (the width for zero).
        Clz = "clz",
        /// Number of trailing zero bits (the width for zero).
        Ctz = "ctz",
        /// Byte reversal (i16, i32, i64).
        Bswap = "bswap",
    }
);

op_table!(
    /// Two-operand integer operations on equal types; the result has that type.
    ///
    /// Shift and rotate amounts are taken modulo the width, so guests mask
    /// their counts explicitly where the hardware does something else.
    /// Division by zero is undefined here: lifters branch around it first.
    BinaryOp {
        /// Wrapping addition.
        Add = "add",
        /// Wrapping subtraction.
        Sub = "sub",
        /// Wrapping multiplication (low half).
        Mul = "mul",
        /// High half of the unsigned double-width product.
        Umulhi = "umulhi",
        /// High half of the signed double-width product.
        Smulhi = "smulhi",
        /// Unsigned division, truncating.
        Udiv = "udiv",
        /// Signed division, truncating; `MIN / -1` is undefined like division by zero.
        Sdiv = "sdiv",
        /// Unsigned remainder.
        Urem = "urem",
        /// Signed remainder (sign of the dividend).
        Srem = "srem",
        /// Bitwise and.
        And = "and",
        /// Bitwise or.
        Or = "or",
        /// Bitwise exclusive or.
        Xor = "xor",
        /// Shift left.
        Shl = "shl",
        /// Logical shift right.
        Lshr = "lshr",
        /// Arithmetic shift right.
        Ashr = "ashr",
        /// Rotate left.
        Rotl = "rotl",
        /// Rotate right.
        Rotr = "rotr",
    }
);

op_table!(
    /// Integer comparisons; the result is `i1`.
    IntCC {
        /// Equal.
        Eq = "eq",
        /// Not equal.
        Ne = "ne",
        /// Unsigned less than.
        Ult = "ult",
        /// Unsigned less or equal.
        Ule = "ule",
        /// Unsigned greater than.
        Ugt = "ugt",
        /// Unsigned greater or equal.
        Uge = "uge",
        /// Signed less than.
        Slt = "slt",
        /// Signed less or equal.
        Sle = "sle",
        /// Signed greater than.
        Sgt = "sgt",
        /// Signed greater or equal.
        Sge = "sge",
    }
);

op_table!(
    /// Conversions between types; the result type is written in the instruction.
    ConvOp {
        /// Zero-extend an integer to a wider integer.
        Zext = "zext",
        /// Sign-extend an integer to a wider integer.
        Sext = "sext",
        /// Keep the low bits of an integer as a narrower integer.
        Trunc = "trunc",
        /// Reinterpret bits between an integer and a float of the same width (i32<->f32, i64<->f64).
        Bitcast = "bitcast",
    }
);

op_table!(
    /// Two-operand float arithmetic with an explicit rounding.
    FBinaryOp {
        /// Addition.
        Fadd = "fadd",
        /// Subtraction.
        Fsub = "fsub",
        /// Multiplication.
        Fmul = "fmul",
        /// Division.
        Fdiv = "fdiv",
    }
);

op_table!(
    /// Three-operand float arithmetic with an explicit rounding.
    FTernaryOp {
        /// Fused multiply-add `a * b + c`, rounded once.
        Fma = "fma",
    }
);

op_table!(
    /// One-operand float operations; `fsqrt` rounds, the others are exact.
    FUnaryOp {
        /// Square root.
        Fsqrt = "fsqrt",
        /// Sign flip.
        Fneg = "fneg",
        /// Absolute value.
        Fabs = "fabs",
    }
);

op_table!(
    /// Float comparisons; the result is `i1`. `Uno` is true when either operand is NaN;
    /// the ordered conditions are false then.
    FloatCC {
        /// Ordered and equal.
        Eq = "feq",
        /// Ordered and less than.
        Lt = "flt",
        /// Ordered and less or equal.
        Le = "fle",
        /// Unordered (either is NaN).
        Uno = "funo",
    }
);

op_table!(
    /// Conversions involving floats; the result type is written in the instruction.
    FConvOp {
        /// Float to float of another precision, rounding when it narrows.
        Fconvert = "fconvert",
        /// Signed integer to float, rounding.
        SintToFloat = "sitof",
        /// Unsigned integer to float, rounding.
        UintToFloat = "uitof",
        /// Float to signed integer, rounding; out-of-range results are undefined
        /// here, so guests check ranges before converting.
        FloatToSint = "ftosi",
    }
);

op_table!(
    /// Why control leaves lifted code for the runtime.
    ExitReason {
        /// The PC has no lifted code (an indirect target nobody discovered, data executed).
        Unlifted = "unlifted",
        /// A system call or trap into the platform.
        Syscall = "syscall",
        /// The guest stopped (x86 `hlt`, an explicit program end).
        Halt = "halt",
        /// The guest waits for an event (65816 `wai`); the scheduler resumes it.
        Yield = "yield",
        /// Integer division by zero or an overflowing quotient (x86 #DE).
        DivideError = "divide_error",
        /// An instruction the guest CPU itself rejects (x86 `ud2`, PowerPC illegal).
        InvalidOpcode = "invalid_opcode",
        /// Code rpt could not lift (an instruction it has no rule for, bytes that do not decode):
        /// a guest fault, raised only if execution gets there (DESIGN.md §12).
        Unliftable = "unliftable",
    }
);

/// The side effects a runtime helper declares; passes rely on them to move code around calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default, serde::Serialize, serde::Deserialize)]
pub struct Effects {
    /// The helper reads guest state: any slot but the flags (slots with the `flag` role).
    pub reads_state: bool,
    /// The helper reads flag slots. Kept apart from `reads_state` so that a helper reading, say,
    /// the x87 registers does not keep every guest flag alive before it (passes/flag-abi).
    pub reads_flags: bool,
    /// The helper writes guest state (any slot).
    pub writes_state: bool,
    /// The helper reads guest memory.
    pub reads_memory: bool,
    /// The helper writes guest memory.
    pub writes_memory: bool,
    /// The helper may leave lifted code for the runtime and never return.
    pub may_exit: bool,
}

impl Effects {
    /// No effects: a pure function of its arguments.
    pub const PURE: Effects = Effects {
        reads_state: false,
        reads_flags: false,
        writes_state: false,
        reads_memory: false,
        writes_memory: false,
        may_exit: false,
    };

    /// The text-form names of the set effects, in a fixed order.
    pub fn names(self) -> Vec<&'static str> {
        let mut out = Vec::new();
        for (on, name) in [
            (self.reads_state, "reads_state"),
            (self.reads_flags, "reads_flags"),
            (self.writes_state, "writes_state"),
            (self.reads_memory, "reads_memory"),
            (self.writes_memory, "writes_memory"),
            (self.may_exit, "may_exit"),
        ] {
            if on {
                out.push(name);
            }
        }
        out
    }

    /// Sets the effect with this text-form name; false if there is no such effect.
    pub fn set_by_name(&mut self, name: &str) -> bool {
        let flag = match name {
            "reads_state" => &mut self.reads_state,
            "reads_flags" => &mut self.reads_flags,
            "writes_state" => &mut self.writes_state,
            "reads_memory" => &mut self.reads_memory,
            "writes_memory" => &mut self.writes_memory,
            "may_exit" => &mut self.may_exit,
            _ => return false,
        };
        *flag = true;
        true
    }
}

/// The declaration of a runtime helper that instructions may call.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct HelperDecl {
    /// The helper's name; the C runtime defines `rpt_helper_<name>`.
    pub name: String,
    /// Argument types.
    pub params: Vec<Type>,
    /// Result type, if it returns a value.
    pub result: Option<Type>,
    /// What it may touch.
    pub effects: Effects,
    /// The only slots it reads (with `reads_state`) or writes (with `writes_state`), in slot
    /// order; empty means any slot. Code that keeps slots outside `struct cpu` (state in locals)
    /// hands over only these around a call.
    #[serde(default)]
    pub touches: Vec<SlotId>,
}

/// The operation of one non-terminator instruction.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum InstKind {
    /// An integer constant; `imm` holds the low `ty.bits()` bits.
    Iconst {
        /// The integer type.
        ty: Type,
        /// The value, zero-extended.
        imm: u64,
    },
    /// A float constant given by its bit pattern (`f80` uses the low 80 bits).
    Fconst {
        /// The float type.
        ty: Type,
        /// The bit pattern.
        bits: u128,
    },
    /// A one-operand integer operation.
    Unary {
        /// Which one.
        op: UnaryOp,
        /// The operand.
        arg: Value,
    },
    /// A two-operand integer operation.
    Binary {
        /// Which one.
        op: BinaryOp,
        /// Left and right operands.
        args: [Value; 2],
    },
    /// An integer comparison producing `i1`.
    Icmp {
        /// The condition.
        cond: IntCC,
        /// Left and right operands.
        args: [Value; 2],
    },
    /// `cond ? if_true : if_false`.
    Select {
        /// An `i1`.
        cond: Value,
        /// The value when true.
        if_true: Value,
        /// The value when false.
        if_false: Value,
    },
    /// An integer width or bit-reinterpreting conversion.
    Convert {
        /// Which conversion.
        op: ConvOp,
        /// The operand.
        arg: Value,
        /// The result type.
        to: Type,
    },
    /// Float arithmetic with explicit rounding.
    FBinary {
        /// Which operation.
        op: FBinaryOp,
        /// How the result is rounded.
        rounding: Rounding,
        /// Left and right operands.
        args: [Value; 2],
    },
    /// Three-operand float arithmetic with explicit rounding.
    FTernary {
        /// Which operation.
        op: FTernaryOp,
        /// How the result is rounded.
        rounding: Rounding,
        /// The operands (`a`, `b`, `c` of `a * b + c` for `fma`).
        args: [Value; 3],
    },
    /// One-operand float operation.
    FUnary {
        /// Which operation.
        op: FUnaryOp,
        /// How the result is rounded (only `fsqrt` rounds).
        rounding: Rounding,
        /// The operand.
        arg: Value,
    },
    /// A float comparison producing `i1`.
    Fcmp {
        /// The condition.
        cond: FloatCC,
        /// Left and right operands.
        args: [Value; 2],
    },
    /// A conversion involving floats.
    FConvert {
        /// Which conversion.
        op: FConvOp,
        /// How the result is rounded.
        rounding: Rounding,
        /// The operand.
        arg: Value,
        /// The result type.
        to: Type,
    },
    /// Reads a plain or packed state slot.
    GetSlot {
        /// The slot.
        slot: SlotId,
    },
    /// Writes a plain or packed state slot.
    SetSlot {
        /// The slot.
        slot: SlotId,
        /// The new value, of the slot's type.
        value: Value,
    },
    /// Declares the current value of a plain slot dead: nothing reads it before the slot is
    /// written again, so from here on its value is unspecified. Liveness analyses (flag-abi) leave
    /// this where a value they kept for one path would otherwise reach a write-back on another:
    /// the C backend then drops the slot from what it writes back to `struct cpu`. Executing it
    /// changes nothing (keeping the old value is one unspecified value).
    Kill {
        /// The slot.
        slot: SlotId,
    },
    /// Reads element `index` (modulo the array length) of an array slot.
    GetIndexed {
        /// The array slot.
        slot: SlotId,
        /// An `i32` index.
        index: Value,
    },
    /// Writes element `index` (modulo the array length) of an array slot.
    SetIndexed {
        /// The array slot.
        slot: SlotId,
        /// An `i32` index.
        index: Value,
        /// The new value, of the element type.
        value: Value,
    },
    /// Loads `ty` from guest memory.
    Load {
        /// The loaded type.
        ty: Type,
        /// Byte order.
        endian: Endian,
        /// Address space.
        space: AddrSpace,
        /// The guest address, an `i32` or `i64`.
        addr: Value,
    },
    /// Stores a value to guest memory.
    Store {
        /// Byte order.
        endian: Endian,
        /// Address space.
        space: AddrSpace,
        /// The guest address, an `i32` or `i64`.
        addr: Value,
        /// The stored value; its type gives the width.
        value: Value,
    },
    /// Calls a runtime helper declared in the program.
    CallHelper {
        /// The helper's name.
        helper: String,
        /// Its arguments.
        args: Vec<Value>,
    },
    /// Marks the start of the guest instruction at `pc`.
    Mark {
        /// The guest instruction's address.
        pc: GuestAddr,
    },
}

/// A non-terminator instruction: an operation and, if it produces one, its result value.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Inst {
    /// The value defined by this instruction.
    pub result: Option<Value>,
    /// What it does.
    pub kind: InstKind,
}

/// A jump to a block passing values for its parameters.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct BlockCall {
    /// The target block.
    pub block: Block,
    /// One argument per block parameter.
    pub args: Vec<Value>,
}

impl BlockCall {
    /// A jump to a block without parameters.
    pub fn plain(block: Block) -> BlockCall {
        BlockCall {
            block,
            args: Vec::new(),
        }
    }
}

/// The callee of a call or tail call.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum CallTarget {
    /// A function known at lift time (a lifted function or an extern).
    Direct(GuestAddr),
    /// A guest address computed at run time, dispatched through the function table.
    Indirect(Value),
}

/// How a block ends.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Terminator {
    /// Continue at another block.
    Jump(BlockCall),
    /// Two-way branch on an `i1`.
    Branch {
        /// The condition.
        cond: Value,
        /// Taken when true.
        then_dest: BlockCall,
        /// Taken when false.
        else_dest: BlockCall,
    },
    /// A recovered jump table: `index` selects `cases[index]`, anything else goes to `default`.
    Switch {
        /// An integer index.
        index: Value,
        /// Targets for 0, 1, 2, ...
        cases: Vec<BlockCall>,
        /// Target for out-of-range indices.
        default: BlockCall,
    },
    /// Calls a function, then continues at `cont` when it returns.
    Call {
        /// The callee.
        target: CallTarget,
        /// Where execution continues after the callee returns.
        cont: BlockCall,
    },
    /// Returns to the caller.
    Return,
    /// Transfers to another function without returning here (a guest tail jump).
    TailCall {
        /// The callee.
        target: CallTarget,
    },
    /// Leaves lifted code for the runtime at guest address `pc`.
    Exit {
        /// The guest PC the runtime should report or resume at.
        pc: Value,
        /// Why.
        reason: ExitReason,
    },
    /// Control never gets here.
    Unreachable,
}

impl Terminator {
    /// The blocks this terminator can continue at within the function.
    pub fn successors(&self) -> Vec<&BlockCall> {
        match self {
            Terminator::Jump(dest) => vec![dest],
            Terminator::Branch {
                then_dest, else_dest, ..
            } => vec![then_dest, else_dest],
            Terminator::Switch { cases, default, .. } => cases.iter().chain(std::iter::once(default)).collect(),
            Terminator::Call { cont, .. } => vec![cont],
            Terminator::Return | Terminator::TailCall { .. } | Terminator::Exit { .. } | Terminator::Unreachable => {
                Vec::new()
            }
        }
    }

    /// Mutable access to the block calls, for passes that rewrite arguments.
    pub fn successors_mut(&mut self) -> Vec<&mut BlockCall> {
        match self {
            Terminator::Jump(dest) => vec![dest],
            Terminator::Branch {
                then_dest, else_dest, ..
            } => vec![then_dest, else_dest],
            Terminator::Switch { cases, default, .. } => cases.iter_mut().chain(std::iter::once(default)).collect(),
            Terminator::Call { cont, .. } => vec![cont],
            Terminator::Return | Terminator::TailCall { .. } | Terminator::Exit { .. } | Terminator::Unreachable => {
                Vec::new()
            }
        }
    }

    /// The values the terminator reads, block arguments included.
    pub fn operands(&self) -> Vec<Value> {
        let mut out = Vec::new();
        match self {
            Terminator::Branch { cond, .. } => out.push(*cond),
            Terminator::Switch { index, .. } => out.push(*index),
            Terminator::Call {
                target: CallTarget::Indirect(v),
                ..
            }
            | Terminator::TailCall {
                target: CallTarget::Indirect(v),
            } => out.push(*v),
            Terminator::Exit { pc, .. } => out.push(*pc),
            Terminator::Jump(_)
            | Terminator::Call {
                target: CallTarget::Direct(_),
                ..
            }
            | Terminator::Return
            | Terminator::TailCall {
                target: CallTarget::Direct(_),
            }
            | Terminator::Unreachable => {}
        }
        for dest in self.successors() {
            out.extend_from_slice(&dest.args);
        }
        out
    }
}

impl InstKind {
    /// The values this instruction reads.
    pub fn operands(&self) -> Vec<Value> {
        match self {
            InstKind::Iconst { .. }
            | InstKind::Fconst { .. }
            | InstKind::GetSlot { .. }
            | InstKind::Kill { .. }
            | InstKind::Mark { .. } => Vec::new(),
            InstKind::Unary { arg, .. }
            | InstKind::Convert { arg, .. }
            | InstKind::FUnary { arg, .. }
            | InstKind::FConvert { arg, .. } => vec![*arg],
            InstKind::Binary { args, .. }
            | InstKind::Icmp { args, .. }
            | InstKind::FBinary { args, .. }
            | InstKind::Fcmp { args, .. } => args.to_vec(),
            InstKind::FTernary { args, .. } => args.to_vec(),
            InstKind::Select {
                cond,
                if_true,
                if_false,
            } => vec![*cond, *if_true, *if_false],
            InstKind::SetSlot { value, .. } => vec![*value],
            InstKind::GetIndexed { index, .. } => vec![*index],
            InstKind::SetIndexed { index, value, .. } => vec![*index, *value],
            InstKind::Load { addr, .. } => vec![*addr],
            InstKind::Store { addr, value, .. } => vec![*addr, *value],
            InstKind::CallHelper { args, .. } => args.clone(),
        }
    }

    /// Applies `f` to every value operand in place (for passes that substitute values).
    pub fn map_operands(&mut self, mut f: impl FnMut(Value) -> Value) {
        match self {
            InstKind::Iconst { .. }
            | InstKind::Fconst { .. }
            | InstKind::GetSlot { .. }
            | InstKind::Kill { .. }
            | InstKind::Mark { .. } => {}
            InstKind::Unary { arg, .. }
            | InstKind::Convert { arg, .. }
            | InstKind::FUnary { arg, .. }
            | InstKind::FConvert { arg, .. } => *arg = f(*arg),
            InstKind::Binary { args, .. }
            | InstKind::Icmp { args, .. }
            | InstKind::FBinary { args, .. }
            | InstKind::Fcmp { args, .. } => {
                for a in args {
                    *a = f(*a);
                }
            }
            InstKind::FTernary { args, .. } => {
                for a in args {
                    *a = f(*a);
                }
            }
            InstKind::Select {
                cond,
                if_true,
                if_false,
            } => {
                *cond = f(*cond);
                *if_true = f(*if_true);
                *if_false = f(*if_false);
            }
            InstKind::SetSlot { value, .. } => *value = f(*value),
            InstKind::GetIndexed { index, .. } => *index = f(*index),
            InstKind::SetIndexed { index, value, .. } => {
                *index = f(*index);
                *value = f(*value);
            }
            InstKind::Load { addr, .. } => *addr = f(*addr),
            InstKind::Store { addr, value, .. } => {
                *addr = f(*addr);
                *value = f(*value);
            }
            InstKind::CallHelper { args, .. } => {
                for a in args {
                    *a = f(*a);
                }
            }
        }
    }

    /// Whether the instruction has an effect beyond defining its result
    /// (so dead-code elimination must keep it even if the result is unused).
    pub fn has_side_effects(&self) -> bool {
        match self {
            InstKind::SetSlot { .. }
            | InstKind::Kill { .. }
            | InstKind::SetIndexed { .. }
            | InstKind::Store { .. }
            | InstKind::CallHelper { .. }
            | InstKind::Mark { .. } => true,
            // A load can fault in the guest, but lifted code treats guest memory as always mapped.
            InstKind::Iconst { .. }
            | InstKind::Fconst { .. }
            | InstKind::Unary { .. }
            | InstKind::Binary { .. }
            | InstKind::Icmp { .. }
            | InstKind::Select { .. }
            | InstKind::Convert { .. }
            | InstKind::FBinary { .. }
            | InstKind::FTernary { .. }
            | InstKind::FUnary { .. }
            | InstKind::Fcmp { .. }
            | InstKind::FConvert { .. }
            | InstKind::GetSlot { .. }
            | InstKind::GetIndexed { .. }
            | InstKind::Load { .. } => false,
        }
    }
}

impl Terminator {
    /// Applies `f` to every value operand in place, block arguments included.
    pub fn map_operands(&mut self, mut f: impl FnMut(Value) -> Value) {
        match self {
            Terminator::Branch { cond, .. } => *cond = f(*cond),
            Terminator::Switch { index, .. } => *index = f(*index),
            Terminator::Call {
                target: CallTarget::Indirect(v),
                ..
            }
            | Terminator::TailCall {
                target: CallTarget::Indirect(v),
            } => *v = f(*v),
            Terminator::Exit { pc, .. } => *pc = f(*pc),
            Terminator::Jump(_)
            | Terminator::Call {
                target: CallTarget::Direct(_),
                ..
            }
            | Terminator::Return
            | Terminator::TailCall {
                target: CallTarget::Direct(_),
            }
            | Terminator::Unreachable => {}
        }
        for dest in self.successors_mut() {
            for a in &mut dest.args {
                *a = f(*a);
            }
        }
    }
}
