//! Loads and stores: byte, half (zero and algebraic), word, byte-reversed, with update and
//! indexed forms; multiple and string transfers; `lwarx`/`stwcx.`; `dcbz`; FP loads and stores.
//!
//! Guest memory is big-endian. Update forms load or store first and then write the effective
//! address to rA (forms with rA = 0 or rA = rD are invalid and lifted the same way, as qemu does).
//! Floats move as bit patterns: `lfs`/`stfs` convert with the exact bit rules of the PowerPC
//! manual (no rounding, signalling NaNs kept), `lfd`/`stfd` copy 64 bits. `lfs` fills both
//! paired-single halves, as Gekko does; `lfd` writes ps0 only.

use rpt_ir::{AddrSpace, BinaryOp, ConvOp, Endian, IntCC, Type, UnaryOp, Value};

use super::Lifter;
use super::cached::UNCACHED_BIT;
use crate::decode::Insn;
use crate::state::{RESV, RESV_ADDR, SO, XER_BC, cr_field, fpr, ps1};

/// How an effective address is formed.
#[derive(Clone, Copy)]
pub(crate) enum Ea {
    /// `d(rA|0)`.
    Disp,
    /// `d(rA)`, then rA = EA.
    DispUpdate,
    /// `(rA|0) + rB`.
    Indexed,
    /// `rA + rB`, then rA = EA.
    IndexedUpdate,
}

impl Ea {
    /// Whether rB is added (else a displacement).
    pub(crate) fn indexed(self) -> bool {
        matches!(self, Ea::Indexed | Ea::IndexedUpdate)
    }

    /// Whether rA is updated (and so read even when it is r0).
    fn updates(self) -> bool {
        matches!(self, Ea::DispUpdate | Ea::IndexedUpdate)
    }
}

