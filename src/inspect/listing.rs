//! What a listing says beside the instructions: which functions are kernel entry points, the
//! labels branches jump to, and the source line (with its inlining chain) of each instruction,
//! from nvdisasm's `-g -gi` comments.

use crate::evidence::sass::parse::{self, Function};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};

/// One `//## File "X", line N` position.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct SourceLine {
    pub file: String,
    pub line: u32,
}

impl std::fmt::Display for SourceLine {
    /// Relative to the current folder when the file lies under it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let cwd = std::env::current_dir().unwrap_or_default();
        let file = std::path::Path::new(&self.file);
        let shown = file.strip_prefix(&cwd).unwrap_or(file);
        write!(f, "{}:{}", shown.display(), self.line)
    }
}

/// A function of the listing with what the comments and labels around its instructions say.
#[derive(Debug, Clone)]
pub struct Kernel {
    pub function: Function,
    /// Per instruction: the source positions it came from, innermost (inlined) first and the
    /// kernel's own line last; empty without line info.
    pub sources: Vec<Vec<SourceLine>>,
    /// Label -> offset of the instruction it names.
    pub labels: HashMap<String, u32>,
}

impl Kernel {
    /// "file.cu:65" (the kernel's own line) with the innermost inlined line when it differs.
    pub fn where_is(&self, index: usize) -> Option<String> {
        let chain = self.sources.get(index)?;
        let own = chain.last()?;
        let inner = chain.first()?;
        Some(if inner == own {
            own.to_string()
        } else {
            format!("{own} (inlined {inner})")
        })
    }
}

/// `//## File "a.cu", line 8 inlined at "a.cu", line 65` -> a.cu:8.
fn line_info(text: &str) -> Option<SourceLine> {
    let rest = text.trim_start().strip_prefix("//## File \"")?;
    let (file, rest) = rest.split_once('"')?;
    let rest = rest.trim_start().strip_prefix(", line ")?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    Some(SourceLine {
        file: file.to_string(),
        line: digits.parse().ok()?,
    })
}

/// `.L_x_3:` -> `.L_x_3`; also the function's own `name:` line.
fn label(text: &str) -> Option<&str> {
    let t = text.trim();
    let name = t.strip_suffix(':')?;
    (!name.is_empty() && !name.contains(char::is_whitespace) && !name.starts_with("//"))
        .then_some(name)
}

/// Names nvdisasm marks as kernel entry points (`.other NAME,@"STO_CUDA_ENTRY ..."`).
fn entries(listing: &str) -> HashSet<String> {
    listing
        .lines()
        .filter_map(|l| {
            let rest = l.trim().strip_prefix(".other")?;
            let (name, flags) = rest.trim().split_once(',')?;
            flags
                .contains("STO_CUDA_ENTRY")
                .then(|| name.trim().to_string())
        })
        .collect()
}

/// The kernels of a listing: every function that nvdisasm marks as an entry point, or every
/// function when the listing marks none (cuobjdump's).
pub fn kernels(listing: &str) -> Vec<Kernel> {
    let functions = parse::parse(listing);
    let lines: Vec<&str> = listing.lines().collect();
    let marked = entries(listing);
    let mut out = Vec::new();
    let mut from = 0usize;
    for function in functions {
        let last = function.instructions.last().map_or(from, |i| i.line);
        // the comments and labels after the previous function's last instruction belong to this one
        let mut chain: Vec<SourceLine> = Vec::new();
        let mut group_open = false;
        let mut pending: Vec<String> = Vec::new();
        let mut labels = HashMap::new();
        let mut sources = Vec::with_capacity(function.instructions.len());
        let mut next = function.instructions.iter().peekable();
        for (index, text) in lines.iter().enumerate().take(last + 1).skip(from) {
            if let Some(ins) = next.peek().filter(|i| i.line == index) {
                for l in pending.drain(..) {
                    labels.insert(l, ins.offset);
                }
                sources.push(chain.iter().rev().cloned().collect::<Vec<_>>());
                group_open = false;
                next.next();
            } else if let Some(sl) = line_info(text) {
                if !group_open {
                    chain.clear();
                    group_open = true;
                }
                chain.insert(0, sl);
            } else if let Some(l) = label(text) {
                pending.push(l.to_string());
            }
        }
        from = last + 1;
        if marked.is_empty() || marked.contains(&function.name) {
            out.push(Kernel {
                function,
                sources,
                labels,
            });
        }
    }
    out
}

