//! The freestanding shim: C files that stand in for the C library LoongArch64 lacks here.
//!
//! - `shim/start.c`: `_start`, which hands argc and argv to the runtime's `main` and exits with its
//!   result, and `rpt_host_env`, which reads the environment from the initial stack;
//! - `shim/syscalls.c`: the other host primitives of `rpt_host.h` (memory, exit, rounding mode, file
//!   descriptors and the sandbox's `openat` family, clocks) as raw Linux system calls and FCSR accesses;
//! - `shim/jump.c`: the non-local jumps resume points use, a setjmp/longjmp pair in assembly;
//! - `shim/memory.c`: `memcpy`, `memmove`, `memset`, `memcmp`, which the compiler may call by itself.
//!
//! They are compiled with the host's flags like every other generated file, from `src/host/`.

use rpt_api::{CEnvironment, SourceFile};

/// The shim's files: (path under a generation's `src/`, text).
const SHIM: &[(&str, &str)] = &[
    ("host/start.c", include_str!("../shim/start.c")),
    ("host/syscalls.c", include_str!("../shim/syscalls.c")),
    ("host/memory.c", include_str!("../shim/memory.c")),
    ("host/jump.c", include_str!("../shim/jump.c")),
];

/// The shim's C files at their paths relative to a generation's `src/`.
pub fn shim_sources() -> Vec<SourceFile> {
    SHIM.iter()
        .map(|(path, text)| SourceFile {
            path: path.to_string(),
            contents: text.to_string(),
        })
        .collect()
}

/// LoongArch64 here is freestanding.
pub fn environment() -> CEnvironment {
    CEnvironment::Freestanding { shim: shim_sources() }
}
