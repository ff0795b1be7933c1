//! The x86 demo's functions as the built-in x86 guest lifts them: real IR for the transport
//! benchmark (examples/transport.rs) and the flat-form tests (tests/flat.rs), which include this
//! file by path.

use std::collections::BTreeMap;
use std::path::PathBuf;

use rpt_api::{GuestPlugin, Seeds};
use rpt_ir::{Function, HelperDecl, StateDesc};

/// The demo as lifted.
pub struct Demo {
    /// Its functions.
    pub functions: Vec<Function>,
    /// The guest state they use.
    pub state: StateDesc,
    /// The guest's runtime helpers.
    pub helpers: BTreeMap<String, HelperDecl>,
}

/// The demo's lifted functions, the guest state they use and the guest's runtime helpers.
pub fn lifted() -> Result<Demo, String> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let image_bytes = std::fs::read(root.join("tests/guests/x86/demo.exe")).map_err(|e| e.to_string())?;
    let guest = rpt_guest_x86_pe::X86Pe;
    let options = BTreeMap::new();
    let image = guest
        .load(&image_bytes, "win32-console", &options)
        .map_err(|e| e.to_string())?;
    // The demo's functions reached only through a table, as recipes/demo-x86.ron names them.
    let seeds = Seeds {
        function_hints: [
            0x4014b0, 0x4014c0, 0x4014d0, 0x4014e0, 0x4014f0, 0x401500, 0x401510, 0x401520,
        ]
        .into_iter()
        .map(rpt_ir::GuestAddr)
        .collect(),
        ..Seeds::default()
    };
    let discovery = guest.discover(&image, &seeds);
    let functions = discovery
        .functions
        .iter()
        .map(|addr| guest.lift(&image, *addr, &discovery.functions, &options).function)
        .collect();
    let helpers = guest
        .helpers(&options)
        .into_iter()
        .map(|h| (h.name.clone(), h))
        .collect();
    Ok(Demo {
        functions,
        state: guest.state(&options),
        helpers,
    })
}
