//! Parses SASS listings from nvdisasm (`.text.NAME:` sections) or cuobjdump (`Function : NAME`).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Instruction {
    pub offset: u32,
    /// Guard predicate such as `@!P3`, if any.
    pub predicate: Option<String>,
    /// Opcode with its modifiers, e.g. `LDGSTS.E.BYPASS.128`.
    pub opcode: String,
    pub operands: String,
    /// Index of the listing line, for annotated excerpts.
    pub line: usize,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Function {
    pub name: String,
    pub instructions: Vec<Instruction>,
}

/// `/*0a30*/  @!P0 LDGSTS.E.BYPASS.128 [R21], desc[UR12][R18.64] ;` -> an instruction.
fn parse_instruction(line: &str, index: usize) -> Option<Instruction> {
    let rest = line.trim_start().strip_prefix("/*")?;
    let (off, rest) = rest.split_once("*/")?;
    let offset = u32::from_str_radix(off.trim(), 16).ok()?;
    let body = rest.split(';').next()?.trim();
    if body.is_empty() {
        return None;
    }
    let (predicate, body) = match body.strip_prefix('@') {
        Some(b) => {
            let (p, r) = b.split_once(char::is_whitespace)?;
            (Some(format!("@{p}")), r.trim_start())
        }
        None => (None, body),
    };
    let (opcode, operands) = body.split_once(char::is_whitespace).unwrap_or((body, ""));
    if opcode.is_empty() || !opcode.starts_with(|c: char| c.is_ascii_uppercase()) {
        return None;
    }
    Some(Instruction {
        offset,
        predicate,
        opcode: opcode.to_string(),
        operands: operands.trim().to_string(),
        line: index,
    })
}

fn function_header(line: &str) -> Option<String> {
    let t = line.trim();
    if let Some(name) = t.strip_prefix("Function :") {
        return Some(name.trim().to_string());
    }
    t.strip_prefix(".text.")
        .and_then(|n| n.strip_suffix(':'))
        .map(str::to_string)
}

/// All functions in a listing, in order. Instructions before any header belong to an unnamed one.
pub fn parse(listing: &str) -> Vec<Function> {
    let mut out: Vec<Function> = Vec::new();
    for (i, line) in listing.lines().enumerate() {
        if let Some(name) = function_header(line) {
            out.push(Function {
                name,
                instructions: Vec::new(),
            });
        } else if let Some(ins) = parse_instruction(line, i) {
            if out.is_empty() {
                out.push(Function {
                    name: String::new(),
                    instructions: Vec::new(),
                });
            }
            out.last_mut().expect("pushed above").instructions.push(ins);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_both_listing_styles() {
        let nvdisasm = ".text.k:\n        /*0430*/                   LDGSTS.E.BYPASS.128 [R19], desc[UR12][R16.64] ;\n        /*0440*/              @!P3 LDG.E.128.CONSTANT R8, desc[UR12][R8.64] ;\n.L_x_3:\n        /*0450*/                   EXIT ;\n";
        let f = parse(nvdisasm);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].name, "k");
        let i = &f[0].instructions;
        assert_eq!(i.len(), 3);
        assert_eq!(i[0].opcode, "LDGSTS.E.BYPASS.128");
        assert_eq!(i[0].offset, 0x430);
        assert_eq!(i[1].predicate.as_deref(), Some("@!P3"));
        assert_eq!(i[1].opcode, "LDG.E.128.CONSTANT");
        assert_eq!(i[2].opcode, "EXIT");
        let cuobjdump = "\t\tFunction : other\n        /*0010*/                   S2UR UR15, SR_CTAID.X ;    /* 0x00000000000f79c3 */\n                                                                    /* 0x000e620000002500 */\n";
        let f = parse(cuobjdump);
        assert_eq!(f[0].name, "other");
        assert_eq!(
            f[0].instructions.len(),
            1,
            "encoding-only lines are not instructions"
        );
        assert_eq!(f[0].instructions[0].operands, "UR15, SR_CTAID.X");
    }
}
