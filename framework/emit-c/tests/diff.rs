//! Differential test of the C backend against the IR reference interpreter.
//!
//! Each `tests/diff/*.rir` program runs in `rpt_ir::interp` from random initial states
//! (a fixed-seed PRNG, so every run of the test draws the same states) and, emitted as C,
//! compiled with clang and linked with the real runtime, from the same states. A small
//! generated guest part (`guest/driver.c`) sets the state in `rpt_guest_init` and prints
//! the final state and memory in `rpt_guest_finish`. Everything must match.
//!
//! Directives in a program's leading comments:
//! - `; entry f_XXXXXXXX`: the function to run (default: the lowest address).
//! - `; runs N`: how many random states (default 24).
//! - `; known-answer` with `; expect <slot>[<index>] <hex bits>` lines: the interpreter
//!   cannot run the program (directed rounding), so the C result is checked against
//!   values written in the file instead.

mod common;

use std::fmt::Write as _;
use std::path::Path;

use rpt_api::{Runner, SourceFile};
use rpt_ir::interp::{Environment, InterpError, Interpreter, MachineState, Outcome, Val};
use rpt_ir::{AddrSpace, ExitReason, GuestAddr, Program, SlotId, Type};
use rpt_testkit::Rng;
use rpt_testkit::interp::{StateElement as Element, bits_of_val, random_bits, read_bytes, state_elements, val_of_bits};

/// The RAM window test programs read and write, filled with random bytes by the image.
const RAM_BASE: u64 = 0x10000;
const RAM_SIZE: usize = 0x2000;
/// Address space 1, implemented by the driver as a zeroed buffer indexed modulo its size.
const SPACE1_SIZE: usize = 0x1000;

/// Whether two results of type `ty` agree. Floats agree when both are NaN: which NaN
/// payload survives an operation on two NaNs depends on operand order, which the IR
/// leaves open and C compilers may swap.
fn same(ty: Type, a: u64, b: u64) -> bool {
    match ty {
        Type::F32 => a == b || (f32::from_bits(a as u32).is_nan() && f32::from_bits(b as u32).is_nan()),
        Type::F64 => a == b || (f64::from_bits(a).is_nan() && f64::from_bits(b).is_nan()),
        _ => a == b,
    }
}

// ---- the fixed environment: helpers and externs the test programs may declare

/// A helper's C definition (after the prototype's opening) for the driver.
fn helper_c(name: &str) -> Option<&'static str> {
    Some(match name {
        "mix" => {
            "uint32_t rpt_helper_mix(struct cpu *restrict c, uint32_t a0, uint32_t a1)\n{\n\t(void)c;\n\treturn (a0 * 0x9e3779b1u) ^ ((a1 << 7) | (a1 >> 25));\n}\n"
        }
        "bump_b" => "void rpt_helper_bump_b(struct cpu *restrict c, uint32_t a0)\n{\n\tc->b = c->b + a0 + 1u;\n}\n",
        "peek" => {
            "uint32_t rpt_helper_peek(struct cpu *restrict c, uint32_t a0)\n{\n\t(void)c;\n\treturn rpt_load_u32_le(0x10000u + (a0 & 0x1ffcu));\n}\n"
        }
        "poke" => {
            "void rpt_helper_poke(struct cpu *restrict c, uint32_t a0, uint32_t a1)\n{\n\t(void)c;\n\trpt_store_u32_le(0x10000u + (a0 & 0x1ffcu), a1);\n}\n"
        }
        _ => return None,
    })
}

fn extern_c(symbol: &str) -> Option<&'static str> {
    Some(match symbol {
        "ext_bump" => "void ext_bump(struct cpu *restrict c)\n{\n\tc->a = c->a + 0x1234567u;\n}\n",
        "ext_swap" => {
            "void ext_swap(struct cpu *restrict c)\n{\n\tuint32_t t = c->a;\n\tc->a = c->b;\n\tc->b = t;\n}\n"
        }
        // Moves the stack pointer in `struct cpu` (as a platform's stdcall import pops its arguments).
        "ext_pop" => "void ext_pop(struct cpu *restrict c)\n{\n\tc->sp = c->sp + 4u;\n\tc->a = c->a ^ c->sp;\n}\n",
        _ => return None,
    })
}

struct TestEnv<'p> {
    program: &'p Program,
}

