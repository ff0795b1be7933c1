//! The reference interpreter computes what the IR says.

use rpt_ir::interp::{Environment, InterpError, Interpreter, MachineState, NoEnvironment, Outcome, Val};
use rpt_ir::parse::parse_program;
use rpt_ir::{AddrSpace, Endian, ExitReason, GuestAddr, Program};

const STATE: &str = "state {\n    a: i32 gpr\n    b: i32 gpr\n    cr: i32 special\n    cr7: i8 flag = cr[0+4]\n    so: i1 flag = cr[31+1]\n    st: i32[4] fpr\n}\n";

fn program(body: &str) -> Program {
    parse_program(&format!("{STATE}{body}")).expect("test program parses")
}

fn slot(p: &Program, name: &str) -> rpt_ir::SlotId {
    p.state.find(name).expect("slot exists")
}

/// What a run of `f_00000100` left: its outcome and the machine.
struct Ran<'p> {
    program: &'p Program,
    outcome: Result<Outcome, InterpError>,
    machine: MachineState,
}

impl Ran<'_> {
    /// The final value of the slot `name`.
    fn get(&self, name: &str) -> Val {
        self.machine.state.get(&self.program.state, slot(self.program, name))
    }
}

/// [`run_entry`] of a run that must end without an error.
fn run_ok<'p>(p: &'p Program, env: &mut dyn Environment) -> Ran<'p> {
    let ran = run_entry(p, &[], env);
    assert!(ran.outcome.is_ok(), "{:?}", ran.outcome);
    ran
}

/// Runs `f_00000100` of `p` in `env`, from a state where the slots in `inputs` are set.
fn run_entry<'p>(p: &'p Program, inputs: &[(&str, u64)], env: &mut dyn Environment) -> Ran<'p> {
    let mut it = Interpreter::new(p);
    for &(name, value) in inputs {
        it.machine.state.set(&p.state, slot(p, name), Val::Int(value));
    }
    let outcome = it.run(GuestAddr(0x100), env);
    Ran {
        program: p,
        outcome,
        machine: it.machine,
    }
}

#[test]
fn loop_with_block_parameters_computes_factorial() {
    let p = program(
        "function f_00000100 {\nblock0:\n    v0: i32 = get %a\n    v1: i32 = iconst 0x1\n    jump block1(v0, v1)\nblock1(v2: i32, v3: i32):\n    v4: i32 = iconst 0x0\n    v5: i1 = icmp eq v2, v4\n    br v5, block3, block2\nblock2:\n    v6: i32 = mul v3, v2\n    v7: i32 = iconst 0x1\n    v8: i32 = sub v2, v7\n    jump block1(v8, v6)\nblock3:\n    set %b, v3\n    return\n}\n",
    );
    let ran = run_entry(&p, &[("a", 10)], &mut NoEnvironment);
    assert_eq!(ran.outcome, Ok(Outcome::Returned));
    assert_eq!(ran.get("b"), Val::Int(3_628_800));
}

#[test]
fn swapping_block_parameters_reads_all_arguments_first() {
    let p = program(
        "function f_00000100 {\nblock0:\n    v0: i32 = iconst 0x1\n    v1: i32 = iconst 0x2\n    v2: i1 = iconst 0x1\n    jump block1(v0, v1, v2)\nblock1(v3: i32, v4: i32, v5: i1):\n    v6: i1 = iconst 0x0\n    br v5, block1(v4, v3, v6), block2\nblock2:\n    set %a, v3\n    set %b, v4\n    return\n}\n",
    );
    let ran = run_ok(&p, &mut NoEnvironment);
    assert_eq!((ran.get("a"), ran.get("b")), (Val::Int(2), Val::Int(1)));
}

