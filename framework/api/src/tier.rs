//! The run-time tier's instructions: what lets a generated program run guest code that discovery
//! missed (DESIGN.md §12), with the semantics compiled code has.
//!
//! The tier has no semantics of its own, which is why it cannot drift from compiled code: every
//! instruction it may run is lifted at build time, alone, by the guest's own lifter
//! ([`crate::lift::lift_instruction`], the lift functions compiled code comes from), and the same
//! C emitter writes its code. What the tier adds is glue: a table from guest address to the
//! instruction's code, and a loop that goes on where each instruction says (`exit <addr>,
//! unlifted`), calling compiled functions where they exist.
//!
//! Which instructions: those of the executable segments that no lifted function holds, found by
//! a linear sweep ([`uncovered_instructions`]); code discovery missed lies there. Control that
//! reaches the middle of a lifted function at an address that is not an entry has no tier
//! instruction and stops the program there, as it does without the tier; the coverage file then
//! makes it an entry of the next build.
//!
//! Forms ([`group_forms`]): instructions whose IR differs only in constants (the address, an
//! immediate, a branch target) share one piece of code; each instruction supplies the constants
//! its form's instructions differ in, and the ones they all agree on stay in the code. Filling an
//! instruction's constants back into its form gives its IR exactly ([`with_constants`]), which is
//! what keeps the sharing from changing what any instruction does.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use rpt_ir::{Function, GuestAddr, InstKind};

use crate::discover::{Isa, Walker};

/// The addresses of the instructions a linear sweep finds in the image's executable segments
/// outside `covered` (the instructions of lifted functions): from the start of every stretch of
/// bytes no covered instruction spans, one instruction after the other; a byte where nothing
/// decodes is stepped over. The result is in address order.
///
/// A sweep of a stretch that holds data besides code finds instructions in the data too: they
/// are never run, and cost only their place in the tier's table.
pub fn uncovered_instructions<I: Isa>(walker: &Walker<'_, I>, covered: &BTreeSet<GuestAddr>) -> Vec<GuestAddr> {
    uncovered_instructions_in(walker, covered, I::Context::default(), |_| true)
}

/// [`uncovered_instructions`] decoded in `context`, over the executable segments `sweep` takes
/// (a guest whose ROM appears at several mirrors sweeps the ones its code runs from).
pub fn uncovered_instructions_in<I: Isa>(
    walker: &Walker<'_, I>,
    covered: &BTreeSet<GuestAddr>,
    context: I::Context,
    sweep: impl Fn(&crate::Segment) -> bool,
) -> Vec<GuestAddr> {
    let (isa, image) = (walker.isa(), walker.image());
    // The bytes each covered instruction spans, by start; overlapping ones keep the longest.
    let mut spans: BTreeMap<u64, u64> = BTreeMap::new();
    for &at in covered {
        if let Ok((_, next)) = isa.decode(image, at, context) {
            let end = spans.entry(at.0).or_insert(next.0);
            *end = (*end).max(next.0);
        }
    }
    let mut found = Vec::new();
    for segment in image.segments.iter().filter(|s| s.flags.execute && sweep(s)) {
        let end = segment.addr.0.saturating_add(segment.bytes.len() as u64);
        let mut pc = segment.addr.0;
        while pc < end {
            if let Some((_, &span_end)) = spans.range(..=pc).next_back()
                && span_end > pc
            {
                pc = span_end;
                continue;
            }
            match isa.decode(image, GuestAddr(pc), context) {
                Ok((_, next)) if next.0 > pc => {
                    found.push(GuestAddr(pc));
                    pc = next.0;
                }
                _ => pc += 1,
            }
        }
    }
    found
}

/// Where a constant of a function sits: what [`constant_places`] lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConstantPlace {
    /// The function's entry address.
    Entry,
    /// Instruction `index` of block `block`: an `iconst`'s value or a `mark`'s address.
    Inst {
        /// The block's index.
        block: usize,
        /// The instruction's index in the block.
        index: usize,
    },
}