impl TestEnv<'_> {
    fn slot(&self, name: &str) -> Result<SlotId, InterpError> {
        self.program
            .state
            .find(name)
            .ok_or_else(|| InterpError::Unsupported(format!("the test needs a slot %{name}")))
    }

    fn get(&self, m: &MachineState, name: &str) -> Result<u64, InterpError> {
        Ok(m.state.get(&self.program.state, self.slot(name)?).int())
    }

    fn set(&self, m: &mut MachineState, name: &str, v: u64) -> Result<(), InterpError> {
        let slot = self.slot(name)?;
        m.state.set(&self.program.state, slot, Val::Int(v & 0xffff_ffff));
        Ok(())
    }
}

impl Environment for TestEnv<'_> {
    fn call_extern(&mut self, addr: GuestAddr, m: &mut MachineState) -> Result<Option<Outcome>, InterpError> {
        match self.program.externs.get(&addr).map(String::as_str) {
            Some("ext_bump") => {
                let a = self.get(m, "a")?;
                self.set(m, "a", a.wrapping_add(0x1234567))?;
            }
            Some("ext_swap") => {
                let (a, b) = (self.get(m, "a")?, self.get(m, "b")?);
                self.set(m, "a", b)?;
                self.set(m, "b", a)?;
            }
            Some("ext_pop") => {
                let sp = self.get(m, "sp")?.wrapping_add(4);
                self.set(m, "sp", sp)?;
                let a = self.get(m, "a")?;
                self.set(m, "a", a ^ (sp & 0xffff_ffff))?;
            }
            _ => return Ok(None),
        }
        Ok(Some(Outcome::Returned))
    }

    fn call_helper(
        &mut self,
        name: &str,
        args: &[Val],
        m: &mut MachineState,
    ) -> Result<Option<Option<Val>>, InterpError> {
        let arg = |i: usize| args.get(i).map_or(0, |v| v.int()) as u32;
        Ok(Some(match name {
            "mix" => Some(Val::Int(u64::from(
                arg(0).wrapping_mul(0x9e37_79b1) ^ arg(1).rotate_left(7),
            ))),
            "bump_b" => {
                let b = self.get(m, "b")? as u32;
                self.set(m, "b", u64::from(b.wrapping_add(arg(0)).wrapping_add(1)))?;
                None
            }
            "peek" => {
                let addr = 0x10000 + u64::from(arg(0) & 0x1ffc);
                Some(Val::Int(
                    m.memory.read(AddrSpace::RAM, addr, 4, rpt_ir::Endian::Little, u64::MAX) as u64,
                ))
            }
            "poke" => {
                let addr = 0x10000 + u64::from(arg(0) & 0x1ffc);
                m.memory.write(
                    AddrSpace::RAM,
                    addr,
                    4,
                    rpt_ir::Endian::Little,
                    u128::from(arg(1)),
                    u64::MAX,
                );
                None
            }
            _ => return Ok(None),
        }))
    }
}

// ---- the C side

