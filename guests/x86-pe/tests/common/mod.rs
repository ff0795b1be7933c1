//! What the x86 integration tests share beyond `rpt_testkit`: the x86 guest's lifting entry points,
//! mingw builds, and KERNEL32 for running whole lifted programs in the IR interpreter.

#![allow(dead_code)] // Each test binary uses a different subset.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use rpt_api::{Diagnostic, GuestImage, GuestOptions, LiftResult, Seeds, Severity};
use rpt_guest_x86_pe::X86Pe;
use rpt_guest_x86_pe::state::{ARITH_FLAGS, DF, EAX, ESP, GPRS};
use rpt_ir::interp::{InterpError, Interpreter, MachineState, Outcome, Val};
use rpt_ir::{AddrSpace, Endian, ExitReason, GuestAddr, Program};
use rpt_testkit::cbuild::CCompiler;
use rpt_testkit::guest;
use rpt_testkit::interp::HelperEnv;

/// A scratch directory for this test binary's build products.
pub fn scratch(name: &str) -> PathBuf {
    rpt_testkit::scratch_dir(env!("CARGO_TARGET_TMPDIR"), &format!("rpt-guest-x86-pe/{name}"))
}

/// Runs a compiler; panics with its output (and `hint`) when it is missing or fails.
pub fn run_tool(cmd: &mut Command, hint: &str) {
    rpt_testkit::run_tool(cmd, b"", hint);
}

/// Builds `source`, one of the native harnesses in tests/oracle, as the static i386 program
/// `name` with `gcc -m32` and the extra `flags`, once per test process (tests of one file run in
/// parallel and would otherwise write the same files at once); returns its path.
pub fn native_harness(source: &str, name: &str, flags: &[&str]) -> PathBuf {
    static BUILT: Mutex<BTreeMap<String, PathBuf>> = Mutex::new(BTreeMap::new());
    let mut built = BUILT.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    built
        .entry(name.to_string())
        .or_insert_with(|| {
            let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oracle").join(source);
            let cflags = [&["-m32", "-O1", "-Wall"][..], flags].concat();
            let gcc = CCompiler {
                command: "gcc",
                cflags: &cflags,
                ldflags: &["-m32", "-static"],
                hint: "the native oracles run x86 code on this CPU and need `gcc -m32`: install gcc-12-multilib \
                       (apt-get install gcc-12-multilib)",
            };
            gcc.build(&scratch("oracle"), &[source], name)
        })
        .clone()
}

/// One case for tests/oracle/harness.c: its code, the eight GPRs (esp is the harness's own),
/// EFLAGS, and the byte fields after them (the stack window, and the fsave image for the x87 build).
pub struct HarnessCase<'a> {
    /// The code to run.
    pub code: &'a [u8],
    /// eax, ecx, edx, ebx, esp (ignored), ebp, esi, edi.
    pub regs: [u32; 8],
    /// The flags to start with.
    pub eflags: u32,
    /// The byte fields that follow the flags.
    pub fields: Vec<&'a [u8]>,
}

/// What tests/oracle/harness.c reports for a case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HarnessResult {
    /// The code ran to its end: esp at the start, the eight GPRs, EFLAGS and the byte fields.
    Done {
        /// esp when the case started.
        esp_in: u32,
        /// eax, ecx, edx, ebx, esp, ebp, esi, edi.
        regs: [u32; 8],
        /// EFLAGS at the end.
        eflags: u32,
        /// The byte fields, as many as the input had.
        fields: Vec<Vec<u8>>,
    },
    /// The code raised a signal (SIGFPE is a division's #DE).
    Fault(u32),
}

/// Runs every case in one process of the native harness `exe` (built by [`native_harness`]).
pub fn run_harness(exe: &Path, cases: &[HarnessCase<'_>]) -> Vec<HarnessResult> {
    let mut input = String::new();
    for c in cases {
        input.push_str(&guest::hex_text(c.code));
        // Every GPR but esp, which is the harness's.
        for (_, value) in c.regs.iter().enumerate().filter(|(i, _)| *i != 4) {
            let _ = write!(input, " {value:x}");
        }
        let _ = write!(input, " {:x}", c.eflags);
        for field in &c.fields {
            let _ = write!(input, " {}", guest::hex_text(field));
        }
        input.push('\n');
    }
    let out = rpt_testkit::run_tool(&mut Command::new(exe), input.as_bytes(), "the native harness");
    let text = String::from_utf8(out.stdout).expect("the harness writes text");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), cases.len(), "one result line per case");
    lines
        .iter()
        .zip(cases)
        .map(|(line, case)| {
            let f: Vec<&str> = line.split_whitespace().collect();
            let n = |i: usize| u32::from_str_radix(f[i], 16).expect("hex register");
            match f.first().copied() {
                Some("fault") if f.len() == 2 => HarnessResult::Fault(f[1].parse().expect("a signal number")),
                Some("ok") if f.len() == 11 + case.fields.len() => HarnessResult::Done {
                    esp_in: n(1),
                    regs: [n(2), n(3), n(4), n(5), n(6), n(7), n(8), n(9)],
                    eflags: n(10),
                    fields: f[11..]
                        .iter()
                        .map(|h| guest::hex_bytes(h).expect("a hex field"))
                        .collect(),
                },
                _ => panic!("the harness said `{line}` for {}", guest::hex_text(case.code)),
            }
        })
        .collect()
}

