//! SNES ROMs built by tests: a small 65816 assembler that emits machine code from Rust, a LoROM
//! image with its internal header, vectors and checksum, and running such a ROM recompiled by rpt
//! to dump one frame's memories (the same `RPT_SNES_*` settings the frame-by-frame oracle test uses).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use rpt_guest_snes_rom::decode::{self, Widths};
use rpt_guest_snes_rom::loader_rom;
use rpt_testkit::bsnes::FrameState;

use crate::{rpt_binary, sha256_file, stderr_of};

/// Native mode with 16-bit registers: what `CLC; XCE; REP #$30` leaves.
pub const NATIVE16: Widths = Widths {
    m8: false,
    x8: false,
    emulation: false,
};

/// 65816 code at a known 24-bit address, emitted instruction by instruction.
///
/// Operand lengths come from the decoder's table under [`Asm::widths`], which REP and SEP update
/// (in native mode) as the CPU would; anything else that changes the widths (XCE, PLP) is the
/// caller's to say with [`Asm::set_widths`]. Every instruction's address and widths are kept, so
/// the code can be disassembled again by the decoder rpt uses.
#[derive(Clone, Debug)]
pub struct Asm {
    base: u32,
    code: Vec<u8>,
    widths: Widths,
    starts: Vec<(u32, Widths)>,
}

impl Asm {
    /// Empty code that will sit at the 24-bit `base`, decoded from `widths` on.
    pub fn new(base: u32, widths: Widths) -> Asm {
        Asm {
            base,
            code: Vec::new(),
            widths,
            starts: Vec::new(),
        }
    }

    /// The address of the next byte.
    pub fn pc(&self) -> u32 {
        self.base + self.code.len() as u32
    }

    /// The widths the next instruction decodes in.
    pub fn widths(&self) -> Widths {
        self.widths
    }

    /// Says the widths changed in a way the assembler does not follow (XCE, PLP).
    pub fn set_widths(&mut self, widths: Widths) {
        self.widths = widths;
    }

    /// The bytes so far.
    pub fn bytes(&self) -> &[u8] {
        &self.code
    }

    /// How many instructions so far.
    pub fn count(&self) -> usize {
        self.starts.len()
    }

    /// Emits `opcode` with its operand's bytes little-endian, as long as the table says under the
    /// current widths; REP and SEP change the widths.
    pub fn op(&mut self, opcode: u8, operand: u32) {
        let info = decode::info(opcode);
        let len = info.mode.operand_len(self.widths);
        assert!(
            u64::from(operand) < 1u64 << (8 * len),
            "{} operand {operand:#x} does not fit in {len} bytes",
            info.mnemonic
        );
        self.starts.push((self.pc(), self.widths));
        self.code.push(opcode);
        self.code.extend_from_slice(&operand.to_le_bytes()[..len as usize]);
        if matches!(opcode, 0xc2 | 0xe2) && !self.widths.emulation {
            let set = opcode == 0xe2;
            if operand & 0x20 != 0 {
                self.widths.m8 = set;
            }
            if operand & 0x10 != 0 {
                self.widths.x8 = set;
            }
        }
    }

    /// Appends data bytes (not instructions).
    pub fn data(&mut self, bytes: &[u8]) {
        self.code.extend_from_slice(bytes);
    }

    /// The disassembly of the instructions from the `from`-th on, one `$BBAAAA  TEXT` line each.
    pub fn listing(&self, from: usize) -> Vec<String> {
        self.starts[from..]
            .iter()
            .map(|&(addr, widths)| {
                let at = (addr - self.base) as usize;
                let end = (at + 4).min(self.code.len());
                match decode::decode(&self.code[at..end], addr, widths) {
                    Ok(insn) => format!("${addr:06X}  {insn}    ; {widths}"),
                    Err(e) => format!("${addr:06X}  ?? {e}"),
                }
            })
            .collect()
    }

    // ---- named forms, for hand-written code

