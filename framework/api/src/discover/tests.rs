//! The shared discovery on a toy instruction set whose lengths depend on a mode, as the 65816's do.

use super::*;
use crate::{Import, SegmentFlags};

/// Opcodes of the toy set; targets are one byte, added to the code base.
const NOP: u8 = 0x00;
const JMP: u8 = 0x01;
const BR: u8 = 0x02;
const CALL: u8 = 0x03;
const RET: u8 = 0x04;
/// Enters wide mode: `IMM` then takes a two-byte operand instead of one.
const WIDE: u8 = 0x05;
const IMM: u8 = 0x06;
/// `JTAB n t0 .. tn-1`: an inline table of n case targets.
const JTAB: u8 = 0x07;
const HALT: u8 = 0x08;
/// Calls the import at `EXIT_THUNK`, which never returns.
const CALL_EXIT: u8 = 0x09;
/// Calls address 0: how a linker encodes the call of an undefined weak function.
const CALL_NULL: u8 = 0x0a;
/// Calls `DATA`, which is not code.
const CALL_DATA: u8 = 0x0b;

const CODE: u64 = 0x100;
const DATA: u64 = 0x800;
const EXIT_THUNK: GuestAddr = GuestAddr(0xf000);

struct Toy;

#[derive(Clone, Debug)]
struct ToyInsn {
    op: u8,
    operands: Vec<u8>,
}

fn target(byte: u8) -> GuestAddr {
    GuestAddr(CODE + u64::from(byte))
}

impl Isa for Toy {
    type Insn = ToyInsn;
    type Context = bool;
    type Failure = String;
    type JumpTable = Vec<GuestAddr>;
    type Run = ();

    fn decode(&self, image: &GuestImage, at: GuestAddr, wide: bool) -> Result<(ToyInsn, GuestAddr), String> {
        if !image.is_code(at) {
            return Err("not code".to_string());
        }
        let byte = |i: u64| image.bytes_at(GuestAddr(at.0 + i), 1).and_then(|b| b.first().copied());
        let op = byte(0).ok_or("no byte")?;
        let operand_count = match op {
            NOP | RET | WIDE | HALT | CALL_EXIT | CALL_NULL | CALL_DATA => 0,
            JMP | BR | CALL => 1,
            IMM if wide => 2,
            IMM => 1,
            JTAB => 1 + u64::from(byte(1).ok_or("no count")?),
            other => return Err(format!("unknown opcode {other:#04x}")),
        };
        let operands = (1..=operand_count)
            .map(|i| byte(i).ok_or("cut short"))
            .collect::<Result<_, _>>()?;
        Ok((ToyInsn { op, operands }, GuestAddr(at.0 + 1 + operand_count)))
    }

    fn flow(
        &self,
        image: &GuestImage,
        insn: &ToyInsn,
        wide: &mut bool,
        _run: &mut (),
        code_constants: &mut BTreeSet<GuestAddr>,
    ) -> Result<Flow, String> {
        Ok(match insn.op {
            JMP => Flow::Jump(target(insn.operands[0])),
            BR => Flow::Branch(target(insn.operands[0])),
            CALL => Flow::Call {
                target: target(insn.operands[0]),
                conditional: false,
            },
            CALL_EXIT => Flow::Call {
                target: EXIT_THUNK,
                conditional: false,
            },
            CALL_NULL => Flow::Call {
                target: GuestAddr(0),
                conditional: false,
            },
            CALL_DATA => Flow::Call {
                target: GuestAddr(DATA),
                conditional: false,
            },
            RET => Flow::Return { conditional: false },
            HALT => Flow::Trap { conditional: false },
            JTAB => Flow::JumpIndirect { conditional: false },
            WIDE => {
                *wide = true;
                Flow::Next
            }
            IMM => {
                if image.is_code(target(insn.operands[0])) && insn.operands.len() == 1 {
                    code_constants.insert(target(insn.operands[0]));
                }
                Flow::Next
            }
            _ => Flow::Next,
        })
    }