fn driver_source(program: &Program, elems: &[Element], runs: &[Vec<u64>]) -> String {
    let mut s = String::new();
    s.push_str("/* The differential test's guest part: initial states in, final state out. */\n");
    s.push_str("#include \"cpu.h\"\n#include <stdio.h>\n#include <stdlib.h>\n\n");
    let _ = writeln!(
        s,
        "static const uint64_t init_values[{}][{}] = {{",
        runs.len(),
        elems.len().max(1)
    );
    for run in runs {
        s.push_str("\t{ ");
        for v in run {
            let _ = write!(s, "{v:#x}ull, ");
        }
        if run.is_empty() {
            s.push_str("0 ");
        }
        s.push_str("},\n");
    }
    s.push_str("};\n\nstatic int exited, exit_reason;\nstatic uint64_t exit_pc;\n");
    let _ = writeln!(s, "static uint8_t space1[{SPACE1_SIZE}];\n");
    s.push_str("void rpt_guest_init(struct cpu *c, int argc, char **argv)\n{\n");
    let _ = writeln!(
        s,
        "\tint run = argc > 1 ? atoi(argv[1]) : 0;\n\tif (run < 0 || run >= {}) run = 0;",
        runs.len()
    );
    s.push_str("\tconst uint64_t *v = init_values[run];\n\t(void)v;\n");
    for (k, e) in elems.iter().enumerate() {
        let value = match e.ty {
            Type::F32 => format!("rpt_f32_from_bits((uint32_t)v[{k}])"),
            Type::F64 => format!("rpt_f64_from_bits(v[{k}])"),
            Type::V2F32 => format!("rpt_v2f32_from_bits(v[{k}])"),
            Type::F80 => unreachable!("rejected by random_bits"),
            ty => format!("({})v[{k}]", if ty.bits() == 64 { "uint64_t" } else { "uint32_t" }),
        };
        let _ = writeln!(s, "\tc->{} = {value};", e.name);
    }
    s.push_str("}\n\n");
    s.push_str("int rpt_guest_on_exit(struct cpu *c, uint64_t pc, int reason)\n{\n\t(void)c;\n\texited = 1;\n\texit_pc = pc;\n\texit_reason = reason;\n\treturn 1;\n}\n\n");
    s.push_str("uint64_t rpt_guest_caller(struct cpu *c)\n{\n\t(void)c;\n\treturn 0;\n}\n\n");
    s.push_str("int rpt_guest_finish(struct cpu *c)\n{\n");
    s.push_str("\tif (exited)\n\t\tprintf(\"exit %llx %d\\n\", (unsigned long long)exit_pc, exit_reason);\n\telse\n\t\tprintf(\"returned\\n\");\n");
    for (k, e) in elems.iter().enumerate() {
        let bits = match e.ty {
            Type::F32 => format!("rpt_f32_bits(c->{})", e.name),
            Type::F64 => format!("rpt_f64_bits(c->{})", e.name),
            Type::V2F32 => format!("rpt_v2f32_bits(c->{})", e.name),
            _ => format!("c->{}", e.name),
        };
        let _ = writeln!(s, "\tprintf(\"s {k} %llx\\n\", (unsigned long long){bits});");
    }
    let _ = writeln!(
        s,
        "\tprintf(\"m \");\n\tfor (uint32_t i = 0; i < {RAM_SIZE:#x}u; i++)\n\t\tprintf(\"%02x\", rpt_mem[{RAM_BASE:#x}u + i]);\n\tprintf(\"\\n\");"
    );
    let _ = writeln!(
        s,
        "\tprintf(\"n \");\n\tfor (uint32_t i = 0; i < {SPACE1_SIZE:#x}u; i++)\n\t\tprintf(\"%02x\", space1[i]);\n\tprintf(\"\\n\");"
    );
    s.push_str("\treturn 0;\n}\n\n");
    s.push_str("int rpt_guest_rounding(struct cpu *c)\n{\n\t(void)c;\n\treturn RPT_ROUND_NEAREST;\n}\n\n");
    let _ = writeln!(
        s,
        "uint64_t rpt_load_space(struct cpu *c, unsigned space, uint64_t addr, unsigned size)\n{{\n\t(void)c;\n\t(void)space;\n\tuint64_t v = 0;\n\tfor (unsigned i = 0; i < size; i++)\n\t\tv |= (uint64_t)space1[(addr + i) % {SPACE1_SIZE}u] << (8 * i);\n\treturn v;\n}}\n"
    );
    let _ = writeln!(
        s,
        "void rpt_store_space(struct cpu *c, unsigned space, uint64_t addr, unsigned size, uint64_t value)\n{{\n\t(void)c;\n\t(void)space;\n\tfor (unsigned i = 0; i < size; i++)\n\t\tspace1[(addr + i) % {SPACE1_SIZE}u] = (uint8_t)(value >> (8 * i));\n}}\n"
    );
    for name in program.helpers.keys() {
        s.push_str(helper_c(name).unwrap_or_else(|| panic!("the test environment has no helper @{name}")));
        s.push('\n');
    }
    let symbols: std::collections::BTreeSet<&String> = program.externs.values().collect();
    for sym in symbols {
        s.push_str(extern_c(sym).unwrap_or_else(|| panic!("the test environment has no extern {sym}")));
        s.push('\n');
    }
    s
}

/// What one run ended with: outcome, element values, RAM window and space-1 window.
#[derive(Debug, PartialEq)]
struct Final {
    outcome: Outcome,
    values: Vec<u64>,
    ram: Vec<u8>,
    space1: Vec<u8>,
}

fn hex_bytes(text: &str) -> Vec<u8> {
    (0..text.len() / 2)
        .filter_map(|i| u8::from_str_radix(&text[2 * i..2 * i + 2], 16).ok())
        .collect()
}