    /// `REP #bits`.
    pub fn rep(&mut self, bits: u8) {
        self.op(0xc2, u32::from(bits));
    }
    /// `SEP #bits`.
    pub fn sep(&mut self, bits: u8) {
        self.op(0xe2, u32::from(bits));
    }
    /// `CLC; XCE`: native mode, 8-bit registers.
    pub fn to_native(&mut self) {
        self.op(0x18, 0);
        self.op(0xfb, 0);
        self.widths = Widths {
            m8: true,
            x8: true,
            emulation: false,
        };
    }
    /// `LDA #imm` (1 or 2 bytes by M).
    pub fn lda_imm(&mut self, v: u16) {
        self.op(0xa9, self.imm_m(v));
    }
    /// `LDX #imm` (by X).
    pub fn ldx_imm(&mut self, v: u16) {
        self.op(0xa2, self.imm_x(v));
    }
    /// `LDY #imm` (by X).
    pub fn ldy_imm(&mut self, v: u16) {
        self.op(0xa0, self.imm_x(v));
    }
    /// `LDA long`.
    pub fn lda_long(&mut self, addr: u32) {
        self.op(0xaf, addr);
    }
    /// `STA long`.
    pub fn sta_long(&mut self, addr: u32) {
        self.op(0x8f, addr);
    }
    /// `PEA #imm16`.
    pub fn pea(&mut self, v: u16) {
        self.op(0xf4, u32::from(v));
    }
    /// `MVN dst,src`: encoded destination bank first.
    pub fn mvn(&mut self, dst_bank: u8, src_bank: u8) {
        self.op(0x54, u32::from(dst_bank) | u32::from(src_bank) << 8);
    }
    /// `JSL long`.
    pub fn jsl(&mut self, addr: u32) {
        self.op(0x22, addr);
    }
    /// `BRA` to `target` in the same bank.
    pub fn bra(&mut self, target: u32) {
        let offset = target as i64 - (i64::from(self.pc()) + 2);
        assert!((-128..128).contains(&offset), "BRA out of range");
        self.op(0x80, u32::from(offset as i8 as u8));
    }
    /// An implied instruction by opcode (`SEI` is `0x78`, ...).
    pub fn implied(&mut self, opcode: u8) {
        assert_eq!(decode::info(opcode).mode.operand_len(self.widths), 0);
        self.op(opcode, 0);
    }

    /// An immediate for an accumulator instruction, checked against M.
    fn imm_m(&self, v: u16) -> u32 {
        assert!(!self.widths.m8 || v < 0x100, "#${v:X} with an 8-bit accumulator");
        u32::from(v)
    }

    /// An immediate for an index instruction, checked against X.
    fn imm_x(&self, v: u16) -> u32 {
        assert!(!self.widths.x8 || v < 0x100, "#${v:X} with 8-bit index registers");
        u32::from(v)
    }
}

/// Well-known opcodes for [`Asm::implied`].
pub mod opcode {
    /// SEI.
    pub const SEI: u8 = 0x78;
    /// TCD.
    pub const TCD: u8 = 0x5b;
    /// TCS.
    pub const TCS: u8 = 0x1b;
    /// TXS.
    pub const TXS: u8 = 0x9a;
    /// TXA.
    pub const TXA: u8 = 0x8a;
    /// TYA.
    pub const TYA: u8 = 0x98;
    /// TDC.
    pub const TDC: u8 = 0x7b;
    /// TSC.
    pub const TSC: u8 = 0x3b;
    /// PHP.
    pub const PHP: u8 = 0x08;
    /// PLP.
    pub const PLP: u8 = 0x28;
    /// PHA.
    pub const PHA: u8 = 0x48;
    /// TAX.
    pub const TAX: u8 = 0xaa;
    /// TAY.
    pub const TAY: u8 = 0xa8;
    /// PHB.
    pub const PHB: u8 = 0x8b;
    /// PLA.
    pub const PLA: u8 = 0x68;
    /// PLB.
    pub const PLB: u8 = 0xab;
    /// RTL.
    pub const RTL: u8 = 0x6b;
    /// RTI.
    pub const RTI: u8 = 0x40;
    /// WAI.
    pub const WAI: u8 = 0xcb;
}

/// The vectors of a test ROM's header, as `$00:xxxx` addresses; 0 for none.
#[derive(Clone, Copy, Debug, Default)]
pub struct Vectors {
    /// Native-mode NMI.
    pub nmi: u16,
    /// RESET.
    pub reset: u16,
    /// Where every other vector points (an RTI, say).
    pub other: u16,
}

/// A LoROM (map mode `$20`, SlowROM, no SRAM) of `banks` 32 KiB banks; bank `b` is `$bb:8000` on.
#[derive(Clone, Debug)]
pub struct LoRom {
    rom: Vec<u8>,
}

impl LoRom {
    /// A ROM of `banks` banks (a power of two, at least 1) filled with `$FF`.
    pub fn new(banks: usize) -> LoRom {
        assert!(banks.is_power_of_two(), "a ROM of {banks} banks");
        LoRom {
            rom: vec![0xff; banks * 0x8000],
        }
    }