#[test]
fn packed_slots_read_and_write_their_parent_bits() {
    let p = program(
        "function f_00000100 {\nblock0:\n    v0: i8 = iconst 0xa\n    set %cr7, v0\n    v1: i1 = iconst 0x1\n    set %so, v1\n    v2: i8 = get %cr7\n    v3: i32 = zext v2\n    set %a, v3\n    return\n}\n",
    );
    let ran = run_entry(&p, &[("cr", 0x1234_5675)], &mut NoEnvironment);
    assert_eq!(ran.outcome, Ok(Outcome::Returned));
    assert_eq!((ran.get("cr"), ran.get("a")), (Val::Int(0x9234_567a), Val::Int(0xa)));
}

#[test]
fn array_slots_wrap_their_index() {
    let p = program(
        "function f_00000100 {\nblock0:\n    v0: i32 = iconst 0x6\n    v1: i32 = iconst 0x77\n    set %st[v0], v1\n    v2: i32 = iconst 0x2\n    v3: i32 = get %st[v2]\n    set %a, v3\n    return\n}\n",
    );
    let ran = run_ok(&p, &mut NoEnvironment);
    assert_eq!(ran.get("a"), Val::Int(0x77));
    assert_eq!(ran.machine.state.get_indexed(slot(&p, "st"), 2), Val::Int(0x77));
}

#[test]
fn memory_honours_width_and_byte_order() {
    let p = program(
        "function f_00000100 {\nblock0:\n    v0: i32 = iconst 0x1000\n    v1: i32 = iconst 0x11223344\n    store.be ram v0, v1\n    v2: i16 = load.le ram v0\n    v3: i32 = sext v2\n    set %a, v3\n    v4: i8 = load.le ram v0\n    v5: i32 = zext v4\n    set %b, v5\n    return\n}\n",
    );
    let ran = run_ok(&p, &mut NoEnvironment);
    let memory = ran
        .machine
        .memory
        .read(AddrSpace::RAM, 0x1000, 4, Endian::Little, u64::MAX);
    assert_eq!(memory, 0x4433_2211);
    assert_eq!((ran.get("a"), ran.get("b")), (Val::Int(0x2211), Val::Int(0x11)));
}

#[test]
fn integer_operations_follow_their_definitions() {
    // Each row: operation, type, a, b, expected.
    let rows: &[(&str, &str, u64, u64, u64)] = &[
        ("add", "i8", 0xff, 0x02, 0x01),
        ("sub", "i16", 0x0000, 0x0001, 0xffff),
        ("umulhi", "i32", 0xffff_ffff, 0xffff_ffff, 0xffff_fffe),
        ("smulhi", "i32", 0xffff_ffff, 0xffff_ffff, 0),
        ("sdiv", "i32", 0xffff_fff9, 2, 0xffff_fffd),
        ("srem", "i32", 0xffff_fff9, 2, 0xffff_ffff),
        ("udiv", "i8", 200, 7, 28),
        ("shl", "i32", 1, 33, 2),
        ("ashr", "i8", 0x80, 3, 0xf0),
        ("lshr", "i8", 0x80, 3, 0x10),
        ("rotl", "i16", 0x8001, 1, 0x0003),
        ("rotr", "i32", 1, 1, 0x8000_0000),
    ];
    for &(op, ty, a, b, want) in rows {
        let p = program(&format!(
            "function f_00000100 {{\nblock0:\n    v0: {ty} = iconst {a:#x}\n    v1: {ty} = iconst {b:#x}\n    v2: {ty} = {op} v0, v1\n    v3: i64 = zext v2\n    v4: i32 = trunc v3\n    set %a, v4\n    return\n}}\n"
        ));
        let ran = run_ok(&p, &mut NoEnvironment);
        assert_eq!(ran.get("a"), Val::Int(want & 0xffff_ffff), "{op}.{ty} {a:#x}, {b:#x}");
    }
}

#[test]
fn division_by_zero_is_undefined_not_a_crash() {
    let p = program(
        "function f_00000100 {\nblock0:\n    v0: i32 = iconst 0x1\n    v1: i32 = iconst 0x0\n    v2: i32 = udiv v0, v1\n    return\n}\n",
    );
    let ran = run_entry(&p, &[], &mut NoEnvironment);
    assert!(matches!(ran.outcome, Err(InterpError::Undefined { .. })));
}