/// Whether a lifted case's run ended in the `hlt` at `end`, just after its code: where the native
/// run jumps to the harness's epilogue.
pub fn halted_at(outcome: &Outcome, end: u64) -> bool {
    matches!(outcome, Outcome::Exited { reason: ExitReason::Halt, pc } if *pc == end)
}

/// Sets the eight GPRs, the arithmetic flags and DF of an x86 machine from `regs` and `eflags`.
pub fn set_registers(machine: &mut MachineState, regs: [u32; 8], eflags: u32) {
    let desc = rpt_guest_x86_pe::state::state_desc();
    for (slot, v) in GPRS.iter().zip(regs) {
        machine.state.set(&desc, *slot, Val::Int(u64::from(v)));
    }
    for (slot, bit) in ARITH_FLAGS.into_iter().chain([(DF, 10)]) {
        machine.state.set(&desc, slot, Val::Int(u64::from((eflags >> bit) & 1)));
    }
}

/// The eight GPRs of an x86 machine and its EFLAGS: the arithmetic flags and DF over bit 1, which
/// is always set.
pub fn registers(machine: &MachineState) -> ([u32; 8], u32) {
    let desc = rpt_guest_x86_pe::state::state_desc();
    let regs = GPRS.map(|slot| machine.state.get(&desc, slot).int() as u32);
    let eflags = ARITH_FLAGS
        .into_iter()
        .chain([(DF, 10)])
        .fold(2, |eflags, (slot, bit)| {
            eflags | (machine.state.get(&desc, slot).int() as u32 & 1) << bit
        });
    (regs, eflags)
}

/// Builds a freestanding PE32 console program with mingw (flags from docs/notes: `_start@0`
/// entry, no relocations, preferred base), returning the file's bytes.
pub fn build_pe(name: &str, source: &str) -> Vec<u8> {
    let dir = scratch("pe");
    let c = dir.join(format!("{name}.c"));
    let exe = dir.join(format!("{name}.exe"));
    std::fs::write(&c, source).expect("write C source");
    rpt_testkit::toolchains::build_freestanding_pe(&c, &exe, &[]);
    std::fs::read(&exe).expect("read built PE")
}

/// An image holding `code` as one executable `.text` section at `addr`.
pub fn code_image(addr: u64, code: &[u8]) -> GuestImage {
    guest::code_image(".text", addr, code)
}

/// Lifts one function and verifies it against the x86 state, the functions and the image's thunks.
pub fn lift_verified(image: &GuestImage, entry: GuestAddr, functions: &BTreeSet<GuestAddr>) -> LiftResult {
    guest::lift_verified(&X86Pe, image, entry, functions, &GuestOptions::new())
}

/// Discovers and lifts a whole image into a verified program.
pub fn lift_program(image: &GuestImage) -> (Program, Vec<Diagnostic>) {
    lift_program_with(image, &Seeds::default())
}

/// Discovers from `seeds` and lifts a whole image into a verified program.
pub fn lift_program_with(image: &GuestImage, seeds: &Seeds) -> (Program, Vec<Diagnostic>) {
    guest::lift_program(&X86Pe, image, seeds, &GuestOptions::new())
}

/// The Error diagnostics of a list, for assertions with readable failures.
pub fn errors(diags: &[Diagnostic]) -> Vec<&Diagnostic> {
    diags.iter().filter(|d| d.severity == Severity::Error).collect()
}

/// The Warning and Error diagnostics of a list: what a clean image must not give.
pub fn worrying(diags: &[Diagnostic]) -> Vec<&Diagnostic> {
    diags.iter().filter(|d| d.severity >= Severity::Warning).collect()
}

/// KERNEL32 for the interpreter: the win32-console imports, with the C platform's conventions
/// (handles, the command line at 0x7ffe0000, the heap from 0x10000000 in 64 KiB steps).
pub struct Kernel32 {
    names: BTreeMap<GuestAddr, String>,
    /// What the program wrote to standard output.
    pub stdout: Vec<u8>,
    /// The code passed to ExitProcess, once it is called.
    pub exit_code: Option<u32>,
    heap_next: u32,
}

