//! The 65816 instruction set as function discovery sees it: how each instruction passes control
//! on, and how it changes the widths the next one decodes in.
//!
//! The walk and the phases are `rpt_api::discover`'s, with [`Widths`] as the context: REP and SEP
//! change M and X (in emulation mode they cannot), XCE swaps the carry into E when the walk knows
//! the carry (after CLC, SEC, REP #$01, SEP #$01), and PLP restores the widths of the PHP whose
//! byte it pulls when the walk saw that PHP on the same path. Where the walk cannot know the
//! widths (XCE after an unknown carry, PLP of a byte pushed elsewhere) the instruction is a
//! [`Failure::UnknownWidths`]: lifted code leaves for the run-time tier there, which reads the
//! widths from the state and goes on in the compiled variant for them when one exists.
//!
//! Control flow: JSR and JSL are calls (the callee entered in the caller's widths), JMP and JML
//! jumps (a tail call into another function's entry), BRK and COP calls of their vector's handler
//! (returning past the signature byte, as RTI does), RTS, RTL and RTI returns, the `(abs)`,
//! `(abs,X)` and `[abs]` forms indirect, STP a trap. MVN and MVP move one byte and branch back to
//! themselves until the count runs out, which is what the CPU does (an interrupt can arrive
//! between bytes).

use std::collections::BTreeSet;

use rpt_api::GuestImage;
use rpt_api::discover::{self, CallFlow, CodePointer, Flow};
use rpt_ir::GuestAddr;

use crate::decode::{self, DecodeError, Insn, Mode, Widths};

/// Why an instruction could not be taken into a function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    /// The address is not in ROM.
    NotCode,
    /// The operand runs past the end of the bank's ROM.
    Truncated,
    /// The widths after this instruction depend on state the walk does not know.
    UnknownWidths(&'static str),
}

/// One byte or P on the stack, as far as the walk tracks pushes and pulls along a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pushed {
    /// P, pushed by PHP in these widths with this carry.
    P(Widths, Option<bool>),
    /// Any other byte.
    Byte,
}

/// What the walk knows along a path: the carry (for XCE) and what was pushed since the path's
/// function started or the stack pointer was last set.
#[derive(Clone, Debug, Default)]
pub struct Run {
    carry: Option<bool>,
    stack: Vec<Pushed>,
}

impl Run {
    fn push_bytes(&mut self, n: u32) {
        self.stack.extend((0..n).map(|_| Pushed::Byte));
    }

    /// Pulls `n` bytes; the stack beneath is unknown once the walk pulls more than it saw pushed.
    fn pull_bytes(&mut self, n: u32) {
        for _ in 0..n {
            if self.stack.pop().is_none() {
                return;
            }
        }
    }
}

/// The 65816 as discovery sees an SNES cartridge.
#[derive(Clone, Copy, Debug, Default)]
pub struct W65816;

/// The walk of a 65816 function (the lifter walks with it too).
pub type Walker<'a> = discover::Walker<'a, W65816>;

/// The control-flow graph of one 65816 function.
pub type FunctionCfg = discover::FunctionCfg<W65816>;

/// The guest address of the 24-bit `addr` (bank and offset).
fn at(addr: u32) -> GuestAddr {
    GuestAddr(u64::from(addr))
}

/// Reads the handler address of the vector at `$00:vector`.
pub(crate) fn vector(image: &GuestImage, vector: u32) -> Option<u32> {
    let bytes = image.bytes_at(at(vector), 2)?;
    let target = u32::from(u16::from_le_bytes([*bytes.first()?, *bytes.get(1)?]));
    Some(target)
}

/// Where BRK's (`0x00`) or COP's handler address is, in emulation or native mode.
pub(crate) fn vector_of(opcode: u8, emulation: bool) -> u32 {
    match (opcode, emulation) {
        (0x00, false) => 0xffe6,
        (0x00, true) => 0xfffe,
        (_, false) => 0xffe4,
        (_, true) => 0xfff4,
    }
}

/// Bytes PHA/PLA (by M) or PHX/PHY/PLX/PLY (by X) move, from the table's width.
fn register_bytes(insn: &Insn) -> u32 {
    if insn.is_wide() { 2 } else { 1 }
}

