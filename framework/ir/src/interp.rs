//! The reference interpreter: runs IR against a register file and a memory image.
//!
//! It is the oracle for "a pass did not change behaviour" and for instruction
//! semantics without a C compiler, so it favours plain, obviously-right code
//! over speed. Floats: f32 and f64 arithmetic with round-to-nearest runs on the
//! host's floats; directed and dynamic roundings and `fma` use the software
//! floats of `rustc_apfloat` (dynamic rounding asks the [`Environment`] for the
//! guest's mode); directed square roots correct the host's with an exact
//! residual. f80 arithmetic and vectors report [`InterpError::Unsupported`]
//! rather than guessing. NaN
//! payloads of the software path may differ from a host's; guests that care
//! (PowerPC) pick their NaNs explicitly.

use std::collections::BTreeMap;

use rustc_apfloat::ieee::{Double, Single};
use rustc_apfloat::{Float, FloatConvert, Round};

use crate::{
    AddrSpace, BinaryOp, BlockCall, CallTarget, ConvOp, Endian, ExitReason, FBinaryOp, FConvOp, FTernaryOp, FUnaryOp,
    FloatCC, Function, GuestAddr, InstKind, IntCC, Program, Rounding, SlotId, SlotLayout, StateDesc, Terminator, Type,
    UnaryOp, Value,
};

/// A runtime value: integers zero-extended in a `u64`, floats by bit pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Val {
    /// An integer of any width (including `i1`), zero-extended.
    Int(u64),
    /// An f32 bit pattern.
    F32(u32),
    /// An f64 bit pattern.
    F64(u64),
    /// An f80 bit pattern in the low 80 bits.
    F80(u128),
    /// Two f32 lanes (lane 0 in the high half, as PowerPC ps0).
    V2F32(u64),
}

impl Val {
    /// The zero of a type.
    pub fn zero(ty: Type) -> Val {
        match ty {
            Type::I1 | Type::I8 | Type::I16 | Type::I32 | Type::I64 => Val::Int(0),
            Type::F32 => Val::F32(0),
            Type::F64 => Val::F64(0),
            Type::F80 => Val::F80(0),
            Type::V2F32 => Val::V2F32(0),
        }
    }

    /// The integer held, or 0 for a float (the verifier rules that out).
    pub fn int(self) -> u64 {
        match self {
            Val::Int(i) => i,
            _ => 0,
        }
    }
}

/// Why interpretation stopped without the function returning.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum InterpError {
    /// A call to an address that is neither a function nor an extern the environment handles.
    #[error("call to {0} which is not in the program")]
    UnknownFunction(GuestAddr),
    /// The environment does not implement a helper.
    #[error("helper @{0} is not implemented by the environment")]
    UnknownHelper(String),
    /// An operation whose result this interpreter does not model.
    #[error("the interpreter does not support {0}")]
    Unsupported(String),
    /// Undefined behaviour in the IR (division by zero, `unreachable`, a malformed value).
    #[error("undefined behaviour in {function}: {what}")]
    Undefined {
        /// Where.
        function: GuestAddr,
        /// What.
        what: String,
    },
    /// The step budget ran out (a guest loop that does not end within the test's budget).
    #[error("step limit reached")]
    StepLimit,
    /// Calls nested too deeply.
    #[error("call depth limit reached")]
    DepthLimit,
}

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The function returned to its caller.
    Returned,
    /// Control left lifted code for the runtime.
    Exited {
        /// The guest PC reported.
        pc: u64,
        /// Why.
        reason: ExitReason,
    },
}

/// Guest state: one value per plain slot, a vector per array slot; packed slots live in their parents.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StateValues {
    values: Vec<Vec<Val>>,
}

impl StateValues {
    /// All-zero state for a register file.
    pub fn new(desc: &StateDesc) -> StateValues {
        let values = desc
            .iter()
            .map(|(_, s)| match s.layout {
                SlotLayout::Plain => vec![Val::zero(s.ty)],
                SlotLayout::Packed { .. } => Vec::new(),
                SlotLayout::Array { len } => vec![Val::zero(s.ty); len as usize],
            })
            .collect();
        StateValues { values }
    }

    /// Reads a plain or packed slot.
    pub fn get(&self, desc: &StateDesc, slot: SlotId) -> Val {
        match desc.get(slot).map(|s| s.layout) {
            Some(SlotLayout::Packed { parent, lsb, bits }) => {
                let whole = self.get(desc, parent).int();
                Val::Int((whole >> lsb) & mask(u32::from(bits)))
            }
            _ => self
                .values
                .get(slot.index())
                .and_then(|v| v.first())
                .copied()
                .unwrap_or(Val::Int(0)),
        }
    }