    fn jump_table(&self, _image: &GuestImage, cfg: &FunctionCfg<Self>, at: GuestAddr) -> Option<Vec<GuestAddr>> {
        let insn = cfg.insns.get(&at)?;
        Some(insn.operands[1..].iter().map(|&b| target(b)).collect())
    }

    fn external(&self, addr: GuestAddr) -> Option<CallFlow> {
        (addr == EXIT_THUNK).then_some(CallFlow::NoReturn)
    }

    fn pointer_candidates(&self, image: &GuestImage) -> Vec<CodePointer> {
        image
            .segments
            .iter()
            .filter(|s| !s.flags.execute)
            .flat_map(|s| aligned_words(s, false))
            .map(|(at, w)| CodePointer {
                at,
                target: GuestAddr(u64::from(w)),
            })
            .filter(|p| image.is_code(p.target))
            .collect()
    }

    fn describe(&self, _image: &GuestImage, failure: &String) -> String {
        failure.clone()
    }
}

fn image(code: &[u8], data: &[u32]) -> GuestImage {
    let seg = |name: &str, addr: u64, bytes: Vec<u8>, execute: bool| Segment {
        name: name.to_string(),
        addr: GuestAddr(addr),
        mem_size: bytes.len() as u64,
        bytes,
        flags: SegmentFlags {
            read: true,
            write: !execute,
            execute,
        },
    };
    GuestImage {
        segments: vec![
            seg("code", CODE, code.to_vec(), true),
            seg("data", DATA, data.iter().flat_map(|w| w.to_le_bytes()).collect(), false),
        ],
        entry: GuestAddr(CODE),
        exports: BTreeMap::new(),
        imports: vec![Import {
            module: "toy".to_string(),
            name: "exit".to_string(),
            slot: GuestAddr(0),
            thunk: EXIT_THUNK,
        }],
    }
}

fn addrs(list: &[u64]) -> BTreeSet<GuestAddr> {
    list.iter().map(|&a| GuestAddr(CODE + a)).collect()
}

/// Discovery of `img`, which must say nothing.
fn discover_cleanly(img: &GuestImage) -> Found<bool> {
    let found = discover(&Toy, img, &Seeds::default());
    assert!(
        found.discovery.diagnostics.is_empty(),
        "{:?}",
        found.discovery.diagnostics
    );
    found
}

/// The CFG of the image's entry among the functions found.
fn walk_entry(img: &GuestImage, found: Found<bool>) -> FunctionCfg<Toy> {
    Walker::new(&Toy, img, Cow::Owned(found.discovery.functions)).walk(GuestAddr(CODE))
}

#[test]
fn a_routine_entered_in_two_modes_is_two_functions_decoded_apart() {
    // 0x00: call 0x10; wide; call 0x10; ret.   0x10: imm <operand>; ret.
    // Narrow, `imm` takes one byte and `ret` follows at 0x12; wide, it takes two: 0x13.
    let mut code = vec![CALL, 0x10, WIDE, CALL, 0x10, RET];
    code.resize(0x10, NOP);
    code.extend([IMM, 0x00, RET, RET]);
    let img = image(&code, &[]);
    let found = discover(&Toy, &img, &Seeds::default());
    assert_eq!(found.discovery.functions, addrs(&[0x00, 0x10]));
    let wide = Entry {
        addr: GuestAddr(CODE + 0x10),
        context: true,
    };
    assert_eq!(found.variants, BTreeSet::from([wide]));
    let walker = Walker::new(&Toy, &img, Cow::Owned(found.discovery.functions.clone()));
    let narrow_cfg = walker.walk(GuestAddr(CODE + 0x10));
    let wide_cfg = walker.walk_entry(wide);
    assert_eq!(
        narrow_cfg.insns.keys().copied().collect::<BTreeSet<_>>(),
        addrs(&[0x10, 0x12])
    );
    assert_eq!(
        wide_cfg.insns.keys().copied().collect::<BTreeSet<_>>(),
        addrs(&[0x10, 0x13])
    );
    assert!(
        found.discovery.diagnostics.is_empty(),
        "{:?}",
        found.discovery.diagnostics
    );
}