    /// Puts `bytes` at the CPU address `$bb:aaaa` (`aaaa` at least `$8000`).
    pub fn put(&mut self, addr: u32, bytes: &[u8]) {
        let bank = (addr >> 16) as usize & 0x7f;
        let low = addr as usize & 0xffff;
        assert!(
            low >= 0x8000 && low + bytes.len() <= 0x1_0000,
            "${addr:06X} is not in one ROM bank"
        );
        let at = bank * 0x8000 + low - 0x8000;
        self.rom[at..at + bytes.len()].copy_from_slice(bytes);
    }

    /// The file: the header at `$00:FFC0` with `title`, the size byte, `vectors`, and the checksum.
    pub fn finish(mut self, title: &str, vectors: Vectors) -> Vec<u8> {
        let at = 0x7fc0;
        let mut name = [b' '; 21];
        for (slot, b) in name.iter_mut().zip(title.bytes()) {
            *slot = b;
        }
        self.rom[at..at + 21].copy_from_slice(&name);
        // Map mode, cartridge type (ROM only), size (2^n KiB), SRAM none, NTSC, developer, version.
        let size_kib = self.rom.len() / 1024;
        let header = [0x20, 0x00, size_kib.trailing_zeros() as u8, 0x00, 0x01, 0x00, 0x00];
        self.rom[at + 0x15..at + 0x1c].copy_from_slice(&header);
        let word = |rom: &mut Vec<u8>, offset: usize, v: u16| {
            rom[at + offset..at + offset + 2].copy_from_slice(&v.to_le_bytes());
        };
        // $FFE0: native -, -, COP, BRK, ABORT, NMI, -, IRQ; $FFF0: emulation -, -, COP, -, ABORT,
        // NMI, RESET, IRQ/BRK.
        let o = vectors.other;
        for (offset, v) in [
            (0x24, o),
            (0x26, o),
            (0x28, o),
            (0x2a, vectors.nmi),
            (0x2e, o),
            (0x34, o),
            (0x38, o),
            (0x3a, o),
            (0x3c, vectors.reset),
            (0x3e, o),
        ] {
            word(&mut self.rom, offset, v);
        }
        // Complement and checksum: $FFFF and $0000 first, which sum as any valid pair does.
        word(&mut self.rom, 0x1c, 0xffff);
        word(&mut self.rom, 0x1e, 0x0000);
        let sum = loader_rom::checksum(&self.rom);
        word(&mut self.rom, 0x1c, !sum);
        word(&mut self.rom, 0x1e, sum);
        self.rom
    }
}

/// Writes a recipe for `rom` (recompiled for x86-64, with or without the run-time tier) into
/// `work` and gives its path.
pub fn write_recipe(work: &Path, rom: &Path, run_time_tier: bool) -> PathBuf {
    let text = format!(
        concat!(
            "(\n",
            "    guest: \"snes-rom\",\n",
            "    image: \"{}\",\n",
            "    image_sha256: \"{}\",\n",
            "    platform: \"snes\",\n",
            "    host: \"x86-64\",\n",
            "    run_time_tier: {},\n",
            ")\n"
        ),
        rom.display(),
        sha256_file(rom),
        run_time_tier
    );
    let stem = rom.file_stem().and_then(|s| s.to_str()).unwrap_or("rom");
    let path = work.join(format!("{stem}.ron"));
    fs::write(&path, text).expect("writing the recipe");
    path
}

/// Runs the recompiled ROM of `recipe` on the x86-64 host in the sandbox `work` (with compiled
/// objects cached in `cache`, which several ROMs may share) up to and including frame `frame`, and
/// gives the memories after it.
pub fn rpt_dump_frame(recipe: &Path, work: &Path, cache: &Path, frame: u32) -> FrameState {
    let dump = work.join("frame.bin");
    let out = Command::new(rpt_binary())
        .arg("run")
        .arg(recipe)
        .args(["--host", "x86-64"])
        .arg("--gen-dir")
        .arg(work.join("gen"))
        .arg("--cache-dir")
        .arg(cache)
        .current_dir(crate::workspace_root())
        .env("CI", "1")
        .env("RPT_SANDBOX", work)
        .env("RPT_SNES_MAX_FRAMES", (frame + 1).to_string())
        .env("RPT_SNES_DUMP_FRAME", frame.to_string())
        .env("RPT_SNES_DUMP_FILE", "frame.bin")
        .output()
        .expect("rpt starts");
    assert!(
        out.status.success(),
        "rpt run {} failed:\n{}",
        recipe.display(),
        stderr_of(&out)
    );
    let bytes = fs::read(&dump).unwrap_or_else(|e| panic!("the recompiled ROM dumped no frame ({e})"));
    FrameState::from_dump(&bytes).expect("a whole dump")
}
