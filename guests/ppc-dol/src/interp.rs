//! The helpers as the IR interpreter runs them: the C of `runtime/ppc_helpers.c`, which `build.rs`
//! compiles into this crate, called through FFI (ARCHITECTURE.md, "Helper semantics: one copy, in
//! C"). Tests give [`call_helper`] to their interpreter environments.
//!
//! The helpers take what they need as arguments (their `struct cpu` pointer is null:
//! `interp/cpu.h` says why) and reach guest memory through the runtime's loads and stores, which
//! the interpreter build routes to the two callbacks below; they read and write the interpreter
//! memory of the call in progress.

// The one place this crate departs from the workspace's `unsafe_code = "deny"`: calling the C
// helpers and being called back by them.
#![allow(unsafe_code)]

use std::cell::Cell;

use rpt_ir::interp::{InterpError, MachineState, Memory, Val};
use rpt_ir::{AddrSpace, Rounding};

use crate::estimate::{FRES_HELPER, FRSQRTE_HELPER};
use crate::quantize::{LOAD_HELPER, STORE_HELPER};

/// The C files `build.rs` compiled into the crate, relative to it, separated by spaces.
pub const C_FILES: &str = env!("RPT_INTERPRETER_C");

/// Guest addresses are 32 bits: each byte's address wraps as the interpreter's own loads do.
const ADDRESS_MASK: u64 = 0xffff_ffff;

/// `struct cpu` as this build of the helpers knows it: incomplete, so only ever a null pointer.
#[repr(C)]
struct Cpu {
    _incomplete: [u8; 0],
}

unsafe extern "C" {
    fn rpt_helper_fres_estimate(c: *mut Cpu, bits: u64) -> u64;
    fn rpt_helper_frsqrte_estimate(c: *mut Cpu, bits: u64) -> u64;
    fn rpt_helper_psq_load(c: *mut Cpu, ea: u32, gqr: u32, slot: u32) -> u64;
    fn rpt_helper_psq_store(c: *mut Cpu, ea: u32, gqr: u32, bits: u64, slot: u32);
}

thread_local! {
    /// The interpreter memory of the helper call in progress on this thread; null between calls.
    static MEMORY: Cell<*mut Memory> = const { Cell::new(std::ptr::null_mut()) };
}

/// Runs `call` with `memory` as the one the C helpers' loads and stores reach.
fn with_memory<T>(memory: &mut Memory, call: impl FnOnce() -> T) -> T {
    /// Puts the previous memory back, also when `call` unwinds.
    struct Restore(*mut Memory);
    impl Drop for Restore {
        fn drop(&mut self) {
            MEMORY.with(|m| m.set(self.0));
        }
    }
    let _restore = Restore(MEMORY.with(|m| m.replace(memory)));
    call()
}

/// `rpt_interpreter_read` (renamed by `interp/cpu.h`): `size` bytes of guest memory at `addr`
/// into `to`, or zeros outside a helper call.
#[unsafe(no_mangle)]
extern "C" fn rpt_ppc_interpreter_read(addr: u64, to: *mut u8, size: usize) {
    if to.is_null() {
        return;
    }
    // SAFETY: the C side passes a pointer to `size` bytes of its own (a local it loads into).
    let bytes = unsafe { std::slice::from_raw_parts_mut(to, size) };
    let memory = MEMORY.with(Cell::get);
    // SAFETY: a non-null MEMORY is the `&mut Memory` that `with_memory` holds for the call in
    // progress on this thread; nothing else uses it until the call returns.
    let memory = unsafe { memory.as_ref() };
    for (i, byte) in bytes.iter_mut().enumerate() {
        *byte = memory.map_or(0, |m| {
            m.read_u8(AddrSpace::RAM, addr.wrapping_add(i as u64) & ADDRESS_MASK)
        });
    }
}

/// `rpt_interpreter_write` (renamed by `interp/cpu.h`): `size` bytes from `from` into guest
/// memory at `addr`; nothing outside a helper call.
#[unsafe(no_mangle)]
extern "C" fn rpt_ppc_interpreter_write(addr: u64, from: *const u8, size: usize) {
    let memory = MEMORY.with(Cell::get);
    if from.is_null() || memory.is_null() {
        return;
    }
    // SAFETY: the C side passes a pointer to `size` bytes of its own (a local it stores from).
    let bytes = unsafe { std::slice::from_raw_parts(from, size) };
    // SAFETY: as in `rpt_ppc_interpreter_read`: the memory `with_memory` lends for this call.
    let memory = unsafe { &mut *memory };
    for (i, byte) in bytes.iter().enumerate() {
        memory.write_u8(AddrSpace::RAM, addr.wrapping_add(i as u64) & ADDRESS_MASK, *byte);
    }
}

