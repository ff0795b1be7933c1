//! Functions (CFGs of blocks in SSA form) and the program that holds them.

use std::collections::{BTreeMap, BTreeSet};

use crate::{Block, CallTarget, GuestAddr, HelperDecl, Inst, InstKind, StateDesc, Terminator, Type, Value};

/// One basic block: parameters, straight-line instructions, one terminator.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct BlockData {
    /// Values passed in by each jump to this block.
    pub params: Vec<Value>,
    /// The instructions, in order.
    pub insts: Vec<Inst>,
    /// How the block ends.
    pub term: Terminator,
}

/// A lifted guest function. `block0` is the entry and takes no parameters.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Function {
    /// The guest address of the function's entry; also its name (`f_00401000`).
    pub entry: GuestAddr,
    /// The blocks, indexed by [`Block`].
    pub blocks: Vec<BlockData>,
    /// The type of each value, indexed by [`Value`].
    pub value_types: Vec<Type>,
}

impl Function {
    /// An empty function with no blocks yet.
    pub fn new(entry: GuestAddr) -> Function {
        Function {
            entry,
            blocks: Vec::new(),
            value_types: Vec::new(),
        }
    }

    /// The function's name in IR text and C.
    pub fn name(&self) -> String {
        self.entry.function_name()
    }

    /// Allocates a new value of type `ty`.
    pub fn new_value(&mut self, ty: Type) -> Value {
        self.value_types.push(ty);
        Value(self.value_types.len() as u32 - 1)
    }

    /// Appends a new empty block ending in `unreachable`.
    pub fn new_block(&mut self) -> Block {
        self.blocks.push(BlockData {
            params: Vec::new(),
            insts: Vec::new(),
            term: Terminator::Unreachable,
        });
        Block(self.blocks.len() as u32 - 1)
    }

    /// The type of a value; `None` for a value this function never allocated.
    pub fn value_type(&self, v: Value) -> Option<Type> {
        self.value_types.get(v.index()).copied()
    }

    /// Numbers the values again, densely, in the order blocks define them (parameters, then
    /// results), forgetting values nothing defines any more. A rewrite that removes instructions
    /// calls this so the function prints as the parser would read it back.
    pub fn renumber_values(&mut self) {
        let mut new_index: Vec<Option<Value>> = vec![None; self.value_types.len()];
        let mut types = Vec::new();
        let defined = self
            .blocks
            .iter()
            .flat_map(|b| b.params.iter().copied().chain(b.insts.iter().filter_map(|i| i.result)));
        for v in defined {
            if let Some(slot @ None) = new_index.get_mut(v.index()) {
                *slot = Some(Value(types.len() as u32));
                types.push(self.value_types[v.index()]);
            }
        }
        // A value used but never defined fails verification; it keeps its number past the
        // defined ones rather than aliasing one of them.
        let mut map = |v: Value| match new_index.get(v.index()).copied().flatten() {
            Some(n) => n,
            None => v,
        };
        for block in &mut self.blocks {
            for p in &mut block.params {
                *p = map(*p);
            }
            for inst in &mut block.insts {
                if let Some(r) = &mut inst.result {
                    *r = map(*r);
                }
                inst.kind.map_operands(&mut map);
            }
            block.term.map_operands(&mut map);
        }
        self.value_types = types;
    }

    /// The block's data.
    ///
    /// Panics on a block from another function; blocks are only minted by [`Function::new_block`].
    pub fn block(&self, b: Block) -> &BlockData {
        &self.blocks[b.index()]
    }

    /// Mutable access to the block's data.
    pub fn block_mut(&mut self, b: Block) -> &mut BlockData {
        &mut self.blocks[b.index()]
    }

    /// All blocks with their ids.
    pub fn iter_blocks(&self) -> impl Iterator<Item = (Block, &BlockData)> {
        self.blocks.iter().enumerate().map(|(i, b)| (Block(i as u32), b))
    }