fn parse_c_output(stdout: &str, count: usize) -> Result<Final, String> {
    let mut outcome = None;
    let mut values = vec![None; count];
    let (mut ram, mut space1) = (Vec::new(), Vec::new());
    for line in stdout.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["returned"] => outcome = Some(Outcome::Returned),
            ["exit", pc, reason] => {
                let pc = u64::from_str_radix(pc, 16).map_err(|e| format!("bad exit pc in {line:?}: {e}"))?;
                let reason: usize = reason
                    .parse()
                    .map_err(|e| format!("bad exit reason in {line:?}: {e}"))?;
                let reason = *ExitReason::ALL
                    .get(reason)
                    .ok_or_else(|| format!("unknown exit reason {reason}"))?;
                outcome = Some(Outcome::Exited { pc, reason });
            }
            ["s", k, v] => {
                let k: usize = k.parse().map_err(|e| format!("bad element in {line:?}: {e}"))?;
                let v = u64::from_str_radix(v, 16).map_err(|e| format!("bad value in {line:?}: {e}"))?;
                *values.get_mut(k).ok_or_else(|| format!("element {k} out of range"))? = Some(v);
            }
            ["m", bytes] => ram = hex_bytes(bytes),
            ["n", bytes] => space1 = hex_bytes(bytes),
            _ => return Err(format!("unexpected output line {line:?}")),
        }
    }
    Ok(Final {
        outcome: outcome.ok_or("no outcome line")?,
        values: values
            .into_iter()
            .collect::<Option<_>>()
            .ok_or("missing element values")?,
        ram,
        space1,
    })
}

// ---- the interpreter side

fn interpret(
    program: &Program,
    entry: GuestAddr,
    elems: &[Element],
    init: &[u64],
    image: &[u8],
) -> Result<Final, String> {
    let mut interp = Interpreter::new(program);
    for (e, bits) in elems.iter().zip(init) {
        e.set(&program.state, &mut interp.machine.state, val_of_bits(e.ty, *bits));
    }
    interp.machine.memory.write_bytes(AddrSpace::RAM, RAM_BASE, image);
    interp.steps_left = 1_000_000;
    let outcome = interp
        .run(entry, &mut TestEnv { program })
        .map_err(|e| format!("the interpreter failed: {e}"))?;
    let values = elems
        .iter()
        .map(|e| bits_of_val(e.get(&program.state, &interp.machine.state)))
        .collect();
    Ok(Final {
        outcome,
        values,
        ram: read_bytes(&interp.machine, AddrSpace::RAM, RAM_BASE, RAM_SIZE),
        space1: read_bytes(&interp.machine, AddrSpace(1), 0, SPACE1_SIZE),
    })
}

fn compare(elems: &[Element], expected: &Final, actual: &Final) -> Vec<String> {
    let mut problems = Vec::new();
    if expected.outcome != actual.outcome {
        problems.push(format!(
            "outcome: interpreter {:?}, C {:?}",
            expected.outcome, actual.outcome
        ));
    }
    for ((e, x), y) in elems.iter().zip(&expected.values).zip(&actual.values) {
        if !same(e.ty, *x, *y) {
            problems.push(format!("%{}: interpreter {x:#x}, C {y:#x}", e.name));
        }
    }
    for (name, base, x, y) in [
        ("ram", RAM_BASE, &expected.ram, &actual.ram),
        ("as1", 0, &expected.space1, &actual.space1),
    ] {
        if x.len() != y.len() {
            problems.push(format!("{name}: C printed {} bytes, expected {}", y.len(), x.len()));
            continue;
        }
        for (i, (a, b)) in x.iter().zip(y.iter()).enumerate() {
            if a != b {
                problems.push(format!(
                    "{name}[{:#x}]: interpreter {a:#04x}, C {b:#04x}",
                    base + i as u64
                ));
                if problems.len() > 40 {
                    return problems;
                }
            }
        }
    }
    problems
}

struct Directives {
    entry: Option<GuestAddr>,
    runs: usize,
    known_answer: bool,
    expect: Vec<(String, u64)>,
}

