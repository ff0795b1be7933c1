//! The SNES ROM guest: the cartridge loader ([`loader_rom`]: LoROM, HiROM and ExHiROM told apart by
//! scoring the internal header candidates), the 65816 decoder ([`decode`]: all 256 opcodes, with
//! operand lengths that depend on the M and X flags), and the SNES platform's C part in `platform/`.
//!
//! This crate owns everything rpt knows about the 65816 and SNES cartridges; the rest of rpt sees
//! it only through [`rpt_api::GuestPlugin`].

#![deny(missing_docs)]

pub mod decode;
pub mod discover;
pub mod loader_rom;
pub mod state;