    /// The functions this one calls or tail-calls directly, and whether it makes any indirect call.
    pub fn callees(&self) -> (BTreeSet<GuestAddr>, bool) {
        let mut direct = BTreeSet::new();
        let mut indirect = false;
        for block in &self.blocks {
            match &block.term {
                Terminator::Call { target, .. } | Terminator::TailCall { target } => match target {
                    CallTarget::Direct(addr) => {
                        direct.insert(*addr);
                    }
                    CallTarget::Indirect(_) => indirect = true,
                },
                Terminator::Jump(_)
                | Terminator::Branch { .. }
                | Terminator::Switch { .. }
                | Terminator::Return
                | Terminator::Exit { .. }
                | Terminator::Unreachable => {}
            }
        }
        (direct, indirect)
    }

    /// The guest addresses calls of this function return to: the first `mark` of each call's
    /// continuation block (on x86 the address the call pushed, on PowerPC the one `bl` put in lr).
    pub fn return_sites(&self) -> BTreeSet<GuestAddr> {
        self.blocks
            .iter()
            .filter_map(|b| match &b.term {
                Terminator::Call { cont, .. } => self.blocks.get(cont.block.index()),
                _ => None,
            })
            .filter_map(|cont| {
                cont.insts.iter().find_map(|i| match i.kind {
                    InstKind::Mark { pc } => Some(pc),
                    _ => None,
                })
            })
            .collect()
    }

    /// The guest addresses of the instructions in this function, from its `mark`s.
    pub fn guest_pcs(&self) -> BTreeSet<GuestAddr> {
        self.blocks
            .iter()
            .flat_map(|b| &b.insts)
            .filter_map(|i| match i.kind {
                InstKind::Mark { pc } => Some(pc),
                _ => None,
            })
            .collect()
    }
}

/// A whole lifted program: state, helpers, externs, functions and whole-program facts.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize)]
pub struct Program {
    /// The guest's register file.
    pub state: StateDesc,
    /// Runtime helpers instructions may call, by name.
    pub helpers: BTreeMap<String, HelperDecl>,
    /// Functions implemented outside lifted code (platform imports), by address, with their C symbol.
    pub externs: BTreeMap<GuestAddr, String>,
    /// Lifted functions by entry address.
    pub functions: BTreeMap<GuestAddr, Function>,
    /// Functions whose address is taken (reachable through indirect calls).
    pub address_taken: BTreeSet<GuestAddr>,
    /// Externs whose code reads no flag slot and writes none itself (the platform's C library
    /// functions): every flag a caller leaves passes through a call of one. Any other extern may
    /// read every flag.
    pub flag_transparent: BTreeSet<GuestAddr>,
    /// Function addresses the image holds in tables (vtables, callback and operation tables):
    /// each key is where a table starts (the first of a run of words naming lifted functions, or
    /// a word of such a run that the image points at), its value the functions the words name
    /// from there to the run's end. A hint for devirtualizing indirect calls, which check the
    /// target they load: the program may change the words at run time.
    pub pointer_tables: BTreeMap<GuestAddr, Vec<GuestAddr>>,
}

/// Direct-call edges and indirect-call facts of a program.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct CallGraph {
    /// For each function, the functions it calls or tail-calls directly.
    pub callees: BTreeMap<GuestAddr, BTreeSet<GuestAddr>>,
    /// Functions that make at least one indirect call.
    pub indirect_callers: BTreeSet<GuestAddr>,
}

impl Program {
    /// An empty program over this register file.
    pub fn new(state: StateDesc) -> Program {
        Program {
            state,
            ..Program::default()
        }
    }

    /// Computes the call graph from the functions' terminators.
    pub fn call_graph(&self) -> CallGraph {
        let mut graph = CallGraph::default();
        for (addr, func) in &self.functions {
            let (direct, indirect) = func.callees();
            graph.callees.insert(*addr, direct);
            if indirect {
                graph.indirect_callers.insert(*addr);
            }
        }
        graph
    }
}
