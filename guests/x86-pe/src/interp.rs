//! The x87 helpers as the IR interpreter runs them: the C of `runtime/x87.c`, which `build.rs`
//! compiles into this crate once per value model, called through FFI (ARCHITECTURE.md, "Helper
//! semantics: one copy, in C"). Tests give [`call_helper`] or [`call_helper_in`] to their
//! interpreter environments.
//!
//! A call copies the slots the helpers touch from the interpreter's state into a [`Cpu`], laid
//! out as the `struct cpu` of `interp/cpu.h`, runs the helper on it and copies the slots back.
//! Before the first call the layout is compared with the one the C side reports
//! (`interp/layout.c`). On an x86-64 build host the f80 model's arithmetic is the host's own x87,
//! as in generated code for x86-64; elsewhere it is x87.c's software unit.

// The one place this crate departs from the workspace's `unsafe_code = "deny"`: calling the C
// helpers and reading the layout the C side reports.
#![allow(unsafe_code)]

use std::ffi::{CStr, c_char};
use std::mem::offset_of;
use std::sync::OnceLock;

use rpt_ir::interp::{InterpError, MachineState, StateValues, Val};
use rpt_ir::{SlotId, StateDesc};

use crate::state::{AF, CF, FPU_CW, FPU_RESULT_E, FPU_SW, FPU_TAGS, FPU_TOP, OF, PF, SF, ST_E, ST_M, ZF};
use crate::x87::Model;

/// The C file `build.rs` compiled into the crate (relative to it), once per value model.
pub const C_FILES: &str = env!("RPT_INTERPRETER_C");

/// A field of [`Cpu`] and the interpreter slot it holds.
trait SlotField {
    fn load(&mut self, desc: &StateDesc, state: &StateValues, slot: SlotId);
    fn store(&self, desc: &StateDesc, state: &mut StateValues, slot: SlotId);
}

/// An unsigned C integer type of `struct cpu`: a slot's value, zero-extended in the interpreter.
trait CInt: Copy {
    fn from_u64(v: u64) -> Self;
    fn to_u64(self) -> u64;
}

macro_rules! c_int {
    ($($ty:ty),*) => {$(
        impl CInt for $ty {
            fn from_u64(v: u64) -> $ty {
                // Truncation is the point: the C field is as wide as the slot's type.
                v as $ty
            }
            fn to_u64(self) -> u64 {
                u64::from(self)
            }
        }
    )*};
}

c_int!(u8, u16, u32, u64);

impl<T: CInt> SlotField for T {
    fn load(&mut self, desc: &StateDesc, state: &StateValues, slot: SlotId) {
        *self = T::from_u64(state.get(desc, slot).int());
    }
    fn store(&self, desc: &StateDesc, state: &mut StateValues, slot: SlotId) {
        state.set(desc, slot, Val::Int(self.to_u64()));
    }
}

impl<T: CInt, const N: usize> SlotField for [T; N] {
    fn load(&mut self, _: &StateDesc, state: &StateValues, slot: SlotId) {
        for (i, v) in self.iter_mut().enumerate() {
            *v = T::from_u64(state.get_indexed(slot, i as u64).int());
        }
    }
    fn store(&self, _: &StateDesc, state: &mut StateValues, slot: SlotId) {
        for (i, v) in self.iter().enumerate() {
            state.set_indexed(slot, i as u64, Val::Int(v.to_u64()));
        }
    }
}

/// Declares [`Cpu`], field by field in `interp/cpu.h`'s order, with the slot each one holds.
macro_rules! interpreter_cpu {
    ($($field:ident: $ty:ty = $slot:expr,)*) => {
        /// The slots the x87 helpers touch, laid out as `interp/cpu.h`'s `struct cpu`.
        #[repr(C)]
        #[derive(Default)]
        struct Cpu {
            $($field: $ty,)*
        }

        impl Cpu {
            fn from_state(desc: &StateDesc, state: &StateValues) -> Cpu {
                let mut cpu = Cpu::default();
                $(cpu.$field.load(desc, state, $slot);)*
                cpu
            }

            fn to_state(&self, desc: &StateDesc, state: &mut StateValues) {
                $(self.$field.store(desc, state, $slot);)*
            }

            /// Each field's name, offset and size, to compare with the C side's.
            fn layout() -> Vec<(String, usize, usize)> {
                vec![$((stringify!($field).to_string(), offset_of!(Cpu, $field), size_of::<$ty>()),)*]
            }
        }
    };
}