#[test]
fn code_after_a_call_that_never_returns_is_not_walked() {
    // 0x00: call 0x08; <garbage>.  0x08: call exit (an import that never returns); <garbage>.
    let code = [CALL, 0x08, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, CALL_EXIT, 0xee];
    let img = image(&code, &[]);
    let found = discover_cleanly(&img);
    assert_eq!(found.discovery.functions, addrs(&[0x00, 0x08]));
    let cfg = walk_entry(&img, found);
    assert!(cfg.noreturn_calls.contains(&GuestAddr(CODE)));
    assert!(!cfg.may_return);
}

#[test]
fn strong_code_that_cannot_decode_is_an_error_at_its_address() {
    let code = [NOP, BR, 0x04, RET, 0xee];
    let found = discover(&Toy, &image(&code, &[]), &Seeds::default());
    let errors: Vec<_> = found
        .discovery
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].addr, GuestAddr(CODE + 4));
    assert!(
        errors[0].message.contains("unknown opcode 0xee"),
        "{}",
        errors[0].message
    );
}

#[test]
fn weak_candidates_outside_known_code_are_kept_only_when_they_walk_cleanly() {
    // Entry 0x00: imm 0x20 (a code constant, a function at 0x20); ret at 0x02, which data names
    // too although it is inside the entry's code. 0x08: a callback named only in data. 0x10: a
    // byte that does not decode, named in data.
    let mut code = vec![IMM, 0x20, RET];
    code.resize(0x08, NOP);
    code.extend([NOP, RET]);
    code.resize(0x10, NOP);
    code.push(0xee);
    code.resize(0x20, NOP);
    code.push(RET);
    let data = [(CODE + 0x08) as u32, (CODE + 0x10) as u32, (CODE + 0x02) as u32, 0x1234];
    let found = discover(&Toy, &image(&code, &data), &Seeds::default());
    // 0x02 is an entry of its own into the entry function's code.
    assert_eq!(found.discovery.functions, addrs(&[0x00, 0x02, 0x08, 0x20]));
    assert_eq!(found.discovery.address_taken, addrs(&[0x02, 0x08, 0x20]));
    let notes: BTreeMap<GuestAddr, &str> = found
        .discovery
        .diagnostics
        .iter()
        .map(|d| {
            assert_eq!(d.severity, Severity::Note, "{d:?}");
            (d.addr, d.message.as_str())
        })
        .collect();
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert!(notes[&GuestAddr(CODE + 0x10)].contains("unknown opcode"));
    assert!(
        notes[&GuestAddr(CODE + 0x02)].contains("inside f_00000100, and its address is taken"),
        "{notes:?}"
    );
}

#[test]
fn a_candidate_whose_callee_calls_address_zero_is_kept_and_one_calling_data_is_not() {
    // 0x00: the entry. 0x10, named in data, calls 0x20, which calls address 0 (an undefined weak
    // function, tested first in real code); 0x18, named in data, calls 0x28, which calls into data.
    let mut code = vec![RET];
    code.resize(0x10, NOP);
    code.extend([CALL, 0x20, RET]);
    code.resize(0x18, NOP);
    code.extend([CALL, 0x28, RET]);
    code.resize(0x20, NOP);
    code.extend([CALL_NULL, RET]);
    code.resize(0x28, NOP);
    code.extend([CALL_DATA, RET]);
    let data = [(CODE + 0x10) as u32, (CODE + 0x18) as u32];
    let found = discover(&Toy, &image(&code, &data), &Seeds::default());
    assert_eq!(found.discovery.functions, addrs(&[0x00, 0x10, 0x20]));
    let dropped = found
        .discovery
        .diagnostics
        .iter()
        .find(|d| d.addr == GuestAddr(CODE + 0x18))
        .expect("a note for the dropped candidate");
    assert!(
        dropped
            .message
            .contains(&format!("it calls {}, which is not code", GuestAddr(DATA))),
        "{dropped:?}"
    );
}