    /// Writes a plain or packed slot.
    pub fn set(&mut self, desc: &StateDesc, slot: SlotId, value: Val) {
        match desc.get(slot).map(|s| s.layout) {
            Some(SlotLayout::Packed { parent, lsb, bits }) => {
                let m = mask(u32::from(bits)) << lsb;
                let whole = self.get(desc, parent).int();
                let merged = (whole & !m) | ((value.int() << lsb) & m);
                self.set(desc, parent, Val::Int(merged));
            }
            _ => {
                if let Some(v) = self.values.get_mut(slot.index()).and_then(|v| v.first_mut()) {
                    *v = value;
                }
            }
        }
    }

    /// Reads element `index` (modulo the length) of an array slot.
    pub fn get_indexed(&self, slot: SlotId, index: u64) -> Val {
        match self.values.get(slot.index()) {
            Some(v) if !v.is_empty() => v[(index % v.len() as u64) as usize],
            _ => Val::Int(0),
        }
    }

    /// Writes element `index` (modulo the length) of an array slot.
    pub fn set_indexed(&mut self, slot: SlotId, index: u64, value: Val) {
        if let Some(v) = self.values.get_mut(slot.index())
            && !v.is_empty()
        {
            let n = v.len() as u64;
            v[(index % n) as usize] = value;
        }
    }
}

/// A float operation in the host's arithmetic, which rounds to nearest as IEEE 754 does.
fn fbinary<T>(op: FBinaryOp, a: T, b: T) -> T
where
    T: std::ops::Add<Output = T> + std::ops::Sub<Output = T> + std::ops::Mul<Output = T> + std::ops::Div<Output = T>,
{
    match op {
        FBinaryOp::Fadd => a + b,
        FBinaryOp::Fsub => a - b,
        FBinaryOp::Fmul => a * b,
        FBinaryOp::Fdiv => a / b,
    }
}

fn mask(bits: u32) -> u64 {
    if bits >= 64 { u64::MAX } else { (1u64 << bits) - 1 }
}

const PAGE: u64 = 4096;

/// Sparse guest memory: pages appear on first write; unwritten bytes read as zero.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Memory {
    pages: BTreeMap<(AddrSpace, u64), Box<[u8]>>,
}

impl Memory {
    /// Empty memory.
    pub fn new() -> Memory {
        Memory::default()
    }

    /// Reads one byte.
    pub fn read_u8(&self, space: AddrSpace, addr: u64) -> u8 {
        self.pages
            .get(&(space, addr / PAGE))
            .map_or(0, |p| p[(addr % PAGE) as usize])
    }

    /// Writes one byte.
    pub fn write_u8(&mut self, space: AddrSpace, addr: u64, byte: u8) {
        let page = self
            .pages
            .entry((space, addr / PAGE))
            .or_insert_with(|| vec![0; PAGE as usize].into());
        page[(addr % PAGE) as usize] = byte;
    }

    /// Copies bytes in at `addr`.
    pub fn write_bytes(&mut self, space: AddrSpace, addr: u64, bytes: &[u8]) {
        for (i, b) in bytes.iter().enumerate() {
            self.write_u8(space, addr.wrapping_add(i as u64), *b);
        }
    }

    /// Reads `n` bytes (n <= 16) as an integer in the given byte order.
    pub fn read(&self, space: AddrSpace, addr: u64, n: u32, endian: Endian, addr_mask: u64) -> u128 {
        let mut v = 0u128;
        for i in 0..u64::from(n) {
            let b = u128::from(self.read_u8(space, addr.wrapping_add(i) & addr_mask));
            match endian {
                Endian::Little => v |= b << (8 * i),
                Endian::Big => v = (v << 8) | b,
            }
        }
        v
    }

    /// Writes the low `n` bytes of `v` in the given byte order.
    pub fn write(&mut self, space: AddrSpace, addr: u64, n: u32, endian: Endian, v: u128, addr_mask: u64) {
        for i in 0..u64::from(n) {
            let shift = match endian {
                Endian::Little => 8 * i,
                Endian::Big => 8 * (u64::from(n) - 1 - i),
            };
            self.write_u8(space, addr.wrapping_add(i) & addr_mask, (v >> shift) as u8);
        }
    }
}

/// What the interpreter asks of the world outside the IR: externs and helpers.
pub trait Environment {
    /// Runs the extern at `addr` (a platform import) against the machine; `Ok(None)` if unknown.
    fn call_extern(&mut self, addr: GuestAddr, machine: &mut MachineState) -> Result<Option<Outcome>, InterpError>;
    /// Runs a helper; `Ok(None)` if the helper is unknown.
    fn call_helper(
        &mut self,
        name: &str,
        args: &[Val],
        machine: &mut MachineState,
    ) -> Result<Option<Option<Val>>, InterpError>;