interpreter_cpu! {
    cf: u8 = CF,
    pf: u8 = PF,
    af: u8 = AF,
    zf: u8 = ZF,
    sf: u8 = SF,
    of: u8 = OF,
    fpu_cw: u16 = FPU_CW,
    fpu_sw: u16 = FPU_SW,
    fpu_top: u8 = FPU_TOP,
    fpu_tags: u8 = FPU_TAGS,
    st_m: [u64; 8] = ST_M,
    st_e: [u16; 8] = ST_E,
    fpu_result_e: u16 = FPU_RESULT_E,
}

/// A helper's argument as the C parameter type (the interpreter holds every integer in a `u64`).
trait FromArg {
    fn from_arg(v: u64) -> Self;
}

impl FromArg for u32 {
    fn from_arg(v: u64) -> u32 {
        // An i32 argument: the interpreter keeps it zero-extended.
        v as u32
    }
}

impl FromArg for u64 {
    fn from_arg(v: u64) -> u64 {
        v
    }
}

/// A helper's C result as the interpreter's: none for `void`, else zero-extended.
trait IntoResult {
    fn into_result(self) -> Option<u64>;
}

impl IntoResult for () {
    fn into_result(self) -> Option<u64> {
        None
    }
}

impl<T: CInt> IntoResult for T {
    fn into_result(self) -> Option<u64> {
        Some(self.to_u64())
    }
}

/// Declares the helpers of both models' copies of x87.c and the dispatch to them by name.
macro_rules! x87_helpers {
    ($($name:ident($($arg:ident: $ty:ty),*) $(-> $ret:ty)?;)*) => {
        /// x87.c as generations compile it by default.
        mod model_f80 {
            use super::Cpu;
            unsafe extern "C" {
                $(
                    #[link_name = concat!("rpt_helper_", stringify!($name))]
                    pub(super) fn $name(c: *mut Cpu $(, $arg: $ty)*) $(-> $ret)?;
                )*
            }
        }

        /// x87.c under `RPT_X87_F64`, its names prefixed by `build.rs`.
        mod model_f64 {
            use super::Cpu;
            unsafe extern "C" {
                $(
                    #[link_name = concat!("rpt_f64_helper_", stringify!($name))]
                    pub(super) fn $name(c: *mut Cpu $(, $arg: $ty)*) $(-> $ret)?;
                )*
            }
        }

        /// Each helper's name, parameter types and result type, as declared here.
        #[cfg(test)]
        const SIGNATURES: &[(&str, &[&str], &str)] =
            &[$((stringify!($name), &[$(stringify!($ty)),*], stringify!($($ret)?)),)*];

        /// Runs helper `name` of `model` on `cpu`: `None` if there is no such helper, else its
        /// result, or an error if `args` has the wrong length.
        fn call_c(model: Model, name: &str, cpu: &mut Cpu, args: &[u64]) -> Option<Result<Option<u64>, InterpError>> {
            match name {
                $(stringify!($name) => {
                    let &[$($arg),*] = args else {
                        return Some(Err(InterpError::Unsupported(format!("@{name} with {} arguments", args.len()))));
                    };
                    $(let $arg = <$ty>::from_arg($arg);)*
                    let result = match model {
                        // SAFETY: `cpu` is a live, exclusively borrowed struct laid out as the C
                        // side's `struct cpu` (`layout_agrees` checked it before any call), and the
                        // helper touches only that struct and its arguments.
                        Model::F80 => unsafe { model_f80::$name(cpu $(, $arg)*) },
                        // SAFETY: as for the f80 model; the f64 copy sees the same struct.
                        Model::F64 => unsafe { model_f64::$name(cpu $(, $arg)*) },
                    };
                    Some(Ok(result.into_result()))
                })*
                _ => None,
            }
        }
    };
}