#[test]
fn a_function_its_neighbour_runs_into_by_a_tail_jump_keeps_its_own_entry() {
    // 0x00: call 0x08; ret.   0x08: br 0x10; ret.   0x10: nop; ret — reached only by 0x08's
    // branch, and named in data (a table of function pointers). The walk of 0x08 first took it as
    // a block; the data word makes it a function, and 0x08's branch there a tail call.
    let mut code = vec![CALL, 0x08, RET];
    code.resize(0x08, NOP);
    code.extend([BR, 0x10, RET]);
    code.resize(0x10, NOP);
    code.extend([NOP, RET]);
    let img = image(&code, &[(CODE + 0x10) as u32]);
    let found = discover(&Toy, &img, &Seeds::default());
    assert_eq!(found.discovery.functions, addrs(&[0x00, 0x08, 0x10]));
    assert_eq!(found.discovery.address_taken, addrs(&[0x10]));
    let walker = Walker::new(&Toy, &img, Cow::Owned(found.discovery.functions.clone()));
    let neighbour = walker.walk(GuestAddr(CODE + 0x08));
    assert!(neighbour.calls_entry(GuestAddr(CODE + 0x10), false));
    assert!(!neighbour.insns.contains_key(&GuestAddr(CODE + 0x10)));
}

/// The toy's jump table as a guest that tracks the words of its tables reports it: the JTAB
/// operands stand for words at `DATA`, one per case.
#[derive(Clone, Debug)]
struct TrackedTable(Vec<GuestAddr>);

impl CaseTargets for TrackedTable {
    fn case_targets(&self) -> &[GuestAddr] {
        &self.0
    }

    fn case_words(&self) -> Option<Vec<GuestAddr>> {
        Some((0..self.0.len() as u64).map(|i| GuestAddr(DATA + 4 * i)).collect())
    }
}

/// The toy with tables whose words are tracked.
struct TrackedToy;

impl Isa for TrackedToy {
    type Insn = ToyInsn;
    type Context = bool;
    type Failure = String;
    type JumpTable = TrackedTable;
    type Run = ();

    fn decode(&self, image: &GuestImage, at: GuestAddr, wide: bool) -> Result<(ToyInsn, GuestAddr), String> {
        Toy.decode(image, at, wide)
    }

    fn flow(
        &self,
        image: &GuestImage,
        insn: &ToyInsn,
        wide: &mut bool,
        run: &mut (),
        code_constants: &mut BTreeSet<GuestAddr>,
    ) -> Result<Flow, String> {
        Toy.flow(image, insn, wide, run, code_constants)
    }

    fn jump_table(&self, image: &GuestImage, cfg: &FunctionCfg<Self>, at: GuestAddr) -> Option<TrackedTable> {
        let insn = cfg.insns.get(&at)?;
        let _ = image;
        Some(TrackedTable(insn.operands[1..].iter().map(|&b| target(b)).collect()))
    }

    fn external(&self, addr: GuestAddr) -> Option<CallFlow> {
        Toy.external(addr)
    }

    fn pointer_candidates(&self, image: &GuestImage) -> Vec<CodePointer> {
        Toy.pointer_candidates(image)
    }

    fn describe(&self, image: &GuestImage, failure: &String) -> String {
        Toy.describe(image, failure)
    }
}