    /// The guest's current rounding mode, for `.rdyn` float operations. The default is an
    /// environment without one, which makes such operations unsupported.
    fn dynamic_rounding(&mut self, _machine: &MachineState) -> Result<Rounding, InterpError> {
        Err(InterpError::Unsupported(
            "dynamic rounding (the environment gives no rounding mode)".to_string(),
        ))
    }
}

/// An environment with no externs and no helpers.
pub struct NoEnvironment;

impl Environment for NoEnvironment {
    fn call_extern(&mut self, _: GuestAddr, _: &mut MachineState) -> Result<Option<Outcome>, InterpError> {
        Ok(None)
    }

    fn call_helper(&mut self, _: &str, _: &[Val], _: &mut MachineState) -> Result<Option<Option<Val>>, InterpError> {
        Ok(None)
    }
}

/// The mutable part of a run: registers and memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MachineState {
    /// The register file's values.
    pub state: StateValues,
    /// Guest memory.
    pub memory: Memory,
}

/// Runs functions of a program.
pub struct Interpreter<'p> {
    program: &'p Program,
    /// Registers and memory, read and written by the run.
    pub machine: MachineState,
    /// Remaining instruction budget; each instruction and terminator costs one.
    pub steps_left: u64,
    depth: u32,
}

const MAX_DEPTH: u32 = 2000;

fn float_unsupported<T>(what: &str) -> Result<T, InterpError> {
    Err(InterpError::Unsupported(what.to_string()))
}