/// The rounding mode the FPSCR's RN field (its low two bits) selects, for an interpreter
/// environment's `dynamic_rounding`: what `.rdyn` float operations round with.
pub fn fpscr_rounding(machine: &MachineState) -> Rounding {
    match machine
        .state
        .get(&crate::state::state_desc(), crate::state::FPSCR)
        .int()
        & 3
    {
        0 => Rounding::Nearest,
        1 => Rounding::Zero,
        2 => Rounding::Up,
        _ => Rounding::Down,
    }
}

/// Runs a helper of `runtime/ppc_helpers.c` for the IR interpreter: `Ok(None)` if `name` is not
/// one of them (the platform's `@sc` and `@timebase` are the platform's business).
pub fn call_helper(name: &str, args: &[Val], machine: &mut MachineState) -> Result<Option<Option<Val>>, InterpError> {
    let arg = |i: usize| {
        args.get(i)
            .map(|v| v.int())
            .ok_or_else(|| InterpError::Unsupported(format!("@{name} with {} arguments", args.len())))
    };
    let c = std::ptr::null_mut();
    let result = match name {
        FRES_HELPER => {
            let bits = arg(0)?;
            // SAFETY: a pure function of its argument; it never reads `c`.
            Some(unsafe { rpt_helper_fres_estimate(c, bits) })
        }
        FRSQRTE_HELPER => {
            let bits = arg(0)?;
            // SAFETY: a pure function of its argument; it never reads `c`.
            Some(unsafe { rpt_helper_frsqrte_estimate(c, bits) })
        }
        LOAD_HELPER => {
            let (ea, gqr, slot) = (arg(0)? as u32, arg(1)? as u32, arg(2)? as u32);
            // SAFETY: it never reads `c`, and reads guest memory only through the callbacks,
            // which reach `machine.memory` for the duration of the call.
            Some(with_memory(&mut machine.memory, || unsafe {
                rpt_helper_psq_load(c, ea, gqr, slot)
            }))
        }
        STORE_HELPER => {
            let (ea, gqr, bits, slot) = (arg(0)? as u32, arg(1)? as u32, arg(2)?, arg(3)? as u32);
            // SAFETY: as for the load: no state, memory only through the callbacks.
            with_memory(&mut machine.memory, || unsafe {
                rpt_helper_psq_store(c, ea, gqr, bits, slot)
            });
            None
        }
        _ => return Ok(None),
    };
    Ok(Some(result.map(Val::Int)))
}

#[cfg(test)]
mod tests {
    use rpt_ir::Endian;
    use rpt_ir::interp::StateValues;

    use super::*;

    fn machine() -> MachineState {
        MachineState {
            state: StateValues::new(&crate::state::state_desc()),
            memory: Memory::new(),
        }
    }

    fn call(m: &mut MachineState, name: &str, args: &[u64]) -> Option<u64> {
        let args: Vec<Val> = args.iter().map(|a| Val::Int(*a)).collect();
        match call_helper(name, &args, m) {
            Ok(Some(result)) => result.map(|v| v.int()),
            other => panic!("@{name}: {other:?}"),
        }
    }

    fn fres(x: u64) -> u64 {
        call(&mut machine(), FRES_HELPER, &[x]).unwrap_or_default()
    }

    fn frsqrte(x: u64) -> u64 {
        call(&mut machine(), FRSQRTE_HELPER, &[x]).unwrap_or_default()
    }

    fn f(v: f64) -> u64 {
        v.to_bits()
    }

    #[test]
    fn estimates_have_the_special_cases() {
        assert_eq!(fres(f(0.0)), f(f64::INFINITY));
        assert_eq!(fres(f(-0.0)), f(f64::NEG_INFINITY));
        assert_eq!(fres(f(f64::INFINITY)), f(0.0));
        assert_eq!(frsqrte(f(0.0)), f(f64::INFINITY));
        assert_eq!(frsqrte(f(-0.0)), f(f64::NEG_INFINITY));
        assert_eq!(frsqrte(f(f64::INFINITY)), f(0.0));
        assert_eq!(frsqrte(f(-1.0)), crate::DEFAULT_NAN);
        assert_eq!(frsqrte(0x7ff0_0000_0000_0001), 0x7ff8_0000_0000_0001);
    }