impl Lifter<'_> {
    /// The effective address, with the D form's SIMM as the displacement.
    fn ea(&mut self, insn: &Insn, form: Ea) -> Value {
        self.ea_with_disp(insn, form, insn.simm() as u32)
    }

    /// The effective address, with `disp` as the displacement of a D form.
    pub(crate) fn ea_with_disp(&mut self, insn: &Insn, form: Ea, disp: u32) -> Value {
        let base = if form.updates() {
            self.gpr(insn.ra())
        } else {
            self.gpr_or_zero(insn.ra())
        };
        if form.indexed() {
            let index = self.gpr(insn.rb());
            self.b.binary(BinaryOp::Add, base, index)
        } else {
            self.b.binary_imm(BinaryOp::Add, base, u64::from(disp))
        }
    }

    /// rA = the effective address, for the update forms.
    pub(crate) fn update(&mut self, insn: &Insn, form: Ea, ea: Value) {
        if form.updates() {
            self.set_gpr(insn.ra(), ea);
        }
    }

    /// The address through which guest memory is reached for effective address `ea`: `ea` with bit 30
    /// cleared. The uncached views of MEM1 (0xc0000000) and of the Wii's MEM2 (0xd0000000) thus are
    /// the cached ones (0x80000000, 0x90000000), as the block address translation every GameCube and
    /// Wii program runs with makes them. The AND also folds 0x40000000..0x7fffffff onto
    /// 0x00000000..0x3fffffff; neither is mapped on the hardware (an access faults), so no program
    /// that runs there can tell. One AND is the cheapest fold: the exact one
    /// (`ea >= 0xc0000000 ? ea - 0x40000000 : ea`) ran 11% more host instructions than this on the
    /// integer demo (callgrind: 1.226M without any fold, 1.297M with the AND, 1.436M exact).
    ///
    /// Where the address is known to be in a cached view already (a stack slot, a global, an
    /// element of one), [`super::cached`] drops the AND after lifting.
    ///
    /// Folding here, rather than mapping one host memory object at both addresses, keeps the views
    /// one memory for the C compiler as well: it may move an access across another whose address it
    /// can prove different, which two mappings of one object would turn into a stale read (clang-19
    /// did so on AArch64). It also gives every host, and the IR interpreter, the same memory.
    fn cached_view(&mut self, ea: Value) -> Value {
        self.b.binary_imm(BinaryOp::And, ea, u64::from(!UNCACHED_BIT))
    }

    /// Loads an integer of `ty` from big-endian guest memory at effective address `ea`.
    pub(crate) fn load_be(&mut self, ty: Type, ea: Value) -> Value {
        let addr = self.cached_view(ea);
        self.b.load(ty, Endian::Big, AddrSpace::RAM, addr)
    }

    /// Stores to big-endian guest memory at effective address `ea`.
    pub(crate) fn store_be(&mut self, ea: Value, v: Value) {
        let addr = self.cached_view(ea);
        self.b.store(Endian::Big, AddrSpace::RAM, addr, v);
    }

    /// Where `lswx`/`stswx` start and how many bytes they move (XER[BC], as an i32).
    fn string_start(&mut self, insn: &Insn) -> (Value, Value) {
        let ea = self.ea(insn, Ea::Indexed);
        let bc = self.b.get(XER_BC);
        (ea, self.b.resize(bc, Type::I32))
    }

    /// The string instructions' byte `at` bytes past `ea`, placed as byte `k` (0 = the most
    /// significant) of a register.
    fn load_string_byte(&mut self, ea: Value, at: u32, k: u32) -> Value {
        let addr = self.b.binary_imm(BinaryOp::Add, ea, u64::from(at));
        let byte = self.load_be(Type::I8, addr);
        let wide = self.b.resize(byte, Type::I32);
        self.b.binary_imm(BinaryOp::Shl, wide, u64::from(24 - 8 * k))
    }

    /// Where the string instructions store byte `k` (0 = the most significant) of register value
    /// `v`, `at` bytes past `ea`, and that byte.
    fn string_byte(&mut self, ea: Value, at: u32, v: Value, k: u32) -> (Value, Value) {
        let addr = self.b.binary_imm(BinaryOp::Add, ea, u64::from(at));
        let shifted = self.b.binary_imm(BinaryOp::Lshr, v, u64::from(24 - 8 * k));
        (addr, self.b.resize(shifted, Type::I8))
    }

    fn load_int(&mut self, insn: &Insn, form: Ea, ty: Type, signed: bool, reversed: bool) {
        let ea = self.ea(insn, form);
        let mut v = self.load_be(ty, ea);
        if reversed {
            v = self.b.unary(UnaryOp::Bswap, v);
        }
        let v = if signed {
            self.b.sext(v, Type::I32)
        } else {
            self.b.resize(v, Type::I32)
        };
        self.set_gpr(insn.rd(), v);
        self.update(insn, form, ea);
    }

    fn store_int(&mut self, insn: &Insn, form: Ea, ty: Type, reversed: bool) {
        let ea = self.ea(insn, form);
        let s = self.gpr(insn.rd());
        let mut v = self.b.resize(s, ty);
        if reversed {
            v = self.b.unary(UnaryOp::Bswap, v);
        }
        self.store_be(ea, v);
        self.update(insn, form, ea);
    }

    fn load_single(&mut self, insn: &Insn, form: Ea) {
        let ea = self.ea(insn, form);
        let w = self.load_be(Type::I32, ea);
        let d = self.single_bits_to_double(w);
        self.b.set(fpr(insn.rd()), d);
        self.b.set(ps1(insn.rd()), d);
        self.update(insn, form, ea);
    }

    fn load_double(&mut self, insn: &Insn, form: Ea) {
        let ea = self.ea(insn, form);
        let w = self.load_be(Type::I64, ea);
        let d = self.b.convert(ConvOp::Bitcast, w, Type::F64);
        self.b.set(fpr(insn.rd()), d);
        self.update(insn, form, ea);
    }

    fn store_single(&mut self, insn: &Insn, form: Ea) {
        let ea = self.ea(insn, form);
        let d = self.b.get(fpr(insn.rd()));
        let bits = self.b.convert(ConvOp::Bitcast, d, Type::I64);
        let w = self.double_bits_to_single_bits(bits);
        self.store_be(ea, w);
        self.update(insn, form, ea);
    }

    fn store_double(&mut self, insn: &Insn, form: Ea) {
        let ea = self.ea(insn, form);
        let d = self.b.get(fpr(insn.rd()));
        let bits = self.b.convert(ConvOp::Bitcast, d, Type::I64);
        self.store_be(ea, bits);
        self.update(insn, form, ea);
    }
}

macro_rules! int_loads {
    ($($name:ident: $form:ident, $ty:ident, $signed:expr, $rev:expr;)*) => {$(
        #[doc = concat!("`", stringify!($name), "`.")]
        pub(crate) fn $name(lx: &mut Lifter<'_>, insn: &Insn) {
            lx.load_int(insn, Ea::$form, Type::$ty, $signed, $rev);
        }
    )*};
}

macro_rules! int_stores {
    ($($name:ident: $form:ident, $ty:ident, $rev:expr;)*) => {$(
        #[doc = concat!("`", stringify!($name), "`.")]
        pub(crate) fn $name(lx: &mut Lifter<'_>, insn: &Insn) {
            lx.store_int(insn, Ea::$form, Type::$ty, $rev);
        }
    )*};
}

