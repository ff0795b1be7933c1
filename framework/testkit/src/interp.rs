//! Running lifted or parsed IR in the reference interpreter from tests: an environment made of
//! the functions a test already has (a guest's `interp::call_helper`, a platform's externs, a
//! rounding-mode reader), runs from a given machine state, and random starting states.

use rpt_ir::interp::{Environment, InterpError, Interpreter, MachineState, Memory, Outcome, StateValues, Val};
use rpt_ir::{AddrSpace, GuestAddr, Program, Rounding, SlotId, SlotLayout, StateDesc, Type};

use crate::Rng;

/// What runs a helper: `Ok(None)` when the helper is unknown (the interpreter's convention).
pub type CallHelper<'a> =
    Box<dyn FnMut(&str, &[Val], &mut MachineState) -> Result<Option<Option<Val>>, InterpError> + 'a>;
/// What runs an extern: `Ok(None)` when the extern is unknown.
pub type CallExtern<'a> = Box<dyn FnMut(GuestAddr, &mut MachineState) -> Result<Option<Outcome>, InterpError> + 'a>;

/// An interpreter environment that answers helpers through a given function, and externs and
/// the dynamic rounding mode through others when the test gives them (without them, no extern is
/// known and `.rdyn` operations are unsupported, as in [`rpt_ir::interp::NoEnvironment`]).
pub struct HelperEnv<'a> {
    call_helper: CallHelper<'a>,
    call_extern: Option<CallExtern<'a>>,
    rounding: Option<fn(&MachineState) -> Rounding>,
}

impl<'a> HelperEnv<'a> {
    /// An environment whose helpers are `call_helper`'s: a guest's `interp::call_helper`, say.
    pub fn new(
        call_helper: impl FnMut(&str, &[Val], &mut MachineState) -> Result<Option<Option<Val>>, InterpError> + 'a,
    ) -> HelperEnv<'a> {
        HelperEnv {
            call_helper: Box::new(call_helper),
            call_extern: None,
            rounding: None,
        }
    }

    /// The same environment with externs run by `call_extern`.
    pub fn with_externs(
        mut self,
        call_extern: impl FnMut(GuestAddr, &mut MachineState) -> Result<Option<Outcome>, InterpError> + 'a,
    ) -> HelperEnv<'a> {
        self.call_extern = Some(Box::new(call_extern));
        self
    }

    /// The same environment with the guest's current rounding mode read by `rounding`.
    pub fn with_rounding(mut self, rounding: fn(&MachineState) -> Rounding) -> HelperEnv<'a> {
        self.rounding = Some(rounding);
        self
    }
}

impl Environment for HelperEnv<'_> {
    fn call_extern(&mut self, addr: GuestAddr, machine: &mut MachineState) -> Result<Option<Outcome>, InterpError> {
        match &mut self.call_extern {
            Some(call) => call(addr, machine),
            None => Ok(None),
        }
    }

    fn call_helper(
        &mut self,
        name: &str,
        args: &[Val],
        machine: &mut MachineState,
    ) -> Result<Option<Option<Val>>, InterpError> {
        (self.call_helper)(name, args, machine)
    }

    fn dynamic_rounding(&mut self, machine: &MachineState) -> Result<Rounding, InterpError> {
        match self.rounding {
            Some(rounding) => Ok(rounding(machine)),
            None => Err(InterpError::Unsupported(
                "dynamic rounding (the test's environment reads no rounding mode)".to_string(),
            )),
        }
    }
}

/// Runs `entry` of `program` from `start` with at most `steps` steps (the interpreter's default
/// budget when `None`); returns the outcome and the machine as the run left it.
pub fn run_from(
    program: &Program,
    entry: GuestAddr,
    start: MachineState,
    steps: Option<u64>,
    env: &mut dyn Environment,
) -> (Result<Outcome, InterpError>, MachineState) {
    let mut interp = Interpreter::new(program);
    interp.machine = start;
    if let Some(steps) = steps {
        interp.steps_left = steps;
    }
    let outcome = interp.run(entry, env);
    (outcome, interp.machine)
}

/// A machine with `desc`'s registers all zero and empty memory, for a test to fill.
pub fn empty_machine(desc: &StateDesc) -> MachineState {
    MachineState {
        state: StateValues::new(desc),
        memory: Memory::new(),
    }
}

/// The `len` bytes of `space` at `addr` in a machine's memory (unwritten bytes read as zero).
pub fn read_bytes(machine: &MachineState, space: AddrSpace, addr: u64, len: usize) -> Vec<u8> {
    (0..len as u64)
        .map(|i| machine.memory.read_u8(space, addr + i))
        .collect()
}

/// One storage element of a register file: a plain slot, or one element of an array slot.
/// Packed slots are left out: their storage is the flag slots they are made of.
#[derive(Clone, Debug)]
pub struct StateElement {
    /// The slot.
    pub slot: SlotId,
    /// The element's index, for an array slot.
    pub index: Option<u32>,
    /// Its type.
    pub ty: Type,
    /// `name` or `name[3]`: the slot's name, and the element's C lvalue after `c->`.
    pub name: String,
}