x87_helpers! {
    x87_load(kind: u32, lo: u64, hi: u32);
    x87_store(kind: u32, flags: u32) -> u64;
    x87_arith(op: u32, dst: u32, src: u32, pop: u32);
    x87_arith_mem(op: u32, kind: u32, bits: u64);
    x87_com_mem(kind: u32, bits: u64, pop: u32);
    x87_op(op: u32);
    x87_reg(op: u32, i: u32) -> u32;
    x87_fcmov(i: u32, cond: u32);
    x87_vload(kind: u32, lo: u64, hi: u32) -> u64;
    x87_vstore(kind: u32, flags: u32, am: u64, ae: u32) -> u64;
    x87_varith(op: u32, am: u64, ae: u32, bm: u64, be: u32) -> u64;
    x87_varith_mem(op: u32, kind: u32, am: u64, ae: u32, bits: u64) -> u64;
    x87_vcom(which: u32, am: u64, ae: u32, bm: u64, be: u32) -> u32;
    x87_vcom_mem(kind: u32, am: u64, ae: u32, bits: u64) -> u32;
    x87_vunary(op: u32, am: u64, ae: u32) -> u64;
    x87_vconst(op: u32) -> u64;
}

/// One entry of `interp/layout.c`'s table.
#[repr(C)]
struct CField {
    name: *const c_char,
    offset: usize,
    size: usize,
}

unsafe extern "C" {
    static rpt_x86_interpreter_fields: CField;
    static rpt_x86_interpreter_field_count: usize;
    static rpt_x86_interpreter_cpu_size: usize;
}

/// The C side's `struct cpu`: each field's name, offset and size, and the struct's size.
fn c_layout() -> (Vec<(String, usize, usize)>, usize) {
    // SAFETY: layout.c defines the table as an array of this many entries, each naming a field
    // with a NUL-terminated string literal, and the size as a constant; nothing writes them.
    unsafe {
        let fields = std::slice::from_raw_parts(&raw const rpt_x86_interpreter_fields, rpt_x86_interpreter_field_count);
        let fields = fields
            .iter()
            .map(|f| (CStr::from_ptr(f.name).to_string_lossy().into_owned(), f.offset, f.size))
            .collect();
        (fields, rpt_x86_interpreter_cpu_size)
    }
}

/// Whether [`Cpu`] and the C side's `struct cpu` are laid out alike; the difference if not.
fn layout_agrees() -> Result<(), String> {
    let (c_fields, c_size) = c_layout();
    let rust = (Cpu::layout(), size_of::<Cpu>());
    if (c_fields.clone(), c_size) == rust {
        Ok(())
    } else {
        Err(format!(
            "interp/cpu.h's struct cpu (fields {c_fields:?}, {c_size} bytes) and src/interp.rs's Cpu \
             (fields {:?}, {} bytes) differ",
            rust.0, rust.1
        ))
    }
}

/// Runs an x87 helper of the `f80` model for the IR interpreter: `Ok(None)` if `name` is not one.
pub fn call_helper(name: &str, args: &[Val], machine: &mut MachineState) -> Result<Option<Option<Val>>, InterpError> {
    call_helper_in(Model::F80, name, args, machine)
}

