//! The `win32-console` platform: the KERNEL32 calls a console program makes, implemented in C.

use super::{ImportImpl, Platform};

const fn kernel32(name: &'static str, symbol: &'static str) -> ImportImpl {
    ImportImpl {
        module: "KERNEL32.dll",
        name,
        symbol,
    }
}

/// The import table: every function `platform/win32_console.c` defines.
const IMPORTS: &[ImportImpl] = &[
    kernel32("GetStdHandle", "rpt_win32_KERNEL32_GetStdHandle"),
    kernel32("WriteFile", "rpt_win32_KERNEL32_WriteFile"),
    kernel32("ExitProcess", "rpt_win32_KERNEL32_ExitProcess"),
    kernel32("GetCommandLineA", "rpt_win32_KERNEL32_GetCommandLineA"),
    kernel32("VirtualAlloc", "rpt_win32_KERNEL32_VirtualAlloc"),
    kernel32("VirtualFree", "rpt_win32_KERNEL32_VirtualFree"),
];

/// The platform.
pub(super) const PLATFORM: Platform = Platform {
    name: "win32-console",
    imports: IMPORTS,
    c_path: "guest/win32_console.c",
    c_source: include_str!("../../platform/win32_console.c"),
};
