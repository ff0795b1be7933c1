//! A cursor for appending instructions to a function, with result types inferred.
//!
//! Lifters and passes build IR through this so that result types are derived in
//! one place; the verifier still checks everything afterwards.

use crate::{
    AddrSpace, BinaryOp, Block, BlockCall, CallTarget, ConvOp, Endian, ExitReason, FBinaryOp, FConvOp, FTernaryOp,
    FUnaryOp, FloatCC, Function, GuestAddr, Inst, InstKind, IntCC, Rounding, SlotId, StateDesc, Terminator, Type,
    UnaryOp, Value,
};

/// Appends instructions to the current block of a function.
pub struct FunctionBuilder<'a> {
    func: &'a mut Function,
    state: &'a StateDesc,
    current: Block,
}

impl<'a> FunctionBuilder<'a> {
    /// Starts building into `func`, creating its entry block if it has none.
    pub fn new(func: &'a mut Function, state: &'a StateDesc) -> FunctionBuilder<'a> {
        if func.blocks.is_empty() {
            func.new_block();
        }
        FunctionBuilder {
            func,
            state,
            current: Block(0),
        }
    }

    /// The function being built.
    pub fn func(&self) -> &Function {
        self.func
    }

    /// The register file slots refer to.
    pub fn state(&self) -> &StateDesc {
        self.state
    }

    /// Creates a new block (not yet current).
    pub fn create_block(&mut self) -> Block {
        self.func.new_block()
    }

    /// Adds a parameter of type `ty` to `block`.
    pub fn add_block_param(&mut self, block: Block, ty: Type) -> Value {
        let v = self.func.new_value(ty);
        self.func.block_mut(block).params.push(v);
        v
    }

    /// Makes `block` the block new instructions go to.
    pub fn switch_to_block(&mut self, block: Block) {
        self.current = block;
    }

    /// The block new instructions go to.
    pub fn current_block(&self) -> Block {
        self.current
    }

    /// The type of a value of this function.
    ///
    /// Values come from this builder, so the lookup cannot fail for well-formed use;
    /// a foreign value is reported as `i1` and left for the verifier to reject.
    pub fn ty(&self, v: Value) -> Type {
        self.func.value_type(v).unwrap_or(Type::I1)
    }

    fn push(&mut self, result: Option<Type>, kind: InstKind) -> Option<Value> {
        let result = result.map(|ty| self.func.new_value(ty));
        let block = self.current;
        self.func.block_mut(block).insts.push(Inst { result, kind });
        result
    }

    fn push_value(&mut self, ty: Type, kind: InstKind) -> Value {
        let v = self.func.new_value(ty);
        let block = self.current;
        self.func.block_mut(block).insts.push(Inst { result: Some(v), kind });
        v
    }

    /// Appends an instruction as it is, with a new result value of type `result` if it has one:
    /// for passes that copy instructions from elsewhere (their operands must already be this
    /// function's values).
    pub fn push_inst(&mut self, kind: InstKind, result: Option<Type>) -> Option<Value> {
        self.push(result, kind)
    }

    /// Ends the current block.
    pub fn terminate(&mut self, term: Terminator) {
        let block = self.current;
        self.func.block_mut(block).term = term;
    }

    /// `mark pc`.
    pub fn mark(&mut self, pc: GuestAddr) {
        self.push(None, InstKind::Mark { pc });
    }

    /// An integer constant, truncated to the type.
    pub fn iconst(&mut self, ty: Type, imm: u64) -> Value {
        self.push_value(
            ty,
            InstKind::Iconst {
                ty,
                imm: imm & ty.mask(),
            },
        )
    }

    /// A float constant from its bit pattern.
    pub fn fconst(&mut self, ty: Type, bits: u128) -> Value {
        self.push_value(ty, InstKind::Fconst { ty, bits })
    }

    /// A one-operand integer operation.
    pub fn unary(&mut self, op: UnaryOp, arg: Value) -> Value {
        let ty = self.ty(arg);
        self.push_value(ty, InstKind::Unary { op, arg })
    }

    /// A two-operand integer operation.
    pub fn binary(&mut self, op: BinaryOp, a: Value, b: Value) -> Value {
        let ty = self.ty(a);
        self.push_value(ty, InstKind::Binary { op, args: [a, b] })
    }

    /// A two-operand operation with an immediate right operand of the left's type.
    pub fn binary_imm(&mut self, op: BinaryOp, a: Value, imm: u64) -> Value {
        let ty = self.ty(a);
        let b = self.iconst(ty, imm);
        self.binary(op, a, b)
    }

    /// An integer comparison.
    pub fn icmp(&mut self, cond: IntCC, a: Value, b: Value) -> Value {
        self.push_value(Type::I1, InstKind::Icmp { cond, args: [a, b] })
    }

    /// An integer comparison against an immediate.
    pub fn icmp_imm(&mut self, cond: IntCC, a: Value, imm: u64) -> Value {
        let ty = self.ty(a);
        let b = self.iconst(ty, imm);
        self.icmp(cond, a, b)
    }

    /// `cond ? if_true : if_false`.
    pub fn select(&mut self, cond: Value, if_true: Value, if_false: Value) -> Value {
        let ty = self.ty(if_true);
        self.push_value(
            ty,
            InstKind::Select {
                cond,
                if_true,
                if_false,
            },
        )
    }

    /// A conversion to `to`.
    pub fn convert(&mut self, op: ConvOp, arg: Value, to: Type) -> Value {
        self.push_value(to, InstKind::Convert { op, arg, to })
    }

    /// Zero-extends or truncates `arg` to `to`, or returns it unchanged if it already has that type.
    pub fn resize(&mut self, arg: Value, to: Type) -> Value {
        let from = self.ty(arg);
        match from.bits().cmp(&to.bits()) {
            std::cmp::Ordering::Less => self.convert(ConvOp::Zext, arg, to),
            std::cmp::Ordering::Greater => self.convert(ConvOp::Trunc, arg, to),
            std::cmp::Ordering::Equal => arg,
        }
    }

    /// Sign-extends `arg` to `to`, or returns it unchanged if it already has that type.
    pub fn sext(&mut self, arg: Value, to: Type) -> Value {
        if self.ty(arg) == to {
            arg
        } else {
            self.convert(ConvOp::Sext, arg, to)
        }
    }

    /// Float arithmetic.
    pub fn fbinary(&mut self, op: FBinaryOp, rounding: Rounding, a: Value, b: Value) -> Value {
        let ty = self.ty(a);
        self.push_value(
            ty,
            InstKind::FBinary {
                op,
                rounding,
                args: [a, b],
            },
        )
    }

    /// Three-operand float arithmetic (`fma`).
    pub fn fternary(&mut self, op: FTernaryOp, rounding: Rounding, a: Value, b: Value, c: Value) -> Value {
        let ty = self.ty(a);
        self.push_value(
            ty,
            InstKind::FTernary {
                op,
                rounding,
                args: [a, b, c],
            },
        )
    }

    /// One-operand float operation.
    pub fn funary(&mut self, op: FUnaryOp, rounding: Rounding, arg: Value) -> Value {
        let ty = self.ty(arg);
        self.push_value(ty, InstKind::FUnary { op, rounding, arg })
    }

    /// A float comparison.
    pub fn fcmp(&mut self, cond: FloatCC, a: Value, b: Value) -> Value {
        self.push_value(Type::I1, InstKind::Fcmp { cond, args: [a, b] })
    }

    /// A conversion involving floats.
    pub fn fconvert(&mut self, op: FConvOp, rounding: Rounding, arg: Value, to: Type) -> Value {
        self.push_value(to, InstKind::FConvert { op, rounding, arg, to })
    }

    /// Reads a plain or packed slot.
    pub fn get(&mut self, slot: SlotId) -> Value {
        let ty = self.state.get(slot).map_or(Type::I1, |s| s.ty);
        self.push_value(ty, InstKind::GetSlot { slot })
    }

    /// Writes a plain or packed slot.
    pub fn set(&mut self, slot: SlotId, value: Value) {
        self.push(None, InstKind::SetSlot { slot, value });
    }

    /// Reads an array slot element.
    pub fn get_indexed(&mut self, slot: SlotId, index: Value) -> Value {
        let ty = self.state.get(slot).map_or(Type::I1, |s| s.ty);
        self.push_value(ty, InstKind::GetIndexed { slot, index })
    }

    /// Writes an array slot element.
    pub fn set_indexed(&mut self, slot: SlotId, index: Value, value: Value) {
        self.push(None, InstKind::SetIndexed { slot, index, value });
    }

    /// Loads from guest memory.
    pub fn load(&mut self, ty: Type, endian: Endian, space: AddrSpace, addr: Value) -> Value {
        self.push_value(
            ty,
            InstKind::Load {
                ty,
                endian,
                space,
                addr,
            },
        )
    }

    /// Stores to guest memory.
    pub fn store(&mut self, endian: Endian, space: AddrSpace, addr: Value, value: Value) {
        self.push(
            None,
            InstKind::Store {
                endian,
                space,
                addr,
                value,
            },
        );
    }

    /// Calls a runtime helper; `result` is its declared result type.
    pub fn call_helper(&mut self, helper: &str, args: Vec<Value>, result: Option<Type>) -> Option<Value> {
        self.push(
            result,
            InstKind::CallHelper {
                helper: helper.to_string(),
                args,
            },
        )
    }

    /// Ends the block with a jump.
    pub fn jump(&mut self, block: Block, args: Vec<Value>) {
        self.terminate(Terminator::Jump(BlockCall { block, args }));
    }

    /// Ends the block with a two-way branch to parameterless blocks.
    pub fn branch(&mut self, cond: Value, then_block: Block, else_block: Block) {
        self.terminate(Terminator::Branch {
            cond,
            then_dest: BlockCall::plain(then_block),
            else_dest: BlockCall::plain(else_block),
        });
    }

    /// Ends the block with a call that continues at `cont`.
    pub fn call(&mut self, target: CallTarget, cont: Block) {
        self.terminate(Terminator::Call {
            target,
            cont: BlockCall::plain(cont),
        });
    }

    /// Ends the block with an exit to the runtime at a constant guest PC.
    pub fn exit_at(&mut self, pc: GuestAddr, reason: ExitReason, pc_type: Type) {
        let pc = self.iconst(pc_type, pc.0);
        self.terminate(Terminator::Exit { pc, reason });
    }

    /// The bits (an i64) of the double NaN with the sign and payload of the float NaN whose bits
    /// are `bits` (an i32): the float's fraction moved to the top of the double's, the exponent
    /// all ones, and the quiet bit set when `quiet`. Unlike a conversion, it keeps a signalling
    /// NaN signalling unless asked to quiet it.
    pub fn f32_nan_to_f64_bits(&mut self, bits: Value, quiet: bool) -> Value {
        let wide = self.resize(bits, Type::I64);
        let sign = self.binary_imm(BinaryOp::And, wide, 0x8000_0000);
        let sign = self.binary_imm(BinaryOp::Shl, sign, 32);
        let fraction = self.binary_imm(BinaryOp::And, wide, 0x007f_ffff);
        let fraction = self.binary_imm(BinaryOp::Shl, fraction, 29);
        let nan = self.binary(BinaryOp::Or, sign, fraction);
        let exponent = if quiet {
            0x7ff8_0000_0000_0000
        } else {
            0x7ff0_0000_0000_0000
        };
        self.binary_imm(BinaryOp::Or, nan, exponent)
    }

    /// The bits (an i32) of the float NaN with the sign and the top of the payload of the double
    /// NaN whose bits are `bits` (an i64), quieted: the converse of [`Self::f32_nan_to_f64_bits`].
    pub fn f64_nan_to_f32_bits(&mut self, bits: Value) -> Value {
        let sign = self.binary_imm(BinaryOp::Lshr, bits, 32);
        let sign = self.binary_imm(BinaryOp::And, sign, 0x8000_0000);
        let fraction = self.binary_imm(BinaryOp::Lshr, bits, 29);
        let fraction = self.binary_imm(BinaryOp::And, fraction, 0x003f_ffff);
        let nan = self.binary(BinaryOp::Or, sign, fraction);
        let nan = self.binary_imm(BinaryOp::Or, nan, 0x7fc0_0000);
        self.resize(nan, Type::I32)
    }
}
