//! A function's plan, as the facts the analysis hands its transform: IR text, so a manifest or a
//! failing test shows it as it is.
//!
//! ```text
//! site 12 f_004018b0 f_004018c0
//! function f_004018b0 {
//! ...
//! }
//! ```

use std::collections::BTreeMap;

use rpt_ir::parse::parse_function;
use rpt_ir::print::function_to_string;
use rpt_ir::{Function, GuestAddr, StateDesc};

/// What the pass does to one function.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Plan {
    /// Per block ending in an indirect call, the functions to check its target against first.
    pub sites: BTreeMap<u32, Vec<GuestAddr>>,
    /// The inlinable functions it calls or may call, by address.
    pub bodies: BTreeMap<GuestAddr, Function>,
}

impl Plan {
    /// The plan as text.
    pub fn encode(&self, state: &StateDesc) -> String {
        let mut out = String::new();
        for (block, candidates) in &self.sites {
            out.push_str(&format!("site {block}"));
            for c in candidates {
                out.push(' ');
                out.push_str(&c.function_name());
            }
            out.push('\n');
        }
        for body in self.bodies.values() {
            out.push_str(&function_to_string(body, state));
        }
        out
    }

    /// The plan again from [`Plan::encode`]'s text.
    pub fn decode(text: &str, state: &StateDesc) -> Result<Plan, String> {
        let mut plan = Plan::default();
        let mut body = String::new();
        let finish = |body: &mut String, plan: &mut Plan| -> Result<(), String> {
            if !body.trim().is_empty() {
                let func = parse_function(body, state).map_err(|e| format!("an inline body does not parse: {e}"))?;
                plan.bodies.insert(func.entry, func);
            }
            body.clear();
            Ok(())
        };
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("site ") {
                let mut words = rest.split_whitespace();
                let block = words
                    .next()
                    .and_then(|w| w.parse::<u32>().ok())
                    .ok_or_else(|| format!("a site without a block number: `{line}`"))?;
                let candidates = words
                    .map(|w| GuestAddr::from_function_name(w).ok_or_else(|| format!("not a function name: `{w}`")))
                    .collect::<Result<Vec<_>, _>>()?;
                plan.sites.insert(block, candidates);
            } else {
                if line.starts_with("function ") {
                    finish(&mut body, &mut plan)?;
                }
                body.push_str(line);
                body.push('\n');
            }
        }
        finish(&mut body, &mut plan)?;
        Ok(plan)
    }
}

#[cfg(test)]
mod tests {
    use rpt_ir::parse::parse_program;

    use super::*;

    #[test]
    fn a_plan_reads_back_as_written() {
        let program = parse_program(
            "state {\n    a: i32 gpr\n}\nfunction f_00002000 {\nblock0:\n    v0: i32 = get %a\n    set %a, v0\n    return\n}\n",
        )
        .expect("test IR parses");
        let mut plan = Plan::default();
        plan.sites.insert(3, vec![GuestAddr(0x2000), GuestAddr(0x3000)]);
        plan.bodies
            .insert(GuestAddr(0x2000), program.functions[&GuestAddr(0x2000)].clone());
        let text = plan.encode(&program.state);
        assert_eq!(Plan::decode(&text, &program.state), Ok(plan));
        assert!(Plan::decode("site x f_1\n", &program.state).is_err());
    }
}