impl StateElement {
    /// The element's value in `state`.
    pub fn get(&self, desc: &StateDesc, state: &StateValues) -> Val {
        match self.index {
            None => state.get(desc, self.slot),
            Some(i) => state.get_indexed(self.slot, u64::from(i)),
        }
    }

    /// Sets the element's value in `state`.
    pub fn set(&self, desc: &StateDesc, state: &mut StateValues, value: Val) {
        match self.index {
            None => state.set(desc, self.slot, value),
            Some(i) => state.set_indexed(self.slot, u64::from(i), value),
        }
    }
}

/// Every storage element of `desc`, in slot order.
pub fn state_elements(desc: &StateDesc) -> Vec<StateElement> {
    let mut out = Vec::new();
    for (slot, desc_slot) in desc.iter() {
        match desc_slot.layout {
            SlotLayout::Plain => out.push(StateElement {
                slot,
                index: None,
                ty: desc_slot.ty,
                name: desc_slot.name.clone(),
            }),
            SlotLayout::Array { len } => out.extend((0..len).map(|i| StateElement {
                slot,
                index: Some(i),
                ty: desc_slot.ty,
                name: format!("{}[{i}]", desc_slot.name),
            })),
            SlotLayout::Packed { .. } => {}
        }
    }
    out
}

/// A random value of `ty` as bits, biased toward the edge cases that break code generators and
/// passes: zero, one, all ones, the sign bit and its neighbours, small values; float specials
/// (zeros, infinities, NaNs, denormals, the int32 and int64 conversion limits) and moderate
/// integers and halves, which conversions and rounding turn every way.
///
/// # Panics
/// On `f80`, which no state element of a test program holds as bits of 64.
pub fn random_bits(rng: &mut Rng, ty: Type) -> u64 {
    match ty {
        Type::I1 | Type::I8 | Type::I16 | Type::I32 | Type::I64 => {
            let sign = 1u64 << (ty.bits() - 1);
            let v = match rng.below(10) {
                0 => 0,
                1 => 1,
                2 => u64::MAX,
                3 => sign,
                4 => sign.wrapping_sub(1),
                5 => rng.below(16),
                6 => u64::MAX - rng.below(16),
                _ => rng.next(),
            };
            v & ty.mask()
        }
        Type::F32 => {
            const SPECIAL: [u32; 19] = [
                0x0000_0000,
                0x8000_0000,
                0x3f80_0000,
                0xbfc0_0000,
                0x3dcc_cccd,
                0x7149_f2ca,
                0x8ca2_1c2d,
                0x7f80_0000,
                0xff80_0000,
                0x7fc0_0000,
                0x0000_0001,
                0x7f7f_ffff,
                0x4b00_0001,
                0xcf00_0000,
                0x4f80_0000,
                0x3f00_0000,
                0x3fc0_0000,
                0x4020_0000,
                0xc020_0000,
            ];
            match rng.below(3) {
                0 => u64::from(rng.pick(&SPECIAL)),
                1 => u64::from(((rng.below(1 << 20) as f32 - (1 << 19) as f32) / 2.0).to_bits()),
                _ => u64::from(rng.u32()),
            }
        }
        Type::F64 | Type::V2F32 => {
            const SPECIAL: [u64; 17] = [
                0x0000_0000_0000_0000,
                0x8000_0000_0000_0000,
                0x3ff0_0000_0000_0000,
                0xbff8_0000_0000_0000,
                0x3fb9_9999_9999_999a,
                0x7ff0_0000_0000_0000,
                0xfff0_0000_0000_0000,
                0x7ff8_0000_0000_0000,
                0x0000_0000_0000_0001,
                0x7fef_ffff_ffff_ffff,
                0x41e0_0000_0000_0000,
                0xc1e0_0000_0000_0000,
                0x43e0_0000_0000_0000,
                0x3fe0_0000_0000_0000,
                0x4004_0000_0000_0000,
                0xc004_0000_0000_0000,
                0x4330_0000_0000_0001,
            ];
            match rng.below(3) {
                0 => rng.pick(&SPECIAL),
                1 => ((rng.below(1 << 40) as f64 - (1u64 << 39) as f64) / 2.0).to_bits(),
                _ => rng.next(),
            }
        }
        Type::F80 => panic!("random_bits: f80 elements are not generated"),
    }
}

/// The interpreter value of type `ty` with bit pattern `bits`.
pub fn val_of_bits(ty: Type, bits: u64) -> Val {
    match ty {
        Type::F32 => Val::F32(bits as u32),
        Type::F64 => Val::F64(bits),
        Type::V2F32 => Val::V2F32(bits),
        Type::F80 => Val::F80(u128::from(bits)),
        Type::I1 | Type::I8 | Type::I16 | Type::I32 | Type::I64 => Val::Int(bits),
    }
}