macro_rules! fp_transfers {
    ($($name:ident: $method:ident, $form:ident;)*) => {$(
        #[doc = concat!("`", stringify!($name), "`.")]
        pub(crate) fn $name(lx: &mut Lifter<'_>, insn: &Insn) {
            lx.$method(insn, Ea::$form);
        }
    )*};
}

int_loads! {
    lwz: Disp, I32, false, false;
    lwzu: DispUpdate, I32, false, false;
    lwzx: Indexed, I32, false, false;
    lwzux: IndexedUpdate, I32, false, false;
    lbz: Disp, I8, false, false;
    lbzu: DispUpdate, I8, false, false;
    lbzx: Indexed, I8, false, false;
    lbzux: IndexedUpdate, I8, false, false;
    lhz: Disp, I16, false, false;
    lhzu: DispUpdate, I16, false, false;
    lhzx: Indexed, I16, false, false;
    lhzux: IndexedUpdate, I16, false, false;
    lha: Disp, I16, true, false;
    lhau: DispUpdate, I16, true, false;
    lhax: Indexed, I16, true, false;
    lhaux: IndexedUpdate, I16, true, false;
    lhbrx: Indexed, I16, false, true;
    lwbrx: Indexed, I32, false, true;
}

int_stores! {
    stw: Disp, I32, false;
    stwu: DispUpdate, I32, false;
    stwx: Indexed, I32, false;
    stwux: IndexedUpdate, I32, false;
    stb: Disp, I8, false;
    stbu: DispUpdate, I8, false;
    stbx: Indexed, I8, false;
    stbux: IndexedUpdate, I8, false;
    sth: Disp, I16, false;
    sthu: DispUpdate, I16, false;
    sthx: Indexed, I16, false;
    sthux: IndexedUpdate, I16, false;
    sthbrx: Indexed, I16, true;
    stwbrx: Indexed, I32, true;
}

fp_transfers! {
    lfs: load_single, Disp;
    lfsu: load_single, DispUpdate;
    lfsx: load_single, Indexed;
    lfsux: load_single, IndexedUpdate;
    lfd: load_double, Disp;
    lfdu: load_double, DispUpdate;
    lfdx: load_double, Indexed;
    lfdux: load_double, IndexedUpdate;
    stfs: store_single, Disp;
    stfsu: store_single, DispUpdate;
    stfsx: store_single, Indexed;
    stfsux: store_single, IndexedUpdate;
    stfd: store_double, Disp;
    stfdu: store_double, DispUpdate;
    stfdx: store_double, Indexed;
    stfdux: store_double, IndexedUpdate;
}

/// `stfiwx frS,rA,rB`: the low word of the FPR's bit pattern.
pub(crate) fn stfiwx(lx: &mut Lifter<'_>, insn: &Insn) {
    let ea = lx.ea(insn, Ea::Indexed);
    let d = lx.b.get(fpr(insn.rd()));
    let bits = lx.b.convert(ConvOp::Bitcast, d, Type::I64);
    let w = lx.b.convert(ConvOp::Trunc, bits, Type::I32);
    lx.store_be(ea, w);
}

/// `lmw rD,d(rA)`: words into rD..r31.
pub(crate) fn lmw(lx: &mut Lifter<'_>, insn: &Insn) {
    let ea = lx.ea(insn, Ea::Disp);
    for (k, r) in (insn.rd()..32).enumerate() {
        let addr = lx.b.binary_imm(BinaryOp::Add, ea, 4 * k as u64);
        let v = lx.load_be(Type::I32, addr);
        lx.set_gpr(r, v);
    }
}

/// `stmw rS,d(rA)`: rS..r31 to memory.
pub(crate) fn stmw(lx: &mut Lifter<'_>, insn: &Insn) {
    let ea = lx.ea(insn, Ea::Disp);
    for (k, r) in (insn.rd()..32).enumerate() {
        let addr = lx.b.binary_imm(BinaryOp::Add, ea, 4 * k as u64);
        let v = lx.gpr(r);
        lx.store_be(addr, v);
    }
}

/// `lswi rD,rA,NB`: NB bytes (32 for 0) into rD, rD+1, ... (wrapping to r0), high byte first,
/// the last register padded with zeros.
pub(crate) fn lswi(lx: &mut Lifter<'_>, insn: &Insn) {
    let n = if insn.rb() == 0 { 32 } else { insn.rb() };
    let ea = lx.gpr_or_zero(insn.ra());
    for j in 0..n.div_ceil(4) {
        let mut acc = lx.c32(0);
        for k in 0..4.min(n - 4 * j) {
            let shifted = lx.load_string_byte(ea, 4 * j + k, k);
            acc = lx.b.binary(BinaryOp::Or, acc, shifted);
        }
        lx.set_gpr((insn.rd() + j) % 32, acc);
    }
}