fn directives(text: &str) -> Directives {
    let mut d = Directives {
        entry: None,
        runs: 24,
        known_answer: false,
        expect: Vec::new(),
    };
    for line in text.lines() {
        let Some(rest) = line.trim().strip_prefix(';') else {
            continue;
        };
        let words: Vec<&str> = rest.split_whitespace().collect();
        match words.as_slice() {
            ["entry", f] => {
                d.entry =
                    Some(GuestAddr::from_function_name(f).unwrap_or_else(|| panic!("bad entry directive {line:?}")));
            }
            ["runs", n] => d.runs = n.parse().unwrap_or_else(|e| panic!("{line:?}: {e}")),
            ["known-answer"] => d.known_answer = true,
            ["expect", name, v] => d.expect.push((
                name.to_string(),
                u64::from_str_radix(v.trim_start_matches("0x"), 16).unwrap_or_else(|e| panic!("{line:?}: {e}")),
            )),
            _ => {}
        }
    }
    d
}

/// Runs one program, emitted with `choices`; returns the problems found (empty when C and
/// interpreter agree).
fn check_program(path: &Path, toolchain: &rpt_build::Toolchain, choices: common::generation::Choices) -> Vec<String> {
    let name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = format!("{name}{}", choices.suffix());
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let d = directives(&text);
    let program = common::load_program(path);
    let entry = d
        .entry
        .or_else(|| program.functions.keys().next().copied())
        .expect("a program with a function");
    let elems = state_elements(&program.state);

    let mut rng = Rng::for_case(&name, 0);
    let image_bytes: Vec<u8> = (0..RAM_SIZE).map(|_| rng.next() as u8).collect();
    let runs: Vec<Vec<u64>> = (0..d.runs)
        .map(|r| {
            let mut rng = Rng::for_case(&name, r as u64 + 1);
            elems.iter().map(|e| random_bits(&mut rng, e.ty)).collect()
        })
        .collect();
    let image = rpt_testkit::guest::data_image(".data", RAM_BASE, &image_bytes, RAM_SIZE as u64, entry);

    let dir = tempfile::tempdir().expect("temporary directory");
    let src = dir.path().join("src");
    let driver = SourceFile {
        path: "guest/driver.c".into(),
        contents: driver_source(&program, &elems, &runs),
    };
    let jobs = common::write_generation(&src, &program, &image, entry, &[driver], 3, choices);
    let binary = common::build(dir.path(), &src, &jobs, toolchain);

    let mut problems = Vec::new();
    for (r, init) in runs.iter().enumerate() {
        let output =
            rpt_build::run_captured(&Runner::Native, &binary, &[r.to_string()]).unwrap_or_else(|e| panic!("{e}"));
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        if !output.status.success() {
            problems.push(format!(
                "{name} run {r}: the binary failed ({}): {stderr}",
                output.status
            ));
            continue;
        }
        let actual = match parse_c_output(&stdout, elems.len()) {
            Ok(f) => f,
            Err(e) => {
                problems.push(format!("{name} run {r}: {e}"));
                continue;
            }
        };
        if d.known_answer {
            for (elem, want) in &d.expect {
                match elems.iter().position(|e| &e.name == elem) {
                    Some(k) if actual.values[k] == *want => {}
                    Some(k) => problems.push(format!(
                        "{name}: %{elem} is {:#x}, expected {want:#x}",
                        actual.values[k]
                    )),
                    None => problems.push(format!("{name}: `; expect {elem}` names no state element")),
                }
            }
            continue;
        }
        let expected = match interpret(&program, entry, &elems, init, &image_bytes) {
            Ok(f) => f,
            Err(e) => {
                problems.push(format!("{name} run {r}: {e}"));
                continue;
            }
        };
        let found = compare(&elems, &expected, &actual);
        if !found.is_empty() {
            let state: Vec<String> = elems
                .iter()
                .zip(init)
                .map(|(e, v)| format!("%{}={v:#x}", e.name))
                .collect();
            problems.push(format!(
                "{name} run {r} from {}:\n    {}",
                state.join(" "),
                found.join("\n    ")
            ));
        }
    }
    if !problems.is_empty() {
        let kept = dir.keep();
        problems.push(format!("{name}: generated sources kept in {}", kept.display()));
    }
    problems
}

#[test]
fn c_backend_matches_the_interpreter() {
    let toolchain = common::strict_toolchain();
    let files = common::rir_files("diff");
    assert!(
        files.len() >= 8,
        "expected the differential programs in tests/diff, found {}",
        files.len()
    );
    let mut problems = Vec::new();
    for path in &files {
        for choices in common::generation::Choices::all() {
            problems.extend(check_program(path, &toolchain, choices));
        }
    }
    assert!(
        problems.is_empty(),
        "the C backend and the interpreter disagree:\n{}",
        problems.join("\n")
    );
}