/// Runs an x87 helper of `model` for the IR interpreter: `Ok(None)` if `name` is not one of them.
pub fn call_helper_in(
    model: Model,
    name: &str,
    args: &[Val],
    machine: &mut MachineState,
) -> Result<Option<Option<Val>>, InterpError> {
    static LAYOUT: OnceLock<Result<(), String>> = OnceLock::new();
    if let Err(e) = LAYOUT.get_or_init(layout_agrees) {
        return Err(InterpError::Unsupported(format!("the x87 helpers: {e}")));
    }
    let desc = crate::state::state_desc();
    let mut cpu = Cpu::from_state(&desc, &machine.state);
    let args: Vec<u64> = args.iter().map(|v| v.int()).collect();
    let Some(result) = call_c(model, name, &mut cpu, &args) else {
        return Ok(None);
    };
    let result = result?;
    cpu.to_state(&desc, &mut machine.state);
    Ok(Some(result.map(Val::Int)))
}

#[cfg(test)]
mod tests {
    use rpt_ir::Type;

    use super::*;

    #[test]
    fn the_rust_and_c_structs_agree() {
        assert_eq!(layout_agrees(), Ok(()));
    }

    /// The interpreter calls every helper the lifter declares, with the lifter's types.
    #[test]
    fn every_helper_is_declared_as_the_lifter_declares_it() {
        let c_type = |ty: Type| match ty {
            Type::I32 => "u32",
            Type::I64 => "u64",
            other => panic!("an x87 helper with a {other} parameter"),
        };
        let declared: Vec<(String, Vec<&str>, &str)> = crate::x87::helpers()
            .into_iter()
            .map(|h| {
                (
                    h.name.clone(),
                    h.params.iter().map(|t| c_type(*t)).collect(),
                    h.result.map_or("", c_type),
                )
            })
            .collect();
        let here: Vec<(String, Vec<&str>, &str)> = SIGNATURES
            .iter()
            .map(|(name, params, result)| (name.to_string(), params.to_vec(), *result))
            .collect();
        assert_eq!(here, declared);
    }

    /// `interp/cpu.h` declares the memory model and each field of `struct cpu` as the generated
    /// cpu.h does, line for line.
    #[test]
    fn interpreter_cpu_h_declares_as_generations_do() {
        use rpt_api::GuestPlugin;
        let generated = rpt_emit_c::cpu_header(
            &crate::state::state_desc(),
            crate::X86Pe.memory_model("win32-console", &Default::default()),
            &Default::default(),
            false,
        );
        let generated: Vec<&str> = generated.lines().collect();
        let header = include_str!("../interp/cpu.h");
        let fields: Vec<&str> = header.lines().filter(|l| l.starts_with('\t')).collect();
        assert_eq!(fields.len(), Cpu::layout().len(), "one line per field");
        for line in header
            .lines()
            .filter(|l| l.starts_with("#define RPT_GUEST_"))
            .chain(fields)
        {
            assert!(
                generated.contains(&line),
                "{line:?} is not a line of the generated cpu.h"
            );
        }
    }

    /// There is one copy of the helpers: the C compiled into this crate is the file
    /// `runtime_sources` writes into generations (for the f64 model, after its `#define`), and so
    /// is every header it includes.
    #[test]
    fn the_interpreter_compiles_the_generations_helper_files() {
        let crate_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        for model in [Model::F80, Model::F64] {
            let generation = crate::platform::runtime_sources("win32-console", model).unwrap_or_default();
            let written = |name: &str| generation.iter().find(|f| f.path == format!("guest/{name}"));
            let mut pending: Vec<String> = C_FILES.split(' ').map(str::to_string).collect();
            while let Some(file) = pending.pop() {
                let text = std::fs::read_to_string(crate_dir.join(&file)).unwrap_or_default();
                let name = file.rsplit('/').next().unwrap_or(&file);
                let expected = match (name, model) {
                    ("x87.c", Model::F64) => format!("#define RPT_X87_F64 1\n{text}"),
                    _ => text.clone(),
                };
                assert_eq!(written(name).map(|f| &f.contents), Some(&expected), "{file}");
                for line in text.lines() {
                    if let Some(included) = line.strip_prefix("#include \"").and_then(|l| l.strip_suffix('"'))
                        && included != "cpu.h"
                    {
                        pending.push(format!("runtime/{included}"));
                    }
                }
            }
        }
    }
}