    #[test]
    fn estimates_are_close() {
        for &x in &[1.0f64, 1.5, 2.0, 3.0, 10.0, 0.3, 12345.678, 1e-30, 7e20] {
            let r = f64::from_bits(fres(f(x)));
            assert!((r * x - 1.0).abs() < 1.0 / 4096.0, "fres({x}) = {r}");
            let s = f64::from_bits(frsqrte(f(x)));
            assert!((s * s * x - 1.0).abs() < 1.0 / 2048.0, "frsqrte({x}) = {s}");
        }
        // Exact table values at segment starts.
        assert_eq!(fres(f(1.0)), 0x3fef_ff00_0000_0000);
        assert_eq!(frsqrte(f(1.0)), 0x3fef_fe80_0000_0000);
    }

    #[test]
    fn loads_scale_integers_from_interpreter_memory() {
        let mut m = machine();
        // Across a page of the interpreter's memory, through the uncached view.
        m.memory
            .write_bytes(AddrSpace::RAM, 0x8000_0ffe, &[0x80, 0xff, 0x01, 0x02]);
        let mut load = |gqr: u32, slot: u64| {
            f64::from_bits(call(&mut m, LOAD_HELPER, &[0xc000_0ffe, u64::from(gqr), slot]).unwrap_or_default())
        };
        // u8, scale 0: 128, 255.
        assert_eq!(load(4 << 16, 0), 128.0);
        assert_eq!(load(4 << 16, 1), 255.0);
        // s8, scale 1: -128 / 2, -1 / 2.
        assert_eq!(load((1 << 24) | (6 << 16), 0), -64.0);
        assert_eq!(load((1 << 24) | (6 << 16), 1), -0.5);
        // s16, scale -2 (62): 0x80ff * 4; the second value 0x0102 * 4 lies on the next page.
        assert_eq!(load((62 << 24) | (7 << 16), 0), -32513.0 * 4.0);
        assert_eq!(load((62 << 24) | (7 << 16), 1), 258.0 * 4.0);
    }

    /// What `psq_st` of `value` leaves in memory: the `size` bytes at 0x100 + slot * size.
    fn store(gqr: u32, value: f64, slot: u64, size: u32) -> u64 {
        let mut m = machine();
        m.memory.write_bytes(AddrSpace::RAM, 0x100, &[0xaa; 16]);
        assert_eq!(
            call(&mut m, STORE_HELPER, &[0x100, u64::from(gqr), value.to_bits(), slot]),
            None
        );
        m.memory.read(
            AddrSpace::RAM,
            0x100 + slot * u64::from(size),
            size,
            Endian::Big,
            ADDRESS_MASK,
        ) as u64
    }

    #[test]
    fn stores_clamp_and_truncate() {
        // u8, scale 2: 10.9 * 4 = 43.6 -> 43.
        assert_eq!(store(4 | (2 << 8), 10.9, 0, 1), 43);
        assert_eq!(store(4, 10.9, 0, 1), 10);
        // s8: -200 clamps to -128; 1000 to 127; NaN stores 0.
        assert_eq!(store(6, -200.0, 1, 1), 0x80);
        assert_eq!(store(6, 1000.0, 0, 1), 127);
        assert_eq!(store(6, f64::NAN, 0, 1), 0);
        // s16, slot 1 at +2; u16 negative clamps to 0.
        assert_eq!(store(7, -1.5, 1, 2), 0xffff);
        assert_eq!(store(5, -1.5, 0, 2), 0);
        // Float: a bit move; the denormal range flushes.
        assert_eq!(store(0, 1.5, 1, 4), 0x3fc0_0000);
        assert_eq!(store(0, 1e-40, 0, 4), 0);
    }

    /// There is one copy of the helpers: the files compiled into this crate are, byte for byte,
    /// files `runtime_sources` writes into every generation, and each helper those files define
    /// is one the interpreter calls.
    #[test]
    fn the_interpreter_compiles_the_generations_helper_files() {
        let generation = crate::platform::runtime_sources("linux-syscalls").unwrap_or_default();
        let crate_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut compiled = String::new();
        for file in C_FILES.split(' ') {
            let text = std::fs::read_to_string(crate_dir.join(file)).unwrap_or_default();
            let name = file.rsplit('/').next().unwrap_or(file);
            let written = generation.iter().find(|f| f.path == format!("guest/{name}"));
            assert_eq!(written.map(|f| &f.contents), Some(&text), "{file}");
            compiled.push_str(&text);
        }
        let mut m = machine();
        for helper in crate::helpers() {
            if compiled.contains(&format!(" rpt_helper_{}(struct cpu *restrict c", helper.name)) {
                let zeros = vec![Val::Int(0); helper.params.len()];
                assert!(
                    matches!(call_helper(&helper.name, &zeros, &mut m), Ok(Some(_))),
                    "@{} is compiled in but the interpreter does not call it",
                    helper.name
                );
            }
        }
    }
}