/// The places of `function`'s constants in a fixed order: its entry, then block by block each
/// `iconst`'s value and each `mark`'s address. These are what instructions of one form may
/// differ in; every other function here and the C emitter's forms go by this order.
pub fn constant_places(function: &Function) -> Vec<ConstantPlace> {
    let mut places = vec![ConstantPlace::Entry];
    for (block, data) in function.blocks.iter().enumerate() {
        for (index, inst) in data.insts.iter().enumerate() {
            if matches!(inst.kind, InstKind::Iconst { .. } | InstKind::Mark { .. }) {
                places.push(ConstantPlace::Inst { block, index });
            }
        }
    }
    places
}

fn constant_at(function: &mut Function, place: ConstantPlace) -> Option<&mut u64> {
    match place {
        ConstantPlace::Entry => Some(&mut function.entry.0),
        ConstantPlace::Inst { block, index } => match &mut function.blocks.get_mut(block)?.insts.get_mut(index)?.kind {
            InstKind::Iconst { imm, .. } => Some(imm),
            InstKind::Mark { pc } => Some(&mut pc.0),
            _ => None,
        },
    }
}

/// The constants of `function`, in [`constant_places`]' order.
pub fn constants(function: &Function) -> Vec<u64> {
    let mut copy = function.clone();
    constant_places(function)
        .into_iter()
        .filter_map(|place| constant_at(&mut copy, place).map(|c| *c))
        .collect()
}

/// `function` with its constants (in [`constant_places`]' order) replaced by `values`; `None`
/// when `values` has another length than the function has constants.
pub fn with_constants(function: &Function, values: &[u64]) -> Option<Function> {
    let places = constant_places(function);
    if places.len() != values.len() {
        return None;
    }
    let mut out = function.clone();
    for (place, &value) in places.into_iter().zip(values) {
        *constant_at(&mut out, place)? = value;
    }
    Some(out)
}

/// Instructions that share their code: their IR with the constants they all agree on in place.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Form {
    /// The shared IR; its constants at the positions in `varying` are 0.
    pub shape: Function,
    /// The positions, in [`constant_places`]' order, of the constants the instructions differ in.
    pub varying: Vec<usize>,
}

impl Form {
    /// The IR of the instruction that supplies `params` (its constants at `varying`).
    pub fn instantiate(&self, params: &[u64]) -> Option<Function> {
        if params.len() != self.varying.len() {
            return None;
        }
        let mut values = constants(&self.shape);
        for (&at, &value) in self.varying.iter().zip(params) {
            *values.get_mut(at)? = value;
        }
        with_constants(&self.shape, &values)
    }
}

/// One instruction of the tier: its form and the constants it supplies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FormInstance {
    /// The instruction's address.
    pub addr: GuestAddr,
    /// Its form, an index into [`Forms::forms`].
    pub form: usize,
    /// Its constants at the form's `varying` positions.
    pub params: Vec<u64>,
}

/// Instructions grouped into forms.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Forms {
    /// The forms, numbered in the order of their first instruction.
    pub forms: Vec<Form>,
    /// The instructions, in the order given.
    pub instances: Vec<FormInstance>,
}