impl discover::Isa for W65816 {
    type Insn = Insn;
    type Context = Widths;
    type Failure = Failure;
    type JumpTable = Vec<GuestAddr>;
    type Run = Run;

    fn decode(&self, image: &GuestImage, addr: GuestAddr, widths: Widths) -> Result<(Insn, GuestAddr), Failure> {
        if addr.0 > 0xff_ffff || !image.is_code(addr) {
            return Err(Failure::NotCode);
        }
        let bytes = image.bytes_at(addr, 4).ok_or(Failure::NotCode)?;
        let insn = decode::decode(bytes, addr.0 as u32, widths).map_err(|e| match e {
            DecodeError::Truncated { .. } => Failure::Truncated,
        })?;
        Ok((insn, at(insn.next())))
    }

    fn flow(
        &self,
        image: &GuestImage,
        insn: &Insn,
        widths: &mut Widths,
        run: &mut Run,
        _code_constants: &mut BTreeSet<GuestAddr>,
    ) -> Result<Flow, Failure> {
        let bank = insn.addr & 0xff_0000;
        let op = insn.operand;
        let flow = match insn.info.opcode {
            // REP / SEP: M and X in native mode; the carry either way.
            0xc2 | 0xe2 => {
                let set = insn.info.opcode == 0xe2;
                let bits = op as u8;
                if !widths.emulation {
                    if bits & 0x20 != 0 {
                        widths.m8 = set;
                    }
                    if bits & 0x10 != 0 {
                        widths.x8 = set;
                    }
                }
                if bits & 0x01 != 0 {
                    run.carry = Some(set);
                }
                Flow::Next
            }
            0x18 => {
                run.carry = Some(false);
                Flow::Next
            }
            0x38 => {
                run.carry = Some(true);
                Flow::Next
            }
            // XCE: E and C swap. Entering emulation mode forces 8-bit registers; leaving it,
            // M and X read as 1 until REP changes them.
            0xfb => {
                let Some(carry) = run.carry else {
                    return Err(Failure::UnknownWidths("XCE with a carry the walk does not know"));
                };
                run.carry = Some(widths.emulation);
                // Native mode staying native keeps its widths; entering or leaving emulation mode
                // leaves M and X 1.
                if carry || widths.emulation {
                    *widths = Widths {
                        m8: true,
                        x8: true,
                        emulation: carry,
                    };
                }
                Flow::Next
            }
            // PHP / PLP.
            0x08 => {
                run.stack.push(Pushed::P(*widths, run.carry));
                Flow::Next
            }
            0x28 => match run.stack.pop() {
                Some(Pushed::P(pushed, carry)) => {
                    // In emulation mode P's M and X bits read as 1 whatever was pushed.
                    *widths = if widths.emulation {
                        Widths::RESET
                    } else {
                        Widths {
                            emulation: false,
                            ..pushed
                        }
                    };
                    run.carry = carry;
                    Flow::Next
                }
                _ => return Err(Failure::UnknownWidths("PLP of a P the walk did not see pushed")),
            },
            // Pushes and pulls of registers.
            0x48 | 0x5a | 0xda => {
                run.push_bytes(register_bytes(insn));
                Flow::Next
            }
            0x68 | 0x7a | 0xfa => {
                run.pull_bytes(register_bytes(insn));
                Flow::Next
            }
            0x8b | 0x4b => {
                run.push_bytes(1);
                Flow::Next
            }
            0x0b | 0xf4 | 0xd4 | 0x62 => {
                run.push_bytes(2);
                Flow::Next
            }
            0xab => {
                run.pull_bytes(1);
                Flow::Next
            }
            0x2b => {
                run.pull_bytes(2);
                Flow::Next
            }
            // TCS / TXS: a new stack; nothing pushed before is where the walk thinks.
            0x1b | 0x9a => {
                run.stack.clear();
                Flow::Next
            }
            // Branches.
            0x80 | 0x82 => Flow::Jump(at(insn.relative_target())),
            _ if insn.info.mode == Mode::Relative8 => Flow::Branch(at(insn.relative_target())),
            // Jumps.
            0x4c => Flow::Jump(at(bank | op)),
            0x5c => Flow::Jump(at(op)),
            0x6c | 0x7c | 0xdc => Flow::JumpIndirect { conditional: false },
            // Calls.
            0x20 => Flow::Call {
                target: at(bank | op),
                conditional: false,
            },
            0x22 => Flow::Call {
                target: at(op),
                conditional: false,
            },
            0xfc => Flow::CallIndirect { external: None },
            // BRK / COP: a call of the vector's handler, which RTI returns from.
            0x00 | 0x02 => {
                let handler = vector(image, vector_of(insn.info.opcode, widths.emulation));
                match handler {
                    Some(target) if target >= 0x8000 => Flow::Call {
                        target: at(target),
                        conditional: false,
                    },
                    _ => Flow::CallIndirect { external: None },
                }
            }
            // RTS / RTL / RTI.
            0x60 | 0x6b | 0x40 => Flow::Return { conditional: false },
            // STP stops the clock until reset.
            0xdb => Flow::Trap { conditional: false },
            // MVN / MVP: one byte per execution, again until the count runs out.
            0x44 | 0x54 => Flow::Branch(at(insn.addr)),
            _ => {
                // Anything else that writes the carry makes it unknown to the walk.
                if writes_carry(insn.info.mnemonic) {
                    run.carry = None;
                }
                Flow::Next
            }
        };
        Ok(flow)
    }