impl<'p> Interpreter<'p> {
    /// An interpreter over `program` with zeroed state and empty memory.
    pub fn new(program: &'p Program) -> Interpreter<'p> {
        Interpreter {
            program,
            machine: MachineState {
                state: StateValues::new(&program.state),
                memory: Memory::new(),
            },
            steps_left: 10_000_000,
            depth: 0,
        }
    }

    /// Runs the function at `entry` until it returns or exits.
    pub fn run(&mut self, entry: GuestAddr, env: &mut dyn Environment) -> Result<Outcome, InterpError> {
        if let Some(func) = self.program.functions.get(&entry) {
            return self.run_function(func, env);
        }
        if self.program.externs.contains_key(&entry)
            && let Some(outcome) = env.call_extern(entry, &mut self.machine)?
        {
            return Ok(outcome);
        }
        Err(InterpError::UnknownFunction(entry))
    }

    /// Runs one function directly (it need not be part of the program; callees must be).
    pub fn run_function(&mut self, func: &Function, env: &mut dyn Environment) -> Result<Outcome, InterpError> {
        if self.depth >= MAX_DEPTH {
            return Err(InterpError::DepthLimit);
        }
        self.depth += 1;
        let result = self.run_body(func, env);
        self.depth -= 1;
        result
    }

    fn run_body(&mut self, func: &Function, env: &mut dyn Environment) -> Result<Outcome, InterpError> {
        let undefined = |what: String| InterpError::Undefined {
            function: func.entry,
            what,
        };
        let mut values: Vec<Option<Val>> = vec![None; func.value_types.len()];
        let mut block = 0usize;
        loop {
            let data = func
                .blocks
                .get(block)
                .ok_or_else(|| undefined(format!("jump to missing block{block}")))?;
            for inst in &data.insts {
                self.tick()?;
                let read = |v: Value| {
                    values
                        .get(v.index())
                        .copied()
                        .flatten()
                        .ok_or_else(|| undefined(format!("{v} read before it is defined")))
                };
                let result = self.exec(func, &inst.kind, &read, env)?;
                if let (Some(v), Some(val)) = (inst.result, result)
                    && let Some(slot) = values.get_mut(v.index())
                {
                    *slot = Some(val);
                }
            }
            self.tick()?;
            let read = |v: Value| {
                values
                    .get(v.index())
                    .copied()
                    .flatten()
                    .ok_or_else(|| undefined(format!("{v} read before it is defined")))
            };
            let next: &BlockCall = match &data.term {
                Terminator::Jump(dest) => dest,
                Terminator::Branch {
                    cond,
                    then_dest,
                    else_dest,
                } => {
                    if read(*cond)?.int() & 1 == 1 {
                        then_dest
                    } else {
                        else_dest
                    }
                }
                Terminator::Switch { index, cases, default } => {
                    let i = read(*index)?.int();
                    usize::try_from(i).ok().and_then(|i| cases.get(i)).unwrap_or(default)
                }
                Terminator::Call { target, cont } => {
                    let addr = self.target(target, &read)?;
                    match self.run(addr, env)? {
                        Outcome::Returned => cont,
                        exit @ Outcome::Exited { .. } => return Ok(exit),
                    }
                }
                Terminator::Return => return Ok(Outcome::Returned),
                Terminator::TailCall { target } => {
                    let addr = self.target(target, &read)?;
                    return self.run(addr, env);
                }
                Terminator::Exit { pc, reason } => {
                    return Ok(Outcome::Exited {
                        pc: read(*pc)?.int(),
                        reason: *reason,
                    });
                }
                Terminator::Unreachable => {
                    return Err(undefined("reached `unreachable`".to_string()));
                }
            };
            let args: Vec<Val> = next.args.iter().map(|v| read(*v)).collect::<Result<_, _>>()?;
            let target = func
                .blocks
                .get(next.block.index())
                .ok_or_else(|| undefined(format!("jump to missing {}", next.block)))?;
            for (p, a) in target.params.iter().zip(args) {
                if let Some(slot) = values.get_mut(p.index()) {
                    *slot = Some(a);
                }
            }
            block = next.block.index();
        }
    }

    fn tick(&mut self) -> Result<(), InterpError> {
        if self.steps_left == 0 {
            return Err(InterpError::StepLimit);
        }
        self.steps_left -= 1;
        Ok(())
    }

    fn target(
        &self,
        target: &CallTarget,
        read: &dyn Fn(Value) -> Result<Val, InterpError>,
    ) -> Result<GuestAddr, InterpError> {
        Ok(match target {
            CallTarget::Direct(a) => *a,
            CallTarget::Indirect(v) => GuestAddr(read(*v)?.int()),
        })
    }

    fn exec(
        &mut self,
        func: &Function,
        kind: &InstKind,
        read: &dyn Fn(Value) -> Result<Val, InterpError>,
        env: &mut dyn Environment,
    ) -> Result<Option<Val>, InterpError> {
        let ty_of = |v: Value| func.value_type(v).unwrap_or(Type::I64);
        let int = |v: Value| -> Result<u64, InterpError> { Ok(read(v)?.int()) };
        let desc = &self.program.state;
        let undefined = |what: String| InterpError::Undefined {
            function: func.entry,
            what,
        };
        Ok(Some(match kind {
            InstKind::Iconst { imm, .. } => Val::Int(*imm),
            InstKind::Fconst { ty, bits } => match ty {
                Type::F32 => Val::F32(*bits as u32),
                Type::F64 => Val::F64(*bits as u64),
                Type::F80 => Val::F80(*bits & ((1u128 << 80) - 1)),
                _ => return float_unsupported("fconst of this type"),
            },
            InstKind::Unary { op, arg } => {
                let ty = ty_of(*arg);
                let x = int(*arg)?;
                let bits = ty.bits();
                Val::Int(unary(*op, x, bits) & ty.mask())
            }
            InstKind::Binary { op, args } => {
                let ty = ty_of(args[0]);
                let (a, b) = (int(args[0])?, int(args[1])?);
                Val::Int(
                    binary(*op, a, b, ty.bits())
                        .ok_or_else(|| undefined(format!("{} with a zero or overflowing divisor", op.name())))?
                        & ty.mask(),
                )
            }
            InstKind::Icmp { cond, args } => {
                let bits = ty_of(args[0]).bits();
                Val::Int(u64::from(icmp(*cond, int(args[0])?, int(args[1])?, bits)))
            }
            InstKind::Select {
                cond,
                if_true,
                if_false,
            } => {
                if int(*cond)? & 1 == 1 {
                    read(*if_true)?
                } else {
                    read(*if_false)?
                }
            }
            InstKind::Convert { op, arg, to } => {
                let from = ty_of(*arg);
                let x = read(*arg)?;
                match op {
                    ConvOp::Zext => Val::Int(x.int()),
                    ConvOp::Sext => Val::Int((sign_extend(x.int(), from.bits()) as u64) & to.mask()),
                    ConvOp::Trunc => Val::Int(x.int() & to.mask()),
                    ConvOp::Bitcast => match (x, to) {
                        (Val::Int(i), Type::F32) => Val::F32(i as u32),
                        (Val::Int(i), Type::F64) => Val::F64(i),
                        (Val::Int(i), Type::V2F32) => Val::V2F32(i),
                        (Val::F32(f), _) => Val::Int(u64::from(f)),
                        (Val::F64(f) | Val::V2F32(f), _) => Val::Int(f),
                        _ => return float_unsupported("this bitcast"),
                    },
                }
            }
            InstKind::FTernary { op, rounding, args } => {
                let mode = resolve_rounding(*rounding, env, &self.machine)?;
                let (a, b, c) = (read(args[0])?, read(args[1])?, read(args[2])?);
                soft_fma(*op, mode, a, b, c)?
            }
            InstKind::FBinary { op, rounding, args } if *rounding != Rounding::Nearest => {
                let mode = resolve_rounding(*rounding, env, &self.machine)?;
                soft_fbinary(*op, mode, read(args[0])?, read(args[1])?)?
            }
            InstKind::FUnary {
                op: FUnaryOp::Fsqrt,
                rounding,
                arg,
            } if *rounding != Rounding::Nearest => {
                let mode = resolve_rounding(*rounding, env, &self.machine)?;
                directed_sqrt(mode, read(*arg)?)?
            }
            InstKind::FConvert { op, rounding, arg, to } if *rounding == Rounding::Dynamic => {
                let mode = resolve_rounding(*rounding, env, &self.machine)?;
                let x = read(*arg)?;
                let from = ty_of(*arg);
                fconvert(*op, mode, x, from, *to)?
            }
            InstKind::FBinary { op, rounding: _, args } => match (read(args[0])?, read(args[1])?) {
                (Val::F32(a), Val::F32(b)) => Val::F32(fbinary(*op, f32::from_bits(a), f32::from_bits(b)).to_bits()),
                (Val::F64(a), Val::F64(b)) => Val::F64(fbinary(*op, f64::from_bits(a), f64::from_bits(b)).to_bits()),
                _ => return float_unsupported(&format!("{} on this type", op.name())),
            },
            InstKind::FUnary { op, rounding, arg } => {
                let x = read(*arg)?;
                match (op, x) {
                    (FUnaryOp::Fneg, Val::F32(b)) => Val::F32(b ^ 0x8000_0000),
                    (FUnaryOp::Fneg, Val::F64(b)) => Val::F64(b ^ (1 << 63)),
                    (FUnaryOp::Fneg, Val::F80(b)) => Val::F80(b ^ (1 << 79)),
                    (FUnaryOp::Fabs, Val::F32(b)) => Val::F32(b & 0x7fff_ffff),
                    (FUnaryOp::Fabs, Val::F64(b)) => Val::F64(b & !(1 << 63)),
                    (FUnaryOp::Fabs, Val::F80(b)) => Val::F80(b & !(1 << 79)),
                    (FUnaryOp::Fsqrt, Val::F32(b)) if *rounding == Rounding::Nearest => {
                        Val::F32(f32::from_bits(b).sqrt().to_bits())
                    }
                    (FUnaryOp::Fsqrt, Val::F64(b)) if *rounding == Rounding::Nearest => {
                        Val::F64(f64::from_bits(b).sqrt().to_bits())
                    }
                    _ => {
                        return float_unsupported(&format!("{}.{} on this type", op.name(), rounding.name()));
                    }
                }
            }
            InstKind::Fcmp { cond, args } => {
                let (a, b) = match (read(args[0])?, read(args[1])?) {
                    (Val::F32(a), Val::F32(b)) => (f64::from(f32::from_bits(a)), f64::from(f32::from_bits(b))),
                    (Val::F64(a), Val::F64(b)) => (f64::from_bits(a), f64::from_bits(b)),
                    _ => return float_unsupported("fcmp on this type"),
                };
                Val::Int(u64::from(match cond {
                    FloatCC::Eq => a == b,
                    FloatCC::Lt => a < b,
                    FloatCC::Le => a <= b,
                    FloatCC::Uno => a.is_nan() || b.is_nan(),
                }))
            }
            InstKind::FConvert { op, rounding, arg, to } => {
                let x = read(*arg)?;
                let from = ty_of(*arg);
                fconvert(*op, *rounding, x, from, *to)?
            }
            InstKind::GetSlot { slot } => self.machine.state.get(desc, *slot),
            InstKind::SetSlot { slot, value } => {
                let v = read(*value)?;
                self.machine.state.set(desc, *slot, v);
                return Ok(None);
            }
            // The value becomes unspecified; keeping it is one such value.
            InstKind::Kill { .. } => return Ok(None),
            InstKind::GetIndexed { slot, index } => self.machine.state.get_indexed(*slot, int(*index)?),
            InstKind::SetIndexed { slot, index, value } => {
                let v = read(*value)?;
                self.machine.state.set_indexed(*slot, int(*index)?, v);
                return Ok(None);
            }
            InstKind::Load {
                ty,
                endian,
                space,
                addr,
            } => {
                let addr_mask = ty_of(*addr).mask();
                let a = int(*addr)? & addr_mask;
                let n = ty.bits().div_ceil(8);
                let raw = self.machine.memory.read(*space, a, n, *endian, addr_mask);
                match ty {
                    Type::F32 => Val::F32(raw as u32),
                    Type::F64 => Val::F64(raw as u64),
                    Type::F80 => Val::F80(raw),
                    Type::V2F32 => Val::V2F32(raw as u64),
                    _ => Val::Int(raw as u64),
                }
            }
            InstKind::Store {
                endian,
                space,
                addr,
                value,
            } => {
                let addr_mask = ty_of(*addr).mask();
                let a = int(*addr)? & addr_mask;
                let n = ty_of(*value).bits().div_ceil(8);
                let raw = match read(*value)? {
                    Val::Int(i) | Val::F64(i) | Val::V2F32(i) => u128::from(i),
                    Val::F32(f) => u128::from(f),
                    Val::F80(f) => f,
                };
                self.machine.memory.write(*space, a, n, *endian, raw, addr_mask);
                return Ok(None);
            }
            InstKind::CallHelper { helper, args } => {
                let args: Vec<Val> = args.iter().map(|v| read(*v)).collect::<Result<_, _>>()?;
                return match env.call_helper(helper, &args, &mut self.machine)? {
                    Some(result) => Ok(result),
                    None => Err(InterpError::UnknownHelper(helper.clone())),
                };
            }
            InstKind::Mark { .. } => return Ok(None),
        }))
    }
}

/// Evaluates one pure integer instruction (a constant, a unary or binary operation, a compare, a
/// select, an integer conversion) the way the interpreter does, for passes that evaluate the IR on
/// values they choose. `operand` gives each operand's value (zero-extended) and type; `None` for
/// anything else, an operand `operand` does not know, or a division the interpreter would refuse.
pub fn eval_pure_int(kind: &InstKind, operand: &dyn Fn(Value) -> Option<(u64, Type)>) -> Option<u64> {
    Some(match kind {
        InstKind::Iconst { ty, imm } => imm & ty.mask(),
        InstKind::Unary { op, arg } => {
            let (x, ty) = operand(*arg)?;
            unary(*op, x, ty.bits()) & ty.mask()
        }
        InstKind::Binary { op, args } => {
            let ((a, ty), (b, _)) = (operand(args[0])?, operand(args[1])?);
            binary(*op, a, b, ty.bits())? & ty.mask()
        }
        InstKind::Icmp { cond, args } => {
            let ((a, ty), (b, _)) = (operand(args[0])?, operand(args[1])?);
            u64::from(icmp(*cond, a, b, ty.bits()))
        }
        InstKind::Select {
            cond,
            if_true,
            if_false,
        } => {
            let (c, _) = operand(*cond)?;
            operand(if c & 1 == 1 { *if_true } else { *if_false })?.0
        }
        InstKind::Convert { op, arg, to } if to.is_int() => {
            let (x, from) = operand(*arg)?;
            match op {
                ConvOp::Zext => x,
                ConvOp::Sext => (sign_extend(x, from.bits()) as u64) & to.mask(),
                ConvOp::Trunc => x & to.mask(),
                ConvOp::Bitcast => return None,
            }
        }
        _ => return None,
    })
}

fn sign_extend(x: u64, bits: u32) -> i64 {
    if bits >= 64 {
        x as i64
    } else {
        let shift = 64 - bits;
        ((x << shift) as i64) >> shift
    }
}

fn unary(op: UnaryOp, x: u64, bits: u32) -> u64 {
    let m = mask(bits);
    match op {
        UnaryOp::Not => !x,
        UnaryOp::Neg => x.wrapping_neg(),
        UnaryOp::Popcnt => u64::from((x & m).count_ones()),
        UnaryOp::Clz => u64::from((x & m).leading_zeros() - (64 - bits)),
        UnaryOp::Ctz => {
            if x & m == 0 {
                u64::from(bits)
            } else {
                u64::from(x.trailing_zeros())
            }
        }
        UnaryOp::Bswap => (x & m).swap_bytes() >> (64 - bits),
    }
}

/// Evaluates a binary integer operation on zero-extended operands of `bits` width;
/// `None` for division by zero or a signed overflowing quotient.
fn binary(op: BinaryOp, a: u64, b: u64, bits: u32) -> Option<u64> {
    let m = mask(bits);
    let (a, b) = (a & m, b & m);
    let (sa, sb) = (sign_extend(a, bits), sign_extend(b, bits));
    let amount = (b % u64::from(bits.max(1))) as u32;
    Some(match op {
        BinaryOp::Add => a.wrapping_add(b),
        BinaryOp::Sub => a.wrapping_sub(b),
        BinaryOp::Mul => a.wrapping_mul(b),
        BinaryOp::Umulhi => ((u128::from(a) * u128::from(b)) >> bits) as u64,
        BinaryOp::Smulhi => ((i128::from(sa) * i128::from(sb)) >> bits) as u64,
        BinaryOp::Udiv => a.checked_div(b)?,
        BinaryOp::Urem => a.checked_rem(b)?,
        BinaryOp::Sdiv => {
            if b == 0 || (sa == sign_extend(1 << (bits - 1), bits) && sb == -1) {
                return None;
            }
            (sa / sb) as u64
        }
        BinaryOp::Srem => {
            if b == 0 || (sa == sign_extend(1 << (bits - 1), bits) && sb == -1) {
                return None;
            }
            (sa % sb) as u64
        }
        BinaryOp::And => a & b,
        BinaryOp::Or => a | b,
        BinaryOp::Xor => a ^ b,
        BinaryOp::Shl => a.checked_shl(amount).unwrap_or(0),
        BinaryOp::Lshr => a.checked_shr(amount).unwrap_or(0),
        BinaryOp::Ashr => (sa >> amount) as u64,
        BinaryOp::Rotl => {
            if amount == 0 {
                a
            } else {
                (a << amount) | (a >> (bits - amount))
            }
        }
        BinaryOp::Rotr => {
            if amount == 0 {
                a
            } else {
                (a >> amount) | (a << (bits - amount))
            }
        }
    })
}

fn icmp(cond: IntCC, a: u64, b: u64, bits: u32) -> bool {
    let (sa, sb) = (sign_extend(a, bits), sign_extend(b, bits));
    match cond {
        IntCC::Eq => a == b,
        IntCC::Ne => a != b,
        IntCC::Ult => a < b,
        IntCC::Ule => a <= b,
        IntCC::Ugt => a > b,
        IntCC::Uge => a >= b,
        IntCC::Slt => sa < sb,
        IntCC::Sle => sa <= sb,
        IntCC::Sgt => sa > sb,
        IntCC::Sge => sa >= sb,
    }
}

fn fconvert(op: FConvOp, rounding: Rounding, x: Val, from: Type, to: Type) -> Result<Val, InterpError> {
    let as_f64 = |x: Val| match x {
        Val::F32(b) => Some(f64::from(f32::from_bits(b))),
        Val::F64(b) => Some(f64::from_bits(b)),
        _ => None,
    };
    match op {
        FConvOp::Fconvert => match (x, to) {
            (Val::F32(b), Type::F64) => Ok(Val::F64(f64::from(f32::from_bits(b)).to_bits())),
            (Val::F64(b), Type::F32) if rounding == Rounding::Nearest => {
                Ok(Val::F32((f64::from_bits(b) as f32).to_bits()))
            }
            (Val::F64(b), Type::F32) => {
                let mut loses_info = false;
                let narrowed: Single = Double::from_bits(u128::from(b))
                    .convert_r(soft_round(rounding)?, &mut loses_info)
                    .value;
                Ok(Val::F32(narrowed.to_bits() as u32))
            }
            _ => float_unsupported(&format!("fconvert.{} from {from} to {to}", rounding.name())),
        },
        FConvOp::SintToFloat | FConvOp::UintToFloat => {
            let i = x.int();
            let signed = op == FConvOp::SintToFloat;
            if rounding != Rounding::Nearest {
                let round = soft_round(rounding)?;
                let wide = if signed {
                    i128::from(sign_extend(i, from.bits()))
                } else {
                    i128::from(i)
                };
                return match to {
                    Type::F64 => Ok(Val::F64(Double::from_i128_r(wide, round).value.to_bits() as u64)),
                    Type::F32 => Ok(Val::F32(Single::from_i128_r(wide, round).value.to_bits() as u32)),
                    _ => float_unsupported(&format!("{} to {to}", op.name())),
                };
            }
            match to {
                Type::F64 if signed => Ok(Val::F64((sign_extend(i, from.bits()) as f64).to_bits())),
                Type::F64 => Ok(Val::F64((i as f64).to_bits())),
                Type::F32 if signed => Ok(Val::F32((sign_extend(i, from.bits()) as f32).to_bits())),
                Type::F32 => Ok(Val::F32((i as f32).to_bits())),
                _ => float_unsupported(&format!("{} to {to}", op.name())),
            }
        }
        FConvOp::FloatToSint => {
            let Some(f) = as_f64(x) else {
                return float_unsupported(&format!("ftosi from {from}"));
            };
            let r = match rounding {
                Rounding::Zero => f.trunc(),
                Rounding::Nearest => f.round_ties_even(),
                Rounding::Up => f.ceil(),
                Rounding::Down => f.floor(),
                Rounding::Dynamic => return float_unsupported("ftosi.rdyn"),
            };
            let lo = -(2f64.powi(to.bits() as i32 - 1));
            if !(r >= lo && r < -lo) {
                return Err(InterpError::Unsupported(format!("ftosi of out-of-range {f}")));
            }
            Ok(Val::Int((r as i64 as u64) & to.mask()))
        }
    }
}

/// The rounding a `.rdyn` operation uses now, from the environment; fixed roundings pass through.
fn resolve_rounding(
    rounding: Rounding,
    env: &mut dyn Environment,
    machine: &MachineState,
) -> Result<Rounding, InterpError> {
    match rounding {
        Rounding::Dynamic => match env.dynamic_rounding(machine)? {
            Rounding::Dynamic => float_unsupported("a dynamic rounding mode that is itself dynamic"),
            fixed => Ok(fixed),
        },
        fixed => Ok(fixed),
    }
}

/// The software-float rounding of a fixed IR rounding.
fn soft_round(rounding: Rounding) -> Result<Round, InterpError> {
    Ok(match rounding {
        Rounding::Nearest => Round::NearestTiesToEven,
        Rounding::Zero => Round::TowardZero,
        Rounding::Up => Round::TowardPositive,
        Rounding::Down => Round::TowardNegative,
        Rounding::Dynamic => return float_unsupported("an unresolved dynamic rounding"),
    })
}

/// Two-operand float arithmetic in software floats, with any fixed rounding.
fn soft_fbinary(op: FBinaryOp, rounding: Rounding, a: Val, b: Val) -> Result<Val, InterpError> {
    fn apply<F: Float>(op: FBinaryOp, round: Round, a: F, b: F) -> F {
        match op {
            FBinaryOp::Fadd => a.add_r(b, round).value,
            FBinaryOp::Fsub => a.sub_r(b, round).value,
            FBinaryOp::Fmul => a.mul_r(b, round).value,
            FBinaryOp::Fdiv => a.div_r(b, round).value,
        }
    }
    let round = soft_round(rounding)?;
    match (a, b) {
        (Val::F32(a), Val::F32(b)) => Ok(Val::F32(
            apply(
                op,
                round,
                Single::from_bits(u128::from(a)),
                Single::from_bits(u128::from(b)),
            )
            .to_bits() as u32,
        )),
        (Val::F64(a), Val::F64(b)) => Ok(Val::F64(
            apply(
                op,
                round,
                Double::from_bits(u128::from(a)),
                Double::from_bits(u128::from(b)),
            )
            .to_bits() as u64,
        )),
        _ => float_unsupported(&format!("{}.{} on this type", op.name(), rounding.name())),
    }
}

/// A square root rounded toward zero, +infinity or -infinity.
///
/// f64: the host's correctly rounded result, moved by one unit in the last place when the
/// residual `x - r*r` (a fused multiply-add computes it exactly) shows it lies on the wrong side.
/// Tiny inputs are scaled up by an even power of two first, so the residual cannot underflow.
/// f32: the f64 square root narrowed in the directed mode; it is never a float unless the
/// exact root is, so narrowing it rounds the exact root.
fn directed_sqrt(rounding: Rounding, x: Val) -> Result<Val, InterpError> {
    let round = soft_round(rounding)?;
    let sqrt_f64 = |x: f64| -> f64 {
        let r = x.sqrt();
        if !r.is_finite() || r == 0.0 {
            return r;
        }
        let (scaled, unscale) = if x < 2f64.powi(-900) {
            (x * 2f64.powi(1000), 2f64.powi(-500))
        } else {
            (x, 1.0)
        };
        let r = scaled.sqrt();
        let residual = (-r).mul_add(r, scaled);
        // r is positive, so one step of its bit pattern is one ulp up or down.
        let adjusted = match round {
            Round::TowardPositive if residual > 0.0 => f64::from_bits(r.to_bits() + 1),
            Round::TowardZero | Round::TowardNegative if residual < 0.0 => f64::from_bits(r.to_bits() - 1),
            _ => r,
        };
        adjusted * unscale
    };
    match x {
        Val::F64(b) => Ok(Val::F64(sqrt_f64(f64::from_bits(b)).to_bits())),
        Val::F32(b) => {
            let wide = f64::from(f32::from_bits(b)).sqrt();
            let mut loses_info = false;
            let narrowed: Single = Double::from_bits(u128::from(wide.to_bits()))
                .convert_r(round, &mut loses_info)
                .value;
            Ok(Val::F32(narrowed.to_bits() as u32))
        }
        _ => float_unsupported(&format!("fsqrt.{} on this type", rounding.name())),
    }
}

/// Three-operand float arithmetic in software floats (rounded once), with any fixed rounding.
fn soft_fma(op: FTernaryOp, rounding: Rounding, a: Val, b: Val, c: Val) -> Result<Val, InterpError> {
    let round = soft_round(rounding)?;
    match (op, a, b, c) {
        (FTernaryOp::Fma, Val::F32(a), Val::F32(b), Val::F32(c)) => {
            let [a, b, c] = [a, b, c].map(|x| Single::from_bits(u128::from(x)));
            Ok(Val::F32(a.mul_add_r(b, c, round).value.to_bits() as u32))
        }
        (FTernaryOp::Fma, Val::F64(a), Val::F64(b), Val::F64(c)) => {
            let [a, b, c] = [a, b, c].map(|x| Double::from_bits(u128::from(x)));
            Ok(Val::F64(a.mul_add_r(b, c, round).value.to_bits() as u64))
        }
        _ => float_unsupported(&format!("{}.{} on this type", op.name(), rounding.name())),
    }
}