const MASK32: u64 = 0xffff_ffff;

impl Kernel32 {
    /// An environment for `image`'s imports.
    pub fn new(image: &GuestImage) -> Kernel32 {
        Kernel32 {
            names: image.imports.iter().map(|i| (i.thunk, i.name.clone())).collect(),
            stdout: Vec::new(),
            exit_code: None,
            heap_next: 0x1000_0000,
        }
    }

    fn arg(m: &MachineState, i: u64) -> u32 {
        let desc = rpt_guest_x86_pe::state::state_desc();
        let esp = m.state.get(&desc, ESP).int();
        m.memory
            .read(AddrSpace::RAM, esp + 4 + 4 * i, 4, Endian::Little, MASK32) as u32
    }

    /// Pops the return address and `nargs` stdcall arguments and returns `value` in eax.
    fn ret(m: &mut MachineState, nargs: u64, value: u32) {
        let desc = rpt_guest_x86_pe::state::state_desc();
        let esp = m.state.get(&desc, ESP).int();
        m.state.set(&desc, ESP, Val::Int((esp + 4 + 4 * nargs) & MASK32));
        m.state.set(&desc, EAX, Val::Int(u64::from(value)));
    }
}

impl Kernel32 {
    /// Runs the import whose thunk is `addr`, as an interpreter environment's externs do.
    pub fn call_extern(&mut self, addr: GuestAddr, m: &mut MachineState) -> Result<Option<Outcome>, InterpError> {
        let arg = |i| Kernel32::arg(m, i);
        match self.names.get(&addr).map(String::as_str) {
            Some("GetStdHandle") => Kernel32::ret(m, 1, if arg(0) == 0xffff_fff5 { 0x14 } else { 0x18 }),
            Some("WriteFile") => {
                let (handle, buf, len, written) = (arg(0), arg(1), arg(2), arg(3));
                if handle == 0x14 {
                    for i in 0..u64::from(len) {
                        self.stdout.push(m.memory.read_u8(AddrSpace::RAM, u64::from(buf) + i));
                    }
                }
                if written != 0 {
                    m.memory.write(
                        AddrSpace::RAM,
                        u64::from(written),
                        4,
                        Endian::Little,
                        u128::from(len),
                        MASK32,
                    );
                }
                Kernel32::ret(m, 5, 1);
            }
            Some("GetCommandLineA") => {
                m.memory.write_bytes(AddrSpace::RAM, 0x7ffe_0000, b"demo.exe\0");
                Kernel32::ret(m, 0, 0x7ffe_0000);
            }
            Some("VirtualAlloc") => {
                let size = arg(1);
                let base = self.heap_next;
                self.heap_next += size.div_ceil(0x1_0000) * 0x1_0000;
                Kernel32::ret(m, 4, base);
            }
            Some("VirtualFree") => Kernel32::ret(m, 3, 1),
            Some("ExitProcess") => {
                self.exit_code = Some(arg(0));
                return Ok(Some(Outcome::Exited {
                    pc: addr.0,
                    reason: ExitReason::Halt,
                }));
            }
            _ => return Ok(None),
        }
        Ok(Some(Outcome::Returned))
    }
}

/// Runs a lifted program from the image's entry in the interpreter, set up as rpt_guest_init
/// does (esp at 0x7ffe0000 with a return address of 0 pushed); returns stdout and the exit code.
pub fn run_program(image: &GuestImage, program: &Program) -> (Vec<u8>, Option<u32>) {
    let mut interp = Interpreter::new(program);
    interp.steps_left = 2_000_000_000;
    for seg in &image.segments {
        interp
            .machine
            .memory
            .write_bytes(AddrSpace::RAM, seg.addr.0, &seg.bytes);
    }
    let desc = rpt_guest_x86_pe::state::state_desc();
    interp.machine.state.set(&desc, ESP, Val::Int(0x7ffd_fffc));
    let mut kernel32 = Kernel32::new(image);
    let mut env =
        HelperEnv::new(rpt_guest_x86_pe::interp::call_helper).with_externs(|addr, m| kernel32.call_extern(addr, m));
    let outcome = interp.run(image.entry, &mut env).expect("the lifted program runs");
    drop(env);
    match outcome {
        Outcome::Exited {
            reason: ExitReason::Halt,
            ..
        } => {}
        Outcome::Returned => kernel32.exit_code = Some(interp.machine.state.get(&desc, EAX).int() as u32),
        other => panic!("the program ended with {other:?}"),
    }
    (kernel32.stdout, kernel32.exit_code)
}