/// The bit pattern of an interpreter value (the low 64 bits of an f80).
pub fn bits_of_val(value: Val) -> u64 {
    match value {
        Val::Int(i) | Val::F64(i) | Val::V2F32(i) => i,
        Val::F32(f) => u64::from(f),
        Val::F80(f) => f as u64,
    }
}

/// How one run ended: the outcome, as text, and the machine after it.
pub type RunResult = (String, MachineState);

/// Checks that a pass changed nothing a program does: from every function of `before`, `cases`
/// times, a start state drawn by `start` runs through `run` in `before` and in `after`, and the
/// outcome, memory and state must agree (a run out of steps only in its outcome: where it
/// stops depends on how many steps the code takes). `name` heads each failure.
pub fn assert_same_runs(
    name: &str,
    before: &Program,
    after: &Program,
    cases: usize,
    mut start: impl FnMut() -> StateValues,
    run: impl Fn(&Program, GuestAddr, &StateValues) -> RunResult,
) {
    for &entry in before.functions.keys() {
        for case in 0..cases {
            let state = start();
            let (o1, m1) = run(before, entry, &state);
            let (o2, m2) = run(after, entry, &state);
            let what = format!("{name}: {} case {case}", entry.function_name());
            assert_eq!(o1, o2, "{what}: outcome");
            if o1.contains("StepLimit") {
                // A run that never ends stops where the step budget does, which the pass moves.
                continue;
            }
            assert_eq!(m1.memory, m2.memory, "{what}: memory");
            assert_eq!(m1.state, m2.state, "{what}: state");
        }
    }
}

/// A start state whose plain integer slots hold what `value` draws for each (masked to the
/// slot's width); every other slot is zero.
pub fn int_state(desc: &StateDesc, mut value: impl FnMut() -> u64) -> StateValues {
    let mut values = StateValues::new(desc);
    for (id, slot) in desc.iter() {
        if slot.layout == SlotLayout::Plain && slot.ty.is_int() {
            values.set(desc, id, Val::Int(value() & slot.ty.mask()));
        }
    }
    values
}

/// Runs guest code from `entry` as the generated program's run-time tier does (`rpt_api::tier`),
/// in `interp`: where `program` has a function, it runs it and its return ends the run (control
/// that reaches a function's entry is a tail jump into it); elsewhere it runs the instruction
/// `tier` holds there (lifted alone) and goes on where the instruction exits with `unlifted`.
/// Any other outcome ends the run; an address with neither is `exit <addr>, unlifted`, where the
/// program stops.
pub fn run_tier(
    interp: &mut Interpreter<'_>,
    program: &Program,
    tier: &std::collections::BTreeMap<GuestAddr, rpt_ir::Function>,
    entry: GuestAddr,
    env: &mut dyn Environment,
) -> Result<Outcome, InterpError> {
    let mut pc = entry;
    loop {
        if program.functions.contains_key(&pc) {
            return interp.run(pc, env);
        }
        let Some(instruction) = tier.get(&pc) else {
            return Ok(Outcome::Exited {
                pc: pc.0,
                reason: rpt_ir::ExitReason::Unlifted,
            });
        };
        match interp.run_function(instruction, env)? {
            Outcome::Exited {
                pc: next,
                reason: rpt_ir::ExitReason::Unlifted,
            } => pc = GuestAddr(next),
            other => return Ok(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rpt_ir::interp::NoEnvironment;

    fn program() -> Program {
        rpt_ir::parse::parse_program(
            "state {\n    a: i32 gpr\n    fs: f64[2] fpr\n}\nhelper @twice(i32) -> i32\n\nfunction f_00001000 {\nblock0:\n    v0: i32 = get %a\n    v1: i32 = call_helper @twice(v0)\n    set %a, v1\n    return\n}\n",
        )
        .expect("the test program parses")
    }

    #[test]
    fn a_helper_env_runs_helpers_through_its_function() {
        let program = program();
        let a = program.state.find("a").expect("a");
        let mut start = empty_machine(&program.state);
        start.state.set(&program.state, a, Val::Int(21));
        let mut env = HelperEnv::new(|name, args, _| Ok((name == "twice").then(|| Some(Val::Int(args[0].int() * 2)))));
        let (outcome, end) = run_from(&program, GuestAddr(0x1000), start.clone(), None, &mut env);
        assert_eq!(outcome, Ok(Outcome::Returned));
        assert_eq!(end.state.get(&program.state, a).int(), 42);
        assert!(env.dynamic_rounding(&end).is_err());
        assert!(
            run_from(&program, GuestAddr(0x1000), start, None, &mut NoEnvironment)
                .0
                .is_err()
        );
    }

    #[test]
    fn elements_cover_plain_slots_and_array_elements() {
        let program = program();
        let names: Vec<String> = state_elements(&program.state).into_iter().map(|e| e.name).collect();
        assert_eq!(names, ["a", "fs[0]", "fs[1]"]);
        let mut rng = Rng(7);
        assert!((0..100).all(|_| random_bits(&mut rng, Type::I8) <= 0xff));
    }
}