    /// XCE and PLP whose widths the walk lost still lift: they go on through the function table
    /// in the widths the state holds (the run-time tier needs them as much as compiled code).
    fn lifts_after_failure(&self, failure: &Failure) -> bool {
        matches!(failure, Failure::UnknownWidths(_))
    }

    fn insn_context(&self, insn: &Insn) -> Widths {
        insn.widths
    }

    fn jump_table(&self, _image: &GuestImage, _cfg: &FunctionCfg, _at: GuestAddr) -> Option<Vec<GuestAddr>> {
        None
    }

    fn external(&self, _addr: GuestAddr) -> Option<CallFlow> {
        None
    }

    fn pointer_candidates(&self, _image: &GuestImage) -> Vec<CodePointer> {
        // A cartridge's data holds 16-bit words of every kind; taking them for code pointers would
        // make functions of noise. Code reached only through tables runs in the run-time tier
        // and is named in its coverage file for the next build.
        Vec::new()
    }

    fn describe(&self, _image: &GuestImage, failure: &Failure) -> String {
        match failure {
            Failure::NotCode => "not in the cartridge's ROM".to_string(),
            Failure::Truncated => "the instruction runs past the end of its bank's ROM".to_string(),
            Failure::UnknownWidths(why) => format!("the register widths after it are not known statically ({why})"),
        }
    }
}