/// The architecture a listing was disassembled for: nvdisasm's and cuobjdump's `.target sm_90`,
/// else the ELF header flags nvdisasm prints for a cubin it reads in its old format (Triton's
/// ptxas): `@"... EF_CUDA_ACCELERATORS EF_CUDA_SM90 ..."` is sm_90a.
pub fn target(listing: &str) -> Option<String> {
    let lines = || listing.lines().map(str::trim);
    lines()
        .find_map(|l| l.strip_prefix(".target").map(|t| t.trim().to_string()))
        .or_else(|| {
            let flags = lines().find_map(|l| l.strip_prefix(".headerflags"))?;
            let words: Vec<&str> = flags
                .split(|c: char| c.is_whitespace() || c == '"')
                .collect();
            let sm = words.iter().find_map(|w| {
                w.strip_prefix("EF_CUDA_SM")
                    .filter(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
            })?;
            let a = if words.contains(&"EF_CUDA_ACCELERATORS") {
                "a"
            } else {
                ""
            };
            Some(format!("sm_{sm}{a}"))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    const LISTING: &str = r#"	.target	sm_80
        .other          k,@"STO_CUDA_ENTRY STV_DEFAULT"
        .other          helper,@"STV_DEFAULT"
.text.k:
	//## File "a.cu", line 61
        /*0000*/                   IMAD.MOV.U32 R1, RZ, RZ, c[0x0][0x28] ;
        /*0010*/                   S2R R0, SR_TID.X ;
	//## File "a.cu", line 8 inlined at "a.cu", line 65
	//## File "a.cu", line 65
        /*0020*/              @!P0 BRA `(.L_x_0) ;
.L_x_0:
        /*0030*/                   EXIT ;
.text.helper:
        /*0000*/                   RET.REL.NODEC R20 `(k) ;
"#;

    #[test]
    fn entries_labels_and_inlined_lines() {
        let ks = kernels(LISTING);
        assert_eq!(ks.len(), 1, "helper is not an entry point");
        let k = &ks[0];
        assert_eq!(k.function.name, "k");
        assert_eq!(k.labels.get(".L_x_0"), Some(&0x30));
        assert_eq!(k.where_is(0).as_deref(), Some("a.cu:61"));
        assert_eq!(k.where_is(1).as_deref(), Some("a.cu:61"), "carried forward");
        assert_eq!(k.where_is(2).as_deref(), Some("a.cu:65 (inlined a.cu:8)"));
        assert_eq!(k.sources[2].len(), 2);
        assert_eq!(target(LISTING).as_deref(), Some("sm_80"));
    }

    #[test]
    fn header_flags_name_the_target_when_there_is_no_target_line() {
        let old = "\t.headerflags\t@\"EF_CUDA_TEXMODE_UNIFIED EF_CUDA_64BIT_ADDRESS EF_CUDA_ACCELERATORS EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)\"\n";
        assert_eq!(target(old).as_deref(), Some("sm_90a"));
        let plain = "\t.headerflags\t@\"EF_CUDA_64BIT_ADDRESS EF_CUDA_SM80 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM80)\"\n";
        assert_eq!(target(plain).as_deref(), Some("sm_80"));
        assert_eq!(target("\t.headerflags\t@\"EF_CUDA_64BIT_ADDRESS\"\n"), None);
    }

    #[test]
    fn without_line_info_there_is_no_source() {
        let ks = kernels("\t\tFunction : k\n        /*0000*/                   EXIT ;\n");
        assert_eq!(ks.len(), 1);
        assert_eq!(ks[0].where_is(0), None);
    }
}