/// Groups instructions' IR into forms: instructions whose IR is equal once their constants are
/// zeroed share one. The result depends only on the order of `instructions`.
pub fn group_forms(instructions: &[(GuestAddr, Function)]) -> Forms {
    // The hash map only finds a shape's form; the forms' order is the instructions'.
    let mut form_of_shape: HashMap<Function, usize> = HashMap::new();
    let mut shapes: Vec<Function> = Vec::new();
    let mut members: Vec<Vec<usize>> = Vec::new();
    let mut values: Vec<Vec<u64>> = Vec::with_capacity(instructions.len());
    let mut form_of: Vec<usize> = Vec::with_capacity(instructions.len());
    for (i, (_, function)) in instructions.iter().enumerate() {
        let these = constants(function);
        let zeros = vec![0; these.len()];
        let shape = with_constants(function, &zeros).unwrap_or_else(|| function.clone());
        let form = *form_of_shape.entry(shape.clone()).or_insert_with(|| {
            shapes.push(shape);
            members.push(Vec::new());
            shapes.len() - 1
        });
        members[form].push(i);
        form_of.push(form);
        values.push(these);
    }
    let mut forms = Vec::with_capacity(shapes.len());
    for (shape, members) in shapes.into_iter().zip(&members) {
        let first = &values[members[0]];
        let varying: Vec<usize> = (0..first.len())
            .filter(|&at| members.iter().any(|&m| values[m][at] != first[at]))
            .collect();
        let mut agreed = first.clone();
        for &at in &varying {
            agreed[at] = 0;
        }
        let shape = with_constants(&shape, &agreed).unwrap_or(shape);
        forms.push(Form { shape, varying });
    }
    let instances = instructions
        .iter()
        .zip(form_of)
        .zip(values)
        .map(|(((addr, _), form), values)| FormInstance {
            addr: *addr,
            form,
            params: forms[form].varying.iter().map(|&at| values[at]).collect(),
        })
        .collect();
    Forms { forms, instances }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rpt_ir::parse::parse_program;

    const STATE: &str = "state {\n    r3: i32 gpr\n    r4: i32 gpr\n}\n";

    fn parse(function: &str) -> Function {
        let program = parse_program(&format!("{STATE}\n{function}")).expect("test IR parses");
        program.functions.into_values().next().expect("one function")
    }

    /// `addi r3, r4, imm` at `pc` as the PowerPC lifter writes it, `op` its operation.
    fn addi_as(pc: u64, imm: i32, op: &str) -> Function {
        parse(&format!(
            "function f_{pc:08x} {{\nblock0:\n    mark {pc:#x}\n    v0: i32 = get %r4\n    v1: i32 = iconst {:#x}\n    v2: i32 = {op} v0, v1\n    set %r3, v2\n    v3: i32 = iconst {:#x}\n    exit v3, unlifted\n}}\n",
            imm as u32,
            pc + 4
        ))
    }

    fn addi(pc: u64, imm: i32) -> Function {
        addi_as(pc, imm, "add")
    }

    #[test]
    fn constants_come_back_in_place() {
        let f = addi(0x8000_3000, -8);
        let values = constants(&f);
        assert_eq!(values, vec![0x8000_3000, 0x8000_3000, 0xffff_fff8, 0x8000_3004]);
        assert_eq!(with_constants(&f, &values), Some(f.clone()));
        assert_eq!(with_constants(&f, &values[1..]), None);
    }

    #[test]
    fn instructions_differing_in_constants_share_a_form_and_keep_their_ir() {
        let instructions = vec![
            (GuestAddr(0x8000_3000), addi(0x8000_3000, 8)),
            (GuestAddr(0x8000_3010), addi(0x8000_3010, 8)),
            (GuestAddr(0x8000_3020), addi(0x8000_3020, -1)),
        ];
        let forms = group_forms(&instructions);
        assert_eq!(forms.forms.len(), 1);
        let form = &forms.forms[0];
        // The entry, the mark, the immediate and the next address differ; nothing else is there.
        assert_eq!(form.varying, vec![0, 1, 2, 3]);
        for (instance, (addr, function)) in forms.instances.iter().zip(&instructions) {
            assert_eq!(instance.addr, *addr);
            assert_eq!(form.instantiate(&instance.params).as_ref(), Some(function));
        }
    }

    #[test]
    fn constants_every_instruction_agrees_on_stay_in_the_form() {
        let instructions = vec![
            (GuestAddr(0x8000_3000), addi(0x8000_3000, 8)),
            (GuestAddr(0x8000_3010), addi(0x8000_3010, 8)),
        ];
        let forms = group_forms(&instructions);
        assert_eq!(forms.forms[0].varying, vec![0, 1, 3]);
        assert_eq!(forms.instances[1].params, vec![0x8000_3010, 0x8000_3010, 0x8000_3014]);
        assert_eq!(
            forms.forms[0].instantiate(&forms.instances[1].params),
            Some(instructions[1].1.clone())
        );
    }

    #[test]
    fn a_different_operation_is_another_form() {
        let other = addi_as(0x8000_3010, 8, "sub");
        let forms = group_forms(&[(GuestAddr(0x8000_3000), addi(0x8000_3000, 8)), (other.entry, other)]);
        assert_eq!(forms.forms.len(), 2);
        assert_eq!(forms.instances[1].form, 1);
        // An instruction alone in its form supplies nothing: its constants are all in place.
        assert!(forms.forms.iter().all(|f| f.varying.is_empty()));
    }
}
