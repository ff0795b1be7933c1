//! Helpers shared by the integration tests: toolchain calls, images from raw bytes, lifting with
//! verification, and running lifted code in the IR interpreter.

#![allow(dead_code)] // Each test binary uses a different subset.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use rpt_api::{GuestImage, GuestPlugin, LiftResult, Segment, SegmentFlags, Severity};
use rpt_guest_x86_pe::X86Pe;
use rpt_guest_x86_pe::state::{EAX, ESP};
use rpt_ir::interp::{Environment, InterpError, Interpreter, MachineState, Outcome, Val};
use rpt_ir::verify::{VerifyContext, verify_function};
use rpt_ir::{AddrSpace, Endian, ExitReason, GuestAddr, Program};

/// A scratch directory for this test binary's build products.
pub fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("rpt-guest-x86-pe")
        .join(name);
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

/// Runs a compiler; panics with its output (and `hint`) when it is missing or fails.
pub fn run_tool(cmd: &mut Command, hint: &str) {
    let shown = format!("{cmd:?}");
    match cmd.output() {
        Ok(out) if out.status.success() => {}
        Ok(out) => panic!(
            "{shown} failed ({}):\n{}{}\n{hint}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(e) => panic!("cannot run {shown}: {e}\n{hint}"),
    }
}

/// Builds a freestanding PE32 console program with mingw (flags from docs/notes: `_start@0`
/// entry, no relocations, preferred base), returning the file's bytes.
pub fn build_pe(name: &str, source: &str) -> Vec<u8> {
    let dir = scratch("pe");
    let c = dir.join(format!("{name}.c"));
    let exe = dir.join(format!("{name}.exe"));
    std::fs::write(&c, source).expect("write C source");
    run_tool(
        Command::new("i686-w64-mingw32-gcc")
            .args([
                "-O2",
                "-m32",
                "-ffreestanding",
                "-nostdlib",
                "-fno-builtin",
                "-fno-asynchronous-unwind-tables",
                "-Wl,-e,_start@0",
                "-Wl,--subsystem,console",
                "-Wl,--disable-dynamicbase",
                "-Wl,--disable-reloc-section",
            ])
            .arg(&c)
            .arg("-o")
            .arg(&exe)
            .arg("-lkernel32"),
        "the PE tests need mingw-w64 (Debian package gcc-mingw-w64-i686)",
    );
    std::fs::read(&exe).expect("read built PE")
}

/// An image holding `code` as one executable section at `addr`.
pub fn code_image(addr: u64, code: &[u8]) -> GuestImage {
    GuestImage {
        segments: vec![Segment {
            name: ".text".to_string(),
            addr: GuestAddr(addr),
            bytes: code.to_vec(),
            mem_size: code.len() as u64,
            flags: SegmentFlags {
                read: true,
                write: false,
                execute: true,
            },
        }],
        entry: GuestAddr(addr),
        exports: BTreeMap::new(),
        imports: Vec::new(),
    }
}

/// Lifts one function and verifies it against the x86 state, the functions and the image's thunks.
pub fn lift_verified(image: &GuestImage, entry: GuestAddr, functions: &BTreeSet<GuestAddr>) -> LiftResult {
    let plugin = X86Pe;
    let result = plugin.lift(image, entry, functions, &Default::default());
    let state = plugin.state(&Default::default());
    let callees: BTreeSet<GuestAddr> = functions
        .iter()
        .copied()
        .chain(image.imports.iter().map(|i| i.thunk))
        .collect();
    let helpers: BTreeMap<String, rpt_ir::HelperDecl> = plugin
        .helpers(&Default::default())
        .into_iter()
        .map(|h| (h.name.clone(), h))
        .collect();
    let ctx = VerifyContext {
        state: &state,
        helpers: Some(&helpers),
        callees: Some(&callees),
    };
    if let Err(e) = verify_function(&result.function, ctx) {
        panic!(
            "{} does not verify:\n{e}\n{}",
            entry.function_name(),
            rpt_ir::print::function_to_string(&result.function, &state)
        );
    }
    result
}

/// Discovers and lifts a whole image into a verified program.
pub fn lift_program(image: &GuestImage) -> (Program, Vec<rpt_api::Diagnostic>) {
    lift_program_with(image, &rpt_api::Seeds::default())
}

/// Discovers from `seeds` and lifts a whole image into a verified program.
pub fn lift_program_with(image: &GuestImage, seeds: &rpt_api::Seeds) -> (Program, Vec<rpt_api::Diagnostic>) {
    let plugin = X86Pe;
    let discovery = plugin.discover(image, seeds);
    let mut program = Program::new(plugin.state(&Default::default()));
    for h in plugin.helpers(&Default::default()) {
        program.helpers.insert(h.name.clone(), h);
    }
    let mut diagnostics = discovery.diagnostics.clone();
    for &f in &discovery.functions {
        let lifted = lift_verified(image, f, &discovery.functions);
        diagnostics.extend(lifted.diagnostics);
        program.functions.insert(f, lifted.function);
    }
    for import in &image.imports {
        program
            .externs
            .insert(import.thunk, format!("{}!{}", import.module, import.name));
    }
    program.address_taken = discovery.address_taken;
    if let Err(e) = rpt_ir::verify::verify_program(&program) {
        panic!("the program does not verify:\n{e}");
    }
    (program, diagnostics)
}

/// The Error diagnostics of a list, for assertions with readable failures.
pub fn errors(diags: &[rpt_api::Diagnostic]) -> Vec<&rpt_api::Diagnostic> {
    diags.iter().filter(|d| d.severity == Severity::Error).collect()
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

impl Environment for Kernel32 {
    fn call_extern(&mut self, addr: GuestAddr, m: &mut MachineState) -> Result<Option<Outcome>, InterpError> {
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

    fn call_helper(
        &mut self,
        name: &str,
        args: &[Val],
        m: &mut MachineState,
    ) -> Result<Option<Option<Val>>, InterpError> {
        rpt_guest_x86_pe::interp::call_helper(name, args, m)
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
    let mut env = Kernel32::new(image);
    let outcome = interp.run(image.entry, &mut env).expect("the lifted program runs");
    match outcome {
        Outcome::Exited {
            reason: ExitReason::Halt,
            ..
        } => {}
        Outcome::Returned => env.exit_code = Some(interp.machine.state.get(&desc, EAX).int() as u32),
        other => panic!("the program ended with {other:?}"),
    }
    (env.stdout, env.exit_code)
}