/// `stswi rS,rA,NB`: NB bytes from rS, rS+1, ... (wrapping), high byte first.
pub(crate) fn stswi(lx: &mut Lifter<'_>, insn: &Insn) {
    let n = if insn.rb() == 0 { 32 } else { insn.rb() };
    let ea = lx.gpr_or_zero(insn.ra());
    for j in 0..n.div_ceil(4) {
        let v = lx.gpr((insn.rd() + j) % 32);
        for k in 0..4.min(n - 4 * j) {
            let (addr, byte) = lx.string_byte(ea, 4 * j + k, v, k);
            lx.store_be(addr, byte);
        }
    }
}

/// `lswx rD,rA,rB`: XER[BC] bytes. The count is known only at run time, so every one of the 32
/// possible registers is computed and written only when its first byte is within the count.
pub(crate) fn lswx(lx: &mut Lifter<'_>, insn: &Insn) {
    let (ea, n) = lx.string_start(insn);
    for j in 0..32u32 {
        let reg = (insn.rd() + j) % 32;
        let mut acc = lx.c32(0);
        for k in 0..4 {
            let at = 4 * j + k;
            let shifted = lx.load_string_byte(ea, at, k);
            let inside = lx.b.icmp_imm(IntCC::Ugt, n, u64::from(at));
            let zero = lx.c32(0);
            let part = lx.b.select(inside, shifted, zero);
            acc = lx.b.binary(BinaryOp::Or, acc, part);
        }
        let written = lx.b.icmp_imm(IntCC::Ugt, n, u64::from(4 * j));
        let old = lx.gpr(reg);
        let v = lx.b.select(written, acc, old);
        lx.set_gpr(reg, v);
    }
}

/// `stswx rS,rA,rB`: XER[BC] bytes; bytes past the count are rewritten with their own value.
pub(crate) fn stswx(lx: &mut Lifter<'_>, insn: &Insn) {
    let (ea, n) = lx.string_start(insn);
    for j in 0..32u32 {
        let v = lx.gpr((insn.rd() + j) % 32);
        for k in 0..4 {
            let at = 4 * j + k;
            let (addr, byte) = lx.string_byte(ea, at, v, k);
            let old = lx.load_be(Type::I8, addr);
            let inside = lx.b.icmp_imm(IntCC::Ugt, n, u64::from(at));
            let out = lx.b.select(inside, byte, old);
            lx.store_be(addr, out);
        }
    }
}

/// `lwarx rD,rA,rB`: loads and reserves the address.
pub(crate) fn lwarx(lx: &mut Lifter<'_>, insn: &Insn) {
    let ea = lx.ea(insn, Ea::Indexed);
    let v = lx.load_be(Type::I32, ea);
    lx.set_gpr(insn.rd(), v);
    let on = lx.c1(true);
    lx.b.set(RESV, on);
    lx.b.set(RESV_ADDR, ea);
}

/// `stwcx. rS,rA,rB`: stores if the reservation is held for this address (a single guest thread
/// loses it only here), sets CR0 to 0b00(success)(SO) and drops the reservation.
pub(crate) fn stwcx_dot(lx: &mut Lifter<'_>, insn: &Insn) {
    let ea = lx.ea(insn, Ea::Indexed);
    let held = lx.b.get(RESV);
    let at = lx.b.get(RESV_ADDR);
    let same = lx.b.icmp(IntCC::Eq, at, ea);
    let ok = lx.b.binary(BinaryOp::And, held, same);
    let old = lx.load_be(Type::I32, ea);
    let new = lx.gpr(insn.rd());
    let v = lx.b.select(ok, new, old);
    lx.store_be(ea, v);
    let eq = lx.cr_bit(ok, 1);
    let so = lx.b.get(SO);
    let so = lx.cr_bit(so, 0);
    let field = lx.b.binary(BinaryOp::Or, eq, so);
    lx.b.set(cr_field(0), field);
    let off = lx.c1(false);
    lx.b.set(RESV, off);
}

/// `dcbz rA,rB`: zeroes the 32-byte cache block holding the address.
pub(crate) fn dcbz(lx: &mut Lifter<'_>, insn: &Insn) {
    let ea = lx.ea(insn, Ea::Indexed);
    let block = lx.b.binary_imm(BinaryOp::And, ea, u64::from(!31u32));
    let zero = lx.b.iconst(Type::I64, 0);
    for k in 0..4 {
        let addr = lx.b.binary_imm(BinaryOp::Add, block, 8 * k);
        lx.store_be(addr, zero);
    }
}