#[test]
fn calls_continue_and_exits_stop_everything() {
    let p = program(
        "function f_00000100 {\nblock0:\n    call f_00000200, block1\nblock1:\n    v0: i32 = iconst 0x5\n    set %b, v0\n    v1: i32 = iconst 0x300\n    call v1, block2\nblock2:\n    v2: i32 = iconst 0x6\n    set %b, v2\n    return\n}\n\nfunction f_00000200 {\nblock0:\n    v0: i32 = iconst 0x4\n    set %a, v0\n    return\n}\n\nfunction f_00000300 {\nblock0:\n    v0: i32 = iconst 0x304\n    exit v0, halt\n}\n",
    );
    let ran = run_entry(&p, &[], &mut NoEnvironment);
    let halt = Outcome::Exited {
        pc: 0x304,
        reason: ExitReason::Halt,
    };
    assert_eq!(ran.outcome, Ok(halt));
    assert_eq!(ran.get("a"), Val::Int(4));
    assert_eq!(ran.get("b"), Val::Int(5), "the exit happened before b = 6");
}

struct Doubler;

impl Environment for Doubler {
    fn call_extern(&mut self, addr: GuestAddr, m: &mut MachineState) -> Result<Option<Outcome>, InterpError> {
        if addr != GuestAddr(0xfff0_0000) {
            return Ok(None);
        }
        m.memory.write_u8(AddrSpace::RAM, 0x10, 0x99);
        Ok(Some(Outcome::Returned))
    }

    fn call_helper(
        &mut self,
        name: &str,
        args: &[Val],
        _: &mut MachineState,
    ) -> Result<Option<Option<Val>>, InterpError> {
        Ok((name == "double").then(|| Some(Val::Int(args[0].int() * 2))))
    }
}

#[test]
fn externs_and_helpers_come_from_the_environment() {
    let p = program(
        "helper @double(i32) -> i32\nextern f_fff00000 \"ext\"\nfunction f_00000100 {\nblock0:\n    v0: i32 = iconst 0x15\n    v1: i32 = call_helper @double(v0)\n    set %a, v1\n    call f_fff00000, block1\nblock1:\n    return\n}\n",
    );
    let ran = run_ok(&p, &mut Doubler);
    assert_eq!(ran.get("a"), Val::Int(42));
    assert_eq!(ran.machine.memory.read_u8(AddrSpace::RAM, 0x10), 0x99);
    let ran = run_entry(&p, &[], &mut NoEnvironment);
    assert_eq!(ran.outcome, Err(InterpError::UnknownHelper("double".into())));
}

#[test]
fn endless_loops_hit_the_step_limit() {
    let p = program("function f_00000100 {\nblock0:\n    jump block1\nblock1:\n    jump block1\n}\n");
    let mut it = Interpreter::new(&p);
    it.steps_left = 1000;
    assert_eq!(
        it.run(GuestAddr(0x100), &mut NoEnvironment),
        Err(InterpError::StepLimit)
    );
}

const FLOAT_STATE: &str = "state {\n    x: f64 fpr\n    y: f64 fpr\n    z: f64 fpr\n}\n";

/// An environment whose dynamic rounding mode is fixed.
struct Mode(rpt_ir::Rounding);

impl Environment for Mode {
    fn call_extern(&mut self, _: GuestAddr, _: &mut MachineState) -> Result<Option<Outcome>, InterpError> {
        Ok(None)
    }

    fn call_helper(&mut self, _: &str, _: &[Val], _: &mut MachineState) -> Result<Option<Option<Val>>, InterpError> {
        Ok(None)
    }

    fn dynamic_rounding(&mut self, _: &MachineState) -> Result<rpt_ir::Rounding, InterpError> {
        Ok(self.0)
    }
}