/// Whether an instruction's result sets the carry (compares, shifts, adds, PLP, XCE, REP/SEP).
fn writes_carry(mnemonic: &str) -> bool {
    matches!(
        mnemonic,
        "ADC" | "SBC" | "CMP" | "CPX" | "CPY" | "ASL" | "LSR" | "ROL" | "ROR" | "PLP" | "RTI"
    )
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use rpt_api::discover::Entry;

    use super::*;
    use crate::loader_rom::{Mapping, checksum};

    /// A LoROM whose reset handler is `code` at `$00:8000`.
    fn image_with(code: &[u8]) -> GuestImage {
        let mut rom = vec![0u8; 0x8000];
        rom[..code.len()].copy_from_slice(code);
        let header = Mapping::LoRom.header_offset();
        rom[header + 0x15] = 0x20;
        rom[header + 0x3c..header + 0x3e].copy_from_slice(&0x8000u16.to_le_bytes());
        // BRK's native vector points at an RTI at $00:9000.
        rom[header + 0x26..header + 0x28].copy_from_slice(&0x9000u16.to_le_bytes());
        rom[0x1000] = 0x40;
        let sum = checksum(&rom);
        rom[header + 0x1e..header + 0x20].copy_from_slice(&sum.to_le_bytes());
        let cart = crate::loader_rom::parse(&rom, Some(Mapping::LoRom)).expect("a LoROM");
        cart.image()
    }

    fn walk(image: &GuestImage, widths: Widths) -> FunctionCfg {
        let walker = Walker::new(&W65816, image, Cow::Owned(BTreeSet::new()));
        walker.walk_entry(Entry {
            addr: GuestAddr(0x8000),
            context: widths,
        })
    }

    const NATIVE8: Widths = Widths {
        m8: true,
        x8: true,
        emulation: false,
    };

    #[test]
    fn clc_xce_rep_switch_to_native_16_bit_decoding() {
        // CLC; XCE; REP #$30; LDA #$1234; LDX #$5678; SEP #$20; LDA #$12; RTS
        let code = [
            0x18, 0xfb, 0xc2, 0x30, 0xa9, 0x34, 0x12, 0xa2, 0x78, 0x56, 0xe2, 0x20, 0xa9, 0x12, 0x60,
        ];
        let cfg = walk(&image_with(&code), Widths::RESET);
        assert!(cfg.failures.is_empty(), "{:?}", cfg.failures);
        let lens: Vec<u32> = cfg.insns.values().map(|i| i.len).collect();
        assert_eq!(lens, [1, 1, 2, 3, 3, 2, 2, 1]);
        assert!(cfg.may_return);
    }

    #[test]
    fn plp_restores_the_widths_of_its_php_and_an_unknown_one_fails() {
        // PHP; REP #$20; LDA #$1234; PLP; LDA #$12; RTS (native, 8-bit at entry)
        let code = [0x08, 0xc2, 0x20, 0xa9, 0x34, 0x12, 0x28, 0xa9, 0x12, 0x60];
        let cfg = walk(&image_with(&code), NATIVE8);
        assert!(cfg.failures.is_empty(), "{:?}", cfg.failures);
        assert_eq!(cfg.insns[&GuestAddr(0x8007)].len, 2);
        // PLP with nothing pushed on this path.
        let cfg = walk(&image_with(&[0x28, 0x60]), NATIVE8);
        assert!(matches!(
            cfg.failures.get(&GuestAddr(0x8000)),
            Some(Failure::UnknownWidths(_))
        ));
        // XCE after an ADC: the carry is the sum's.
        let cfg = walk(&image_with(&[0x69, 0x01, 0xfb, 0x60]), NATIVE8);
        assert!(matches!(
            cfg.failures.get(&GuestAddr(0x8002)),
            Some(Failure::UnknownWidths(_))
        ));
    }

    #[test]
    fn calls_carry_the_widths_into_their_callee_and_brk_calls_its_handler() {
        // REP #$10; JSR $8010; BRK #$00; RTS ; $8010: RTS
        let mut code = vec![0xc2, 0x10, 0x20, 0x10, 0x80, 0x00, 0x00, 0x60];
        code.resize(0x10, 0xea);
        code.push(0x60);
        let cfg = walk(&image_with(&code), NATIVE8);
        let x16 = Widths { x8: false, ..NATIVE8 };
        assert!(cfg.calls_entry(GuestAddr(0x8010), x16), "{:?}", cfg.calls);
        assert!(cfg.calls_entry(GuestAddr(0x9000), x16), "{:?}", cfg.calls);
        assert!(cfg.insns.contains_key(&GuestAddr(0x8007)));
    }

    #[test]
    fn a_block_reached_in_other_widths_is_another_variant() {
        // $8002: REP #$20 ; $8004: LDA #$1234 ; RTS
        let code = [0x80, 0x02, 0xc2, 0x20, 0xa9, 0x34, 0x12, 0x60];
        let image = image_with(&code);
        let walker = Walker::new(&W65816, &image, Cow::Owned(BTreeSet::new()));
        let cfg = walker.walk_entry(Entry {
            addr: GuestAddr(0x8002),
            context: NATIVE8,
        });
        let m16 = Widths { m8: false, ..NATIVE8 };
        assert_eq!(cfg.insns[&GuestAddr(0x8004)].len, 3);
        // A branch back into walked code in other widths is a tail call of that variant.
        // $8000: LDA #$12 ; REP #$20 ; BRA $8000
        let cfg = walk(&image_with(&[0xa9, 0x12, 0xc2, 0x20, 0x80, 0xfa]), NATIVE8);
        assert!(cfg.calls_entry(GuestAddr(0x8000), m16), "{:?}", cfg.calls);
    }

    #[test]
    fn block_moves_branch_to_themselves() {
        // MVN $7E,$7F; RTS
        let cfg = walk(&image_with(&[0x54, 0x7e, 0x7f, 0x60]), NATIVE8);
        assert!(cfg.block_starts.contains_key(&GuestAddr(0x8000)));
        assert!(cfg.block_starts.contains_key(&GuestAddr(0x8003)));
    }
}