#[test]
fn a_case_named_outside_its_table_is_also_an_entry() {
    // 0x00: jtab 2 -> 0x08, 0x0a.  0x08: ret.  0x0a: ret.  The table's words (DATA, DATA+4) name
    // both cases; a third word names 0x0a again, as a function pointer would.
    let mut code = vec![JTAB, 2, 0x08, 0x0a];
    code.resize(0x08, NOP);
    code.extend([RET, NOP, RET]);
    let data = [(CODE + 0x08) as u32, (CODE + 0x0a) as u32, (CODE + 0x0a) as u32];
    let img = image(&code, &data);
    let found = discover(&TrackedToy, &img, &Seeds::default());
    assert_eq!(found.discovery.functions, addrs(&[0x00, 0x0a]));
    assert_eq!(found.discovery.address_taken, addrs(&[0x0a]));
}

#[test]
fn jump_table_cases_are_blocks_and_not_candidates() {
    // 0x00: jtab 2 -> 0x08, 0x0a.  0x08: ret.  0x0a: ret.  Data names both cases too.
    let mut code = vec![JTAB, 2, 0x08, 0x0a];
    code.resize(0x08, NOP);
    code.extend([RET, NOP, RET]);
    let data = [(CODE + 0x08) as u32, (CODE + 0x0a) as u32];
    let img = image(&code, &data);
    let found = discover_cleanly(&img);
    assert_eq!(found.discovery.functions, addrs(&[0x00]));
    let cfg = walk_entry(&img, found);
    assert_eq!(
        cfg.block_starts.keys().copied().collect::<BTreeSet<_>>(),
        addrs(&[0x00, 0x08, 0x0a])
    );
    assert!(cfg.jump_tables.contains_key(&GuestAddr(CODE)));
    assert!(cfg.may_return);
}

#[test]
fn aligned_words_start_at_the_first_multiple_of_four() {
    let seg = Segment {
        name: "d".to_string(),
        addr: GuestAddr(0x1001),
        bytes: vec![0xaa, 0xbb, 0xcc, 1, 2, 3, 4, 5, 6, 7, 8, 9],
        mem_size: 12,
        flags: SegmentFlags::default(),
    };
    let little: Vec<_> = aligned_words(&seg, false).collect();
    assert_eq!(
        little,
        vec![(GuestAddr(0x1004), 0x0403_0201), (GuestAddr(0x1008), 0x0807_0605)]
    );
    let big: Vec<_> = aligned_words(&seg, true).collect();
    assert_eq!(big[0], (GuestAddr(0x1004), 0x0102_0304));
}

#[test]
fn tables_of_function_addresses_start_at_runs_and_at_words_pointed_at() {
    // Two vtables laid end to end at 0x2000 and 0x2008, a table of them at 0x3000, and a lone
    // pointer to a non-function at 0x2010.
    let f = |a: u64| GuestAddr(a);
    let pointers: Vec<CodePointer> = [
        (0x2000, 0x100),
        (0x2004, 0x110),
        (0x2008, 0x120),
        (0x200c, 0x130),
        (0x2010, 0x999),
    ]
    .into_iter()
    .map(|(at, target)| CodePointer {
        at: f(at),
        target: f(target),
    })
    .collect();
    let functions: BTreeSet<GuestAddr> = [0x100, 0x110, 0x120, 0x130].map(f).into();
    let kinds: Vec<u8> = [0x2000u32, 0x2008].iter().flat_map(|w| w.to_le_bytes()).collect();
    let image = GuestImage {
        segments: vec![Segment {
            name: "rdata".to_string(),
            addr: f(0x3000),
            mem_size: kinds.len() as u64,
            bytes: kinds,
            flags: SegmentFlags::default(),
        }],
        entry: f(0x100),
        exports: BTreeMap::new(),
        imports: Vec::new(),
    };
    let tables = pointer_tables(&image, &pointers, &functions);
    assert_eq!(
        tables,
        BTreeMap::from([
            (f(0x2000), vec![f(0x100), f(0x110), f(0x120), f(0x130)]),
            (f(0x2008), vec![f(0x120), f(0x130)]),
        ])
    );
}