#[test]
fn fma_rounds_once_and_directed_roundings_round_their_way() {
    // x = fma(1+2^-52, 1-2^-53, -1) is exactly 2^-53 - 2^-105: one rounding keeps it, where a
    // product rounded first would give 2^-53. y = 1 + 2^-60 toward +inf, z = the same in the
    // dynamic mode (toward -inf here, so 1).
    let p = parse_program(&format!(
        "{FLOAT_STATE}function f_00000100 {{\nblock0:\n    v0: f64 = fconst 0x3ff0000000000001\n    v1: f64 = fconst 0x3fefffffffffffff\n    v2: f64 = fconst 0xbff0000000000000\n    v3: f64 = fma.rne v0, v1, v2\n    set %x, v3\n    v4: f64 = fconst 0x3ff0000000000000\n    v5: f64 = fconst 0x3c30000000000000\n    v6: f64 = fadd.ru v4, v5\n    set %y, v6\n    v7: f64 = fadd.rdyn v4, v5\n    set %z, v7\n    return\n}}\n"
    ))
    .expect("parses");
    let ran = run_ok(&p, &mut Mode(rpt_ir::Rounding::Down));
    let exact = 2f64.powi(-53) - 2f64.powi(-105);
    assert_eq!(ran.get("x"), Val::F64(exact.to_bits()));
    assert_eq!(ran.get("y"), Val::F64((1.0 + f64::EPSILON).to_bits()));
    assert_eq!(ran.get("z"), Val::F64(1f64.to_bits()));
    // Without a mode from the environment, dynamic rounding is reported, not guessed.
    let ran = run_entry(&p, &[], &mut NoEnvironment);
    assert!(matches!(ran.outcome, Err(InterpError::Unsupported(_))));
}

#[test]
fn directed_square_roots_round_their_way() {
    // sqrt(2) is inexact: toward zero and down give the host's nearest result (which lies below),
    // up the next double. sqrt(4) is exact in every mode. z = sqrt(2) in the dynamic mode (up).
    let p = parse_program(&format!(
        "{FLOAT_STATE}function f_00000100 {{\nblock0:\n    v0: f64 = fconst 0x4000000000000000\n    v1: f64 = fsqrt.rz v0\n    set %x, v1\n    v2: f64 = fconst 0x4010000000000000\n    v3: f64 = fsqrt.ru v2\n    set %y, v3\n    v4: f64 = fsqrt.rdyn v0\n    set %z, v4\n    return\n}}\n"
    ))
    .expect("parses");
    let ran = run_ok(&p, &mut Mode(rpt_ir::Rounding::Up));
    let nearest = 2f64.sqrt();
    assert!(nearest * nearest > 2.0, "the nearest double to sqrt(2) lies above it");
    assert_eq!(ran.get("x"), Val::F64(nearest.to_bits() - 1));
    assert_eq!(ran.get("y"), Val::F64(2f64.to_bits()));
    assert_eq!(ran.get("z"), Val::F64(nearest.to_bits()));
}

#[test]
fn directed_square_roots_of_denormals_round_their_way() {
    // sqrt of the smallest denormal double, 2^-1074, is 2^-537 exactly; of 2^-1073 it is
    // 2^-536.5, inexact: toward zero and up must give neighbouring doubles (whose squares
    // underflow, so an unscaled residual would be zero and hide the difference).
    let p = parse_program(&format!(
        "{FLOAT_STATE}function f_00000100 {{\nblock0:\n    v0: f64 = fconst 0x1\n    v1: f64 = fsqrt.rz v0\n    set %x, v1\n    v2: f64 = fconst 0x2\n    v3: f64 = fsqrt.rz v2\n    set %y, v3\n    v4: f64 = fsqrt.ru v2\n    set %z, v4\n    return\n}}\n"
    ))
    .expect("parses");
    let ran = run_ok(&p, &mut NoEnvironment);
    let get = |name: &str| match ran.get(name) {
        Val::F64(b) => b,
        other => panic!("{other:?}"),
    };
    assert_eq!(f64::from_bits(get("x")), 2f64.powi(-537));
    let (down, up) = (get("y"), get("z"));
    assert_eq!(up, down + 1, "rz and ru give neighbouring doubles");
    let root = 2f64.powf(-536.5);
    assert!(f64::from_bits(down) <= root && root <= f64::from_bits(up));
}
